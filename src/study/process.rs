//! Launching and stopping a server process: the launch command's placeholders filled per
//! argument (never a shell), the server in its own process group with its output in a log
//! file, health and `/v1/models` polling, and a stop that signals the whole group, then
//! kills it after a timeout. [`Server`] stops its group when dropped, so an error or a panic
//! in the runner cannot leave a server behind; a watchdog process kills the group when the
//! runner itself dies (SIGKILL included). The server's output reaches its log through
//! [`RedactingCopy`], so a key the server prints (its own command line, say) never reaches
//! the file, even for a runner that is killed before it could clean up.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The placeholders a launch command may use.
pub const PLACEHOLDERS: [&str; 5] = ["{model}", "{port}", "{host}", "{api_key}", "{flags}"];

/// Checks that `arg` uses only known placeholders, and `{flags}` only as a whole argument.
///
/// ```
/// use servebench::study::check_placeholders;
/// assert!(check_placeholders("--port={port}").is_ok());
/// assert!(check_placeholders("{flags}").is_ok());
/// assert!(check_placeholders("x{flags}").is_err());
/// assert!(check_placeholders("{modle}").unwrap_err().contains("{modle}"));
/// ```
pub fn check_placeholders(arg: &str) -> Result<(), String> {
    let mut rest = arg;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            return Ok(());
        };
        let name = &rest[start..start + len + 1];
        if !PLACEHOLDERS.contains(&name)
            && name.len() > 2
            && name[1..name.len() - 1]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!(
                "unknown placeholder `{name}` (known: {})",
                PLACEHOLDERS.join(", ")
            ));
        }
        if name == "{flags}" && arg != "{flags}" {
            return Err("`{flags}` must be a whole argument".into());
        }
        rest = &rest[start + len + 1..];
    }
    Ok(())
}

/// What fills a launch command's placeholders.
#[derive(Debug, Clone, Copy)]
pub struct Fill<'a> {
    /// `{model}`.
    pub model: &'a str,
    /// `{host}`.
    pub host: &'a str,
    /// `{port}`.
    pub port: u16,
    /// `{api_key}` (empty when none).
    pub api_key: &'a str,
    /// `{flags}`: one argument each.
    pub flags: &'a [String],
}

/// The argument vector of `template` filled with `fill`; with `redact`, `{api_key}` stays
/// unfilled (for the journal and the document).
///
/// ```
/// use servebench::study::{fill_command, Fill};
/// let t: Vec<String> = ["vllm", "serve", "{model}", "--port", "{port}", "{flags}"].map(String::from).into();
/// let flags = vec!["--enable-prefix-caching".to_string(), "--max-model-len=32768".into()];
/// let fill = Fill { model: "a; rm -rf /", host: "127.0.0.1", port: 8000, api_key: "", flags: &flags };
/// assert_eq!(fill_command(&t, &fill, false), ["vllm", "serve", "a; rm -rf /", "--port", "8000",
///     "--enable-prefix-caching", "--max-model-len=32768"]);
/// ```
pub fn fill_command(template: &[String], fill: &Fill<'_>, redact: bool) -> Vec<String> {
    let mut argv = Vec::with_capacity(template.len() + fill.flags.len());
    for arg in template {
        if arg == "{flags}" {
            argv.extend(fill.flags.iter().cloned());
            continue;
        }
        let mut a = arg
            .replace("{model}", fill.model)
            .replace("{host}", fill.host)
            .replace("{port}", &fill.port.to_string());
        if !redact {
            a = a.replace("{api_key}", fill.api_key);
        }
        argv.push(a);
    }
    argv
}

pub use nix::sys::signal::Signal;

