//! Lints on the seed's 15 blocks and on the fixtures.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use servebench::app as lint_files;
use servebench::format::lint::{render_json, render_text};
use servebench::import::{guidellm, vllm};
use servebench::lint::{self, Code, LintOptions, Severity};
use servebench::profile::Profile;
use servebench::result::{BenchmarkResult, Percentile, Summary};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// One seed block: its engine, the profile it ran and its values.
struct SeedBlock {
    engine: &'static str,
    profile: &'static str,
    result: BenchmarkResult,
}

/// A small reader for the seed's GPUStack-style blocks (label → value), independent of
/// `format::text` so these tests pin the lints alone.
fn seed_blocks() -> Vec<SeedBlock> {
    let text = std::fs::read_to_string(fixture("seed.txt")).unwrap();
    let mut blocks = Vec::new();
    let mut engine = "vLLM";
    let mut profile = "sharegpt";
    let mut current: Option<BenchmarkResult> = None;
    for line in text.lines() {
        let t = line.trim();
        match t {
            // Each block's backend parameters follow a "Backend Parameters:" line; only
            // SGLang takes `--context-length`.
            l if l.ends_with("Backend Parameters:") => engine = "vLLM",
            "--context-length=32768" => engine = "SGLang",
            "Profile: ShareGPT" | "ShareGPT" => profile = "sharegpt",
            "Throughput Profile" => profile = "throughput",
            "Long Context Profile" => profile = "long-context",
            "Generation Heavy Profile" => profile = "generation-heavy",
            _ => {}
        }
        if t == "============ Serving Benchmark Result ============" {
            current = Some(BenchmarkResult::default());
            continue;
        }
        let Some(r) = current.as_mut() else { continue };
        if t.starts_with("=====") {
            blocks.push(SeedBlock {
                engine,
                profile,
                result: current.take().unwrap(),
            });
            continue;
        }
        let Some((label, value)) = t.split_once(':') else {
            continue;
        };
        let v: f64 = value.trim().parse().unwrap();
        let summary = |s: &mut Option<Summary>, stat: &str, v: f64| {
            let s = s.get_or_insert_with(Summary::default);
            match stat {
                "Mean" => s.mean = Some(v),
                "Median" => s.median = Some(v),
                p => s.percentiles.push(Percentile {
                    p: p[1..].parse().unwrap(),
                    value: Some(v),
                }),
            }
        };
        let stat = label.split_whitespace().next().unwrap();
        match label {
            "Successful requests" => r.successful_requests = Some(v as u64),
            "Maximum request concurrency" => r.max_concurrency = Some(v as u64),
            "Benchmark duration (s)" => r.duration_ms = Some(v * 1000.0),
            "Total input tokens" => r.total_input_tokens = Some(v as u64),
            "Total generated tokens" => r.total_output_tokens = Some(v as u64),
            "Request throughput (req/s)" => r.request_throughput_per_s = Some(v),
            "Output token throughput (tok/s)" => r.output_throughput_per_s = Some(v),
            "Peak output token throughput (tok/s)" => r.peak_output_throughput_per_s = Some(v),
            "Peak concurrent requests" => r.peak_concurrent_requests = Some(v),
            "Total Token throughput (tok/s)" => r.total_token_throughput_per_s = Some(v),
            l if l.ends_with("Latency(s)") => summary(&mut r.e2el, stat, v * 1000.0),
            l if l.ends_with("TTFT (ms)") => summary(&mut r.ttft, stat, v),
            l if l.ends_with("TPOT (ms)") => summary(&mut r.tpot, stat, v),
            l if l.ends_with("ITL (ms)") => summary(&mut r.itl, stat, v),
            other => panic!("unknown row {other}"),
        }
    }
    blocks
}

fn codes(findings: &[lint::Finding]) -> BTreeSet<&'static str> {
    findings.iter().map(|f| f.code.as_str()).collect()
}

