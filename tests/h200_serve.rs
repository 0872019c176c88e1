//! The H200 example's simulator served over HTTP (127.0.0.1 only), checked from outside:
//! `HttpEngine` timings against the simulator's own virtual timeline at speed 10, and the
//! `servebench bench` binary against the example server (counts, tokens, injected faults,
//! the API key), plus malformed requests.
//!
//! The server here is the one `cargo run --example h200_server -- --serve …` starts, with
//! the same flag mapping ([`servebench::sim::serve::options`]).
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use servebench::driver::workload::random;
use servebench::driver::Arrivals;
use servebench::driver::{run, RunOptions};
use servebench::format::text;
use servebench::http::client::REQUEST_ID_PREFIX;
use servebench::http::server::{self, ServerHandle};
use servebench::http::{Endpoint, HttpConfig, HttpEngine};
use servebench::record::{ErrorKind, Outcome, RequestRecord};

use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::{Config, H200Sim};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");
const MODEL: &str = "Qwen/Qwen3.5-35B-A3B";

/// The tests of this binary run one at a time: the timing test must not share the two cores
/// of a CI machine with a `servebench` child process of another test.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn args(speed: f64) -> ServeArgs {
    ServeArgs {
        speed,
        max_connections: 8192,
        ..ServeArgs::default()
    }
}

/// The example's server for `config` with `args` (warm, as `--serve` runs it).
fn serve_sim(config: &str, args: &ServeArgs, record_timeline: bool) -> ServerHandle {
    let config = Config::named(config).unwrap();
    let opts = server::ServeOptions {
        record_timeline,
        ..serve::options(&config, args)
    };
    server::spawn(
        H200Sim::new(config).warmed_up(),
        args.addr,
        args.speed,
        opts,
    )
    .unwrap()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Wall-clock lateness a timestamp may carry on a loaded 2-core machine: the loopback hop,
/// the server's 0.5 ms pacing tick, a debug build and the scheduler (a few time slices;
/// measured medians: 1–2 ms idle, 1.4–7 ms with three or four CPU hogs on two cores). The client
/// can be late by this much, never early.
const NOISE_WALL_MS: f64 = 20.0;

/// Speed 10: the client's wall-clock TTFT and TPOT, times the speed, against the sim's own
/// virtual timeline (joined on `x-request-id`).
///
/// Stated tolerance. The sim's token gap is ~10 ms of virtual time, 1 ms of wall time at
/// speed 10: below the noise floor, so the tolerance comes from [`NOISE_WALL_MS`] and the
/// stream length, not from retries. With every client stamp late by 0..NOISE (wall):
/// * TTFT: virtual error in [−0.1 ms × speed, NOISE × speed) — never early, under 200 ms
///   (virtual) late at the median;
/// * TPOT: the mean gap over n = 400 tokens moves by at most NOISE / (n − 1) wall, i.e. by
///   about 5 % of the sim's ~10 ms gap at speed 10 (a server paced at the wrong speed is off
///   by 900 %; chunk counts are asserted equal, so none was dropped or merged).
#[test]
fn the_served_simulator_matches_its_own_timeline_at_speed_10() {
    let _serial = serial();
    let speed = 10.0;
    let server = serve_sim("baseline", &args(speed), true);
    let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
    cfg.endpoint = Endpoint::Chat;
    let probe = HttpEngine::new(cfg.clone()).unwrap();
    assert_eq!(probe.list_models().unwrap(), [MODEL]);
    cfg.model = Some(MODEL.into());
    let mut client = HttpEngine::new(cfg).unwrap();
    let (n, output) = (16, 400);
    let work = random(n, 512, output, 0.0, 42, true).unwrap();
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 100.0 },
        max_concurrency: Some(8),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let out = run(&mut client, &work, &opts).unwrap();
    let stats = server.stats();
    assert_eq!(out.records.len(), n);
    for r in &out.records {
        assert!(r.outcome.is_success(), "{}: {:?}", r.id, r.outcome);
    }
    let tokens: u64 = out
        .records
        .iter()
        .map(RequestRecord::client_output_tokens)
        .sum();
    let chunks: usize = out.records.iter().map(|r| r.chunks.len()).sum();
    assert_eq!(tokens, stats.tokens_sent);
    assert_eq!(tokens, (n as u64) * output);
    assert_eq!(chunks as u64, stats.token_chunks_sent);
    assert_eq!(stats.completed, n as u64);
    // The engine thread files a request's timeline entry just after its last chunk: the
    // client may see `[DONE]` first. The wait ends as soon as all are there.
    let give_up = Instant::now() + Duration::from_secs(30);
    let mut timeline = server.timeline();
    while timeline.len() < n && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(5));
        timeline = server.timeline();
    }
    let (mut ttft_err, mut tpot_rel, mut sim_tpot) = (Vec::new(), Vec::new(), Vec::new());
    for r in &out.records {
        let tag = format!("{REQUEST_ID_PREFIX}{}", r.id);
        let e = &timeline
            .iter()
            .find(|s| s.request_id.as_deref() == Some(tag.as_str()))
            .expect("the server saw the x-request-id")
            .record;
        // Every reasoning delta counted, with the sim's own token counts.
        assert_eq!(r.output_tokens(), output);
        assert_eq!(r.client_output_tokens(), e.client_output_tokens());
        assert_eq!(r.chunks.len(), e.chunks.len());
        assert_eq!(r.usage_prompt_tokens, e.usage_prompt_tokens);
        assert!(r.usage_prompt_tokens.unwrap() >= 512);
        ttft_err.push(ms(r.ttft().unwrap()) * speed - ms(e.ttft().unwrap()));
        let tpot = |x: &RequestRecord| {
            ms(x.latency().unwrap() - x.ttft().unwrap()) / (x.chunks.len() - 1) as f64
        };
        tpot_rel.push(((tpot(r) * speed) / tpot(e) - 1.0).abs());
        sim_tpot.push(tpot(e));
    }
    let (t, p, gap) = (
        median(ttft_err.clone()),
        median(tpot_rel.clone()),
        median(sim_tpot.clone()),
    );
    let summary = format!(
        "speed {speed}: TTFT error (client x speed - sim) median {t:.2} ms virtual = {:.2} ms wall; \
         TPOT relative error median {:.2} %; sim TPOT median {gap:.2} ms virtual",
        t / speed,
        p * 100.0
    );
    eprintln!("{summary}");
    // The sim's decode gap is what the TPOT tolerance is relative to.
    assert!((5.0..30.0).contains(&gap), "{summary}");
    assert!(
        ttft_err.iter().all(|&e| e > -0.1 * speed),
        "early: {summary}"
    );
    assert!(t < NOISE_WALL_MS * speed, "{summary}");
    let tpot_tolerance = NOISE_WALL_MS * speed / (output - 1) as f64 / gap;
    assert!(tpot_tolerance < 0.06);
    assert!(p < tpot_tolerance, "{summary}");
}

