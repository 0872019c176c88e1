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
    pub fn for_profile(profile: &crate::Profile) -> Arrivals {
        Arrivals::Constant {
            rate: profile.request_rate,
        }
    }
}
