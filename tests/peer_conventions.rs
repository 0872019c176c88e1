//! A peer's file recomputed under that peer's own definitions gives what the peer printed:
//! every figure, the duration and throughputs included, checked against the console text
//! each real client printed (`tests/fixtures/README.md` says how each file was made). Where
//! servebench's own definition gives another figure, the report shows it beside, labelled.

use std::path::{Path, PathBuf};

use servebench::app::{render_report, report_path, report_run, Numbers, ReportOptions};
use servebench::format::text::render_with;
use servebench::load::{attach_aiperf_aggregates, load_path, Run};
use servebench::result::{BenchmarkResult, Convention, Summary};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn load(rel: &str) -> Vec<Run> {
    let path = fixture(rel);
    let mut runs = load_path(&path).unwrap_or_else(|e| panic!("{e}"));
    attach_aiperf_aggregates(&path, &mut runs).unwrap_or_else(|e| panic!("{e}"));
    runs
}

fn recompute_vllm(run: &Run, percentiles: &[f64]) -> (BenchmarkResult, Vec<String>) {
    let opts = ReportOptions {
        numbers: Numbers::Recompute(Convention::Vllm),
        percentiles: Some(percentiles.to_vec()),
        goodput: None,
    };
    let b = report_run(run, &opts).unwrap_or_else(|e| panic!("{e}"));
    (b.result, b.notes)
}

/// The `n`-th (0-based) "Serving Benchmark Result" block of a console text, its rules
/// included, trailing spaces kept.
fn console_block(text: &str, n: usize) -> String {
    let start = text
        .match_indices("============ Serving Benchmark Result ============")
        .nth(n)
        .unwrap_or_else(|| panic!("no block {n}"))
        .0;
    let rest = &text[start..];
    let end = rest
        .find("\n==================================================")
        .unwrap();
    rest[..end + "\n==================================================".len()].to_string()
}

/// The value a `Label:   value` row of a vLLM-style block prints.
fn row<'a>(block: &'a str, label: &str) -> &'a str {
    block
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{block}"))
        .trim()
}

fn two(x: Option<f64>) -> String {
    format!("{:.2}", x.unwrap())
}

/// `vllm bench serve` 0.33.0: the recomputed block, in the rows vLLM printed, is the very
/// block vLLM printed — duration and throughputs included (vLLM's `duration`, its wall clock
/// around the run); servebench's own duration (first send → last response) is shown beside.
#[test]
fn vllm_recompute_is_the_block_vllm_printed() {
    for (file, console) in [
        ("vllm-0.33/result.json", "vllm-0.33/console.txt"),
        (
            "accuracy-clients/vllm-result.json",
            "accuracy-clients/vllm-console.txt",
        ),
    ] {
        vllm_file_recomputes_to_its_console(file, console);
    }
}

/// `vllm bench serve` 0.33.0 against the example server on `/v1/embeddings`
/// (`--backend openai-embeddings`, 4 texts per request) and with one 512 × 512 image per
/// chat request (`--dataset-name random-mm`): each file recomputes to the block vLLM
/// printed, byte for byte — the pooling block with its `Input throughput (inputs/s)` row
/// and E2E latency only.
#[test]
fn vllm_pooling_and_random_mm_recompute_to_the_blocks_vllm_printed() {
    for (file, console) in [
        (
            "vllm-0.33-pooling/embeddings.json",
            "vllm-0.33-pooling/embeddings-console.txt",
        ),
        (
            "vllm-0.33-pooling/random-mm.json",
            "vllm-0.33-pooling/random-mm-console.txt",
        ),
    ] {
        vllm_file_recomputes_to_its_console(file, console);
    }
    let run = &load("vllm-0.33-pooling/embeddings.json")[0];
    let records = &run.records.as_ref().unwrap().all;
    assert_eq!(records.len(), 10);
    assert!(records
        .iter()
        .all(|r| r.inputs == Some(4) && r.chunks.is_empty()));
}