fn options(profile: &str) -> LintOptions {
    LintOptions {
        expected_requests: Some(Profile::preset(profile).unwrap().total_requests),
        client_cap: None,
    }
}

/// Expected codes per seed block, in the seed's order, with a name for messages.
fn expected_seed_codes() -> Vec<(&'static str, BTreeSet<&'static str>)> {
    use Code::*;
    let common_512 = vec![
        SingleIterationStreams,
        ImpossiblePeak,
        ClientCapped,
        InconsistentTotals,
    ];
    let table: Vec<(&str, Vec<Code>)> = vec![
        ("vLLM ShareGPT baseline", common_512.clone()),
        ("SGLang ShareGPT", vec![ImpossiblePeak, ClientCapped]),
        ("vLLM ShareGPT quantization", common_512.clone()),
        ("vLLM ShareGPT prefix cache", common_512.clone()),
        ("vLLM ShareGPT performance mode", common_512.clone()),
        ("vLLM ShareGPT kv cache dtype", common_512.clone()),
        (
            "vLLM ShareGPT speculative decoding",
            vec![
                SingleIterationStreams,
                ImpossiblePeak,
                ClientCapped,
                PartialSuccess,
                InconsistentTotals,
                ZeroLatency,
            ],
        ),
        ("vLLM ShareGPT baseline (other cases)", common_512.clone()),
        ("vLLM ShareGPT optimized", common_512.clone()),
        (
            "vLLM Throughput baseline",
            vec![
                SingleIterationStreams,
                TpotFromTtft,
                ImpossiblePeak,
                ClientCapped,
                InconsistentTotals,
            ],
        ),
        (
            "vLLM Throughput optimized",
            vec![
                SingleIterationStreams,
                TpotFromTtft,
                ImpossiblePeak,
                ClientCapped,
                InconsistentTotals,
            ],
        ),
        (
            "vLLM Long Context baseline",
            vec![
                SingleIterationStreams,
                TpotFromTtft,
                SingleBurst,
                InconsistentTotals,
            ],
        ),
        (
            "vLLM Long Context optimized",
            vec![
                SingleIterationStreams,
                TpotFromTtft,
                SingleBurst,
                InconsistentTotals,
            ],
        ),
        (
            "vLLM Generation Heavy baseline",
            vec![SingleIterationStreams, ImpossiblePeak, SingleBurst],
        ),
        (
            "vLLM Generation Heavy optimized",
            vec![SingleIterationStreams, ImpossiblePeak, SingleBurst],
        ),
    ];
    table
        .into_iter()
        .map(|(name, codes)| (name, codes.iter().map(|c| c.as_str()).collect()))
        .collect()
}

#[test]
fn seed_blocks_are_flagged_for_the_right_reasons() {
    let blocks = seed_blocks();
    assert_eq!(blocks.len(), 15);
    for (block, (what, want)) in blocks.iter().zip(expected_seed_codes()) {
        let findings = lint::lint_result(&block.result, &options(block.profile));
        assert_eq!(codes(&findings), want, "{what}: {findings:#?}");
        assert_eq!(
            block.engine == "SGLang",
            what.starts_with("SGLang"),
            "{what}"
        );
    }
}

