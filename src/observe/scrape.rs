//! Scraping a server's `GET /metrics` during a run: [`scrape_once`] fetches and parses one
//! scrape; [`Scraper`] does it every interval on its own thread and hands back the
//! [`ServerSeries`] when stopped. A server without `/metrics` (404), one that cannot be
//! reached, or a malformed scrape is *noted* in the series, never an error of the run.
//!
//! Plain HTTP/1.1 over a blocking socket, one connection per scrape (`Connection: close`),
//! `Content-Length` or chunked bodies, at most [`MAX_BODY_BYTES`].

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::prom::{self, PromError, Sample};
use super::series::ServerSeries;
use crate::http::Target;

/// The largest `/metrics` body read (vLLM's is tens of kilobytes).
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// Notes kept per series; later problems are counted in the last note.
const MAX_NOTES: usize = 20;

/// Why one scrape failed.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    /// The target is not `http://host[:port]`.
    #[error("{0}")]
    Target(String),
    /// Connecting, sending or reading failed.
    #[error("{url}: {source}")]
    Io {
        /// The `/metrics` URL.
        url: String,
        /// The error.
        source: std::io::Error,
    },
    /// The server answered with another status than 200.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The `/metrics` URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The answer is not HTTP/1.x as expected.
    #[error("{url}: bad response: {reason}")]
    Response {
        /// The `/metrics` URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// A local sampler (`nvidia-smi`) failed or printed something unexpected.
    #[error("{0}")]
    Sampler(String),
    /// The body is not Prometheus' text format.
    #[error("{url}: {source}")]
    Parse {
        /// The `/metrics` URL.
        url: String,
        /// The parse error (with its line).
        source: PromError,
    },
}

/// The `/metrics` URL of a server's base URL (`http://host:port`, a trailing `/v1` ignored).
pub fn metrics_url(base: &str) -> Result<String, ScrapeError> {
    let t = Target::parse(base).map_err(|e| ScrapeError::Target(e.to_string()))?;
    Ok(format!("http://{}{}/metrics", t.authority, t.base_path))
}

/// Fetches and parses `base`'s `/metrics` once, waiting at most `timeout`.
pub fn scrape_once(base: &str, timeout: Duration) -> Result<Vec<Sample>, ScrapeError> {
    let t = Target::parse(base).map_err(|e| ScrapeError::Target(e.to_string()))?;
    let url = format!("http://{}{}/metrics", t.authority, t.base_path);
    let io = |source: std::io::Error| ScrapeError::Io {
        url: url.clone(),
        source,
    };
    let addr = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(io)?
        .next()
        .ok_or_else(|| io(std::io::Error::other("no address")))?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(io)?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    write!(
        s,
        "GET {}/metrics HTTP/1.1\r\nHost: {}\r\nAccept: text/plain\r\nConnection: close\r\n\r\n",
        t.base_path, t.authority
    )
    .map_err(io)?;
    let mut raw = Vec::new();
    s.take(MAX_BODY_BYTES as u64 + 65_536)
        .read_to_end(&mut raw)
        .map_err(io)?;
    let body = http_body(&raw).map_err(|reason| match reason {
        Err(status) => ScrapeError::Status {
            url: url.clone(),
            status,
        },
        Ok(reason) => ScrapeError::Response {
            url: url.clone(),
            reason,
        },
    })?;
    let text = String::from_utf8_lossy(&body);
    prom::parse(&text).map_err(|source| ScrapeError::Parse { url, source })
}