fn bench_cmd(target: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(["bench", "--target", target])
        .args(extra)
        .env_remove("OPENAI_API_KEY");
    c
}

fn text_of(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("servebench-h200-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn servebench_bench_against_the_example_server_counts_what_it_sent() {
    let _serial = serial();
    for (config, endpoint) in [("baseline", "chat"), ("optimized", "completions")] {
        let server = serve_sim(config, &args(10.0), false);
        let target = format!("http://{}", server.local_addr());
        let dir = temp_dir(config);
        let out = dir.join("run.json");
        let o = bench_cmd(
            &target,
            &[
                "--endpoint",
                endpoint,
                "--input-tokens",
                "256",
                "--output-tokens",
                "32",
                "--max-requests",
                "12",
                "--rate",
                "100",
                "--max-concurrency",
                "4",
                "--style",
                "vllm",
                "--quiet",
                "--output",
            ],
        )
        .arg(&out)
        .output()
        .unwrap();
        let (stdout, stderr) = text_of(&o);
        assert!(o.status.success(), "{config}: {stderr}");
        let stats = server.stats();
        let printed = text::parse_block(&stdout).unwrap().result;
        assert_eq!(printed.successful_requests, Some(12), "{config}");
        assert_eq!(printed.failed_requests, Some(0), "{config}");
        assert_eq!(stats.completed, 12, "{config}");
        assert_eq!(stats.tokens_sent, 12 * 32, "{config}");
        assert_eq!(printed.total_output_tokens, Some(stats.tokens_sent));
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let recs: Vec<RequestRecord> = serde_json::from_value(saved["records"].clone()).unwrap();
        assert_eq!(recs.len(), 12);
        let chunks: usize = recs.iter().map(|r| r.chunks.len()).sum();
        assert_eq!(chunks as u64, stats.token_chunks_sent, "{config}");
        // The input tokens are what the sim reported in usage (prompt + chat template).
        let input: u64 = recs.iter().map(|r| r.usage_prompt_tokens.unwrap()).sum();
        assert!(recs.iter().all(|r| r.usage_prompt_tokens >= Some(256)));
        assert_eq!(printed.total_input_tokens, Some(input), "{config}");
        // The model came from the example's /v1/models; it differs between configurations.
        let want_model = serve::options(&Config::named(config).unwrap(), &args(10.0)).model;
        assert_eq!(
            saved["result"]["meta"]["model"],
            want_model.as_str(),
            "{config}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn faults_injected_by_the_example_server_become_failed_records() {
    let _serial = serial();
    // (--fault, failing ids with one request in flight, kind, reason, chunks they keep)
    let cases = [
        (
            "cut:4:2",
            [3, 7, 11],
            ErrorKind::StreamCut,
            "stream cut after 2 token chunks",
            2,
        ),
        (
            "error:4:1",
            [3, 7, 11],
            ErrorKind::ServerError,
            "injected fault: error after 1 chunks",
            1,
        ),
        (
            "500:4",
            [3, 7, 11],
            ErrorKind::HttpStatus,
            "HTTP 500 Internal Server Error: injected fault",
            0,
        ),
    ];
    for (fault, failing, kind, needle, kept) in cases {
        let a = ServeArgs {
            fault: Some(fault.parse().unwrap()),
            ..args(10.0)
        };
        let server = serve_sim("baseline", &a, false);
        let dir = temp_dir("fault");
        let out = dir.join("run.jsonl");
        let o = bench_cmd(
            &format!("http://{}", server.local_addr()),
            &[
                "--endpoint",
                "chat",
                "--input-tokens",
                "64",
                "--output-tokens",
                "8",
                "--max-requests",
                "12",
                "--max-concurrency",
                "1",
                "--style",
                "vllm",
                "--quiet",
                "--output",
            ],
        )
        .arg(&out)
        .output()
        .unwrap();
        let (stdout, stderr) = text_of(&o);
        assert!(o.status.success(), "{fault}: {stderr}");
        let printed = text::parse_block(&stdout).unwrap().result;
        assert_eq!(printed.successful_requests, Some(9), "{fault}");
        assert_eq!(printed.failed_requests, Some(3), "{fault}");
        // The lints name the partial success.
        assert!(stderr.contains("[partial-success]"), "{fault}: {stderr}");
        let recs = servebench::runfile::RunFile::read(&out).unwrap().records;
        let mut failed = Vec::new();
        for r in &recs {
            match &r.outcome {
                Outcome::Error { kind: k, message } => {
                    assert_eq!(*k, kind, "{fault}: {message}");
                    assert!(message.contains(needle), "{fault}: {message}");
                    assert_eq!(r.chunks.len(), kept, "{fault}");
                    failed.push(r.id);
                }
                other => {
                    assert!(other.is_success(), "{fault}: {other:?}");
                    assert_eq!(r.client_output_tokens(), 8);
                }
            }
        }
        assert_eq!(failed, failing, "{fault}");
        let stats = server.stats();
        assert_eq!(stats.injected_faults, 3, "{fault}");
        assert_eq!(stats.completed, 9, "{fault}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// One raw HTTP/1.1 exchange with `Connection: close` and extra header lines.
fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

fn error_message(status: u16, head: &str, body: &str) -> String {
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["error"]["code"], status, "{body}");
    assert!(v["error"]["type"].is_string(), "{body}");
    v["error"]["message"].as_str().unwrap().to_string()
}

#[test]
fn malformed_requests_to_the_example_server_get_4xx_json_errors() {
    let _serial = serial();
    let server = serve_sim("optimized", &args(10.0), false);
    let addr = server.local_addr();
    let long = "word ".repeat(32760);
    let cases = [
        (
            "/v1/completions",
            "{\"prompt\": ".to_string(),
            400,
            "invalid JSON",
        ),
        (
            "/v1/chat/completions",
            r#"{"messages":[{"content":"hi"}]}"#.to_string(),
            400,
            "role",
        ),
        (
            "/v1/chat/completions",
            format!(r#"{{"model":"{MODEL}","messages":[{{"role":"user","content":"hi"}}]}}"#),
            404,
            "does not exist", // the optimized config serves the FP8 model
        ),
        (
            "/v1/completions",
            format!(r#"{{"prompt":"{long}","max_tokens":100}}"#),
            400,
            "maximum context length is 32768",
        ),
    ];
    for (path, body, status, needle) in &cases {
        let (s, head, text) = raw(addr, "POST", path, "", body);
        assert_eq!(s, *status, "{path}: {text}");
        let m = error_message(s, &head, &text);
        assert!(m.contains(needle), "{path}: {m}");
    }
    let stats = server.stats();
    assert_eq!((stats.rejected, stats.requests), (cases.len() as u64, 0));
    let (s, _, text) = raw(addr, "GET", "/v1/models", "", "");
    assert_eq!(s, 200);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["data"][0]["id"], "Qwen/Qwen3.5-35B-A3B-FP8");
    assert_eq!(v["data"][0]["max_model_len"], 32768);
    let (s, _, text) = raw(addr, "GET", "/metrics", "", "");
    assert_eq!(s, 200);
    assert!(text.contains("servebench_rejected 4\n"), "{text}");
}

#[test]
fn the_api_key_is_required_and_sent() {
    let _serial = serial();
    let a = ServeArgs {
        api_key: Some("sk-test-123".into()),
        ..args(10.0)
    };
    let server = serve_sim("baseline", &a, false);
    let addr = server.local_addr();
    let target = format!("http://{addr}");
    // Raw: no key, a wrong key, the key; /health needs none.
    let body = r#"{"prompt":"one two","max_tokens":2}"#;
    for headers in ["", "Authorization: Bearer sk-wrong\r\n"] {
        let (s, head, text) = raw(addr, "POST", "/v1/completions", headers, body);
        assert_eq!(s, 401, "{headers}: {text}");
        assert!(error_message(s, &head, &text).contains("API key"));
        let (s, _, _) = raw(addr, "GET", "/v1/models", headers, "");
        assert_eq!(s, 401);
    }
    let (s, _, text) = raw(
        addr,
        "POST",
        "/v1/completions",
        "Authorization: Bearer sk-test-123\r\n",
        body,
    );
    assert_eq!(s, 200, "{text}");
    assert_eq!(raw(addr, "GET", "/health", "", "").0, 200);
    assert_eq!(server.stats().requests, 1);

    let run = &[
        "--input-tokens",
        "16",
        "--output-tokens",
        "4",
        "--max-requests",
        "3",
        "--quiet",
        "--style",
        "vllm",
    ];
    // --api-key, and $OPENAI_API_KEY.
    for (flag, env) in [(Some("sk-test-123"), None), (None, Some("sk-test-123"))] {
        let mut c = bench_cmd(&target, run);
        if let Some(k) = flag {
            c.args(["--api-key", k]);
        }
        if let Some(k) = env {
            c.env("OPENAI_API_KEY", k);
        }
        let o = c.output().unwrap();
        let (stdout, stderr) = text_of(&o);
        assert!(o.status.success(), "{flag:?} {env:?}: {stderr}");
        assert_eq!(
            text::parse_block(&stdout)
                .unwrap()
                .result
                .successful_requests,
            Some(3)
        );
    }
    assert_eq!(server.stats().completed, 1 + 6);
    // Without a key, or with a wrong one: model discovery fails with the 401, exit 1; with
    // --model every request fails with it.
    for extra in [
        vec![],
        vec!["--api-key", "sk-wrong"],
        vec!["--model", MODEL],
    ] {
        let o = bench_cmd(&target, run).args(&extra).output().unwrap();
        let (_, stderr) = text_of(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains("401"), "{extra:?}: {stderr}");
    }
}

/// A client that disconnects frees its slot in the simulator too: requests cancelled while
/// still in the admission frontend cost no more admission work, so a request arriving after
/// hundreds of cancelled ones is served as fast as on an idle server (it used to queue
/// behind 18 ms of frontend work per cancelled request: 9 s for 500).
#[test]
fn cancelled_requests_leave_no_work_behind_in_the_sim() {
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    let req = |id: u64, at: Duration| EngineRequest {
        id,
        prompt_tokens: 64,
        prompt: None,
        max_output_tokens: 4,
        ignore_eos: true,
        arrival: at,
        shared_prefix_tokens: 0,
        image_patches: Vec::new(),
        shares_admission: false,
        constrained: false,
    };
    let probe_ttft = |zombies: u64| -> Duration {
        let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
        for id in 0..zombies {
            sim.submit(req(id, Duration::ZERO)).unwrap();
        }
        let mut events = Vec::new();
        sim.advance(Some(Duration::from_millis(5)), &mut events)
            .unwrap();
        for id in 0..zombies {
            assert!(sim.cancel(id), "{id}");
        }
        assert_eq!(sim.in_flight(), 0);
        let t0 = sim.now();
        sim.submit(req(zombies, t0)).unwrap();
        for _ in 0..10_000 {
            events.clear();
            sim.advance(None, &mut events).unwrap();
            for ev in &events {
                assert_eq!(ev.id(), zombies, "an event for a cancelled request: {ev:?}");
                if let EngineEvent::Chunk { at, .. } = ev {
                    return *at - t0;
                }
            }
        }
        panic!("no first token");
    };
    let alone = probe_ttft(0);
    let after = probe_ttft(500);
    assert!(
        after <= alone + Duration::from_millis(5),
        "TTFT alone {alone:?}, after 500 cancelled requests {after:?}"
    );
}
