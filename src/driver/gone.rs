//! Whether the server is gone: requests that end in connection failures one after another
//! (no answer of any kind from the server in between) for a while mean that nothing
//! listens any more — a crashed or stopped server. The driver then stops sending and keeps
//! what it measured, instead of failing every request still to come.

use std::time::Duration;

/// [`GoneWatch`]'s window in `bench` and the study runner: connection failures in a row
/// for this long (engine clock).
pub const DEFAULT_SERVER_GONE: Duration = Duration::from_secs(2);

/// Connection failures in a row needed besides the window (one refused connection is not
/// a gone server).
pub const GONE_MIN_FAILURES: u64 = 3;

/// Watches the ends of requests for a run of connection failures.
#[derive(Debug, Clone)]
pub struct GoneWatch {
    window: Duration,
    first: Option<Duration>,
    count: u64,
    message: String,
}

impl GoneWatch {
    /// A watch that calls the server gone after `window` of connection failures in a row.
    pub fn new(window: Duration) -> GoneWatch {
        GoneWatch {
            window,
            first: None,
            count: 0,
            message: String::new(),
        }
    }

    /// A request could not connect (or be sent) at `at`.
    pub fn connect_failed(&mut self, at: Duration, message: &str) {
        if self.first.is_none() {
            self.first = Some(at);
            self.message = message.to_string();
        }
        self.count += 1;
    }

    /// The server answered (a success, an HTTP error, an error in the stream): it is there.
    pub fn answered(&mut self) {
        self.first = None;
        self.count = 0;
    }

    /// Why the server is gone at `now`, if it is.
    ///
    /// ```
    /// use std::time::Duration;
    /// use servebench::driver::GoneWatch;
    /// let s = Duration::from_secs;
    /// let mut w = GoneWatch::new(s(2));
    /// for t in [4, 5, 6] {
    ///     w.connect_failed(s(t), "Connection refused");
    /// }
    /// assert!(w.verdict(s(6)).unwrap().contains("3 requests in a row"));
    /// w.answered();
    /// assert_eq!(w.verdict(s(9)), None);
    /// ```
    pub fn verdict(&self, now: Duration) -> Option<String> {
        let first = self.first?;
        let span = now.saturating_sub(first);
        (self.count >= GONE_MIN_FAILURES && span >= self.window).then(|| {
            format!(
                "the server is gone: {} requests in a row could not connect over {:.1} s \
                 (first: {})",
                self.count,
                span.as_secs_f64(),
                self.message
            )
        })
    }
}
