//! Arrival processes: when each request of a run is scheduled to arrive at the client.
//!
//! * [`Arrivals::AllAtOnce`] — every request at time 0 (vLLM's `--request-rate inf`).
//! * [`Arrivals::Constant`] — request `i` at `i / rate` (guidellm's `--profile constant`, the
//!   seed's runs).
//! * [`Arrivals::Poisson`] — exponential gaps with mean `1 / rate` (guidellm `poisson`).
//! * [`Arrivals::Gamma`] — vLLM's arrivals: gamma gaps with shape `burstiness` and scale
//!   `1 / (rate · burstiness)` (burstiness 1 is Poisson; smaller is burstier), optionally
//!   rescaled as vLLM ≥ 0.10 does so that the last arrival lands exactly at `n / rate`.
//!
//! * [`Arrivals::Ramp`] — vLLM's ramp-up (`vllm bench serve --ramp-up-strategy
//!   linear|exponential --ramp-up-start-rps R0 --ramp-up-end-rps R1`): request `i` of `n`
//!   comes at the rate `R0 + (R1 − R0) · i/(n−1)` (linear) or `R0 · (R1/R0)^(i/(n−1))`
//!   (exponential), its gap drawn as vLLM draws it (`get_current_request_rate` and
//!   `get_request` in `vllm/benchmarks/serve.py`): gamma with shape `burstiness` and mean
//!   1 / rate, not rescaled.
//!
//! Schedules are deterministic for a given seed ([`crate::rng::Rng`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// How requests arrive. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Arrivals {
    /// Every request at time 0.
    AllAtOnce,
    /// Request `i` at `i / rate` seconds.
    Constant {
        /// Requests per second.
        rate: f64,
    },
    /// A Poisson process: independent exponential gaps, mean `1 / rate`; the first request
    /// arrives after the first gap.
    Poisson {
        /// Requests per second.
        rate: f64,
        /// PRNG seed.
        seed: u64,
    },
    /// vLLM's gamma arrivals.
    Gamma {
        /// Requests per second.
        rate: f64,
        /// Gamma shape (vLLM `--burstiness`, default 1.0).
        burstiness: f64,
        /// PRNG seed.
        seed: u64,
        /// Rescale so that the last arrival is at `n / rate` (vLLM ≥ 0.10 without ramp-up).
        rescale: bool,
    },
    /// vLLM's ramp-up (see the module docs).
    Ramp {
        /// Linear or exponential.
        strategy: RampStrategy,
        /// The first request's rate, requests per second (> 0 for exponential).
        start_rate: f64,
        /// The last request's rate, requests per second (≥ the start).
        end_rate: f64,
        /// Gamma shape of the gaps (1: Poisson, vLLM's default).
        burstiness: f64,
        /// PRNG seed.
        seed: u64,
    },
}

/// How a [`Arrivals::Ramp`] rate grows from its start to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RampStrategy {
    /// By equal steps per request.
    Linear,
    /// By equal factors per request.
    Exponential,
}

impl RampStrategy {
    /// The rate of request `i` of `n` on a ramp from `start` to `end` (vLLM's
    /// `get_current_request_rate`).
    ///
    /// ```
    /// use servebench::driver::RampStrategy;
    /// assert_eq!(RampStrategy::Linear.rate_at(0, 11, 1.0, 11.0), 1.0);
    /// assert_eq!(RampStrategy::Linear.rate_at(5, 11, 1.0, 11.0), 6.0);
    /// assert!((RampStrategy::Exponential.rate_at(5, 11, 1.0, 100.0) - 10.0).abs() < 1e-12);
    /// ```
    pub fn rate_at(self, i: usize, n: usize, start: f64, end: f64) -> f64 {
        let progress = i as f64 / n.saturating_sub(1).max(1) as f64;
        match self {
            RampStrategy::Linear => start + (end - start) * progress,
            RampStrategy::Exponential => start * (end / start).powf(progress),
        }
    }
}

/// A rate or burstiness that is not a positive finite number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArrivalsError {
    /// The rate is not positive and finite.
    #[error("arrival rate must be a positive finite number, got {0}")]
    BadRate(f64),
    /// The burstiness is not positive and finite.
    #[error("burstiness must be a positive finite number, got {0}")]
    BadBurstiness(f64),
    /// A ramp whose rates are not `0 ≤ start ≤ end`, `end > 0` (and `start > 0` for an
    /// exponential one), as vLLM requires.
    #[error("a ramp-up needs 0 <= start <= end rates, end > 0 (start > 0 for exponential); got {start} to {end} req/s")]
    BadRamp {
        /// The start rate.
        start: f64,
        /// The end rate.
        end: f64,
    },
    /// An arrival time past what a [`Duration`] holds (a rate of almost zero).
    #[error("request {index} would arrive after {secs:e} s, past the clock's range")]
    TooLate {
        /// The request's index.
        index: usize,
        /// Its arrival time in seconds.
        secs: f64,
    },
}

