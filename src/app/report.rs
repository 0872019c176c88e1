//! `servebench report FILE`: print every benchmark of an imported file as a "Serving
//! Benchmark Result" block.
//!
//! * [`Numbers::File`] (the default) prints the file's own aggregates: guidellm reports as
//!   GPUStack-style blocks (GPUStack's field mapping, see [`crate::import::guidellm`]), vLLM files as
//!   the report `vllm bench serve` printed (same rows, percentiles and spelling), SGLang
//!   files in vLLM style.
//! * [`Numbers::Recompute`]`(Convention::Vllm)` recomputes every row from the per-request
//!   records with vLLM's definitions ([`crate::metrics::compute`]) and prints vLLM style.
//!   Rows the records cannot support faithfully are listed in [`ReportBlock::notes`]. On a
//!   file of a tool that follows vLLM's definitions (vLLM, SGLang, aiperf) every figure
//!   uses that tool's own definition, the duration included ([`crate::load::Records::tool_duration_s`]:
//!   vLLM's and SGLang's `duration`, aiperf's observation window), so that the block equals
//!   the one the tool printed; where servebench's own definition gives another figure, a
//!   note shows it beside, labelled (`servebench's definition: …`).
//! * [`Numbers::Recompute`]`(Convention::Guidellm)` recomputes with guidellm's definitions
//!   and prints GPUStack style. On a guidellm file this must print the same block as the
//!   default — the check that the recomputation is right.
//!
//! ```
//! use servebench::app::{report_bytes, render_report, Numbers, ReportOptions};
//! let bytes = std::fs::read("tests/fixtures/guidellm/constant_rate20.json").unwrap();
//! let blocks = report_bytes(&bytes, &ReportOptions::default()).unwrap();
//! let text = render_report(&blocks);
//! // guidellm's numbers under the block's vLLM wording: the convention line comes first.
//! assert!(text.starts_with("constant@20.00\n\nMetric convention: guidellm"));
//! assert!(text.contains("\n============ Serving Benchmark Result ============\n"));
//! assert!(text.contains("\nSuccessful requests:                     60\n"));
//! ```

use std::path::Path;

use crate::format::text::{render, render_with, Layout, Style};
use crate::import::ImportError;
use crate::load::{self, Format, LoadError, LoadErrorKind, Run};
use crate::metrics::{compute, exact_figures, MetricsOptions, Slo};
use crate::result::{BenchmarkResult, Convention};

/// Which numbers a report prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Numbers {
    /// The file's own aggregates.
    #[default]
    File,
    /// Recomputed from the per-request records under a convention.
    Recompute(Convention),
}

/// Options of [`report_runs`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportOptions {
    /// File aggregates or a recomputation.
    pub numbers: Numbers,
    /// Percentiles for recomputed vLLM-style blocks (default `[99]`, vLLM's default).
    pub percentiles: Option<Vec<f64>>,
    /// Goodput SLOs for recomputed blocks (vLLM's `--goodput`); `None`: no goodput row.
    pub goodput: Option<Slo>,
}

/// One block of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportBlock {
    /// The benchmark's name (`constant@20.00`, `openai`, `sglang (line 2)`).
    pub name: String,
    /// The numbers.
    pub result: BenchmarkResult,
    /// The style to print in.
    pub style: Style,
    /// How the numbers were printed, when the file tells (a text block, a `servebench
    /// parse` block, vLLM's aggregates); followed when it is of [`ReportBlock::style`].
    pub layout: Option<Layout>,
    /// Rows that could not be computed (or only approximately) from what the file holds.
    pub notes: Vec<String>,
    /// The run's steady state (MSER-5) with the figures over it beside the whole run's,
    /// when the file holds request records with send times
    /// ([`crate::format::observe::steady_line`]).
    pub steady: Option<String>,
    /// The p99 TTFT's drift over 1-minute windows, for a run long enough to have
    /// [`crate::noise::MIN_DRIFT_WINDOWS`] of them ([`crate::format::drift_line`]).
    pub drift: Option<String>,
    /// A staged run's figures per stage: phase, ramp step or fill
    /// ([`crate::format::stage_line`]); and a cold run's first requests apart from its steady
    /// state ([`crate::format::cold_line`]).
    pub stages: Vec<String>,
}

