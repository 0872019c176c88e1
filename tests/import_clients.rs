//! Importers on files written by the real clients (aiperf 0.13, guidellm 0.8.1, `vllm bench
//! serve` 0.33, SGLang `bench_serving` 0.5.23) against the example server; see
//! `tests/fixtures/README.md` for how each was made. Where a client's definition agrees with
//! servebench's, the figures recomputed from the file's records must equal the client's own
//! aggregates; each test states its tolerance and where the definitions differ.

use std::path::{Path, PathBuf};

use servebench::app::{report_run, Numbers, ReportOptions};
use servebench::import::ImportError;
use servebench::load::{load_path, Format, Run};
use servebench::result::{BenchmarkResult, Convention, Summary};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn load(rel: &str) -> Vec<Run> {
    load_path(&fixture(rel)).unwrap_or_else(|e| panic!("{e}"))
}

fn recompute(run: &Run, convention: Convention, percentiles: &[f64]) -> BenchmarkResult {
    let opts = ReportOptions {
        numbers: Numbers::Recompute(convention),
        percentiles: Some(percentiles.to_vec()),
        goodput: None,
    };
    report_run(run, &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .result
}

/// `|a - b| <= rel * max(|b|, 1)`, with a message naming the figure.
#[track_caller]
fn close(what: &str, a: Option<f64>, b: Option<f64>, rel: f64) {
    let (a, b) = (
        a.unwrap_or_else(|| panic!("{what}: ours missing")),
        b.unwrap_or_else(|| panic!("{what}: theirs missing")),
    );
    assert!(
        (a - b).abs() <= rel * b.abs().max(1.0),
        "{what}: ours {a} vs theirs {b} (tolerance {rel})"
    );
}

#[track_caller]
fn close_summary(what: &str, ours: &Summary, theirs: &Summary, ps: &[f64], rel: f64) {
    close(&format!("{what} mean"), ours.mean, theirs.mean, rel);
    close(&format!("{what} median"), ours.median, theirs.median, rel);
    for &p in ps {
        close(
            &format!("{what} p{p}"),
            ours.percentile(p),
            theirs.percentile(p),
            rel,
        );
    }
}

/// aiperf's per-request records, recomputed with vLLM's definitions, give aiperf's own
/// aggregates: TTFT, E2E latency (`request_latency`), TPOT (aiperf's "inter token latency",
/// per request (latency − TTFT)/(tokens − 1)) and ITL (aiperf's "inter chunk latency", every
/// gap pooled) agree to 1e-9 relative (nanosecond records against aiperf's float ms;
/// both use numpy's linear percentiles), and so do the token totals (the server's counts,
/// `--use-server-token-count`). Where they differ, and why: the duration and every rate.
/// aiperf divides by its observation window (profiling phase start to end), servebench by
/// first send to last response (aiperf's `benchmark_duration`, which the records reproduce
/// to 1 µs); aiperf's per-request standard deviation is the sample one for some metrics.
#[test]
fn aiperf_records_recompute_to_aiperfs_aggregates() {
    let theirs = &load("aiperf/profile_export_aiperf.json")[0];
    assert_eq!(theirs.provenance.format, Format::AiperfJson);
    let runs = load("aiperf/profile_export.jsonl");
    assert_eq!(runs[0].provenance.format, Format::AiperfJsonl);
    let ps = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];
    let ours = recompute(&runs[0], Convention::Vllm, &ps);
    let t = &theirs.result;
    assert_eq!(ours.successful_requests, t.successful_requests);
    assert_eq!(ours.failed_requests, Some(0));
    assert_eq!(ours.total_input_tokens, t.total_input_tokens);
    assert_eq!(ours.total_output_tokens, t.total_output_tokens);
    let rel = 1e-9;
    close_summary(
        "TTFT",
        ours.ttft.as_ref().unwrap(),
        t.ttft.as_ref().unwrap(),
        &ps,
        rel,
    );
    close_summary(
        "E2EL",
        ours.e2el.as_ref().unwrap(),
        t.e2el.as_ref().unwrap(),
        &ps,
        rel,
    );
    close_summary(
        "TPOT",
        ours.tpot.as_ref().unwrap(),
        t.tpot.as_ref().unwrap(),
        &ps,
        rel,
    );
    close_summary(
        "ITL",
        ours.itl.as_ref().unwrap(),
        t.itl.as_ref().unwrap(),
        &ps,
        rel,
    );
    // Duration: aiperf's benchmark_duration (first request → last response), 1 µs.
    let raw: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("aiperf/profile_export_aiperf.json")).unwrap(),
    )
    .unwrap();
    let bench_s = raw["benchmark_duration"]["avg"].as_f64().unwrap();
    close(
        "duration (s)",
        ours.duration_s(),
        Some(bench_s),
        1e-6 / bench_s,
    );
    // The rates differ by the window: aiperf's observation window is longer.
    assert!(t.duration_ms.unwrap() >= ours.duration_ms.unwrap());
    close(
        "request throughput × duration",
        Some(t.request_throughput_per_s.unwrap() * t.duration_ms.unwrap() / 1000.0),
        Some(40.0),
        1e-9,
    );
}

