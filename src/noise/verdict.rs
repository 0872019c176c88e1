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

use crate::compare::{Delta, Direction, Metric, METRICS};
use crate::noise::bootstrap::mean_sd;
use crate::noise::dist::{normal_quantile, t_quantile};
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
}

impl Default for VerdictOptions {
    fn default() -> Self {
        VerdictOptions {
            confidence: 0.95,
            power: 0.8,
            effect_percent: 2.0,
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
    /// The verdict at the comparison's confidence.
    pub verdict: NoiseVerdict,
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
    /// Every metric both sides report, in [`METRICS`] order.
    pub metrics: Vec<NoisyDelta>,
    /// Where the noise estimate came from.
    pub source: NoiseSource,
    /// The options used.
    pub options: VerdictOptions,
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
                nd.mde_percent = detectable(s, f64::INFINITY, delta.base, opts);
                let sigma = ((sa * sa + sb * sb) / 2.0).sqrt();
                let effect = opts.effect_percent / 100.0 * delta.base.abs();
                nd.runs_needed = runs_needed(sigma, effect, 2.0, |n| 2.0 * n - 2.0, opts);
            }
            Some(nd)
        })
        .collect();
    NoisyComparison {
        metrics,
        source: if any {
            NoiseSource::WithinRun
        } else {
            NoiseSource::Unknown
        },
        options: *opts,
    }
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
                nd.mde_percent = detectable(se, df, ma, opts);
                nd.runs_needed = runs_needed(sigma, effect, k, dff, opts);
            }
            Some(nd)
        })
        .collect();
    NoisyComparison {
        metrics,
        source: NoiseSource::Repetitions {
            base_runs: base.len(),
            candidate_runs: candidate.len(),
            paired,
        },
        options: *opts,
    }
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
