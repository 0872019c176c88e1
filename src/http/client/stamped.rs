//! Time stamps taken where the bytes arrive: a TCP stream that notes when each read
//! returned data, so that a response chunk is stamped at the read that brought it rather
//! than when the request's task was next scheduled to look at it.
//!
//! hyper's HTTP/1 connection runs as its own task and hands body frames to the request's
//! task through a channel. Under load (hundreds of streams on two cores) the second task
//! can run a while after the first read the bytes; stamping at the read removes that wait
//! from every TTFT and ITL the client reports.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// When data last arrived on one connection, in nanoseconds since the engine's origin
/// (0: not yet).
#[derive(Debug)]
pub(super) struct ReadStamp {
    origin: Instant,
    /// The first read since the reader last took a stamp (0: none since).
    unclaimed_ns: AtomicU64,
    /// The latest read.
    last_ns: AtomicU64,
}

impl ReadStamp {
    pub(super) fn new(origin: Instant) -> Self {
        ReadStamp {
            origin,
            unclaimed_ns: AtomicU64::new(0),
            last_ns: AtomicU64::new(0),
        }
    }

    fn note(&self) {
        // +1 keeps a read at the origin itself distinct from "none".
        let ns = u64::try_from(self.origin.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        self.last_ns.store(ns, Ordering::Release);
        let _ = self
            .unclaimed_ns
            .compare_exchange(0, ns, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// The arrival time of data the reader now holds: the first read it has not yet
    /// claimed, else the latest read (the data came with a read already claimed, at or
    /// before that one), else `now` when nothing was read yet. Never later than `now`.
    pub(super) fn claim(&self, now: Duration) -> Duration {
        let ns = match self.unclaimed_ns.swap(0, Ordering::AcqRel) {
            0 => self.last_ns.load(Ordering::Acquire),
            ns => ns,
        };
        if ns == 0 {
            return now;
        }
        Duration::from_nanos(ns).min(now)
    }

    /// Forget reads so far (a pooled connection taken for a new request: what was read
    /// before belongs to the previous response).
    pub(super) fn reset(&self) {
        self.unclaimed_ns.store(0, Ordering::Release);
        self.last_ns.store(0, Ordering::Release);
    }
}

/// A TCP stream that stamps its reads into a [`ReadStamp`].
pub(super) struct StampedTcp {
    inner: TcpStream,
    stamp: Arc<ReadStamp>,
}

impl StampedTcp {
    pub(super) fn new(inner: TcpStream, stamp: Arc<ReadStamp>) -> Self {
        StampedTcp { inner, stamp }
    }
}

impl AsyncRead for StampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.stamp.note();
        }
        r
    }
}

impl AsyncWrite for StampedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_the_first_unclaimed_read_then_the_latest() {
        let origin = Instant::now() - Duration::from_secs(1);
        let s = ReadStamp::new(origin);
        let now = Duration::from_secs(100);
        assert_eq!(s.claim(now), now, "nothing read yet: now");
        s.note();
        let first = s.claim(now);
        assert!(first > Duration::from_millis(999) && first < now);
        std::thread::sleep(Duration::from_millis(2));
        s.note();
        std::thread::sleep(Duration::from_millis(2));
        s.note();
        let second = s.claim(now);
        assert!(
            second >= first + Duration::from_millis(2),
            "{second:?} {first:?}"
        );
        // Claimed already: the latest read, which is after the second's first read.
        let third = s.claim(now);
        assert!(
            third >= second + Duration::from_millis(2),
            "{third:?} {second:?}"
        );
        assert_eq!(
            s.claim(Duration::from_millis(1)),
            Duration::from_millis(1),
            "never after now"
        );
        s.reset();
        assert_eq!(s.claim(now), now);
    }
}
