//! guidellm importer against the real guidellm 0.8.1 fixtures and guidellm's own 0.2-era
//! test asset.

use std::path::{Path, PathBuf};

use servebench::import::guidellm::{self, GuidellmBenchmark, RequestCounts, Schema};
use servebench::import::{ImportError, JsonErrorKind};
use servebench::record::{ErrorKind, Outcome};
use servebench::result::Convention;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

const FIXTURES: [&str; 2] = ["guidellm/constant_rate20", "guidellm/errors"];

/// The cells of the first data row for `name` in the console table titled `title`.
fn console_row(console: &str, title: &str, name: &str) -> Vec<String> {
    let start = console
        .find(title)
        .unwrap_or_else(|| panic!("no table {title}"));
    for line in console[start..].lines() {
        let cells: Vec<String> = line.split('|').map(|c| c.trim().to_string()).collect();
        if cells.len() > 2 && cells[1] == name {
            return cells[1..cells.len() - 1].to_vec();
        }
    }
    panic!("no row {name} in {title}");
}

/// `value` printed the way guidellm's console prints a number with `decimals` decimals.
fn fmt(value: Option<f64>, decimals: usize) -> String {
    format!("{:.*}", decimals, value.expect("value present"))
}

fn strip(cell: &str) -> &str {
    // "1.2 ± 0.04" → "1.2"; "45.0*" → "45.0"
    cell.split('±')
        .next()
        .unwrap_or(cell)
        .trim()
        .trim_end_matches('*')
}

fn load(name: &str) -> (guidellm::GuidellmReport, String) {
    let report = guidellm::from_path(&fixture(&format!("{name}.json"))).expect("imports");
    let console =
        std::fs::read_to_string(fixture(&format!("{name}.console.txt"))).expect("console");
    (report, console)
}

#[test]
fn every_fixture_benchmark_imports_with_aggregates_and_records() {
    for name in FIXTURES {
        let (report, _) = load(name);
        assert_eq!(report.schema, Schema::V2, "{name}");
        assert_eq!(report.guidellm_version.as_deref(), Some("0.8.1"));
        assert!(!report.benchmarks.is_empty());
        for b in &report.benchmarks {
            let r = &b.result;
            assert_eq!(r.meta.convention, Some(Convention::Guidellm));
            for (row, v) in [
                ("duration", r.duration_ms),
                ("req/s", r.request_throughput_per_s),
                ("out tok/s", r.output_throughput_per_s),
                ("peak", r.peak_output_throughput_per_s),
                ("total tok/s", r.total_token_throughput_per_s),
                ("peak concurrency", r.peak_concurrent_requests),
            ] {
                assert!(
                    v.is_some_and(|x| x.is_finite() && x > 0.0),
                    "{name}: {row} = {v:?}"
                );
            }
            for s in [&r.e2el, &r.ttft, &r.tpot, &r.itl] {
                let s = s.as_ref().expect("summary");
                assert!(s.mean.is_some() && s.median.is_some());
                assert!(s.percentile(95.0).is_some() && s.percentile(99.0).is_some());
            }
            assert_eq!(b.records.len(), b.in_window.len());
        }
    }
}

