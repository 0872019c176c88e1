//! The latency variants of GPUStack's document outputs
//! (`hack/perf/generate_latency_optimization_doc.py`): the conclusion cell
//! `Mean latency: 1.23s/req (1.50x faster)` and the group sentence
//! `` `A` Mean Latency = 1.23s, `B` Mean Latency = 1.85s. `A` is faster by 0.62s (1.50x faster). … ``.
//! Ratios are baseline / candidate (or slow / fast), computed from unrounded values.
//!
//! ```
//! use servebench::compare::gpustack::latency::latency_cell;
//! use servebench::result::{BenchmarkResult, Summary};
//! let run = |e2el_ms: f64| BenchmarkResult {
//!     e2el: Some(Summary { mean: Some(e2el_ms), ..Default::default() }),
//!     ..Default::default()
//! };
//! let cell = latency_cell(&run(3000.0), &run(2000.0));
//! assert_eq!(cell.text(), "Mean latency: 2.00s/req (1.50x faster)");
//! ```

use std::fmt::Write as _;

use serde::Serialize;

use super::success_rate;
use crate::compare::{MEAN_E2EL, MEAN_TPOT, MEAN_TTFT};
use crate::result::BenchmarkResult;

/// Header of the latency conclusion table's baseline column (capital `B`, unlike the
/// throughput document's).
pub const LATENCY_BASELINE_HEADER: &str = "Baseline (vLLM without any optimizations)";

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

    /// Plain text: `(1.50x faster)`.
    pub fn text(&self) -> String {
        match *self {
            LatencyAnnotation::Faster { ratio } => format!("({ratio:.2}x faster)"),
            LatencyAnnotation::Slower { ratio } => format!("({ratio:.2}x slower)"),
            LatencyAnnotation::SuccessRateSkipped { success_rate } => format!(
                "(Success rate: {:.1}%, optimization skipped)",
                success_rate * 100.0
            ),
            LatencyAnnotation::NotAvailable => "N/A".to_string(),
        }
    }

    /// Markdown, inside GPUStack's coloured span.
    pub fn markdown(&self) -> String {
        let colour = match self {
            LatencyAnnotation::Faster { .. } => "lightgreen",
            LatencyAnnotation::Slower { .. } | LatencyAnnotation::SuccessRateSkipped { .. } => {
                "#ffd6d6"
            }
            LatencyAnnotation::NotAvailable => return self.text(),
        };
        format!(
            "<span style=\"background-color:{colour};\">{}</span>",
            self.text()
        )
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

impl LatencyCell {
    fn head(&self) -> String {
        match self.mean_latency_s {
            Some(s) => format!("Mean latency: {s:.2}s/req"),
            None => "Mean latency: N/A".to_string(),
        }
    }

    /// Plain text: `Mean latency: 2.00s/req (1.50x faster)`.
    pub fn text(&self) -> String {
        match self.annotation {
            Some(a) => format!("{} {}", self.head(), a.text()),
            None => self.head(),
        }
    }

    /// Markdown: the annotation in its span.
    pub fn markdown(&self) -> String {
        match self.annotation {
            Some(a) => format!("{} {}", self.head(), a.markdown()),
            None => self.head(),
        }
    }
}

/// The latency conclusion row: `| **case** | baseline cell | candidate cell |`.
pub fn latency_conclusion_markdown(
    case: &str,
    baseline: &BenchmarkResult,
    optimized: &BenchmarkResult,
) -> String {
    format!(
        "| **{case}** | {} | {} |",
        baseline_latency_cell(baseline).markdown(),
        latency_cell(baseline, optimized).markdown()
    )
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
/// use servebench::compare::gpustack::latency::latency_summary;
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

fn delta_phrase(name: &str, faster: f64, slower: f64) -> String {
    let delta = slower - faster;
    let mut s = format!("{name} = {faster:.2} ms vs {slower:.2} ms");
    if delta.abs() < 1e-9 {
        s.push_str(", unchanged");
    } else if delta > 0.0 {
        let _ = write!(
            s,
            ", reduced by {delta:.2} ms ({:.2}x faster)",
            slower / faster
        );
    } else {
        let _ = write!(
            s,
            ", increased by {:.2} ms ({:.2}x slower)",
            -delta,
            faster / slower
        );
    }
    s
}

impl LatencySummary {
    /// The sentence after `- Summary: `, as the generator prints it.
    pub fn sentence(&self) -> String {
        let mut s = format!(
            "`{f}` Mean Latency = {:.2}s, `{sl}` Mean Latency = {:.2}s. `{f}` is faster by {:.2}s ({:.2}x faster).",
            self.fastest_latency_s,
            self.slowest_latency_s,
            self.slowest_latency_s - self.fastest_latency_s,
            self.slowest_latency_s / self.fastest_latency_s,
            f = self.fastest,
            sl = self.slowest,
        );
        let mut extra = Vec::new();
        if let Some((f, sl)) = self.ttft_ms {
            extra.push(delta_phrase("TTFT", f, sl));
        }
        if let Some((f, sl)) = self.tpot_ms {
            extra.push(delta_phrase("TPOT", f, sl));
        }
        if !extra.is_empty() {
            let _ = write!(s, " {}.", extra.join("; "));
        }
        s
    }

    /// The markdown line: `` - Summary: `A` Mean Latency = … ``.
    pub fn markdown(&self) -> String {
        format!("- Summary: {}", self.sentence())
    }

    /// The plain-text line (no bullet, no backticks).
    pub fn text(&self) -> String {
        format!("Summary: {}", self.sentence().replace('`', ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Summary;

    fn run(e2el_ms: f64, ok: u64, failed: u64) -> BenchmarkResult {
        BenchmarkResult {
            successful_requests: Some(ok),
            failed_requests: Some(failed),
            e2el: Some(Summary {
                mean: Some(e2el_ms),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn cells_faster_slower_skipped_and_missing() {
        let base = run(3000.0, 100, 0);
        assert_eq!(
            latency_cell(&base, &run(4500.0, 100, 0)).markdown(),
            "Mean latency: 4.50s/req <span style=\"background-color:#ffd6d6;\">(1.50x slower)</span>"
        );
        assert_eq!(
            latency_cell(&base, &run(1000.0, 90, 10)).text(),
            "Mean latency: 1.00s/req (Success rate: 90.0%, optimization skipped)"
        );
        assert_eq!(
            latency_cell(&base, &BenchmarkResult::default()).text(),
            "Mean latency: N/A N/A"
        );
        assert_eq!(
            latency_conclusion_markdown("ShareGPT", &base, &run(1500.0, 100, 0)),
            "| **ShareGPT** | Mean latency: 3.00s/req | Mean latency: 1.50s/req \
             <span style=\"background-color:lightgreen;\">(2.00x faster)</span> |"
        );
    }

    #[test]
    fn summary_leaves_out_failed_runs_and_needs_two() {
        let (a, b, c) = (run(1000.0, 10, 0), run(2000.0, 10, 0), run(500.0, 5, 5));
        let s = latency_summary(&[("a", &a), ("b", &b), ("c", &c)]).unwrap();
        assert_eq!(s.fastest, "a");
        assert_eq!(
            s.text(),
            "Summary: a Mean Latency = 1.00s, b Mean Latency = 2.00s. a is faster by 1.00s (2.00x faster)."
        );
        assert!(latency_summary(&[("a", &a), ("c", &c)]).is_none());
    }
}
