//! Regressions of the verb-side defects of the CLI issue, through the built binary: values
//! that used to change silently between verbs, and compare's success rate.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn scratch(name: &str, text: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("verb-{name}"));
    std::fs::write(&p, text).unwrap();
    p
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = stdin.unwrap_or_default().to_vec();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn seed_block() -> String {
    let seed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed.txt"),
    )
    .unwrap();
    let start = seed.find("============ Serving Benchmark Result").unwrap();
    let end = start
        + seed[start..]
            .find("\n==================================================")
            .unwrap();
    seed[start..end + 51].to_string()
}

/// `nan`, `inf` and `-inf` printed in a text report survive parse → JSON → render through
/// the CLI, byte for byte (they used to come back as `N/A`).
#[test]
fn non_finite_values_survive_parse_then_render() {
    let block = seed_block();
    let mut edited = block.clone();
    for (label, value) in [
        ("Mean TTFT (ms):", "nan"),
        ("Median TTFT (ms):", "inf"),
        ("Mean TPOT (ms):", "-inf"),
    ] {
        let line = edited.lines().find(|l| l.starts_with(label)).unwrap();
        edited = edited.replacen(line, &format!("{}{value}", &line[..41]), 1);
    }
    assert_ne!(edited, block);
    let f = scratch("nonfinite.txt", &format!("{edited}\n"));
    let parsed = run(&["parse", f.to_str().unwrap()], None);
    assert_eq!(parsed.status.code(), Some(0));
    let json = String::from_utf8(parsed.stdout).unwrap();
    assert!(json.contains("\"mean\": \"nan\""), "{json}");
    assert!(json.contains("\"median\": \"inf\""), "{json}");
    assert!(json.contains("\"mean\": \"-inf\""), "{json}");
    let rendered = run(&["render", "-"], Some(json.as_bytes()));
    assert_eq!(rendered.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(rendered.stdout).unwrap(),
        format!("{edited}\n")
    );
}

fn vllm_result(ok: u64, failed: u64, tput: f64) -> String {
    format!(
        r#"{{"date": "20261203-000000", "backend": "vllm", "completed": {ok}, "failed": {failed}, "duration": 10.0, "total_input_tokens": {}, "total_output_tokens": {}, "request_throughput": {}, "output_throughput": {}, "total_token_throughput": {tput}, "mean_ttft_ms": 20.0, "median_ttft_ms": 19.0, "p99_ttft_ms": 40.0, "mean_tpot_ms": 5.0, "median_tpot_ms": 5.0, "p99_tpot_ms": 6.0}}"#,
        ok * 100,
        ok * 10,
        ok as f64 / 10.0,
        ok as f64,
    )
}

