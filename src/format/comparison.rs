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

use crate::compare::workload::WorkloadDifference;
use crate::compare::{Comparison, MetricDelta};
use crate::noise::outcome::EffectOutcome;
use crate::noise::verdict::NoisyComparison;
use crate::profile::Dataset;
use crate::result::Convention;

/// The plain-text table: columns padded with spaces, no trailing spaces.
pub fn write_text(out: &mut impl fmt::Write, c: &Comparison) -> fmt::Result {
    write_text_by(out, c, &|m| m.verdict().to_string())
}

/// The plain-text table with each row's verdict from `verdict`.
fn write_text_by(
    out: &mut impl fmt::Write,
    c: &Comparison,
    verdict: &dyn Fn(&MetricDelta) -> String,
) -> fmt::Result {
    writeln!(
        out,
        "{:<34} {:<12} {:<12} {:<12} {:<10} Verdict",
        "Metric", "Baseline", "Candidate", "Change", "Change %"
    )?;
    for m in &c.metrics {
        let [label, base, cand, change, percent, _] = cells(m);
        let verdict = verdict(m);
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
    write_markdown_by(out, c, &|m| m.verdict().to_string())
}

fn write_markdown_by(
    out: &mut impl fmt::Write,
    c: &Comparison,
    verdict: &dyn Fn(&MetricDelta) -> String,
) -> fmt::Result {
    out.write_str(
        "| Metric | Baseline | Candidate | Change | Change % | Verdict |\n|---|---|---|---|---|---|\n",
    )?;
    for m in &c.metrics {
        let mut cells = cells(m);
        cells[5] = verdict(m);
        writeln!(out, "| {} |", cells.join(" | "))?;
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

/// The verdict cell of `m` when the noise is judged by `noise`: the metric's
/// multiplicity-controlled [`EffectOutcome`] where it has an interval, else `noise unknown`
/// (never better or worse from point values alone: the sign of the change says which way
/// it moved).
fn noisy_verdict(m: &MetricDelta, noise: &NoisyComparison) -> String {
    if m.delta.base.is_nan() || m.delta.candidate.is_nan() {
        return "N/A".into();
    }
    noise
        .metric(&m.metric)
        .map_or(EffectOutcome::NoiseUnknown, |d| d.outcome)
        .as_str()
        .to_string()
}

/// A dataset in a few words: `random 1024/128 tokens`, `ShareGPT`, `mooncake`.
fn dataset_words(d: &Dataset) -> String {
    match d {
        Dataset::Random {
            input_tokens,
            output_tokens,
            ..
        } => format!("random {input_tokens}/{output_tokens} tokens"),
        Dataset::ShareGpt { path: None } => "ShareGPT".into(),
        Dataset::ShareGpt { path: Some(p) } => format!("ShareGPT ({})", p.display()),
        Dataset::Structured(spec) => spec.name().to_string(),
    }
}

fn convention_name(c: Convention) -> &'static str {
    match c {
        Convention::Vllm => "vllm",
        Convention::Guidellm => "guidellm",
    }
}

/// The warning printed when the two sides ran different workloads or conventions: one
/// line naming every difference; `None` when there is none.
///
/// ```
/// use servebench::compare::WorkloadDifference;
/// use servebench::format::comparison::workload_warning;
/// let w = workload_warning(&[WorkloadDifference::RequestRate { base: 10.0, candidate: 20.0 }]);
/// assert_eq!(
///     w.unwrap(),
///     "Warning: the two sides ran different workloads (request rate 10 vs 20 req/s); \
///      the differences below are not only the configurations' effect."
/// );
/// ```
pub fn workload_warning(diffs: &[WorkloadDifference]) -> Option<String> {
    if diffs.is_empty() {
        return None;
    }
    let rate = |r: f64| {
        if r.is_infinite() {
            "inf".to_string()
        } else {
            format!("{r}")
        }
    };
    let cap = |c: Option<u64>| c.map_or_else(|| "none".to_string(), |c| c.to_string());
    let parts: Vec<String> = diffs
        .iter()
        .map(|d| match d {
            WorkloadDifference::Dataset { base, candidate } => format!(
                "dataset {} vs {}",
                dataset_words(base),
                dataset_words(candidate)
            ),
            WorkloadDifference::RequestRate { base, candidate } => {
                format!("request rate {} vs {} req/s", rate(*base), rate(*candidate))
            }
            WorkloadDifference::TotalRequests { base, candidate } => {
                format!("{base} vs {candidate} requests")
            }
            WorkloadDifference::MaxConcurrency { base, candidate } => {
                format!("concurrency cap {} vs {}", cap(*base), cap(*candidate))
            }
            WorkloadDifference::Convention { base, candidate } => format!(
                "{} vs {} convention",
                convention_name(*base),
                convention_name(*candidate)
            ),
        })
        .collect();
    Some(format!(
        "Warning: the two sides ran different workloads ({}); the differences below are not \
         only the configurations' effect.",
        parts.join(", ")
    ))
}

impl Comparison {
    /// The plain-text table whose verdict column is `noise`'s outcome of each metric
    /// (`noise unknown` where it has no interval): no better or worse without the noise.
    pub fn to_text_with(&self, noise: &NoisyComparison) -> String {
        let mut out = String::new();
        let _ = write_text_by(&mut out, self, &|m| noisy_verdict(m, noise));
        out
    }

    /// The markdown table of [`Comparison::to_text_with`].
    pub fn to_markdown_with(&self, noise: &NoisyComparison) -> String {
        let mut out = String::new();
        let _ = write_markdown_by(&mut out, self, &|m| noisy_verdict(m, noise));
        out
    }

    /// The warning printed under the tables when [`conventions_differ`](Self::conventions_differ).
    pub fn convention_note(&self) -> Option<String> {
        let name = convention_name;
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
