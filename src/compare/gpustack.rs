//! The comparisons behind GPUStack's performance documents
//! (`hack/perf/generate_throughput_optimization_doc.py`), as data: what each figure is and
//! what the generator's rules decide, never how it is printed
//! ([`crate::format::gpustack`] writes them as markdown and as the plain text the seed shows):
//!
//! - a [`Cell`] (total TPS, mean TPOT) and its [`Annotation`] (change, skipped, N/A);
//! - the conclusion table ([`ConclusionTable`]) of baseline vs optimized per profile;
//! - the group "Summary:" figures ([`speed_summary`]);
//! - the "Summary of Optimization Options" ladder ([`optimization_ladder`]) with its skip
//!   rules, and the recommended final configuration ([`Ladder::final_parameters`]);
//! - in [`latency_cell`] and [`latency_summary`], the latency document's cells and summary.
//!
//! Percentages are computed from the values as the results hold them (unrounded when the
//! result came from raw data; a parsed text report holds the printed two-decimal values).
//!
//! ```
//! use servebench::compare::gpustack::{conclusion_row, Annotation};
//! use servebench::result::{BenchmarkResult, Summary};
//! let run = |tps: f64, tpot: f64| BenchmarkResult {
//!     successful_requests: Some(1000),
//!     total_token_throughput_per_s: Some(tps),
//!     tpot: Some(Summary { mean: Some(tpot), ..Default::default() }),
//!     ..Default::default()
//! };
//! let row = conclusion_row("ShareGPT Profile", &run(9632.01, 25.89), &run(10570.88, 24.71));
//! let Some(Annotation::Change { percent }) = row.optimized.annotation else { panic!() };
//! assert!((percent - 9.747).abs() < 1e-3);
//! assert_eq!(row.baseline.annotation, None);
//! ```

pub(crate) mod latency;

pub use latency::{
    baseline_latency_cell, latency_cell, latency_summary, LatencyAnnotation, LatencyCell,
    LatencySummary,
};

use serde::Serialize;

use super::{Delta, MEAN_TPOT, TOTAL_TOKEN_THROUGHPUT};
use crate::result::BenchmarkResult;

/// Header of the conclusion table's baseline column, as GPUStack's generator prints it.
pub const BASELINE_HEADER: &str = "baseline (vLLM without any optimizations)";

/// What follows a candidate's `Total TPS:` figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Annotation {
    /// The throughput change against the baseline, percent: `(+9.75%)`, green; `(-3.10%)`, red.
    Change {
        /// `(candidate - baseline) / baseline * 100`.
        percent: f64,
    },
    /// Fewer than all requests succeeded: `(Success rate: 51.6%, optimization skipped)`, red.
    SuccessRateSkipped {
        /// Successful / total requests, as a fraction (0.516).
        success_rate: f64,
    },
    /// Lower than the best step so far:
    /// `(+7.60%,lower than previous +8.47%, optimization skipped in final command)`, yellow.
    /// The generator does not print this; the GPUStack authors type it by hand, and
    /// servebench prints exactly their wording.
    LowerThanPrevious {
        /// This step's change against the baseline, percent.
        percent: f64,
        /// The best accepted step's change against the baseline, percent.
        previous_percent: f64,
    },
    /// A change the decision did not call better or worse (a study's verdict):
    /// `(+1.40%, within noise)`, no colour (green or red would claim what the verdict did
    /// not).
    Judged {
        /// `(candidate - baseline) / baseline * 100`.
        percent: f64,
        /// The verdict's words (`within noise`).
        verdict: &'static str,
    },
    /// A throughput is missing or not positive: `N/A`, no colour.
    NotAvailable,
}

/// The number of requests a run was meant to send, as far as `result` tells: its profile's
/// `total_requests`, else successful + failed.
pub fn requests_sent(result: &BenchmarkResult) -> Option<u64> {
    result
        .meta
        .profile
        .as_ref()
        .map(|p| p.total_requests)
        .or_else(|| {
            result
                .successful_requests
                .map(|ok| ok.saturating_add(result.failed_requests.unwrap_or(0)))
        })
}

