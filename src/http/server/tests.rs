//! Unit tests of the server: request validation, the API-key check, Prometheus text,
//! faults and startup errors.

use std::net::SocketAddr;
use std::time::Duration;

use hyper::StatusCode;

use super::openai::{parse_request, ApiError, Parsed};
use super::prometheus::metrics_text;
use super::routes::authorized;
use super::*;
use crate::engine::{EngineEvent, EngineRequest};
use crate::http::Endpoint;

fn opts() -> ServeOptions {
    ServeOptions {
        max_model_len: Some(100),
        ..ServeOptions::default()
    }
}

fn parse(body: &str, ep: Endpoint) -> Result<Parsed, (u16, String)> {
    parse_request(body.as_bytes(), ep, &opts()).map_err(|ApiError(s, m)| (s.as_u16(), m))
}

#[test]
fn valid_requests() {
    let p = parse(
        r#"{"model":"servebench-sim","prompt":"one two three","max_tokens":5,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"ignore_eos":true}"#,
        Endpoint::Completions,
    )
    .unwrap();
    assert_eq!(
        p,
        Parsed {
            prompt_text: Some("one two three".into()),
            prompt_tokens: 3,
            max_tokens: 5,
            stream: true,
            include_usage: true,
            continuous_usage: true,
            ignore_eos: true,
            image_patches: Vec::new(),
            tool: None,
            response_schema: None,
        }
    );
    let p = parse(r#"{"prompt":[1,2,3,4]}"#, Endpoint::Completions).unwrap();
    assert_eq!((p.prompt_tokens, p.max_tokens, p.stream), (4, 16, false));
    let p = parse(
        r#"{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi there"}]}],"max_completion_tokens":9,"max_tokens":3}"#,
        Endpoint::Chat,
    )
    .unwrap();
    assert_eq!((p.prompt_tokens, p.max_tokens), (4, 9));
    assert_eq!(p.prompt_text.as_deref(), Some("be brief hi there"));
}

/// Images in each API's shape count their vision tokens (Qwen3.5's preprocessor: a 256 x
/// 256 PNG becomes 16 x 16 patches, 8 x 8 tokens and 2 markers); the Responses and
/// Messages APIs read their own fields.
#[test]
fn images_and_the_other_generation_apis_parse() {
    use base64::prelude::{Engine as _, BASE64_STANDARD};
    let png = crate::driver::images::png_image(crate::driver::images::ImageSize::new(256, 256), 1);
    let data = BASE64_STANDARD.encode(&png);
    let chat = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"type":"text","text":"what is it"}},{{"type":"image_url","image_url":{{"url":"data:image/png;base64,{data}"}}}}]}}]}}"#
    );
    let p = parse(&chat, Endpoint::Chat).unwrap();
    assert_eq!(p.prompt_tokens, 3 + 8 * 8 + 2);
    assert_eq!(p.image_patches, vec![16 * 16]);
    let responses = format!(
        r#"{{"input":[{{"role":"user","content":[{{"type":"input_text","text":"what is it"}},{{"type":"input_image","image_url":"data:image/png;base64,{data}"}}]}}],"max_output_tokens":7}}"#
    );
    let p = parse(&responses, Endpoint::Responses).unwrap();
    assert_eq!((p.prompt_tokens, p.max_tokens), (3 + 66, 7));
    let messages = format!(
        r#"{{"system":"be brief","messages":[{{"role":"user","content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}},{{"type":"text","text":"what"}}]}}],"max_tokens":5}}"#
    );
    let p = parse(&messages, Endpoint::Messages).unwrap();
    assert_eq!((p.prompt_tokens, p.max_tokens), (2 + 66 + 1, 5));
    for (body, endpoint, want) in [
        (
            r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}"#,
            Endpoint::Chat,
            "data:",
        ),
        (
            r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}"#,
            Endpoint::Chat,
            "neither a PNG",
        ),
        (
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
            Endpoint::Messages,
            "`max_tokens` is required",
        ),
        (r#"{"input":7}"#, Endpoint::Responses, "`input`"),
    ] {
        let (status, e) = parse(body, endpoint).unwrap_err();
        assert!(status == 400 && e.contains(want), "{body}: {e}");
    }
}