#[test]
fn gpustack_block_matches_what_guidellm_printed() {
    for name in FIXTURES {
        let (report, console) = load(name);
        for b in &report.benchmarks {
            let r = &b.result;
            // Run summary: duration (1 decimal), request counts, token totals.
            let run = console_row(&console, "Run Summary Info", &b.name);
            assert_eq!(
                run[3],
                fmt(r.duration_ms.map(|d| d / 1000.0), 1),
                "{name} duration"
            );
            assert_eq!(
                run[6],
                r.successful_requests.unwrap().to_string(),
                "{name} completed"
            );
            let reported = b.counts.reported.unwrap();
            assert_eq!(run[7], reported.incomplete.to_string(), "{name} incomplete");
            assert_eq!(run[8], reported.errored.to_string(), "{name} errored");
            assert_eq!(
                run[9],
                format!("{:.1}", r.total_input_tokens.unwrap() as f64),
                "{name} input tokens"
            );
            assert_eq!(
                run[12],
                format!("{:.1}", r.total_output_tokens.unwrap() as f64),
                "{name} output tokens"
            );

            // Latency table (completed requests): mean, median, p95 of each metric.
            let lat = console_row(&console, "Request Latency Statistics", &b.name);
            let check = |cells: &[String], s: &servebench::Summary, scale: f64, what: &str| {
                assert_eq!(
                    strip(&cells[0]),
                    fmt(s.mean.map(|v| v * scale), 1),
                    "{name} {what} mean"
                );
                assert_eq!(
                    strip(&cells[1]),
                    fmt(s.median.map(|v| v * scale), 1),
                    "{name} {what} median"
                );
                assert_eq!(
                    strip(&cells[2]),
                    fmt(s.percentile(95.0).map(|v| v * scale), 1),
                    "{name} {what} p95"
                );
            };
            check(&lat[1..4], r.e2el.as_ref().unwrap(), 1e-3, "latency (s)");
            check(&lat[4..7], r.ttft.as_ref().unwrap(), 1.0, "TTFT");
            check(&lat[10..13], r.itl.as_ref().unwrap(), 1.0, "ITL");
            check(&lat[13..16], r.tpot.as_ref().unwrap(), 1.0, "TPOT");

            // Throughput table is over *all* requests; the block uses the successful
            // group. They coincide when every counted request succeeded.
            if reported.errored + reported.incomplete == 0 {
                let tp = console_row(&console, "Server Throughput Statistics", &b.name);
                assert_eq!(tp[3], fmt(r.request_throughput_per_s, 1), "{name} req/s");
                assert_eq!(tp[5], fmt(r.output_throughput_per_s, 1), "{name} out tok/s");
                assert_eq!(
                    tp[6],
                    fmt(r.total_token_throughput_per_s, 1),
                    "{name} total tok/s"
                );
            }
        }
    }
}

#[test]
fn errors_fixture_counts_like_guidellm() {
    let (report, _) = load("guidellm/errors");
    let b: &GuidellmBenchmark = &report.benchmarks[0];
    assert_eq!(
        b.counts.listed,
        RequestCounts {
            successful: 48,
            errored: 10,
            incomplete: 23
        }
    );
    // guidellm counts 22 incompletes: one cancelled request lies outside the window.
    assert_eq!(
        b.counts.in_window,
        RequestCounts {
            successful: 48,
            errored: 10,
            incomplete: 22
        }
    );
    assert_eq!(b.counts.reported, Some(b.counts.in_window));
    assert!(!b.is_sampled());
    let measured = b.measured_records();
    assert_eq!(measured.len(), 80);
    assert_eq!(b.result.successful_requests, Some(48));
    assert_eq!(b.result.failed_requests, Some(32));

    // Error kinds from guidellm's error strings: HTTP 500, cut stream, in-stream error.
    let mut kinds = std::collections::BTreeMap::new();
    for r in &b.records {
        if let Outcome::Error { kind, .. } = &r.outcome {
            *kinds.entry(format!("{kind:?}")).or_insert(0) += 1;
        }
    }
    assert_eq!(kinds.values().sum::<i32>(), 10);
    for k in [
        ErrorKind::HttpStatus,
        ErrorKind::StreamCut,
        ErrorKind::ServerError,
    ] {
        assert!(kinds.contains_key(&format!("{k:?}")), "{kinds:?}");
    }
    // An HTTP 500 has no token; a cut stream keeps its partial tokens.
    let http = b
        .records
        .iter()
        .find(|r| {
            matches!(
                r.outcome,
                Outcome::Error {
                    kind: ErrorKind::HttpStatus,
                    ..
                }
            )
        })
        .unwrap();
    assert!(http.chunks.is_empty());
    assert_eq!(http.usage_output_tokens, None);
    let cut = b
        .records
        .iter()
        .find(|r| {
            matches!(
                r.outcome,
                Outcome::Error {
                    kind: ErrorKind::StreamCut,
                    ..
                }
            )
        })
        .unwrap();
    assert!(cut.client_output_tokens() > 0);
    assert_eq!(Some(cut.client_output_tokens()), cut.usage_output_tokens);
    // The window filter: the excluded request is an incomplete one outside the window.
    let outside: Vec<_> = b
        .records
        .iter()
        .zip(&b.in_window)
        .filter(|(_, w)| !**w)
        .map(|(r, _)| r)
        .collect();
    assert_eq!(outside.len(), 1);
    assert!(matches!(outside[0].outcome, Outcome::Incomplete { .. }));
    assert!(outside[0].sent_at > b.window_end);
}

