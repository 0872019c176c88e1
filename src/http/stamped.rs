//! Time stamps taken where the bytes arrive: a TCP stream that notes when each read
//! returned data, so that a response chunk is stamped at the read that brought it rather
//! than when the request's task was next scheduled to look at it (the client), and a
//! request's arrival is when its first bytes reached the socket rather than when a busy
//! server got round to parsing it (the example server).
//!
//! hyper's HTTP/1 connection runs as its own task and hands body frames to the request's
//! task through a channel. Under load (hundreds of streams on two cores) the second task
//! can run a while after the first read the bytes; stamping at the read removes that wait
//! from every TTFT and ITL the client reports.
//!
//! On Linux the stamp is the kernel's: the socket has `SO_TIMESTAMPNS` on and each read is
//! a `recvmsg` that returns, beside the bytes, when the kernel received the last segment it
//! read — so the time the client's runtime took to get round to the read is not in it
//! either. Elsewhere, or where the kernel gives no stamp, the read's own time is used.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// When data last arrived on one connection, in nanoseconds since the engine's origin
/// (0: not yet).
#[derive(Debug)]
pub(crate) struct ReadStamp {
    origin: Instant,
    /// `origin` on the wall clock (the kernel's stamps are wall-clock), ns since the epoch.
    origin_unix_ns: u128,
    /// The first read since the reader last took a stamp (0: none since).
    unclaimed_ns: AtomicU64,
    /// The latest read.
    last_ns: AtomicU64,
}

impl ReadStamp {
    pub(crate) fn new(origin: Instant) -> Self {
        let now_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        ReadStamp {
            origin,
            origin_unix_ns: now_unix.saturating_sub(origin.elapsed()).as_nanos(),
            unclaimed_ns: AtomicU64::new(0),
            last_ns: AtomicU64::new(0),
        }
    }

    /// A read returned data now, which the kernel received at `kernel_unix` (wall clock),
    /// if it said.
    fn note(&self, kernel_unix: Option<Duration>) {
        let now_ns = self.origin.elapsed().as_nanos();
        let at_ns = kernel_unix
            .and_then(|k| k.as_nanos().checked_sub(self.origin_unix_ns))
            .map_or(now_ns, |k| k.min(now_ns));
        // +1 keeps a read at the origin itself distinct from "none".
        let ns = u64::try_from(at_ns).unwrap_or(u64::MAX).max(1);
        self.last_ns.store(ns, Ordering::Release);
        let _ = self
            .unclaimed_ns
            .compare_exchange(0, ns, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// The arrival time of data the reader now holds: the first read it has not yet
    /// claimed, else the latest read (the data came with a read already claimed, at or
    /// before that one), else `now` when nothing was read yet. Never later than `now`.
    pub(crate) fn claim(&self, now: Duration) -> Duration {
        let ns = match self.unclaimed_ns.swap(0, Ordering::AcqRel) {
            0 => self.last_ns.load(Ordering::Acquire),
            ns => ns,
        };
        if ns == 0 {
            return now;
        }
        Duration::from_nanos(ns).min(now)
    }

    /// [`ReadStamp::claim`] as an instant: when the data the reader now holds arrived.
    pub(crate) fn claim_instant(&self) -> Instant {
        let now = self.origin.elapsed();
        self.origin + self.claim(now)
    }

    /// Forget reads so far (a pooled connection taken for a new request: what was read
    /// before belongs to the previous response).
    pub(crate) fn reset(&self) {
        self.unclaimed_ns.store(0, Ordering::Release);
        self.last_ns.store(0, Ordering::Release);
    }
}

/// A TCP stream that stamps its reads into a [`ReadStamp`].
pub(crate) struct StampedTcp {
    inner: TcpStream,
    stamp: Arc<ReadStamp>,
}

impl StampedTcp {
    /// Wraps `inner`; on Linux, asks the kernel for receive time stamps on it (a socket
    /// that refuses still works, stamped at the read).
    pub(crate) fn new(inner: TcpStream, stamp: Arc<ReadStamp>) -> Self {
        let _ = kernel_stamps(&inner);
        StampedTcp { inner, stamp }
    }
}

/// Turns the kernel's receive time stamps on for `socket`; whether it agreed.
fn kernel_stamps(socket: &TcpStream) -> bool {
    #[cfg(target_os = "linux")]
    return nix::sys::socket::setsockopt(
        socket,
        nix::sys::socket::sockopt::ReceiveTimestampns,
        &true,
    )
    .is_ok();
    #[cfg(not(target_os = "linux"))]
    {
        let _ = socket;
        false
    }
}

#[cfg(test)]
impl StampedTcp {
    fn inner_ref(&self) -> &TcpStream {
        &self.inner
    }
}

/// One `recvmsg` into `buf`: the bytes read and the kernel's receive stamp, if it gave one.
#[cfg(target_os = "linux")]
fn recv_stamped(fd: std::os::fd::RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<Duration>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut iov = [io::IoSliceMut::new(buf)];
    let mut cmsg = nix::cmsg_space!(nix::sys::time::TimeSpec);
    let msg =
        recvmsg::<()>(fd, &mut iov, Some(&mut cmsg), MsgFlags::empty()).map_err(io::Error::from)?;
    let mut kernel = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                let (s, ns) = (ts.tv_sec(), ts.tv_nsec());
                if let (Ok(s), Ok(ns)) = (u64::try_from(s), u32::try_from(ns)) {
                    kernel = Some(Duration::new(s, ns));
                }
            }
        }
    }
    Ok((msg.bytes, kernel))
}