impl ReportBlock {
    /// The block's text (no trailing newline).
    pub fn render(&self) -> String {
        match &self.layout {
            Some(layout) if layout.style == self.style => render_with(&self.result, layout),
            _ => render(&self.result, self.style),
        }
    }
}

/// Report on a file (see the module docs); the first run that cannot be reported on is
/// the error.
pub fn report_path(path: &Path, opts: &ReportOptions) -> Result<Vec<ReportBlock>, LoadError> {
    let mut runs = load::load_path(path)?;
    load::attach_aiperf_aggregates(path, &mut runs)?;
    collect(&path.display().to_string(), &runs, opts)
}

/// [`report_path`] on bytes already in memory.
pub fn report_bytes(bytes: &[u8], opts: &ReportOptions) -> Result<Vec<ReportBlock>, LoadError> {
    let runs = load::load("input", bytes)?;
    collect("input", &runs, opts)
}

fn collect(file: &str, runs: &[Run], opts: &ReportOptions) -> Result<Vec<ReportBlock>, LoadError> {
    report_runs(runs, opts)
        .into_iter()
        .zip(runs)
        .map(|(b, run)| {
            b.map_err(|e| {
                LoadError::new(file, Some(run.provenance.format), LoadErrorKind::Import(e))
            })
        })
        .collect()
}

/// One block per run, or why that run cannot be reported on as asked (a recomputation
/// from a run without records, or guidellm's definitions without send times): one run's
/// failure does not hide the others.
pub fn report_runs(runs: &[Run], opts: &ReportOptions) -> Vec<Result<ReportBlock, ImportError>> {
    runs.iter().map(|r| report_run(r, opts)).collect()
}

