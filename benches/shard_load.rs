//! Load check for sharded clients (not a timed test): the same run sent by 1, 2 and 4
//! `servebench bench --shard K/N` processes against the example server (the simulated H200,
//! in this process, paced at `--speed`), merged with `servebench merge`; reports the SSE
//! token events per second through the clients and the clients' timestamp error.
//!
//! `cargo bench --bench shard_load -- [--shards 1,2,4] [--speed 10] [--requests 512]
//! [--input 128] [--output 512] [--cap 256] [--rate 1000]`
//!
//! Timestamp error = (a chunk's arrival stamp in the merged run, on the wall clock:
//! `started_at` + offset) − (when the server's engine timeline says it was due: the server's
//! start on the wall clock + virtual time / speed), joined on `x-request-id`. The shards run
//! on this host, so they share its clock: the error is the stamping delay plus the server's
//! pacing tick and the loopback hop, and it grows when the clients run short of CPU.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use servebench::http::client::REQUEST_ID_PREFIX;
use servebench::http::server::{self, ServeOptions};
use servebench::runfile::RunFile;
use servebench::sim::serve::{options, ServeArgs};
use servebench::sim::{Config, H200Sim};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p / 100.0).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn secs(later: SystemTime, earlier: SystemTime) -> f64 {
    match later.duration_since(earlier) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// The children's CPU seconds so far (user + system of waited-for children).
fn children_cpu_s() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: u64 = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
            Some(ticks as f64 / 100.0)
        })
        .unwrap_or(f64::NAN)
}

fn run_shards(n: u32, target: &str, dir: &Path, bench: &[String]) -> RunFile {
    let barrier = format!("barrier:{}", dir.join(format!("barrier-{n}")).display());
    let mut kids = Vec::new();
    let mut files = Vec::new();
    for k in 1..=n {
        let out = dir.join(format!("n{n}-shard-{k}.json"));
        let child = Command::new(BIN)
            .args(["bench", "--target", target, "--quiet", "--style", "vllm"])
            .args(bench)
            .args(["--shard", &format!("{k}/{n}"), "--start-at", &barrier])
            .arg("--output")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn servebench");
        kids.push(child);
        files.push(out);
    }
    for mut k in kids {
        let status = k.wait().expect("wait");
        assert!(status.success(), "a shard failed: {status}");
    }
    let merged = dir.join(format!("n{n}-merged.json"));
    let o = Command::new(BIN)
        .arg("merge")
        .args(&files)
        .arg("--out")
        .arg(&merged)
        .output()
        .expect("merge");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    RunFile::read(&merged).expect("merged run file")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shards: Vec<u32> = arg(&args, "--shards", "1,2,4")
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let speed: f64 = arg(&args, "--speed", "10").parse().expect("--speed");
    let bench: Vec<String> = [
        ("--max-requests", arg(&args, "--requests", "512")),
        ("--input-tokens", arg(&args, "--input", "128")),
        ("--output-tokens", arg(&args, "--output", "512")),
        ("--max-concurrency", arg(&args, "--cap", "256")),
        ("--rate", arg(&args, "--rate", "1000")),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect();
    let dir = std::env::temp_dir().join(format!("servebench-shard-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!(
        "shard_load: example server (baseline, speed {speed}, in this process); per run: {}",
        bench.join(" ")
    );
    for n in shards {
        let config = Config::named("baseline").expect("config");
        let serve = ServeArgs {
            addr: "127.0.0.1:0".parse().expect("addr"),
            speed,
            delta: None,
            fault: None,
            max_connections: 4096,
            api_key: None,
            handoff_window: servebench::http::server::DEFAULT_HANDOFF_WINDOW,
            worker_threads: servebench::http::server::default_worker_threads(),
            startup_s: None,
        };
        let opts = ServeOptions {
            record_timeline: true,
            ..options(&config, &serve)
        };
        let srv = server::spawn(H200Sim::new(config).warmed_up(), serve.addr, speed, opts)
            .expect("server");
        let server_zero = SystemTime::now() - srv.origin().elapsed();
        let target = format!("http://{}", srv.local_addr());
        let cpu0 = children_cpu_s();
        let t0 = Instant::now();
        let run = run_shards(n, &target, &dir, &bench);
        let wall = t0.elapsed();
        let cpu = children_cpu_s() - cpu0;
        let timeline = srv.timeline();
        drop(srv);
        let by_tag: HashMap<&str, &servebench::record::RequestRecord> = timeline
            .iter()
            .filter_map(|s| s.request_id.as_deref().map(|t| (t, &s.record)))
            .collect();
        let client_zero = SystemTime::from(run.started_at.with_timezone(&chrono::Utc));
        let mut err_ms = Vec::new();
        let (mut first, mut last) = (Duration::MAX, Duration::ZERO);
        for r in &run.records {
            for c in &r.chunks {
                first = first.min(c.at);
                last = last.max(c.at);
            }
            let Some(e) = by_tag.get(format!("{REQUEST_ID_PREFIX}{}", r.id).as_str()) else {
                continue;
            };
            for (c, ec) in r.chunks.iter().zip(&e.chunks) {
                let got = client_zero + c.at;
                let due = server_zero + ec.at.div_f64(speed);
                err_ms.push(secs(got, due) * 1e3);
            }
        }
        err_ms.sort_by(f64::total_cmp);
        let events = run.records.iter().map(|r| r.chunks.len()).sum::<usize>();
        let ok = run
            .records
            .iter()
            .filter(|r| r.outcome.is_success())
            .count();
        let span = last.saturating_sub(first).as_secs_f64();
        println!(
            "  {n} shard process(es): {ok}/{} succeeded; {events} SSE token events in {span:.2} s = {:.0} events/s (first to last chunk); whole run incl. start-up {:.2} s; client CPU {cpu:.2} s ({:.1} us/event)",
            run.records.len(),
            events as f64 / span.max(1e-9),
            wall.as_secs_f64(),
            cpu * 1e6 / events.max(1) as f64
        );
        println!(
            "    timestamp error vs the server's timeline (ms): p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}  min {:.3}",
            pct(&err_ms, 50.0),
            pct(&err_ms, 90.0),
            pct(&err_ms, 99.0),
            pct(&err_ms, 100.0),
            pct(&err_ms, 0.0)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
