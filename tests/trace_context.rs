//! Every request a `bench` run sends carries a W3C `traceparent` in the run's trace: a fake
//! server on loopback captures the headers, and each one's trace id is the run file's
//! `trace_id` label and its span id the one `TraceId::span_of` gives for the request's id
//! (from its `x-request-id`); `--no-trace-context` sends none.
#![cfg(all(feature = "http", feature = "cli"))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

use servebench::http::trace::TraceId;
use servebench::runfile::RunFile;

/// The headers of each request a server saw, in order.
type Seen = Arc<Mutex<Vec<Vec<(String, String)>>>>;

/// A server answering every POST with a one-token completions stream; the headers of each
/// POST, lowercased names.
fn fake_server() -> (String, Seen) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut conn) = conn else { continue };
            let keep = Arc::clone(&keep);
            std::thread::spawn(move || loop {
                let mut r = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let post = line.starts_with("POST");
                let mut headers = Vec::new();
                let mut len = 0usize;
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = h.trim_end().split_once(':') {
                        let (k, v) = (k.to_ascii_lowercase(), v.trim().to_string());
                        if k == "content-length" {
                            len = v.parse().unwrap_or(0);
                        }
                        headers.push((k, v));
                    }
                }
                let mut body = vec![0; len];
                let _ = r.read_exact(&mut body);
                let answer = if post {
                    keep.lock().unwrap().push(headers);
                    let data = r#"{"id":"c","object":"text_completion","choices":[{"index":0,"text":"hi","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":1}}"#;
                    let sse = format!("data: {data}\n\ndata: [DONE]\n\n");
                    format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse}", sse.len())
                } else {
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_string()
                };
                if conn.write_all(answer.as_bytes()).is_err() {
                    return;
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

fn bench(target: &str, out: &std::path::Path, extra: &[&str]) -> RunFile {
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "bench",
            "--target",
            target,
            "--quiet",
            "--model",
            "m",
            "--no-scrape",
        ])
        .args([
            "--input-tokens",
            "4",
            "--output-tokens",
            "1",
            "--max-requests",
            "5",
        ])
        .arg("--output")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    RunFile::read(out).unwrap()
}

#[test]
fn every_request_carries_the_runs_traceparent() {
    let (target, seen) = fake_server();
    let dir = tempfile::tempdir().unwrap();
    let run = bench(&target, &dir.path().join("run.json"), &[]);
    let trace = TraceId::from_hex(&run.labels["trace_id"]).expect("a trace id label");
    let requests = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(requests.len(), 5);
    for headers in &requests {
        let get = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let id: u64 = get("x-request-id")
            .unwrap()
            .trim_start_matches(servebench::http::client::REQUEST_ID_PREFIX)
            .parse()
            .unwrap();
        assert_eq!(
            get("traceparent"),
            Some(trace.traceparent(id)),
            "request {id}"
        );
    }
    // Off: no header, no label.
    let run = bench(
        &target,
        &dir.path().join("off.json"),
        &["--no-trace-context"],
    );
    assert!(!run.labels.contains_key("trace_id"));
    let requests = std::mem::take(&mut *seen.lock().unwrap());
    assert!(requests
        .iter()
        .all(|h| h.iter().all(|(n, _)| n != "traceparent")));
}
