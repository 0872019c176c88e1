//! What the server counts ([`ServeStats`], kept as atomic counters) and how `GET /metrics`
//! writes them in Prometheus' text format.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of what the server did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Valid generation requests accepted (including fault-injected ones).
    pub requests: u64,
    /// Requests answered with a 4xx error.
    pub rejected: u64,
    /// Faults injected.
    pub injected_faults: u64,
    /// Requests the engine finished (and whose end was handed to the client).
    pub completed: u64,
    /// Requests the engine failed.
    pub failed: u64,
    /// Requests cancelled because the client went away (or a fault cut them).
    pub cancelled: u64,
    /// Token-carrying SSE chunks written (role-only, finish, usage and `[DONE]` not counted).
    pub token_chunks_sent: u64,
    /// Tokens in those chunks.
    pub tokens_sent: u64,
    /// Streams currently open.
    pub open_streams: u64,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) requests: AtomicU64,
    pub(super) rejected: AtomicU64,
    pub(super) injected_faults: AtomicU64,
    pub(super) completed: AtomicU64,
    pub(super) failed: AtomicU64,
    pub(super) cancelled: AtomicU64,
    pub(super) token_chunks_sent: AtomicU64,
    pub(super) tokens_sent: AtomicU64,
    pub(super) open_streams: AtomicU64,
}

pub(super) fn inc(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    pub(super) fn snapshot(&self) -> ServeStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ServeStats {
            requests: g(&self.requests),
            rejected: g(&self.rejected),
            injected_faults: g(&self.injected_faults),
            completed: g(&self.completed),
            failed: g(&self.failed),
            cancelled: g(&self.cancelled),
            token_chunks_sent: g(&self.token_chunks_sent),
            tokens_sent: g(&self.tokens_sent),
            open_streams: g(&self.open_streams),
        }
    }
}

/// The gauge [`crate::observe::CLOCK_SPEED`]: server seconds per wall-clock second (the
/// example server's `--speed`). Its latency histograms and energy counter run on the
/// server's clock; a client reads them against its own with this.
pub(super) fn clock_speed_text(speed: f64) -> String {
    format!(
        "# HELP {name} Server seconds per wall-clock second (the speed factor): the latency histograms and the energy counter are in server seconds.\n# TYPE {name} gauge\n{name} {speed}\n",
        name = crate::observe::CLOCK_SPEED
    )
}

/// `GET /metrics`: the server's counters in Prometheus' text format.
pub(super) fn metrics_text(stats: &ServeStats) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (name, help, kind, value) in [
        (
            "requests",
            "Valid generation requests accepted",
            "counter",
            stats.requests,
        ),
        (
            "rejected",
            "Requests answered with a 4xx error",
            "counter",
            stats.rejected,
        ),
        (
            "injected_faults",
            "Faults injected",
            "counter",
            stats.injected_faults,
        ),
        (
            "completed",
            "Requests finished and delivered",
            "counter",
            stats.completed,
        ),
        (
            "failed",
            "Requests the engine failed",
            "counter",
            stats.failed,
        ),
        (
            "cancelled",
            "Requests cancelled by a client disconnect",
            "counter",
            stats.cancelled,
        ),
        (
            "token_chunks_sent",
            "Token-carrying SSE chunks written",
            "counter",
            stats.token_chunks_sent,
        ),
        (
            "tokens_sent",
            "Tokens in those chunks",
            "counter",
            stats.tokens_sent,
        ),
        (
            "open_streams",
            "Generation responses currently open",
            "gauge",
            stats.open_streams,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP servebench_{name} {help}.\n# TYPE servebench_{name} {kind}\nservebench_{name} {value}"
        );
    }
    out
}
