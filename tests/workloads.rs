//! The structured workloads against the simulator: Mooncake trace replay (send times and
//! shared blocks, on the real trace slice in `tests/fixtures`), shared-prefix hit rates
//! with the simulator's prefix cache on and off, multi-turn histories and their TTFT, the
//! prefix-cache reset endpoint and the served simulator's prefix-cache counters. (The rate
//! sweep against the example server is in `tests/cli_sweep.rs`.)
#![cfg(all(feature = "http", feature = "sim"))]

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use servebench::driver::Arrivals;
use servebench::driver::{mooncake_block_text, DatasetSpec, MOONCAKE_BLOCK_TOKENS};
use servebench::driver::{run, RunOptions, RunOutput};
use servebench::engine::Engine;
use servebench::http::server::{self, ServeOptions};
use servebench::http::{HttpConfig, HttpEngine};
use servebench::record::RequestRecord;
use servebench::sim::serve::{self as sim_serve, ServeArgs};
use servebench::sim::{Config, H200Sim};

const TRACE: &str = "tests/fixtures/mooncake_conversation_240.jsonl";

/// The HTTP tests run one at a time (timing on a shared 2-core machine).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn trace_lines() -> Vec<serde_json::Value> {
    std::fs::read_to_string(TRACE)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ids(v: &serde_json::Value) -> Vec<u64> {
    v["hash_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_u64().unwrap())
        .collect()
}

#[test]
fn mooncake_prompts_share_exactly_the_traces_blocks() {
    let lines = trace_lines();
    let plan = DatasetSpec::Mooncake {
        path: TRACE.into(),
        time_scale: 1.0,
    }
    .build(None)
    .unwrap();
    assert_eq!(plan.items.len(), lines.len());
    assert!(plan.items.len() >= 200);
    let words: Vec<Vec<&str>> = plan
        .items
        .iter()
        .map(|w| w.prompt.as_deref().unwrap().split(' ').collect())
        .collect();
    // Every block is its hash id's text, and the prompt has input_length words.
    for (i, (l, w)) in lines.iter().zip(&words).enumerate() {
        let input = l["input_length"].as_u64().unwrap();
        assert_eq!(w.len() as u64, input, "request {i}");
        assert_eq!(plan.items[i].prompt_tokens, input);
        assert_eq!(
            plan.items[i].output_tokens,
            l["output_length"].as_u64().unwrap()
        );
        for (j, h) in ids(l).into_iter().enumerate() {
            let start = j * MOONCAKE_BLOCK_TOKENS as usize;
            let end = (start + MOONCAKE_BLOCK_TOKENS as usize).min(w.len());
            let want = mooncake_block_text(h, (end - start) as u64);
            assert_eq!(w[start..end].join(" "), want, "request {i} block {j}");
        }
    }
    // Two prompts agree exactly on the blocks whose ids agree, and part at the first id
    // that differs.
    let mut sharing_pairs = 0;
    for a in 0..lines.len() {
        for b in a + 1..lines.len() {
            let (ia, ib) = (ids(&lines[a]), ids(&lines[b]));
            let m = ia.iter().zip(&ib).take_while(|(x, y)| x == y).count();
            if m == ia.len().min(ib.len()) {
                continue; // one id list is a prefix of the other
            }
            let lcp = words[a]
                .iter()
                .zip(&words[b])
                .take_while(|(x, y)| x == y)
                .count();
            let bt = MOONCAKE_BLOCK_TOKENS as usize;
            assert!(
                lcp >= m * bt && lcp < (m + 1) * bt,
                "requests {a} and {b}: {m} shared blocks, {lcp} shared words"
            );
            sharing_pairs += usize::from(m > 0);
        }
    }
    assert!(sharing_pairs > 1000, "{sharing_pairs}");
}

fn records_by_id(out: &RunOutput) -> HashMap<u64, &RequestRecord> {
    out.records.iter().map(|r| (r.id, r)).collect()
}

#[test]
fn mooncake_replay_in_virtual_time_sends_at_the_traces_times() {
    let lines = trace_lines();
    let spec = DatasetSpec::Mooncake {
        path: TRACE.into(),
        time_scale: 0.5,
    };
    let plan = spec.build(None).unwrap();
    let mut opts = RunOptions::default();
    plan.apply(&mut opts);
    let mut sim = H200Sim::new(Config::named("prefix-cache").unwrap()).warmed_up();
    let out = run(&mut sim, &plan.items, &opts).unwrap();
    assert_eq!(out.records.len(), lines.len());
    for r in &out.records {
        let t = lines[r.id as usize]["timestamp"].as_f64().unwrap() / 1000.0 * 0.5;
        assert!((r.sent_at.as_secs_f64() - t).abs() < 1e-6, "{}", r.id);
    }
    // The trace's sharing reaches the simulator's prefix cache: every request shares
    // block 0 (the system prompt) at least.
    let c = sim.prefix_cache_counts();
    assert!(
        c.hits_tokens > 0 && c.hits_tokens < c.queries_tokens,
        "{c:?}"
    );
}

fn spawn_sim(config: Config, speed: f64, timeline: bool) -> server::ServerHandle {
    let args = ServeArgs {
        speed,
        max_connections: 8192,
        ..ServeArgs::default()
    };
    let opts = ServeOptions {
        record_timeline: timeline,
        ..sim_serve::options(&config, &args)
    };
    server::spawn(H200Sim::new(config).warmed_up(), args.addr, speed, opts).unwrap()
}

fn http_engine(h: &server::ServerHandle) -> HttpEngine {
    let mut c = HttpConfig::new(format!("http://{}", h.local_addr()));
    c.model = Some(Config::named("prefix-cache").unwrap().model().into());
    HttpEngine::new(c).unwrap()
}

#[test]
fn mooncake_replay_over_http_schedules_every_request_at_the_traces_time() {
    let _g = serial();
    let lines = trace_lines();
    let scale = 0.1;
    let mut plan = DatasetSpec::Mooncake {
        path: TRACE.into(),
        time_scale: scale,
    }
    .build(None)
    .unwrap();
    // The send schedule and the prompts are the trace's; one output token each keeps the
    // streaming work (which competes with the sender for the CPU) small.
    for w in &mut plan.items {
        w.output_tokens = 1;
    }
    let h = spawn_sim(Config::named("prefix-cache").unwrap(), 50.0, true);
    let mut engine = http_engine(&h);
    let mut opts = RunOptions::default();
    plan.apply(&mut opts);
    let out = run(&mut engine, &plan.items, &opts).unwrap();
    assert_eq!(out.records.len(), lines.len());
    // The run starts when request 0 is due (the trace starts at 0): every request is due
    // at its trace time × scale after that, and was sent within 2 ms of being due.
    let start = out.records[0].scheduled_at.unwrap();
    let mut worst = Duration::ZERO;
    // (The driver announces the requests first, so the client encodes each body ahead of
    // its send time: `Engine::prepare`.)
    let mut lateness: Vec<Duration> = Vec::new();
    for r in &out.records {
        let want = Duration::from_secs_f64(
            lines[r.id as usize]["timestamp"].as_f64().unwrap() / 1000.0 * scale,
        );
        let due = r.scheduled_at.unwrap() - start;
        assert!(
            due.abs_diff(want) < Duration::from_micros(1),
            "request {}",
            r.id
        );
        // Never sent before it was due.
        assert!(r.sent_at >= start + want, "request {} sent early", r.id);
        let late = r.sent_at - (start + want);
        worst = worst.max(late);
        lateness.push(late);
    }
    // How late the sends were: from the run file (the client's send stamps) and from the
    // server's timeline (when each request's head reached the server's handler; the same
    // process, so both on one `Instant` clock).
    let origin = engine.origin();
    let mut arrival_late: Vec<Duration> = Vec::new();
    for s in h.timeline() {
        let id: usize = s
            .request_id
            .as_deref()
            .and_then(|r| r.rsplit('-').next())
            .and_then(|n| n.parse().ok())
            .expect("the client's x-request-id");
        let r = &out.records[id];
        let due = origin + r.scheduled_at.unwrap();
        let at = h.origin() + s.received_wall;
        assert!(
            at >= due,
            "request {id} reached the server before it was due"
        );
        arrival_late.push(at - due);
    }
    assert!(arrival_late.len() >= 200, "{}", arrival_late.len());
    lateness.sort();
    arrival_late.sort();
    let q = |v: &[Duration], p: usize| v[(v.len() - 1) * p / 100];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok());
    eprintln!(
        "send lateness (run file): p50 {:?} p99 {:?} max {worst:?}; at the server: p50 {:?} \
         p99 {:?}; load average {load:?} on {cores} cores",
        q(&lateness, 50),
        q(&lateness, 99),
        q(&arrival_late, 50),
        q(&arrival_late, 99),
    );
    // The 2 ms goal is a speed goal, held on a quiet machine: `SERVEBENCH_TIMING_STRICT=1`
    // holds the median send of the run file to it (the test prints the figures either way).
    // A shared CI runner's 1-minute load average says nothing about the other test threads
    // running this instant, and there a ready thread waits milliseconds for a core, which no
    // client can help. What always holds is the shape: the median send is within 50 ms of
    // its due time (a scheduler that read the trace in the wrong unit, or sent in arrival
    // order after each answer, is seconds off). The server's arrival times also hold the
    // server's own scheduling, so they are printed, not asserted.
    let strict = std::env::var_os("SERVEBENCH_TIMING_STRICT").is_some_and(|v| v == "1");
    let goal = if strict {
        Duration::from_millis(2)
    } else {
        Duration::from_millis(50)
    };
    assert!(
        q(&lateness, 50) <= goal,
        "run file p50 {:?} (goal {goal:?}; load average {load:?} on {cores} cores)",
        q(&lateness, 50)
    );
    // Every request reached the server (those over the context length get a 400).
    let served = h.stats();
    assert_eq!(served.requests + served.rejected, lines.len() as u64);
}

