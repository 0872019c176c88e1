//! A run's live metrics in Prometheus' text format, served while it runs (`bench
//! --metrics-listen ADDR`): the request counters and tokens so far, and rolling TTFT and
//! inter-token-latency quantiles over the last [`WINDOW_S`] seconds of finished requests
//! (per-second `hdrhistogram` slots merged at each scrape, so memory stays bounded however
//! long the run). Names follow Prometheus' conventions: a `servebench_` prefix, base units
//! (seconds), `_total` on counters.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use crate::record::RequestRecord;
use crate::stats::Streaming;

/// Seconds of finished requests the quantiles cover.
pub const WINDOW_S: u64 = 60;

/// The quantiles each summary exports.
pub const QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// The counters a driver reports as the run goes (its `done`/`failed` are for the record;
/// the exported ended counts come from [`LiveMetrics::record`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveCounts {
    /// Requests ended (finished or failed).
    pub done: u64,
    /// Of which failed.
    pub failed: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Output tokens received so far.
    pub output_tokens: u64,
    /// Time since the run's start.
    pub elapsed: Duration,
}

#[derive(Default)]
struct State {
    counts: LiveCounts,
    /// Requests ended with their whole answer, counted as their records arrive (so the
    /// quantiles' counts never run ahead of them).
    completed: u64,
    /// Requests ended otherwise.
    failed: u64,
    /// `(second of the run, TTFT histogram, ITL histogram)`, oldest first.
    slots: VecDeque<(u64, Streaming, Streaming)>,
}

/// The live metrics of one run; shared between the run (which feeds it) and the listener
/// (which renders it).
///
/// ```
/// use std::time::Duration;
/// use servebench::observe::live::{LiveCounts, LiveMetrics};
/// use servebench::record::{Chunk, RequestRecord};
/// let live = LiveMetrics::default();
/// let mut r = RequestRecord::new(0, Duration::ZERO);
/// r.chunks = vec![Chunk { at: Duration::from_millis(40), tokens: 1 }, Chunk { at: Duration::from_millis(50), tokens: 1 }];
/// r.ended_at = Some(Duration::from_millis(50));
/// live.record(&r);
/// live.set_counts(LiveCounts { output_tokens: 2, elapsed: Duration::from_secs(1), ..Default::default() });
/// let text = live.render();
/// assert!(text.contains("servebench_requests_completed_total 1\n"));
/// assert!(text.contains("servebench_time_to_first_token_seconds{quantile=\"0.5\"} 0.04"));
/// ```
#[derive(Default)]
pub struct LiveMetrics(Mutex<State>);

impl std::fmt::Debug for LiveMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveMetrics")
    }
}

