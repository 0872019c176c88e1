//! A run's load stages: the spans of time in which the client offered one load — each phase
//! of a phased run (`bench --phases`), each step of a ramp (`--ramp-up`), the staged fill
//! and what follows it (`--fill-seconds`). `bench` records them in the run file; `report`
//! prints each stage's figures, `plot` draws their boundaries on the charts over time and
//! the HTML report lists them, so a burst's tail is seen apart from the steady load.
//!
//! A stage's span counts from the run's first send; a request belongs to the stage in which
//! it was sent ([`members`]), the last stage keeping any late sends.
//!
//! ```
//! use servebench::driver::RampStrategy;
//! use servebench::observe::{Stage, StageKind};
//! use std::time::Duration;
//!
//! // A linear ramp from 1 to 9 req/s over 10 requests, cut into 2 steps.
//! let at: Vec<Duration> = (0..10).map(|i| Duration::from_secs(i)).collect();
//! let steps = Stage::of_ramp(RampStrategy::Linear, 1.0, 9.0, &at, 2);
//! assert_eq!(steps.len(), 2);
//! assert_eq!((steps[1].start_s, steps[1].end_s), (5.0, None));
//! assert_eq!(steps[0].rate_per_s, Some((1.0, 1.0 + 8.0 * 4.0 / 9.0)));
//! assert_eq!(Stage::of_fill(30.0, 256)[0].kind, StageKind::Fill);
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::driver::{Arrivals, Phases, RampStrategy};
use crate::record::RequestRecord;

/// What made a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageKind {
    /// A phase of a phase file.
    Phase,
    /// A step of a rate ramp.
    Ramp,
    /// The staged fill (the concurrency cap growing), or the load after it.
    Fill,
}

/// One stage of a run's load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// What made it.
    pub kind: StageKind,
    /// Its name in reports (`burst`, `ramp 2/5`, `fill`).
    pub label: String,
    /// Its start, seconds after the run's first send.
    pub start_s: f64,
    /// Its end, seconds after the run's first send (`None`: the run's end; sends after the
    /// last stage's end still count in it).
    pub end_s: Option<f64>,
    /// The request rate offered over it, from its start to its end (equal for a constant
    /// rate); `None` where the stage offers no rate of its own (a fill).
    pub rate_per_s: Option<(f64, f64)>,
    /// The client's concurrency cap over it, from its start to its end (`None`: the run's).
    pub concurrency: Option<(usize, usize)>,
    /// The ids of its first and last request, where the stage is a count of requests (a
    /// phase, a ramp step): they, not send times, say which requests are in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<(u64, u64)>,
}

/// How many steps `bench --ramp-up` is reported in (fewer for a ramp of fewer requests).
pub const RAMP_STAGES: usize = 5;

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

    /// A staged fill over `fill_s` seconds to the cap `cap`, and the load after it.
    pub fn of_fill(fill_s: f64, cap: usize) -> Vec<Stage> {
        vec![
            Stage {
                kind: StageKind::Fill,
                label: "fill".into(),
                start_s: 0.0,
                end_s: Some(fill_s),
                rate_per_s: None,
                concurrency: Some((1, cap)),
                requests: None,
            },
            Stage {
                kind: StageKind::Fill,
                label: "filled".into(),
                start_s: fill_s,
                end_s: None,
                rate_per_s: None,
                concurrency: Some((cap, cap)),
                requests: None,
            },
        ]
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

    /// Whether request `id`, sent `t` seconds after the run's first send, belongs here.
    fn holds(&self, id: u64, t: f64) -> bool {
        match self.requests {
            Some((first, last)) => (first..=last).contains(&id),
            None => t >= self.start_s && self.end_s.is_none_or(|end| t < end),
        }
    }
}

/// The records sent in each stage (by id for a stage of counted requests, else by send time
/// from the first record's send; a record before the first stage's start joins the first,
/// one after the last's end the last).
pub fn members<'a>(stages: &[Stage], records: &'a [RequestRecord]) -> Vec<Vec<&'a RequestRecord>> {
    let mut out = vec![Vec::new(); stages.len()];
    let Some(origin) = records.iter().map(|r| r.sent_at).min() else {
        return out;
    };
    let last = stages.len().saturating_sub(1);
    for r in records {
        let t = r.sent_at.saturating_sub(origin).as_secs_f64();
        let k = stages.iter().position(|s| s.holds(r.id, t)).unwrap_or(
            if stages.first().is_some_and(|s| t < s.start_s) {
                0
            } else {
                last
            },
        );
        if let Some(v) = out.get_mut(k) {
            v.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(at_s: f64) -> RequestRecord {
        RequestRecord::new(0, Duration::from_secs_f64(at_s))
    }

    #[test]
    fn records_fall_in_the_stage_they_were_sent_in() {
        let stages = Stage::of_fill(10.0, 8);
        let records: Vec<_> = [2.0, 3.0, 11.9, 12.0, 40.0].map(sent).into();
        let m = members(&stages, &records);
        // Offsets from the first send (2 s): 0, 1, 9.9 | 10, 38.
        assert_eq!(m[0].len(), 3);
        assert_eq!(m[1].len(), 2);
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
