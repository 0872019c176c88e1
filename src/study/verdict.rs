//! The decision rule: is a candidate better than the reference on the target metric?
//! [`decide_results`] asks [`crate::noise::verdict`]: with two or more repetitions on each
//! side, the 95% interval of the difference of means across repetitions; with one run each,
//! the runs' within-run intervals (a block bootstrap over the records, stored in each run
//! file). Without noise information it falls back to [`decide`] on the values alone (a
//! point comparison, and says so). A capacity study's single searches are decided by their
//! capacity intervals ([`decide_capacity`]).

use serde::{Deserialize, Serialize};

use crate::compare::{Direction, Metric};
use crate::result::BenchmarkResult;

/// What the rule concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    /// Better beyond the noise (or, with single runs, simply better).
    Better,
    /// Worse beyond the noise (or simply worse).
    Worse,
    /// The difference is inside the noise.
    WithinNoise,
}

/// The rule's answer with its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The call.
    pub call: Call,
    /// Candidate mean minus reference mean.
    pub difference: f64,
    /// Half-width of the 95% interval of the difference; `None` with single runs.
    pub half_width: Option<f64>,
    /// Where the noise estimate came from (`repetitions`, `within-run intervals`, or empty
    /// for a point comparison).
    #[serde(default)]
    pub basis: String,
}

impl Decision {
    /// `better (+12.3 ± 4.5)`, `within noise (+1.0 ± 4.5)`, `better (single runs)`.
    pub fn text(&self) -> String {
        let call = match self.call {
            Call::Better => "better",
            Call::Worse => "worse",
            Call::WithinNoise => "within noise",
        };
        match self.half_width {
            Some(h) if self.basis.is_empty() => {
                format!("{call} ({:+.2} ± {h:.2})", self.difference)
            }
            Some(h) => format!("{call} ({:+.2} ± {h:.2}, {})", self.difference, self.basis),
            None => format!("{call} (single runs, no interval)"),
        }
    }
}

/// Mean, and the 95% half-width of the mean (`None` for fewer than two values).
pub fn mean_interval(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (f64::NAN, None);
    }
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, None);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, Some(t95(values.len() - 1) * (var / n).sqrt()))
}

/// Student's t, two-sided 95%, for `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 10 => T[d - 1],
        d if d <= 30 => 2.042 + (2.228 - 2.042) * (30 - d) as f64 / 20.0,
        _ => 1.96,
    }
}

/// Compares `candidate` with `reference` (their repetitions' values of one metric);
/// `higher_is_better` gives the metric's direction.
///
/// ```
/// use servebench::study::verdict::{decide, Call};
/// assert_eq!(decide(&[100.0], &[101.0], true).call, Call::Better);
/// assert_eq!(decide(&[100.0, 104.0], &[101.0, 103.0], true).call, Call::WithinNoise);
/// assert_eq!(decide(&[100.0, 100.5], &[110.0, 110.5], false).call, Call::Worse);
/// ```
pub fn decide(reference: &[f64], candidate: &[f64], higher_is_better: bool) -> Decision {
    let (rm, _) = mean_interval(reference);
    let (cm, _) = mean_interval(candidate);
    let difference = cm - rm;
    let sign = if higher_is_better { 1.0 } else { -1.0 };
    let half_width = if reference.len() >= 2 && candidate.len() >= 2 {
        let var = |v: &[f64], m: f64| {
            v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0)
        };
        let se2 = var(reference, rm) / reference.len() as f64
            + var(candidate, cm) / candidate.len() as f64;
        let df = reference.len().min(candidate.len()) - 1;
        Some(t95(df) * se2.sqrt())
    } else {
        None
    };
    let call = match half_width {
        Some(h) if difference.abs() <= h => Call::WithinNoise,
        _ if sign * difference > 0.0 => Call::Better,
        _ if sign * difference < 0.0 => Call::Worse,
        _ => Call::WithinNoise,
    };
    Decision {
        call,
        difference,
        half_width,
        basis: if half_width.is_some() {
            "repetitions".into()
        } else {
            String::new()
        },
    }
}