/// Success rate of `candidate` in a comparison against `baseline`: successful / total, the
/// total from the candidate's profile when it carries one, else its own successful + failed
/// when it counts its failures, else the baseline's ([`requests_sent`]): the seed's MTP
/// block, 516 successful and no failure count where the ShareGPT baseline sent 1000, is
/// 51.6%; a candidate with 200 successful and 0 failed is 100% whatever the baseline sent.
///
/// ```
/// use servebench::compare::gpustack::success_rate;
/// use servebench::result::BenchmarkResult;
/// let base = BenchmarkResult { successful_requests: Some(1000), failed_requests: Some(0), ..Default::default() };
/// let cand = BenchmarkResult { successful_requests: Some(200), failed_requests: Some(0), ..Default::default() };
/// assert_eq!(success_rate(&cand, &base), Some(1.0));
/// let cand = BenchmarkResult { successful_requests: Some(60), failed_requests: Some(40), ..Default::default() };
/// assert_eq!(success_rate(&cand, &base), Some(0.6));
/// let cand = BenchmarkResult { successful_requests: Some(516), ..Default::default() };
/// assert_eq!(success_rate(&cand, &base), Some(0.516));
/// ```
pub fn success_rate(candidate: &BenchmarkResult, baseline: &BenchmarkResult) -> Option<f64> {
    let fallback = match candidate.failed_requests {
        Some(_) => None,
        None => requests_sent(baseline),
    };
    candidate.success_rate(fallback)
}

/// GPUStack's `throughput_annotation`: the success-rate skip when fewer than all requests
/// succeeded, else the percent change, else `N/A` when a throughput is missing or not positive.
pub fn throughput_annotation(
    baseline_tps: Option<f64>,
    candidate_tps: Option<f64>,
    success_rate: Option<f64>,
) -> Annotation {
    if let Some(rate) = success_rate {
        if rate < 1.0 {
            return Annotation::SuccessRateSkipped { success_rate: rate };
        }
    }
    match (baseline_tps, candidate_tps) {
        (Some(b), Some(c)) if b > 0.0 && c > 0.0 => match Delta::new(b, c).percent() {
            Some(percent) => Annotation::Change { percent },
            None => Annotation::NotAvailable,
        },
        _ => Annotation::NotAvailable,
    }
}

/// One table cell: `Total TPS: … [annotation] Mean TPOT(ms): …`. Missing values print `N/A`
/// (GPUStack's generator would print `0.00`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cell {
    /// Total token throughput, tok/s.
    pub total_tps: Option<f64>,
    /// Mean TPOT, ms.
    pub mean_tpot_ms: Option<f64>,
    /// What follows the throughput (baseline cells have none).
    pub annotation: Option<Annotation>,
}

impl Cell {
    /// A cell of `result`'s figures with no annotation (a baseline cell).
    pub fn of(result: &BenchmarkResult) -> Cell {
        Cell {
            total_tps: TOTAL_TOKEN_THROUGHPUT.value(result),
            mean_tpot_ms: MEAN_TPOT.value(result),
            annotation: None,
        }
    }

    /// A candidate cell: `candidate`'s figures annotated against `baseline`
    /// ([`throughput_annotation`] with [`success_rate`]).
    pub fn candidate(baseline: &BenchmarkResult, candidate: &BenchmarkResult) -> Cell {
        let mut cell = Cell::of(candidate);
        cell.annotation = Some(throughput_annotation(
            TOTAL_TOKEN_THROUGHPUT.value(baseline),
            cell.total_tps,
            success_rate(candidate, baseline),
        ));
        cell
    }
}

/// One row of the conclusion table: a benchmark case, its baseline and optimized cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConclusionRow {
    /// The case's name (`ShareGPT Profile`).
    pub case: String,
    /// The baseline cell.
    pub baseline: Cell,
    /// The optimized cell, annotated.
    pub optimized: Cell,
}

/// The conclusion row of `optimized` against `baseline`.
pub fn conclusion_row(
    case: &str,
    baseline: &BenchmarkResult,
    optimized: &BenchmarkResult,
) -> ConclusionRow {
    ConclusionRow {
        case: case.to_string(),
        baseline: Cell::of(baseline),
        optimized: Cell::candidate(baseline, optimized),
    }
}

/// "Comparison of benchmark results before and after optimization": one row per case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConclusionTable {
    /// The baseline column's header ([`BASELINE_HEADER`] by default).
    pub baseline_header: String,
    /// The rows.
    pub rows: Vec<ConclusionRow>,
}

impl ConclusionTable {
    /// A table with GPUStack's default baseline header.
    pub fn new(rows: Vec<ConclusionRow>) -> ConclusionTable {
        ConclusionTable {
            baseline_header: BASELINE_HEADER.to_string(),
            rows,
        }
    }
}

