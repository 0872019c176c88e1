//! Load check for the HTTP client (not a timed test): N concurrent streams from the
//! in-process OpenAI-compatible server (serving a deterministic engine at speed 1) through
//! `HttpEngine`, reporting SSE events/s through the client, the client's timestamp skew
//! against the engine's timeline, and resident memory with many open streams.
//!
//! `cargo bench --bench http_load -- [--streams 512] [--tpot-ms 8] [--tokens 256]
//! [--requests 1536] [--client-threads 2] [--server-threads 1] [--idle-streams 4000]`
//!
//! Skew = (client's arrival stamp) − (the moment the engine's timeline says the chunk was
//! due: server origin + virtual time / speed). It includes the server's pacing tick and the
//! loopback transfer, so it bounds the client's own stamping delay from above.

use std::time::{Duration, Instant};

use servebench::driver::workload::WorkItem;
use servebench::driver::Arrivals;
use servebench::driver::RunOptions;
use servebench::engine::Engine;
use servebench::engine::FixedEngine;
use servebench::http::client::REQUEST_ID_PREFIX;
use servebench::http::server::ServeOptions;
use servebench::http::{spawn, HttpConfig, HttpEngine};

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Send `n` requests of 64 prompt and `output` output tokens through the load driver, all
/// at once, at most `cap` in flight, within 60 s.
fn run_all(
    engine: &mut impl Engine,
    n: usize,
    output: u64,
    cap: usize,
) -> Vec<servebench::record::RequestRecord> {
    let item = WorkItem {
        prompt_tokens: 64,
        output_tokens: output,
        prompt: None,
        shared_prefix_tokens: 0,
    };
    let opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        max_concurrency: Some(cap),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let out = servebench::driver::run(engine, &vec![item; n], &opts).expect("driver");
    assert!(out.aborted.is_none(), "{:?}", out.aborted);
    out.records
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU seconds (user + system) this process used so far.
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 / 100.0)
        })
        .unwrap_or(f64::NAN)
}

