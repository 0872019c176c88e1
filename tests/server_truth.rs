//! The example server as ground truth: its per-request timeline (`GET /timeline`, and
//! `h200_server --serve … --timeline FILE` written on SIGTERM), and a listen backlog that lets
//! a burst of 1000 connections in without any of them waiting for a SYN retransmit.
#![cfg(all(feature = "http", feature = "sim"))]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use servebench::http::server::{self, ServeOptions, ServerHandle};
use servebench::http::timeline::{self, TimelineEntry};
use servebench::record::Outcome;
use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::{Config, H200Sim};

const MODEL: &str = "Qwen/Qwen3.5-35B-A3B";

fn args(max_connections: usize) -> ServeArgs {
    ServeArgs {
        speed: 50.0,
        max_connections,
        ..ServeArgs::default()
    }
}

fn serve_sim(a: &ServeArgs, record_timeline: bool) -> ServerHandle {
    let config = Config::named("baseline").unwrap();
    let opts = ServeOptions {
        record_timeline,
        ..serve::options(&config, a)
    };
    server::spawn(H200Sim::new(config).warmed_up(), a.addr, a.speed, opts).unwrap()
}

/// One HTTP/1.1 request (`Connection: close`); returns status and body.
fn http(addr: SocketAddr, method: &str, path: &str, headers: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         {headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (
        head.split(' ').nth(1).unwrap().parse().unwrap(),
        body.into(),
    )
}

/// Two completions (one tagged with `x-request-id`, one not), then the served timeline.
fn two_requests_then_timeline(addr: SocketAddr) -> Vec<TimelineEntry> {
    let body =
        format!(r#"{{"model":"{MODEL}","prompt":"hello there","max_tokens":5,"ignore_eos":true}}"#);
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert_eq!(
        http(
            addr,
            "POST",
            "/v1/completions",
            "x-request-id: tagged-1\r\n",
            &body
        )
        .0,
        200
    );
    assert_eq!(http(addr, "POST", "/v1/completions", "", &body).0, 200);
    // The engine files an entry just after handing over the last chunk: poll briefly.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, text) = http(addr, "GET", "/timeline", "", "");
        assert_eq!(status, 200, "{text}");
        let e = timeline::read_jsonl(text.as_bytes(), "GET /timeline").unwrap();
        if e.len() == 2 || Instant::now() > deadline {
            for x in &e {
                assert!(x.arrival_unix_s >= t0 - 1.0, "{x:?}");
            }
            return e;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn check_entries(e: &[TimelineEntry]) {
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!(e[0].request_id, "tagged-1");
    assert!(e[1].request_id.starts_with("cmpl-"), "{:?}", e[1]);
    assert_eq!(e[1].request_id, e[1].response_id);
    for x in e {
        assert_eq!(x.outcome, Outcome::Success);
        assert_eq!(x.output_tokens, 5, "{x:?}");
        assert_eq!(x.chunk_tokens.iter().map(|&t| u64::from(t)).sum::<u64>(), 5);
        assert_eq!(x.chunk_s.len(), x.chunk_unix_s.len());
        // Arrival ≤ admission ≤ first token ≤ every later chunk ≤ end, in both clocks.
        assert!(x.arrival_s <= x.admitted_s + 1e-9, "{x:?}");
        assert_eq!(x.first_token_s, x.chunk_s.first().copied());
        assert!(x.admitted_s <= x.chunk_s[0]);
        assert!(x.chunk_s.windows(2).all(|w| w[0] <= w[1]), "{x:?}");
        assert!(x.end_s.unwrap() >= *x.chunk_s.last().unwrap());
        assert!(x.arrival_unix_s <= x.admitted_unix_s + 1e-6, "{x:?}");
        // The speed (50) relates the two clocks: virtual gaps are 50× the wall gaps.
        let v = x.end_s.unwrap() - x.admitted_s;
        let w = x.end_unix_s.unwrap() - x.admitted_unix_s;
        // (Unix seconds in f64 resolve ~0.24 µs, so the wall gap is exact to ~1 µs.)
        assert!((v - 50.0 * w).abs() < 1e-4, "{v} {w}");
    }
}

#[test]
fn get_timeline_serves_each_request_with_its_id_and_both_clocks() {
    let a = args(64);
    let s = serve_sim(&a, true);
    check_entries(&two_requests_then_timeline(s.local_addr()));
    // Without recording there is no such route.
    let off = serve_sim(&a, false);
    assert_eq!(http(off.local_addr(), "GET", "/timeline", "", "").0, 404);
}

/// `h200_server --serve … --timeline FILE` writes the timeline on SIGTERM. The example binary
/// exists when `cargo test` builds the examples (the default); run alone
/// (`cargo test --test server_truth`) it may not, and the test says so.
#[cfg(unix)]
#[test]
fn the_example_server_writes_its_timeline_on_sigterm() {
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .and_then(|d| d.parent())
        .map(|d| d.join("examples").join("h200_server"))
        .filter(|p| p.exists());
    let Some(bin) = bin else {
        eprintln!("skipped: no examples/h200_server next to this test (run `cargo test`)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("truth.jsonl");
    // A free port: bind, read it, release it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let child = std::process::Command::new(bin)
        .args(["--serve", &addr.to_string(), "--speed", "50", "--timeline"])
        .arg(&file)
        .args(["--max-connections", "64"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let pid = child.id() as libc::pid_t;
    let mut child = Kill(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        assert!(
            Instant::now() < deadline,
            "the example server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let served = two_requests_then_timeline(addr);
    check_entries(&served);
    // SAFETY: kill only sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = child.0.stderr.take() {
        e.read_to_string(&mut err).unwrap();
    }
    assert!(status.success(), "{status}: {err}");
    assert!(err.contains("wrote 2 requests"), "{err}");
    let written = timeline::read_file(&file).unwrap();
    // The same entries; the wall clock at the server's start is re-estimated on each call
    // (now − elapsed), so Unix times may differ by a few µs between the two reads.
    assert_eq!(written.len(), served.len());
    for (w, s) in written.iter().zip(&served) {
        assert_eq!(
            (&w.request_id, &w.chunk_s, w.end_s),
            (&s.request_id, &s.chunk_s, s.end_s)
        );
        assert!(
            (w.arrival_unix_s - s.arrival_unix_s).abs() < 1e-3,
            "{w:?} {s:?}"
        );
    }
}

/// Raise the soft open-file limit to `want` if the hard limit allows; the limit afterwards.
#[cfg(unix)]
fn raise_fd_limit(want: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read or write only the struct on this stack frame.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        if lim.rlim_cur < want && lim.rlim_max >= want {
            let raised = libc::rlimit {
                rlim_cur: want,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return want;
            }
        }
    }
    lim.rlim_cur
}

/// 1000 connections opened at once (non-blocking connects, all SYNs in flight together) are
/// all established within 200 ms. With the usual listen backlog of 128, the accept queue
/// overflows in such a burst and Linux drops the surplus SYNs; those clients retransmit after
/// the initial RTO of 1 s, so a too-small backlog shows as connects of ≥ 1000 ms — five
/// times this bound, which leaves ample margin for a loaded 2-core machine.
#[cfg(unix)]
#[test]
fn a_burst_of_1000_connections_waits_for_no_syn_retransmit() {
    const N: usize = 1000;
    // Client and server ends both live in this process.
    let need = 2 * N as u64 + 128;
    let limit = raise_fd_limit(need);
    if limit < need {
        eprintln!("skipped: the open-file limit is {limit}, the test needs {need}");
        return;
    }
    let s = serve_sim(&args(1024), false);
    let addr = s.local_addr();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (times, streams) = rt.block_on(async move {
        let tasks: Vec<_> = (0..N)
            .map(|_| {
                tokio::spawn(async move {
                    let t = Instant::now();
                    let c = tokio::net::TcpStream::connect(addr).await;
                    (t.elapsed(), c)
                })
            })
            .collect();
        let mut times = Vec::new();
        let mut streams = Vec::new();
        for t in tasks {
            let (d, c) = t.await.unwrap();
            times.push(d);
            streams.push(c.unwrap());
        }
        (times, streams)
    });
    assert_eq!(streams.len(), N);
    let max = times.iter().max().unwrap();
    let slow = times
        .iter()
        .filter(|d| **d >= Duration::from_millis(200))
        .count();
    assert!(
        *max < Duration::from_millis(200),
        "{slow} of {N} connects took ≥ 200 ms (max {max:?}): SYNs dropped by a full backlog"
    );
    // The server accepted them all (its open-connection count is not exported; a request on
    // the last connection proves the accept loop is past the burst).
    drop(streams);
    assert_eq!(http(addr, "GET", "/health", "", "").0, 200);
}

/// Streams `n` completions of `tokens` tokens at once; returns each one's generated words.
fn concurrent_streams(addr: SocketAddr, n: usize, tokens: u64) -> Vec<u64> {
    let body = format!(
        r#"{{"model":"{MODEL}","prompt":"one two three","max_tokens":{tokens},"ignore_eos":true,"stream":true}}"#
    );
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let body = body.clone();
            std::thread::spawn(move || {
                let (status, text) = http(addr, "POST", "/v1/completions", "", &body);
                assert_eq!(status, 200, "{text}");
                assert!(text.contains("data: [DONE]"), "{text}");
                text.lines()
                    .filter_map(|l| l.strip_prefix("data: {"))
                    .map(|l| {
                        let v: serde_json::Value = serde_json::from_str(&format!("{{{l}")).unwrap();
                        let words = v["choices"][0]["text"].as_str().unwrap_or("");
                        words.split_whitespace().count() as u64
                    })
                    .sum::<u64>()
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// With a hand-off window of one stream (every decode step's chunks wait in line, each
/// task waking the next) and with none, every one of 48 concurrent streams gets all its
/// tokens and its end, and the timeline shows each first token written after its release.
#[test]
fn every_stream_completes_through_a_window_of_one_and_of_none() {
    for window in [1, 0] {
        let a = ServeArgs {
            handoff_window: window,
            worker_threads: servebench::http::server::default_worker_threads(),
            startup_s: None,
            ..args(256)
        };
        let server = serve_sim(&a, true);
        let got = concurrent_streams(server.local_addr(), 48, 40);
        assert_eq!(got, vec![40; 48], "window {window}");
        let deadline = Instant::now() + Duration::from_secs(10);
        let entries = loop {
            let (_, text) = http(server.local_addr(), "GET", "/timeline", "", "");
            let e = timeline::read_jsonl(text.as_bytes(), "GET /timeline").unwrap();
            if e.len() == 48 || Instant::now() > deadline {
                break e;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(entries.len(), 48, "window {window}");
        for e in &entries {
            assert_eq!(e.output_tokens, 40, "{e:?}");
            let (Some(release), Some(write)) = (e.first_release_unix_s, e.first_write_unix_s)
            else {
                panic!("window {window}: no release/write times: {e:?}");
            };
            // The engine thread stamps the release just after handing the chunk over, so
            // the HTTP task may write a hair before it.
            assert!(write >= release - 0.01, "window {window}: {e:?}");
        }
    }
}
