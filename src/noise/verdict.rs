//! A versus B, noise-aware: for every metric the delta with its interval, a verdict —
//! better, worse, or within noise at the chosen confidence —, the smallest effect the data
//! could detect, and how many repetitions would detect a given effect.
//!
//! # Where the noise comes from
//!
//! * **One run each, with intervals** ([`compare_runs`]): the runs are independent, so the
//!   delta's standard error is `√(se_A² + se_B²)` from the stored bootstrap standard errors
//!   and the interval is normal. This is within-run noise only: it cannot see run-to-run
//!   variation of the server, so it is a lower bound of the real noise.
//! * **Repetitions** ([`compare_repetitions`]): Welch's t-interval of the difference of the
//!   means (unequal variances, Welch–Satterthwaite degrees of freedom); **paired** when the
//!   runs were interleaved A B A B (the t-interval of the per-pair differences, which
//!   cancels slow drift of the machine).
//! * Otherwise: "noise unknown" (single runs without records).
//!
//! # Detectable effect and runs needed
//!
//! With power `1 − β` (default 80 %), the **minimum detectable effect** is
//! `(t₁₋α/₂ + t₁₋β) · SE(Δ)`, shown relative to the baseline. The **runs needed** to detect
//! an effect `e` (default 2 % of the baseline) with per-run standard deviation `σ` are the
//! smallest `n` per side with `(t₁₋α/₂,ν + t₁₋β,ν) · σ·√(2/n) ≤ e` (`ν = 2n − 2`; paired:
//! `σ_d/√n`, `ν = n − 1`). From one run each, `σ` is the within-run standard error — a
//! lower bound, so the count is too.
//!
//! # Many metrics at once: the target first, then Holm–Bonferroni
//!
//! Fourteen metrics compared at 95 % each would call *something* different in most A/A
//! comparisons. Every metric's [`NoisyDelta::verdict`] is its own, unadjusted test; the
//! [`NoisyDelta::outcome`] — what `compare` prints — is decided by a two-family procedure:
//!
//! 1. **the target metric** ([`VerdictOptions::target`], default total token throughput, the
//!    figure a tuning step is judged by) is the primary hypothesis, tested alone at the full
//!    level `α = 1 − confidence`;
//! 2. **every other metric with an interval** is a secondary family tested by Holm's
//!    step-down procedure (Holm 1979, "A simple sequentially rejective multiple test
//!    procedure", Scand. J. Statist. 6:65–70): sort the `m` two-sided p-values, reject the
//!    `i`-th smallest while `p₍ᵢ₎ ≤ α / (m − i + 1)`, stop at the first that is not.
//!
//! The chance of a false "different" is then at most `α` on the target and at most `α` over
//! the whole secondary family (strong family-wise control, any dependence between the
//! metrics), instead of up to `14 α`. A metric rejected at level `αᵢ` gets its outcome from
//! its interval at that level, `Δ ± q₁₋αᵢ/₂ · SE`, against the minimum effect
//! ([`VerdictOptions::min_effect_percent`], see [`crate::noise::outcome`]): "better" only
//! when that whole interval is beyond the minimum effect. The p-values come from the same
//! normal (within-run) or t (repetitions) reference distribution as the intervals.

use crate::compare::{Delta, Direction, Metric, METRICS};
use crate::noise::bootstrap::mean_sd;
use crate::noise::dist::{normal_quantile, t_cdf, t_quantile};
use crate::noise::outcome::Outcome;
use crate::result::intervals::Interval;
use crate::result::BenchmarkResult;

/// The verdict on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseVerdict {
    /// The candidate is better, beyond the noise.
    Better,
    /// The candidate is worse, beyond the noise.
    Worse,
    /// The interval of the delta contains zero.
    WithinNoise,
    /// No noise information for this metric.
    Unknown,
}

impl NoiseVerdict {
    /// `better`, `worse`, `within noise`, `noise unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoiseVerdict::Better => "better",
            NoiseVerdict::Worse => "worse",
            NoiseVerdict::WithinNoise => "within noise",
            NoiseVerdict::Unknown => "noise unknown",
        }
    }
}

/// Where a comparison's noise estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum NoiseSource {
    /// Within-run intervals of one run on each side.
    WithinRun,
    /// Repetitions on each side.
    Repetitions {
        /// Baseline runs.
        base_runs: usize,
        /// Candidate runs.
        candidate_runs: usize,
        /// Whether the runs were paired (interleaved).
        paired: bool,
    },
    /// Nothing to estimate noise from.
    Unknown,
}