/// The body of a 200 response; `Err(Err(status))` for another status, `Err(Ok(reason))`
/// for a malformed response.
fn http_body(raw: &[u8]) -> Result<Vec<u8>, Result<String, u16>> {
    let bad = |r: &str| Err(Ok(r.to_string()));
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return bad("no end of headers");
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split(' ');
    if !parts.next().is_some_and(|v| v.starts_with("HTTP/1.")) {
        return bad("not an HTTP/1.x status line");
    }
    let Some(status) = parts.next().and_then(|s| s.parse::<u16>().ok()) else {
        return bad("no status code");
    };
    if status != 200 {
        return Err(Err(status));
    }
    let chunked = lines.any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("transfer-encoding")
                && v.trim().eq_ignore_ascii_case("chunked")
        })
    });
    let body = &raw[end + 4..];
    if body.len() > MAX_BODY_BYTES {
        return bad("body larger than 64 MiB");
    }
    if !chunked {
        return Ok(body.to_vec());
    }
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return bad("truncated chunked body");
        };
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            return bad("bad chunk size");
        };
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size + 2 {
            return bad("truncated chunk");
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// A background scraper; see the module docs.
#[derive(Debug)]
pub struct Scraper {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<ServerSeries>,
}

impl Scraper {
    /// Starts scraping `base`'s `/metrics` now and every `interval`; scrape times are
    /// seconds since `origin` (the run's clock). Returns once the first scrape has been
    /// answered (or failed), so that the series starts before the run's first request and
    /// its counters' increases cover the whole run.
    pub fn start(base: &str, interval: Duration, origin: Instant) -> Scraper {
        let base = base.to_string();
        let url = metrics_url(&base).unwrap_or_else(|_| base.clone());
        // A loaded server may answer slowly: wait at least 2 s, at most 10 s.
        let timeout = interval.clamp(Duration::from_secs(2), Duration::from_secs(10));
        Scraper::start_source(url, interval, origin, move || scrape_once(&base, timeout))
    }

    /// Like [`Scraper::start`], with the samples taken by `sample` (a local sampler such as
    /// [`super::gpu::nvidia_smi_samples`]); the series is named `name`.
    pub fn start_source(
        name: String,
        interval: Duration,
        origin: Instant,
        mut sample: impl FnMut() -> Result<Vec<Sample>, ScrapeError> + Send + 'static,
    ) -> Scraper {
        let (stop, stopped) = mpsc::channel::<()>();
        let (ready, first_done) = mpsc::channel::<()>();
        let url = name;
        let thread = std::thread::spawn(move || {
            let mut series = ServerSeries::new(url, interval.as_secs_f64());
            let mut failures = 0usize;
            loop {
                let at = origin.elapsed().as_secs_f64();
                match sample() {
                    Ok(samples) => series.push(at, samples),
                    Err(e) => {
                        failures += 1;
                        let first = series.is_empty() && failures == 1;
                        let _ = ready.send(());
                        if series.notes.len() < MAX_NOTES {
                            series.notes.push(format!("{at:.1} s: {e}"));
                        }
                        // No /metrics at all: stop asking.
                        if first && matches!(e, ScrapeError::Status { status: 404, .. }) {
                            series
                                .notes
                                .push("the server has no /metrics: not scraped".into());
                            let _ = stopped.recv();
                            return series;
                        }
                    }
                }
                let _ = ready.send(());
                match stopped.recv_timeout(interval) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    // Stopped (or the handle dropped): one last scrape closes the span.
                    _ => {
                        let at = origin.elapsed().as_secs_f64();
                        match sample() {
                            Ok(samples) => series.push(at, samples),
                            Err(e) => {
                                failures += 1;
                                if series.notes.len() < MAX_NOTES {
                                    series.notes.push(format!("{at:.1} s: {e}"));
                                }
                            }
                        }
                        if failures > MAX_NOTES {
                            series
                                .notes
                                .push(format!("{failures} scrapes failed in all"));
                        }
                        return series;
                    }
                }
            }
        });
        // The first scrape is bounded by `timeout`; a panicked thread drops `ready`.
        let _ = first_done.recv();
        Scraper { stop, thread }
    }

    /// Stops scraping (after one last scrape) and returns the series.
    pub fn stop(self) -> ServerSeries {
        let _ = self.stop.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| ServerSeries::new("?", 0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_plain_chunked_and_errors() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\na 1\n";
        assert_eq!(http_body(ok).unwrap(), b"a 1\n");
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\na \r\n2;x=y\r\n1\n\r\n0\r\n\r\n";
        assert_eq!(http_body(chunked).unwrap(), b"a 1\n");
        assert_eq!(http_body(b"HTTP/1.1 404 Not Found\r\n\r\n"), Err(Err(404)));
        assert!(matches!(http_body(b"SSH-2.0\r\n\r\n"), Err(Ok(_))));
        assert!(matches!(
            http_body(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            Err(Ok(r)) if r.contains("chunk size")
        ));
    }

    #[test]
    fn urls() {
        assert_eq!(
            metrics_url("http://127.0.0.1:8000/v1").unwrap(),
            "http://127.0.0.1:8000/metrics"
        );
        assert!(metrics_url("https://x").is_err());
    }
}
