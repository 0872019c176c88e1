//! vLLM save-result importer against the fixtures and hand-made variants.

use std::path::{Path, PathBuf};
use std::time::Duration;

use servebench::import::{vllm, ImportError, JsonErrorKind};
use servebench::load::{sniff, Format};
use servebench::record::Outcome;
use servebench::result::Convention;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/vllm")
        .join(rel)
}

const ASCEND: &str = "vllm_bench_serve_2026-07_ascend_qwen3vl_result.json";
const LLMD: &str = "vllm_benchmark_serving_2025-05_llmd_results.jsonl";

#[test]
fn ascend_result_reads_every_row_of_its_report() {
    let runs = vllm::from_path(&fixture(ASCEND)).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let r = &run.result;
    assert_eq!(r.meta.convention, Some(Convention::Vllm));
    assert_eq!(r.successful_requests, Some(200));
    assert_eq!(r.failed_requests, Some(0));
    assert_eq!(r.max_concurrency, None);
    assert_eq!(r.request_rate_configured, Some(1.0));
    assert_eq!(r.total_input_tokens, Some(40000));
    assert_eq!(r.total_output_tokens, Some(25600));
    assert_eq!(r.peak_output_throughput_per_s, Some(313.0));
    assert_eq!(r.peak_concurrent_requests, Some(12.0));
    // The printed report, rounded to 2 decimals.
    let report = std::fs::read_to_string(fixture(
        "vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt",
    ))
    .unwrap();
    let printed = |label: &str| -> String {
        let line = report
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}"));
        line[label.len()..].trim().to_string()
    };
    let f2 = |v: Option<f64>| format!("{:.2}", v.unwrap());
    assert_eq!(
        printed("Benchmark duration (s):"),
        f2(r.duration_ms.map(|d| d / 1000.0))
    );
    assert_eq!(
        printed("Request throughput (req/s):"),
        f2(r.request_throughput_per_s)
    );
    assert_eq!(
        printed("Output token throughput (tok/s):"),
        f2(r.output_throughput_per_s)
    );
    assert_eq!(
        printed("Total token throughput (tok/s):"),
        f2(r.total_token_throughput_per_s)
    );
    for (name, s) in [("TTFT", &r.ttft), ("TPOT", &r.tpot), ("ITL", &r.itl)] {
        let s = s.as_ref().unwrap();
        assert_eq!(printed(&format!("Mean {name} (ms):")), f2(s.mean));
        assert_eq!(printed(&format!("Median {name} (ms):")), f2(s.median));
        assert_eq!(
            printed(&format!("P99 {name} (ms):")),
            f2(s.percentile(99.0))
        );
        assert!(s.std.is_some());
    }
    assert!(r.e2el.is_none());
    assert_eq!(run.metric_order, ["ttft", "tpot", "itl"]);
    assert!(run.records.is_none());
    assert_eq!(
        sniff(ASCEND, &std::fs::read(fixture(ASCEND)).unwrap()).ok(),
        Some(Format::VllmJson)
    );
}

#[test]
fn json_lines_of_several_runs_with_old_goodput_key_and_inf_rate() {
    let runs = vllm::from_path(&fixture(LLMD)).unwrap();
    assert_eq!(runs.len(), 9);
    assert!(runs.iter().all(|r| r.result.successful_requests.is_some()));
    assert!(runs.iter().any(|r| r.infinite_rate));
    assert!(runs[0].name.ends_with("(line 1)"));
    assert!(runs[0]
        .metadata
        .iter()
        .any(|(k, v)| k == "deployment" && v == "no-features"));
    // "request_goodput:" with a value is read as goodput.
    let line = std::fs::read_to_string(fixture(LLMD)).unwrap();
    let first = line
        .lines()
        .next()
        .unwrap()
        .replace("\"request_goodput:\": null", "\"request_goodput:\": 7.5");
    let run = &vllm::from_slice(first.as_bytes()).unwrap()[0];
    assert_eq!(run.result.request_goodput_per_s, Some(7.5));
}