/// Options of a noise-aware comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerdictOptions {
    /// Confidence level of the delta's interval (default 0.95).
    pub confidence: f64,
    /// Power for the minimum detectable effect and the runs needed (default 0.8).
    pub power: f64,
    /// The effect to plan repetitions for, percent of the baseline (default 2).
    pub effect_percent: f64,
    /// The minimum effect, percent of the baseline (default 0): a change beyond the noise
    /// but not surely beyond this is "better (or worse) but below the minimum effect".
    pub min_effect_percent: f64,
    /// The key of the target metric ([`crate::compare::Metric::key`]), tested first at the
    /// full level (default `total_token_throughput`); see the module docs.
    pub target: &'static str,
}

impl Default for VerdictOptions {
    fn default() -> Self {
        VerdictOptions {
            confidence: 0.95,
            power: 0.8,
            effect_percent: 2.0,
            min_effect_percent: 0.0,
            target: crate::compare::TOTAL_TOKEN_THROUGHPUT.key,
        }
    }
}

/// One metric of a [`NoisyComparison`].
#[derive(Debug, Clone)]
pub struct NoisyDelta {
    /// The metric.
    pub metric: Metric,
    /// Baseline and candidate values (the means over repetitions).
    pub delta: Delta,
    /// Interval of `candidate − base`, in the metric's unit.
    pub interval: Option<Interval>,
    /// This metric's own verdict at the comparison's confidence (not adjusted for the
    /// other metrics).
    pub verdict: NoiseVerdict,
    /// Two-sided p-value of "no change" (normal or t, as the interval).
    pub p_value: Option<f64>,
    /// Degrees of freedom of the interval (infinite: normal).
    pub df: Option<f64>,
    /// The level `α` this metric was decided at by the multiplicity procedure (the full
    /// level for the target, Holm's `α / (m − i + 1)` for the others); `None` when it was
    /// not rejected or has no interval.
    pub decision_level: Option<f64>,
    /// The outcome after the multiplicity control and the minimum effect (module docs).
    pub outcome: Outcome,
    /// Smallest effect detectable with the given power, percent of the baseline.
    pub mde_percent: Option<f64>,
    /// Runs per side needed to detect the planned effect (see the module docs).
    pub runs_needed: Option<u64>,
}

impl NoisyDelta {
    /// `metric`'s delta with nothing known about its noise yet (no interval, verdict
    /// [`NoiseVerdict::Unknown`]).
    fn unknown(metric: Metric, delta: Delta) -> NoisyDelta {
        NoisyDelta {
            metric,
            delta,
            interval: None,
            verdict: NoiseVerdict::Unknown,
            p_value: None,
            df: None,
            decision_level: None,
            outcome: Outcome::NoiseUnknown,
            mde_percent: None,
            runs_needed: None,
        }
    }

    /// The delta's interval in percent of the baseline value.
    pub fn percent_interval(&self) -> Option<(f64, f64)> {
        let i = self.interval?;
        let b = self.delta.base;
        (b != 0.0 && b.is_finite()).then(|| (100.0 * i.lo / b.abs(), 100.0 * i.hi / b.abs()))
    }
}

/// A noise-aware, metric-by-metric comparison.
#[derive(Debug, Clone)]
pub struct NoisyComparison {
    /// Every metric both sides report: the target metric first, then the others in
    /// [`METRICS`] order.
    pub metrics: Vec<NoisyDelta>,
    /// Where the noise estimate came from.
    pub source: NoiseSource,
    /// The options used.
    pub options: VerdictOptions,
    /// Why the noise is unknown (for the whole comparison or some metrics), when the caller
    /// knows (`too few independent blocks…`); printed instead of the generic "single runs
    /// without records".
    pub unknown_reason: Option<String>,
}

/// Verdict from the interval of `candidate − base`.
fn verdict_of(i: &Interval, direction: Direction) -> NoiseVerdict {
    let up = i.lo > 0.0;
    let down = i.hi < 0.0;
    match (up, down, direction) {
        (true, _, Direction::HigherIsBetter) | (_, true, Direction::LowerIsBetter) => {
            NoiseVerdict::Better
        }
        (true, _, Direction::LowerIsBetter) | (_, true, Direction::HigherIsBetter) => {
            NoiseVerdict::Worse
        }
        _ => NoiseVerdict::WithinNoise,
    }
}