/// Both conventions recompute from aiperf's records; guidellm's TPOT includes the TTFT, so
/// it is larger than vLLM's on every run.
#[test]
fn aiperf_records_recompute_in_both_conventions() {
    let run = &load("aiperf/profile_export.jsonl")[0];
    let v = recompute(run, Convention::Vllm, &[99.0]);
    let g = recompute(run, Convention::Guidellm, &[99.0]);
    assert_eq!(v.meta.convention, Some(Convention::Vllm));
    assert_eq!(g.meta.convention, Some(Convention::Guidellm));
    assert_eq!(v.successful_requests, g.successful_requests);
    assert!(g.tpot.unwrap().mean.unwrap() > v.tpot.unwrap().mean.unwrap());
    // Same TTFT definition in both.
    close(
        "TTFT mean",
        g.ttft.unwrap().mean,
        v.ttft.unwrap().mean,
        1e-12,
    );
}

/// aiperf's CSV holds the JSON's figures rounded to 2 decimals.
#[test]
fn aiperf_csv_matches_its_json() {
    let json = &load("aiperf/profile_export_aiperf.json")[0].result;
    let csv = &load("aiperf/profile_export_aiperf.csv")[0].result;
    assert_eq!(csv.successful_requests, json.successful_requests);
    assert_eq!(csv.total_input_tokens, json.total_input_tokens);
    assert_eq!(csv.total_output_tokens, json.total_output_tokens);
    let two_decimals = |what: &str, a: Option<f64>, b: Option<f64>| {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!((a - b).abs() <= 0.005 + 1e-9, "{what}: csv {a} vs json {b}");
    };
    two_decimals(
        "output tok/s",
        csv.output_throughput_per_s,
        json.output_throughput_per_s,
    );
    for (name, a, b) in [
        ("ttft", &csv.ttft, &json.ttft),
        ("tpot", &csv.tpot, &json.tpot),
        ("itl", &csv.itl, &json.itl),
        ("e2el", &csv.e2el, &json.e2el),
    ] {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        two_decimals(name, a.mean, b.mean);
        two_decimals(name, a.percentile(99.0), b.percentile(99.0));
    }
}

