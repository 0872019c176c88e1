//! The decision rule: is a candidate better than the reference on the target metric, by
//! more than the minimum effect, with the stated confidence? [`decide_results`] answers
//! with one of [`crate::noise::sequential`]'s outcomes and says what the answer rests on
//! (its **basis**):
//!
//! * `simulation, within the model's error` — the simulator with its noise off replays one
//!   run exactly, so the difference is the model's effect without run-to-run noise; what is
//!   uncertain is the model itself, so the difference carries the simulator's stated error
//!   on an effect's size ([`crate::sim::EFFECT_ERROR_FRACTION`]): the band
//!   `difference × (1 ± error)`, and a difference that band does not carry beyond the
//!   minimum effect is "within model error";
//! * `deterministic simulation` — the same without a stated model error (a rule built
//!   with `model_error: None`): the exact difference;
//! * `repetitions` — two or more runs on each side: the Student-t interval of the paired
//!   differences (Welch's for unequal counts), at the full α for a fixed count, at the
//!   look's share of α for `repetitions = "auto"`;
//! * `within-run intervals` — one run each, each with its stored within-run standard error
//!   (a block bootstrap over its records): a normal interval that sees no run-to-run
//!   variation;
//! * `none` — single runs without intervals: no confidence can be stated, so the candidate
//!   is not kept ("no interval").
//!
//! A capacity study's single searches are decided by their capacity intervals
//! ([`decide_capacity`]).

use serde::{Deserialize, Serialize};

use crate::compare::{Direction, Metric};
use crate::noise::dist::t_quantile;
use crate::noise::outcome::EffectOutcome;
use crate::noise::sequential::{classify_exact, classify_interval, Design};
use crate::result::BenchmarkResult;

/// What the rule concluded, as the study records it (`study.json`'s `call`): the decided
/// [`EffectOutcome`] (one rule for `compare`, studies and `ab`), mapped in one place
/// (`Call::of`), plus [`Call::NoInterval`] for single runs without intervals — a study's
/// own basis, which `compare` calls `noise unknown`. It stays a type of its own because its
/// names are written in `study.json` (`below-minimum-effect`, `no-interval`) and its texts
/// in the study document (`no interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    /// Better by more than the minimum effect, with the stated confidence: kept.
    Better,
    /// Worse, with the stated confidence.
    Worse,
    /// The difference is inside the noise.
    WithinNoise,
    /// Better, but not shown to be better by the minimum effect.
    BelowMinimumEffect,
    /// Single runs without intervals: no confidence can be stated.
    NoInterval,
    /// The sequential design wants more repetitions.
    Undecided,
}

impl Call {
    /// `better`, `worse`, `within noise`, `better but below the minimum effect`,
    /// `no interval`, `undecided`.
    pub fn as_str(self) -> &'static str {
        match self {
            Call::Better => "better",
            Call::Worse => "worse",
            Call::WithinNoise => "within noise",
            Call::BelowMinimumEffect => "better but below the minimum effect",
            Call::NoInterval => "no interval",
            Call::Undecided => "undecided",
        }
    }

    /// The call of a decided [`EffectOutcome`]. A study asks [`Question::Keep`], which
    /// calls every regression beyond the noise worse (never `WorseBelowMinEffect`); an
    /// outcome without an interval ([`EffectOutcome::NoiseUnknown`]) states no confidence.
    ///
    /// [`Question::Keep`]: crate::noise::outcome::Question::Keep
    fn of(o: EffectOutcome) -> Call {
        match o {
            EffectOutcome::Better => Call::Better,
            EffectOutcome::BetterBelowMinEffect => Call::BelowMinimumEffect,
            EffectOutcome::WithinNoise => Call::WithinNoise,
            EffectOutcome::WorseBelowMinEffect | EffectOutcome::Worse => Call::Worse,
            EffectOutcome::NoiseUnknown => Call::NoInterval,
            EffectOutcome::Undecided => Call::Undecided,
        }
    }
}

/// The basis of a decision on exact simulator differences.
pub const DETERMINISTIC: &str = "deterministic simulation";
/// The basis of a decision on simulator differences with the model's stated error.
pub const MODEL_ERROR: &str = "simulation, within the model's error";
/// The basis of a decision on repetitions.
pub const REPETITIONS: &str = "repetitions";
/// The basis of a decision on single runs' within-run intervals.
pub const WITHIN_RUN: &str = "within-run intervals";
/// The basis of a capacity study's decision on two single searches.
pub const CAPACITY_INTERVALS: &str = "capacity intervals";
/// The basis of a decision without any noise information.
pub const NO_BASIS: &str = "none";

