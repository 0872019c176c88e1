//! `servebench report FILE`: print every benchmark of an imported file as a "Serving
//! Benchmark Result" block.
//!
//! * [`Numbers::File`] (the default) prints the file's own aggregates: guidellm reports as
//!   GPUStack-style blocks (GPUStack's field mapping, see [`super::guidellm`]), vLLM files as
//!   the report `vllm bench serve` printed (same rows, percentiles and spelling), SGLang
//!   files in vLLM style.
//! * [`Numbers::Recompute`]`(Convention::Vllm)` recomputes every row from the per-request
//!   records with vLLM's definitions ([`crate::metrics::compute`]) and prints vLLM style.
//!   Rows the records cannot support faithfully are listed in [`ReportBlock::notes`].
//! * [`Numbers::Recompute`]`(Convention::Guidellm)` recomputes with guidellm's definitions
//!   and prints GPUStack style. On a guidellm file this must print the same block as the
//!   default — the check that the recomputation is right.
//!
//! ```
//! use servebench::import::report::{report_bytes, render_report, Numbers, ReportOptions};
//! let bytes = std::fs::read("tests/fixtures/guidellm/constant_rate20.json").unwrap();
//! let blocks = report_bytes(&bytes, &ReportOptions::default()).unwrap();
//! let text = render_report(&blocks);
//! assert!(text.starts_with("constant@20.00\n\n============ Serving Benchmark Result ============\n"));
//! assert!(text.contains("\nSuccessful requests:                     60\n"));
//! ```

use std::path::Path;

use super::{guidellm, read_file, sglang, vllm, Format, ImportError};
use crate::format::text::{render, render_with, Layout, Style};
use crate::metrics::{compute, exact_figures, MetricsOptions, Slo};
use crate::record::RequestRecord;
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

/// Options of [`report_bytes`].
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
    /// The block the tool itself printed for these numbers, when the file tells (vLLM's
    /// aggregates); followed when it is of [`ReportBlock::style`].
    pub layout: Option<Layout>,
    /// Rows that could not be computed (or only approximately) from what the file holds.
    pub notes: Vec<String>,
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

/// Report on a file (see the module docs).
pub fn report_path(path: &Path, opts: &ReportOptions) -> Result<Vec<ReportBlock>, ImportError> {
    let bytes = read_file(path)?;
    report_bytes(&bytes, opts).map_err(|e| super::in_file(path, e))
}

