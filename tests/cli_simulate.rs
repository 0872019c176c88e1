//! `servebench simulate`: the simulator from the CLI with the example's flags — a custom
//! model, GPU, vLLM flags and load print one result JSON; unknown vLLM flags are listed on
//! stderr; bad flags exit 2 (clap) or 1 (a bad value inside `--engine-args`).
#![cfg(all(feature = "cli", feature = "sim"))]

use std::process::Command;

use servebench::result::BenchmarkResult;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

#[test]
fn simulate_prints_the_result_json_and_lists_ignored_flags() {
    let out = Command::new(BIN)
        .args([
            "simulate",
            "--model",
            "qwen3.5-9b",
            "--gpu",
            "h100",
            "--rate",
            "4",
            "--requests",
            "30",
            "--input-tokens",
            "256",
            "--output-tokens",
            "32",
            "--engine-args",
            r#"--max-num-seqs=64 --speculative-config={"method":"mtp","num_speculative_tokens":2} --bogus-flag=1"#,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let r: BenchmarkResult = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.successful_requests, Some(30));
    assert_eq!(r.total_output_tokens, Some(30 * 32));
    assert_eq!(r.meta.model.as_deref(), Some("Qwen/Qwen3.5-9B"));
    assert!(err.contains("(ignored): --bogus-flag=1"), "{err}");
    // 30 requests at 4 req/s: the last arrives at 7.25 s.
    assert!(r.duration_s().unwrap() > 7.25);
}

#[test]
fn bad_flags_are_named() {
    let out = Command::new(BIN)
        .args(["simulate", "--gpu", "h300"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown gpu `h300`"));
    let out = Command::new(BIN)
        .args(["simulate", "--engine-args", "--max-num-seqs=lots"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-num-seqs=lots"));
    let out = Command::new(BIN)
        .args(["simulate", "--rate", "-3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
