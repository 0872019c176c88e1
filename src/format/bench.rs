//! What `bench` prints on stdout: the report block (text), the result (JSON), or one CSV
//! row under a header of vLLM's result-file key names.

use crate::format::labels::{self, check};
use crate::format::pyfmt::percentile_word;
use crate::format::text::{self, Style};
use crate::result::{BenchmarkResult, Summary};

/// Output formats of `bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A "Serving Benchmark Result" block.
    Text,
    /// The result as JSON (servebench's schema).
    Json,
    /// A header row and one data row (vLLM's key names; times in ms, duration in s).
    Csv,
}

/// The stdout text for `result`, ending in a newline.
pub fn render(
    result: &BenchmarkResult,
    format: OutputFormat,
    style: Style,
) -> Result<String, String> {
    match format {
        OutputFormat::Text => {
            check(result, style).map_err(|e| e.to_string())?;
            let mut out = String::new();
            if let Some(note) = result.meta.convention.and_then(labels::convention_note) {
                out.push_str(note);
                out.push('\n');
            }
            out.push_str(&text::render(result, style));
            out.push('\n');
            Ok(out)
        }
        OutputFormat::Json => serde_json::to_string_pretty(result)
            .map(|s| s + "\n")
            .map_err(|e| format!("cannot write JSON: {e}")),
        OutputFormat::Csv => Ok(csv(result)),
    }
}

fn cell(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| x.to_string())
        .unwrap_or_default()
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn summary_cells(name: &str, s: Option<&Summary>, ps: &[f64], out: &mut Vec<(String, String)>) {
    out.push((format!("mean_{name}_ms"), cell(s.and_then(|s| s.mean))));
    out.push((format!("median_{name}_ms"), cell(s.and_then(|s| s.median))));
    out.push((format!("std_{name}_ms"), cell(s.and_then(|s| s.std))));
    for &p in ps {
        out.push((
            format!("p{}_{name}_ms", percentile_word(p)),
            cell(s.and_then(|s| s.percentile(p))),
        ));
    }
}

/// A header row and one row: counts, duration (s), throughputs, then mean/median/std and
/// each percentile of TTFT, TPOT, ITL and E2EL (ms). Empty cells for unknown values.
pub fn csv(r: &BenchmarkResult) -> String {
    let int = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    let mut cols: Vec<(String, String)> = vec![
        (
            "convention".into(),
            r.meta
                .convention
                .map(|c| format!("{c:?}").to_lowercase())
                .unwrap_or_default(),
        ),
        ("model".into(), quote(r.meta.model.as_deref().unwrap_or(""))),
        ("completed".into(), int(r.successful_requests)),
        ("failed".into(), int(r.failed_requests)),
        ("max_concurrency".into(), int(r.max_concurrency)),
        ("request_rate".into(), cell(r.request_rate_configured)),
        ("duration".into(), cell(r.duration_s())),
        ("total_input_tokens".into(), int(r.total_input_tokens)),
        ("total_output_tokens".into(), int(r.total_output_tokens)),
        (
            "request_throughput".into(),
            cell(r.request_throughput_per_s),
        ),
        ("request_goodput".into(), cell(r.request_goodput_per_s)),
        ("output_throughput".into(), cell(r.output_throughput_per_s)),
        (
            "max_output_tokens_per_s".into(),
            cell(r.peak_output_throughput_per_s),
        ),
        (
            "max_concurrent_requests".into(),
            cell(r.peak_concurrent_requests),
        ),
        (
            "total_token_throughput".into(),
            cell(r.total_token_throughput_per_s),
        ),
    ];
    let mut ps: Vec<f64> = Vec::new();
    for s in [&r.ttft, &r.tpot, &r.itl, &r.e2el].into_iter().flatten() {
        for q in &s.percentiles {
            if !ps.contains(&q.p) {
                ps.push(q.p);
            }
        }
    }
    summary_cells("ttft", r.ttft.as_ref(), &ps, &mut cols);
    summary_cells("tpot", r.tpot.as_ref(), &ps, &mut cols);
    summary_cells("itl", r.itl.as_ref(), &ps, &mut cols);
    summary_cells("e2el", r.e2el.as_ref(), &ps, &mut cols);
    let (head, row): (Vec<_>, Vec<_>) = cols.into_iter().unzip();
    format!("{}\n{}\n", head.join(","), row.join(","))
}
