//! The latency variants of GPUStack's document figures
//! (`hack/perf/generate_latency_optimization_doc.py`), as data: the conclusion cell (mean
//! latency, and how many times faster or slower than the baseline) and the group summary
//! (fastest and slowest run, their TTFT and TPOT); [`crate::format::gpustack::latency`]
//! prints them (`Mean latency: 1.23s/req (1.50x faster)`). Ratios are baseline / candidate
//! (or slow / fast), computed from unrounded values.
//!
//! ```
//! use servebench::compare::gpustack::{latency_cell, LatencyAnnotation};
//! use servebench::result::{BenchmarkResult, Summary};
//! let run = |e2el_ms: f64| BenchmarkResult {
//!     e2el: Some(Summary { mean: Some(e2el_ms), ..Default::default() }),
//!     ..Default::default()
//! };
//! let cell = latency_cell(&run(3000.0), &run(2000.0));
//! assert_eq!(cell.mean_latency_s, Some(2.0));
//! assert_eq!(cell.annotation, Some(LatencyAnnotation::Faster { ratio: 1.5 }));
//! ```

use serde::Serialize;

use super::success_rate;
use crate::compare::{MEAN_E2EL, MEAN_TPOT, MEAN_TTFT};
use crate::result::BenchmarkResult;

/// What follows a candidate's mean latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum LatencyAnnotation {
    /// baseline / candidate ≥ 1: `(1.50x faster)`, green.
    Faster {
        /// baseline / candidate.
        ratio: f64,
    },
    /// baseline / candidate < 1: `(1.25x slower)` (candidate / baseline), red.
    Slower {
        /// candidate / baseline.
        ratio: f64,
    },
    /// Fewer than all requests succeeded: `(Success rate: 51.6%, optimization skipped)`, red.
    SuccessRateSkipped {
        /// Successful / total requests, as a fraction.
        success_rate: f64,
    },
    /// A change the decision did not call better or worse (a study's verdict):
    /// `(1.40x faster, within noise)`, no colour.
    Judged {
        /// The faster over the slower side's mean latency.
        ratio: f64,
        /// Whether the candidate is the faster side.
        faster: bool,
        /// The verdict's words (`within noise`).
        verdict: &'static str,
    },
    /// A latency is missing or not positive: `N/A`.
    NotAvailable,
}

impl LatencyAnnotation {
    /// GPUStack's `latency_annotation`, latencies in any one unit.
    pub fn new(
        baseline_latency: Option<f64>,
        candidate_latency: Option<f64>,
        success_rate: Option<f64>,
    ) -> LatencyAnnotation {
        if let Some(rate) = success_rate.filter(|r| *r < 1.0) {
            return LatencyAnnotation::SuccessRateSkipped { success_rate: rate };
        }
        match (baseline_latency, candidate_latency) {
            (Some(b), Some(c)) if b > 0.0 && c > 0.0 => {
                let ratio = b / c;
                if ratio >= 1.0 {
                    LatencyAnnotation::Faster { ratio }
                } else {
                    LatencyAnnotation::Slower { ratio: 1.0 / ratio }
                }
            }
            _ => LatencyAnnotation::NotAvailable,
        }
    }
}

/// A latency table cell: `Mean latency: {s:.2}s/req` and, for a candidate, its annotation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyCell {
    /// Mean end-to-end latency, seconds.
    pub mean_latency_s: Option<f64>,
    /// What follows (baseline cells have none).
    pub annotation: Option<LatencyAnnotation>,
}

fn mean_latency_s(r: &BenchmarkResult) -> Option<f64> {
    MEAN_E2EL.value(r).map(|ms| ms / 1000.0)
}

/// The baseline's cell.
pub fn baseline_latency_cell(baseline: &BenchmarkResult) -> LatencyCell {
    LatencyCell {
        mean_latency_s: mean_latency_s(baseline),
        annotation: None,
    }
}

/// A candidate's cell, annotated against `baseline` (success rate as in
/// [`super::success_rate`]).
pub fn latency_cell(baseline: &BenchmarkResult, candidate: &BenchmarkResult) -> LatencyCell {
    let c = mean_latency_s(candidate);
    LatencyCell {
        mean_latency_s: c,
        annotation: Some(LatencyAnnotation::new(
            mean_latency_s(baseline),
            c,
            success_rate(candidate, baseline),
        )),
    }
}

/// GPUStack's latency group "Summary:" sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Name of the run with the lowest mean latency.
    pub fastest: String,
    /// Name of the run with the highest mean latency.
    pub slowest: String,
    /// Their mean latencies, seconds.
    pub fastest_latency_s: f64,
    /// See `fastest_latency_s`.
    pub slowest_latency_s: f64,
    /// Mean TTFT of fastest and slowest, ms, when both are positive.
    pub ttft_ms: Option<(f64, f64)>,
    /// Mean TPOT of fastest and slowest, ms, when both are positive.
    pub tpot_ms: Option<(f64, f64)>,
}

/// The summary of a group of named runs. Runs with a success rate below 100% are left out
/// (as the generator does); `None` with fewer than two left or a missing latency.
///
/// ```
/// use servebench::compare::gpustack::latency_summary;
/// use servebench::result::{BenchmarkResult, Summary};
/// let s = |mean: f64| Some(Summary { mean: Some(mean), ..Default::default() });
/// let a = BenchmarkResult { e2el: s(1230.0), ttft: s(50.0), tpot: s(198.01), ..Default::default() };
/// let b = BenchmarkResult { e2el: s(1845.0), ttft: s(75.0), tpot: s(179.88), ..Default::default() };
/// let sum = latency_summary(&[("B", &b), ("A", &a)]).unwrap();
/// assert_eq!(sum.sentence(), "`A` Mean Latency = 1.23s, `B` Mean Latency = 1.84s. \
///     `A` is faster by 0.61s (1.50x faster). TTFT = 50.00 ms vs 75.00 ms, reduced by \
///     25.00 ms (1.50x faster); TPOT = 198.01 ms vs 179.88 ms, increased by 18.13 ms (1.10x slower).");
/// ```
pub fn latency_summary(runs: &[(&str, &BenchmarkResult)]) -> Option<LatencySummary> {
    let mut ok: Vec<&(&str, &BenchmarkResult)> = runs
        .iter()
        .filter(|(_, r)| r.success_rate(None).is_none_or(|s| s >= 1.0))
        .collect();
    if ok.len() < 2 {
        return None;
    }
    let lat = |r: &BenchmarkResult| mean_latency_s(r).unwrap_or(f64::INFINITY);
    ok.sort_by(|a, b| lat(a.1).total_cmp(&lat(b.1)));
    let (fast, slow) = (ok.first()?, ok.last()?);
    let (fl, sl) = (mean_latency_s(fast.1)?, mean_latency_s(slow.1)?);
    if fl <= 0.0 || sl <= 0.0 {
        return None;
    }
    let pair = |m: &crate::compare::Metric| {
        let (f, s) = (m.value(fast.1)?, m.value(slow.1)?);
        (f > 0.0 && s > 0.0).then_some((f, s))
    };
    Some(LatencySummary {
        fastest: fast.0.to_string(),
        slowest: slow.0.to_string(),
        fastest_latency_s: fl,
        slowest_latency_s: sl,
        ttft_ms: pair(&MEAN_TTFT),
        tpot_ms: pair(&MEAN_TPOT),
    })
}