fn check_rate(rate: f64) -> Result<(), ArrivalsError> {
    if rate.is_finite() && rate > 0.0 {
        Ok(())
    } else {
        Err(ArrivalsError::BadRate(rate))
    }
}

impl Arrivals {
    /// The arrival time of each of `n` requests, non-decreasing, as offsets from the start.
    ///
    /// ```
    /// use std::time::Duration;
    /// use servebench::driver::Arrivals;
    /// let t = Arrivals::Constant { rate: 4.0 }.schedule(3).unwrap();
    /// assert_eq!(t, vec![Duration::ZERO, Duration::from_millis(250), Duration::from_millis(500)]);
    /// let g = Arrivals::Gamma { rate: 10.0, burstiness: 0.5, seed: 1, rescale: true }.schedule(100).unwrap();
    /// assert_eq!(g.len(), 100);
    /// assert_eq!(g[99], Duration::from_secs(10));
    /// ```
    pub fn schedule(&self, n: usize) -> Result<Vec<Duration>, ArrivalsError> {
        let secs: Vec<f64> = match *self {
            Arrivals::AllAtOnce => vec![0.0; n],
            Arrivals::Constant { rate } => {
                check_rate(rate)?;
                (0..n).map(|i| i as f64 / rate).collect()
            }
            Arrivals::Poisson { rate, seed } => {
                check_rate(rate)?;
                let mut rng = Rng::new(seed);
                let mut t = 0.0;
                (0..n)
                    .map(|_| {
                        t += rng.exponential(1.0 / rate);
                        t
                    })
                    .collect()
            }
            Arrivals::Gamma {
                rate,
                burstiness,
                seed,
                rescale,
            } => {
                check_rate(rate)?;
                if !(burstiness.is_finite() && burstiness > 0.0) {
                    return Err(ArrivalsError::BadBurstiness(burstiness));
                }
                let mut rng = Rng::new(seed);
                let theta = 1.0 / (rate * burstiness);
                let mut t = 0.0;
                let mut v: Vec<f64> = (0..n)
                    .map(|_| {
                        t += rng.gamma(burstiness, theta);
                        t
                    })
                    .collect();
                if rescale {
                    if let Some(&last) = v.last() {
                        if last > 0.0 {
                            let f = (n as f64 / rate) / last;
                            for x in &mut v {
                                *x *= f;
                            }
                        }
                    }
                }
                v
            }
            Arrivals::Ramp {
                strategy,
                start_rate,
                end_rate,
                burstiness,
                seed,
            } => {
                let exponential = strategy == RampStrategy::Exponential;
                if !(start_rate.is_finite() && end_rate.is_finite())
                    || start_rate < 0.0
                    || end_rate < start_rate
                    || end_rate <= 0.0
                    || (exponential && start_rate <= 0.0)
                {
                    return Err(ArrivalsError::BadRamp {
                        start: start_rate,
                        end: end_rate,
                    });
                }
                if !(burstiness.is_finite() && burstiness > 0.0) {
                    return Err(ArrivalsError::BadBurstiness(burstiness));
                }
                let mut rng = Rng::new(seed);
                let mut t = 0.0;
                (0..n)
                    .map(|i| {
                        let rate = strategy.rate_at(i, n, start_rate, end_rate);
                        // A rate of 0 (a linear ramp's start) sends at once, as vLLM's
                        // gamma with an infinite scale cannot; vLLM refuses no such start.
                        if rate > 0.0 {
                            t += rng.gamma(burstiness, 1.0 / (rate * burstiness));
                        }
                        t
                    })
                    .collect()
            }
        };
        secs.into_iter()
            .enumerate()
            .map(|(index, v)| {
                Duration::try_from_secs_f64(v)
                    .map_err(|_| ArrivalsError::TooLate { index, secs: v })
            })
            .collect()
    }

    /// The arrivals a [`Profile`](crate::Profile) asks for: guidellm's constant rate.
    pub fn for_profile(profile: &crate::profile::Profile) -> Arrivals {
        Arrivals::Constant {
            rate: profile.request_rate,
        }
    }
}