impl AsyncRead for StampedTcp {
    #[cfg(target_os = "linux")]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        use std::os::fd::AsRawFd;
        let this = self.get_mut();
        loop {
            if let Err(e) = std::task::ready!(this.inner.poll_read_ready(cx)) {
                return Poll::Ready(Err(e));
            }
            let fd = this.inner.as_raw_fd();
            let unfilled = buf.initialize_unfilled();
            match this
                .inner
                .try_io(tokio::io::Interest::READABLE, || recv_stamped(fd, unfilled))
            {
                Ok((n, kernel)) => {
                    buf.advance(n);
                    if n > 0 {
                        this.stamp.note(kernel);
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.stamp.note(None);
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
        s.note(None);
        let first = s.claim(now);
        assert!(first > Duration::from_millis(999) && first < now);
        std::thread::sleep(Duration::from_millis(2));
        s.note(None);
        std::thread::sleep(Duration::from_millis(2));
        s.note(None);
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

    /// Bytes that waited in the socket are stamped when the kernel received them (Linux),
    /// not when the client got round to reading them.
    #[test]
    fn a_late_read_is_stamped_at_the_bytes_arrival() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let origin = Instant::now();
            let stamp = Arc::new(ReadStamp::new(origin));
            let client = TcpStream::connect(addr).await.unwrap();
            let mut client = StampedTcp::new(client, Arc::clone(&stamp));
            let (mut server, _) = listener.accept().await.unwrap();
            // The kernel turns its receive stamps on a moment after the first socket asks
            // (deferred work): one exchange and a pause first.
            let mut buf = [0u8; 64];
            server.write_all(b": hello\n\n").await.unwrap();
            let n = client.read(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b": hello\n\n");
            tokio::time::sleep(Duration::from_millis(20)).await;
            stamp.reset();
            server.write_all(b"data: x\n\n").await.unwrap();
            let written = origin.elapsed();
            tokio::time::sleep(Duration::from_millis(40)).await;
            let n = client.read(&mut buf).await.unwrap();
            let read = origin.elapsed();
            assert_eq!(&buf[..n], b"data: x\n\n");
            let at = stamp.claim(read);
            assert!(at <= read);
            // Where the kernel stamps (Linux, unless a sandbox refuses the option), the
            // stamp is the bytes' arrival; elsewhere the read's time, checked above.
            if kernel_stamps(client.inner_ref()) {
                assert!(
                    at < written + Duration::from_millis(20),
                    "stamped {at:?}: written {written:?}, read {read:?}"
                );
            }
        });
    }
}