/// guidellm writes the same report as JSON, YAML and CSV: the YAML reads into the very same
/// runs (records included); the CSV into the same aggregates (it has no records).
#[test]
fn guidellm_json_yaml_and_csv_agree() {
    let json = load("guidellm-0.8.1/benchmarks.json");
    let yaml = load("guidellm-0.8.1/benchmarks.yaml");
    let csv = load("guidellm-0.8.1/benchmarks.csv");
    assert_eq!(yaml[0].provenance.format, Format::GuidellmYaml);
    assert_eq!(csv[0].provenance.format, Format::GuidellmCsv);
    assert_eq!(json.len(), 1);
    assert_eq!(yaml[0].result, json[0].result);
    assert_eq!(yaml[0].records, json[0].records);
    let (c, j) = (&csv[0].result, &json[0].result);
    assert!(csv[0].records.is_none());
    assert_eq!(c.successful_requests, j.successful_requests);
    assert_eq!(c.failed_requests, j.failed_requests);
    assert_eq!(c.max_concurrency, j.max_concurrency);
    assert_eq!(c.total_input_tokens, j.total_input_tokens);
    assert_eq!(c.total_output_tokens, j.total_output_tokens);
    // guidellm writes Python's repr of each float in the CSV: equal to the last bit.
    for (a, b) in [
        (c.duration_ms, j.duration_ms),
        (c.request_throughput_per_s, j.request_throughput_per_s),
        (c.output_throughput_per_s, j.output_throughput_per_s),
        (
            c.peak_output_throughput_per_s,
            j.peak_output_throughput_per_s,
        ),
        (
            c.total_token_throughput_per_s,
            j.total_token_throughput_per_s,
        ),
    ] {
        assert_eq!(a, b);
    }
    for (a, b) in [
        (&c.ttft, &j.ttft),
        (&c.tpot, &j.tpot),
        (&c.itl, &j.itl),
        (&c.e2el, &j.e2el),
    ] {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        assert_eq!(
            (a.mean, a.median, a.std, a.min, a.max),
            (b.mean, b.median, b.std, b.min, b.max)
        );
        for p in [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0] {
            assert_eq!(a.percentile(p), b.percentile(p), "p{p}");
        }
    }
}

/// guidellm's records recomputed with guidellm's definitions give guidellm's aggregates
/// (the JSON and the YAML alike).
#[test]
fn guidellm_records_recompute_to_guidellms_aggregates() {
    for f in [
        "guidellm-0.8.1/benchmarks.json",
        "guidellm-0.8.1/benchmarks.yaml",
    ] {
        let run = &load(f)[0];
        let ours = recompute(run, Convention::Guidellm, &[99.0]);
        let t = &run.result;
        assert_eq!(ours.successful_requests, t.successful_requests, "{f}");
        assert_eq!(ours.total_output_tokens, t.total_output_tokens, "{f}");
        let rel = 1e-9;
        close("duration", ours.duration_ms, t.duration_ms, rel);
        close(
            "req/s",
            ours.request_throughput_per_s,
            t.request_throughput_per_s,
            rel,
        );
        for (name, a, b) in [
            ("ttft", &ours.ttft, &t.ttft),
            ("tpot", &ours.tpot, &t.tpot),
            ("itl", &ours.itl, &t.itl),
            ("e2el", &ours.e2el, &t.e2el),
        ] {
            close_summary(
                name,
                a.as_ref().unwrap(),
                b.as_ref().unwrap(),
                &[95.0, 99.0],
                rel,
            );
        }
    }
}

/// `vllm bench serve` 0.33 with `--save-detailed`: its records (it saves start times)
/// recomputed with vLLM's definitions give vLLM's own figures. TTFT, TPOT and ITL agree to
/// 1e-9; the totals exactly. The duration: vLLM's is its wall clock around the run, the
/// records' is first send → last chunk, shorter by the start-up (checked ≤).
#[test]
fn vllm_records_recompute_to_vllms_aggregates() {
    let run = &load("vllm-0.33/result.json")[0];
    let recs = run.records.as_ref().expect("--save-detailed lists");
    assert!(recs.send_times, "vLLM 0.33 saves start_times");
    let ours = recompute(run, Convention::Vllm, &[99.0]);
    let t = &run.result;
    assert_eq!(ours.successful_requests, t.successful_requests);
    assert_eq!(ours.total_input_tokens, t.total_input_tokens);
    assert_eq!(ours.total_output_tokens, t.total_output_tokens);
    for (name, a, b) in [
        ("ttft", &ours.ttft, &t.ttft),
        ("tpot", &ours.tpot, &t.tpot),
        ("itl", &ours.itl, &t.itl),
    ] {
        close_summary(
            name,
            a.as_ref().unwrap(),
            b.as_ref().unwrap(),
            &[99.0],
            1e-9,
        );
    }
    assert!(ours.duration_ms.unwrap() <= t.duration_ms.unwrap());
}

