//! `servebench bench` end to end on loopback (127.0.0.1 only): the CLI against the
//! OpenAI-compatible server serving a deterministic engine in-process.
#![cfg(all(feature = "http", feature = "cli"))]

mod common;

use std::net::SocketAddr;
use std::process::Command;

use common::TestEngine;
use servebench::format::text::{self, Style};
use servebench::http::server::{Fault, ServeOptions};
use servebench::http::spawn;
use servebench::metrics::compute;
use servebench::record::{ErrorKind, Outcome, RequestRecord};
use servebench::result::{BenchmarkResult, Convention};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn server(options: ServeOptions) -> servebench::http::ServerHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    spawn(TestEngine::new(40, 5, 1), addr, 10.0, options).unwrap()
}

fn bench(target: &str, extra: &[&str], out: &std::path::Path) -> (String, String) {
    let o = Command::new(BIN)
        .args(["bench", "--target", target, "--quiet", "--output"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "{stderr}");
    (stdout, stderr)
}

#[derive(serde::Deserialize)]
struct Saved {
    result: BenchmarkResult,
    records: Vec<RequestRecord>,
}

#[test]
fn bench_reports_what_the_server_sent_and_saves_recomputable_records() {
    let srv = server(ServeOptions::default());
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.json");
    let (stdout, _) = bench(
        &target,
        &[
            "--input-tokens",
            "24",
            "--output-tokens",
            "12",
            "--max-requests",
            "20",
            "--rate",
            "200",
            "--max-concurrency",
            "5",
            "--style",
            "vllm",
            "--endpoint",
            "chat",
        ],
        &out,
    );
    let stats = srv.stats();
    let printed = text::parse_block(&stdout).unwrap();
    assert_eq!(printed.successful_requests, Some(20));
    assert_eq!(printed.failed_requests, Some(0));
    assert_eq!(printed.total_output_tokens, Some(stats.tokens_sent));
    assert_eq!(printed.total_input_tokens, Some(20 * 24));
    assert_eq!(stats.completed, 20);

    // The saved records recompute the printed block exactly.
    let saved: Saved = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(saved.records.len(), 20);
    let chunks: usize = saved.records.iter().map(|r| r.chunks.len()).sum();
    assert_eq!(chunks as u64, stats.token_chunks_sent);
    let again = compute(&saved.records, Convention::Vllm);
    assert_eq!(text::render(&again, Style::Vllm) + "\n", stdout);
    assert_eq!(saved.result.successful_requests, Some(20));
    assert_eq!(saved.result.meta.model.as_deref(), Some("servebench-sim"));

    // JSON Lines output.
    let jl = dir.join("run.jsonl");
    bench(
        &target,
        &[
            "--input-tokens",
            "8",
            "--output-tokens",
            "4",
            "--max-requests",
            "6",
        ],
        &jl,
    );
    let recs = servebench::record::read_jsonl_file(&jl).unwrap();
    assert_eq!(recs.len(), 6);
    assert!(recs.iter().all(|r| r.output_tokens() == 4));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_records_injected_failures_with_their_reason() {
    let srv = server(ServeOptions {
        fault: Some("500:4".parse::<Fault>().unwrap()),
        ..ServeOptions::default()
    });
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.jsonl");
    let (stdout, _) = bench(
        &target,
        &[
            "--input-tokens",
            "8",
            "--output-tokens",
            "6",
            "--max-requests",
            "12",
            "--max-concurrency",
            "1",
            "--style",
            "vllm",
        ],
        &out,
    );
    let printed = text::parse_block(&stdout).unwrap();
    assert_eq!(printed.successful_requests, Some(9));
    assert_eq!(printed.failed_requests, Some(3));
    let recs = servebench::record::read_jsonl_file(&out).unwrap();
    let failed: Vec<u64> = recs
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Error { kind, message } => {
                assert_eq!(*kind, ErrorKind::HttpStatus);
                assert!(message.starts_with("HTTP 500"), "{message}");
                Some(r.id)
            }
            _ => None,
        })
        .collect();
    assert_eq!(failed, [3, 7, 11]);
    assert_eq!(srv.stats().injected_faults, 3);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A port on 127.0.0.1 that nothing listens on (just released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn bench_bad_input_exits_1_naming_the_target() {
    let port = closed_port();
    let closed = format!("http://127.0.0.1:{port}");
    let cases: [(Vec<&str>, &str); 5] = [
        // Unreachable, model discovery first.
        (vec!["--profile", "latency"], "Connection refused"),
        // Unreachable with --model: every request fails; that is an error too.
        (
            vec![
                "--profile",
                "latency",
                "--model",
                "m",
                "--max-requests",
                "2",
            ],
            "no request to",
        ),
        (
            vec!["--profile", "latency", "--rate", "1e-300", "--model", "m"],
            "past the clock's range",
        ),
        (
            vec![
                "--input-tokens",
                "1000000000000",
                "--output-tokens",
                "1",
                "--model",
                "m",
            ],
            "workload too large",
        ),
        (
            vec![
                "--profile",
                "latency",
                "--max-requests",
                "100000000000",
                "--model",
                "m",
            ],
            "workload too large",
        ),
    ];
    for (extra, needle) in cases {
        let o = Command::new(BIN)
            .args(["bench", "--quiet", "--target", &closed])
            .args(&extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        if needle == "no request to" || needle == "Connection refused" {
            assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
        }
    }
    // A port out of range is a bad target, not port 80.
    let o = Command::new(BIN)
        .args([
            "bench",
            "--quiet",
            "--profile",
            "latency",
            "--target",
            "http://127.0.0.1:99999",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad target URL `http://127.0.0.1:99999`"),
        "{stderr}"
    );
}

#[test]
fn bench_refuses_bad_arguments() {
    for args in [
        vec!["bench", "--target", "http://127.0.0.1:9"],
        vec![
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--profile",
            "latency",
            "--input-tokens",
            "3",
            "--output-tokens",
            "3",
        ],
        vec![
            "bench",
            "--target",
            "https://127.0.0.1:9",
            "--profile",
            "latency",
        ],
        vec![
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--profile",
            "latency",
            "--rate",
            "0",
        ],
    ] {
        let o = Command::new(BIN).args(&args).output().unwrap();
        // Usage errors (clap) exit 2; values clap accepts but servebench refuses exit 1.
        let want = if args.contains(&"--input-tokens") || !args.contains(&"--profile") {
            2
        } else {
            1
        };
        assert_eq!(o.status.code(), Some(want), "{args:?}");
        assert!(!o.stderr.is_empty());
    }
}