/// The send times of a rate that varies with time, `rate(t)` requests per second at `t`
/// seconds, over `duration_s`: constant gaps (a request each time the integrated rate
/// passes a whole number, the first at t = 0) or, with `poisson_seed`, a Poisson process
/// with that intensity
/// (the time-rescaling theorem: unit exponential gaps on the integrated rate). Integrated
/// in steps of 1 ms; a negative rate counts as zero.
///
/// ```
/// use servebench::driver::rate_schedule;
/// // 10 req/s for 2 s, then 30 req/s for 2 s.
/// let at = rate_schedule(|t| if t < 2.0 { 10.0 } else { 30.0 }, 4.0, None).unwrap();
/// assert_eq!(at.len(), 80);
/// assert!((at[20].as_secs_f64() - 2.0).abs() < 0.01);
/// ```
pub fn rate_schedule(
    mut rate: impl FnMut(f64) -> f64,
    duration_s: f64,
    poisson_seed: Option<u64>,
) -> Result<Vec<Duration>, ArrivalsError> {
    const DT: f64 = 1e-3;
    if !(duration_s.is_finite() && duration_s > 0.0) {
        return Err(ArrivalsError::BadRate(duration_s));
    }
    let mut rng = poisson_seed.map(Rng::new);
    let next = |rng: &mut Option<Rng>| match rng {
        Some(r) => r.exponential(1.0),
        None => 1.0,
    };
    let mut out = Vec::new();
    let (mut t, mut integral) = (0.0, 0.0);
    // Constant gaps start at t = 0, as [`Arrivals::Constant`] does; Poisson after its first
    // gap, as [`Arrivals::Poisson`] does.
    let mut target = if rng.is_some() { next(&mut rng) } else { 0.0 };
    // A crossing within rounding of the end of the span is not one.
    const EPS: f64 = 1e-7;
    // Saturating float-to-int conversion of a checked positive length.
    let steps = (duration_s / DT).ceil() as u64;
    for _ in 0..steps {
        let r = rate(t + DT / 2.0);
        if r.is_nan() || r.is_infinite() {
            return Err(ArrivalsError::BadRate(r));
        }
        let step = r.max(0.0) * DT;
        while step > 0.0 && integral + step >= target + EPS {
            // Inside this step, where the integral reaches the target.
            let at = t + (target - integral) / step * DT;
            out.push(
                Duration::try_from_secs_f64(at).map_err(|_| ArrivalsError::TooLate {
                    index: out.len(),
                    secs: at,
                })?,
            );
            target += next(&mut rng);
        }
        integral += step;
        t += DT;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a very large shape the gamma gaps are their means: each gap is 1 / the rate
    /// vLLM's formula gives for its request, linear and exponential.
    #[test]
    fn ramp_gaps_follow_vllms_rate_per_request() {
        for strategy in [RampStrategy::Linear, RampStrategy::Exponential] {
            let a = Arrivals::Ramp {
                strategy,
                start_rate: 2.0,
                end_rate: 50.0,
                burstiness: 1e7,
                seed: 1,
            };
            let t = a.schedule(101).unwrap();
            let mut prev = 0.0;
            for (i, at) in t.iter().enumerate() {
                let gap = at.as_secs_f64() - prev;
                prev = at.as_secs_f64();
                let want = 1.0 / strategy.rate_at(i, 101, 2.0, 50.0);
                assert!(
                    (gap / want - 1.0).abs() < 0.01,
                    "{strategy:?} {i}: {gap} vs {want}"
                );
            }
        }
        let bad = |start, end, strategy| Arrivals::Ramp {
            strategy,
            start_rate: start,
            end_rate: end,
            burstiness: 1.0,
            seed: 1,
        };
        assert!(bad(5.0, 1.0, RampStrategy::Linear).schedule(3).is_err());
        assert!(bad(0.0, 1.0, RampStrategy::Exponential)
            .schedule(3)
            .is_err());
        assert!(bad(0.0, 1.0, RampStrategy::Linear).schedule(3).is_ok());
    }

    /// A Poisson schedule of a varying rate sends about its integral (within 4 σ), more
    /// where the rate is higher; a rate that is not a number is an error.
    #[test]
    fn rate_schedules_follow_their_integral() {
        let rate = |t: f64| 50.0 + 40.0 * (2.0 * std::f64::consts::PI * t / 20.0).sin();
        let at = rate_schedule(rate, 20.0, Some(3)).unwrap();
        assert!(
            (at.len() as f64 - 1000.0).abs() < 4.0 * 1000f64.sqrt(),
            "{}",
            at.len()
        );
        let first_half = at.iter().filter(|t| t.as_secs_f64() < 10.0).count();
        assert!(
            first_half > at.len() * 6 / 10,
            "{first_half} of {}",
            at.len()
        );
        assert!(rate_schedule(|_| f64::NAN, 1.0, None).is_err());
        assert_eq!(rate_schedule(|_| 10.0, 1.0, None).unwrap().len(), 10);
    }
}