/// Smallest `n ≥ 2` with `(t_a + t_b)·σ·√(k/n) ≤ effect`, `ν = df(n)`; `None` if above 10⁶.
fn runs_needed(
    sigma: f64,
    effect: f64,
    k: f64,
    df: impl Fn(f64) -> f64,
    opts: &VerdictOptions,
) -> Option<u64> {
    if !(sigma.is_finite() && effect > 0.0) {
        return None;
    }
    if sigma == 0.0 {
        return Some(2);
    }
    let a = 1.0 - (1.0 - opts.confidence) / 2.0;
    let za = normal_quantile(a) + normal_quantile(opts.power);
    // Normal start, then the t correction (n only grows).
    let mut n = (k * (za * sigma / effect).powi(2)).ceil().max(2.0);
    for _ in 0..60 {
        let nu = df(n);
        let t = t_quantile(a, nu) + t_quantile(opts.power, nu);
        let need = (k * (t * sigma / effect).powi(2)).ceil().max(2.0);
        if need <= n {
            break;
        }
        n = need;
    }
    (n <= 1e6).then_some(n as u64)
}

fn detectable(se: f64, df: f64, base: f64, opts: &VerdictOptions) -> Option<f64> {
    let a = 1.0 - (1.0 - opts.confidence) / 2.0;
    let m = (t_quantile(a, df) + t_quantile(opts.power, df)) * se;
    (base != 0.0 && m.is_finite()).then(|| 100.0 * m / base.abs())
}

/// One run each: the stored within-run intervals ([`BenchmarkResult::intervals`]); metrics
/// without an interval on both sides get [`NoiseVerdict::Unknown`].
pub fn compare_runs(
    base: &BenchmarkResult,
    candidate: &BenchmarkResult,
    opts: &VerdictOptions,
) -> NoisyComparison {
    let z = normal_quantile(1.0 - (1.0 - opts.confidence) / 2.0);
    let mut any = false;
    let metrics = METRICS
        .iter()
        .filter_map(|m| {
            let delta = Delta::new(m.value(base)?, m.value(candidate)?);
            let se = |r: &BenchmarkResult| r.intervals.as_ref()?.for_metric(m).map(|i| i.se);
            let mut nd = NoisyDelta::unknown(*m, delta);
            if let (Some(sa), Some(sb)) = (se(base), se(candidate)) {
                any = true;
                let s = (sa * sa + sb * sb).sqrt();
                let d = delta.absolute();
                let i = Interval {
                    lo: d - z * s,
                    hi: d + z * s,
                    se: s,
                };
                nd.verdict = verdict_of(&i, m.direction);
                nd.interval = Some(i);
                nd.p_value = Some(p_value(d, s, f64::INFINITY));
                nd.df = Some(f64::INFINITY);
                nd.mde_percent = detectable(s, f64::INFINITY, delta.base, opts);
                let sigma = ((sa * sa + sb * sb) / 2.0).sqrt();
                let effect = opts.effect_percent / 100.0 * delta.base.abs();
                nd.runs_needed = runs_needed(sigma, effect, 2.0, |n| 2.0 * n - 2.0, opts);
            }
            Some(nd)
        })
        .collect();
    decided(NoisyComparison {
        metrics,
        source: if any {
            NoiseSource::WithinRun
        } else {
            NoiseSource::Unknown
        },
        options: *opts,
        unknown_reason: None,
    })
}