/// Report on bytes already in memory.
pub fn report_bytes(bytes: &[u8], opts: &ReportOptions) -> Result<Vec<ReportBlock>, ImportError> {
    match super::detect(bytes) {
        Some(Format::Guidellm) => {
            let report = guidellm::from_slice(bytes)?;
            report
                .benchmarks
                .iter()
                .map(|b| guidellm_block(b, opts))
                .collect()
        }
        Some(Format::Vllm) => vllm::from_slice(bytes)?
            .into_iter()
            .map(|r| {
                tool_block(
                    r.name,
                    r.result,
                    Some(r.layout),
                    r.records,
                    opts,
                    "--save-detailed",
                )
            })
            .collect(),
        Some(Format::Sglang) => sglang::from_slice(bytes)?
            .into_iter()
            .map(|r| tool_block(r.name, r.result, None, r.records, opts, "--output-details"))
            .collect(),
        Some(Format::ServebenchJson) | Some(Format::Text) | None => {
            Err(ImportError::UnknownFormat(
                "`report` reads guidellm, vLLM and SGLang result files".into(),
            ))
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

/// The options a recomputation under `convention` starts from: the report's goodput SLOs,
/// and its percentiles for vLLM-style blocks.
fn recompute_options(convention: Convention, opts: &ReportOptions) -> MetricsOptions {
    let mut m = MetricsOptions::new(convention);
    if let (Convention::Vllm, Some(p)) = (convention, &opts.percentiles) {
        m.percentiles = p.clone();
    }
    m.goodput = opts.goodput;
    m
}

fn guidellm_block(
    b: &guidellm::GuidellmBenchmark,
    opts: &ReportOptions,
) -> Result<ReportBlock, ImportError> {
    let mut notes = Vec::new();
    if b.is_sampled() && opts.numbers != Numbers::File {
        let reported = b.counts.reported.map(|r| r.total()).unwrap_or(0);
        notes.push(format!(
            "the file lists {} of the {reported} requests its metrics count (guidellm sampled them): \
             every recomputed row covers that sample only",
            b.counts.in_window.total()
        ));
    }
    let (result, style) = match opts.numbers {
        Numbers::File => {
            let mut r = b.result.clone();
            r.exact = Some(exact_figures(&b.measured_records()));
            (r, Style::Gpustack)
        }
        Numbers::Recompute(Convention::Vllm) => {
            let mut m = recompute_options(Convention::Vllm, opts);
            // vLLM's duration is the run's wall time; guidellm's comparable figure is the
            // measured window.
            m.duration = Some(b.window());
            let mut r = compute(&b.measured_records(), &m);
            r.meta.label.clone_from(&b.result.meta.label);
            r.meta.model.clone_from(&b.result.meta.model);
            r.meta.source.clone_from(&b.result.meta.source);
            notes.push(
                "Inter-token latency: guidellm keeps no per-chunk timestamps; ITL uses its \
                 evenly spaced reconstruction of each request's token iterations"
                    .into(),
            );
            notes.push(
                "Peak output token throughput and Peak concurrent requests: 1-second buckets \
                 over the reconstructed iterations (vLLM counts chunks)"
                    .into(),
            );
            notes.push(if opts.goodput.is_some() {
                "Maximum request concurrency: the file records no client cap in vLLM's sense".into()
            } else {
                "Maximum request concurrency and Request goodput: the file records no client \
                 cap in vLLM's sense and no SLOs (give --goodput)"
                    .into()
            });
            (r, Style::Vllm)
        }
        Numbers::Recompute(Convention::Guidellm) => {
            let mut m = recompute_options(Convention::Guidellm, opts);
            guidellm_measurement(b, &mut m);
            let mut r = compute(&b.records, &m);
            r.meta.label.clone_from(&b.result.meta.label);
            r.meta.model.clone_from(&b.result.meta.model);
            r.meta.source.clone_from(&b.result.meta.source);
            (r, Style::Gpustack)
        }
    };
    Ok(ReportBlock {
        name: b.name.clone(),
        result,
        style,
        layout: None,
        notes,
    })
}

/// guidellm's measurement: the file's window and time origin.
fn guidellm_measurement(b: &guidellm::GuidellmBenchmark, m: &mut MetricsOptions) {
    m.duration = Some(b.window());
    // guidellm's measured window, and its epoch timestamps for bit-exact float arithmetic.
    m.window = Some((b.window_start, b.window_end));
    m.time_origin_s = Some(b.origin_unix_s);
}

fn tool_block(
    name: String,
    result: BenchmarkResult,
    layout: Option<Layout>,
    records: Option<Vec<RequestRecord>>,
    opts: &ReportOptions,
    flag: &str,
) -> Result<ReportBlock, ImportError> {
    let Numbers::Recompute(convention) = opts.numbers else {
        return Ok(ReportBlock {
            name,
            result,
            style: Style::Vllm,
            layout,
            notes: Vec::new(),
        });
    };
    let Some(records) = records else {
        return Err(ImportError::NoRecords {
            run: name,
            hint: format!("the file was saved without {flag}"),
        });
    };
    let mut notes = Vec::new();
    let timed = records.iter().any(|r| !r.sent_at.is_zero());
    let mut m = recompute_options(convention, opts);
    if !timed {
        // No send times: keep the file's duration so rates stay meaningful.
        m.duration = result
            .duration_ms
            .and_then(|ms| std::time::Duration::try_from_secs_f64(ms / 1000.0).ok());
        notes.push(
            "Peak output token throughput and Peak concurrent requests: the file has no send \
             times (only vLLM 0.34 saves start_times), so the buckets are not the run's"
                .into(),
        );
    }
    let mut r = compute(&records, &m);
    r.meta.label = result.meta.label.clone();
    r.meta.model = result.meta.model.clone();
    r.meta.engine = result.meta.engine.clone();
    r.meta.source = result.meta.source.clone();
    if convention == Convention::Vllm {
        r.max_concurrency = result.max_concurrency;
        r.request_rate_configured = result.request_rate_configured;
    }
    let style = match convention {
        Convention::Vllm => Style::Vllm,
        Convention::Guidellm => Style::Gpustack,
    };
    Ok(ReportBlock {
        name,
        result: r,
        style,
        layout: None,
        notes,
    })
}