/// Two single capacity searches: better (worse) only when the candidate's interval lies
/// wholly above (below) the reference's; `difference` is the estimates' difference and
/// `half_width` half the sum of the two intervals' widths (an open end counts as 0 or ∞).
///
/// ```
/// use servebench::result::{CapacityEstimate, SearchKind};
/// use servebench::study::verdict::{decide_capacity, Call};
/// let e = |lo: f64, hi: f64| CapacityEstimate {
///     search: SearchKind::Rate, slo: "ttft:p99<=500ms".into(), estimate: Some((lo + hi) / 2.0),
///     lower: Some(lo), upper: Some(hi), resolution: 1.0, probes: 9, converged: true,
/// };
/// assert_eq!(decide_capacity(&e(10.0, 11.0), &e(11.5, 12.5)).call, Call::Better);
/// assert_eq!(decide_capacity(&e(10.0, 11.0), &e(10.5, 11.5)).call, Call::WithinNoise);
/// assert_eq!(decide_capacity(&e(10.0, 11.0), &e(8.0, 9.0)).call, Call::Worse);
/// ```
pub fn decide_capacity(
    reference: &crate::result::CapacityEstimate,
    candidate: &crate::result::CapacityEstimate,
) -> Decision {
    let ends = |c: &crate::result::CapacityEstimate| {
        (c.lower.unwrap_or(0.0), c.upper.unwrap_or(f64::INFINITY))
    };
    let (rl, ru) = ends(reference);
    let (cl, cu) = ends(candidate);
    let call = if cl > ru {
        Call::Better
    } else if cu < rl {
        Call::Worse
    } else {
        Call::WithinNoise
    };
    let difference = candidate.estimate.unwrap_or(0.0) - reference.estimate.unwrap_or(0.0);
    Decision {
        call,
        difference,
        half_width: Some(((ru - rl) + (cu - cl)) / 2.0),
        basis: "capacity intervals".into(),
    }
}

/// The noise-aware decision on `metric` between two sets of runs (see the module docs).
pub fn decide_results(
    reference: &[&BenchmarkResult],
    candidate: &[&BenchmarkResult],
    metric: &Metric,
) -> Option<Decision> {
    use crate::noise::verdict::{compare_repetitions, compare_runs, NoiseVerdict, VerdictOptions};
    let values = |rs: &[&BenchmarkResult]| {
        rs.iter()
            .filter_map(|r| metric.value(r))
            .collect::<Vec<f64>>()
    };
    let (rv, cv) = (values(reference), values(candidate));
    if rv.is_empty() || cv.is_empty() {
        return None;
    }
    if metric.key == crate::compare::CAPACITY.key {
        if let ([r], [c]) = (reference, candidate) {
            if let (Some(a), Some(b)) = (&r.capacity, &c.capacity) {
                return Some(decide_capacity(a, b));
            }
        }
        return Some(decide(&rv, &cv, true));
    }
    let opts = VerdictOptions::default();
    let (cmp, basis) = match (reference, candidate) {
        ([r], [c]) => (compare_runs(r, c, &opts), "within-run intervals"),
        (rs, cs) if rs.len() >= 2 && cs.len() >= 2 => {
            let own = |x: &[&BenchmarkResult]| x.iter().map(|r| (*r).clone()).collect::<Vec<_>>();
            (
                compare_repetitions(&own(rs), &own(cs), false, &opts),
                "repetitions",
            )
        }
        _ => {
            return Some(decide(
                &rv,
                &cv,
                metric.direction == Direction::HigherIsBetter,
            ))
        }
    };
    let nd = cmp.metrics.iter().find(|d| d.metric.key == metric.key);
    let Some(nd) = nd else {
        return Some(decide(
            &rv,
            &cv,
            metric.direction == Direction::HigherIsBetter,
        ));
    };
    let call = match nd.verdict {
        NoiseVerdict::Better => Call::Better,
        NoiseVerdict::Worse => Call::Worse,
        NoiseVerdict::WithinNoise => Call::WithinNoise,
        NoiseVerdict::Unknown => {
            return Some(decide(
                &rv,
                &cv,
                metric.direction == Direction::HigherIsBetter,
            ))
        }
    };
    Some(Decision {
        call,
        difference: nd.delta.candidate - nd.delta.base,
        half_width: nd.interval.map(|i| (i.hi - i.lo) / 2.0),
        basis: basis.into(),
    })
}