/// The rule's answer with its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The call.
    pub call: Call,
    /// Candidate mean minus reference mean.
    pub difference: f64,
    /// Half-width of the interval of the difference; `None` without an interval.
    pub half_width: Option<f64>,
    /// What the decision rests on: [`DETERMINISTIC`], [`REPETITIONS`], [`WITHIN_RUN`] or
    /// [`NO_BASIS`].
    #[serde(default)]
    pub basis: String,
    /// Runs on the reference side.
    #[serde(default)]
    pub n_reference: usize,
    /// Runs on the candidate side.
    #[serde(default)]
    pub n_candidate: usize,
    /// The interval of the difference `(lo, hi)`, in the metric's unit.
    #[serde(default)]
    pub interval: Option<(f64, f64)>,
    /// The interval's two-sided confidence level (a sequential look's is above the
    /// design's `1 − α`: each look spends only part of α).
    #[serde(default)]
    pub confidence: Option<f64>,
    /// The difference in percent of the reference's mean.
    #[serde(default)]
    pub percent: Option<f64>,
    /// The minimum effect, percent of the reference's mean.
    #[serde(default)]
    pub min_effect_percent: f64,
    /// The rule applied, in words (`study.json`'s `rule`): [`decide`] and
    /// [`decide_capacity`] state their fixed rule; a study's rule is kept as data until the
    /// study document renders the decision and words it ([`crate::format::study`]).
    #[serde(default)]
    pub rule: String,
    /// The study's rule this decision applied, as data (not written: `rule` holds its
    /// words once the document renders it).
    #[serde(skip)]
    pub(crate) study_rule: Option<Rule>,
}

/// The rule a study decides by: its error rate and minimum effect, whether its looks are
/// sequential, whether the runs are a deterministic simulation. Data: the study document
/// words it (`crate::format::study`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Error rate, minimum effect and budget.
    pub design: Design,
    /// `repetitions = "auto"`: a look of the sequential design.
    pub sequential: bool,
    /// Both sides ran on the simulator with its noise off.
    pub deterministic: bool,
    /// With `deterministic`: the simulator's stated error on an effect's size, a fraction
    /// of the difference ([`crate::sim::EFFECT_ERROR_FRACTION`]); `None`: exact.
    pub model_error: Option<f64>,
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

/// Student's t, two-sided 95%, for `df` degrees of freedom, as a printed t-table gives it:
/// [`t_quantile`]`(0.975, df)` rounded to three decimals (12.706, 4.303, 3.182, … —
/// the document's `mean ± half-width` figures, which a reader checks against such a
/// table). The decisions themselves use the unrounded quantile
/// ([`crate::noise::sequential`]).
fn t95(df: usize) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    (1000.0 * t_quantile(0.975, df as f64)).round() / 1000.0
}

/// Compares `candidate` with `reference` (their repetitions' values of one metric) without
/// a minimum effect: the 95% Welch interval with two or more values each, else the point
/// values (a sign, not a verdict). `higher_is_better` gives the metric's direction.
///
/// ```
/// use servebench::study::{decide, Call};
/// assert_eq!(decide(&[100.0], &[101.0], true).call, Call::Better);
/// assert_eq!(decide(&[100.0, 104.0], &[101.0, 103.0], true).call, Call::WithinNoise);
/// assert_eq!(decide(&[100.0, 100.5], &[110.0, 110.5], false).call, Call::Worse);
/// ```
pub fn decide(reference: &[f64], candidate: &[f64], higher_is_better: bool) -> Decision {
    let (rm, _) = mean_interval(reference);
    let (cm, _) = mean_interval(candidate);
    let difference = cm - rm;
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
    // The one rule with no minimum effect: the interval, else the point difference.
    let call = Call::of(match half_width {
        Some(h) => classify_interval(difference - h, difference + h, 0.0, higher_is_better, false),
        None => classify_exact(difference, 0.0, higher_is_better),
    });
    Decision {
        call,
        difference,
        half_width,
        basis: if half_width.is_some() {
            REPETITIONS.into()
        } else {
            NO_BASIS.into()
        },
        n_reference: reference.len(),
        n_candidate: candidate.len(),
        interval: half_width.map(|h| (difference - h, difference + h)),
        confidence: half_width.map(|_| 0.95),
        percent: (rm != 0.0 && rm.is_finite()).then(|| 100.0 * difference / rm.abs()),
        min_effect_percent: 0.0,
        rule: "a point comparison of the means (95% interval with repetitions)".into(),
        study_rule: None,
    }
}