/// The report block of one run.
///
/// # Errors
///
/// [`ImportError::NoRecords`] when a recomputation is asked of a run without records;
/// [`ImportError::CannotRecompute`] for guidellm's definitions on records without send
/// times (SGLang's): its duration, rates and concurrency would be made up.
pub fn report_run(run: &Run, opts: &ReportOptions) -> Result<ReportBlock, ImportError> {
    let format = run.provenance.format;
    let Numbers::Recompute(convention) = opts.numbers else {
        let mut result = run.result.clone();
        let style = match (&run.layout, result.meta.convention) {
            (Some(l), _) => l.style,
            (None, Some(Convention::Guidellm)) => Style::Gpustack,
            (None, Some(Convention::Vllm)) => Style::Vllm,
            (None, None) if matches!(format, Format::Text | Format::ServebenchJson) => {
                Style::Gpustack
            }
            (None, None) => Style::Vllm,
        };
        match (&run.records, format) {
            // No sampled request: no exact figures (they would all be zeros).
            (Some(recs), _) if recs.measured().is_empty() => {}
            (Some(recs), Format::GuidellmJson | Format::GuidellmYaml) => {
                result.exact = Some(exact_figures(&recs.measured()));
            }
            // vLLM's --save-detailed with start_times: the exact figures beside vLLM's.
            (Some(recs), Format::VllmJson) if recs.send_times && result.exact.is_none() => {
                result.exact = Some(exact_figures(&recs.measured()));
            }
            _ => {}
        }
        let mut notes = peak_notes(&result);
        notes.extend(concurrency_note(&result));
        if let (Format::AiperfJsonl, Some(recs)) = (format, &run.records) {
            if recs.tool_duration_s.is_some() {
                notes.push(format!(
                    "aiperf's own figures, from {} beside this file",
                    load::AIPERF_AGGREGATE_FILE
                ));
            }
        }
        let (steady, drift, stages) = over_time(run);
        return Ok(ReportBlock {
            name: run.name.clone(),
            result,
            style,
            layout: run.layout.clone(),
            notes,
            steady,
            drift,
            stages,
        });
    };
    let Some(records) = &run.records else {
        return Err(ImportError::NoRecords {
            run: run.name.clone(),
            hint: no_records_hint(format).into(),
        });
    };
    let guidellm_file = matches!(format, Format::GuidellmJson | Format::GuidellmYaml);
    // A file whose request lists are empty (guidellm run with `--sample-requests 0`) has
    // nothing to recompute from: every figure would print as a zero.
    if records.all.is_empty() || records.measured().is_empty() {
        return Err(ImportError::NoRecords {
            run: run.name.clone(),
            hint: empty_records_hint(format, records.sampled_of),
        });
    }
    if convention == Convention::Guidellm && !records.send_times {
        return Err(ImportError::CannotRecompute {
            run: run.name.clone(),
            reason: format!(
                "guidellm's definitions need each request's send time and {} saves none \
                 (every request would start at 0 s: the duration would be the longest \
                 request and the concurrency every request); use --convention vllm",
                format.tool()
            ),
        });
    }
    let mut notes = Vec::new();
    if let Some(of) = records.sampled_of.filter(|_| guidellm_file) {
        notes.push(format!(
            "the file lists {} of the {of} requests its metrics count (guidellm sampled them): \
             every recomputed row covers that sample only",
            records.measured().len()
        ));
    }
    notes.extend(records.notes.iter().cloned());
    let mut m = MetricsOptions::new(convention);
    if let (Convention::Vllm, Some(p)) = (convention, &opts.percentiles) {
        m.percentiles = p.clone();
    }
    m.goodput = opts.goodput;
    let window_len = records.window.map(|(a, b)| b.saturating_sub(a));
    let mut r = match convention {
        Convention::Vllm => {
            // vLLM's duration is the run's wall time; guidellm's comparable figure is the
            // measured window; a tool that saves its own duration is divided by it.
            m.duration = window_len;
            m.duration_s = records.tool_duration_s;
            if !records.send_times && crate::metrics::answered_whole(&records.all) {
                // Whole answers have no tokens over time: no peak to speak of.
            } else if !records.send_times {
                notes.push(format!(
                    "Peak output token throughput and Peak concurrent requests: the file has no \
                     send times ({} saves none), so the buckets are not the run's",
                    format.tool()
                ));
            } else if let Some(tool) = records.tool_duration_s {
                notes.extend(own_duration_note(&records.measured(), tool, format));
            } else if format == Format::AiperfJsonl {
                notes.push(format!(
                    "Benchmark duration and every throughput: over aiperf's benchmark_duration \
                     (first request → last response); aiperf divides by its profiling phase's \
                     observation window, which only {} (beside this file) holds",
                    load::AIPERF_AGGREGATE_FILE
                ));
            }
            if format == Format::SglangJsonl {
                notes.push(
                    "TPOT: SGLang's is (latency − TTFT)/(output tokens − 1) with its latency \
                     running to the [DONE] event, which the file does not save per request; \
                     recomputed with the last token's time instead (a little smaller)"
                        .into(),
                );
            }
            if guidellm_file {
                // Whole answers have no token iterations to reconstruct.
                if !crate::metrics::answered_whole(&records.all) {
                    notes.extend(GUIDELLM_VLLM_NOTES.iter().map(|n| n.to_string()));
                }
                let no_cap = run.result.meta.configured_concurrency.is_none();
                match (no_cap, opts.goodput.is_some()) {
                    (true, true) => notes.push(
                        "Maximum request concurrency: the file records no client cap in vLLM's \
                         sense"
                            .into(),
                    ),
                    (true, false) => notes.push(
                        "Maximum request concurrency and Request goodput: the file records no \
                         client cap in vLLM's sense and no SLOs (give --goodput)"
                            .into(),
                    ),
                    (false, true) => {}
                    (false, false) => notes
                        .push("Request goodput: the file records no SLOs (give --goodput)".into()),
                }
            }
            compute(&records.measured(), &m)
        }
        Convention::Guidellm => {
            m.duration = window_len;
            m.window = records.window;
            m.time_origin_s = records.time_origin_unix_s;
            compute(&records.all, &m)
        }
    };
    carry_meta(&mut r, &run.result, convention, guidellm_file);
    notes.extend(peak_notes(&r));
    notes.extend(concurrency_note(&r));
    let (steady, drift, stages) = over_time(run);
    Ok(ReportBlock {
        name: run.name.clone(),
        result: r,
        style: match convention {
            Convention::Vllm => Style::Vllm,
            Convention::Guidellm => Style::Gpustack,
        },
        layout: None,
        notes,
        steady,
        drift,
        stages,
    })
}