/// GPUStack's group "Summary:" sentence: the fastest and slowest of a group by total TPS.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedSummary {
    /// Name of the fastest run.
    pub fastest: String,
    /// Name of the slowest run.
    pub slowest: String,
    /// Fastest total TPS.
    pub fastest_tps: f64,
    /// Slowest total TPS.
    pub slowest_tps: f64,
    /// Mean TPOT of the fastest run, ms (`None`: missing or not positive).
    pub fastest_tpot_ms: Option<f64>,
    /// Mean TPOT of the slowest run, ms.
    pub slowest_tpot_ms: Option<f64>,
}

/// The summary of a group of named runs, or `None` with fewer than two runs or a missing or
/// non-positive throughput. Ties keep the input order (the first is "slowest", the last
/// "fastest"), as the generator's stable sort does.
///
/// ```
/// use servebench::compare::gpustack::speed_summary;
/// use servebench::result::{BenchmarkResult, Summary};
/// let run = |tps: f64, tpot: f64| BenchmarkResult {
///     total_token_throughput_per_s: Some(tps),
///     tpot: Some(Summary { mean: Some(tpot), ..Default::default() }),
///     ..Default::default()
/// };
/// let (a, b) = (run(9632.01, 25.89), run(4995.66, 180.73));
/// let s = speed_summary(&[("vLLM", &a), ("SGLang", &b)]).unwrap();
/// assert_eq!(s.sentence(), "`vLLM` Total TPS = 9632.01, `SGLang` Total TPS = 4995.66. \
///     `vLLM` is faster by 4636.35 tok/s (92.81%); Mean TPOT = 25.89 ms vs 180.73 ms, \
///     reduced by 154.84 ms (85.67%).");
/// ```
pub fn speed_summary(runs: &[(&str, &BenchmarkResult)]) -> Option<SpeedSummary> {
    if runs.len() < 2 {
        return None;
    }
    let tps = |r: &BenchmarkResult| TOTAL_TOKEN_THROUGHPUT.value(r).unwrap_or(0.0);
    let mut ranked: Vec<&(&str, &BenchmarkResult)> = runs.iter().collect();
    ranked.sort_by(|a, b| tps(a.1).total_cmp(&tps(b.1)));
    let (slow, fast) = (ranked.first()?, ranked.last()?);
    let (slowest_tps, fastest_tps) = (tps(slow.1), tps(fast.1));
    if slowest_tps <= 0.0 || fastest_tps <= 0.0 || !fastest_tps.is_finite() {
        return None;
    }
    let tpot = |r: &BenchmarkResult| MEAN_TPOT.value(r).filter(|v| *v > 0.0);
    Some(SpeedSummary {
        fastest: fast.0.to_string(),
        slowest: slow.0.to_string(),
        fastest_tps,
        slowest_tps,
        fastest_tpot_ms: tpot(fast.1),
        slowest_tpot_ms: tpot(slow.1),
    })
}

/// What the ladder decided for one optimization step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Verdict {
    /// The step is the best so far and its parameters enter the final configuration.
    Accepted,
    /// The step succeeded on fewer than all requests.
    SkippedSuccessRate {
        /// Successful / total requests, as a fraction.
        success_rate: f64,
    },
    /// The step is lower than the best step accepted before it.
    SkippedLowerThanPrevious {
        /// The best accepted step's change against the baseline, percent.
        previous_percent: f64,
    },
    /// No earlier step was accepted and the step is below the baseline.
    SkippedBelowBaseline,
    /// A throughput is missing or not positive.
    NotAvailable,
}

impl Verdict {
    /// Whether the step enters the final configuration.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Verdict::Accepted)
    }
}

/// One step of the optimization ladder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LadderStep {
    /// The step's name (`Prefix Cache && Quantization`).
    pub name: String,
    /// The step's cell, annotated.
    pub optimized: Cell,
    /// The baseline's cell.
    pub baseline: Cell,
    /// The decision.
    pub verdict: Verdict,
    /// The step's backend parameters.
    pub backend_parameters: Vec<String>,
}

/// The "Summary of Optimization Options": each step against one baseline, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ladder {
    /// The steps, in the order tried.
    pub steps: Vec<LadderStep>,
    /// Index into `steps` of the best accepted step (the recommended configuration);
    /// `None` when no step was accepted (keep the baseline).
    pub best: Option<usize>,
    /// The baseline's backend parameters.
    pub baseline_parameters: Vec<String>,
}

