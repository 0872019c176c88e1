//! `servebench report` semantics (library side): file aggregates, vLLM recomputation and
//! the guidellm recomputation proof.

use std::path::{Path, PathBuf};

use servebench::app::{render_report, report_bytes, report_path, Numbers, ReportOptions};
use servebench::format::text::{render, Style};
use servebench::import::{guidellm, ImportError};
use servebench::result::Convention;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn opts(numbers: Numbers) -> ReportOptions {
    ReportOptions {
        numbers,
        percentiles: None,
        goodput: None,
    }
}

const GUIDELLM: [&str; 2] = ["guidellm/constant_rate20.json", "guidellm/errors.json"];

#[test]
fn default_prints_the_files_aggregates_gpustack_style() {
    for f in GUIDELLM {
        let blocks = report_path(&fixture(f), &ReportOptions::default()).unwrap();
        let report = guidellm::from_path(&fixture(f)).unwrap();
        assert_eq!(blocks.len(), report.benchmarks.len());
        for (block, b) in blocks.iter().zip(&report.benchmarks) {
            assert_eq!(block.style, Style::Gpustack);
            assert_eq!(block.render(), render(&b.result, Style::Gpustack));
            // The only note: guidellm's instantaneous peak, when no 1-s window holds it.
            let window = block
                .result
                .exact
                .as_ref()
                .unwrap()
                .peak_output_tokens_per_s;
            let peak = block.result.peak_output_throughput_per_s.unwrap();
            let flagged = peak > window.unwrap() * 1.02 + 1.0;
            assert_eq!(block.notes.len(), usize::from(flagged), "{:?}", block.notes);
            assert!(block
                .notes
                .iter()
                .all(|n| n.contains("is guidellm's instantaneous rate")));
        }
    }
}