#[test]
fn malformed_requests_are_4xx() {
    let cases = [
        ("not json", Endpoint::Completions, 400, "invalid JSON"),
        ("[1]", Endpoint::Completions, 400, "JSON object"),
        (
            r#"{"max_tokens":3}"#,
            Endpoint::Completions,
            400,
            "`prompt` is required",
        ),
        (
            r#"{"prompt":"a","max_tokens":0}"#,
            Endpoint::Completions,
            400,
            "positive integer",
        ),
        (
            r#"{"prompt":"a","max_tokens":"3"}"#,
            Endpoint::Completions,
            400,
            "positive integer",
        ),
        (
            r#"{"prompt":"a","stream":"yes"}"#,
            Endpoint::Completions,
            400,
            "boolean",
        ),
        (r#"{"prompt":"  "}"#, Endpoint::Completions, 400, "empty"),
        (
            r#"{"prompt":["a","b"]}"#,
            Endpoint::Completions,
            400,
            "batched",
        ),
        (
            r#"{"prompt":"a","n":2}"#,
            Endpoint::Completions,
            400,
            "n = 1",
        ),
        (
            r#"{"prompt":"a","model":"gpt-9"}"#,
            Endpoint::Completions,
            404,
            "does not exist",
        ),
        (
            r#"{"prompt":"a","max_tokens":100}"#,
            Endpoint::Completions,
            400,
            "maximum context length is 100",
        ),
        (r#"{"messages":[]}"#, Endpoint::Chat, 400, "non-empty array"),
        (
            r#"{"messages":[{"content":"x"}]}"#,
            Endpoint::Chat,
            400,
            "role",
        ),
        (
            r#"{"messages":[{"role":"user","content":5}]}"#,
            Endpoint::Chat,
            400,
            "content",
        ),
    ];
    for (body, ep, status, needle) in cases {
        let (s, m) = parse(body, ep).unwrap_err();
        assert_eq!(s, status, "{body}");
        assert!(m.contains(needle), "{body}: {m}");
    }
}

#[test]
fn hostile_token_counts_are_4xx_not_overflow() {
    // prompt + max_tokens past u64::MAX must not wrap under the context-length check.
    let max = u64::MAX;
    let (s, m) = parse(
        &format!(r#"{{"prompt":"a b","max_tokens":{max}}}"#),
        Endpoint::Completions,
    )
    .unwrap_err();
    assert_eq!(s, 400);
    assert!(m.contains("maximum context length is 100"), "{m}");
    // Without a context length, a completion beyond MAX_COMPLETION_TOKENS is refused
    // (the server would hold its whole text for `stream: false`).
    let open = ServeOptions::default();
    let ok = format!(r#"{{"prompt":"a","max_tokens":{MAX_COMPLETION_TOKENS}}}"#);
    let p = parse_request(ok.as_bytes(), Endpoint::Completions, &open)
        .map_err(|e| e.1)
        .unwrap();
    assert_eq!(p.max_tokens, MAX_COMPLETION_TOKENS);
    for big in [MAX_COMPLETION_TOKENS + 1, 1_000_000_000_000_000] {
        let body = format!(r#"{{"prompt":"a","max_tokens":{big}}}"#);
        let ApiError(s, m) =
            parse_request(body.as_bytes(), Endpoint::Completions, &open).unwrap_err();
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert!(m.contains(&big.to_string()), "{m}");
    }
    // Wrong types and signs, and bytes that are not UTF-8.
    for body in [
        r#"{"prompt":"a","max_tokens":-5}"#,
        r#"{"prompt":"a","max_tokens":2.5}"#,
        r#"{"prompt":"a","max_tokens":1e30}"#,
        r#"{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":[1]}"#,
        r#"{"prompt":"a","max_tokens":18446744073709551616}"#,
    ] {
        let ep = if body.contains("completion_tokens") {
            Endpoint::Chat
        } else {
            Endpoint::Completions
        };
        assert_eq!(parse(body, ep).map(|_| ()).unwrap_err().0, 400, "{body}");
    }
    let ApiError(s, m) =
        parse_request(b"{\"prompt\":\"\xff\xfe\"}", Endpoint::Completions, &open).unwrap_err();
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(m.contains("invalid JSON"), "{m}");
}

#[test]
fn api_key_check() {
    let mut h = hyper::HeaderMap::new();
    assert!(authorized(&h, None));
    assert!(!authorized(&h, Some("k1")));
    h.insert(
        hyper::header::AUTHORIZATION,
        hyper::header::HeaderValue::from_static("Bearer k2"),
    );
    assert!(!authorized(&h, Some("k1")));
    assert!(authorized(&h, Some("k2")));
    h.insert(
        hyper::header::AUTHORIZATION,
        hyper::header::HeaderValue::from_static("bearer k1"),
    );
    assert!(authorized(&h, Some("k1")));
    h.insert(
        hyper::header::AUTHORIZATION,
        hyper::header::HeaderValue::from_static("Basic k1"),
    );
    assert!(!authorized(&h, Some("k1")));
}

#[test]
fn metrics_are_prometheus_text() {
    let text = metrics_text(&ServeStats {
        open_streams: 7,
        requests: 3,
        ..ServeStats::default()
    });
    assert!(text.contains("# TYPE servebench_open_streams gauge\nservebench_open_streams 7\n"));
    assert!(text.contains("servebench_requests 3\n"));
}

#[test]
fn fault_syntax() {
    assert_eq!(
        "500:7".parse::<Fault>().unwrap(),
        Fault {
            every: 7,
            kind: FaultKind::Status500
        }
    );
    assert_eq!(
        "error:2:0".parse::<Fault>().unwrap().kind,
        FaultKind::StreamError { after_chunks: 0 }
    );
    for bad in ["", "500", "500:x", "cut:3", "cut:3:x", "boom:1", "500:1:2"] {
        assert!(bad.parse::<Fault>().is_err(), "{bad}");
    }
}

#[test]
fn bad_speed_is_refused() {
    struct Idle;
    impl Engine for Idle {
        fn now(&self) -> Duration {
            Duration::ZERO
        }
        fn submit(&mut self, _: EngineRequest) -> Result<(), crate::engine::EngineError> {
            Ok(())
        }
        fn advance(
            &mut self,
            _: Option<Duration>,
            _: &mut Vec<EngineEvent>,
        ) -> Result<(), crate::engine::EngineError> {
            Ok(())
        }
        fn in_flight(&self) -> usize {
            0
        }
    }
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            spawn(Idle, addr, s, ServeOptions::default()),
            Err(ServeError::BadSpeed(_))
        ));
    }
}

/// An engine that streams one chunk to each request, then fails on its next step.
struct FailsAfterOneChunk {
    now: Duration,
    waiting: Vec<u64>,
    failed: bool,
}

impl Engine for FailsAfterOneChunk {
    fn now(&self) -> Duration {
        self.now
    }
    fn submit(&mut self, r: EngineRequest) -> Result<(), crate::engine::EngineError> {
        self.waiting.push(r.id);
        Ok(())
    }
    fn advance(
        &mut self,
        until: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), crate::engine::EngineError> {
        if self.waiting.is_empty() {
            self.now = until.unwrap_or(self.now);
            return Ok(());
        }
        if self.failed {
            return Err(crate::engine::EngineError::Fatal(
                "GPU fell off the bus".into(),
            ));
        }
        for id in self.waiting.drain(..) {
            events.push(EngineEvent::Chunk {
                id,
                at: self.now,
                tokens: 1,
            });
        }
        self.failed = true;
        // Keep the request "waiting": the next step fails.
        self.waiting.push(u64::MAX);
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.waiting.len()
    }
}

/// One streaming completion over a raw socket: the whole response text.
fn stream_once(addr: SocketAddr) -> String {
    use std::io::{Read, Write};
    let body = r#"{"model":"servebench-sim","prompt":"one two","max_tokens":4,"stream":true}"#;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn an_engine_failure_ends_open_streams_and_later_requests_with_its_reason() {
    let engine = FailsAfterOneChunk {
        now: Duration::ZERO,
        waiting: Vec::new(),
        failed: false,
    };
    let server = spawn(
        engine,
        "127.0.0.1:0".parse().unwrap(),
        1.0,
        ServeOptions::default(),
    )
    .unwrap();
    let first = stream_once(server.local_addr());
    assert!(
        first.contains("lorem"),
        "the chunk before the failure: {first}"
    );
    assert!(
        first.contains("engine failure: GPU fell off the bus"),
        "the open stream ends with the reason: {first}"
    );
    let later = stream_once(server.local_addr());
    assert!(
        later.contains("engine failure: GPU fell off the bus"),
        "a later request gets the reason too: {later}"
    );
    server.shutdown();
}