/// Runs the optimization ladder: each step, in order, is compared with `baseline` and
///
/// 1. skipped when its success rate ([`success_rate`]) is below 100%
///    (`(Success rate: 51.6%, optimization skipped)`);
/// 2. else skipped when its total TPS is lower than the best accepted step so far
///    (`(+7.60%,lower than previous +8.47%, optimization skipped in final command)`), or,
///    before any step is accepted, lower than the baseline (printed as a plain red change);
/// 3. else accepted: it becomes the best so far.
///
/// Throughputs are compared unrounded.
///
/// ```
/// use servebench::compare::gpustack::{optimization_ladder, Verdict};
/// use servebench::BenchmarkResult;
/// let run = |tps: f64, ok: u64| BenchmarkResult {
///     successful_requests: Some(ok),
///     total_token_throughput_per_s: Some(tps),
///     ..Default::default()
/// };
/// let base = run(100.0, 10);
/// let (a, b, c) = (run(110.0, 10), run(105.0, 10), run(150.0, 6));
/// let l = optimization_ladder(&base, &[("A", &a), ("B", &b), ("C", &c)]);
/// assert_eq!(l.best, Some(0));
/// assert_eq!(l.steps[1].optimized.text(), "Total TPS: 105.00 (+5.00%,lower than previous +10.00%, optimization skipped in final command) Mean TPOT(ms): N/A");
/// assert_eq!(l.steps[2].verdict, Verdict::SkippedSuccessRate { success_rate: 0.6 });
/// ```
pub fn optimization_ladder(
    baseline: &BenchmarkResult,
    steps: &[(&str, &BenchmarkResult)],
) -> Ladder {
    let base_tps = TOTAL_TOKEN_THROUGHPUT.value(baseline);
    let base_cell = Cell::of(baseline);
    let mut best: Option<(usize, f64, f64)> = None; // (index, tps, percent)
    let mut out = Vec::with_capacity(steps.len());
    for (i, (name, step)) in steps.iter().enumerate() {
        let mut cell = Cell::candidate(baseline, step);
        let annotation = cell.annotation.unwrap_or(Annotation::NotAvailable);
        let verdict = match annotation {
            Annotation::SuccessRateSkipped { success_rate } => {
                Verdict::SkippedSuccessRate { success_rate }
            }
            Annotation::NotAvailable
            | Annotation::LowerThanPrevious { .. }
            | Annotation::Judged { .. } => Verdict::NotAvailable,
            Annotation::Change { percent } => {
                let tps = cell.total_tps.unwrap_or(0.0);
                match best {
                    Some((_, best_tps, best_percent)) if tps < best_tps => {
                        cell.annotation = Some(Annotation::LowerThanPrevious {
                            percent,
                            previous_percent: best_percent,
                        });
                        Verdict::SkippedLowerThanPrevious {
                            previous_percent: best_percent,
                        }
                    }
                    None if base_tps.is_some_and(|b| tps < b) => Verdict::SkippedBelowBaseline,
                    _ => {
                        best = Some((i, tps, percent));
                        Verdict::Accepted
                    }
                }
            }
        };
        out.push(LadderStep {
            name: name.to_string(),
            optimized: cell,
            baseline: base_cell,
            verdict,
            backend_parameters: step.meta.backend_parameters.clone(),
        });
    }
    Ladder {
        steps: out,
        best: best.map(|(i, _, _)| i),
        baseline_parameters: baseline.meta.backend_parameters.clone(),
    }
}

/// A backend parameter's key: the text before `=` or the first space (`--max-model-len`).
fn param_key(p: &str) -> &str {
    let p = p.trim();
    let end = p.find(['=', ' ']).unwrap_or(p.len());
    p.get(..end).unwrap_or(p)
}

impl Ladder {
    /// The best accepted step, if any.
    pub fn recommended(&self) -> Option<&LadderStep> {
        self.best.and_then(|i| self.steps.get(i))
    }

    /// The recommended final configuration: the backend parameters accumulated over the
    /// baseline and every accepted step, in order. Each accepted step's list replaces the
    /// parameters it names (same key before `=`) and keeps its own order; parameters only
    /// earlier steps named come first. When steps list their whole command line (as the
    /// seed's do), this is the best step's list.
    pub fn final_parameters(&self) -> Vec<String> {
        let mut acc = self.baseline_parameters.clone();
        for step in self.steps.iter().filter(|s| s.verdict.is_accepted()) {
            let keys: Vec<&str> = step
                .backend_parameters
                .iter()
                .map(|p| param_key(p))
                .collect();
            acc.retain(|p| !keys.contains(&param_key(p)));
            acc.extend(step.backend_parameters.iter().cloned());
        }
        acc
    }
}
