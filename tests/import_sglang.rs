//! SGLang bench_serving JSON Lines importer.

use servebench::import::{sglang, ImportError};
use servebench::load::{sniff, Format};
use servebench::record::Outcome;

/// Two runs as SGLang 0.5.x appends them (keys from `bench_serving.py`); the first with
/// `--output-details`, the second with an infinite rate (Python writes bare `Infinity`).
const RUNS: &str = concat!(
    r#"{"backend": "sglang-oai-chat", "dataset_name": "random", "request_rate": 4.0, "max_concurrency": 8, "sharegpt_output_len": null, "random_input_len": 1024, "random_output_len": 128, "random_range_ratio": 0.0, "duration": 1.5, "completed": 2, "total_input_tokens": 2048, "total_output_tokens": 5, "total_output_tokens_retokenized": 5, "request_throughput": 1.3333, "input_throughput": 1365.33, "output_throughput": 3.3333, "mean_e2e_latency_ms": 350.0, "median_e2e_latency_ms": 350.0, "std_e2e_latency_ms": 50.0, "p90_e2e_latency_ms": 390.0, "p99_e2e_latency_ms": 399.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 100.0, "std_ttft_ms": 0.0, "p99_ttft_ms": 100.0, "mean_tpot_ms": 110.0, "median_tpot_ms": 110.0, "std_tpot_ms": 10.0, "p99_tpot_ms": 119.8, "mean_itl_ms": 100.0, "median_itl_ms": 100.0, "std_itl_ms": 0.0, "p95_itl_ms": 100.0, "p99_itl_ms": 100.0, "max_itl_ms": 100.0, "concurrency": 0.46, "accept_length": null, "max_output_tokens_per_s": 3.0, "max_concurrent_requests": 2, "input_lens": [1024, 1024], "output_lens": [3, 2], "ttfts": [0.1, 0.1], "itls": [[0.1, 0.1], [0.1]], "generated_texts": ["a b c", "d e"], "errors": ["", ""]}"#,
    "\n",
    r#"{"backend": "sglang", "dataset_name": "sharegpt", "request_rate": Infinity, "max_concurrency": null, "duration": 10.0, "completed": 100, "total_input_tokens": 20000, "total_output_tokens": 30000, "total_output_tokens_retokenized": 29990, "request_throughput": 10.0, "input_throughput": 2000.0, "output_throughput": 3000.0, "total_throughput": 5000.0, "mean_e2e_latency_ms": 900.0, "median_e2e_latency_ms": 880.0, "std_e2e_latency_ms": 90.0, "p99_e2e_latency_ms": 1200.0, "mean_ttft_ms": 80.0, "median_ttft_ms": 75.0, "std_ttft_ms": 9.0, "p99_ttft_ms": 150.0, "mean_tpot_ms": 3.0, "median_tpot_ms": 2.9, "std_tpot_ms": 0.3, "p99_tpot_ms": 4.0, "mean_itl_ms": 3.0, "median_itl_ms": 2.8, "std_itl_ms": 1.0, "p95_itl_ms": 4.5, "p99_itl_ms": 9.0, "max_itl_ms": 40.0, "concurrency": 9.0, "accept_length": 2.5}"#,
    "\n"
);

#[test]
fn reads_runs_summaries_and_details() {
    assert_eq!(
        sniff("runs.jsonl", RUNS.as_bytes()).ok(),
        Some(Format::SglangJsonl)
    );
    let runs = sglang::from_slice(RUNS.as_bytes()).unwrap();
    assert_eq!(runs.len(), 2);
    let a = &runs[0].result;
    assert_eq!(a.successful_requests, Some(2));
    assert_eq!(a.failed_requests, Some(0));
    assert_eq!(a.max_concurrency, Some(8));
    assert_eq!(a.request_rate_configured, Some(4.0));
    let e2el = a.e2el.as_ref().unwrap();
    assert_eq!(e2el.percentile(90.0), Some(390.0));
    assert_eq!(a.itl.as_ref().unwrap().max, Some(100.0));
    assert_eq!(runs[0].concurrency, Some(0.46));
    let recs = runs[0].records.as_ref().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].chunks.len(), 3);
    assert!(recs.iter().all(|r| r.outcome == Outcome::Success));
    let b = &runs[1];
    assert_eq!(b.result.request_rate_configured, None);
    assert_eq!(b.result.total_token_throughput_per_s, Some(5000.0));
    assert_eq!(b.accept_length, Some(2.5));
    assert_eq!(b.total_output_tokens_retokenized, Some(29990));
    assert!(b.records.is_none());
    assert_eq!(b.name, "sglang (line 2)");
}

#[test]
fn bad_lines_name_their_line() {
    let broken = RUNS.replace("\"completed\": 100", "\"completed\": -3");
    let err = sglang::from_slice(broken.as_bytes()).unwrap_err();
    assert!(err.to_string().starts_with("line 2: $.completed"), "{err}");
    let truncated = &RUNS[..RUNS.len() - 40];
    let err = sglang::from_slice(truncated.as_bytes()).unwrap_err();
    assert!(matches!(err, ImportError::Json { line: 2, .. }), "{err}");
    let zero = RUNS.replace("\"completed\": 2,", "\"completed\": 0,");
    assert!(matches!(
        sglang::from_slice(zero.as_bytes()).unwrap_err(),
        ImportError::Empty { .. }
    ));
    assert!(matches!(
        sglang::from_slice(b"\n\n").unwrap_err(),
        ImportError::Empty { .. }
    ));
}