/// servebench's own duration beside the tool's: first send → last response over the
/// records, and the output throughput over it, when it differs from the tool's `duration`
/// (vLLM's wall clock around the run, aiperf's observation window).
fn own_duration_note(
    records: &[crate::record::RequestRecord],
    tool_s: f64,
    format: Format,
) -> Option<String> {
    let own = compute(records, MetricsOptions::new(Convention::Vllm));
    let own_s = own.duration_ms? / 1000.0;
    if (own_s - tool_s).abs() <= 1e-9 * tool_s.max(1.0) || tool_s <= 0.0 {
        return None;
    }
    let tool_def = match format {
        Format::AiperfJsonl => "aiperf's observation window",
        Format::SglangJsonl => "SGLang's duration",
        _ => "vLLM's duration, its wall clock around the run",
    };
    let output = own
        .output_throughput_per_s
        .map(|t| {
            format!(
                "; output throughput over it {t:.2} tok/s ({:+.2} %)",
                (tool_s / own_s - 1.0) * 100.0
            )
        })
        .unwrap_or_default();
    Some(format!(
        "servebench's definition: Benchmark duration {own_s:.4} s, first send → last response \
         over the records (above: {tool_def}, {tool_s:.4} s){output}"
    ))
}

/// Which concurrency a block's "Maximum request concurrency" is, when the file also holds
/// the configured one: under guidellm's figures (GPUStack's mapping) the row is guidellm's
/// *measured* maximum of concurrent requests, not the streams it was configured with.
fn concurrency_note(r: &BenchmarkResult) -> Option<String> {
    let configured = r.meta.configured_concurrency?;
    match r.meta.convention {
        Some(Convention::Guidellm) => {
            let measured = r.max_concurrency?;
            Some(format!(
                "Maximum request concurrency ({measured}) is the measured maximum of concurrent \
                 requests (GPUStack's mapping of guidellm's figure); the configured concurrency \
                 was {configured} (guidellm's concurrent streams)"
            ))
        }
        _ => None,
    }
}

/// Notes on the two peaks a block prints when they do not mean what their rows suggest:
/// vLLM's "Peak concurrent requests" (requests active during any part of a 1-second bucket)
/// above the client's cap or above the exact peak in flight, and guidellm's instantaneous
/// "Peak output token throughput" above the most tokens any 1-second window holds.
fn peak_notes(r: &BenchmarkResult) -> Vec<String> {
    let mut notes = Vec::new();
    let exact = r.exact.as_ref();
    if let (Some(Convention::Vllm), Some(peak)) = (r.meta.convention, r.peak_concurrent_requests) {
        let in_flight = exact.and_then(|e| e.peak_in_flight);
        let above_cap = r.max_concurrency.is_some_and(|c| peak > c as f64);
        let above_exact = in_flight.is_some_and(|n| peak > n as f64);
        if above_cap || above_exact {
            let exact = in_flight
                .map(|n| format!("; the most in flight at one instant was {n}"))
                .unwrap_or_default();
            notes.push(format!(
                "Peak concurrent requests ({peak:.0}) is vLLM's per-second figure: every request \
                 active at any time during a 1-second bucket, not the number in flight at one \
                 instant{exact}"
            ));
        }
    }
    if let (Some(Convention::Guidellm), Some(peak), Some(window)) = (
        r.meta.convention,
        r.peak_output_throughput_per_s,
        exact.and_then(|e| e.peak_output_tokens_per_s),
    ) {
        if peak > window * 1.02 + 1.0 {
            notes.push(format!(
                "Peak output token throughput ({peak:.2} tok/s) is guidellm's instantaneous \
                 rate: no 1-second window of the run holds more than {window:.0} output tokens, \
                 so it was never sustained for a second"
            ));
        }
    }
    notes
}

