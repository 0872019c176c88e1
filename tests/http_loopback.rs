//! Loopback tests (127.0.0.1 only): the HTTP client engine against the OpenAI-compatible
//! server serving a deterministic virtual-time engine.
#![cfg(feature = "http")]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{run, work, TestEngine};
use servebench::http::client::REQUEST_ID_PREFIX;
use servebench::http::server::{DeltaField, Fault, ServeOptions, ServerHandle};
use servebench::http::{spawn, Endpoint, HttpConfig, HttpEngine};
use servebench::record::{ErrorKind, Outcome, RequestRecord};

fn start(engine: TestEngine, speed: f64, options: ServeOptions) -> ServerHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    spawn(
        engine,
        addr,
        speed,
        ServeOptions {
            record_timeline: true,
            ..options
        },
    )
    .unwrap()
}

fn client_for(server: &ServerHandle, endpoint: Endpoint, continuous_usage: bool) -> HttpEngine {
    let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
    cfg.endpoint = endpoint;
    cfg.continuous_usage = continuous_usage;
    cfg.model = Some("servebench-sim".into());
    cfg.request_timeout = Some(Duration::from_secs(30));
    HttpEngine::new(cfg).unwrap()
}

fn error_of(r: &RequestRecord) -> Option<(ErrorKind, &str)> {
    match &r.outcome {
        Outcome::Error { kind, message } => Some((*kind, message.as_str())),
        _ => None,
    }
}

/// How long a test waits for something the server does on its own threads (a timeline
/// entry, a cancellation): generous, because a loaded 2-core CI machine can starve a thread
/// for seconds, and free when things go well (the wait ends as soon as it is done).
const EVENTUALLY: Duration = Duration::from_secs(30);