#[test]
fn vllm_file_default_is_its_printed_report() {
    let blocks = report_path(
        &fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json"),
        &ReportOptions::default(),
    )
    .unwrap();
    let printed = std::fs::read_to_string(fixture(
        "vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt",
    ))
    .unwrap();
    assert_eq!(render_report(&blocks), format!("openai\n\n{printed}"));
    // No per-request lists in that file: nothing to recompute from.
    let err = report_path(
        &fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json"),
        &opts(Numbers::Recompute(Convention::Vllm)),
    )
    .unwrap_err();
    assert!(
        matches!(err.import_error(), Some(ImportError::NoRecords { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("--save-detailed"), "{err}");
}

#[test]
fn convention_vllm_recomputes_from_guidellm_records() {
    let bytes = std::fs::read(fixture("guidellm/constant_rate20.json")).unwrap();
    let file = &report_bytes(&bytes, &ReportOptions::default()).unwrap()[0].result;
    let blocks = report_bytes(&bytes, &opts(Numbers::Recompute(Convention::Vllm))).unwrap();
    let b = &blocks[0];
    assert_eq!(b.style, Style::Vllm);
    let r = &b.result;
    assert_eq!(r.meta.convention, Some(Convention::Vllm));
    assert_eq!(r.successful_requests, Some(60));
    assert_eq!(r.failed_requests, Some(0));
    assert_eq!(r.total_input_tokens, file.total_input_tokens);
    assert_eq!(r.total_output_tokens, file.total_output_tokens);
    // Same definition in both conventions: mean TTFT. (Records hold nanosecond offsets,
    // so values agree to a microsecond, not to the last bit.)
    let close = |a: Option<f64>, b: Option<f64>, tol: f64| (a.unwrap() - b.unwrap()).abs() <= tol;
    assert!(close(
        r.ttft.as_ref().unwrap().mean,
        file.ttft.as_ref().unwrap().mean,
        1e-3
    ));
    // vLLM's TPOT (decode only, per request) = guidellm's ITL; every request has 64 tokens,
    // so the request-weighted and token-weighted means coincide.
    assert!(close(
        r.tpot.as_ref().unwrap().mean,
        file.itl.as_ref().unwrap().mean,
        1e-3
    ));
    // Duration = guidellm's measured window; output throughput = tokens / window.
    assert!(close(r.duration_ms, file.duration_ms, 1e-6));
    assert!(close(
        r.output_throughput_per_s,
        Some(3840.0 / (file.duration_ms.unwrap() / 1000.0)),
        1e-4
    ));
    // vLLM's peak is bucketed over 1 s: far below guidellm's instantaneous "peak".
    assert!(r.peak_output_throughput_per_s.unwrap() <= 3840.0);
    assert!(file.peak_output_throughput_per_s.unwrap() > 3840.0);
    assert!(
        b.notes.iter().any(|n| n.starts_with("Inter-token latency")),
        "{:?}",
        b.notes
    );
    let text = render_report(&blocks);
    assert!(text.contains("\nMean TPOT (ms):"), "{text}");
    assert!(text.contains("\nnote: Inter-token latency"), "{text}");
}

#[test]
fn convention_vllm_on_errors_fixture_counts_failures() {
    let bytes = std::fs::read(fixture("guidellm/errors.json")).unwrap();
    let r = &report_bytes(&bytes, &opts(Numbers::Recompute(Convention::Vllm))).unwrap()[0].result;
    assert_eq!(r.successful_requests, Some(48));
    // vLLM counts every unsuccessful request in the window as failed: 10 errored + 22 cancelled.
    assert_eq!(r.failed_requests, Some(32));
}

#[test]
fn convention_guidellm_prints_the_same_block_as_the_file() {
    for f in GUIDELLM {
        let bytes = std::fs::read(fixture(f)).unwrap();
        let file = render_report(&report_bytes(&bytes, &ReportOptions::default()).unwrap());
        let recomputed = render_report(
            &report_bytes(&bytes, &opts(Numbers::Recompute(Convention::Guidellm))).unwrap(),
        );
        assert_eq!(recomputed, file, "{f}");
    }
}

#[test]
fn guidellm_recomputation_matches_file_aggregates_numerically() {
    use servebench::Summary;
    for f in GUIDELLM {
        let bytes = std::fs::read(fixture(f)).unwrap();
        let file = report_bytes(&bytes, &ReportOptions::default()).unwrap();
        let again = report_bytes(&bytes, &opts(Numbers::Recompute(Convention::Guidellm))).unwrap();
        for (a, b) in file.iter().zip(&again) {
            let (a, b) = (&a.result, &b.result);
            assert_eq!(a.successful_requests, b.successful_requests, "{f}");
            assert_eq!(a.max_concurrency, b.max_concurrency, "{f}");
            assert_eq!(a.total_input_tokens, b.total_input_tokens, "{f}");
            assert_eq!(a.total_output_tokens, b.total_output_tokens, "{f}");
            let close = |what: &str, x: Option<f64>, y: Option<f64>| {
                let (x, y) = (x.unwrap(), y.unwrap());
                assert!(
                    (x - y).abs() <= 1e-6 * x.abs().max(1.0),
                    "{f} {what}: file {x} vs recomputed {y}"
                );
            };
            close("duration", a.duration_ms, b.duration_ms);
            close(
                "req/s",
                a.request_throughput_per_s,
                b.request_throughput_per_s,
            );
            close(
                "out tok/s",
                a.output_throughput_per_s,
                b.output_throughput_per_s,
            );
            close(
                "peak out tok/s",
                a.peak_output_throughput_per_s,
                b.peak_output_throughput_per_s,
            );
            close(
                "peak concurrency",
                a.peak_concurrent_requests,
                b.peak_concurrent_requests,
            );
            close(
                "total tok/s",
                a.total_token_throughput_per_s,
                b.total_token_throughput_per_s,
            );
            for (what, x, y) in [
                ("e2el", &a.e2el, &b.e2el),
                ("ttft", &a.ttft, &b.ttft),
                ("tpot", &a.tpot, &b.tpot),
                ("itl", &a.itl, &b.itl),
            ] {
                let (x, y): (&Summary, &Summary) = (x.as_ref().unwrap(), y.as_ref().unwrap());
                close(&format!("{what} mean"), x.mean, y.mean);
                close(&format!("{what} median"), x.median, y.median);
                for p in [95.0, 99.0] {
                    close(&format!("{what} p{p}"), x.percentile(p), y.percentile(p));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The `servebench report` command.

fn servebench(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn cli_report() {
    let g = fixture("guidellm/constant_rate20.json");
    let g = g.to_str().unwrap();
    let (code, default, _) = servebench(&["report", g]);
    assert_eq!(code, 0);
    // guidellm's numbers under the block's vLLM wording: the convention line first, as
    // `bench` prints it.
    let note =
        servebench::format::labels::convention_note(servebench::Convention::Guidellm).unwrap();
    assert!(
        default.starts_with(&format!(
            "constant@20.00\n\n{note}\n============ Serving Benchmark Result ============\n"
        )),
        "{default}"
    );
    let (code, recomputed, _) = servebench(&["report", "--convention", "guidellm", g]);
    assert_eq!(code, 0);
    assert_eq!(recomputed, default);
    let (code, vllm_style, _) = servebench(&[
        "report",
        "--convention",
        "vllm",
        "--percentiles",
        "50,90,99",
        g,
    ]);
    assert_eq!(code, 0);
    assert!(vllm_style.contains("\nP90 TTFT (ms):"), "{vllm_style}");
    assert!(vllm_style.contains("\nnote: "), "{vllm_style}");
    let (code, json, _) = servebench(&["report", "--format", "json", g]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["meta"]["convention"], "guidellm");

    let v = fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json");
    let (code, out, _) = servebench(&["report", v.to_str().unwrap()]);
    assert_eq!(code, 0);
    let printed = std::fs::read_to_string(fixture(
        "vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt",
    ))
    .unwrap();
    assert_eq!(out, format!("openai\n\n{printed}"));
    let (code, _, err) = servebench(&["report", "--convention", "vllm", v.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("no per-request records"), "{err}");
    let (code, _, _) = servebench(&["report", "--convention", "sglang", v.to_str().unwrap()]);
    assert_eq!(code, 2);
}

#[test]
fn goodput_slos_count_the_requests_that_meet_them() {
    // An independent count from the file's own per-request figures: successes whose TTFT
    // and latency meet the SLOs, over the measured window. The thresholds sit between two
    // of the file's values, away from float rounding at the boundary.
    let path = fixture("guidellm/constant_rate20.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let bench = &doc["benchmarks"][0];
    let (ttft_slo, e2el_slo) = (36.6, 900.0);
    let good = bench["requests"]["successful"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["time_to_first_token_ms"].as_f64().unwrap() <= ttft_slo
                && r["request_latency"].as_f64().unwrap() * 1000.0 <= e2el_slo
        })
        .count();
    let sm = &bench["scheduler_metrics"];
    let window =
        sm["measure_end_time"].as_f64().unwrap() - sm["measure_start_time"].as_f64().unwrap();
    assert!(
        good > 5 && good < 55,
        "a threshold that splits the run: {good}"
    );

    let slos = format!("ttft:{ttft_slo} e2el:{e2el_slo}");
    let p = path.to_str().unwrap();
    let (code, json, err) = servebench(&[
        "report",
        "--convention",
        "vllm",
        "--goodput",
        &slos,
        "--format",
        "json",
        p,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let got = v[0]["request_goodput_per_s"].as_f64().unwrap();
    approx::assert_relative_eq!(got, good as f64 / window, max_relative = 1e-9);

    let (code, text, _) = servebench(&["report", "--convention", "vllm", "--goodput", &slos, p]);
    assert_eq!(code, 0);
    assert!(
        text.contains(&format!(
            "\nRequest goodput (req/s):                 {:.2}",
            good as f64 / window
        )),
        "{text}"
    );
    assert!(!text.contains("no SLOs"), "{text}");

    // Bad SLOs are usage errors naming the problem.
    for (bad, why) in [
        ("ttft=5", "not KEY:VALUE"),
        ("itl:5", "unknown SLO `itl`"),
        ("ttft:-1", "not a non-negative number"),
        ("ttft:1 ttft:2", "given twice"),
    ] {
        let (code, _, err) = servebench(&["report", "--convention", "vllm", "--goodput", bad, p]);
        assert_eq!(code, 2, "{bad}");
        assert!(err.contains(why), "{bad}: {err}");
    }
    // --goodput needs a recomputation.
    let (code, _, _) = servebench(&["report", "--goodput", "ttft:5", p]);
    assert_eq!(code, 2);
}

#[test]
fn reports_print_servebenchs_exact_figures_beside_the_block() {
    let path = fixture("guidellm/constant_rate20.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Independent sweep over the file's [request_start, request_end) intervals.
    let mut events: Vec<(f64, i32)> = Vec::new();
    for r in doc["benchmarks"][0]["requests"]["successful"]
        .as_array()
        .unwrap()
    {
        let t = &r["info"]["timings"];
        events.push((t["request_start"].as_f64().unwrap(), 1));
        events.push((t["request_end"].as_f64().unwrap(), -1));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut peak) = (0, 0);
    for (_, d) in events {
        now += d;
        peak = peak.max(now);
    }
    let p = path.to_str().unwrap();
    let (code, default, _) = servebench(&["report", p]);
    assert_eq!(code, 0);
    let line = default
        .lines()
        .find(|l| l.starts_with("exact: "))
        .expect("an exact line");
    assert!(
        line.contains(&format!("peak {peak} requests in flight at one instant")),
        "{line} (sweep: {peak})"
    );
    assert!(
        line.contains("evenly spaced"),
        "labelled as a reconstruction: {line}"
    );
    // guidellm's "Peak output token throughput" is an instantaneous rate, far above any
    // 1-second window's token count; the exact line shows the window figure.
    let tokens: f64 = line
        .split("peak output ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    let blocks = servebench::format::text::parse(&default).unwrap();
    let block = &blocks[0].result;
    assert!(tokens <= block.total_output_tokens.unwrap() as f64);
    assert!(block.peak_output_throughput_per_s.unwrap() > 10.0 * tokens);
    // The recomputation prints the same exact line.
    let (_, recomputed, _) = servebench(&["report", "--convention", "guidellm", p]);
    assert!(recomputed.contains(line));
}