fn shared_prefix_run(config: &str) -> (H200Sim, RunOutput) {
    let plan = DatasetSpec::SharedPrefix {
        groups: 4,
        prompts_per_group: 8,
        // 2166 + 10 template tokens = 4 blocks of 544.
        prefix_tokens: 2166,
        input_tokens: 200,
        output_tokens: 32,
        seed: 3,
    }
    .build(None)
    .unwrap();
    let mut sim = H200Sim::new(Config::named(config).unwrap()).warmed_up();
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 4.0 },
        ..RunOptions::default()
    };
    let out = run(&mut sim, &plan.items, &opts).unwrap();
    (sim, out)
}

fn mean_ttft_ms(rs: &[&RequestRecord]) -> f64 {
    rs.iter()
        .map(|r| r.ttft().unwrap().as_secs_f64() * 1e3)
        .sum::<f64>()
        / rs.len() as f64
}

#[test]
fn shared_prefix_hits_q_minus_1_over_q_of_the_prefix_and_cuts_ttft() {
    let (on, with) = shared_prefix_run("prefix-cache");
    let (off, without) = shared_prefix_run("quantization");
    let c = on.prefix_cache_counts();
    let prefix = 32.0 * 2176.0;
    let rate = c.hits_tokens as f64 / prefix;
    let want = 7.0 / 8.0;
    assert!(
        (rate - want).abs() <= 0.02 * want,
        "hit rate {rate:.4} of the prefix tokens, want {want}"
    );
    // Nothing but prefix blocks hit: the hits are whole prefixes.
    assert_eq!(c.hits_tokens % 2176, 0);
    assert_eq!(c.queries_tokens, 32 * (2166 + 200 + 10));
    assert_eq!(off.prefix_cache_counts().hits_tokens, 0);
    assert!(with.records.iter().all(|r| r.outcome.is_success()));
    let (a, b) = (
        mean_ttft_ms(&with.records.iter().collect::<Vec<_>>()),
        mean_ttft_ms(&without.records.iter().collect::<Vec<_>>()),
    );
    assert!(
        a < 0.8 * b,
        "mean TTFT {a:.1} ms with caching, {b:.1} ms without"
    );
}

