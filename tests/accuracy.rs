//! `servebench accuracy`: client files joined to the example server's timeline. On a live
//! servebench run against the real example server process (`h200_server --timeline`), and
//! on committed aiperf and guidellm files made against one server session together with
//! that session's timeline (`tests/fixtures/accuracy/`, see the fixtures README).
#![cfg(all(feature = "http", feature = "cli", unix))]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use servebench::accuracy::{measure_files, ClientAccuracy};
use servebench::http::timeline;

mod common;
use common::example_server::Served;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");
const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/accuracy/");

fn fix(name: &str) -> PathBuf {
    PathBuf::from(FIX).join(name)
}

fn by_tool(all: &[ClientAccuracy], tool: &str) -> ClientAccuracy {
    all.iter().find(|a| a.tool == tool).unwrap().clone()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn real_aiperf_and_guidellm_files_join_fully_to_their_sessions_timeline() {
    let truth = timeline::read_file(&fix("timeline.jsonl")).unwrap();
    let all = measure_files(
        &fix("timeline.jsonl"),
        &[&fix("aiperf_profile_export.jsonl"), &fix("guidellm.json")],
    )
    .unwrap();
    assert_eq!(all.len(), 2);
    let aiperf = by_tool(&all, "aiperf");
    let guidellm = by_tool(&all, "guidellm");
    // Every request of each client is in the timeline, and the timeline holds nothing else.
    assert_eq!(
        (aiperf.requests, aiperf.matched, aiperf.unmatched),
        (16, 16, 0)
    );
    assert_eq!(
        (guidellm.requests, guidellm.matched, guidellm.unmatched),
        (12, 12, 0)
    );
    assert_eq!(truth.len(), 28);
    assert_eq!(aiperf.truth_unmatched, 12);
    assert_eq!(guidellm.truth_unmatched, 16);
    for a in [&aiperf, &guidellm] {
        assert_eq!((a.ambiguous, a.failed), (0, 0), "{a:?}");
        let ttft = a.ttft.unwrap();
        assert_eq!(ttft.count, a.matched);
        // A client sends before the server receives and reads after the server sends:
        // its TTFT and E2E can only be longer.
        assert!(ttft.min_ms > -0.5, "{a:?}");
        assert!(a.e2e.unwrap().min_ms > -0.5, "{a:?}");
        assert!(ttft.median_ms <= ttft.p99_ms && ttft.p99_ms <= ttft.max_ms);
        // 32 output tokens streamed one per chunk on both sides: 31 gaps per request.
        assert_eq!(a.itl.unwrap().count, 31 * a.matched, "{a:?}");
        assert_eq!(a.itl_skipped, 0);
        assert_eq!(a.throughput.truth_peak_in_flight, Some(4));
        let t = a.throughput;
        let pct =
            (t.client_output_tok_per_s.unwrap() / t.truth_output_tok_per_s.unwrap() - 1.0) * 100.0;
        assert!((pct - t.output_error_pct.unwrap()).abs() < 1e-9);
    }
    assert_eq!(guidellm.throughput.intended_concurrency, Some(4));
    // The fixture's timeline predates the first chunk's release time: read, not split.
    assert!(aiperf.ttft_server_late.is_none() && aiperf.ttft_after_release.is_none());

    // The same join done by hand from aiperf's own JSON: x_request_id → the timeline's
    // request id, aiperf's time_to_first_token against first token − arrival.
    let arrival: HashMap<&str, f64> = truth
        .iter()
        .map(|e| {
            (
                e.request_id.as_str(),
                (e.first_token_unix_s.unwrap() - e.arrival_unix_s) * 1e3,
            )
        })
        .collect();
    let text = std::fs::read_to_string(fix("aiperf_profile_export.jsonl")).unwrap();
    let errs: Vec<f64> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let id = v["metadata"]["x_request_id"].as_str().unwrap();
            v["metrics"]["time_to_first_token"]["value"]
                .as_f64()
                .unwrap()
                - arrival[id]
        })
        .collect();
    assert_eq!(errs.len(), 16);
    let by_hand = median(errs);
    let ours = aiperf.ttft.unwrap().median_ms;
    assert!((by_hand - ours).abs() < 1e-3, "{by_hand} vs {ours}");

    // guidellm is joined by the response id it recorded (it sends no x-request-id).
    let g: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fix("guidellm.json")).unwrap()).unwrap();
    let first = &g["benchmarks"][0]["requests"]["successful"][0];
    let rid = first["response_id"].as_str().unwrap();
    assert!(truth
        .iter()
        .any(|e| e.response_id == rid && e.request_id == rid));
}