/// compare's success rate is the candidate's own successful / (successful + failed): 60 of
/// 100 is 60% (lint says the same), 200 of 200 is 100% whatever the baseline sent; it used
/// to divide by the baseline's count (80% and 20%).
#[test]
fn compare_success_rate_uses_the_candidates_own_failures() {
    let base = scratch("sr-base.json", &vllm_result(250, 0, 5000.0));
    let partial = scratch("sr-partial.json", &vllm_result(60, 40, 6000.0));
    let full = scratch("sr-full.json", &vllm_result(200, 0, 6000.0));
    let b = base.to_str().unwrap();
    let out = run(&["compare", b, partial.to_str().unwrap()], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("(Success rate: 60.0%, optimization skipped)"),
        "{text}"
    );
    let lint = run(&["lint", partial.to_str().unwrap()], None);
    let findings = String::from_utf8(lint.stdout).unwrap();
    assert!(
        findings.contains("only 60.0% of the requests succeeded"),
        "{findings}"
    );
    let out = run(&["compare", b, full.to_str().unwrap()], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Total TPS: 6000.00 (+20.00%)"), "{text}");
    assert!(!text.contains("Success rate"), "{text}");
}

/// `compare` and `render` accept every importable file: aiperf, guidellm CSV/YAML, SGLang.
#[test]
fn compare_and_render_accept_every_importable_file() {
    let fx = |rel: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel)
            .to_str()
            .unwrap()
            .to_string()
    };
    for f in [
        "aiperf/profile_export.jsonl",
        "aiperf/profile_export_aiperf.json",
        "aiperf/profile_export_aiperf.csv",
        "guidellm-0.8.1/benchmarks.csv",
        "guidellm-0.8.1/benchmarks.yaml",
        "vllm-0.33/result.json",
    ] {
        let out = run(&["render", &fx(f)], None);
        assert_eq!(
            out.status.code(),
            Some(0),
            "render {f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("Serving Benchmark Result"));
    }
    let out = run(
        &[
            "compare",
            &fx("aiperf/profile_export_aiperf.json"),
            &fx("vllm-0.33/result.json"),
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(
        &[
            "compare",
            &fx("guidellm-0.8.1/benchmarks.csv"),
            &fx("sglang-0.5.23/results.jsonl"),
            "--candidate-block",
            "2",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Mean TTFT"), "{text}");
}

/// The documented `compare` forms run as written: `--paired` after the candidates is the
/// flag, not a file (and implies `--repetitions`); `--repetitions` on one run per side
/// falls back to the runs' within-run intervals and says so, instead of exiting 1; the
/// README's single-run form with `--confidence` and `--min-effect` succeeds.
#[test]
fn the_documented_compare_forms_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let vllm = root.join("vllm-0.33/result.json");
    let run_file = root.join("accuracy-clients/servebench-run.json");
    let (v, r) = (vllm.to_str().unwrap(), run_file.to_str().unwrap());
    let ok = |args: &[&str]| {
        let o = run(args, None);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let paired = ok(&["compare", v, v, "--", v, v, "--paired"]);
    assert!(paired.contains("candidate runs (paired)"), "{paired}");
    let paired = ok(&["compare", "--paired", v, v, "--", v, v]);
    assert!(paired.contains("candidate runs (paired)"), "{paired}");
    let unpaired = ok(&["compare", v, v, "--", v, v]);
    assert!(unpaired.contains("(unpaired, Welch)"), "{unpaired}");
    let single = ok(&[
        "compare",
        r,
        r,
        "--repetitions",
        "--confidence",
        "0.95",
        "--effect",
        "2",
    ]);
    assert!(
        single.contains("each side holds one run") && single.contains("within-run intervals"),
        "{single}"
    );
    ok(&["compare", r, r, "--confidence", "0.95", "--min-effect", "2"]);
    // `-` (stdin) is read once, whatever the form needs of it.
    let bytes = std::fs::read(&run_file).unwrap();
    let o = run(&["compare", "-", r, "--repetitions"], Some(&bytes));
    assert!(
        o.status.success()
            && String::from_utf8_lossy(&o.stdout).contains("each side holds one run"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `compare` warns when a side was interrupted (its figures cover part of its workload),
/// and when a servebench run meets another tool's file sent at another rate (a servebench
/// run keeps its rate in its profile, guidellm's file in its configured rate: both are
/// read).
#[test]
fn compare_warns_of_an_interrupted_side_and_of_another_tools_workload() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let run_file = root.join("accuracy-clients/servebench-run.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&run_file).unwrap()).unwrap();
    v["status"] = serde_json::json!({"state": "interrupted", "reason": "SIGINT"});
    let cut = scratch("interrupted-run.json", &v.to_string());
    let (r, c) = (run_file.to_str().unwrap(), cut.to_str().unwrap());
    let o = run(&["compare", r, c], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("was interrupted (SIGINT) after") && out.contains("verb-interrupted-run.json"),
        "{out}"
    );
    let guidellm = root.join("guidellm/constant_rate20.json");
    let o = run(&["compare", r, guidellm.to_str().unwrap()], None);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Warning") && out.contains("rate"), "{out}");
}