#[test]
fn multi_turn_prompts_hold_every_earlier_turn_verbatim() {
    let plan = DatasetSpec::MultiTurn {
        conversations: 3,
        turns: 4,
        input_tokens: 30,
        output_tokens: 20,
        think_time_s: 0.0,
        seed: 9,
        path: None,
    }
    .build(None)
    .unwrap();
    let turns = plan.turns.as_ref().unwrap();
    for (i, t) in turns.iter().enumerate() {
        let p = plan.items[i].prompt.as_deref().unwrap();
        let words = p.split(' ').count() as u64;
        assert_eq!(words, plan.items[i].prompt_tokens);
        assert_eq!(plan.items[i].prompt_tokens, u64::from(t.turn - 1) * 50 + 30);
        if t.turn > 1 {
            // Turn k = turn k−1's prompt, its 20-word answer, the next 30-word message.
            let prev = plan.items[i - 1].prompt.as_deref().unwrap();
            assert_eq!(turns[i - 1].conversation, t.conversation);
            assert!(p.starts_with(prev) && p.as_bytes()[prev.len()] == b' ');
            assert_eq!(p[prev.len() + 1..].split(' ').count(), 50);
        }
    }
    // Conversations differ from each other.
    assert_ne!(plan.items[0].prompt, plan.items[4].prompt);
}