/// Repetitions on each side (at least two each). `paired`: the runs were interleaved
/// A B A B and `base[i]` pairs with `candidate[i]` (both sides need the same count; with
/// different counts the comparison is unpaired).
pub fn compare_repetitions(
    base: &[BenchmarkResult],
    candidate: &[BenchmarkResult],
    paired: bool,
    opts: &VerdictOptions,
) -> NoisyComparison {
    let paired = paired && base.len() == candidate.len();
    let a = 1.0 - (1.0 - opts.confidence) / 2.0;
    let metrics = METRICS
        .iter()
        .filter_map(|m| {
            let xa: Vec<f64> = base.iter().map(|r| m.value(r)).collect::<Option<_>>()?;
            let xb: Vec<f64> = candidate
                .iter()
                .map(|r| m.value(r))
                .collect::<Option<_>>()?;
            if xa.is_empty() || xb.is_empty() {
                return None;
            }
            let (ma, sa) = mean_sd(&xa);
            let (mb, sb) = mean_sd(&xb);
            let delta = Delta::new(ma, mb);
            let mut nd = NoisyDelta::unknown(*m, delta);
            let effect = opts.effect_percent / 100.0 * ma.abs();
            let (se, df, sigma, k, dff): (f64, f64, f64, f64, fn(f64) -> f64) = if paired {
                let d: Vec<f64> = xa.iter().zip(&xb).map(|(x, y)| y - x).collect();
                let (_, sd) = mean_sd(&d);
                let n = d.len() as f64;
                (sd / n.sqrt(), n - 1.0, sd, 1.0, |n| n - 1.0)
            } else {
                let (na, nb) = (xa.len() as f64, xb.len() as f64);
                let (va, vb) = (sa * sa / na, sb * sb / nb);
                let se = (va + vb).sqrt();
                let df = if va + vb > 0.0 {
                    (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0))
                } else {
                    na + nb - 2.0
                };
                (se, df, ((sa * sa + sb * sb) / 2.0).sqrt(), 2.0, |n| {
                    2.0 * n - 2.0
                })
            };
            if se.is_finite() && df >= 1.0 {
                let t = t_quantile(a, df);
                let d = delta.absolute();
                let i = Interval {
                    lo: d - t * se,
                    hi: d + t * se,
                    se,
                };
                nd.verdict = verdict_of(&i, m.direction);
                nd.interval = Some(i);
                nd.p_value = Some(p_value(d, se, df));
                nd.df = Some(df);
                nd.mde_percent = detectable(se, df, ma, opts);
                nd.runs_needed = runs_needed(sigma, effect, k, dff, opts);
            }
            Some(nd)
        })
        .collect();
    decided(NoisyComparison {
        metrics,
        source: NoiseSource::Repetitions {
            base_runs: base.len(),
            candidate_runs: candidate.len(),
            paired,
        },
        options: *opts,
        unknown_reason: None,
    })
}

