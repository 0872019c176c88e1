//! A run's load stages as the driver knows them: one per phase of a phase file, a ramp's
//! steps, and the choice among them for a run ([`Stage::of_load`]). The type and the split
//! of records among stages are `observe`'s ([`crate::observe::Stage`]).
//!
//! ```
//! use servebench::driver::RampStrategy;
//! use servebench::observe::Stage;
//! use std::time::Duration;
//!
//! // A linear ramp from 1 to 9 req/s over 10 requests, cut into 2 steps.
//! let at: Vec<Duration> = (0..10).map(|i| Duration::from_secs(i)).collect();
//! let steps = Stage::of_ramp(RampStrategy::Linear, 1.0, 9.0, &at, 2);
//! assert_eq!(steps.len(), 2);
//! assert_eq!((steps[1].start_s, steps[1].end_s), (5.0, None));
//! assert_eq!(steps[0].rate_per_s, Some((1.0, 1.0 + 8.0 * 4.0 / 9.0)));
//! assert_eq!(steps[1].requests, Some((5, 9)));
//! ```

use std::time::Duration;

use super::{Arrivals, Phases, RampStrategy};
use crate::observe::{Stage, StageKind, RAMP_STAGES};

impl Stage {
    /// One stage per phase, with the phase's rate, cap and requests.
    pub fn of_phases(phases: &Phases) -> Vec<Stage> {
        let mut first = 0u64;
        phases
            .phase
            .iter()
            .zip(phases.starts_s())
            .enumerate()
            .map(|(k, (p, start))| Stage {
                kind: StageKind::Phase,
                label: phases.label(k),
                start_s: start,
                end_s: Some(start + p.seconds),
                rate_per_s: Some((p.rate, p.rate)),
                concurrency: p.concurrency.map(|c| (c, c)),
                requests: {
                    let ids = (first, first + p.requests() - 1);
                    first += p.requests();
                    Some(ids)
                },
            })
            .collect()
    }

    /// A ramp's `steps` stages (equal numbers of requests; fewer when the ramp sends fewer
    /// requests): `schedule` is the ramp's send times, each step's rate the ramp's rate at
    /// its first and last request ([`RampStrategy::rate_at`]).
    pub fn of_ramp(
        strategy: RampStrategy,
        start_rate: f64,
        end_rate: f64,
        schedule: &[Duration],
        steps: usize,
    ) -> Vec<Stage> {
        let n = schedule.len();
        let steps = steps.min(n).max(1);
        let Some(&origin) = schedule.first() else {
            return Vec::new();
        };
        let first_of = |k: usize| k * n / steps;
        let at = |i: usize| schedule[i].saturating_sub(origin).as_secs_f64();
        (0..steps)
            .map(|k| {
                let (lo, hi) = (first_of(k), first_of(k + 1).max(first_of(k) + 1) - 1);
                Stage {
                    kind: StageKind::Ramp,
                    label: format!("ramp {}/{steps}", k + 1),
                    start_s: if k == 0 { 0.0 } else { at(lo) },
                    end_s: (k + 1 < steps).then(|| at(first_of(k + 1))),
                    rate_per_s: Some((
                        strategy.rate_at(lo, n, start_rate, end_rate),
                        strategy.rate_at(hi, n, start_rate, end_rate),
                    )),
                    concurrency: None,
                    requests: Some((lo as u64, hi as u64)),
                }
            })
            .collect()
    }

    /// A run's stages from how it was sent: its phases, else its ramp's steps (over the
    /// `requests` it sends), else its staged fill to the cap `cap`; none for a run of one
    /// load.
    pub fn of_load(
        phases: Option<&Phases>,
        arrivals: Option<&Arrivals>,
        requests: u64,
        fill: Option<Duration>,
        cap: Option<usize>,
    ) -> Vec<Stage> {
        if let Some(p) = phases {
            return Stage::of_phases(p);
        }
        if let Some(
            a @ Arrivals::Ramp {
                strategy,
                start_rate,
                end_rate,
                ..
            },
        ) = arrivals
        {
            let n = usize::try_from(requests).unwrap_or(usize::MAX);
            if let Ok(at) = a.schedule(n) {
                return Stage::of_ramp(*strategy, *start_rate, *end_rate, &at, RAMP_STAGES);
            }
        }
        match (fill, cap) {
            (Some(f), Some(c)) if !f.is_zero() => Stage::of_fill(f.as_secs_f64(), c),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::stage_members as members;
    use crate::record::RequestRecord;

    fn sent(at_s: f64) -> RequestRecord {
        RequestRecord::new(0, Duration::from_secs_f64(at_s))
    }

    #[test]
    fn phases_become_stages_with_their_rate_and_cap() {
        let p: Phases = serde_json::from_str(
            r#"{"phase": [{"name": "warm", "seconds": 2, "rate": 5},
                          {"seconds": 1, "rate": 20, "concurrency": 4}]}"#,
        )
        .unwrap();
        let s = Stage::of_phases(&p);
        assert_eq!(s[0].label, "warm");
        assert_eq!(s[0].end_s, Some(2.0));
        assert_eq!(s[1].label, "phase 2");
        assert_eq!(s[1].concurrency, Some((4, 4)));
        assert_eq!(s[1].end_s, Some(3.0));
        // Its 10 requests are ids 0–9, the second's 20 ids 10–29, whenever they were sent.
        assert_eq!(
            (s[0].requests, s[1].requests),
            (Some((0, 9)), Some((10, 29)))
        );
        let mut records = [sent(0.0), sent(2.5), sent(2.0)];
        records[2].id = 10;
        let m = members(&s, &records);
        assert_eq!((m[0].len(), m[1].len()), (2, 1));
    }

    #[test]
    fn a_short_ramp_has_no_more_steps_than_requests() {
        let at = [Duration::ZERO, Duration::from_secs(1)];
        let s = Stage::of_ramp(RampStrategy::Exponential, 1.0, 4.0, &at, RAMP_STAGES);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].rate_per_s, Some((1.0, 1.0)));
        assert_eq!(s[1].rate_per_s, Some((4.0, 4.0)));
        assert!(Stage::of_ramp(RampStrategy::Linear, 1.0, 2.0, &[], 5).is_empty());
    }
}
