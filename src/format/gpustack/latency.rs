//! The latency document's wording (`hack/perf/generate_latency_optimization_doc.py`): the
//! conclusion cell `Mean latency: 1.23s/req (1.50x faster)` and the group sentence
//! `` `A` Mean Latency = 1.23s, `B` Mean Latency = 1.85s. `A` is faster by 0.62s (1.50x faster). … ``,
//! rendering [`crate::compare::gpustack`]'s figures.
//!
//! ```
//! use servebench::compare::gpustack::latency_cell;
//! use servebench::result::{BenchmarkResult, Summary};
//! let run = |e2el_ms: f64| BenchmarkResult {
//!     e2el: Some(Summary { mean: Some(e2el_ms), ..Default::default() }),
//!     ..Default::default()
//! };
//! let cell = latency_cell(&run(3000.0), &run(2000.0));
//! assert_eq!(cell.text(), "Mean latency: 2.00s/req (1.50x faster)");
//! ```

use std::fmt::Write as _;

use crate::compare::gpustack::latency::{
    baseline_latency_cell, latency_cell, LatencyAnnotation, LatencyCell, LatencySummary,
};
use crate::result::BenchmarkResult;

/// Header of the latency conclusion table's baseline column (capital `B`, unlike the
/// throughput document's).
pub const LATENCY_BASELINE_HEADER: &str = "Baseline (vLLM without any optimizations)";

impl LatencyAnnotation {
    /// Plain text: `(1.50x faster)`.
    pub fn text(&self) -> String {
        match *self {
            LatencyAnnotation::Faster { ratio } => format!("({ratio:.2}x faster)"),
            LatencyAnnotation::Slower { ratio } => format!("({ratio:.2}x slower)"),
            LatencyAnnotation::SuccessRateSkipped { success_rate } => format!(
                "(Success rate: {:.1}%, optimization skipped)",
                success_rate * 100.0
            ),
            LatencyAnnotation::Judged {
                ratio,
                faster,
                verdict,
            } => format!(
                "({ratio:.2}x {}, {verdict})",
                if faster { "faster" } else { "slower" }
            ),
            LatencyAnnotation::NotAvailable => "N/A".to_string(),
        }
    }

    /// This annotation as a decision that called the change `verdict` leaves it: a
    /// speed-up or slow-down kept with the verdict's words and no colour.
    pub fn judged(self, verdict: &'static str) -> LatencyAnnotation {
        match self {
            LatencyAnnotation::Faster { ratio } => LatencyAnnotation::Judged {
                ratio,
                faster: true,
                verdict,
            },
            LatencyAnnotation::Slower { ratio } => LatencyAnnotation::Judged {
                ratio,
                faster: false,
                verdict,
            },
            other => other,
        }
    }

    /// Markdown, inside GPUStack's coloured span.
    pub fn markdown(&self) -> String {
        let colour = match self {
            LatencyAnnotation::Faster { .. } => "lightgreen",
            LatencyAnnotation::Slower { .. } | LatencyAnnotation::SuccessRateSkipped { .. } => {
                "#ffd6d6"
            }
            LatencyAnnotation::NotAvailable | LatencyAnnotation::Judged { .. } => {
                return self.text()
            }
        };
        format!(
            "<span style=\"background-color:{colour};\">{}</span>",
            self.text()
        )
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
    latency_conclusion_markdown_judged(case, baseline, optimized, None)
}

/// [`latency_conclusion_markdown`] with the decision's `verdict` when it called the change
/// neither better nor worse (the ratio then stands uncoloured, with the verdict's words).
pub fn latency_conclusion_markdown_judged(
    case: &str,
    baseline: &BenchmarkResult,
    optimized: &BenchmarkResult,
    verdict: Option<&'static str>,
) -> String {
    let mut cell = latency_cell(baseline, optimized);
    if let (Some(v), Some(a)) = (verdict, cell.annotation) {
        cell.annotation = Some(a.judged(v));
    }
    format!(
        "| **{case}** | {} | {} |",
        baseline_latency_cell(baseline).markdown(),
        cell.markdown()
    )
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
    use crate::compare::gpustack::latency::latency_summary;
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
