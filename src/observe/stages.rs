//! A run's load stages: the spans of time in which the client offered one load — each phase
//! of a phased run (`bench --phases`), each step of a ramp (`--ramp-up`), the staged fill
//! and what follows it (`--fill-seconds`). `bench` records them in the run file; `report`
//! prints each stage's figures, `plot` draws their boundaries on the charts over time and
//! the HTML report lists them, so a burst's tail is seen apart from the steady load.
//!
//! A stage's span counts from the run's first send; a request belongs to the stage in which
//! it was sent ([`members`]), the last stage keeping any late sends.
//!
//! The stages of phases and ramps are made where those are known ([`Stage::of_phases`],
//! [`Stage::of_ramp`], [`Stage::of_load`] in `driver`); this module owns the type and the
//! split of records among stages.
//!
//! ```
//! use servebench::observe::{stage_members, Stage, StageKind};
//! use servebench::record::RequestRecord;
//! use std::time::Duration;
//!
//! let fill = Stage::of_fill(30.0, 256);
//! assert_eq!(fill[0].kind, StageKind::Fill);
//! let records = [RequestRecord::new(0, Duration::ZERO), RequestRecord::new(1, Duration::from_secs(31))];
//! let m = stage_members(&fill, &records);
//! assert_eq!((m[0].len(), m[1].len()), (1, 1));
//! ```

use serde::{Deserialize, Serialize};

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
    use std::time::Duration;

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
}