impl PartialEq for LiveMetrics {
    /// The same live metrics (by identity).
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl LiveMetrics {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        match self.0.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The counters as they are now.
    pub fn set_counts(&self, counts: LiveCounts) {
        self.state().counts = counts;
    }

    /// A finished request: its TTFT and inter-token gaps enter the slot of the second it
    /// ended in (a failed request or one without chunks adds none).
    pub fn record(&self, r: &RequestRecord) {
        let mut s = self.state();
        if !crate::metrics::vllm_success(r) {
            s.failed += 1;
            return;
        }
        s.completed += 1;
        let Some(ttft) = r.ttft() else {
            return;
        };
        let second = r.ended_at.unwrap_or(r.sent_at).as_secs();
        if s.slots.back().is_none_or(|b| b.0 < second) {
            s.slots
                .push_back((second, Streaming::new(), Streaming::new()));
        }
        // A request that ended in an earlier second than the newest slot joins the newest:
        // records arrive in end order up to a scheduling hair.
        if let Some(slot) = s.slots.back_mut() {
            slot.1.record(ttft);
            for gap in crate::metrics::vllm_itl_gaps(r) {
                slot.2.record(gap);
            }
        }
        while s.slots.front().is_some_and(|f| f.0 + WINDOW_S <= second) {
            s.slots.pop_front();
        }
    }

    /// The metrics in Prometheus' text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let s = self.state();
        let c = s.counts;
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, value: f64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        // Ended requests are counted from their records; the driver's counters (every
        // 200 ms) may lag them, never the other way round.
        let ended = s.completed + s.failed;
        metric(
            "servebench_requests_sent_total",
            "counter",
            "Requests sent so far.",
            (c.done + c.in_flight).max(ended) as f64,
        );
        metric(
            "servebench_requests_completed_total",
            "counter",
            "Requests that ended with their whole answer.",
            s.completed as f64,
        );
        metric(
            "servebench_requests_failed_total",
            "counter",
            "Requests that failed or were cut.",
            s.failed as f64,
        );
        metric(
            "servebench_requests_in_flight",
            "gauge",
            "Requests sent and not yet ended.",
            c.in_flight as f64,
        );
        metric(
            "servebench_output_tokens_total",
            "counter",
            "Output tokens received so far.",
            c.output_tokens as f64,
        );
        let secs = c.elapsed.as_secs_f64();
        metric(
            "servebench_output_tokens_per_second",
            "gauge",
            "Output tokens per second since the run's start.",
            if secs > 0.0 {
                c.output_tokens as f64 / secs
            } else {
                0.0
            },
        );
        metric(
            "servebench_run_elapsed_seconds",
            "gauge",
            "Seconds since the run's start.",
            secs,
        );
        let now = s.slots.back().map_or(0, |b| b.0);
        for (name, help, pick) in [
            (
                "servebench_time_to_first_token_seconds",
                "Time to first token of the requests that ended in the last 60 s.",
                0usize,
            ),
            (
                "servebench_inter_token_latency_seconds",
                "Gaps between streamed chunks of the requests that ended in the last 60 s.",
                1,
            ),
        ] {
            let mut merged = Streaming::new();
            for slot in s.slots.iter().filter(|x| x.0 + WINDOW_S > now) {
                let h = if pick == 0 { &slot.1 } else { &slot.2 };
                // Histograms of one precision always merge; a failure leaves the slot out.
                let _ = merged.merge(h);
            }
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} summary");
            for q in QUANTILES {
                if let Some(v) = merged.percentile(100.0 * q) {
                    let _ = writeln!(out, "{name}{{quantile=\"{q}\"}} {}", v.as_secs_f64());
                }
            }
            let sum = merged.mean_ns().unwrap_or(0.0) * merged.count() as f64 / 1e9;
            let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {}", merged.count());
        }
        out
    }
}

/// The live metrics of a sequence of runs (a study's): each run feeds its own
/// [`LiveMetrics`] ([`LiveRuns::next_run`]), and the listener renders the run in progress
/// with how many runs have started (`servebench_runs_started_total`) — the run's counters
/// restart at each run, which Prometheus' `rate()` reads as a counter reset.
///
/// ```
/// use servebench::observe::live::LiveRuns;
/// let runs = LiveRuns::default();
/// let first = runs.next_run();
/// let _second = runs.next_run();
/// let text = runs.render();
/// assert!(text.contains("servebench_runs_started_total 2\n"));
/// assert!(text.contains("servebench_requests_completed_total 0\n"));
/// # drop(first);
/// ```
#[derive(Debug, Default)]
pub struct LiveRuns {
    current: Mutex<std::sync::Arc<LiveMetrics>>,
    started: std::sync::atomic::AtomicU64,
}

impl LiveRuns {
    /// A fresh [`LiveMetrics`] for the run about to start, which the listener renders from
    /// now on.
    pub fn next_run(&self) -> std::sync::Arc<LiveMetrics> {
        let live = std::sync::Arc::new(LiveMetrics::default());
        let mut c = match self.current.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *c = std::sync::Arc::clone(&live);
        self.started
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        live
    }

    /// The run in progress's metrics, and the runs started so far.
    pub fn render(&self) -> String {
        let current = match self.current.lock() {
            Ok(g) => std::sync::Arc::clone(&g),
            Err(p) => std::sync::Arc::clone(&p.into_inner()),
        };
        let mut out = current.render();
        out.push_str(&format!(
            "# HELP servebench_runs_started_total Runs started so far (a study's).\n\
             # TYPE servebench_runs_started_total counter\nservebench_runs_started_total {}\n",
            self.started.load(std::sync::atomic::Ordering::Relaxed)
        ));
        out
    }
}