/// Two single capacity searches: better (worse) only when the candidate's interval lies
/// wholly above (below) the reference's; `difference` is the estimates' difference and
/// `half_width` half the sum of the two intervals' widths (an open end counts as 0 or ∞).
///
/// ```
/// use servebench::result::{CapacityEstimate, SearchKind};
/// use servebench::study::{decide_capacity, Call};
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
        basis: CAPACITY_INTERVALS.into(),
        n_reference: 1,
        n_candidate: 1,
        interval: Some((cl - ru, cu - rl)),
        confidence: None,
        percent: reference
            .estimate
            .filter(|r| *r != 0.0 && r.is_finite())
            .map(|r| 100.0 * difference / r.abs()),
        min_effect_percent: 0.0,
        rule:
            "better only when the candidate's capacity interval lies wholly above the reference's"
                .into(),
        study_rule: None,
    }
}

/// The decision on `metric` between two sets of runs under `rule` (see the module docs).
/// `None` when a side has no value.
pub fn decide_results(
    reference: &[&BenchmarkResult],
    candidate: &[&BenchmarkResult],
    metric: &Metric,
    rule: &Rule,
) -> Option<Decision> {
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
    }
    let higher = metric.direction == Direction::HigherIsBetter;
    let d = &rule.design;
    let (rm, _) = mean_interval(&rv);
    let (cm, _) = mean_interval(&cv);
    let difference = cm - rm;
    let threshold = d.min_effect_percent / 100.0 * rm.abs();
    let mut out = Decision {
        call: Call::NoInterval,
        difference,
        half_width: None,
        basis: NO_BASIS.into(),
        n_reference: rv.len(),
        n_candidate: cv.len(),
        interval: None,
        confidence: None,
        percent: (rm != 0.0 && rm.is_finite()).then(|| 100.0 * difference / rm.abs()),
        min_effect_percent: d.min_effect_percent,
        rule: String::new(),
        study_rule: Some(*rule),
    };
    let se = |r: &BenchmarkResult| r.intervals.as_ref()?.for_metric(metric).map(|i| i.se);
    let (interval, confidence, basis) = if rule.deterministic {
        match rule.model_error {
            Some(k) => {
                let h = k * difference.abs();
                let (lo, hi) = (difference - h, difference + h);
                out.call = Call::of(classify_interval(lo, hi, threshold, higher, false));
                out.interval = Some((lo, hi));
                out.half_width = Some(h);
                out.basis = MODEL_ERROR.into();
            }
            None => {
                out.call = Call::of(classify_exact(difference, threshold, higher));
                out.basis = DETERMINISTIC.into();
            }
        }
        return Some(out);
    } else if rv.len() >= 2 && cv.len() >= 2 {
        let look = if rule.sequential {
            d.look(&rv, &cv, higher)
        } else {
            d.fixed(&rv, &cv, higher)
        };
        out.call = Call::of(look.outcome);
        (look.interval, look.confidence, REPETITIONS)
    } else if let ([r], [c]) = (reference, candidate) {
        match (se(r), se(c)) {
            (Some(a), Some(b)) => {
                let z = crate::noise::dist::normal_quantile(1.0 - d.alpha / 2.0);
                let h = z * (a * a + b * b).sqrt();
                let (lo, hi) = (difference - h, difference + h);
                out.call = Call::of(classify_interval(lo, hi, threshold, higher, false));
                (Some((lo, hi)), 1.0 - d.alpha, WITHIN_RUN)
            }
            _ => return Some(out),
        }
    } else {
        return Some(out);
    };
    out.interval = interval;
    out.half_width = interval.map(|(lo, hi)| (hi - lo) / 2.0);
    out.confidence = interval.map(|_| confidence);
    out.basis = basis.into();
    if interval.is_none() {
        out.call = Call::NoInterval;
        out.basis = NO_BASIS.into();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::TOTAL_TOKEN_THROUGHPUT as T;
    use crate::noise::{Interval, RunIntervals};

    fn run(v: f64, se: Option<f64>) -> BenchmarkResult {
        let mut r = BenchmarkResult {
            total_token_throughput_per_s: Some(v),
            ..Default::default()
        };
        if let Some(se) = se {
            let mut ri = RunIntervals::empty(0.95, 1000, 0);
            ri.total_token_throughput_per_s = Some(Interval {
                lo: v - 1.96 * se,
                hi: v + 1.96 * se,
                se,
            });
            r.intervals = Some(ri);
        }
        r
    }

    fn rule(deterministic: bool) -> Rule {
        Rule {
            design: Design::default(),
            sequential: false,
            deterministic,
            model_error: None,
        }
    }

    /// The t-table values the document's `± half-width` figures are printed with: the
    /// classic three-decimal table for 1–10 degrees of freedom, the same rounding of the
    /// exact quantile beyond (20: 2.086, 60: 2.000).
    #[test]
    fn t95_is_the_three_decimal_t_table() {
        let table = [
            12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        ];
        for (i, want) in table.iter().enumerate() {
            assert_eq!(t95(i + 1), *want, "df {}", i + 1);
        }
        assert_eq!(t95(20), 2.086);
        assert_eq!(t95(60), 2.0);
        assert_eq!(t95(0), f64::INFINITY);
    }

    #[test]
    fn each_basis_gives_its_own_decision() {
        let (a, b) = (run(1000.0, Some(2.0)), run(1005.0, Some(2.0)));
        // Deterministic: +0.5 % is exact, and below the 1 % minimum effect.
        let d = decide_results(&[&a], &[&b], &T, &rule(true)).unwrap();
        assert_eq!(
            (d.call, d.basis.as_str()),
            (Call::BelowMinimumEffect, DETERMINISTIC)
        );
        assert!(d.interval.is_none());
        // With the model's stated error (a third of the effect): +0.5 % is [+0.33, +0.67] %,
        // below the minimum effect; +1.2 % is [+0.8, +1.6] %, not beyond it: within model
        // error is not "better"; +6.42 % keeps its call but states the band; no difference
        // stays exactly none.
        let model = Rule {
            model_error: Some(1.0 / 3.0),
            ..rule(true)
        };
        let d = decide_results(&[&a], &[&b], &T, &model).unwrap();
        assert_eq!(
            (d.call, d.basis.as_str()),
            (Call::BelowMinimumEffect, MODEL_ERROR)
        );
        let at = |v: f64| decide_results(&[&a], &[&run(v, None)], &T, &model).unwrap();
        assert_eq!(at(1012.0).call, Call::BelowMinimumEffect);
        assert_eq!(at(1064.2).call, Call::Better);
        let (lo, hi) = at(1064.2).interval.unwrap();
        assert!(
            (lo - 42.8).abs() < 1e-9 && (hi - 85.6).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(at(990.0).call, Call::Worse);
        assert_eq!(at(1000.0).call, Call::WithinNoise);
        // Within-run intervals: ±5.5 around +5: within noise.
        let d = decide_results(&[&a], &[&b], &T, &rule(false)).unwrap();
        assert_eq!((d.call, d.basis.as_str()), (Call::WithinNoise, WITHIN_RUN));
        assert_eq!(d.confidence, Some(0.95));
        // Single runs without intervals: no confidence, not kept.
        let (c, e) = (run(1000.0, None), run(1100.0, None));
        let d = decide_results(&[&c], &[&e], &T, &rule(false)).unwrap();
        assert_eq!((d.call, d.basis.as_str()), (Call::NoInterval, NO_BASIS));
        assert!(d.text().starts_with("no interval (+10.00%"), "{}", d.text());
        // Repetitions: a clear +5 %.
        let r: Vec<BenchmarkResult> = [1000.0, 1003.0, 998.0].map(|v| run(v, None)).into();
        let s: Vec<BenchmarkResult> = [1050.0, 1052.0, 1049.0].map(|v| run(v, None)).into();
        let (rr, sr): (Vec<&BenchmarkResult>, Vec<&BenchmarkResult>) =
            (r.iter().collect(), s.iter().collect());
        let d = decide_results(&rr, &sr, &T, &rule(false)).unwrap();
        assert_eq!((d.call, d.basis.as_str()), (Call::Better, REPETITIONS));
        assert_eq!((d.n_reference, d.n_candidate), (3, 3));
        assert!(d.text().contains("95% interval"), "{}", d.text());
        assert!(d.text().contains("n = 3 vs 3"), "{}", d.text());
    }
}