/// SGLang `bench_serving` 0.5.23: two runs appended to one file, the first with
/// `--output-details`. Its records recompute to SGLang's TTFT and ITL (1e-9) and TPOT
/// (1e-3: SGLang's latency runs to the `[DONE]` event, the records' to the last token
/// chunk, so its (latency − TTFT)/(tokens − 1) is a little larger); the
/// second run has no records, so a recomputation reports it as such without hiding the
/// first; guidellm's definitions are refused (SGLang saves no send times).
#[test]
fn sglang_records_recompute_and_a_run_without_records_is_named() {
    let runs = load("sglang-0.5.23/results.jsonl");
    assert_eq!(runs.len(), 2);
    assert!(runs[0].records.is_some() && runs[1].records.is_none());
    let ours = recompute(&runs[0], Convention::Vllm, &[99.0]);
    let t = &runs[0].result;
    assert_eq!(ours.successful_requests, t.successful_requests);
    assert_eq!(ours.total_output_tokens, t.total_output_tokens);
    for (name, a, b) in [("ttft", &ours.ttft, &t.ttft), ("itl", &ours.itl, &t.itl)] {
        close_summary(
            name,
            a.as_ref().unwrap(),
            b.as_ref().unwrap(),
            &[99.0],
            1e-9,
        );
    }
    let (a, b) = (ours.tpot.as_ref().unwrap(), t.tpot.as_ref().unwrap());
    close_summary("tpot", a, b, &[99.0], 1e-3);
    assert!(a.mean.unwrap() <= b.mean.unwrap());
    let opts = |c| ReportOptions {
        numbers: Numbers::Recompute(c),
        ..ReportOptions::default()
    };
    let err = report_run(&runs[1], &opts(Convention::Vllm)).unwrap_err();
    assert!(matches!(err, ImportError::NoRecords { .. }), "{err}");
    assert!(err.to_string().contains("--output-details"), "{err}");
    let err = report_run(&runs[0], &opts(Convention::Guidellm)).unwrap_err();
    assert!(matches!(err, ImportError::CannotRecompute { .. }), "{err}");
}

/// aiperf 0.13 against the example server on `/v1/embeddings` (4 texts per request): its
/// records carry no first token, so they import as whole answers; recomputed, they give
/// aiperf's own request-latency summary to 1e-9, its request count and input tokens, and
/// its benchmark duration to 1 µs — and no TTFT, TPOT or ITL on either side.
#[test]
fn aiperf_embeddings_records_recompute_to_aiperfs_aggregates() {
    let theirs = &load("aiperf-embeddings/profile_export_aiperf.json")[0].result;
    let runs = load("aiperf-embeddings/profile_export.jsonl");
    let records = &runs[0].records.as_ref().unwrap().all;
    assert_eq!(records.len(), 40);
    assert!(records
        .iter()
        .all(|r| r.response == servebench::record::ResponseForm::Whole && r.chunks.is_empty()));
    let ps = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];
    let ours = recompute(&runs[0], Convention::Vllm, &ps);
    assert_eq!(ours.successful_requests, theirs.successful_requests);
    assert_eq!(ours.successful_requests, Some(40));
    assert_eq!(ours.total_input_tokens, theirs.total_input_tokens);
    close_summary(
        "E2EL",
        ours.e2el.as_ref().unwrap(),
        theirs.e2el.as_ref().unwrap(),
        &ps,
        1e-9,
    );
    assert!(ours.ttft.is_none() && ours.tpot.is_none() && ours.itl.is_none());
    assert!(theirs.ttft.is_none() && theirs.itl.is_none());
    let raw: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("aiperf-embeddings/profile_export_aiperf.json")).unwrap(),
    )
    .unwrap();
    let bench_s = raw["benchmark_duration"]["avg"].as_f64().unwrap();
    close(
        "duration (s)",
        ours.duration_s(),
        Some(bench_s),
        1e-6 / bench_s,
    );
    // aiperf's input token throughput is its total over its observation window.
    close(
        "input tok/s × window",
        Some(theirs.input_throughput_per_s.unwrap() * theirs.duration_ms.unwrap() / 1000.0),
        ours.total_input_tokens.map(|t| t as f64),
        1e-9,
    );
}

