//! The metric-by-metric comparison table of [`Comparison`] (metric, baseline, candidate,
//! absolute change, percent change, verdict), as plain text or markdown, written to any
//! [`fmt::Write`]; the convention warning follows the table when the conventions differ.
//! [`Comparison::to_text`] and [`Comparison::to_markdown`] are defined here, and
//! [`signed_percent`], the `+9.75%` spelling every comparison output uses.
//!
//! ```
//! use servebench::compare::compare;
//! use servebench::format::comparison::write_markdown;
//! use servebench::BenchmarkResult;
//! let base = BenchmarkResult { total_token_throughput_per_s: Some(9632.01), ..Default::default() };
//! let cand = BenchmarkResult { total_token_throughput_per_s: Some(10570.88), ..Default::default() };
//! let mut md = String::new();
//! write_markdown(&mut md, &compare(&base, &cand)).unwrap();
//! assert!(md.contains("| 9632.01 | 10570.88 | +938.87 | +9.75% | better |"));
//! ```

use std::fmt;

use crate::compare::{Comparison, MetricDelta};
use crate::result::Convention;

/// The plain-text table: columns padded with spaces, no trailing spaces.
pub fn write_text(out: &mut impl fmt::Write, c: &Comparison) -> fmt::Result {
    writeln!(
        out,
        "{:<34} {:<12} {:<12} {:<12} {:<10} Verdict",
        "Metric", "Baseline", "Candidate", "Change", "Change %"
    )?;
    for m in &c.metrics {
        let [label, base, cand, change, percent, verdict] = cells(m);
        let line =
            format!("{label:<34} {base:<12} {cand:<12} {change:<12} {percent:<10} {verdict}");
        writeln!(out, "{}", line.trim_end())?;
    }
    if let Some(note) = c.convention_note() {
        writeln!(out, "{note}")?;
    }
    if let Some(note) = c.ttft_note() {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// The same table in markdown.
pub fn write_markdown(out: &mut impl fmt::Write, c: &Comparison) -> fmt::Result {
    out.write_str(
        "| Metric | Baseline | Candidate | Change | Change % | Verdict |\n|---|---|---|---|---|---|\n",
    )?;
    for m in &c.metrics {
        writeln!(out, "| {} |", cells(m).join(" | "))?;
    }
    if let Some(note) = c.convention_note() {
        writeln!(out, "\n{note}")?;
    }
    if let Some(note) = c.ttft_note() {
        writeln!(out, "\n{note}")?;
    }
    Ok(())
}

/// One row's cells: label, baseline, candidate, signed change, signed percent (`N/A`
/// without a base), verdict.
fn cells(m: &MetricDelta) -> [String; 6] {
    [
        m.metric.label.to_string(),
        value(m.delta.base),
        value(m.delta.candidate),
        signed(m.delta.absolute()),
        m.delta
            .percent()
            .map(signed_percent)
            .unwrap_or_else(|| "N/A".into()),
        m.verdict().to_string(),
    ]
}

/// A value as the table prints it: integers without decimals, else two decimals; Python's
/// spelling for non-finite values (nan, inf, -inf), as in the reports.
fn value(v: f64) -> String {
    if !v.is_finite() {
        super::pyfmt::fixed(v, 2)
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// [`value`] with a `+` in front of non-negative values.
fn signed(v: f64) -> String {
    if v >= 0.0 {
        format!("+{}", value(v))
    } else {
        value(v)
    }
}

/// Formats a percentage with an explicit sign and two decimals: `+9.75%`, `-3.10%`.
///
/// ```
/// assert_eq!(servebench::format::comparison::signed_percent(9.747394), "+9.75%");
/// assert_eq!(servebench::format::comparison::signed_percent(-3.1), "-3.10%");
/// ```
pub fn signed_percent(percent: f64) -> String {
    if percent >= 0.0 {
        format!("+{percent:.2}%")
    } else {
        format!("{percent:.2}%")
    }
}

impl Comparison {
    /// The warning printed under the tables when [`conventions_differ`](Self::conventions_differ).
    pub fn convention_note(&self) -> Option<String> {
        let name = |c: Convention| match c {
            Convention::Vllm => "vllm",
            Convention::Guidellm => "guidellm",
        };
        match (self.base_convention, self.candidate_convention) {
            (Some(a), Some(b)) if a != b => Some(format!(
                "Note: the baseline follows the {} convention and the candidate the {} \
                 convention; TPOT and ITL are defined differently, compare them with care.",
                name(a),
                name(b)
            )),
            _ => None,
        }
    }

    /// What TTFT counts, when a side's streams carried reasoning (`None` otherwise).
    ///
    /// ```
    /// use servebench::compare::compare;
    /// use servebench::result::{BenchmarkResult, ReasoningFigures};
    /// let a = BenchmarkResult::default();
    /// let mut b = BenchmarkResult::default();
    /// assert_eq!(compare(&a, &b).ttft_note(), None);
    /// b.reasoning = Some(ReasoningFigures::default());
    /// assert!(compare(&a, &b).ttft_note().unwrap().contains("the candidate streamed reasoning"));
    /// ```
    pub fn ttft_note(&self) -> Option<String> {
        let who = match self.reasoning {
            (true, true) => "both runs",
            (true, false) => "the baseline",
            (false, true) => "the candidate",
            (false, false) => return None,
        };
        Some(format!(
            "Note: {who} streamed reasoning: {}.",
            super::production::TTFT_COUNTS_EITHER
        ))
    }

    /// A plain-text table: metric, baseline, candidate, absolute change, percent change,
    /// verdict; columns padded with spaces, no trailing spaces (rendered by [`write_text`]).
    ///
    /// ```
    /// use servebench::compare::compare;
    /// use servebench::BenchmarkResult;
    /// let base = BenchmarkResult { total_token_throughput_per_s: Some(9632.01), ..Default::default() };
    /// let cand = BenchmarkResult { total_token_throughput_per_s: Some(10570.88), ..Default::default() };
    /// let text = compare(&base, &cand).to_text();
    /// assert!(text.lines().nth(1).unwrap().ends_with("9632.01      10570.88     +938.87      +9.75%     better"));
    /// ```
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = write_text(&mut out, self);
        out
    }

    /// The same table in markdown ([`write_markdown`]).
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = write_markdown(&mut out, self);
        out
    }
}