#[test]
fn records_reconstruct_guidellm_timeline() {
    let bytes = std::fs::read(fixture("guidellm/constant_rate20.json")).unwrap();
    let report = guidellm::from_slice(&bytes).unwrap();
    let b = &report.benchmarks[0];
    let raw: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let listed = raw["benchmarks"][0]["requests"]["successful"]
        .as_array()
        .unwrap();
    assert_eq!(listed.len(), b.records.len());
    for (r, raw) in b.records.iter().zip(listed) {
        let t = &raw["info"]["timings"];
        let iters = t["token_iterations"].as_u64().unwrap();
        let n = raw["output_tokens"].as_u64().unwrap();
        assert_eq!(r.chunks.len() as u64, iters);
        assert_eq!(r.client_output_tokens(), n);
        assert_eq!(r.usage_output_tokens, Some(n));
        // TTFT and latency exactly as guidellm computed them per request.
        let ttft_ms = r.ttft().unwrap().as_secs_f64() * 1000.0;
        assert!((ttft_ms - raw["time_to_first_token_ms"].as_f64().unwrap()).abs() < 1e-3);
        let lat = (r.ended_at.unwrap() - r.sent_at).as_secs_f64();
        assert!((lat - raw["request_latency"].as_f64().unwrap()).abs() < 1e-6);
        // guidellm's ITL = (last − first)/(N − 1) = vLLM's per-request TPOT.
        let decode = (r.chunks.last().unwrap().at - r.chunks[0].at).as_secs_f64() * 1000.0;
        let itl = decode / (n - 1) as f64;
        assert!((itl - raw["inter_token_latency_ms"].as_f64().unwrap()).abs() < 1e-3);
    }
}

#[test]
fn recomputed_from_records_agrees_with_file_where_definitions_coincide() {
    for name in FIXTURES {
        let (report, _) = load(name);
        for b in &report.benchmarks {
            let ok: Vec<_> = b
                .measured_records()
                .into_iter()
                .filter(|r| r.outcome.is_success())
                .collect();
            let r = &b.result;
            assert_eq!(ok.len() as u64, r.successful_requests.unwrap());
            let out: u64 = ok.iter().map(|r| r.output_tokens()).sum();
            let inp: u64 = ok.iter().map(|r| r.input_tokens().unwrap()).sum();
            assert_eq!(Some(out), r.total_output_tokens, "{name}");
            assert_eq!(Some(inp), r.total_input_tokens, "{name}");
            // Mean TTFT and mean E2E latency are plain request means in both conventions.
            let n = ok.len() as f64;
            let ttft = ok
                .iter()
                .map(|r| r.ttft().unwrap().as_secs_f64() * 1000.0)
                .sum::<f64>()
                / n;
            let e2el = ok
                .iter()
                .map(|r| (r.ended_at.unwrap() - r.sent_at).as_secs_f64() * 1000.0)
                .sum::<f64>()
                / n;
            assert!(
                (ttft - r.ttft.as_ref().unwrap().mean.unwrap()).abs() < 1e-3,
                "{name} ttft"
            );
            assert!(
                (e2el - r.e2el.as_ref().unwrap().mean.unwrap()).abs() < 1e-3,
                "{name} e2el"
            );
            // Token-weighted ITL mean = Σ decode time / Σ (N − 1).
            let (num, den) = ok.iter().fold((0.0, 0u64), |(a, d), r| {
                let dec = (r.chunks.last().unwrap().at - r.chunks[0].at).as_secs_f64() * 1000.0;
                (a + dec, d + r.output_tokens() - 1)
            });
            assert!(
                (num / den as f64 - r.itl.as_ref().unwrap().mean.unwrap()).abs() < 1e-6,
                "{name} itl"
            );
            // Output throughput mean = output tokens placed inside the window / window.
            let ws = b.window_start;
            let we = b.window_end;
            let in_window_tokens: u64 = ok
                .iter()
                .flat_map(|r| r.chunks.iter())
                .filter(|c| c.at >= ws && c.at <= we)
                .map(|c| u64::from(c.tokens))
                .sum();
            let rate = in_window_tokens as f64 / b.window().as_secs_f64();
            let file = r.output_throughput_per_s.unwrap();
            assert!(
                (rate - file).abs() / file < 1e-9,
                "{name} out tok/s {rate} vs {file}"
            );
        }
    }
}