/// A stop signal by name (`SIGTERM`, `TERM`, …).
///
/// ```
/// use servebench::study::{signal_number, Signal};
/// assert_eq!(signal_number("SIGINT"), Some(Signal::SIGINT));
/// assert_eq!(signal_number("term"), Some(Signal::SIGTERM));
/// assert_eq!(signal_number("SIGUSR9"), None);
/// ```
pub fn signal_number(name: &str) -> Option<Signal> {
    let n = name.trim().to_ascii_uppercase();
    let n = n.strip_prefix("SIG").unwrap_or(&n);
    Some(match n {
        "TERM" => Signal::SIGTERM,
        "INT" => Signal::SIGINT,
        "QUIT" => Signal::SIGQUIT,
        "HUP" => Signal::SIGHUP,
        "KILL" => Signal::SIGKILL,
        _ => return None,
    })
}

/// A free TCP port on `host` (bound and released; the server binds it right after).
pub fn free_port(host: &str) -> std::io::Result<u16> {
    Ok(TcpListener::bind((host, 0))?.local_addr()?.port())
}

/// Signals process group `pgid` (errors such as "no such group" are ignored).
pub fn signal_group(pgid: i32, signal: Signal) {
    if pgid > 1 {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
    }
}

/// Whether any process of group `pgid` is still alive. A zombie (exited, not yet reaped by
/// its parent — an orphan's parent may be an init that never reaps) does not count: on
/// Linux the group's members are read from `/proc`.
pub fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 || nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_err() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|e| {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            return false;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().unwrap_or("Z");
        let group = f.nth(1).and_then(|g| g.parse::<i32>().ok());
        group == Some(pgid) && state != "Z" && state != "X"
    })
}

/// The watchdog's script: wait until the runner's end of the pipe closes (the runner
/// stopped the watchdog, exited, or died — SIGKILL included), then kill the server's group.
const WATCHDOG: &str = "while read -r _; do :; done; kill -9 -\"$1\" 2>/dev/null";

/// Starts the watchdog of process group `pgid`: a `/bin/sh` in its own process group (a
/// Ctrl-C on the terminal does not reach it), reading a pipe only the runner holds. When
/// the runner dies however it dies, the kernel closes the pipe and the watchdog kills the
/// server's group, so that no server outlives its runner.
fn watchdog(pgid: i32) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    Command::new("/bin/sh")
        .args(["-c", WATCHDOG, "servebench-watchdog", &pgid.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
}

/// Copies a stream to a writer with every occurrence of a secret replaced by `***` on the
/// way: bytes are written as soon as they cannot be the start of a secret, so the copy
/// keeps up with the stream and never holds more than the secret's length back.
///
/// ```
/// use servebench::study::RedactingCopy;
/// let mut out = Vec::new();
/// let mut copy = RedactingCopy::new(b"sk-123".to_vec());
/// // The secret split across two reads is still caught.
/// copy.push(b"args: --api-key sk-1", &mut out).unwrap();
/// copy.push(b"23 --port 8000\n", &mut out).unwrap();
/// copy.finish(&mut out).unwrap();
/// assert_eq!(out, b"args: --api-key *** --port 8000\n");
/// ```
#[derive(Debug)]
pub struct RedactingCopy {
    secret: Vec<u8>,
    pending: Vec<u8>,
}

impl RedactingCopy {
    /// A copy that hides `secret` (an empty secret hides nothing).
    pub fn new(secret: Vec<u8>) -> RedactingCopy {
        RedactingCopy {
            secret,
            pending: Vec::new(),
        }
    }

    /// Takes the next bytes of the stream and writes what is safe to write.
    pub fn push(&mut self, bytes: &[u8], out: &mut impl std::io::Write) -> std::io::Result<()> {
        self.pending.extend_from_slice(bytes);
        if self.secret.is_empty() {
            out.write_all(&self.pending)?;
            self.pending.clear();
            return Ok(());
        }
        let mut done = Vec::with_capacity(self.pending.len());
        let mut at = 0;
        while let Some(pos) = memchr::memmem::find(&self.pending[at..], &self.secret) {
            done.extend_from_slice(&self.pending[at..at + pos]);
            done.extend_from_slice(b"***");
            at += pos + self.secret.len();
        }
        // What is left holds no whole secret; its last `len - 1` bytes may begin one.
        let safe = at.max(self.pending.len().saturating_sub(self.secret.len() - 1));
        done.extend_from_slice(&self.pending[at..safe]);
        self.pending.drain(..safe);
        out.write_all(&done)?;
        out.flush()
    }

    /// The stream ended: writes the bytes held back (they hold no whole secret).
    pub fn finish(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.pending)?;
        self.pending.clear();
        out.flush()
    }
}

