//! `bench`'s live progress: the counters a progress bar shows ([`Progress`]) and the
//! engine wrapper that reports them as the run goes ([`Progressed`]).

use std::time::Duration;

use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest};

/// Live counters for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Requests ended (finished or failed).
    pub done: u64,
    /// Of which failed.
    pub failed: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Output tokens received so far.
    pub output_tokens: u64,
    /// Time since the start (engine clock).
    pub elapsed: Duration,
}

impl Progress {
    /// Output tokens per second so far.
    pub fn tokens_per_s(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.output_tokens as f64 / s
        } else {
            0.0
        }
    }
}

/// How often [`Progressed`] reports (engine clock).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// An engine wrapper that counts what passes through and calls `report` at least every
/// [`PROGRESS_EVERY`] while the driver waits in [`Engine::advance`] (a long wait is cut into
/// slices; the contract — return at the deadline or right after a terminal event — holds).
pub struct Progressed<'a, E> {
    inner: E,
    progress: Progress,
    next_report: Duration,
    report: &'a mut dyn FnMut(&Progress),
}

impl<'a, E: Engine> Progressed<'a, E> {
    /// Wrap `inner`.
    pub fn new(inner: E, report: &'a mut dyn FnMut(&Progress)) -> Self {
        Progressed {
            inner,
            progress: Progress::default(),
            next_report: Duration::ZERO,
            report,
        }
    }

    /// The counters so far.
    pub fn progress(&self) -> Progress {
        self.progress
    }

    /// The wrapped engine.
    pub fn into_inner(self) -> E {
        self.inner
    }

    pub(crate) fn tick(&mut self, force: bool) {
        let now = self.inner.now();
        if force || now >= self.next_report {
            self.progress.elapsed = now;
            self.progress.in_flight = self.inner.in_flight() as u64;
            (self.report)(&self.progress);
            self.next_report = now + PROGRESS_EVERY;
        }
    }
}

impl<E: Engine> Engine for Progressed<'_, E> {
    fn now(&self) -> Duration {
        self.inner.now()
    }

    fn prepare(&mut self, upcoming: &mut dyn Iterator<Item = EngineRequest>) {
        self.inner.prepare(upcoming);
    }

    fn submit(&mut self, request: EngineRequest) -> Result<(), EngineError> {
        self.inner.submit(request)
    }

    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        loop {
            let now = self.inner.now();
            let slice_end = now + PROGRESS_EVERY;
            let slice = match deadline {
                Some(d) => d.min(slice_end),
                None => slice_end,
            };
            let start = events.len();
            self.inner.advance(Some(slice), events)?;
            let mut ended = false;
            for ev in &events[start..] {
                match ev {
                    EngineEvent::Chunk { tokens, .. } => {
                        self.progress.output_tokens += u64::from(*tokens)
                    }
                    EngineEvent::Finished { .. } => {
                        self.progress.done += 1;
                        ended = true;
                    }
                    EngineEvent::Failed { .. } => {
                        self.progress.done += 1;
                        self.progress.failed += 1;
                        ended = true;
                    }
                    EngineEvent::Sent { .. }
                    | EngineEvent::Reasoning { .. }
                    | EngineEvent::Carried { .. }
                    | EngineEvent::Checked { .. } => {}
                }
            }
            self.tick(false);
            let reached = deadline.is_some_and(|d| self.inner.now() >= d);
            if ended || reached || (deadline.is_none() && self.inner.in_flight() == 0) {
                return Ok(());
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn cancel(&mut self, id: u64) -> bool {
        self.inner.cancel(id)
    }
}
