//! Phased load: a run as a list of phases, each with its length, its request rate, its
//! arrival process and optionally its own concurrency cap — a burst, a zigzag, a step, a
//! microburst — written in a phase file:
//!
//! ```toml
//! [[phase]]
//! name = "warm"
//! seconds = 30
//! rate = 5
//!
//! [[phase]]
//! name = "burst"
//! seconds = 10
//! rate = 50
//! arrivals = "poisson"
//! concurrency = 64
//! ```
//!
//! The phases follow each other; phase `k` sends `⌈rate × seconds⌉` requests inside its own
//! span (constant gaps, or Poisson with the run's seed), so the schedule is a list of send
//! times ([`Phases::send_at`]) and, where a phase caps concurrency, a list of caps from
//! each phase's start ([`Phases::caps`]). The run file keeps the phases and `report` prints
//! the figures of each.
//!
//! ```
//! use servebench::driver::Phases;
//! let p: Phases = serde_json::from_str(
//!     r#"{"phase": [{"seconds": 2, "rate": 5}, {"seconds": 1, "rate": 20, "concurrency": 4}]}"#,
//! ).unwrap();
//! p.check().unwrap();
//! let at = p.send_at(7);
//! assert_eq!(at.len(), 30);
//! assert_eq!(at[10].as_secs_f64(), 2.0); // the second phase starts at 2 s
//! assert_eq!(p.caps(), [(std::time::Duration::from_secs(2), Some(4))]);
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// How a phase's requests arrive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseArrivals {
    /// Equal gaps of `1 / rate`.
    #[default]
    Constant,
    /// Exponential gaps with mean `1 / rate`.
    Poisson,
}

/// One phase of a phased run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// A name for reports (`burst`); default: its number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How long the phase lasts, seconds.
    pub seconds: f64,
    /// Requests per second during the phase.
    pub rate: f64,
    /// How they arrive.
    #[serde(default)]
    pub arrivals: PhaseArrivals,
    /// A cap on requests in flight during the phase (`None`: the run's cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
}

/// A phased run's phases (a phase file's `[[phase]]` tables).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phases {
    /// The phases, in order.
    pub phase: Vec<Phase>,
}

/// A phase list that cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PhasesError {
    /// No phase.
    #[error("no [[phase]]: a phase file lists at least one")]
    Empty,
    /// A phase's length, rate or cap is not usable.
    #[error("phase {index}: {reason}")]
    Bad {
        /// The phase's 1-based number.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

impl Phases {
    /// Checks every phase: a positive finite length and rate, a cap of at least 1.
    pub fn check(&self) -> Result<(), PhasesError> {
        if self.phase.is_empty() {
            return Err(PhasesError::Empty);
        }
        for (i, p) in self.phase.iter().enumerate() {
            let bad = |reason: String| PhasesError::Bad {
                index: i + 1,
                reason,
            };
            if !(p.seconds.is_finite() && p.seconds > 0.0) {
                return Err(bad(format!(
                    "seconds = {} is not a positive length",
                    p.seconds
                )));
            }
            if !(p.rate.is_finite() && p.rate > 0.0) {
                return Err(bad(format!(
                    "rate = {} is not a positive request rate",
                    p.rate
                )));
            }
            if p.concurrency == Some(0) {
                return Err(bad("concurrency = 0: at least 1".into()));
            }
        }
        Ok(())
    }

    /// Each phase's start, seconds from the run's start.
    pub fn starts_s(&self) -> Vec<f64> {
        let mut t = 0.0;
        self.phase
            .iter()
            .map(|p| {
                let s = t;
                t += p.seconds;
                s
            })
            .collect()
    }

    /// The requests the phases send in all.
    pub fn total_requests(&self) -> u64 {
        self.phase.iter().map(Phase::requests).sum()
    }

    /// Every request's send time, phase after phase (Poisson phases seeded by `seed` and
    /// their number).
    pub fn send_at(&self, seed: u64) -> Vec<Duration> {
        let mut out = Vec::new();
        for (k, (p, start)) in self.phase.iter().zip(self.starts_s()).enumerate() {
            let n = p.requests();
            let mut rng = Rng::new(seed.wrapping_add(k as u64));
            let mut t = 0.0;
            for j in 0..n {
                let offset = match p.arrivals {
                    PhaseArrivals::Constant => j as f64 / p.rate,
                    PhaseArrivals::Poisson => {
                        t += rng.exponential(1.0 / p.rate);
                        // A Poisson phase keeps to its span: a late draw waits at its end.
                        t.min(p.seconds)
                    }
                };
                out.push(Duration::from_secs_f64((start + offset).max(0.0)));
            }
        }
        out
    }

    /// The concurrency cap from each phase's start where it changes: `(start, cap)`, the
    /// run's own cap where a phase sets none (`None`).
    pub fn caps(&self) -> Vec<(Duration, Option<usize>)> {
        if self.phase.iter().all(|p| p.concurrency.is_none()) {
            return Vec::new();
        }
        let mut out: Vec<(Duration, Option<usize>)> = Vec::new();
        let mut last = None;
        for (p, start) in self.phase.iter().zip(self.starts_s()) {
            if out.is_empty() && p.concurrency.is_none() {
                last = None;
                continue;
            }
            if out.is_empty() || p.concurrency != last {
                out.push((Duration::from_secs_f64(start), p.concurrency));
                last = p.concurrency;
            }
        }
        out
    }

    /// A phase's name for reports: its own, else `phase N`.
    pub fn label(&self, index: usize) -> String {
        self.phase
            .get(index)
            .and_then(|p| p.name.clone())
            .unwrap_or_else(|| format!("phase {}", index + 1))
    }
}

impl Phase {
    /// The requests the phase sends: `⌈rate × seconds⌉`, at least 1.
    pub fn requests(&self) -> u64 {
        // Saturating float-to-int conversion of a checked positive product.
        (self.rate * self.seconds).ceil().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(seconds: f64, rate: f64, concurrency: Option<usize>) -> Phase {
        Phase {
            name: None,
            seconds,
            rate,
            arrivals: PhaseArrivals::Poisson,
            concurrency,
        }
    }

    #[test]
    fn poisson_phases_keep_to_their_spans_and_caps_change_where_phases_do() {
        let p = Phases {
            phase: vec![
                phase(10.0, 5.0, None),
                phase(2.0, 100.0, Some(8)),
                phase(10.0, 5.0, None),
            ],
        };
        p.check().unwrap();
        let at = p.send_at(1);
        assert_eq!(at.len() as u64, p.total_requests());
        assert_eq!(at.len(), 50 + 200 + 50);
        assert!(at[..50].iter().all(|t| t.as_secs_f64() <= 10.0));
        assert!(at[50..250]
            .iter()
            .all(|t| (10.0..=12.0).contains(&t.as_secs_f64())));
        assert_eq!(
            p.caps(),
            [
                (Duration::from_secs(10), Some(8)),
                (Duration::from_secs(12), None)
            ]
        );
        let bad = Phases {
            phase: vec![phase(0.0, 1.0, None)],
        };
        assert!(matches!(
            bad.check(),
            Err(PhasesError::Bad { index: 1, .. })
        ));
    }
}
