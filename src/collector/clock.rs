//! The collector's clocks: [`SystemClock`] for real runs, [`ManualClock`] for virtual-time
//! simulations and tests, and the [`Clock`] trait any other source implements.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::stats::nanos_u64;

/// A source of timestamps: offsets from the run's start.
pub trait Clock: Send + Sync {
    /// The current time, as an offset from the clock's origin.
    fn now(&self) -> Duration;
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    #[inline]
    fn now(&self) -> Duration {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now(&self) -> Duration {
        (**self).now()
    }
}

/// The monotonic wall clock: [`Instant`]-based offsets from an origin (by default, the
/// moment the clock was created).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }

    /// A clock with the given origin (share one origin between several collectors).
    pub fn starting_at(origin: Instant) -> Self {
        SystemClock { origin }
    }

    /// The instant that reads as zero.
    pub fn origin(&self) -> Instant {
        self.origin
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that moves only when told to: for virtual-time simulations and tests. Share it
/// with `Arc<ManualClock>` between the driver (which sets it) and the collector.
///
/// ```
/// use std::time::Duration;
/// use servebench::collector::{Clock, ManualClock};
/// let c = ManualClock::new();
/// c.advance(Duration::from_millis(5));
/// c.set(c.now() + Duration::from_millis(5));
/// assert_eq!(c.now(), Duration::from_millis(10));
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    /// A clock reading zero.
    pub fn new() -> Self {
        ManualClock::default()
    }

    /// A clock reading `t`.
    pub fn at(t: Duration) -> Self {
        let c = ManualClock::new();
        c.set(t);
        c
    }

    /// Set the time (it may go backwards; the collector records whatever it reads).
    pub fn set(&self, t: Duration) {
        self.nanos.store(nanos_u64(t), Ordering::Release);
    }

    /// Move the time forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(nanos_u64(d), Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Acquire))
    }
}