#[test]
fn lint_file_on_the_seed_uses_format_parser_and_document_context() {
    // Through format::text::parse and format::doc::contexts (profile → expected requests):
    // the same findings as the hand-read blocks above.
    let runs = lint_files::lint_path(&fixture("seed.txt"), &LintOptions::default()).unwrap();
    assert_eq!(runs.len(), 15);
    for (run, (what, want)) in runs.iter().zip(expected_seed_codes()) {
        assert_eq!(
            codes(&run.findings),
            want,
            "{what} ({}): {:#?}",
            run.run,
            run.findings
        );
    }
    assert_eq!(lint_files::exit_code(&runs), lint_files::EXIT_FINDINGS);
    let text = render_text(&runs);
    assert_eq!(
        text.lines().count(),
        runs.iter().map(|r| r.findings.len()).sum::<usize>()
    );
    assert!(
        text.lines().all(|l| l.contains("seed.txt: line ")),
        "{text}"
    );
    // JSON for tools (serde_json's default float parser may differ in the last bit, so
    // compare everything but the evidence values exactly).
    let back: Vec<lint::RunFindings> = serde_json::from_str(&render_json(&runs)).unwrap();
    assert_eq!(back.len(), runs.len());
    for (a, b) in back.iter().zip(&runs) {
        assert_eq!((&a.source, &a.run), (&b.source, &b.run));
        for (f, g) in a.findings.iter().zip(&b.findings) {
            assert_eq!(
                (f.code, f.severity, &f.message),
                (g.code, g.severity, &g.message)
            );
            for (x, y) in f.evidence.iter().zip(&g.evidence) {
                assert_eq!(x.name, y.name);
                assert!((x.value - y.value).abs() <= 1e-12 * y.value.abs().max(1.0));
            }
        }
    }
}

#[test]
fn lint_file_on_result_files_and_bad_input() {
    let runs = lint_files::lint_path(
        &fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json"),
        &LintOptions::default(),
    )
    .unwrap();
    assert_eq!(lint_files::exit_code(&runs), lint_files::EXIT_CLEAN);
    assert!(render_text(&runs).is_empty());
    let runs =
        lint_files::lint_path(&fixture("guidellm/errors.json"), &LintOptions::default()).unwrap();
    assert_eq!(runs[0].run, "constant@10.00");
    assert_eq!(lint_files::exit_code(&runs), lint_files::EXIT_FINDINGS);
    // The vLLM report text itself (a block with trailing pad spaces) is clean too.
    let runs = lint_files::lint_path(
        &fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt"),
        &LintOptions::default(),
    )
    .unwrap();
    assert_eq!(runs.len(), 1);
    assert!(runs[0].findings.is_empty(), "{:#?}", runs[0].findings);
    // Bad input: typed errors, never a panic.
    assert!(lint_files::lint_bytes("x", b"hello", &LintOptions::default()).is_err());
    assert!(lint_files::lint_bytes("x", b"{\"benchmarks\": [", &LintOptions::default()).is_err());
    assert!(
        lint_files::lint_path(Path::new("/nonexistent/file.json"), &LintOptions::default())
            .is_err()
    );
}

#[test]
fn reasoning_parser_blocks_flagged_sglang_not_for_itl_tpot() {
    for b in seed_blocks() {
        let findings = lint::lint_result(&b.result, &options(b.profile));
        let itl_tpot = findings
            .iter()
            .any(|f| matches!(f.code, Code::SingleIterationStreams | Code::TpotFromTtft));
        // Every vLLM block of the seed ran with --reasoning-parser=qwen3.
        assert_eq!(
            itl_tpot,
            b.engine == "vLLM",
            "{} {}: {findings:#?}",
            b.engine,
            b.profile
        );
    }
}

#[test]
fn findings_carry_their_evidence() {
    let blocks = seed_blocks();
    let base = &blocks[0].result;
    let findings = lint::lint_result(base, &options("sharegpt"));
    let peak = findings
        .iter()
        .find(|f| f.code == Code::ImpossiblePeak)
        .unwrap();
    assert_eq!(peak.severity, Severity::Error);
    assert_eq!(peak.evidence[0].value, 30810010.86);
    assert_eq!(peak.evidence[1].value, 281412.0);
    let totals: Vec<_> = findings
        .iter()
        .filter(|f| f.code == Code::InconsistentTotals)
        .collect();
    // Output and total token throughput disagree with tokens/duration; req/s agrees.
    assert_eq!(totals.len(), 2, "{totals:#?}");
    assert!(totals[0].message.starts_with("output token throughput"));
    assert!((totals[0].evidence[0].value - 281412.0 / 70.72).abs() < 1e-6);
    let text = peak.to_string();
    assert!(text.starts_with("error[impossible-peak]: "), "{text}");
    assert!(text.contains("peak_output_tok_per_s=30810010.86"), "{text}");
    let json = serde_json::to_string(peak).unwrap();
    assert!(json.contains("\"code\":\"impossible-peak\""), "{json}");
    assert!(json.contains("\"severity\":\"error\""), "{json}");

    // Long context: TPOT is exactly ΣTTFT/Σoutput = 31979.13 × 100 / 10000.
    let long = &blocks[11].result;
    let f = lint::lint_result(long, &options("long-context"));
    let t = f.iter().find(|f| f.code == Code::TpotFromTtft).unwrap();
    assert!((t.evidence[1].value - 319.7913).abs() < 1e-9);
}