const GUIDELLM_VLLM_NOTES: [&str; 2] = [
    "Inter-token latency: guidellm keeps no per-chunk timestamps; ITL uses its \
     evenly spaced reconstruction of each request's token iterations",
    "Peak output token throughput and Peak concurrent requests: 1-second buckets \
     over the reconstructed iterations (vLLM counts chunks)",
];

/// How to get records, per format.
/// Why a file that lists requests lists none (inside its measured window).
fn empty_records_hint(format: Format, sampled_of: Option<u64>) -> String {
    match (format, sampled_of) {
        (Format::GuidellmJson | Format::GuidellmYaml, Some(n)) if n > 0 => format!(
            "the file lists none of the {n} requests its metrics count: guidellm saved no \
             samples (run it with a --sample-requests above 0, or without the flag)"
        ),
        (Format::GuidellmJson | Format::GuidellmYaml, _) => "the file's request lists are \
            empty: guidellm saved no samples (run it with a --sample-requests above 0, or \
            without the flag)"
            .into(),
        _ => "the file lists no request inside its measured window".into(),
    }
}
/// What a run's records say over time, each computed from one copy of its measured
/// records: the steady-state line, the drift line (a run long enough for
/// [`crate::noise::MIN_DRIFT_WINDOWS`] windows) and a staged run's per-stage lines. Nothing
/// without records with send times.
fn over_time(run: &Run) -> (Option<String>, Option<String>, Vec<String>) {
    let Some(records) = run.records.as_ref().filter(|r| r.send_times) else {
        return (None, None, Vec::new());
    };
    let measured = records.measured();
    let steady = crate::observe::steady_figures(&measured)
        .map(|(w, window, whole)| crate::format::observe::steady_line(&w, &window, &whole));
    let drift =
        crate::noise::ttft_drift(&measured, DRIFT_WINDOW).map(|d| crate::format::drift_line(&d));
    let mut stages = stage_lines(&records.stages, &measured);
    if let Some(cold) = records.cold_start {
        let figures = crate::observe::cold_figures(&measured);
        stages.extend(figures.map(|c| crate::format::cold_line(Some(cold.healthy_after_s), &c)));
    }
    (steady, drift, stages)
}

/// A staged run's per-stage lines: the requests sent inside each stage's span (from the
/// run's first send), with vLLM's figures over them.
fn stage_lines(
    stages: &[crate::observe::Stage],
    measured: &[crate::record::RequestRecord],
) -> Vec<String> {
    stages
        .iter()
        .zip(crate::observe::stage_figures(stages, measured))
        .map(|(stage, (sent, figures))| crate::format::stage_line(stage, sent, &figures))
        .collect()
}

/// The window of [`over_time`]'s drift test.
const DRIFT_WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

fn no_records_hint(format: Format) -> &'static str {
    match format {
        Format::VllmJson => "the file was saved without --save-detailed",
        Format::SglangJsonl => "the file was saved without --output-details",
        Format::GuidellmCsv => "guidellm's CSV holds aggregates only; use its JSON or YAML report",
        Format::AiperfJson | Format::AiperfCsv => {
            "aiperf's aggregate exports hold no requests; use profile_export.jsonl"
        }
        Format::Text | Format::ServebenchJson => {
            "a report block holds aggregates only; `servebench bench --output` writes a run file with every record"
        }
        _ => "the file holds aggregates only",
    }
}