#[test]
fn legacy_02_layout_reads_aggregates() {
    let report = guidellm::from_path(&fixture("guidellm-legacy/benchmarks_stripped.json")).unwrap();
    assert_eq!(report.schema, Schema::Legacy02);
    let b = &report.benchmarks[0];
    assert_eq!(b.name, "synchronous");
    let r = &b.result;
    // guidellm's own console for this file: 46 completed, TTFT mean 16.8, median 16.4, p99 21.3.
    assert_eq!(r.successful_requests, Some(46));
    assert_eq!(
        b.counts.reported,
        Some(RequestCounts {
            successful: 46,
            errored: 0,
            incomplete: 1
        })
    );
    let ttft = r.ttft.as_ref().unwrap();
    assert_eq!(fmt(ttft.mean, 1), "16.8");
    assert_eq!(fmt(ttft.median, 1), "16.4");
    assert_eq!(fmt(ttft.percentile(99.0), 1), "21.3");
    // The "Benchmarks Info" table prints the benchmark duration, 30.0 s (the metadata's
    // 30.2 s is run_stats' end − start).
    assert_eq!(fmt(r.duration_ms.map(|d| d / 1000.0), 1), "30.0");
    // The lists were stripped to one request (46 successful, 1 incomplete counted): a sample.
    assert!(b.is_sampled());
    assert_eq!(b.records.len(), 1);
    // 0.2 records have first/last token times but no iteration count: one token per chunk.
    let rec = &b.records[0];
    assert_eq!(rec.chunks.len(), 128);
    assert_eq!(rec.client_output_tokens(), 128);
    let ttft_ms = rec.ttft().unwrap().as_secs_f64() * 1000.0;
    assert!((ttft_ms - 21.281957626342773).abs() < 1e-3, "{ttft_ms}");
}

// ---------------------------------------------------------------------------------------
// Bad input.

fn constant_rate20() -> String {
    std::fs::read_to_string(fixture("guidellm/constant_rate20.json")).unwrap()
}