/// A `--save-detailed` file in 0.34's shape, with a failed request.
const DETAILED: &str = r#"{"date": "20260101-120000", "endpoint_type": "openai", "backend": "openai", "label": null,
 "model_id": "m", "tokenizer_id": "m", "num_prompts": 3, "request_rate": "inf", "burstiness": 1.0,
 "max_concurrency": 2, "duration": 2.0, "completed": 2, "failed": 1, "total_input_tokens": 30,
 "total_output_tokens": 7, "request_throughput": 1.0, "request_goodput": null, "output_throughput": 3.5,
 "total_token_throughput": 18.5, "input_lens": [10, 10, 10], "output_lens": [4, 3, 0],
 "ttfts": [0.1, 0.2, 0.0], "itls": [[0.05, 0.05, 0.05], [0.1, 0.1], []],
 "latencies": [0.25, 0.4, 0.0], "start_times": [100.0, 100.5, 101.0],
 "generated_texts": ["a b c d", "x y z", ""], "errors": ["", "", "Bad Request"],
 "max_output_tokens_per_s": 4.0, "max_concurrent_requests": 2, "rtfx": 0.0,
 "mean_ttft_ms": 150.0, "median_ttft_ms": 150.0, "std_ttft_ms": 50.0, "p50_ttft_ms": 150.0, "p99_ttft_ms": 199.0,
 "mean_e2el_ms": 325.0, "median_e2el_ms": 325.0, "std_e2el_ms": 75.0, "p50_e2el_ms": 325.0, "p99_e2el_ms": 398.5}"#;

#[test]
fn detailed_lists_become_records_including_failures() {
    let runs = vllm::from_slice(DETAILED.as_bytes()).unwrap();
    let run = &runs[0];
    assert!(run.infinite_rate);
    assert_eq!(run.result.request_rate_configured, None);
    assert_eq!(run.result.max_concurrency, Some(2));
    assert_eq!(run.metric_order, ["ttft", "e2el"]);
    let e2el = run.result.e2el.as_ref().unwrap();
    assert_eq!(
        e2el.percentiles.iter().map(|p| p.p).collect::<Vec<_>>(),
        [50.0, 99.0]
    );
    let recs = run.records.as_ref().unwrap();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0].sent_at, Duration::ZERO);
    assert_eq!(recs[1].sent_at, Duration::from_millis(500));
    assert_eq!(recs[0].chunks.len(), 4);
    assert_eq!(recs[0].usage_output_tokens, Some(4));
    let ttft = recs[1].ttft().unwrap().as_secs_f64();
    assert!((ttft - 0.2).abs() < 1e-9);
    let last = recs[0].chunks.last().unwrap().at.as_secs_f64();
    assert!((last - 0.25).abs() < 1e-9);
    assert_eq!(recs[0].ended_at, Some(Duration::from_millis(250)));
    assert!(matches!(&recs[2].outcome, Outcome::Error { message, .. } if message == "Bad Request"));
    assert!(recs[2].chunks.is_empty());
}

