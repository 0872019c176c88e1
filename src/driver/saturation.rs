//! The over-saturation detector: stops a run early when the server has fallen behind for
//! good, so that a rate sweep does not spend minutes on a rate the server cannot serve.
//!
//! The driver reports its backlog (requests in flight plus requests whose arrival time has
//! passed but that wait for a client slot) as it goes. Every `window / 4` of engine time the
//! detector takes a checkpoint; once the run is older than `min_duration`, it fires when the
//! last five checkpoints (one full window) rose every time, the last is at least
//! `min_backlog` and at least 1.5 times the first: a queue that only grows. A server that
//! keeps up has a backlog that goes up and down around `rate × latency`; one that does not
//! has a backlog that grows by `(rate − capacity)` every second.
//!
//! ```
//! use std::time::Duration;
//! use servebench::driver::{OverSaturation, SaturationWatch};
//! let mut w = SaturationWatch::new(OverSaturation::default(), Duration::ZERO);
//! let mut fired = None;
//! for s in 0..60 {
//!     // 10 more requests waiting every second.
//!     fired = fired.or(w.observe(Duration::from_secs(s), 10 * s as usize));
//! }
//! assert!(fired.is_some());
//! ```

use std::collections::VecDeque;
use std::time::Duration;

/// Settings of the detector. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverSaturation {
    /// Never fire before the run is this old (engine clock).
    pub min_duration: Duration,
    /// The span over which the backlog must only grow.
    pub window: Duration,
    /// Never fire below this backlog.
    pub min_backlog: usize,
}

impl Default for OverSaturation {
    /// 10 s minimum, a 4 s window, a backlog of at least 16.
    fn default() -> Self {
        OverSaturation {
            min_duration: Duration::from_secs(10),
            window: Duration::from_secs(4),
            min_backlog: 16,
        }
    }
}

/// A running detector (the driver keeps one per run).
#[derive(Debug, Clone)]
pub struct SaturationWatch {
    settings: OverSaturation,
    start: Duration,
    next_at: Duration,
    checkpoints: VecDeque<usize>,
}

impl SaturationWatch {
    /// A detector for a run that started at `start` (engine clock).
    pub fn new(settings: OverSaturation, start: Duration) -> Self {
        SaturationWatch {
            settings,
            start,
            next_at: start,
            checkpoints: VecDeque::new(),
        }
    }

    /// The backlog at `now`; returns why the run should stop, once it should.
    pub fn observe(&mut self, now: Duration, backlog: usize) -> Option<String> {
        if now < self.next_at {
            return None;
        }
        let step = (self.settings.window / 4).max(Duration::from_millis(1));
        self.next_at = now + step;
        self.checkpoints.push_back(backlog);
        if self.checkpoints.len() > 5 {
            self.checkpoints.pop_front();
        }
        let old_enough = now.saturating_sub(self.start) >= self.settings.min_duration;
        let first = *self.checkpoints.front()?;
        let rising = self.checkpoints.len() == 5
            && self
                .checkpoints
                .iter()
                .zip(self.checkpoints.iter().skip(1))
                .all(|(a, b)| b > a);
        let grown = backlog >= self.settings.min_backlog && backlog * 2 >= first * 3;
        (old_enough && rising && grown).then(|| {
            format!(
                "over-saturated: the backlog grew from {first} to {backlog} requests over the \
                 last {:.1} s",
                self.settings.window.as_secs_f64()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backlog_that_goes_up_and_down_never_fires() {
        let mut w = SaturationWatch::new(OverSaturation::default(), Duration::ZERO);
        for ms in (0..120_000).step_by(100) {
            // Around 60 in flight, a wave of ±20 over 2 s (requests ending in batches).
            let b = (60.0 + (ms as f64 / 318.0).sin() * 20.0) as usize;
            assert!(w.observe(Duration::from_millis(ms), b).is_none(), "{ms}");
        }
    }

    #[test]
    fn it_waits_for_min_duration_and_min_backlog() {
        let mut w = SaturationWatch::new(OverSaturation::default(), Duration::ZERO);
        for s in 0..9 {
            assert!(w
                .observe(Duration::from_secs(s), 100 * s as usize)
                .is_none());
        }
        let mut small = SaturationWatch::new(OverSaturation::default(), Duration::ZERO);
        for s in 0..60 {
            assert!(small
                .observe(Duration::from_secs(s), s as usize / 5)
                .is_none());
        }
    }
}