/// Copies `from` into `to` through a [`RedactingCopy`] until `from` ends.
fn copy_redacted(
    mut from: impl std::io::Read,
    mut to: File,
    secret: Vec<u8>,
) -> std::io::Result<()> {
    let mut copy = RedactingCopy::new(secret);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        copy.push(&buf[..n], &mut to)?;
    }
    copy.finish(&mut to)
}

/// A launched server: its own process group, output to a log file, and a watchdog that
/// kills the group if the runner dies without stopping it.
#[derive(Debug)]
pub struct Server {
    child: Child,
    watchdog: Option<Child>,
    /// The thread copying the server's output into the log (with a secret hidden).
    log_copy: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    /// The process id (and process-group id).
    pub pid: i32,
    /// When it was launched.
    pub launched_at: std::time::SystemTime,
    stop_signal: Signal,
    stop_timeout: Duration,
    stopped: bool,
}

/// How a server ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It had already exited on its own, with this description (`exit status 2`).
    Exited(String),
    /// It stopped on the stop signal.
    Stopped,
    /// It ignored the stop signal and was killed.
    Killed,
}

/// Describes an exit status: `exit status 2` or `signal 9`.
pub fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => status.to_string(),
    }
}

impl Server {
    /// Starts `argv` (program first) in its own process group with `env` added, stdout and
    /// stderr appended to `log` with every occurrence of `secret` (the API key the server
    /// was given; empty for none) replaced by `***` before it reaches the file.
    pub fn launch(
        argv: &[String],
        env: &BTreeMap<String, String>,
        log: &Path,
        secret: &str,
        stop_signal: Signal,
        stop_timeout: Duration,
    ) -> std::io::Result<Server> {
        use std::os::unix::process::CommandExt as _;
        let Some((program, args)) = argv.split_first() else {
            return Err(std::io::Error::other("empty launch command"));
        };
        let file = File::options().create(true).append(true).open(log)?;
        // The server writes into a pipe that a thread of this process copies into the log,
        // redacting as it goes: the file never holds the key, whenever the runner stops.
        let (reader, writer) = std::io::pipe()?;
        let err = writer.try_clone()?;
        let secret = secret.as_bytes().to_vec();
        let log_copy = std::thread::Builder::new()
            .name("server-log".into())
            .spawn(move || copy_redacted(reader, file, secret))?;
        let mut cmd = Command::new(program);
        let launched_at = std::time::SystemTime::now();
        cmd.args(args)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(err)
            .process_group(0);
        // `cmd` holds the pipe's write ends until it is dropped: the copy ends once the
        // server's group has closed them.
        let spawned = cmd.spawn();
        drop(cmd);
        let mut child = spawned?;
        let pid = match i32::try_from(child.id()) {
            Ok(p) => p,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::io::Error::other(e));
            }
        };
        let watchdog = match watchdog(pid) {
            Ok(w) => Some(w),
            Err(e) => {
                // A server nobody would stop if the runner died is not started.
                signal_group(pid, Signal::SIGKILL);
                let _ = child.wait();
                return Err(std::io::Error::other(format!(
                    "cannot start the watchdog (/bin/sh) that stops the server if servebench dies: {e}"
                )));
            }
        };
        Ok(Server {
            child,
            watchdog,
            log_copy: Some(log_copy),
            pid,
            launched_at,
            stop_signal,
            stop_timeout,
            stopped: false,
        })
    }

    /// `Some(description)` once the server process has exited.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(describe(status)),
            Ok(None) => None,
            Err(e) => Some(format!("cannot wait for it: {e}")),
        }
    }

    /// [`Server::exited`], waiting up to `grace` for the exit to show (a process killed by a
    /// signal closes its sockets before its parent can reap it).
    pub fn exited_within(&mut self, grace: std::time::Duration) -> Option<String> {
        let until = std::time::Instant::now() + grace;
        loop {
            if let Some(how) = self.exited() {
                return Some(how);
            }
            if std::time::Instant::now() >= until {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Stops the whole process group: the stop signal, then `SIGKILL` after the timeout.
    /// Leaves no process of the group behind; the watchdog is stopped last.
    pub fn stop(&mut self) -> Exit {
        if self.stopped {
            return Exit::Stopped;
        }
        self.stopped = true;
        let exit = self.stop_group();
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        // The group is gone, so the pipe's write ends are closed and the copy drains the
        // last output; a process that left the group could hold the pipe open, so the
        // copy is waited for only briefly, then left to finish on its own.
        if let Some(copy) = self.log_copy.take() {
            let until = Instant::now() + Duration::from_secs(2);
            while !copy.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if copy.is_finished() {
                let _ = copy.join();
            }
        }
        exit
    }

    fn stop_group(&mut self) -> Exit {
        if let Some(how) = self.exited() {
            // The leader is gone; its children may not be.
            signal_group(self.pid, Signal::SIGKILL);
            return Exit::Exited(how);
        }
        signal_group(self.pid, self.stop_signal);
        let deadline = Instant::now() + self.stop_timeout;
        let mut exit = Exit::Killed;
        while Instant::now() < deadline {
            if self.exited().is_some() {
                exit = Exit::Stopped;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        signal_group(self.pid, Signal::SIGKILL);
        let _ = self.child.wait();
        let until = Instant::now() + Duration::from_secs(5);
        while group_alive(self.pid) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        exit
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why a server did not become ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    /// The process exited first.
    Exited(String),
    /// It did not answer in time.
    Timeout,
    /// The runner was cancelled (Ctrl-C).
    Cancelled,
}

/// A minimal HTTP/1.1 GET on loopback: the status code and body, or `None` when nothing
/// answered.
pub fn http_get(host: &str, port: u16, path: &str, bearer: Option<&str>) -> Option<(u16, String)> {
    let addr = (host, port).to_socket_addrs().ok()?.next()?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let auth = bearer
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{auth}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Some((code, body))
}

/// Polls `health_path` until it answers 200 and `/v1/models` answers 200, the process
/// exits, `timeout` passes or `cancel` is set. Returns `/v1/models`' body.
pub fn wait_ready(
    server: &mut Server,
    host: &str,
    port: u16,
    health_path: &str,
    bearer: Option<&str>,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<String, NotReady> {
    let deadline = Instant::now() + timeout;
    loop {
        if cancel.load(Ordering::SeqCst) {
            return Err(NotReady::Cancelled);
        }
        if let Some(how) = server.exited() {
            return Err(NotReady::Exited(how));
        }
        if matches!(http_get(host, port, health_path, bearer), Some((200, _))) {
            if let Some((200, body)) = http_get(host, port, "/v1/models", bearer) {
                return Ok(body);
            }
        }
        if Instant::now() >= deadline {
            return Err(NotReady::Timeout);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::RedactingCopy;

    /// Whatever the reads' sizes, the copy is the whole text with every secret replaced.
    #[test]
    fn the_redacted_copy_is_the_same_for_every_split_of_the_stream() {
        let cases: [(&str, &str); 5] = [
            ("k3y", "k3y at the start, in k3y the middle and the end k3y"),
            ("k3y", "k3k3y overlapping starts kk3y k3"),
            ("aa", "aaaaa an odd run of the secret's own letters"),
            ("secret", "none here"),
            ("", "an empty secret hides nothing"),
        ];
        for (secret, text) in cases {
            let want = if secret.is_empty() {
                text.to_string()
            } else {
                text.replace(secret, "***")
            };
            for size in 1..=text.len() {
                let mut out = Vec::new();
                let mut copy = RedactingCopy::new(secret.as_bytes().to_vec());
                for chunk in text.as_bytes().chunks(size) {
                    copy.push(chunk, &mut out).unwrap();
                }
                copy.finish(&mut out).unwrap();
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    want,
                    "{secret:?} in reads of {size}"
                );
            }
        }
    }
}