#[test]
fn bad_input_is_a_typed_error_with_a_path() {
    // Truncated.
    let err = vllm::from_slice(&DETAILED.as_bytes()[..DETAILED.len() / 2]).unwrap_err();
    assert!(
        matches!(
            err,
            ImportError::Json {
                kind: JsonErrorKind::Truncated,
                ..
            }
        ),
        "{err}"
    );
    // A number where a string was expected.
    let bad = DETAILED.replace("\"model_id\": \"m\"", "\"model_id\": 5");
    let err = vllm::from_slice(bad.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "$.model_id: expected a string, found a number"
    );
    // A string where a number was expected.
    let bad = DETAILED.replace("\"duration\": 2.0", "\"duration\": \"2.0\"");
    assert!(vllm::from_slice(bad.as_bytes())
        .unwrap_err()
        .to_string()
        .starts_with("$.duration"));
    // Negative and non-finite durations.
    let bad = DETAILED.replace("\"duration\": 2.0", "\"duration\": -2.0");
    assert!(vllm::from_slice(bad.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("negative"));
    let bad = DETAILED.replace("\"mean_ttft_ms\": 150.0", "\"mean_ttft_ms\": -1.0");
    assert!(vllm::from_slice(bad.as_bytes())
        .unwrap_err()
        .to_string()
        .starts_with("$.mean_ttft_ms"));
    let nan = DETAILED.replace("\"duration\": 2.0", "\"duration\": NaN");
    assert_eq!(
        vllm::from_slice(nan.as_bytes()).unwrap()[0]
            .result
            .duration_ms,
        None
    );
    // List lengths that disagree.
    let bad = DETAILED.replace("\"output_lens\": [4, 3, 0]", "\"output_lens\": [4, 3]");
    assert!(vllm::from_slice(bad.as_bytes())
        .unwrap_err()
        .to_string()
        .starts_with("$.output_lens"));
    // Zero requests.
    let zero = DETAILED.replace(
        "\"completed\": 2, \"failed\": 1",
        "\"completed\": 0, \"failed\": 0",
    );
    assert!(matches!(
        vllm::from_slice(zero.as_bytes()).unwrap_err(),
        ImportError::Empty { .. }
    ));
    // JSON Lines: the error names the line.
    let jsonl = std::fs::read_to_string(fixture(LLMD)).unwrap();
    let mut lines: Vec<String> = jsonl.lines().map(String::from).collect();
    lines[4] = lines[4].replace("\"completed\": ", "\"completed\": \"x\", \"_\": ");
    let err = vllm::from_slice(lines.join("\n").as_bytes()).unwrap_err();
    assert!(err.to_string().starts_with("line 5: $.completed"), "{err}");
    lines[4] = lines[4][..100].to_string();
    let err = vllm::from_slice(lines.join("\n").as_bytes()).unwrap_err();
    assert!(matches!(err, ImportError::Json { line: 5, .. }), "{err}");
}

#[test]
fn ascend_result_renders_its_printed_report_byte_for_byte() {
    use servebench::format::text::{render_with, Style};
    let run = &vllm::from_path(&fixture(ASCEND)).unwrap()[0];
    let printed = std::fs::read_to_string(fixture(
        "vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt",
    ))
    .unwrap();
    let rendered = render_with(&run.result, &run.layout);
    assert_eq!(format!("{rendered}\n"), printed);
    assert_eq!(run.layout.style, Style::Vllm);
    // `"date": "20260722-041843"`: vLLM's local wall time without a zone, kept as +00:00.
    assert_eq!(
        run.result.meta.date.map(|d| d.to_rfc3339()).as_deref(),
        Some("2026-07-22T04:18:43+00:00")
    );
}

#[test]
fn layout_follows_the_version_of_the_file() {
    use servebench::format::text::render_with;
    // llm-d's 2025 benchmark_serving.py: no Failed/peak rows, "Total Token" spelling.
    let run = &vllm::from_path(&fixture(LLMD)).unwrap()[0];
    let text = render_with(&run.result, &run.layout);
    assert!(text.contains("\nTotal Token throughput (tok/s):"), "{text}");
    assert!(!text.contains("Failed requests:"));
    assert!(!text.contains("Request rate configured"));
    assert!(!text.contains("Peak output"));
    // A detailed 0.34 file: max concurrency row, E2EL section with P50 and P99.
    let run = &vllm::from_slice(DETAILED.as_bytes()).unwrap()[0];
    let text = render_with(&run.result, &run.layout);
    assert!(
        text.contains("\nMaximum request concurrency:             2         \n"),
        "{text}"
    );
    assert!(!text.contains("Request rate configured"));
    assert!(
        text.contains("\nP50 E2EL (ms):                           325.00    \n"),
        "{text}"
    );
    assert!(
        text.contains("\nTotal token throughput (tok/s):          18.50     \n"),
        "{text}"
    );
}