/// aiperf 0.13 against the example server with one 512 × 512 JPEG per chat request
/// (`--image-batch-size 1`, server token counts): the server counted each image's vision
/// tokens, and the records recompute to aiperf's TTFT, E2EL, TPOT and ITL to 1e-9 and its
/// input tokens exactly.
#[test]
fn aiperf_image_records_recompute_to_aiperfs_aggregates() {
    let theirs = &load("aiperf-images/profile_export_aiperf.json")[0].result;
    let runs = load("aiperf-images/profile_export.jsonl");
    let ps = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];
    let ours = recompute(&runs[0], Convention::Vllm, &ps);
    assert_eq!(ours.successful_requests, Some(40));
    assert_eq!(ours.total_input_tokens, theirs.total_input_tokens);
    // 64 words of text, 10 template tokens, 258 for the image (aiperf resizes its source
    // images near 512 × 512, so a few requests' images round to other token counts).
    let per = ours.total_input_tokens.unwrap() as f64 / 40.0;
    assert!((300.0..350.0).contains(&per), "{per}");
    for (what, a, b) in [
        ("TTFT", &ours.ttft, &theirs.ttft),
        ("E2EL", &ours.e2el, &theirs.e2el),
        ("TPOT", &ours.tpot, &theirs.tpot),
        ("ITL", &ours.itl, &theirs.itl),
    ] {
        close_summary(what, a.as_ref().unwrap(), b.as_ref().unwrap(), &ps, 1e-9);
    }
}

/// guidellm 0.8.1 against the example server on `/v1/embeddings`
/// (`request_format=/v1/embeddings`): its requests have no token iteration, so they import
/// as whole answers; recomputed, their latency gives guidellm's own request-latency mean
/// (1e-6: guidellm's float epoch seconds; its median is its own percentile definition, not
/// numpy's, so within 2 %), and no TTFT is computed — where guidellm printed a TTFT of 0,
/// which `lint` reports as impossible.
#[test]
fn guidellm_embeddings_import_as_whole_answers_without_its_zero_ttft() {
    let run = &load("guidellm-embeddings/benchmarks.json")[0];
    let records = &run.records.as_ref().unwrap().all;
    assert_eq!(records.len(), 40);
    assert!(records
        .iter()
        .all(|r| r.response == servebench::record::ResponseForm::Whole && r.chunks.is_empty()));
    let theirs = &run.result;
    assert_eq!(theirs.ttft.as_ref().unwrap().mean, Some(0.0));
    let ours = recompute(run, Convention::Vllm, &[50.0, 99.0]);
    assert_eq!(ours.successful_requests, Some(40));
    assert!(ours.ttft.is_none() && ours.tpot.is_none() && ours.itl.is_none());
    let (a, b) = (ours.e2el.as_ref().unwrap(), theirs.e2el.as_ref().unwrap());
    close("E2EL mean", a.mean, b.mean, 1e-6);
    close("E2EL median", a.median, b.median, 0.02);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_servebench"))
        .arg("lint")
        .arg(fixture("guidellm-embeddings/benchmarks.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[zero-latency]: mean TTFT is 0"),
        "{text}"
    );
}