#[test]
fn comparison_with_partial_success_run_is_flagged() {
    let blocks = seed_blocks();
    let opts = options("sharegpt");
    let baseline = &blocks[0].result;
    let spec = &blocks[6].result;
    let f = lint::lint_comparison(baseline, spec, &opts);
    assert_eq!(codes(&f), BTreeSet::from(["partial-success-comparison"]));
    assert!(f[0].message.contains("51.6%"), "{}", f[0].message);
    assert!(lint::lint_comparison(baseline, &blocks[2].result, &opts).is_empty());
}

#[test]
fn every_code_is_documented() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lint/mod.rs"))
            .unwrap();
    for c in Code::ALL {
        assert!(
            docs.contains(&format!("//! | `{}` |", c.as_str())),
            "{c} undocumented"
        );
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("\"{}\"", c.as_str()));
    }
}

#[test]
fn guidellm_fixtures_aggregates_and_records() {
    // constant_rate20: healthy streams (64 iterations each) but guidellm's "peak" is an
    // instantaneous rate above the run's total output tokens.
    let report = guidellm::from_path(&fixture("guidellm/constant_rate20.json")).unwrap();
    let b = &report.benchmarks[0];
    let records = b.measured_records();
    let findings = lint::lint_run(&b.result, Some(&records), &LintOptions::default());
    assert_eq!(
        codes(&findings),
        BTreeSet::from(["impossible-peak"]),
        "{findings:#?}"
    );
    assert!(lint::lint_records(&records).is_empty());

    // errors: 48 of 80 counted requests succeeded.
    let report = guidellm::from_path(&fixture("guidellm/errors.json")).unwrap();
    let b = &report.benchmarks[0];
    let findings = lint::lint_run(
        &b.result,
        Some(&b.measured_records()),
        &LintOptions::default(),
    );
    let partial = findings
        .iter()
        .find(|f| f.code == Code::PartialSuccess)
        .expect("partial-success");
    assert_eq!(partial.severity, Severity::Error);
    assert_eq!(partial.evidence[2].value, 0.6);
    assert!(!codes(&findings).contains("single-iteration-streams"));

    // Records that collapsed to one iteration, as with the reasoning parser.
    let mut collapsed = b.measured_records();
    for r in collapsed.iter_mut().filter(|r| r.outcome.is_success()) {
        let n = r.output_tokens() as u32;
        let at = r.chunks[0].at;
        r.chunks = vec![servebench::Chunk { at, tokens: n }];
    }
    let f = lint::lint_records(&collapsed);
    assert_eq!(codes(&f), BTreeSet::from(["single-iteration-streams"]));
    assert_eq!(f[0].evidence[2].value, 1.0);
}

#[test]
fn vllm_fixture_is_clean() {
    let runs = vllm::from_path(&fixture(
        "vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json",
    ))
    .unwrap();
    let findings = lint::lint_result(&runs[0].result, &LintOptions::default());
    assert!(findings.is_empty(), "{findings:#?}");
    for run in vllm::from_path(&fixture(
        "vllm/vllm_benchmark_serving_2025-05_llmd_results.jsonl",
    ))
    .unwrap()
    {
        let f = lint::lint_result(&run.result, &LintOptions::default());
        assert!(
            f.iter().all(|f| f.severity < Severity::Error),
            "{}: {f:#?}",
            run.name
        );
    }
}