fn vllm_file_recomputes_to_its_console(file: &str, console: &str) {
    let console = std::fs::read_to_string(fixture(console)).unwrap();
    let run = &load(file)[0];
    let (ours, notes) = recompute_vllm(run, &[99.0]);
    assert_eq!(ours.duration_ms, run.result.duration_ms);
    assert_eq!(
        ours.output_throughput_per_s,
        run.result.output_throughput_per_s
    );
    assert_eq!(
        ours.request_throughput_per_s,
        run.result.request_throughput_per_s
    );
    let printed = console_block(&console, 0);
    assert_eq!(
        render_with(&ours, run.layout.as_ref().unwrap()),
        printed,
        "recomputed vs printed"
    );
    // vLLM saves send times for generation runs, not for pooling runs: only with them is
    // servebench's own duration (first send → last response) shown beside vLLM's.
    if run.records.as_ref().is_some_and(|r| r.send_times) {
        let own = notes
            .iter()
            .find(|n| n.starts_with("servebench's definition: Benchmark duration"))
            .unwrap_or_else(|| panic!("{notes:?}"));
        assert!(own.contains("vLLM's duration"), "{own}");
    } else {
        assert!(notes.is_empty(), "{notes:?}");
    }
    // No note names a vLLM version that the fixture contradicts.
    assert!(notes.iter().all(|n| !n.contains("0.34")), "{notes:?}");
}

/// SGLang `bench_serving` 0.5.23: duration and every throughput are SGLang's exactly (its
/// `duration`); TTFT and ITL round to what it printed; TPOT is SGLang's definition with a
/// latency the file does not keep, and the note says so.
#[test]
fn sglang_recompute_gives_what_sglang_printed() {
    let console = std::fs::read_to_string(fixture("sglang-0.5.23/console.txt")).unwrap();
    let block = console_block(&console, 0);
    let run = &load("sglang-0.5.23/results.jsonl")[0];
    let (ours, notes) = recompute_vllm(run, &[90.0, 95.0, 99.0]);
    let t = &run.result;
    assert_eq!(ours.duration_ms, t.duration_ms);
    for (what, a, b) in [
        (
            "req/s",
            ours.request_throughput_per_s,
            t.request_throughput_per_s,
        ),
        (
            "output tok/s",
            ours.output_throughput_per_s,
            t.output_throughput_per_s,
        ),
        (
            "total tok/s",
            ours.total_token_throughput_per_s,
            t.total_token_throughput_per_s,
        ),
    ] {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!((a - b).abs() <= 1e-12 * b, "{what}: {a} vs {b}");
    }
    assert_eq!(
        two(ours.duration_s()),
        row(&block, "Benchmark duration (s):")
    );
    assert_eq!(
        two(ours.request_throughput_per_s),
        row(&block, "Request throughput (req/s):")
    );
    assert_eq!(
        two(ours.output_throughput_per_s),
        row(&block, "Output token throughput (tok/s):")
    );
    assert_eq!(
        two(ours.total_token_throughput_per_s),
        row(&block, "Total token throughput (tok/s):")
    );
    assert_eq!(
        two(ours.peak_output_throughput_per_s),
        row(&block, "Peak output token throughput (tok/s):")
    );
    assert_eq!(
        format!("{:.0}", ours.peak_concurrent_requests.unwrap()),
        row(&block, "Peak concurrent requests:")
    );
    let stats = |s: &Summary, name: &str| {
        assert_eq!(two(s.mean), row(&block, &format!("Mean {name} (ms):")));
        assert_eq!(two(s.median), row(&block, &format!("Median {name} (ms):")));
        for p in [90.0, 95.0, 99.0] {
            assert_eq!(
                two(s.percentile(p)),
                row(&block, &format!("P{p} {name} (ms):")),
                "{name} p{p}"
            );
        }
    };
    stats(ours.ttft.as_ref().unwrap(), "TTFT");
    stats(ours.itl.as_ref().unwrap(), "ITL");
    stats(ours.tpot.as_ref().unwrap(), "TPOT");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("TPOT: SGLang's is (latency − TTFT)")),
        "{notes:?}"
    );
    // The note on missing send times names the tool, not a wrong vLLM version.
    let peaks = notes
        .iter()
        .find(|n| n.starts_with("Peak output token throughput and Peak concurrent"))
        .unwrap();
    assert!(peaks.contains("sglang saves none"), "{peaks}");
    assert!(notes.iter().all(|n| !n.contains("0.34")), "{notes:?}");
}

