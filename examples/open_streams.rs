//! Load check (not a timed test): thousands of open SSE streams against the `h200_server`
//! example served in its own process, reporting the server's resident memory before, during
//! and after, and that client disconnects free the connection slots and the engine's
//! requests (the server's `GET /metrics` counters).
//!
//! ```text
//! cargo build --release --example h200_server --example open_streams
//! target/release/examples/open_streams [--streams 4000] [--rounds 3] [--hold-secs 3] \
//!     [--speed 1] [--server target/release/examples/h200_server]
//! ```
//!
//! Each round opens `--streams` connections one after the other, each sending one streaming
//! chat request (`max_tokens` 4000, `ignore_eos`) and reading its `200` head, keeps them all
//! open for `--hold-secs` while draining what arrives, then closes them all and waits until
//! the server reports no open stream. `--rounds` × `--streams` above the server's
//! `--max-connections` (8192 by default) shows the slots come back: a leaked slot would leave
//! the last round's connections waiting in the listen backlog. Linux only (`/proc`).

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `VmRSS` and `VmHWM` (peak) of `pid`, KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Raise this process's soft open-file limit to its hard limit.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // `rlim_t` is `u64` on Linux, not everywhere
fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read or write only the struct on this stack frame.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            return lim.rlim_max as u64;
        }
    }
    lim.rlim_cur as u64
}

#[cfg(not(unix))]
fn raise_fd_limit() -> u64 {
    0
}

/// One `GET` with `Connection: close`; the body.
fn get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default())
}

/// A counter of the server's `/metrics`.
fn metric(addr: SocketAddr, name: &str) -> Option<u64> {
    let body = get(addr, "/metrics").ok()?;
    body.lines()
        .find_map(|l| l.strip_prefix(&format!("servebench_{name} ")))
        .and_then(|v| v.trim().parse().ok())
}

/// Open one streaming request and read its response head; the stream stays open.
fn open_stream(addr: SocketAddr, model: &str) -> Result<TcpStream, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let body = format!(
        r#"{{"model":"{model}","messages":[{{"role":"user","content":"hello there, how are you"}}],"max_tokens":4000,"ignore_eos":true,"stream":true}}"#
    );
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| format!("send: {e}"))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s
            .read(&mut buf)
            .map_err(|e| format!("no response head: {e}"))?;
        if n == 0 {
            return Err("closed before the response head".into());
        }
        head.extend_from_slice(&buf[..n]);
    }
    if !head.starts_with(b"HTTP/1.1 200") {
        return Err(format!(
            "unexpected answer: {}",
            String::from_utf8_lossy(&head[..head.len().min(200)])
        ));
    }
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok(s)
}

/// Read whatever is waiting on every stream; bytes read.
fn drain(streams: &mut [TcpStream]) -> u64 {
    let mut buf = [0u8; 16 << 10];
    let mut total = 0;
    for s in streams {
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => total += n as u64,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => break,
            }
        }
    }
    total
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let streams: usize = arg(&args, "--streams", 4000);
    let rounds: usize = arg(&args, "--rounds", 3);
    let hold = Duration::from_secs_f64(arg(&args, "--hold-secs", 3.0));
    let speed: f64 = arg(&args, "--speed", 1.0);
    let default_server = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("h200_server")))
        .unwrap_or_default();
    let server_path = args
        .iter()
        .position(|a| a == "--server")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from)
        .unwrap_or(default_server);
    let fd_limit = raise_fd_limit();
    if fd_limit > 0 && (fd_limit as usize) < streams + 64 {
        return Err(format!(
            "the open-file limit is {fd_limit}: too low for {streams} streams (ulimit -n)"
        ));
    }

    let mut child = Command::new(&server_path)
        .args(["--serve", "127.0.0.1:0", "--speed", &speed.to_string()])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server_path.display()))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let server = Server(child);
    let pid = server.0.id();
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let addr: SocketAddr = line
        .split("on http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("cannot read the server's address from: {line}"))?;
    let model = get(addr, "/v1/models")
        .ok()
        .and_then(|b| serde_json::from_str::<serde_json::Value>(&b).ok())
        .and_then(|v| v["data"][0]["id"].as_str().map(str::to_string))
        .ok_or("no model from /v1/models")?;
    let cap = line
        .split("at most ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("?")
        .to_string();
    println!(
        "open_streams: {streams} streams x {rounds} rounds against {} (pid {pid}, {model}, speed {speed}, max connections {cap}); client fd limit {fd_limit}",
        server_path.display()
    );
    let (idle, _) = rss_kib(pid);
    println!("  server RSS idle: {:.1} MiB", idle as f64 / 1024.0);
    for round in 1..=rounds {
        let t0 = Instant::now();
        let mut open = Vec::with_capacity(streams);
        for i in 0..streams {
            match open_stream(addr, &model) {
                Ok(s) => open.push(s),
                Err(e) => {
                    return Err(format!(
                        "round {round}: stream {i} failed after {} open: {e}",
                        open.len()
                    ))
                }
            }
        }
        let opened = t0.elapsed();
        let (rss_open, _) = rss_kib(pid);
        let open_now = metric(addr, "open_streams").unwrap_or(0);
        let t1 = Instant::now();
        let mut bytes = 0;
        while t1.elapsed() < hold {
            bytes += drain(&mut open);
            std::thread::sleep(Duration::from_millis(50));
        }
        let (rss_held, peak) = rss_kib(pid);
        let tokens_before = metric(addr, "tokens_sent").unwrap_or(0);
        drop(open);
        let t2 = Instant::now();
        let mut left = u64::MAX;
        while t2.elapsed() < Duration::from_secs(60) {
            left = metric(addr, "open_streams").unwrap_or(u64::MAX);
            if left == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let freed = t2.elapsed();
        std::thread::sleep(Duration::from_millis(500));
        let (rss_after, _) = rss_kib(pid);
        let cancelled = metric(addr, "cancelled").unwrap_or(0);
        println!(
            "  round {round}: {streams} opened in {:.2} s, server reports {open_now} open; RSS {:.1} MiB after opening, {:.1} MiB after {:.1} s of streaming ({} KiB of SSE read, {tokens_before} tokens sent so far; peak {:.1} MiB); all closed -> {left} open after {:.0} ms, {cancelled} cancelled in total, RSS {:.1} MiB",
            opened.as_secs_f64(),
            rss_open as f64 / 1024.0,
            rss_held as f64 / 1024.0,
            hold.as_secs_f64(),
            bytes / 1024,
            peak as f64 / 1024.0,
            freed.as_secs_f64() * 1e3,
            rss_after as f64 / 1024.0
        );
        if left != 0 {
            return Err(format!(
                "round {round}: {left} streams still open a minute after the clients left"
            ));
        }
        if open_now != streams as u64 {
            return Err(format!(
                "round {round}: the server reported {open_now} open streams, not {streams}"
            ));
        }
    }
    let per_stream = |rss: u64| (rss.saturating_sub(idle)) as f64 / streams as f64;
    let (now, peak) = rss_kib(pid);
    println!(
        "  server RSS idle {:.1} MiB, peak {:.1} MiB ({:.1} KiB per open stream), after the last round {:.1} MiB",
        idle as f64 / 1024.0,
        peak as f64 / 1024.0,
        per_stream(peak),
        now as f64 / 1024.0
    );
    Ok(())
}