fn multi_turn_run(config: &str, cap: Option<usize>) -> RunOutput {
    let plan = DatasetSpec::MultiTurn {
        conversations: 6,
        turns: 5,
        input_tokens: 700,
        output_tokens: 40,
        think_time_s: 0.5,
        seed: 1,
        path: None,
    }
    .build(None)
    .unwrap();
    let mut opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 2.0 },
        max_concurrency: cap,
        ..RunOptions::default()
    };
    plan.apply(&mut opts);
    let mut sim = H200Sim::new(Config::named(config).unwrap()).warmed_up();
    run(&mut sim, &plan.items, &opts).unwrap()
}

#[test]
fn multi_turn_waits_for_each_answer_and_caching_cuts_later_turns_ttft() {
    let with = multi_turn_run("prefix-cache", None);
    let without = multi_turn_run("quantization", None);
    for out in [&with, &without] {
        let by_id = records_by_id(out);
        for r in &out.records {
            let t = r.turn.unwrap();
            assert_eq!((t.conversation, t.turn), (r.id / 5, (r.id % 5) as u32 + 1));
            if t.turn > 1 {
                let prev = by_id[&(r.id - 1)];
                let ready = prev.ended_at.unwrap() + Duration::from_millis(500);
                assert_eq!(r.scheduled_at, Some(ready), "request {}", r.id);
                assert!(r.sent_at >= ready);
            }
        }
    }
    let by_turn = |o: &RunOutput, k: u32| -> f64 {
        let rs: Vec<&RequestRecord> = o
            .records
            .iter()
            .filter(|r| r.turn.unwrap().turn == k)
            .collect();
        mean_ttft_ms(&rs)
    };
    // Without caching every turn prefills its whole history: TTFT grows with the turn.
    // With it only the new message (and the partial last block) is computed.
    assert!(by_turn(&without, 5) > by_turn(&without, 1));
    for k in 2..=5 {
        let (a, b) = (by_turn(&with, k), by_turn(&without, k));
        assert!(a < b, "turn {k}: {a:.1} ms with caching, {b:.1} ms without");
    }
    assert!(
        by_turn(&with, 5) < 0.6 * by_turn(&without, 5),
        "{} vs {}",
        by_turn(&with, 5),
        by_turn(&without, 5)
    );
}

#[test]
fn max_concurrency_counts_conversations() {
    let out = multi_turn_run("prefix-cache", Some(2));
    // A conversation holds its slot from its first send to its last end.
    let mut spans: HashMap<u64, (Duration, Duration)> = HashMap::new();
    for r in &out.records {
        let c = r.turn.unwrap().conversation;
        let e = spans.entry(c).or_insert((r.sent_at, r.ended_at.unwrap()));
        e.0 = e.0.min(r.sent_at);
        e.1 = e.1.max(r.ended_at.unwrap());
    }
    let mut max_active = 0;
    for (start, _) in spans.values() {
        let active = spans
            .values()
            .filter(|(s, e)| s <= start && start < e)
            .count();
        max_active = max_active.max(active);
    }
    assert_eq!(max_active, 2);
    assert_eq!(out.records.len(), 30);
}

