//! The production figures against the example server (the simulator served over HTTP on
//! 127.0.0.1, as `cargo run --example h200_server -- --serve …` runs it): reasoning-aware
//! latency on a reasoning stream, energy from the server's DCGM metrics against the
//! simulator's own energy, speculative-decoding counters, LoRA adapter names.
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use servebench::driver::arrivals::Arrivals;
use servebench::driver::workload::random;
use servebench::driver::{run, RunOptions};
use servebench::http::client::REQUEST_ID_PREFIX;
use servebench::http::server::{self, ReasoningPhase, ServeOptions, ServerHandle};
use servebench::http::{Endpoint, HttpConfig, HttpEngine};
use servebench::metrics::{compute, MetricsOptions};
use servebench::record::RequestRecord;
use servebench::result::Convention;
use servebench::sim::serve::{self as sim_serve, ServeArgs};
use servebench::sim::{Config, H200Sim};

/// One server at a time: the timing checks must not share the cores with another test's.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn args(speed: f64) -> ServeArgs {
    ServeArgs {
        addr: "127.0.0.1:0".parse().unwrap(),
        speed,
        delta: None,
        fault: None,
        max_connections: 1024,
        api_key: None,
        handoff_window: server::DEFAULT_HANDOFF_WINDOW,
        worker_threads: server::default_worker_threads(),
    }
}

fn serve_sim(config: &str, speed: f64, tune: impl FnOnce(&mut ServeOptions)) -> ServerHandle {
    let config = Config::named(config).unwrap();
    let a = args(speed);
    let mut opts = ServeOptions {
        record_timeline: true,
        ..sim_serve::options(&config, &a)
    };
    tune(&mut opts);
    server::spawn(H200Sim::new(config).warmed_up(), a.addr, a.speed, opts).unwrap()
}

fn client(server: &ServerHandle, model: &str) -> HttpEngine {
    let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
    cfg.endpoint = Endpoint::Chat;
    cfg.model = Some(model.into());
    HttpEngine::new(cfg).unwrap()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Wall-clock lateness a client stamp may carry on a loaded 2-core machine (as in
/// `tests/h200_serve.rs`): never early, at most this late.
const NOISE_WALL_MS: f64 = 20.0;

/// The server's timeline entry of each record (joined on `x-request-id`), waiting for the
/// engine thread to file the last ones.
fn timeline_of(server: &ServerHandle, records: &[RequestRecord]) -> Vec<RequestRecord> {
    let give_up = Instant::now() + Duration::from_secs(30);
    let mut timeline = server.timeline();
    while timeline.len() < records.len() && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(5));
        timeline = server.timeline();
    }
    records
        .iter()
        .map(|r| {
            let tag = format!("{REQUEST_ID_PREFIX}{}", r.id);
            timeline
                .iter()
                .find(|s| s.request_id.as_deref() == Some(tag.as_str()))
                .expect("the server saw the x-request-id")
                .record
                .clone()
        })
        .collect()
}

/// A reasoning stream: the first 40 of 100 tokens in `delta.reasoning`, the rest in
/// `delta.content`. The client counts exactly 40 reasoning and 60 answer tokens per
/// request, and its time to the first answer token, times the speed, is the simulator's
/// own time of token 41 (its virtual timeline), late by at most the wall-clock noise.
#[test]
fn reasoning_and_answer_ttft_on_a_reasoning_stream() {
    let _serial = serial();
    let speed = 10.0;
    let (n, output, reasoning) = (8, 100u64, 40u64);
    let server = serve_sim("baseline", speed, |o| {
        o.reasoning = Some(ReasoningPhase::Tokens(reasoning))
    });
    let mut engine = client(&server, "Qwen/Qwen3.5-35B-A3B");
    let work = random(n, 256, output, 0.0, 7, true).unwrap();
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 50.0 },
        max_concurrency: Some(4),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let out = run(&mut engine, &work, &opts).unwrap();
    assert_eq!(out.records.len(), n);
    let truth = timeline_of(&server, &out.records);
    let mut answer_err = Vec::new();
    for (r, e) in out.records.iter().zip(&truth) {
        assert!(r.outcome.is_success(), "{:?}", r.outcome);
        let split = r.reasoning.expect("a reasoning stream");
        assert_eq!(split.reasoning_tokens, reasoning);
        assert_eq!(split.answer_tokens, output - reasoning);
        assert_eq!(split.first_reasoning_chunk, Some(0));
        // One token per chunk (no speculative decoding in the baseline): token 41 is
        // chunk 40, on the client's side and on the server's.
        assert_eq!(split.first_answer_chunk, Some(reasoning as u32));
        assert_eq!(r.chunks.len(), e.chunks.len());
        let sim_answer = e.chunks[reasoning as usize].at - e.sent_at;
        let err = ms(r.time_to_first_answer().unwrap()) * speed - ms(sim_answer);
        answer_err.push(err);
        // TTFT counts either stream: here the reasoning token came first.
        assert_eq!(r.ttft(), r.time_to_first_reasoning());
        assert!(r.time_to_first_answer() > r.ttft());
    }
    assert!(
        answer_err
            .iter()
            .all(|&e| e > -0.1 * speed && e < NOISE_WALL_MS * speed),
        "client TTFA x speed - sim (virtual ms): {answer_err:?}"
    );
    let result = compute(&out.records, MetricsOptions::new(Convention::Vllm));
    let f = result.reasoning.clone().expect("reasoning figures");
    assert_eq!(f.requests_with_reasoning, n as u64);
    assert_eq!(f.reasoning_tokens, n as u64 * reasoning);
    assert_eq!(f.answer_tokens, n as u64 * (output - reasoning));
    let ttfa = f.time_to_first_answer.unwrap().mean.unwrap();
    let ttfr = f.time_to_first_reasoning.unwrap().mean.unwrap();
    // The run's TTFT is the reasoning one; the answer comes ~40 decode steps later.
    assert_eq!(Some(ttfr), result.ttft.as_ref().unwrap().mean);
    assert!(ttfa > ttfr, "{ttfa} {ttfr}");
    let lines = servebench::format::production::lines(&result);
    assert!(
        lines[0].starts_with("TTFT counts the first token of either stream"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Time to first answer token (ms): mean")),
        "{lines:?}"
    );
    // The record's split survives the run file's JSON.
    let json = serde_json::to_string(&out.records[0]).unwrap();
    let back: RequestRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out.records[0]);
    assert!(json.contains("\"first_answer_chunk\":40"), "{json}");
}