/// The recomputed result keeps the run's identity (label, model, engine, source) and, for
/// vLLM's definitions, its configuration rows.
fn carry_meta(
    r: &mut BenchmarkResult,
    file: &BenchmarkResult,
    convention: Convention,
    guidellm_file: bool,
) {
    r.meta.label.clone_from(&file.meta.label);
    r.meta.model.clone_from(&file.meta.model);
    r.meta.source.clone_from(&file.meta.source);
    r.meta.configured_concurrency = file.meta.configured_concurrency;
    // Figures from the server's counters and the GPU's telemetry, not from the records: the
    // same under either convention, so a recomputation keeps them as measured.
    if r.energy.is_none() {
        r.energy.clone_from(&file.energy);
    }
    if let Some(saved) = &file.spec_decode {
        let per_chunk = r.spec_decode.as_ref().and_then(|s| s.tokens_per_chunk);
        let mut s = saved.clone();
        s.tokens_per_chunk = per_chunk.or(saved.tokens_per_chunk);
        r.spec_decode = Some(s);
    }
    if guidellm_file && convention == Convention::Vllm {
        // vLLM's row is the client's cap: guidellm's configured streams, when it had some.
        r.max_concurrency = file.meta.configured_concurrency;
    }
    if !guidellm_file {
        r.meta.engine.clone_from(&file.meta.engine);
        r.meta.profile.clone_from(&file.meta.profile);
        if convention == Convention::Vllm {
            // vLLM prints its client cap there: the profile's, else a vLLM-convention
            // result's (a guidellm-convention result holds the observed peak instead).
            let cap = file.meta.profile.as_ref().and_then(|p| p.max_concurrency);
            r.max_concurrency = cap.or(match file.meta.convention {
                Some(Convention::Guidellm) => None,
                _ => file.max_concurrency,
            });
            r.request_rate_configured = file.request_rate_configured;
        }
    }
}

/// All blocks as text: each block's name, a blank line, the block, its notes (`note: …`),
/// blocks separated by a blank line; ends with a newline.
pub fn render_report(blocks: &[ReportBlock]) -> String {
    let mut out = String::new();
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&b.name);
        out.push_str("\n\n");
        // The same first line as `bench`'s: the block's labels are vLLM's wording.
        if let Some(note) = b
            .result
            .meta
            .convention
            .and_then(crate::format::labels::convention_note)
        {
            out.push_str(note);
            out.push('\n');
        }
        out.push_str(&b.render());
        out.push('\n');
        for n in &b.notes {
            out.push_str("note: ");
            out.push_str(n);
            out.push('\n');
        }
        if let Some(line) = exact_line(b) {
            out.push_str(&line);
            out.push('\n');
        }
        for line in b.steady.iter().chain(&b.drift).chain(&b.stages) {
            out.push_str(line);
            out.push('\n');
        }
        for line in crate::format::production::lines(&b.result) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// servebench's own figures beside the block's (`exact: …`), when the block has them.
fn exact_line(b: &ReportBlock) -> Option<String> {
    let ex = b.result.exact.as_ref()?;
    let mut parts = Vec::new();
    if let Some(p) = ex.peak_output_tokens_per_s {
        parts.push(format!("peak output {p:.0} tok in any 1-s window"));
    }
    if let Some(n) = ex.peak_in_flight {
        parts.push(format!("peak {n} requests in flight at one instant"));
    }
    if parts.is_empty() {
        return None;
    }
    let basis = if b
        .result
        .meta
        .source
        .as_deref()
        .is_some_and(|s| s.starts_with("guidellm"))
    {
        " (over guidellm's token iterations, evenly spaced between first and last token)"
    } else {
        ""
    };
    Some(format!(
        "exact: {} — servebench's figures from the records{basis}",
        parts.join(", ")
    ))
}