#[test]
fn reset_prefix_cache_empties_the_simulators_cache() {
    let plan = DatasetSpec::SharedPrefix {
        groups: 1,
        prompts_per_group: 2,
        prefix_tokens: 1078,
        input_tokens: 50,
        output_tokens: 4,
        seed: 1,
    }
    .build(None)
    .unwrap();
    let opts = RunOptions {
        max_concurrency: Some(1),
        ..RunOptions::default()
    };
    let mut sim = H200Sim::new(Config::named("prefix-cache").unwrap()).warmed_up();
    run(&mut sim, &plan.items, &opts).unwrap();
    // The second prompt hit the first's two prefix blocks (1078 + 10 = 2 × 544).
    assert_eq!(sim.prefix_cache_counts().hits_tokens, 1088);
    assert!(sim.cached_blocks() >= 2);
    // Nothing runs: the cached blocks are evictable, which vLLM's usage gauge counts free.
    assert_eq!(sim.gauges().kv_cache_usage, 0.0);
    assert_eq!(sim.reset_prefix_cache(), Some(true));
    assert_eq!(sim.cached_blocks(), 0);
    // Cold again: the same two prompts hit only once more.
    run(&mut sim, &plan.items, &opts).unwrap();
    assert_eq!(sim.prefix_cache_counts().hits_tokens, 2 * 1088);
    let mut off = H200Sim::new(Config::named("baseline").unwrap());
    assert_eq!(off.reset_prefix_cache(), None);
}

#[test]
fn reset_prefix_cache_routes_over_http() {
    let _g = serial();
    let h = spawn_sim(Config::named("prefix-cache").unwrap(), 20.0, false);
    let engine = http_engine(&h);
    assert_eq!(engine.reset_prefix_cache().unwrap(), "/reset_prefix_cache");
    for path in ["/reset_prefix_cache", "/flush_cache"] {
        let status = post(h.local_addr(), path);
        assert!(status.starts_with("HTTP/1.1 200"), "{path}: {status}");
    }
    // A server with neither route: the error names both attempts.
    let none = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = none.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        use std::io::{Read, Write};
        for _ in 0..2 {
            let (mut s, _) = none.accept().unwrap();
            // Read the whole request head first: closing with unread bytes would reset the
            // connection instead of answering.
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = s.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            let _ = s.shutdown(std::net::Shutdown::Write);
            let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
            while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        }
    });
    let e = HttpEngine::new(HttpConfig::new(format!("http://{addr}")))
        .unwrap()
        .reset_prefix_cache()
        .unwrap_err()
        .to_string();
    t.join().unwrap();
    assert!(
        e.contains("/reset_prefix_cache: HTTP 404") && e.contains("/flush_cache: HTTP 404"),
        "{e}"
    );
}

#[test]
fn the_served_simulators_metrics_count_prefix_cache_hits_and_queries() {
    let _g = serial();
    let plan = DatasetSpec::SharedPrefix {
        groups: 1,
        prompts_per_group: 2,
        prefix_tokens: 1078,
        input_tokens: 50,
        output_tokens: 4,
        seed: 1,
    }
    .build(None)
    .unwrap();
    let opts = RunOptions {
        max_concurrency: Some(1),
        ..RunOptions::default()
    };
    let h = spawn_sim(Config::named("prefix-cache").unwrap(), 20.0, false);
    let mut engine = http_engine(&h);
    let out = run(&mut engine, &plan.items, &opts).unwrap();
    assert!(out.records.iter().all(|r| r.outcome.is_success()));
    let (status, body) = get(h.local_addr(), "/metrics");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let counter = |name: &str| -> f64 {
        body.lines()
            .filter(|l| l.split(['{', ' ']).next() == Some(name))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    // The second prompt hit the first's two prefix blocks (1078 + 10 = 2 × 544); every
    // prompt token of both requests was looked up.
    assert_eq!(counter("vllm:prefix_cache_hits_total"), 1088.0, "{body}");
    let prompts: u64 = out
        .records
        .iter()
        .map(|r| r.usage_prompt_tokens.unwrap())
        .sum();
    assert_eq!(counter("vllm:prefix_cache_queries_total"), prompts as f64);
}

fn get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (head.to_string(), body.to_string())
}

fn post(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}
