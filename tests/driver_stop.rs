//! The driver's stop signal: nothing is sent after it is raised, requests in flight get the
//! drain time, then are cut off and recorded as incomplete; the run returns every record.

use std::time::Duration;

use servebench::driver::workload::WorkItem;
use servebench::driver::Arrivals;
use servebench::driver::StopSignal;
use servebench::driver::{run, RunOptions};
use servebench::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
use servebench::record::Outcome;

/// Virtual time; every request streams one chunk after `latency` and ends. Raises `stop`
/// (urgently if asked) when its clock passes `stop_at`.
struct Slow {
    now: Duration,
    latency: Duration,
    queue: Vec<(Duration, u64)>,
    stop: StopSignal,
    stop_at: Duration,
    urgent: bool,
}

impl Engine for Slow {
    fn now(&self) -> Duration {
        self.now
    }
    fn submit(&mut self, r: EngineRequest) -> Result<(), EngineError> {
        self.queue.push((self.now + self.latency, r.id));
        Ok(())
    }
    fn advance(
        &mut self,
        deadline: Option<Duration>,
        ev: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        self.queue.sort();
        match self.queue.first().copied() {
            Some((at, id)) if deadline.is_none_or(|d| at <= d) => {
                self.queue.remove(0);
                self.now = at;
                ev.push(EngineEvent::Chunk { id, at, tokens: 1 });
                ev.push(EngineEvent::Finished {
                    id,
                    at,
                    usage: Usage::default(),
                });
            }
            _ => {
                if let Some(d) = deadline {
                    self.now = self.now.max(d)
                }
            }
        }
        if self.now >= self.stop_at {
            if self.urgent {
                self.stop.stop_now("test signal");
            } else {
                self.stop.stop("test signal");
            }
        }
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.queue.len()
    }
    fn cancel(&mut self, id: u64) -> bool {
        let before = self.queue.len();
        self.queue.retain(|&(_, i)| i != id);
        self.queue.len() < before
    }
}

fn work(n: usize) -> Vec<WorkItem> {
    vec![
        WorkItem {
            prompt_tokens: 8,
            output_tokens: 1,
            prompt: None,
            shared_prefix_tokens: 0,
        };
        n
    ]
}

fn go(urgent: bool, drain: Duration) -> (servebench::driver::RunOutput, Duration) {
    let stop = StopSignal::new();
    let stop_at = Duration::from_millis(1000);
    let mut e = Slow {
        now: Duration::ZERO,
        latency: Duration::from_millis(400),
        queue: vec![],
        stop: stop.clone(),
        stop_at,
        urgent,
    };
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 20.0 },
        stop: Some(stop),
        drain,
        ..RunOptions::default()
    };
    (run(&mut e, &work(100), &opts).unwrap(), stop_at)
}

#[test]
fn a_stop_ends_sending_and_lets_requests_in_flight_finish_within_the_drain() {
    let (out, stop_at) = go(false, Duration::from_secs(5));
    assert_eq!(out.stopped.as_deref(), Some("test signal"));
    assert!(out.aborted.is_none());
    // 20 req/s from 0 s: requests 0..=20 were due by 1 s; nothing was sent later.
    assert!(
        (15..=21).contains(&out.records.len()),
        "{}",
        out.records.len()
    );
    assert!(out.records.iter().all(|r| r.sent_at <= stop_at));
    // Every one of them had time to finish.
    assert!(out.records.iter().all(|r| r.outcome.is_success()));
    assert_eq!(
        servebench::metrics::summarize(
            &out.records,
            None,
            &servebench::metrics::MetricsOptions::load_run(),
            out.max_concurrency
        )
        .successful_requests,
        Some(out.records.len() as u64)
    );
}

#[test]
fn past_the_drain_or_on_an_urgent_stop_requests_in_flight_are_cut_off() {
    for (urgent, drain) in [
        (false, Duration::from_millis(100)),
        (true, Duration::from_secs(5)),
    ] {
        let (out, stop_at) = go(urgent, drain);
        assert_eq!(out.stopped.as_deref(), Some("test signal"));
        let cut: Vec<_> = out
            .records
            .iter()
            .filter(|r| matches!(&r.outcome, Outcome::Incomplete { reason } if reason.contains("interrupted (test signal)")))
            .collect();
        // 400 ms requests at 20 req/s: about 8 in flight when the signal comes; a 100 ms
        // drain lets the two oldest finish.
        assert!(
            (4..=9).contains(&cut.len()),
            "urgent {urgent}: {} cut",
            cut.len()
        );
        let ok = out
            .records
            .iter()
            .filter(|r| r.outcome.is_success())
            .count();
        assert_eq!(ok + cut.len(), out.records.len());
        let last_end = out.records.iter().filter_map(|r| r.ended_at).max().unwrap();
        assert!(
            last_end <= stop_at + drain.min(Duration::from_millis(150)),
            "{last_end:?}"
        );
    }
}

#[test]
fn a_signal_that_is_never_raised_changes_nothing() {
    let stop = StopSignal::new();
    let mk = || Slow {
        now: Duration::ZERO,
        latency: Duration::from_millis(400),
        queue: vec![],
        stop: StopSignal::new(),
        stop_at: Duration::MAX,
        urgent: false,
    };
    let plain = RunOptions {
        arrivals: Arrivals::Constant { rate: 20.0 },
        ..RunOptions::default()
    };
    let watched = RunOptions {
        stop: Some(stop),
        ..plain.clone()
    };
    let a = run(&mut mk(), &work(30), &plain).unwrap();
    let b = run(&mut mk(), &work(30), &watched).unwrap();
    assert_eq!(a.records, b.records);
    assert_eq!(b.stopped, None);
}
