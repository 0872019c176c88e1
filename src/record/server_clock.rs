//! Clock skew between shards, measured through the server's clock as seen in HTTP `Date`
//! headers: bounds on the offset between a client's wall clock and the server's, so that
//! shards on different hosts can be checked for skew when their runs are merged
//! ([`crate::merge`]). The HTTP client observes the headers; this module knows no HTTP.
//!
//! A `Date` header carries the server's time `s` truncated to the second, `D`, taken while
//! the response head was written: after the client started the request (engine clock
//! `t_send`) and before the client received the head (`t_head`). So the server's clock at the
//! client's engine-clock zero lies in `(D − t_head, D + 1 − t_send)`, and every response
//! narrows the interval; responses whose head was written just after a second ticked over
//! narrow it most. With a few hundred responses spread over a few seconds the width comes
//! down to about the request round trip.
//!
//! A server that caches its `Date` string for up to a second past the tick (uvicorn, behind
//! vLLM, refreshes it on a timer) can contradict these bounds; the intervals then stop
//! overlapping and [`ServerClock::consistent`] turns `false` rather than report a wrong bound.
//!
//! ```
//! use std::time::Duration;
//! use servebench::record::ServerClock;
//! let mut c = ServerClock::default();
//! let ms = Duration::from_millis;
//! // A head dated 100 s, sent and received at 0.2–0.3 s of the client's engine clock, and
//! // one dated 101 s at 0.9–1.0 s: the server's second ticked over in between.
//! c.observe(100, ms(200), ms(300));
//! c.observe(101, ms(900), ms(1000));
//! // So the server's clock read between 100.0 s and 100.8 s at the client's zero.
//! let (lo, hi) = c.bounds_unix_s().unwrap();
//! assert!((lo - 100.0).abs() < 1e-9 && (hi - 100.8).abs() < 1e-9);
//! assert!(c.consistent());
//! ```

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// Bounds on the server's clock (Unix seconds) at a client's engine-clock zero, from the
/// `Date` headers of its responses. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerClock {
    /// Greatest lower bound so far (`max(D − t_head)`), Unix seconds.
    pub lo_unix_s: Option<f64>,
    /// Least upper bound so far (`min(D + 1 − t_send)`), Unix seconds.
    pub hi_unix_s: Option<f64>,
    /// How many `Date` headers were read.
    pub samples: u64,
}

impl ServerClock {
    /// Account for one response whose `Date` header said `date_unix_s` (whole seconds),
    /// sent at `sent` and whose head arrived at `head` (client engine clock).
    pub fn observe(&mut self, date_unix_s: i64, sent: Duration, head: Duration) {
        let d = date_unix_s as f64;
        let lo = d - head.as_secs_f64();
        let hi = d + 1.0 - sent.as_secs_f64();
        self.lo_unix_s = Some(self.lo_unix_s.map_or(lo, |x| x.max(lo)));
        self.hi_unix_s = Some(self.hi_unix_s.map_or(hi, |x| x.min(hi)));
        self.samples += 1;
    }

    /// Account for a raw `Date` header value (IMF-fixdate, e.g. `Thu, 03 Dec 2026 18:30:00
    /// GMT`); `false` when it does not parse (it is then ignored).
    pub fn observe_header(&mut self, value: &str, sent: Duration, head: Duration) -> bool {
        match chrono::DateTime::parse_from_rfc2822(value.trim()) {
            Ok(t) => {
                self.observe(t.timestamp(), sent, head);
                true
            }
            Err(_) => false,
        }
    }

    /// The interval `(lo, hi)`, when there was at least one header.
    pub fn bounds_unix_s(&self) -> Option<(f64, f64)> {
        Some((self.lo_unix_s?, self.hi_unix_s?))
    }

    /// Whether the headers agree with each other (the interval is not empty).
    pub fn consistent(&self) -> bool {
        self.bounds_unix_s().is_none_or(|(lo, hi)| lo <= hi)
    }

    /// Bounds on (client wall clock − server clock), seconds, given the client's wall-clock
    /// reading at its engine-clock zero; `None` without headers or when they disagree.
    pub fn client_minus_server_s(&self, client_zero: SystemTime) -> Option<(f64, f64)> {
        let (lo, hi) = self.bounds_unix_s()?;
        if lo > hi {
            return None;
        }
        let w = unix_s(client_zero);
        Some((w - hi, w - lo))
    }

    /// The same clock with every engine-clock time moved later by `by` (the engine's zero
    /// moved earlier): the bounds then refer to the new zero.
    pub fn shifted(&self, by: Duration) -> ServerClock {
        let b = by.as_secs_f64();
        ServerClock {
            lo_unix_s: self.lo_unix_s.map(|x| x + b),
            hi_unix_s: self.hi_unix_s.map(|x| x + b),
            samples: self.samples,
        }
    }
}

/// Seconds since the Unix epoch (negative before it).
pub fn unix_s(t: SystemTime) -> f64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_contain_the_true_offset_and_narrow() {
        // The server's clock at the client's zero is 1000.37 s; heads are written 1–3 ms
        // after sending, requests every 7 ms for 3 s.
        let truth = 1000.37;
        let mut c = ServerClock::default();
        let mut widths = Vec::new();
        for i in 0..430u64 {
            let sent = Duration::from_millis(7 * i);
            let written = sent + Duration::from_millis(1 + i % 3);
            let head = written + Duration::from_millis(1);
            let server = truth + written.as_secs_f64();
            c.observe(server.floor() as i64, sent, head);
            let (lo, hi) = c.bounds_unix_s().unwrap();
            assert!(lo <= truth && truth <= hi, "{lo} {truth} {hi}");
            widths.push(hi - lo);
        }
        assert!(widths[0] > 0.99);
        assert!(*widths.last().unwrap() < 0.012, "{widths:?}");
        assert!(c.consistent());
        assert_eq!(c.samples, 430);
    }

    #[test]
    fn a_lagging_date_is_reported_as_inconsistent() {
        let mut c = ServerClock::default();
        c.observe(100, Duration::from_millis(0), Duration::from_millis(10));
        // 1.5 s later the same second is claimed: impossible with a truthful Date.
        c.observe(
            100,
            Duration::from_millis(1500),
            Duration::from_millis(1510),
        );
        assert!(!c.consistent());
        assert_eq!(c.client_minus_server_s(SystemTime::UNIX_EPOCH), None);
    }

    #[test]
    fn headers_parse_as_imf_fixdate() {
        let mut c = ServerClock::default();
        assert!(c.observe_header(
            "Thu, 03 Dec 2026 18:30:00 GMT",
            Duration::ZERO,
            Duration::from_millis(5)
        ));
        assert!(!c.observe_header("yesterday", Duration::ZERO, Duration::ZERO));
        assert_eq!(c.samples, 1);
        let (lo, _) = c.bounds_unix_s().unwrap();
        assert!((lo - (1_796_322_600.0 - 0.005)).abs() < 1e-6, "{lo}");
    }
}