/// Two-sided p-value of `Δ = 0` for an estimate `d` with standard error `se` (t with `df`
/// degrees of freedom; infinite: normal).
fn p_value(d: f64, se: f64, df: f64) -> f64 {
    if se > 0.0 && se.is_finite() {
        (2.0 * t_cdf(-(d / se).abs(), df)).min(1.0)
    } else if d == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The outcome of `nd` decided at level `alpha`: from its interval at that level against
/// the minimum effect.
fn outcome_at(nd: &NoisyDelta, alpha: f64, min_effect_percent: f64) -> Outcome {
    let (Some(i), Some(df)) = (nd.interval, nd.df) else {
        return Outcome::NoiseUnknown;
    };
    let base = nd.delta.base;
    if !(base != 0.0 && base.is_finite()) {
        return Outcome::NoiseUnknown;
    }
    let q = t_quantile(1.0 - alpha / 2.0, df);
    let d = nd.delta.absolute();
    let half = if i.se > 0.0 { q * i.se } else { 0.0 };
    let pct = |x: f64| 100.0 * x / base.abs();
    Outcome::from_change(
        pct(d - half),
        pct(d + half),
        nd.metric.direction,
        min_effect_percent,
    )
}

/// The comparison with the target metric first and every outcome decided by the
/// two-family procedure of the module docs.
fn decided(mut c: NoisyComparison) -> NoisyComparison {
    let alpha = 1.0 - c.options.confidence;
    let min = c.options.min_effect_percent;
    if let Some(t) = c
        .metrics
        .iter()
        .position(|d| d.metric.key == c.options.target)
    {
        let target = c.metrics.remove(t);
        c.metrics.insert(0, target);
    }
    let target = c.options.target;
    for d in &mut c.metrics {
        d.decision_level = None;
        d.outcome = if d.p_value.is_some() {
            Outcome::WithinNoise
        } else {
            Outcome::NoiseUnknown
        };
    }
    // 1. The target alone at the full level.
    if let Some(d) = c.metrics.iter_mut().find(|d| d.metric.key == target) {
        if d.p_value.is_some_and(|p| p <= alpha) {
            d.decision_level = Some(alpha);
            d.outcome = outcome_at(d, alpha, min);
        }
    }
    // 2. Holm over the others.
    let mut family: Vec<(usize, f64)> = c
        .metrics
        .iter()
        .enumerate()
        .filter(|(_, d)| d.metric.key != target)
        .filter_map(|(i, d)| d.p_value.map(|p| (i, p)))
        .collect();
    family.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = family.len();
    for (rank, &(i, p)) in family.iter().enumerate() {
        let level = alpha / (m - rank) as f64;
        if p > level {
            break;
        }
        let d = &mut c.metrics[i];
        d.decision_level = Some(level);
        d.outcome = outcome_at(d, level, min);
    }
    c
}

impl NoisyComparison {
    /// The entry of `metric`, if both sides report it.
    pub fn metric(&self, metric: &Metric) -> Option<&NoisyDelta> {
        self.metrics.iter().find(|d| d.metric.key == metric.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::OUTPUT_THROUGHPUT;

    fn runs(xs: &[f64]) -> Vec<BenchmarkResult> {
        xs.iter()
            .map(|&x| BenchmarkResult {
                output_throughput_per_s: Some(x),
                ..Default::default()
            })
            .collect()
    }

    /// Welch: A = 1,2,3 and B = 4,5,6 → Δ = 3, SE = √(2/3), ν = 4, t = 2.776445105.
    #[test]
    fn welch_and_paired_intervals_match_hand_computation() {
        let opts = VerdictOptions::default();
        let c = compare_repetitions(
            &runs(&[1.0, 2.0, 3.0]),
            &runs(&[4.0, 5.0, 6.0]),
            false,
            &opts,
        );
        let d = c.metric(&OUTPUT_THROUGHPUT).unwrap();
        let i = d.interval.unwrap();
        let half = 2.776_445_105_197_799 * (2.0f64 / 3.0).sqrt();
        assert!(
            (i.lo - (3.0 - half)).abs() < 1e-9 && (i.hi - (3.0 + half)).abs() < 1e-9,
            "{i:?}"
        );
        assert_eq!(d.verdict, NoiseVerdict::Better);
        // Paired: differences 1, 2, 3 → mean 2, SE 1/√3, ν = 2, t = 4.302652730.
        let c = compare_repetitions(
            &runs(&[1.0, 2.0, 3.0]),
            &runs(&[2.0, 4.0, 6.0]),
            true,
            &opts,
        );
        let i = c.metric(&OUTPUT_THROUGHPUT).unwrap().interval.unwrap();
        let half = 4.302_652_729_911_275 / 3f64.sqrt();
        assert!((i.lo - (2.0 - half)).abs() < 1e-9, "{i:?}");
        assert_eq!(
            c.metric(&OUTPUT_THROUGHPUT).unwrap().verdict,
            NoiseVerdict::WithinNoise
        );
        assert!(matches!(
            c.source,
            NoiseSource::Repetitions { paired: true, .. }
        ));
    }

    /// The runs needed is the smallest n meeting the t criterion.
    #[test]
    fn runs_needed_is_the_smallest_sufficient_count() {
        let opts = VerdictOptions::default();
        let (sigma, effect) = (1.0, 1.5);
        let n = runs_needed(sigma, effect, 2.0, |n| 2.0 * n - 2.0, &opts).unwrap();
        let ok = |n: f64| {
            let nu = 2.0 * n - 2.0;
            (t_quantile(0.975, nu) + t_quantile(0.8, nu)) * sigma * (2.0 / n).sqrt() <= effect
        };
        assert!(ok(n as f64), "{n}");
        assert!(n == 2 || !ok(n as f64 - 1.0), "{n}");
        // Normal approximation: 2 (1.96 + 0.84)² / 1.5² ≈ 7; the t correction adds one.
        assert!((7..=9).contains(&n), "{n}");
        assert!(runs_needed(sigma, 3.0, 2.0, |n| 2.0 * n - 2.0, &opts).unwrap() < n);
    }

    /// A comparison of every metric with `Δ = z·se` (se = 1 % of a base of 100).
    fn with_z(zs: &[f64], opts: VerdictOptions) -> NoisyComparison {
        let metrics = METRICS
            .iter()
            .zip(zs)
            .map(|(m, &z)| {
                let mut nd = NoisyDelta::unknown(*m, Delta::new(100.0, 100.0 + z));
                nd.interval = Some(Interval {
                    lo: z - 1.96,
                    hi: z + 1.96,
                    se: 1.0,
                });
                nd.p_value = Some(p_value(z, 1.0, f64::INFINITY));
                nd.df = Some(f64::INFINITY);
                nd
            })
            .collect();
        decided(NoisyComparison {
            metrics,
            source: NoiseSource::WithinRun,
            options: opts,
            unknown_reason: None,
        })
    }

    /// The target is tested at the full level and listed first; the others by Holm.
    #[test]
    fn target_first_then_holm_over_the_others() {
        let opts = VerdictOptions {
            target: OUTPUT_THROUGHPUT.key,
            ..VerdictOptions::default()
        };
        // z = 2.2 everywhere: p = 0.0278 < 0.05 for the target alone; the smallest of the
        // sixteen others needs p ≤ 0.05/16 = 0.0031.
        let c = with_z(&[2.2; 17], opts);
        assert_eq!(c.metrics[0].metric.key, OUTPUT_THROUGHPUT.key);
        assert_eq!(c.metrics[0].outcome, Outcome::Better);
        let near = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(near(c.metrics[0].decision_level, 0.05));
        assert!(c.metrics[1..]
            .iter()
            .all(|d| d.outcome == Outcome::WithinNoise && d.decision_level.is_none()));
        // Holm steps down: p = 0.001 ≤ 0.05/16 and p = 0.003 ≤ 0.05/15 are rejected, then
        // p = 0.0278 > 0.05/14 stops the procedure.
        let mut zs = [2.2; 17];
        zs[0] = 3.29; // successful requests: p = 0.001
        zs[1] = -2.97; // failed requests: p = 0.003 (fewer failures: better)
        let c = with_z(&zs, opts);
        let get = |k: &str| c.metrics.iter().find(|d| d.metric.key == k).unwrap();
        assert_eq!(get("successful_requests").outcome, Outcome::Better);
        assert!(near(get("successful_requests").decision_level, 0.05 / 16.0));
        assert_eq!(get("failed_requests").outcome, Outcome::Better);
        assert!(near(get("failed_requests").decision_level, 0.05 / 15.0));
        assert_eq!(get("duration_ms").outcome, Outcome::WithinNoise);
    }

    /// The minimum effect: the interval at the decision level against it.
    #[test]
    fn min_effect_splits_better_from_better_below_the_minimum() {
        let opts = VerdictOptions {
            target: OUTPUT_THROUGHPUT.key,
            min_effect_percent: 1.0,
            ..VerdictOptions::default()
        };
        // Δ = 2.5 %, se 1 %: the 95 % interval [0.54, 4.46] is beyond 0, not beyond 1 %.
        let mut zs = [0.0; 17];
        zs[5] = 2.5;
        let c = with_z(&zs, opts);
        assert_eq!(c.metrics[0].outcome, Outcome::BetterBelowMinEffect);
        // Δ = 4 %: [2.04, 5.96] is beyond 1 %.
        zs[5] = 4.0;
        assert_eq!(with_z(&zs, opts).metrics[0].outcome, Outcome::Better);
        zs[5] = -4.0;
        assert_eq!(with_z(&zs, opts).metrics[0].outcome, Outcome::Worse);
        zs[5] = 1.0;
        assert_eq!(with_z(&zs, opts).metrics[0].outcome, Outcome::WithinNoise);
    }

    /// Seeded Monte Carlo under the null: 17 independent metrics, 4000 comparisons. The
    /// target is called different in ≈ 5 %, anything of the secondary family in ≤ 5 %
    /// (unadjusted: 1 − 0.95¹⁶ ≈ 56 %).
    #[test]
    fn family_wise_error_is_controlled_under_the_null() {
        let mut rng = crate::driver::rng::Rng::new(29);
        let opts = VerdictOptions::default();
        let trials = 4000;
        let (mut target, mut family, mut raw) = (0, 0, 0);
        for _ in 0..trials {
            let zs: Vec<f64> = (0..17).map(|_| rng.normal()).collect();
            let c = with_z(&zs, opts);
            target += usize::from(c.metrics[0].outcome.is_different());
            family += usize::from(c.metrics[1..].iter().any(|d| d.outcome.is_different()));
            raw += usize::from(c.metrics[1..].iter().any(|d| d.p_value.unwrap() <= 0.05));
        }
        let rate = |n: usize| n as f64 / trials as f64;
        // ± 3 binomial standard errors around 5 % (0.0034 each).
        assert!((0.04..=0.06).contains(&rate(target)), "{}", rate(target));
        assert!(rate(family) <= 0.06, "{}", rate(family));
        assert!(rate(raw) > 0.5, "{}", rate(raw));
    }

    #[test]
    fn no_intervals_means_noise_unknown() {
        let c = compare_runs(
            &runs(&[1.0])[0],
            &runs(&[2.0])[0],
            &VerdictOptions::default(),
        );
        assert_eq!(c.source, NoiseSource::Unknown);
        assert_eq!(
            c.metric(&OUTPUT_THROUGHPUT).unwrap().verdict,
            NoiseVerdict::Unknown
        );
        assert_eq!(
            c.to_text(),
            "Noise: single runs without records: noise unknown\n"
        );
    }
}
