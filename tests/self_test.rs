//! The client's ceiling: `servebench self-test` against a zero-compute server (the library's
//! `FixedEngine` with no time to first token, served over HTTP on loopback, as
//! `h200_server --serve ADDR --zero-compute` serves it) finds the highest rate held within
//! its p99 TTFT limit and saves it; `bench` then warns when a run comes within 20 % of
//! that ceiling, and says so when the saved file is not a ceiling.
#![cfg(all(feature = "http", feature = "cli"))]

use std::path::Path;
use std::process::Command;

use servebench::engine::FixedEngine;
use servebench::http::server::{self, ServeOptions};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn zero_compute() -> server::ServerHandle {
    server::spawn(
        FixedEngine::new(0, 0, 1),
        "127.0.0.1:0".parse().unwrap(),
        1.0,
        ServeOptions::default(),
    )
    .unwrap()
}

fn bench(target: &str, ceiling: &Path, rate: &str) -> String {
    let o = Command::new(BIN)
        .env("SERVEBENCH_CLIENT_CEILING", ceiling)
        .args([
            "bench",
            "--target",
            target,
            "--quiet",
            "--input-tokens",
            "8",
        ])
        .args([
            "--output-tokens",
            "4",
            "--max-requests",
            "60",
            "--rate",
            rate,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn self_test_saves_the_ceiling_and_bench_warns_near_it() {
    let s = zero_compute();
    let target = format!("http://{}", s.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ceiling.json");
    // A generous limit: a debug build of the client on a loaded machine.
    let o = Command::new(BIN)
        .args(["self-test", "--target", &target, "--quiet", "--min", "50"])
        .args([
            "--max",
            "400",
            "--probe-seconds",
            "0.5",
            "--p99-ttft",
            "100",
        ])
        .arg("--save")
        .arg(&file)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("Client ceiling: "), "{out}");
    let c: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(c["format"], "servebench-client-ceiling");
    let rate = c["requests_per_s"].as_f64().unwrap();
    assert!((50.0..=400.0).contains(&rate), "{c}");
    assert_eq!(c["events_per_s"].as_f64().unwrap(), rate * 16.0);

    // A run far below a high ceiling: no warning; near a low one: the warning.
    let write = |req_s: f64| {
        std::fs::write(
            &file,
            serde_json::json!({"format": "servebench-client-ceiling",
                "measured_at": "2026-12-08T00:00:00Z", "target": target,
                "requests_per_s": req_s, "events_per_s": req_s * 16.0, "output_tokens": 16,
                "slo": "ttft:p99<=1ms"})
            .to_string(),
        )
        .unwrap();
    };
    write(1e6);
    assert!(!bench(&target, &file, "100").contains("client ceiling"));
    // A ceiling far below the run's load, so that a slow machine still crosses it.
    write(10.0);
    let err = bench(&target, &file, "100");
    assert!(
        err.contains("within 20 % of this machine's client ceiling (10 req/s"),
        "{err}"
    );
    // A file that is not a ceiling is said, not skipped.
    std::fs::write(&file, "{\"format\": \"other\"}").unwrap();
    let err = bench(&target, &file, "100");
    assert!(err.contains("not a client-ceiling file"), "{err}");
}
