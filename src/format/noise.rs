//! The noise statistics as text: the A-versus-B verdict table of a [`NoisyComparison`]
//! (its `source_line`, `to_text`, `to_markdown` and `annotation` are defined here).
//!
//! ```
//! use servebench::compare::OUTPUT_THROUGHPUT;
//! use servebench::noise::{compare_repetitions, VerdictOptions};
//! use servebench::BenchmarkResult;
//! let run = |t: f64| BenchmarkResult { output_throughput_per_s: Some(t), ..Default::default() };
//! let base = [run(1000.0), run(1010.0), run(990.0)];
//! let cand = [run(1100.0), run(1110.0), run(1090.0)];
//! let c = compare_repetitions(&base, &cand, false, &VerdictOptions::default());
//! let text = c.to_text();
//! assert!(text.starts_with("Noise: 95% t-intervals from 3 baseline and 3 candidate runs"), "{text}");
//! assert!(c.annotation(&OUTPUT_THROUGHPUT).unwrap().starts_with("(+10.00% ±"));
//! ```

use std::fmt::Write as _;

use crate::compare::Metric;
use crate::format::comparison::signed_percent;
use crate::noise::verdict::{NoiseSource, NoisyComparison, NoisyDelta};

impl NoisyComparison {
    /// One line saying where the noise estimate came from.
    pub fn source_line(&self) -> String {
        let c = self.options.confidence * 100.0;
        match self.source {
            NoiseSource::WithinRun => format!(
                "Noise: {c:.0}% intervals from each run's records (within-run noise only; \
                 repetitions also capture run-to-run variation)"
            ),
            NoiseSource::Repetitions {
                base_runs,
                candidate_runs,
                paired,
            } => format!(
                "Noise: {c:.0}% t-intervals from {base_runs} baseline and {candidate_runs} \
                 candidate runs ({})",
                if paired { "paired" } else { "unpaired, Welch" }
            ),
            NoiseSource::Unknown => match &self.unknown_reason {
                Some(why) => {
                    format!("Noise: unknown ({why}); only the sign of each change is known")
                }
                None => "Noise: single runs without records: noise unknown".into(),
            },
        }
    }

    /// The line saying how the verdicts are controlled for multiplicity and the minimum
    /// effect (see [`crate::noise::compare_runs`]); `None` when no metric has an interval.
    pub fn rule_line(&self) -> Option<String> {
        if self.source == NoiseSource::Unknown {
            return None;
        }
        let a = (1.0 - self.options.confidence) * 100.0;
        let target = crate::compare::METRICS
            .iter()
            .find(|m| m.key == self.options.target)
            .map_or(self.options.target, |m| m.label);
        let others = self
            .metrics
            .iter()
            .filter(|d| d.metric.key != self.options.target && d.p_value.is_some())
            .count();
        let mut line = format!(
            "Verdicts: the target, {target}, at {a:.0}%; the {others} other metrics with an \
             interval by Holm–Bonferroni at {a:.0}% family-wise"
        );
        if self.options.min_effect_percent > 0.0 {
            line.push_str(&format!(
                "; \"better\" needs the interval beyond the minimum effect of {:.2}%",
                self.options.min_effect_percent
            ));
        }
        line.push('.');
        Some(line)
    }

    /// A plain-text table: metric, change %, interval of the change, verdict, detectable
    /// effect, runs per side for the planned effect.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.source_line());
        let Some(rule) = self.rule_line() else {
            return out;
        };
        let _ = writeln!(out, "{rule}");
        let _ = writeln!(
            out,
            "{:<34} {:<10} {:<22} {:<14} {:<11} Runs for {}",
            "Metric",
            "Change %",
            format!("{:.0}% interval", self.options.confidence * 100.0),
            "Verdict",
            "Detectable",
            signed_percent(self.options.effect_percent).replace('+', "±"),
        );
        for d in &self.metrics {
            let cells = self.cells(d);
            let line = format!(
                "{:<34} {:<10} {:<22} {:<14} {:<11} {}",
                d.metric.label, cells[0], cells[1], cells[2], cells[3], cells[4]
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }

    /// The same table in markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("{}\n\n", self.source_line());
        let Some(rule) = self.rule_line() else {
            return out;
        };
        out.push_str(&format!("{rule}\n\n"));
        let _ = writeln!(
            out,
            "| Metric | Change % | {:.0}% interval | Verdict | Detectable | Runs for {} |\n|---|---|---|---|---|---|",
            self.options.confidence * 100.0,
            signed_percent(self.options.effect_percent).replace('+', "±"),
        );
        for d in &self.metrics {
            let c = self.cells(d);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                d.metric.label, c[0], c[1], c[2], c[3], c[4]
            );
        }
        out
    }

    fn cells(&self, d: &NoisyDelta) -> [String; 5] {
        let na = || "N/A".to_string();
        [
            d.delta.percent().map_or_else(na, signed_percent),
            d.percent_interval().map_or_else(
                || {
                    d.interval
                        .map_or_else(na, |i| format!("[{:+.2}, {:+.2}]", i.lo, i.hi))
                },
                |(lo, hi)| format!("[{}, {}]", signed_percent(lo), signed_percent(hi)),
            ),
            d.outcome.short().to_string(),
            d.mde_percent.map_or_else(na, |m| format!("±{m:.2}%")),
            d.runs_needed.map_or_else(na, |n| n.to_string()),
        ]
    }

    /// The annotation GPUStack's conclusion cells and summary sentences gain for `metric`:
    /// `(+9.75% ±1.20%, better)`; `None` without noise information.
    pub fn annotation(&self, metric: &Metric) -> Option<String> {
        let d = self.metric(metric)?;
        let (lo, hi) = d.percent_interval()?;
        let p = d.delta.percent()?;
        Some(format!(
            "({} ±{:.2}%, {})",
            signed_percent(p),
            (hi - lo) / 2.0,
            d.outcome.as_str()
        ))
    }
}