/// Poll `done` every 5 ms until it holds or [`EVENTUALLY`] passes.
fn eventually(mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() && t0.elapsed() < EVENTUALLY {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The server's timeline once it holds `n` entries: the engine thread files a request's
/// entry just after handing over its last chunk, so the client can see `[DONE]` first.
fn timeline_of(server: &ServerHandle, n: usize) -> Vec<servebench::http::server::ServedRequest> {
    eventually(|| server.timeline().len() >= n);
    server.timeline()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Both sides count the same requests, chunks and tokens, and the client's timings (scaled
/// by the speed factor) follow the engine's virtual timeline — at speed 10.
///
/// One run, no retries: the engine's gaps are chosen so that half the 40 ms *wall* token
/// gap covers the lateness a loaded 2-core machine adds to a timestamp (~20 ms at worst
/// at the median; measured 1–2 ms idle, 8–14 ms with four CPU hogs on two cores — late,
/// never early), and the checks are medians over 24 requests / 480 chunks, which a stall of
/// a few hundred ms does not move. The tolerances are stated below.
#[test]
fn completions_counts_and_timings_match_the_engine_at_speed_10() {
    let speed = 10.0;
    // Virtual: TTFT 4 s, a token every 400 ms; wall at speed 10: 400 ms and 40 ms.
    let server = start(
        TestEngine::new(4000, 400, 1),
        speed,
        ServeOptions::default(),
    );
    let mut client = client_for(&server, Endpoint::Completions, true);
    let n = 24;
    let recs = run(&mut client, &work(n as usize, 32, 20), 5, 8);
    assert_eq!(recs.len(), n as usize);
    for r in &recs {
        assert!(r.outcome.is_success(), "{:?}", r.outcome);
        assert_eq!(r.usage_output_tokens, Some(20));
        assert_eq!(
            r.usage_prompt_tokens,
            Some(32),
            "server word count of the prompt"
        );
        assert_eq!(r.client_output_tokens(), 20);
        assert_eq!(r.chunks.len(), 20);
        assert!(r.chunks.iter().all(|c| c.tokens == 1));
    }
    let stats = server.stats();
    assert_eq!(stats.requests, n);
    assert_eq!(stats.completed, n);
    assert_eq!(stats.cancelled + stats.failed + stats.rejected, 0);
    let chunks: usize = recs.iter().map(|r| r.chunks.len()).sum();
    let tokens: u64 = recs.iter().map(RequestRecord::client_output_tokens).sum();
    assert_eq!(chunks as u64, stats.token_chunks_sent);
    assert_eq!(tokens, stats.tokens_sent);
    assert_eq!(stats.open_streams, 0);

    // Timing: compare each request with the engine's own (virtual) record.
    let timeline = timeline_of(&server, n as usize);
    assert_eq!(timeline.len(), n as usize);
    let (mut ttft_err, mut tpot_err, mut chunk_err) = (Vec::new(), Vec::new(), Vec::new());
    for r in &recs {
        let tag = format!("{REQUEST_ID_PREFIX}{}", r.id);
        let served = timeline
            .iter()
            .find(|s| s.request_id.as_deref() == Some(tag.as_str()))
            .expect("server saw the x-request-id");
        let e = &served.record;
        assert_eq!(e.chunks.len(), r.chunks.len());
        let engine_ttft = ms(e.ttft().unwrap());
        assert_eq!(engine_ttft, 4000.0);
        ttft_err.push(ms(r.ttft().unwrap()) * speed - engine_ttft);
        let tpot = |x: &RequestRecord| {
            ms(x.latency().unwrap() - x.ttft().unwrap()) / (x.chunks.len() - 1) as f64
        };
        tpot_err.push(tpot(r) * speed - tpot(e));
        for (c, ec) in r.chunks.iter().zip(&e.chunks) {
            let client_off = ms(c.at - r.chunks[0].at) * speed;
            let engine_off = ms(ec.at - e.chunks[0].at);
            chunk_err.push((client_off - engine_off).abs());
        }
    }
    let ttft_med = median(ttft_err.clone());
    let tpot_med = median(tpot_err.iter().map(|x| x.abs()).collect());
    let chunk_med = median(chunk_err.clone());
    let summary = format!(
        "speed {speed}: TTFT error (client - engine) median {ttft_med:.2} ms (min {:.2}, max {:.2}); \
         TPOT |error| median {tpot_med:.3} ms; chunk offset |error| median {chunk_med:.2} ms (virtual)",
        ttft_err.iter().cloned().fold(f64::INFINITY, f64::min),
        ttft_err.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    eprintln!("{summary}");
    // The hard property: the client never sees a token before the engine made it (0.1 ms
    // of wall time for rounding).
    assert!(ttft_err.iter().all(|&e| e > -0.1 * speed), "{summary}");
    // Stated tolerance, in wall time (virtual = wall × speed), against the 40 ms wall token
    // gap: at the median the first token is seen less than half a gap late, and each
    // chunk's offset from the first is off by less than half a gap (a client that stamped a
    // chunk with its neighbour's arrival, or the first token one chunk late, fails; so does
    // a server paced at the wrong speed); TPOT agrees within 1 ms of wall time per token
    // (2.5 % of the gap: a client whose clock ran off by more fails).
    let gap_ms = 40.0;
    let wall = |virtual_ms: f64| virtual_ms / speed;
    assert!(wall(ttft_med) < gap_ms / 2.0, "TTFT: {summary}");
    assert!(wall(chunk_med) < gap_ms / 2.0, "chunk offsets: {summary}");
    assert!(wall(tpot_med) < 0.025 * gap_ms, "TPOT: {summary}");
}

/// A reasoning model over chat: every `delta.reasoning` chunk is a token (the seed's bug was
/// ignoring them); multi-token chunks get their size from the continuous usage.
#[test]
fn chat_reasoning_deltas_and_multi_token_chunks_are_counted() {
    for (field, continuous) in [
        (DeltaField::Reasoning, true),
        (DeltaField::ReasoningContent, true),
        (DeltaField::Content, false),
    ] {
        let server = start(
            TestEngine::new(30, 5, 3),
            20.0,
            ServeOptions {
                delta_field: field,
                ..ServeOptions::default()
            },
        );
        let mut client = client_for(&server, Endpoint::Chat, continuous);
        let recs = run(&mut client, &work(6, 16, 10), 1, 6);
        let stats = server.stats();
        for r in &recs {
            assert!(r.outcome.is_success(), "{field:?}: {:?}", r.outcome);
            let sizes: Vec<u32> = r.chunks.iter().map(|c| c.tokens).collect();
            if continuous {
                assert_eq!(sizes, [3, 3, 3, 1], "{field:?}");
            } else {
                assert_eq!(sizes, [1, 1, 1, 1], "without usage each chunk counts 1");
            }
            assert_eq!(r.usage_output_tokens, Some(10));
            assert_eq!(r.output_tokens(), 10);
        }
        assert_eq!(stats.token_chunks_sent, 6 * 4);
        assert_eq!(stats.tokens_sent, 60);
    }
}

#[test]
fn injected_failures_become_failed_records_with_their_reason() {
    // (fault, ids failing with cap 1, kind, message part, chunks recorded by failed requests)
    let cases = [
        (
            "500:3",
            vec![2, 5, 8],
            ErrorKind::HttpStatus,
            "HTTP 500 Internal Server Error: injected fault",
            0,
        ),
        (
            "cut:4:2",
            vec![3, 7],
            ErrorKind::StreamCut,
            "stream cut after 2 token chunks",
            2,
        ),
        (
            "error:4:1",
            vec![3, 7],
            ErrorKind::ServerError,
            "injected fault: error after 1 chunks",
            1,
        ),
    ];
    for (fault, failing, kind, needle, chunks) in cases {
        let server = start(
            TestEngine::new(10, 2, 1),
            10.0,
            ServeOptions {
                fault: Some(fault.parse::<Fault>().unwrap()),
                ..ServeOptions::default()
            },
        );
        let mut client = client_for(&server, Endpoint::Completions, true);
        let recs = run(&mut client, &work(9, 8, 6), 0, 1);
        for r in &recs {
            match error_of(r) {
                Some((k, m)) => {
                    assert!(
                        failing.contains(&r.id),
                        "{fault}: unexpected failure {}: {m}",
                        r.id
                    );
                    assert_eq!(k, kind, "{fault}: {m}");
                    assert!(m.contains(needle), "{fault}: {m}");
                    assert_eq!(r.chunks.len(), chunks, "{fault}");
                    assert!(r.ended_at.is_some());
                }
                None => {
                    assert!(!failing.contains(&r.id), "{fault}: {} should fail", r.id);
                    assert_eq!(r.client_output_tokens(), 6);
                }
            }
        }
        let stats = server.stats();
        assert_eq!(stats.injected_faults, failing.len() as u64, "{fault}");
        assert_eq!(stats.completed, 9 - failing.len() as u64, "{fault}");
    }
}

#[test]
fn engine_rejections_reach_the_client_as_in_stream_errors() {
    let mut engine = TestEngine::new(10, 2, 1);
    engine.max_prompt = 20;
    let server = start(engine, 10.0, ServeOptions::default());
    let mut client = client_for(&server, Endpoint::Chat, true);
    let mut items = work(2, 8, 4);
    items[1].prompt_tokens = 50;
    let recs = run(&mut client, &items, 0, 2);
    assert!(recs[0].outcome.is_success());
    assert_eq!(
        error_of(&recs[1]),
        Some((ErrorKind::ServerError, "prompt of 50 tokens is too long"))
    );
    assert_eq!(server.stats().failed, 1);
}

#[test]
fn timeouts_and_refused_connections_fail_with_their_kind() {
    // The first token after 100 ms, the second after 2.1 s, against a 1 s limit: 900 ms of
    // slack on each side, so a starved thread cannot move a token across the limit.
    let server = start(TestEngine::new(100, 2000, 1), 1.0, ServeOptions::default());
    let mut cfg = HttpConfig::new(format!("http://{}/v1", server.local_addr()));
    cfg.request_timeout = Some(Duration::from_millis(1000));
    let mut client = HttpEngine::new(cfg).unwrap();
    let recs = run(&mut client, &work(1, 4, 20), 0, 1);
    let (kind, msg) = error_of(&recs[0]).unwrap();
    assert_eq!(kind, ErrorKind::Timeout, "{msg}");
    assert_eq!(
        recs[0].chunks.len(),
        1,
        "the first token arrived after 100 ms"
    );
    // The server notices the client is gone and frees the slot.
    eventually(|| server.stats().cancelled > 0);
    assert_eq!(server.stats().cancelled, 1);

    // Nothing listens on a port we just released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut client = HttpEngine::new(HttpConfig::new(format!("http://127.0.0.1:{port}"))).unwrap();
    let recs = run(&mut client, &work(2, 4, 4), 0, 2);
    for r in &recs {
        let (kind, msg) = error_of(r).unwrap();
        assert_eq!(kind, ErrorKind::Connect, "{msg}");
        assert!(msg.contains("connect"), "{msg}");
    }
}

/// One raw HTTP/1.1 exchange with `Connection: close`.
fn raw(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String, String) {
    raw_bytes(addr, method, path, body.as_bytes())
}

/// [`raw`] with a body that need not be UTF-8; head and body go out in one write.
fn raw_bytes(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    s.write_all(&req).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

#[test]
fn malformed_requests_get_4xx_json_errors() {
    let server = start(TestEngine::new(10, 2, 1), 10.0, ServeOptions::default());
    let addr = server.local_addr();
    let cases = [
        ("POST", "/v1/completions", "{not json", 400, "invalid JSON"),
        (
            "POST",
            "/v1/completions",
            r#"{"max_tokens":4}"#,
            400,
            "`prompt` is required",
        ),
        (
            "POST",
            "/v1/completions",
            r#"{"prompt":"hi","max_tokens":-1}"#,
            400,
            "positive integer",
        ),
        (
            "POST",
            "/v1/chat/completions",
            r#"{"messages":"hi"}"#,
            400,
            "non-empty array",
        ),
        (
            "POST",
            "/v1/chat/completions",
            r#"{"model":"other","messages":[{"role":"user","content":"hi"}]}"#,
            404,
            "does not exist",
        ),
        ("GET", "/v1/completions", "", 405, "method not allowed"),
        ("POST", "/v2/anything", "{}", 404, "no route"),
    ];
    for (method, path, body, status, needle) in cases {
        let (s, head, text) = raw(addr, method, path, body);
        assert_eq!(s, status, "{path} {body}: {text}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{body}: {msg}");
        assert!(v["error"]["type"].is_string());
        assert_eq!(v["error"]["code"], status);
    }
    assert_eq!(server.stats().rejected, cases.len() as u64);
    assert_eq!(server.stats().requests, 0);

    // The valid control and non-streaming routes answer too.
    let (s, _, _) = raw(addr, "GET", "/health", "");
    assert_eq!(s, 200);
    let (s, _, text) = raw(addr, "GET", "/v1/models", "");
    assert_eq!(s, 200);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["data"][0]["id"], "servebench-sim");
    let (s, _, text) = raw(
        addr,
        "POST",
        "/v1/completions",
        r#"{"prompt":"one two three","max_tokens":5}"#,
    );
    assert_eq!(s, 200, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["usage"]["prompt_tokens"], 3);
    assert_eq!(v["usage"]["completion_tokens"], 5);
    assert_eq!(
        v["choices"][0]["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        5
    );
    assert_eq!(v["choices"][0]["finish_reason"], "length");
}

#[test]
fn the_api_key_is_sent_as_a_bearer_token_and_required_by_the_server() {
    let server = start(
        TestEngine::new(10, 2, 1),
        10.0,
        ServeOptions {
            api_key: Some("sk-loop".into()),
            ..ServeOptions::default()
        },
    );
    let with_key = |key: Option<&str>| {
        let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
        cfg.api_key = key.map(str::to_string);
        cfg.model = Some("servebench-sim".into());
        HttpEngine::new(cfg).unwrap()
    };
    // The key: discovery and streams work.
    let mut client = with_key(Some("sk-loop"));
    assert_eq!(client.list_models().unwrap(), ["servebench-sim"]);
    let recs = run(&mut client, &work(3, 8, 4), 0, 3);
    assert!(recs.iter().all(|r| r.outcome.is_success()), "{recs:?}");
    // No key or a wrong one: 401 on discovery and on every request.
    for key in [None, Some("sk-other")] {
        let mut client = with_key(key);
        let e = client.list_models().unwrap_err().to_string();
        assert!(e.contains("401"), "{key:?}: {e}");
        let recs = run(&mut client, &work(2, 8, 4), 0, 2);
        for r in &recs {
            let (kind, msg) = error_of(r).expect("401");
            assert_eq!(kind, ErrorKind::HttpStatus, "{msg}");
            assert!(msg.starts_with("HTTP 401"), "{msg}");
            assert!(msg.contains("API key"), "{msg}");
        }
    }
    let stats = server.stats();
    assert_eq!((stats.completed, stats.requests), (3, 3));
    assert_eq!(stats.rejected, 2 * 3);
    // /health and /metrics need no key.
    assert_eq!(raw(server.local_addr(), "GET", "/health", "").0, 200);
    let (s, _, text) = raw(server.local_addr(), "GET", "/metrics", "");
    assert_eq!(s, 200);
    assert!(text.contains("servebench_completed 3\n"), "{text}");
    assert!(text.contains("servebench_open_streams 0\n"), "{text}");
}

#[test]
fn a_disconnecting_client_frees_its_slot() {
    // 1000 tokens at 20 ms: 20 s of wall time if nobody cancels.
    let server = start(TestEngine::new(10, 20, 1), 1.0, ServeOptions::default());
    let addr = server.local_addr();
    let mut s = TcpStream::connect(addr).unwrap();
    let body = r#"{"prompt":"a b c","max_tokens":1000,"stream":true}"#;
    write!(
        s,
        "POST /v1/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut buf = [0u8; 4096];
    let mut seen = String::new();
    while seen.matches("data: ").count() < 3 {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0);
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("text/event-stream"));
    assert_eq!(server.stats().open_streams, 1);
    drop(s);
    eventually(|| server.stats().cancelled > 0);
    let stats = server.stats();
    assert_eq!(stats.cancelled, 1);
    assert_eq!(stats.open_streams, 0);
    assert_eq!(stats.completed, 0);
    let t = timeline_of(&server, 1);
    assert!(matches!(t[0].record.outcome, Outcome::Incomplete { .. }));
}

fn assert_json_error(status: u16, text: &str, needle: &str) {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains(needle), "{msg}");
    assert_eq!(v["error"]["code"], status);
}

/// Hostile clients get a 4xx JSON error, or are bounded: an oversized body, a huge or
/// ill-typed `max_tokens`, bytes that are not UTF-8, more connections than the cap, and
/// connections that never send a request.
#[test]
fn hostile_clients_get_4xx_or_are_bounded() {
    let header_timeout = Duration::from_millis(500);
    let server = start(
        TestEngine::new(10, 2, 1),
        10.0,
        ServeOptions {
            max_body_bytes: 1024,
            max_connections: 4,
            header_read_timeout: header_timeout,
            ..ServeOptions::default()
        },
    );
    let addr = server.local_addr();
    let big = format!(r#"{{"prompt":"{}"}}"#, "a ".repeat(600));
    let (s, _, text) = raw(addr, "POST", "/v1/completions", &big);
    assert_eq!(s, 413, "{text}");
    assert_json_error(413, &text, "over 1024 bytes");
    for (body, needle) in [
        (r#"{"prompt":"a","max_tokens":1000000000000000}"#, "limit"),
        (
            r#"{"prompt":"a","max_tokens":18446744073709551615}"#,
            "limit",
        ),
        (r#"{"prompt":"a","max_tokens":-3}"#, "positive integer"),
        (r#"{"prompt":"a","max_tokens":{"n":1}}"#, "positive integer"),
        (r#"{"prompt":{"a":1}}"#, "`prompt` must be"),
    ] {
        let (s, _, text) = raw(addr, "POST", "/v1/completions", body);
        assert_eq!(s, 400, "{body}: {text}");
        assert_json_error(400, &text, needle);
    }
    let (s, _, text) = raw_bytes(addr, "POST", "/v1/completions", b"{\"prompt\":\"\xff\"}");
    assert_eq!(s, 400, "{text}");
    assert_json_error(400, &text, "invalid JSON");
    assert_eq!(server.stats().requests, 0);

    // Four idle connections take every slot; a fifth request waits until the server drops
    // them for not sending a request head, then it is served.
    let t0 = Instant::now();
    let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let (s, _, text) = raw(
        addr,
        "POST",
        "/v1/completions",
        r#"{"prompt":"a b","max_tokens":3}"#,
    );
    let waited = t0.elapsed();
    assert_eq!(s, 200, "{text}");
    // Lower bound only (load can only make it later): no slot frees before the timeout.
    assert!(waited >= header_timeout, "{waited:?}");
    for mut c in idle {
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut rest = Vec::new();
        // The server closed it: EOF (or a reset), not a read timeout.
        match c.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        }
    }
    assert_eq!(server.stats().requests, 1);
    assert_eq!(server.stats().completed, 1);
}

/// A hostile server on 127.0.0.1: answers one connection per body, in order, with a 200
/// `text/event-stream` response carrying that body, then closes the connection.
fn hostile_server(bodies: Vec<Vec<u8>>) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        for body in bodies {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
            // Read the request head, then its Content-Length body.
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            let head_end = loop {
                if let Some(i) = req.windows(4).position(|w| w == b"\r\n\r\n") {
                    break i + 4;
                }
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            };
            let head = String::from_utf8_lossy(&req[..head_end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while req.len() < head_end + len {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
            );
            // The client may hang up early (that is the point): ignore write errors.
            let _ = s.write_all(&body);
        }
    });
    (addr, handle)
}

#[test]
fn a_hostile_server_gives_failed_records_not_a_panic_or_unbounded_memory() {
    let mut endless_line = b"data: ".to_vec();
    endless_line.resize(servebench::http::DEFAULT_MAX_LINE + 1024, b'a');
    // Data lines that never end their event: 1 MiB each, past the event limit.
    let mut endless_event = Vec::new();
    let mut line = b"data: ".to_vec();
    line.resize(1 << 20, b'b');
    line.push(b'\n');
    for _ in 0..(servebench::http::DEFAULT_MAX_EVENT >> 20) + 2 {
        endless_event.extend_from_slice(&line);
    }
    let bodies = vec![
        endless_line,
        endless_event,
        b"data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {not json\n\n".to_vec(),
        // Usage that decreases, then jumps to 10^15 and u64::MAX: counted, bounded.
        format!(
            "data: {{\"choices\":[{{\"text\":\"a\"}}],\"usage\":{{\"completion_tokens\":5}}}}\n\n\
             data: {{\"choices\":[{{\"text\":\"b\"}}],\"usage\":{{\"completion_tokens\":2}}}}\n\n\
             data: {{\"choices\":[{{\"text\":\"c\"}}],\"usage\":{{\"completion_tokens\":1000000000000000}}}}\n\n\
             data: {{\"choices\":[{{\"text\":\"d\"}}],\"usage\":{{\"completion_tokens\":{}}}}}\n\n\
             data: [DONE]\n\n",
            u64::MAX
        )
        .into_bytes(),
    ];
    let n = bodies.len();
    let (addr, server) = hostile_server(bodies);
    let mut cfg = HttpConfig::new(format!("http://{addr}"));
    cfg.model = Some("m".into());
    cfg.request_timeout = Some(Duration::from_secs(60));
    let mut client = HttpEngine::new(cfg).unwrap();
    let recs = run(&mut client, &work(n, 4, 4), 0, 1);
    assert_eq!(recs.len(), n);
    let (kind, msg) = error_of(&recs[0]).unwrap();
    assert_eq!(kind, ErrorKind::Protocol, "{msg}");
    assert!(msg.contains("SSE line longer"), "{msg}");
    let (kind, msg) = error_of(&recs[1]).unwrap();
    assert_eq!(kind, ErrorKind::Protocol, "{msg}");
    assert!(msg.contains("SSE event data longer"), "{msg}");
    let (kind, msg) = error_of(&recs[2]).unwrap();
    assert_eq!(kind, ErrorKind::Protocol, "{msg}");
    assert!(msg.contains("bad SSE data"), "{msg}");
    let r = &recs[3];
    assert!(r.outcome.is_success(), "{:?}", r.outcome);
    let tokens: Vec<u32> = r.chunks.iter().map(|c| c.tokens).collect();
    assert_eq!(tokens, [5, 1, u32::MAX, u32::MAX]);
    assert_eq!(r.usage_output_tokens, Some(u64::MAX));
    server.join().unwrap();
}