#[test]
fn percentile_order_is_checked() {
    let r = BenchmarkResult {
        ttft: Some(Summary {
            mean: Some(10.0),
            median: Some(12.0),
            min: Some(1.0),
            max: Some(20.0),
            percentiles: vec![
                Percentile {
                    p: 50.0,
                    value: Some(12.0),
                },
                Percentile {
                    p: 95.0,
                    value: Some(11.0),
                },
                Percentile {
                    p: 99.0,
                    value: Some(25.0),
                },
            ],
            ..Default::default()
        }),
        ..Default::default()
    };
    let f = lint::lint_result(&r, &LintOptions::default());
    let msgs: Vec<&str> = f
        .iter()
        .filter(|f| f.code == Code::PercentileOrder)
        .map(|f| f.message.as_str())
        .collect();
    assert!(msgs.contains(&"P95 TTFT is below P50"), "{msgs:?}");
    assert!(msgs.contains(&"median TTFT is above P95"), "{msgs:?}");
    assert!(
        msgs.contains(&"a TTFT statistic is above the maximum"),
        "{msgs:?}"
    );
}

// ---------------------------------------------------------------------------------------
// The `servebench lint` command.

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn servebench(args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn cli_lint_exit_codes_and_formats() {
    let seed = fixture("seed.txt");
    let (code, out, _) = servebench(&["lint", seed.to_str().unwrap()], None);
    assert_eq!(code, 3);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.iter().any(|l| l.ends_with("seed.txt: line 131: error[single-iteration-streams]: Median ITL is 0: most output tokens come from streams with a single counted token iteration (first token = last token), so ITL and TPOT do not measure decoding (median_itl_ms=0, mean_itl_ms=11.4600, mean_tpot_ms=25.8900)")), "{out}");
    // The SGLang block (line 175) has no ITL/TPOT finding.
    assert!(lines
        .iter()
        .filter(|l| l.contains(": line 175: "))
        .all(|l| !l.contains("single-iteration") && !l.contains("tpot-from-ttft")));

    let (code, out, _) = servebench(&["lint", "--format", "json", seed.to_str().unwrap()], None);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 15);
    assert_eq!(v[0]["findings"][0]["code"], "single-iteration-streams");

    let clean = fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json");
    let (code, out, _) = servebench(&["lint", clean.to_str().unwrap()], None);
    assert_eq!((code, out.as_str()), (0, ""));

    // stdin, a guidellm file.
    let errors = std::fs::read(fixture("guidellm/errors.json")).unwrap();
    let (code, out, _) = servebench(&["lint", "-"], Some(&errors));
    assert_eq!(code, 3);
    assert!(
        out.contains(
            "<stdin>: constant@10.00: error[partial-success]: only 60.0% of the requests succeeded"
        ),
        "{out}"
    );

    // Bad input: exit 1 with the JSON path; usage: exit 2.
    let text = String::from_utf8(errors).unwrap();
    let bad = text.replacen("\"status\": \"completed\"", "\"status\": 7", 1);
    let (code, _, err) = servebench(&["lint", "-"], Some(bad.as_bytes()));
    assert_eq!(code, 1);
    assert!(
        err.contains("$.benchmarks[0].requests.successful[0].info.status"),
        "{err}"
    );
    let (code, _, _) = servebench(&["lint"], None);
    assert_eq!(code, 2);
    let (code, _, _) = servebench(&["lint", "--format", "xml", "x"], None);
    assert_eq!(code, 2);
    let (code, _, err) = servebench(&["lint", "/nonexistent.json"], None);
    assert_eq!(code, 1, "{err}");
    // Neither a report nor a result: the file is named once.
    let (code, _, err) = servebench(&["lint", "-"], Some(b"\xff\xfe{"));
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.trim_end(),
        "servebench: <stdin>: line 1: not UTF-8 text (invalid byte at offset 0)"
    );
}