/// The row cells of aiperf's console table whose metric column is `label`.
fn aiperf_row(console: &str, label: &str) -> Vec<String> {
    console
        .lines()
        .find_map(|l| {
            let cells: Vec<&str> = l.split('│').map(str::trim).collect();
            (cells.get(1) == Some(&label)).then(|| {
                cells[2..cells.len() - 1]
                    .iter()
                    .map(|c| c.to_string())
                    .collect()
            })
        })
        .unwrap_or_else(|| panic!("no aiperf row {label:?}"))
}

/// `1,234.57`: aiperf's printed number.
fn aiperf_num(x: f64) -> String {
    let s = format!("{x:.2}");
    let (int, frac) = s.split_once('.').unwrap();
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}.{frac}")
}

/// aiperf 0.13.0: its per-request export recomputed with aiperf's definitions (vLLM's, and
/// aiperf's observation window from its aggregate export beside it) gives every figure
/// aiperf printed, throughputs included; servebench's own duration is shown beside.
#[test]
fn aiperf_recompute_gives_what_aiperf_printed() {
    for dir in ["aiperf", "accuracy-clients/aiperf"] {
        aiperf_dir_recomputes_to_its_console(dir);
    }
}

fn aiperf_dir_recomputes_to_its_console(dir: &str) {
    let console =
        std::fs::read_to_string(fixture(&format!("{dir}/profile_export_console.txt"))).unwrap();
    let run = &load(&format!("{dir}/profile_export.jsonl"))[0];
    let (ours, notes) = recompute_vllm(run, &[50.0, 90.0, 99.0]);
    // Columns: avg, min, max, p99, p90, p50, std.
    let check = |label: &str, s: &Summary| {
        let cells = aiperf_row(&console, label);
        let ours = [
            s.mean,
            s.min,
            s.max,
            s.percentile(99.0),
            s.percentile(90.0),
            s.percentile(50.0),
        ];
        for (i, v) in ours.iter().enumerate() {
            assert_eq!(aiperf_num(v.unwrap()), cells[i], "{label} column {i}");
        }
    };
    check("Time to First Token (ms)", ours.ttft.as_ref().unwrap());
    check("Request Latency (ms)", ours.e2el.as_ref().unwrap());
    check("Inter Token Latency (ms)", ours.tpot.as_ref().unwrap());
    for (label, v) in [
        (
            "Output Token Throughput (tokens/sec)",
            ours.output_throughput_per_s,
        ),
        (
            "Request Throughput (requests/sec)",
            ours.request_throughput_per_s,
        ),
        (
            "Request Count (requests)",
            ours.successful_requests.map(|n| n as f64),
        ),
    ] {
        assert_eq!(
            aiperf_num(v.unwrap()),
            aiperf_row(&console, label)[0],
            "{label}"
        );
    }
    // And to the last digits against aiperf's JSON.
    let t = &run.result;
    for (a, b) in [
        (ours.output_throughput_per_s, t.output_throughput_per_s),
        (ours.request_throughput_per_s, t.request_throughput_per_s),
    ] {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
    }
    let own = notes
        .iter()
        .find(|n| n.starts_with("servebench's definition: Benchmark duration"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert!(own.contains("aiperf's observation window"), "{own}");
}

/// guidellm 0.8.1 with `--profile kind=concurrent,streams=8`: the block's "Maximum request
/// concurrency" (GPUStack's mapping) is the measured maximum; the configured streams are
/// kept apart and named beside it, in both `report` and `report --convention vllm` (where
/// the row is the configured cap, vLLM's meaning).
#[test]
fn guidellm_configured_and_measured_concurrency_are_apart_and_named() {
    let path = fixture("guidellm-0.8.1/benchmarks.json");
    let run = &load("guidellm-0.8.1/benchmarks.json")[0];
    assert_eq!(run.result.meta.configured_concurrency, Some(8));
    let measured = run.result.max_concurrency.unwrap();
    let text = render_report(&report_path(&path, &ReportOptions::default()).unwrap());
    assert!(
        text.contains(&format!(
            "note: Maximum request concurrency ({measured}) is the measured maximum of \
             concurrent requests (GPUStack's mapping of guidellm's figure); the configured \
             concurrency was 8 (guidellm's concurrent streams)"
        )),
        "{text}"
    );
    let vllm = report_path(
        &path,
        &ReportOptions {
            numbers: Numbers::Recompute(Convention::Vllm),
            ..ReportOptions::default()
        },
    )
    .unwrap();
    assert_eq!(vllm[0].result.max_concurrency, Some(8));
    let text = render_report(&vllm);
    assert!(
        text.contains("\nMaximum request concurrency:             8 "),
        "{text}"
    );
    assert!(!text.contains("no client cap"), "{text}");
}

/// The cells of guidellm's console row for `strategy` in the table whose header line holds
/// `header` (the first such table; guidellm prints its summary twice).
fn guidellm_cells(console: &str, header: &str, strategy: &str) -> Vec<String> {
    let lines: Vec<&str> = console.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(header))
        .unwrap_or_else(|| panic!("no table {header:?}"));
    let row = lines[at..]
        .iter()
        .find(|l| l.starts_with(&format!("| {strategy} ")))
        .unwrap();
    row.split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// guidellm 0.8.1: its records recomputed with guidellm's definitions give every figure
/// its console printed (one decimal): request latency, TTFT, ITL, TPOT (mean, median,
/// p95), and the request, output and total token rates.
#[test]
fn guidellm_recompute_gives_what_guidellm_printed() {
    for (file, console) in [
        (
            "guidellm-0.8.1/benchmarks.json",
            "guidellm-0.8.1/console.txt",
        ),
        (
            "accuracy-clients/guidellm.json",
            "accuracy-clients/guidellm-console.txt",
        ),
    ] {
        let console = std::fs::read_to_string(fixture(console)).unwrap();
        let run = &load(file)[0];
        let opts = ReportOptions {
            numbers: Numbers::Recompute(Convention::Guidellm),
            percentiles: None,
            goodput: None,
        };
        let ours = report_run(run, &opts).unwrap().result;
        let one = |x: Option<f64>| format!("{:.1}", x.unwrap());
        let lat = guidellm_cells(&console, "| Request Latency", &run.name);
        // Request latency (s): "mean ± std", median, p95 (a '*' marks a p95 guidellm flags).
        let e2e_s = |x: Option<f64>| x.map(|ms| ms / 1000.0);
        let e = ours.e2el.as_ref().unwrap();
        assert!(
            lat[0].starts_with(&format!("{} ± ", one(e2e_s(e.mean)))),
            "{file}: {lat:?}"
        );
        assert_eq!(lat[1], one(e2e_s(e.median)), "{file}");
        assert_eq!(
            lat[2].trim_end_matches('*'),
            one(e2e_s(e.percentile(95.0))),
            "{file}"
        );
        let t = ours.ttft.as_ref().unwrap();
        assert!(
            lat[3].starts_with(&format!("{} ± ", one(t.mean))),
            "{file}: {lat:?}"
        );
        assert_eq!(lat[4], one(t.median), "{file}");
        assert_eq!(
            lat[5].trim_end_matches('*'),
            one(t.percentile(95.0)),
            "{file}"
        );
        for (col, s) in [
            (9, ours.itl.as_ref().unwrap()),
            (12, ours.tpot.as_ref().unwrap()),
        ] {
            assert_eq!(lat[col], one(s.mean), "{file} col {col}");
            assert_eq!(lat[col + 1], one(s.median), "{file} col {col}");
            assert_eq!(
                lat[col + 2].trim_end_matches('*'),
                one(s.percentile(95.0)),
                "{file}"
            );
        }
        let rates = guidellm_cells(&console, "| Requests             |", &run.name);
        // Concurrency median and mean, then requests, input, output, total tokens per second.
        assert_eq!(rates[2], one(ours.request_throughput_per_s), "{file}");
        assert_eq!(rates[4], one(ours.output_throughput_per_s), "{file}");
        assert_eq!(rates[5], one(ours.total_token_throughput_per_s), "{file}");
        assert_eq!(ours.duration_ms, run.result.duration_ms, "{file}");
    }
}