#[test]
fn bad_inputs_are_refused_naming_the_file() {
    let run = |args: &[&str]| {
        let o = Command::new(BIN)
            .arg("accuracy")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let truth = fix("timeline.jsonl");
    let truth = truth.to_str().unwrap();
    // vLLM's --save-detailed lists keep no request id.
    let vllm = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/vllm-0.33/result.json"
    );
    let err = run(&["--truth", truth, vllm]);
    assert!(err.contains("vllm-0.33/result.json"), "{err}");
    assert!(err.contains("keeps no request ids"), "{err}");
    // Aggregates only.
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/guidellm-0.8.1/benchmarks.csv"
    );
    let err = run(&["--truth", truth, csv]);
    assert!(err.contains("benchmarks.csv"), "{err}");
    assert!(err.contains("no per-request records"), "{err}");
    // A truth that is not a timeline: file and line.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "\n{\"request_id\": 3}\n").unwrap();
    let err = run(&["--truth", bad.to_str().unwrap(), csv]);
    assert!(err.contains("bad.jsonl:2: not a timeline entry"), "{err}");
    let missing = dir.path().join("missing.jsonl");
    let err = run(&["--truth", missing.to_str().unwrap(), csv]);
    assert!(err.contains("missing.jsonl"), "{err}");
    std::fs::write(&bad, "").unwrap();
    let err = run(&["--truth", bad.to_str().unwrap(), csv]);
    assert!(err.contains("no request in the timeline"), "{err}");
}

/// A running `h200_server --serve 127.0.0.1:0 --speed 10 --timeline FILE`; SIGTERM writes
/// the file.
fn start_server(timeline: &Path) -> Served {
    Served::start(&[
        std::ffi::OsStr::new("--speed"),
        "10".as_ref(),
        "--timeline".as_ref(),
        timeline.as_os_str(),
    ])
}

fn sigterm_and_wait(server: &mut Served) {
    let pid = server.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_servebench_run_against_the_example_server_matches_its_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let truth = dir.path().join("timeline.jsonl");
    let run_file = dir.path().join("run.json");
    let mut server = start_server(&truth);
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &server.url, "--output"])
        .arg(&run_file)
        .args([
            "--endpoint",
            "chat",
            "--input-tokens",
            "64",
            "--output-tokens",
            "16",
            "--max-requests",
            "24",
            "--max-concurrency",
            "4",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    sigterm_and_wait(&mut server);

    let o = Command::new(BIN)
        .args(["accuracy", "--format", "json", "--truth"])
        .arg(&truth)
        .arg(&run_file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = &v[0];
    assert_eq!(a["tool"], "servebench");
    assert_eq!(
        (
            &a["requests"],
            &a["matched"],
            &a["unmatched"],
            &a["truth_unmatched"]
        ),
        (&24.into(), &24.into(), &0.into(), &0.into())
    );
    let ttft = &a["ttft"];
    assert_eq!(ttft["count"], 24);
    let min = ttft["min_ms"].as_f64().unwrap();
    let med = ttft["median_ms"].as_f64().unwrap();
    // Client time contains server time; on a loaded 2-core machine the client's share
    // stays far below the server's own TTFT scale.
    assert!(min > -0.5 && med >= min, "{ttft}");
    assert!(med < 100.0, "{ttft}");
    // The server's own part: its engine thread releases a chunk at or after producing it.
    let late = &a["ttft_server_late"];
    assert_eq!(late["count"], 24);
    assert!(late["min_ms"].as_f64().unwrap() > -0.05, "{late}");
    assert_eq!(a["ttft_after_release"]["count"], 24);
    // The client's side (after the server's HTTP task wrote the first chunk) is never
    // negative beyond the clocks' rounding: the client cannot see bytes before they exist.
    let wire = &a["ttft_after_write"];
    assert_eq!(wire["count"], 24);
    assert!(wire["min_ms"].as_f64().unwrap() > -0.05, "{wire}");
    // Its two ends on the host's clock: neither can be negative (a request arrives after it
    // is sent, a chunk is read after it is written), and they add up to the whole.
    let (send, recv) = (&a["ttft_send"], &a["ttft_receive"]);
    assert_eq!((&send["count"], &recv["count"]), (&24.into(), &24.into()));
    for side in [send, recv] {
        assert!(side["min_ms"].as_f64().unwrap() > -0.05, "{side}");
    }
    // Per request send + recv = wire with both ends ≥ 0, so neither end exceeds the
    // largest wire time.
    let w = wire["max_ms"].as_f64().unwrap();
    for side in [send, recv] {
        assert!(
            side["max_ms"].as_f64().unwrap() <= w + 0.1,
            "{side} vs wire max {w}"
        );
    }
    // 16 tokens, one per chunk: 15 gaps per request.
    assert_eq!(a["itl"]["count"], 15 * 24);
    let t = &a["throughput"];
    assert_eq!(t["intended_concurrency"], 4);
    let peak = t["truth_peak_in_flight"].as_u64().unwrap();
    assert!((1..=4).contains(&peak), "{t}");

    // Text: the block and the summary row.
    let o = Command::new(BIN)
        .args(["accuracy", "--truth"])
        .arg(&truth)
        .arg(&run_file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("requests 24, matched 24, unmatched 0"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("servebench ")), "{text}");

    // Against another session's timeline nothing matches, and the report says so.
    let other = measure_files(&fix("timeline.jsonl"), &[&run_file]).unwrap();
    assert_eq!((other[0].matched, other[0].unmatched), (0, 24));
    assert_eq!(other[0].unmatched_examples[0], "servebench-0");
    assert!(other[0].ttft.is_none());
}
