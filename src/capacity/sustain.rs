//! Whether a rate probe carried the load it offered. A capacity is a claim about a
//! *sustained* load: a probe whose server completed fewer requests than were sent, or that
//! ended before it reached a steady state, has not shown that the load holds, whatever its
//! latencies say (a probe of 100 requests "at 400 req/s" is over in 0.25 s of sending).
//!
//! The rule, for a probe sending at a constant (or Poisson, or gamma) rate:
//! - the **steady window** is the sending window (first send to last send) less its first
//!   [`STEADY_SKIP_SHARE`] (the fill: the server's batch is still growing);
//! - **offered** is the requests sent inside the steady window per second of it;
//! - **achieved** is the requests that *completed* successfully inside the same window
//!   shifted by the probe's median latency, per second: a server that carries the load
//!   finishes, one median latency later, what it was sent (the count is the same up to the
//!   spread of latencies at the window's edges); a server that carries only `C < R` req/s
//!   completes about `C` per second in any window, however it is shifted;
//! - the client must have sent what the probe planned, on schedule (a concurrency cap or
//!   the end of the run holding sends back is a load not offered);
//! - the probe is in a **steady state** when the median latency of the requests sent in
//!   the window's second half is at most [`MAX_LATENCY_GROWTH`] times the first half's: a
//!   queue that still grows shows a load above what the server carries even when the
//!   probe ended before the backlog cut its completions;
//! - the probe **sustained** its load when achieved ≥ [`MIN_SUSTAINED_SHARE`] of offered
//!   (and of what was planned), its latencies stopped growing, and the steady window held
//!   at least [`MIN_STEADY_REQUESTS`] sends.
//!
//! The shift by the median latency makes the rule independent of how long requests take:
//! achieved ÷ (last completion − first send) would call a server with 10-s answers at 70 %
//! of a 30-s probe's rate although it carried every request.

use crate::record::RequestRecord;

/// The least share of the offered rate a probe must complete to hold.
pub const MIN_SUSTAINED_SHARE: f64 = 0.95;

/// The share of the sending window skipped as the fill before the steady window.
pub const STEADY_SKIP_SHARE: f64 = 0.2;

/// The most the median latency of the steady window's second half may exceed its first
/// half's (as a ratio) for the probe to be in a steady state: a queue that still grows
/// (a load above what the server carries, shown by a probe too short for the backlog to
/// cut its completions) lengthens every later request's wait.
pub const MAX_LATENCY_GROWTH: f64 = 1.5;

/// The fewest sends inside the steady window for a probe to show anything.
pub const MIN_STEADY_REQUESTS: usize = 20;

/// How long a rate probe sends by default: long enough for a server's batch to fill and
/// for a queue to build when the load is more than it carries (a burst shorter than its
/// latency shows neither).
pub const DEFAULT_PROBE_SECONDS: f64 = 30.0;

/// The fewest requests a rate probe sends, however low its rate (so its steady window
/// holds [`MIN_STEADY_REQUESTS`]).
pub const MIN_PROBE_REQUESTS: u64 = 50;

/// How many requests a rate probe at `rate_per_s` sends over `probe_seconds`: the rate
/// times the time, at least [`MIN_PROBE_REQUESTS`].
///
/// ```
/// use servebench::capacity::probe_requests;
/// assert_eq!(probe_requests(400.0, 20.0), 8000);
/// assert_eq!(probe_requests(1.25, 30.0), 50);
/// ```
pub fn probe_requests(rate_per_s: f64, probe_seconds: f64) -> u64 {
    // Saturating float-to-int conversion; a NaN gives the minimum.
    ((rate_per_s * probe_seconds).ceil() as u64).max(MIN_PROBE_REQUESTS)
}

/// How long after its last send a rate probe of `sending_s` seconds may run before the
/// requests still in flight are cut (and count as not completed): as long as the sending
/// itself, at least 10 s. A server that carries the load has finished all but the last
/// latency's worth by then; one that does not has shown it.
pub fn probe_drain_seconds(sending_s: f64) -> f64 {
    sending_s.max(10.0)
}

/// What a probe's records say of the load it carried (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sustained {
    /// The steady window, seconds from the run's origin (the records' clock).
    pub window_s: (f64, f64),
    /// Requests sent inside the window.
    pub sent: usize,
    /// Of them (as a count): requests completed successfully inside the window shifted by
    /// the median latency.
    pub completed: usize,
    /// The share of its schedule the client kept: requests sent of those planned, times
    /// the scheduled span over the span it took to send them (1 when it sent everything on
    /// time; below 1 when a concurrency cap, the client's own limits or the end of the run
    /// held sends back).
    pub client_share: f64,
    /// The median latency of the requests sent in the steady window's second half over
    /// that of its first half (1 when either half has none): above
    /// [`MAX_LATENCY_GROWTH`], the queue was still growing.
    pub latency_growth: f64,
}

impl Sustained {
    /// Requests sent per second of the steady window.
    pub fn offered_per_s(&self) -> f64 {
        self.sent as f64 / self.len_s()
    }

    /// Requests completed per second of the (shifted) steady window.
    pub fn achieved_per_s(&self) -> f64 {
        self.completed as f64 / self.len_s()
    }

    fn len_s(&self) -> f64 {
        (self.window_s.1 - self.window_s.0).max(f64::MIN_POSITIVE)
    }

    /// The share of the probe's load that was carried: the smaller of completed ÷ sent
    /// (the server kept up with what it got) and [`Sustained::client_share`] (the client
    /// sent what the probe asked for).
    pub fn share(&self) -> f64 {
        let server = if self.sent > 0 {
            self.completed as f64 / self.sent as f64
        } else {
            0.0
        };
        server.min(self.client_share)
    }

