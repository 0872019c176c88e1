//! Whether a report style's row labels describe a result's numbers.
//!
//! vLLM's block labels its TPOT section "Time per Output Token (excl. 1st token)" and its
//! peaks and concurrency by vLLM's definitions; guidellm's TPOT includes the first token,
//! its "ITL" is a per-request decode mean and its peaks are instantaneous rates. Printing
//! guidellm's numbers under vLLM's labels would mislabel them, so [`check`] refuses that
//! pairing, and [`convention_note`] gives the line to print above a block whose numbers are
//! guidellm's (GPUStack's style, whose reports are made of guidellm's numbers).
//!
//! ```
//! use servebench::format::labels::check;
//! use servebench::format::text::Style;
//! use servebench::result::{BenchmarkResult, Convention, Summary};
//! let mut r = BenchmarkResult { tpot: Some(Summary { mean: Some(40.0), ..Default::default() }), ..Default::default() };
//! r.meta.convention = Some(Convention::Guidellm);
//! let err = check(&r, Style::Vllm).unwrap_err();
//! assert_eq!(err.rows, ["TPOT"]);
//! assert!(check(&r, Style::Gpustack).is_ok());
//! r.meta.convention = Some(Convention::Vllm);
//! assert!(check(&r, Style::Vllm).is_ok());
//! ```

use super::text::Style;
use crate::result::{BenchmarkResult, Convention};

/// A result whose numbers a style's labels would misdescribe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {style} style would print guidellm-convention numbers under vLLM's labels ({}): \
     guidellm's TPOT includes the first token, its ITL is a per-request decode mean and its \
     peaks are instantaneous rates; use the gpustack style, or recompute the records in the \
     vllm convention",
    rows.join(", ")
)]
pub struct Mislabel {
    /// The style asked for.
    pub style: Style,
    /// The rows that would be mislabelled (`TPOT`, `ITL`, `Peak output token throughput`,
    /// `Peak concurrent requests`, `Maximum request concurrency`).
    pub rows: Vec<&'static str>,
}

/// `Ok` when every row `style` would print for `result` means what its label says.
pub fn check(result: &BenchmarkResult, style: Style) -> Result<(), Mislabel> {
    if style != Style::Vllm || result.meta.convention != Some(Convention::Guidellm) {
        return Ok(());
    }
    let mut rows = Vec::new();
    if result.tpot.is_some() {
        rows.push("TPOT");
    }
    if result.itl.is_some() {
        rows.push("ITL");
    }
    if result.peak_output_throughput_per_s.is_some() {
        rows.push("Peak output token throughput");
    }
    if result.peak_concurrent_requests.is_some() {
        rows.push("Peak concurrent requests");
    }
    if result.max_concurrency.is_some() {
        rows.push("Maximum request concurrency");
    }
    if rows.is_empty() {
        Ok(())
    } else {
        Err(Mislabel { style, rows })
    }
}

/// The line to print above a block of `convention`'s numbers when they are not what the
/// labels of vLLM's report mean (`None` for vLLM's convention).
pub fn convention_note(convention: Convention) -> Option<&'static str> {
    match convention {
        Convention::Vllm => None,
        Convention::Guidellm => Some(
            "Metric convention: guidellm (as GPUStack reports): TPOT includes the time to first \
             token (the \"excl. 1st token\" header is GPUStack's layout, not guidellm's \
             definition), ITL is the per-request mean decode time, peaks are instantaneous rates.",
        ),
    }
}