#[test]
fn truncated_file_is_a_typed_error_with_a_path() {
    let text = constant_rate20();
    for cut in [10, 1000, text.len() / 2, text.len() - 3] {
        let err = guidellm::from_slice(&text.as_bytes()[..cut]).unwrap_err();
        match &err {
            ImportError::Json { kind, path, .. } => {
                assert_eq!(*kind, JsonErrorKind::Truncated, "{err}");
                assert!(path.starts_with('$'), "{path}");
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    let err = guidellm::from_slice(&text.as_bytes()[..text.len() / 2]).unwrap_err();
    assert!(err.to_string().contains("$.benchmarks[0]"), "{err}");
}

#[test]
fn other_schema_version_is_rejected() {
    let text = constant_rate20().replacen("\"version\": 2", "\"version\": 3", 1);
    let err = guidellm::from_slice(text.as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            ImportError::UnsupportedSchema {
                format: "guidellm",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("version 3"));
    let v01 = br#"{"benchmarks": [{"benchmarks": [], "args": {}}]}"#;
    let err = guidellm::from_slice(v01).unwrap_err();
    assert!(
        matches!(err, ImportError::UnsupportedSchema { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("$.benchmarks[0].benchmarks"),
        "{err}"
    );
}

#[test]
fn number_where_string_expected_names_the_path() {
    let text = constant_rate20().replacen("\"status\": \"completed\"", "\"status\": 7", 1);
    let err = guidellm::from_slice(text.as_bytes()).unwrap_err();
    match &err {
        ImportError::Json {
            kind,
            path,
            message,
            ..
        } => {
            assert_eq!(*kind, JsonErrorKind::Data);
            assert_eq!(
                path, "$.benchmarks[0].requests.successful[0].info.status",
                "{err}"
            );
            assert!(message.contains("expected a string"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nan_and_infinity_tokens_are_accepted() {
    // A distribution with NaN/Infinity (guidellm writes them bare) reads as absent values.
    let text = constant_rate20();
    let key = "\"time_per_output_token_ms\": {\"successful\": {\"mean\": ";
    let at = text.find(key).expect("key") + key.len();
    let end = at + text[at..].find(',').unwrap();
    let mut patched = format!("{}NaN{}", &text[..at], &text[end..]);
    patched = patched.replacen("\"max\": ", "\"max\": -Infinity, \"_x\": ", 1);
    let report = guidellm::from_slice(patched.as_bytes()).expect("imports");
    assert_eq!(
        report.benchmarks[0].result.tpot.as_ref().unwrap().mean,
        None
    );
    // And a NaN duration, without a fallback, is an error naming the field.
    let nan_duration = text.replacen("\"duration\": 3.9056270122528076", "\"duration\": NaN", 1);
    assert_ne!(nan_duration, text);
    let without_fallback = nan_duration.replacen(
        "\"measure_end_time\": ",
        "\"measure_end_time\": null, \"_y\": ",
        1,
    );
    let without_fallback =
        without_fallback.replacen("\"end_time\": 1796216105.8296175", "\"end_time\": NaN", 1);
    let err = guidellm::from_slice(without_fallback.as_bytes()).unwrap_err();
    assert!(
        err.to_string().contains("$.benchmarks[0].duration"),
        "{err}"
    );
}

#[test]
fn negative_durations_and_empty_runs_are_errors() {
    let text = constant_rate20();
    let neg = text.replacen("\"duration\": 3.9056270122528076", "\"duration\": -3.9", 1);
    let err = guidellm::from_slice(neg.as_bytes()).unwrap_err();
    assert!(matches!(err, ImportError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("negative"), "{err}");

    // A request that ends before it starts.
    let key = "\"request_end\": ";
    let at = text.find(key).unwrap() + key.len();
    let end = at + text[at..].find(',').unwrap();
    let bad = format!("{}1000.0{}", &text[..at], &text[end..]);
    let err = guidellm::from_slice(bad.as_bytes()).unwrap_err();
    assert!(
        err.to_string()
            .contains("requests.successful[0].info.timings.request_end"),
        "{err}"
    );

    // An absurd iteration count is rejected instead of allocating without bound.
    let huge = text.replacen(
        "\"token_iterations\": 64",
        "\"token_iterations\": 1000000000000",
        1,
    );
    assert_ne!(huge, text);
    let err = guidellm::from_slice(huge.as_bytes()).unwrap_err();
    assert!(
        err.to_string().contains("info.timings.token_iterations"),
        "{err}"
    );

    let empty = br#"{"metadata": {"version": 2}, "benchmarks": []}"#;
    assert!(matches!(
        guidellm::from_slice(empty).unwrap_err(),
        ImportError::Empty { .. }
    ));
    let zero = br#"{"metadata": {"version": 2}, "benchmarks": [{"duration": 1.0, "metrics": {"request_totals": {"successful": 0, "errored": 0, "incomplete": 0, "total": 0}}, "requests": {"successful": [], "errored": [], "incomplete": []}}]}"#;
    let err = guidellm::from_slice(zero).unwrap_err();
    assert!(
        matches!(err, ImportError::Empty { ref path } if path == "$.benchmarks[0]"),
        "{err}"
    );
}

#[test]
fn garbage_never_panics() {
    let text = constant_rate20();
    let bytes = text.as_bytes();
    // Flip bytes at many positions; every outcome must be Ok or a typed error.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..200 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let pos = (state % bytes.len() as u64) as usize;
        let mut copy = bytes.to_vec();
        copy[pos] = b"{}[],:\"0-NI"[(state >> 40) as usize % 11];
        let _ = guidellm::from_slice(&copy);
    }
}

#[test]
fn version_1_layout_of_guidellm_05_reads_the_same_fields() {
    // guidellm 0.5–0.6 (metadata.version 1, top-level `args`) has the same per-benchmark
    // layout minus 0.7/0.8 additions; the importer reads only fields both have.
    let text = constant_rate20()
        .replacen("\"version\": 2", "\"version\": 1", 1)
        .replacen("\"config\": {\"metadata\"", "\"args\": {\"metadata\"", 1)
        .replace("\"first_output_token_iteration\": ", "\"_removed\": ")
        .replace("\"warnings\": [], ", "");
    let v1 = guidellm::from_slice(text.as_bytes()).unwrap();
    assert_eq!(v1.schema, Schema::V1);
    // guidellm 0.4: the same without `metadata`.
    let mut v04: serde_json::Value = serde_json::from_str(&text).unwrap();
    v04.as_object_mut().unwrap().remove("metadata");
    let v04 = guidellm::from_slice(&serde_json::to_vec(&v04).unwrap()).unwrap();
    assert_eq!(v04.schema, Schema::V04);
    assert_eq!(v04.guidellm_version, None);
    assert_eq!(v04.benchmarks[0].records, v1.benchmarks[0].records);
    let v2 = guidellm::from_slice(constant_rate20().as_bytes()).unwrap();
    assert_eq!(v1.benchmarks[0].result, v2.benchmarks[0].result);
    assert_eq!(v1.benchmarks[0].records, v2.benchmarks[0].records);
}

#[test]
fn every_benchmark_renders_as_a_gpustack_block_that_parses_back() {
    use servebench::format::text::{parse_block, render, Style};
    for name in FIXTURES
        .iter()
        .copied()
        .chain(["guidellm-legacy/benchmarks_stripped"])
    {
        let report = guidellm::from_path(&fixture(&format!("{name}.json"))).unwrap();
        for b in &report.benchmarks {
            let text = render(&b.result, Style::Gpustack);
            assert_eq!(text.lines().count(), 32, "{name}:\n{text}");
            assert!(!text.contains("N/A"), "{name}:\n{text}");
            let line = |label: &str| {
                text.lines()
                    .find(|l| l.starts_with(label))
                    .map(|l| l[label.len()..].trim().to_string())
                    .unwrap_or_else(|| panic!("{label}"))
            };
            assert_eq!(
                line("Successful requests:"),
                b.result.successful_requests.unwrap().to_string()
            );
            assert_eq!(
                line("Mean TTFT (ms):"),
                format!("{:.2}", b.result.ttft.as_ref().unwrap().mean.unwrap())
            );
            let back = parse_block(&text).unwrap().result;
            assert_eq!(back.successful_requests, b.result.successful_requests);
            assert_eq!(back.total_output_tokens, b.result.total_output_tokens);
            let e2el = back.e2el.unwrap().mean.unwrap();
            let want = b.result.e2el.as_ref().unwrap().mean.unwrap();
            assert!(
                (e2el - want).abs() <= 5.0,
                "{name}: latency row is seconds with 2 decimals"
            );
        }
    }
}

#[test]
fn several_benchmarks_in_one_file_import_independently() {
    // A sweep or `--override` writes several benchmarks into one report; build one from the
    // two real runs (each benchmark keeps its own window, origin and requests).
    let a: serde_json::Value = serde_json::from_str(&constant_rate20()).unwrap();
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("guidellm/errors.json")).unwrap()).unwrap();
    let mut both = a.clone();
    both["benchmarks"]
        .as_array_mut()
        .unwrap()
        .push(b["benchmarks"][0].clone());
    let report = guidellm::from_slice(&serde_json::to_vec(&both).unwrap()).unwrap();
    assert_eq!(report.benchmarks.len(), 2);
    let single_a = guidellm::from_slice(&serde_json::to_vec(&a).unwrap()).unwrap();
    let single_b = guidellm::from_slice(&serde_json::to_vec(&b).unwrap()).unwrap();
    assert_eq!(report.benchmarks[0], single_a.benchmarks[0]);
    assert_eq!(report.benchmarks[1], single_b.benchmarks[0]);
    assert_eq!(report.benchmarks[1].name, "constant@10.00");
}

#[test]
fn warmup_and_cooldown_window_excludes_listed_requests() {
    // As with `warmup=`/`cooldown=`: guidellm lists every request but counts only those that
    // overlap [measure_start, measure_end]. Narrow the real run's window (requests last about
    // 1.2 s) by 1.5 s at the start and 1.2 s at the end.
    let mut doc: serde_json::Value = serde_json::from_str(&constant_rate20()).unwrap();
    let bench = &mut doc["benchmarks"][0];
    let start = bench["start_time"].as_f64().unwrap() + 1.5;
    let end = bench["end_time"].as_f64().unwrap() - 1.2;
    let expected = bench["requests"]["successful"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["request_end_time"].as_f64().unwrap() >= start
                && r["request_start_time"].as_f64().unwrap() <= end
        })
        .count() as u64;
    assert!(expected < 60 && expected > 30, "{expected}");
    bench["start_time"] = start.into();
    bench["end_time"] = end.into();
    bench["duration"] = (end - start).into();
    bench["scheduler_metrics"]["measure_start_time"] = start.into();
    bench["scheduler_metrics"]["measure_end_time"] = end.into();
    bench["metrics"]["request_totals"]["successful"] = expected.into();
    bench["metrics"]["request_totals"]["total"] = expected.into();
    let report = guidellm::from_slice(&serde_json::to_vec(&doc).unwrap()).unwrap();
    let b = &report.benchmarks[0];
    assert_eq!(b.counts.listed.successful, 60);
    assert_eq!(b.counts.in_window.successful, expected);
    assert!(!b.is_sampled());
    assert_eq!(b.measured_records().len() as u64, expected);
    assert_eq!(b.result.successful_requests, Some(expected));
    assert!((b.window().as_secs_f64() - (end - start)).abs() < 1e-6);
    // Records keep the run's time base: the window starts 1.5 s after the first request.
    assert!(b.window_start >= std::time::Duration::from_millis(1499));
}