/// CPU seconds per thread-name prefix: (client I/O threads, server HTTP threads, server
/// engine thread, everything else).
fn cpu_by_role() -> [f64; 4] {
    let mut out = [0.0; 4];
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in dir.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let name = head.split_once('(').map_or("", |x| x.1);
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let role = if name.starts_with("servebench-http") {
            0
        } else if name.starts_with("servebench-serv") {
            1
        } else if name.starts_with("servebench-engi") {
            2
        } else {
            3
        };
        out[role] += ticks as f64 / 100.0;
    }
    out
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p / 100.0).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let streams = arg(&args, "--streams", 512);
    let tpot = arg(&args, "--tpot-ms", 8);
    let tokens = arg(&args, "--tokens", 256);
    let n = arg(&args, "--requests", streams * 3);
    let client_threads = arg(&args, "--client-threads", 2) as usize;
    let server_threads = arg(&args, "--server-threads", 1) as usize;
    let idle = arg(&args, "--idle-streams", 4000);

    let options = ServeOptions {
        record_timeline: true,
        worker_threads: server_threads,
        ..ServeOptions::default()
    };
    let server = spawn(
        FixedEngine::new(5, tpot, 1),
        "127.0.0.1:0".parse().expect("addr"),
        1.0,
        options,
    )
    .expect("server");
    let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
    cfg.worker_threads = client_threads;
    let mut client = HttpEngine::new(cfg).expect("client");
    let rss0 = rss_kib();
    let cpu0 = cpu_s();
    let t0 = Instant::now();
    let records = run_all(&mut client, n as usize, tokens, streams as usize);
    let wall = t0.elapsed();
    let cpu = cpu_s() - cpu0;
    let roles = cpu_by_role();
    let ok = records.iter().filter(|r| r.outcome.is_success()).count();
    let events: usize = records.iter().map(|r| r.chunks.len()).sum();
    let stats = server.stats();

    // Skew against the engine's timeline, joined on x-request-id.
    let timeline = server.timeline();
    let by_tag: std::collections::HashMap<&str, &servebench::record::RequestRecord> = timeline
        .iter()
        .filter_map(|s| s.request_id.as_deref().map(|t| (t, &s.record)))
        .collect();
    let (c0, s0) = (client.origin(), server.origin());
    let mut skew_ms = Vec::with_capacity(events);
    for r in &records {
        let Some(e) = by_tag.get(format!("{REQUEST_ID_PREFIX}{}", r.id).as_str()) else {
            continue;
        };
        for (c, ec) in r.chunks.iter().zip(&e.chunks) {
            let got = c0 + c.at;
            let due = s0 + ec.at; // speed 1
            let skew = if got >= due {
                (got - due).as_secs_f64()
            } else {
                -(due - got).as_secs_f64()
            };
            skew_ms.push(skew * 1e3);
        }
    }
    skew_ms.sort_by(f64::total_cmp);
    println!("http_load: {streams} concurrent streams, {n} requests x {tokens} tokens, tpot {tpot} ms, client threads {client_threads}, server threads {server_threads} (same process)");
    println!(
        "  succeeded {ok}/{n}; SSE token events {events} (server sent {}) in {:.2} s = {:.0} events/s through the client",
        stats.token_chunks_sent,
        wall.as_secs_f64(),
        events as f64 / wall.as_secs_f64()
    );
    println!(
        "  timestamp skew vs engine timeline (ms): p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}  min {:.3}",
        pct(&skew_ms, 50.0),
        pct(&skew_ms, 90.0),
        pct(&skew_ms, 99.0),
        pct(&skew_ms, 100.0),
        pct(&skew_ms, 0.0)
    );
    println!(
        "  CPU {cpu:.2} s (client + server, {:.2} cores busy on average; {:.1} us of CPU per event end to end)",
        cpu / wall.as_secs_f64(),
        cpu * 1e6 / events.max(1) as f64
    );
    let per_event = |s: f64| s * 1e6 / events.max(1) as f64;
    println!(
        "  CPU by thread: client I/O {:.2} s ({:.1} us/event -> {:.0} events/s on 2 cores for client + driver), driver {:.2} s, server HTTP {:.2} s, server engine {:.2} s",
        roles[0],
        per_event(roles[0]),
        2e6 / per_event(roles[0] + roles[3]).max(1e-9),
        roles[3],
        roles[1],
        roles[2]
    );
    println!(
        "  RSS before {} MiB, after {} MiB",
        rss0 / 1024,
        rss_kib() / 1024
    );
    drop(client);
    drop(server);

    if idle > 0 {
        // Many open, slow streams: one token every 500 ms, 40 tokens each.
        let server = spawn(
            FixedEngine::new(100, 500, 1),
            "127.0.0.1:0".parse().expect("addr"),
            1.0,
            ServeOptions {
                worker_threads: server_threads,
                // The library default (1024) would keep the rest in the listen backlog.
                max_connections: idle as usize + 64,
                ..ServeOptions::default()
            },
        )
        .expect("server");
        let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
        cfg.worker_threads = client_threads;
        let client = HttpEngine::new(cfg).expect("client");
        let before = rss_kib();
        let mut peak_open = 0;
        let mut peak_rss = before;
        let mut report = |_: &servebench::app::bench::Progress| {
            peak_open = peak_open.max(server.stats().open_streams);
            peak_rss = peak_rss.max(rss_kib());
        };
        let mut engine = servebench::app::bench::Progressed::new(client, &mut report);
        let records = run_all(&mut engine, idle as usize, 40, idle as usize);
        let ok = records.iter().filter(|r| r.outcome.is_success()).count();
        println!(
            "  {idle} slow streams: {ok} succeeded, peak open streams {peak_open}, RSS {} MiB -> peak {} MiB ({:.1} KiB per stream, client and server together)",
            before / 1024,
            peak_rss / 1024,
            (peak_rss.saturating_sub(before)) as f64 / peak_open.max(1) as f64
        );
    }
}
