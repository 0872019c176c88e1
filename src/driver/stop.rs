//! Stopping a run from outside the driver loop (a Ctrl-C handler, a supervisor thread):
//! [`StopSignal`] is a shared flag the driver polls.
//!
//! Two levels: [`StopSignal::stop`] stops sending and lets the requests in flight finish
//! within the run's drain time ([`RunOptions::drain`](super::RunOptions::drain));
//! [`StopSignal::stop_now`] also cuts the requests in flight at once (a second Ctrl-C).
//! Either way the driver returns normally with every record, those cut off marked
//! [`Outcome::Incomplete`](crate::record::Outcome::Incomplete), and
//! [`RunOutput::stopped`](super::RunOutput::stopped) carries the reason.
//!
//! ```
//! use servebench::driver::StopSignal;
//! let stop = StopSignal::new();
//! let for_handler = stop.clone();
//! assert_eq!(stop.reason(), None);
//! for_handler.stop("SIGINT");
//! assert!(stop.is_stopping() && !stop.is_urgent());
//! for_handler.stop_now("SIGINT again");
//! assert!(stop.is_urgent());
//! assert_eq!(stop.reason().as_deref(), Some("SIGINT")); // the first reason stays
//! ```

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

const STOPPING: u8 = 1;
const URGENT: u8 = 2;

#[derive(Debug, Default)]
struct Inner {
    level: AtomicU8,
    reason: Mutex<Option<String>>,
}

/// A cloneable handle that asks a run to stop. Clones share the state; two handles compare
/// equal when they share it.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<Inner>);

impl PartialEq for StopSignal {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl StopSignal {
    /// A signal that has not been raised.
    pub fn new() -> Self {
        StopSignal::default()
    }

    fn raise(&self, level: u8, reason: &str) {
        if let Ok(mut r) = self.0.reason.lock() {
            r.get_or_insert_with(|| reason.to_string());
        }
        self.0.level.fetch_max(level, Ordering::SeqCst);
    }

    /// Stop sending; let the requests in flight finish within the drain time. The first
    /// reason given is kept.
    pub fn stop(&self, reason: &str) {
        self.raise(STOPPING, reason);
    }

    /// Stop sending and cut the requests in flight now.
    pub fn stop_now(&self, reason: &str) {
        self.raise(URGENT, reason);
    }

    /// Whether [`stop`](Self::stop) or [`stop_now`](Self::stop_now) was called.
    pub fn is_stopping(&self) -> bool {
        self.0.level.load(Ordering::SeqCst) >= STOPPING
    }

    /// Whether [`stop_now`](Self::stop_now) was called.
    pub fn is_urgent(&self) -> bool {
        self.0.level.load(Ordering::SeqCst) >= URGENT
    }

    /// The first reason given, once the signal is raised.
    pub fn reason(&self) -> Option<String> {
        if !self.is_stopping() {
            return None;
        }
        let given = self.0.reason.lock().ok().and_then(|r| r.clone());
        Some(given.unwrap_or_else(|| "stopped".to_string()))
    }
}
