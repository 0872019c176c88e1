//! The confidence-interval block printed under a report when asked (`--ci`): one line per
//! figure that has an interval, `label  value  [lo, hi]  ±half-width %`. The report block
//! itself is never changed by intervals.
//!
//! ```
//! use servebench::format::intervals::render;
//! use servebench::noise::{Interval, RunIntervals};
//! use servebench::BenchmarkResult;
//! let mut ci = RunIntervals::empty(0.95, 1000, 0);
//! ci.blocks = 40;
//! ci.output_throughput_per_s = Some(Interval { lo: 980.0, hi: 1020.0, se: 10.2 });
//! let r = BenchmarkResult { output_throughput_per_s: Some(1000.0), intervals: Some(ci), ..Default::default() };
//! let text = render(&r);
//! assert!(text.starts_with("95% confidence intervals (block bootstrap over 40 blocks of the run's time, 1000 resamples, seed 0)\n"));
//! assert!(text.contains("Output token throughput (tok/s)           1000.00  [980.00, 1020.00]  ±2.00%\n"));
//! ```

use std::fmt::Write as _;

use crate::compare::METRICS;
use crate::result::BenchmarkResult;

/// The interval block of `result`; a one-line note when it has no intervals.
pub fn render(result: &BenchmarkResult) -> String {
    let Some(ci) = &result.intervals else {
        return "Confidence intervals: none (no records, or too few to resample)\n".into();
    };
    let mut out = format!(
        "{:.0}% confidence intervals (block bootstrap over {} blocks of the run's time, {} resamples, seed {})\n",
        ci.confidence * 100.0,
        ci.blocks,
        ci.resamples,
        ci.seed
    );
    for m in METRICS.iter() {
        let (Some(v), Some(i)) = (m.value(result), ci.for_metric(m)) else {
            continue;
        };
        let half = i
            .half_width_percent(v)
            .map(|h| format!("  ±{h:.2}%"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<38} {:>10.2}  [{:.2}, {:.2}]{half}",
            m.label, v, i.lo, i.hi
        );
    }
    out
}
