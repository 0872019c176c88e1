//! Hostile and corrupt input to the importers, lints and driver: every case gives a typed
//! error or a bounded result, never a panic (integer or `Duration` overflow included).

use servebench::import::vllm;

#[test]
fn vllm_counts_that_overflow_when_added_are_not_a_panic() {
    let json = format!(
        r#"{{"completed": {}, "failed": 1, "duration": 1.0}}"#,
        u64::MAX
    );
    // Either reading is fine; adding the two counts must not overflow.
    let _ = vllm::from_slice(json.as_bytes());
}

#[test]
fn vllm_detailed_times_that_overflow_a_duration_are_an_error() {
    let json = r#"{"completed": 2, "duration": 1.0,
        "start_times": [0.0, 1e19], "ttfts": [0.1, 1e19], "itls": [[], []],
        "latencies": [0.2, 1e19]}"#;
    let err = vllm::from_slice(json.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("ttfts[1]"), "{err}");
    let json = r#"{"completed": 1, "duration": 1.0,
        "start_times": [0.0], "ttfts": [0.1], "itls": [[1e19, 1e19]]}"#;
    let err = vllm::from_slice(json.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("itls[0][1]"), "{err}");
}

fn guidellm_fixture() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/guidellm/constant_rate20.json"
    );
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn guidellm_request_totals_that_overflow_when_added_are_not_a_panic() {
    let mut v = guidellm_fixture();
    let totals = &mut v["benchmarks"][0]["metrics"]["request_totals"];
    totals["errored"] = u64::MAX.into();
    totals["incomplete"] = 1.into();
    let report = servebench::import::guidellm::from_slice(&serde_json::to_vec(&v).unwrap())
        .expect("the counts are read as given");
    let b = &report.benchmarks[0];
    // errored + incomplete saturates rather than wrapping to 0.
    assert_eq!(b.result.failed_requests, Some(u64::MAX));
    assert_eq!(b.counts.reported.unwrap().total(), u64::MAX);
}

#[test]
fn guidellm_window_past_the_duration_range_is_an_error() {
    let mut v = guidellm_fixture();
    let b = &mut v["benchmarks"][0];
    b["start_time"] = 1.8e19.into();
    b["duration"] = 1e18.into();
    b.as_object_mut().unwrap().remove("end_time");
    b["scheduler_metrics"]
        .as_object_mut()
        .unwrap()
        .remove("measure_end_time");
    let err = servebench::import::guidellm::from_slice(&serde_json::to_vec(&v).unwrap())
        .expect_err("a window ending past Duration::MAX");
    assert!(
        err.to_string().contains("$.benchmarks[0].duration"),
        "{err}"
    );
}

#[test]
fn lint_of_counts_that_overflow_when_added_is_not_a_panic() {
    let json = format!(
        r#"{{"completed": {}, "failed": 1, "duration": 1.0}}"#,
        u64::MAX
    );
    let runs = servebench::app::lint_bytes("big.json", json.as_bytes(), &Default::default())
        .expect("a valid vLLM file");
    assert_eq!(runs.len(), 1);
    let r = servebench::result::BenchmarkResult {
        successful_requests: Some(u64::MAX - 1),
        failed_requests: Some(2),
        ..Default::default()
    };
    let f = servebench::lint::lint_result(&r, &Default::default());
    // The saturated total is still more than the successes: partial success is reported.
    assert!(
        f.iter()
            .any(|f| f.code == servebench::lint::Code::PartialSuccess),
        "{f:?}"
    );
}

#[test]
fn a_truncated_or_broken_pretty_printed_file_is_reported_where_it_breaks() {
    use servebench::import::{sglang, ImportError, JsonErrorKind};
    // Cut off in the middle of line 4: not "line 1, at $.completed".
    let cut = b"{\"completed\": 2,\n \"duration\": 1.0,\n \"ttfts\": [0.1,\n  0.2";
    // A syntax error on line 3.
    let broken = b"{\"completed\": 2,\n \"duration\": 1.0,\n \"ttfts\": [0.1,, 0.2]\n}\n";
    for (bytes, want_kind, want_line) in [
        (&cut[..], JsonErrorKind::Truncated, 4),
        (&broken[..], JsonErrorKind::Syntax, 3),
    ] {
        for err in [
            vllm::from_slice(bytes).map(|_| ()).unwrap_err(),
            sglang::from_slice(bytes).map(|_| ()).unwrap_err(),
        ] {
            match err {
                ImportError::Json { line, kind, .. } => {
                    assert_eq!((kind, line), (want_kind, want_line), "{err}")
                }
                other => panic!("{other}"),
            }
        }
    }
    // JSON Lines still report the broken line.
    let jsonl = b"{\"completed\": 1, \"duration\": 1.0}\n{\"completed\": 1, \"duration\": }\n";
    for err in [
        vllm::from_slice(jsonl).map(|_| ()).unwrap_err(),
        sglang::from_slice(jsonl).map(|_| ()).unwrap_err(),
    ] {
        assert!(matches!(err, ImportError::Json { line: 2, .. }), "{err}");
    }
}