    /// Whether the probe carried its load: enough sends in the window, a share of at
    /// least [`MIN_SUSTAINED_SHARE`], and latencies that stopped growing.
    pub fn held(&self) -> bool {
        self.ratio() <= 1.0
    }

    /// How far the probe is from carrying its load, as an SLO condition's ratio (at most 1
    /// when it did): the larger of the share missing over the share allowed to miss,
    /// (1 − share) ÷ (1 − [`MIN_SUSTAINED_SHARE`]), and the latency growth beyond 1 over
    /// the growth allowed, (growth − 1) ÷ ([`MAX_LATENCY_GROWTH`] − 1); `f64::INFINITY`
    /// when the steady window holds fewer than [`MIN_STEADY_REQUESTS`] sends.
    pub fn ratio(&self) -> f64 {
        if self.sent < MIN_STEADY_REQUESTS {
            return f64::INFINITY;
        }
        let missing = (1.0 - self.share()).max(0.0) / (1.0 - MIN_SUSTAINED_SHARE);
        let growing = (self.latency_growth - 1.0).max(0.0) / (MAX_LATENCY_GROWTH - 1.0);
        missing.max(growing)
    }
}

/// The steady window of `records` and what was carried over it (see the module docs);
/// `planned` is how many requests the probe was to send (`None`: those recorded). `None`
/// when fewer than two requests were sent (no window).
///
/// ```
/// use std::time::Duration;
/// use servebench::capacity::sustained;
/// use servebench::record::{Outcome, RequestRecord};
/// // 100 requests sent at 10 req/s, each answered in 0.5 s: the load is carried.
/// let ms = |v: u64| Duration::from_millis(v);
/// let records: Vec<RequestRecord> = (0..100)
///     .map(|i| RequestRecord {
///         scheduled_at: Some(ms(100 * i)),
///         ended_at: Some(ms(100 * i + 500)),
///         outcome: Outcome::Success,
///         ..RequestRecord::new(i, ms(100 * i))
///     })
///     .collect();
/// let s = sustained(&records, Some(100)).unwrap();
/// assert!((s.offered_per_s() - 10.0).abs() < 0.2 && s.held(), "{s:?}");
/// // The same sends, a server that finishes one request every 0.25 s: 4 req/s.
/// let slow: Vec<RequestRecord> = records
///     .iter()
///     .map(|r| RequestRecord { ended_at: Some(ms(250 * (r.id + 1))), ..r.clone() })
///     .collect();
/// let s = sustained(&slow, Some(100)).unwrap();
/// assert!(s.share() < 0.5 && !s.held(), "{s:?}");
/// // A client that sent only 40 of the 100 it was to send did not offer the load.
/// assert!(!sustained(&records[..40], Some(100)).unwrap().held());
/// ```
pub fn sustained(records: &[RequestRecord], planned: Option<u64>) -> Option<Sustained> {
    let secs = |d: std::time::Duration| d.as_secs_f64();
    let mut sends: Vec<f64> = records.iter().map(|r| secs(r.sent_at)).collect();
    sends.sort_by(f64::total_cmp);
    let (&first, &last) = (sends.first()?, sends.last()?);
    if sends.len() < 2 || last <= first {
        return None;
    }
    let start = first + STEADY_SKIP_SHARE * (last - first);
    let sent = sends.iter().filter(|&&t| t >= start).count();
    let mut latencies: Vec<f64> = records
        .iter()
        .filter(|r| r.outcome.is_success())
        .filter_map(|r| Some(secs(r.ended_at?) - secs(r.sent_at)))
        .collect();
    latencies.sort_by(f64::total_cmp);
    let shift = latencies.get(latencies.len() / 2).copied().unwrap_or(0.0);
    let (a, b) = (start + shift, last + shift);
    let completed = records
        .iter()
        .filter(|r| r.outcome.is_success())
        .filter_map(|r| r.ended_at.map(secs))
        .filter(|&t| t >= a && t <= b)
        .count();
    // The schedule kept: everything planned was sent, and in the time it was scheduled
    // over (records without a schedule are taken as sent on time).
    let planned = planned.unwrap_or(records.len() as u64).max(1);
    let mut scheduled: Vec<f64> = records
        .iter()
        .filter_map(|r| r.scheduled_at.map(secs))
        .collect();
    scheduled.sort_by(f64::total_cmp);
    let on_time = match (scheduled.first(), scheduled.last()) {
        (Some(&s0), Some(&s1)) if s1 > s0 => ((s1 - s0) / (last - first)).min(1.0),
        _ => 1.0,
    };
    let client_share = (records.len() as f64 / planned as f64).min(1.0) * on_time;
    // The median latency of each half of the window's sends (a request not completed
    // counts as still waiting at the last completion seen).
    let horizon = records
        .iter()
        .filter_map(|r| r.ended_at.map(secs))
        .fold(last, f64::max);
    let middle = (start + last) / 2.0;
    let median_latency = |lo: f64, hi: f64| {
        let mut v: Vec<f64> = records
            .iter()
            .filter(|r| (lo..hi).contains(&secs(r.sent_at)))
            .map(|r| {
                let end = match (&r.outcome, r.ended_at) {
                    (o, Some(e)) if o.is_success() => secs(e),
                    _ => horizon,
                };
                end - secs(r.sent_at)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let latency_growth = match (
        median_latency(start, middle),
        median_latency(middle, last + f64::EPSILON),
    ) {
        (Some(a), Some(b)) if a > 0.0 => b / a,
        _ => 1.0,
    };
    Some(Sustained {
        window_s: (start, last),
        sent,
        completed,
        client_share,
        latency_growth,
    })
}
