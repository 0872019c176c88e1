//! `servebench bench` end to end on loopback (127.0.0.1 only): the CLI against the
//! OpenAI-compatible server serving a deterministic engine in-process.
#![cfg(all(feature = "http", feature = "cli"))]

mod common;

use std::net::SocketAddr;
use std::process::Command;

use common::TestEngine;
use servebench::format::text::{self, Style};
use servebench::http::server::{Fault, ServeOptions};
use servebench::http::spawn;
use servebench::metrics::compute;
use servebench::record::{ErrorKind, Outcome};
use servebench::result::Convention;
use servebench::runfile::{RunFile, RunStatus};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn server(options: ServeOptions) -> servebench::http::ServerHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    spawn(TestEngine::new(40, 5, 1), addr, 10.0, options).unwrap()
}

fn bench(target: &str, extra: &[&str], out: &std::path::Path) -> (String, String) {
    let o = Command::new(BIN)
        .args(["bench", "--target", target, "--quiet", "--output"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "{stderr}");
    (stdout, stderr)
}

/// [`server`] with `options`: the handle (the server lives while it does) and its URL.
fn served(options: ServeOptions) -> (servebench::http::ServerHandle, String) {
    let h = server(options);
    let target = format!("http://{}", h.local_addr());
    (h, target)
}

/// The run file `bench --output` wrote.
fn read_run(path: &std::path::Path) -> RunFile {
    RunFile::read(path).unwrap()
}

#[test]
fn bench_reports_what_the_server_sent_and_saves_recomputable_records() {
    let srv = server(ServeOptions::default());
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.json");
    let (stdout, _) = bench(
        &target,
        &[
            "--input-tokens",
            "24",
            "--output-tokens",
            "12",
            "--max-requests",
            "20",
            "--rate",
            "200",
            "--max-concurrency",
            "5",
            "--style",
            "vllm",
            "--endpoint",
            "chat",
        ],
        &out,
    );
    let stats = srv.stats();
    let printed = text::parse_block(&stdout).unwrap().result;
    assert_eq!(printed.successful_requests, Some(20));
    assert_eq!(printed.failed_requests, Some(0));
    assert_eq!(printed.total_output_tokens, Some(stats.tokens_sent));
    assert_eq!(printed.total_input_tokens, Some(20 * 24));
    assert_eq!(stats.completed, 20);

    // The saved records recompute the printed block exactly.
    let saved = read_run(&out);
    assert_eq!(saved.status, RunStatus::Complete);
    assert_eq!(saved.records.len(), 20);
    let chunks: usize = saved.records.iter().map(|r| r.chunks.len()).sum();
    assert_eq!(chunks as u64, stats.token_chunks_sent);
    let mut again = compute(&saved.records, Convention::Vllm);
    // vLLM prints its client cap as "Maximum request concurrency".
    assert!(stdout.contains("\nMaximum request concurrency:             5         \n"));
    again.max_concurrency = Some(5);
    assert_eq!(text::render(&again, Style::Vllm) + "\n", stdout);
    assert_eq!(saved.result.successful_requests, Some(20));
    assert_eq!(saved.result.meta.model.as_deref(), Some("servebench-sim"));

    // JSON Lines output.
    let jl = dir.join("run.jsonl");
    bench(
        &target,
        &[
            "--input-tokens",
            "8",
            "--output-tokens",
            "4",
            "--max-requests",
            "6",
        ],
        &jl,
    );
    let recs = read_run(&jl).records;
    assert_eq!(recs.len(), 6);
    assert!(recs.iter().all(|r| r.output_tokens() == 4));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_records_injected_failures_with_their_reason() {
    let srv = server(ServeOptions {
        fault: Some("500:4".parse::<Fault>().unwrap()),
        ..ServeOptions::default()
    });
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.jsonl");
    let (stdout, _) = bench(
        &target,
        &[
            "--input-tokens",
            "8",
            "--output-tokens",
            "6",
            "--max-requests",
            "12",
            "--max-concurrency",
            "1",
            "--style",
            "vllm",
        ],
        &out,
    );
    let printed = text::parse_block(&stdout).unwrap().result;
    assert_eq!(printed.successful_requests, Some(9));
    assert_eq!(printed.failed_requests, Some(3));
    let recs = read_run(&out).records;
    let failed: Vec<u64> = recs
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Error { kind, message } => {
                assert_eq!(*kind, ErrorKind::HttpStatus);
                assert!(message.starts_with("HTTP 500"), "{message}");
                Some(r.id)
            }
            _ => None,
        })
        .collect();
    assert_eq!(failed, [3, 7, 11]);
    assert_eq!(srv.stats().injected_faults, 3);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A port on 127.0.0.1 that nothing listens on (just released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn bench_bad_input_exits_1_naming_the_target() {
    let port = closed_port();
    let closed = format!("http://127.0.0.1:{port}");
    let cases: [(Vec<&str>, &str); 5] = [
        // Unreachable, model discovery first.
        (vec!["--profile", "latency"], "Connection refused"),
        // Unreachable with --model: every request fails; that is an error too.
        (
            vec![
                "--profile",
                "latency",
                "--model",
                "m",
                "--max-requests",
                "2",
            ],
            "no request to",
        ),
        (
            vec!["--profile", "latency", "--rate", "1e-300", "--model", "m"],
            "past the clock's range",
        ),
        (
            vec![
                "--input-tokens",
                "1000000000000",
                "--output-tokens",
                "1",
                "--model",
                "m",
            ],
            "workload too large",
        ),
        (
            vec![
                "--profile",
                "latency",
                "--max-requests",
                "100000000000",
                "--model",
                "m",
            ],
            "workload too large",
        ),
    ];
    for (extra, needle) in cases {
        let o = Command::new(BIN)
            .args(["bench", "--quiet", "--target", &closed])
            .args(&extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        if needle == "no request to" || needle == "Connection refused" {
            assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
        }
    }
    // A port out of range is a bad target, not port 80.
    let o = Command::new(BIN)
        .args([
            "bench",
            "--quiet",
            "--profile",
            "latency",
            "--target",
            "http://127.0.0.1:99999",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad target URL `http://127.0.0.1:99999`"),
        "{stderr}"
    );
}

#[test]
fn bench_refuses_bad_arguments() {
    for args in [
        vec!["bench", "--target", "http://127.0.0.1:9"],
        vec![
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--profile",
            "latency",
            "--input-tokens",
            "3",
            "--output-tokens",
            "3",
        ],
        vec![
            "bench",
            "--target",
            "https://127.0.0.1:9",
            "--profile",
            "latency",
        ],
        vec![
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--profile",
            "latency",
            "--rate",
            "0",
        ],
    ] {
        let o = Command::new(BIN).args(&args).output().unwrap();
        // Usage errors (clap, and bad numbers) exit 2; a target servebench cannot use, 1.
        let want = if args.contains(&"https://127.0.0.1:9") {
            1
        } else {
            2
        };
        assert_eq!(o.status.code(), Some(want), "{args:?}");
        assert!(!o.stderr.is_empty());
    }
}

/// `bench` without `--quiet`, output to a pipe (as in CI): plain progress lines, the lints
/// section, and the default block (vLLM's style and definitions) on stdout.
#[test]
fn bench_without_quiet_prints_progress_lints_and_the_vllm_block() {
    let srv = server(ServeOptions::default());
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-loud-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.json");
    // Twelve requests at once against a cap of 2: the client, not the server, limits the
    // load (client-capped).
    let o = Command::new(BIN)
        .args(["bench", "--target", &target, "--output"])
        .arg(&out)
        .args([
            "--input-tokens",
            "8",
            "--output-tokens",
            "10",
            "--max-requests",
            "12",
            "--rate",
            "1000",
            "--max-concurrency",
            "2",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("servebench: progress ") && stderr.contains("/12, failed 0, in flight "),
        "{stderr}"
    );
    assert!(
        stderr.contains("servebench: finished: 12 requests sent, 12 succeeded, 0 failed"),
        "{stderr}"
    );
    assert!(stderr.contains("servebench: lints ("), "{stderr}");
    assert!(stderr.contains("warning[client-capped]"), "{stderr}");
    assert!(stderr.contains("12 request records saved to"), "{stderr}");
    // The default: vLLM's block with vLLM's definitions (what its labels say), recomputable.
    let saved = read_run(&out);
    assert_eq!(saved.result.meta.convention, Some(Convention::Vllm));
    let mut again = compute(&saved.records, Convention::Vllm);
    again.max_concurrency = Some(2);
    assert_eq!(text::render(&again, Style::Vllm) + "\n", stdout);
    assert!(!stdout.contains("Metric convention"), "{stdout}");
    let printed = text::parse_block(&stdout).unwrap().result;
    assert_eq!(printed.successful_requests, Some(12));
    assert_eq!(printed.total_output_tokens, Some(srv.stats().tokens_sent));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_max_seconds_stops_the_run() {
    // Speed 1: 10 tokens 50 ms apart (~0.5 s a request), 4 requests/s; 100 requests would
    // take 25 s, --max-seconds 1.5 stops sending after 1.5 s.
    let srv = spawn(
        TestEngine::new(40, 50, 1),
        "127.0.0.1:0".parse().unwrap(),
        1.0,
        ServeOptions::default(),
    )
    .unwrap();
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-secs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.jsonl");
    let t0 = std::time::Instant::now();
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &target, "--output"])
        .arg(&out)
        .args([
            "--input-tokens",
            "8",
            "--output-tokens",
            "10",
            "--max-requests",
            "100",
            "--rate",
            "4",
            "--max-seconds",
            "1.5",
            "--style",
            "vllm",
        ])
        .output()
        .unwrap();
    let wall = t0.elapsed();
    let stdout = String::from_utf8(o.stdout).unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "{stderr}");
    // Generous against a loaded machine, far below the 25 s of the whole profile.
    assert!(wall < std::time::Duration::from_secs(15), "{wall:?}");
    let recs = read_run(&out).records;
    assert!((2..=12).contains(&recs.len()), "{} sent", recs.len());
    let ok = recs.iter().filter(|r| r.outcome.is_success()).count() as u64;
    assert!(ok >= 1);
    // Nothing was sent after the limit.
    let limit = std::time::Duration::from_millis(1500);
    assert!(recs.iter().all(|r| r.sent_at <= limit));
    let printed = text::parse_block(&stdout).unwrap().result;
    assert_eq!(printed.successful_requests, Some(ok));
    // Fewer than the 100 asked for: the lints say so.
    assert!(stderr.contains("[partial-success]"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_runs_a_named_profile() {
    let srv = server(ServeOptions::default());
    let target = format!("http://{}", srv.local_addr());
    let dir = std::env::temp_dir().join(format!("servebench-cli-prof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.json");
    // The latency preset (128 in / 128 out, 1 request/s, 100 requests), shortened.
    let (stdout, _) = bench(
        &target,
        &[
            "--profile",
            "latency",
            "--max-requests",
            "3",
            "--rate",
            "50",
        ],
        &out,
    );
    let printed = text::parse_block(&stdout).unwrap().result;
    assert_eq!(printed.successful_requests, Some(3));
    assert_eq!(printed.total_output_tokens, Some(3 * 128));
    assert_eq!(srv.stats().tokens_sent, 3 * 128);
    let saved = read_run(&out);
    assert_eq!(&saved.profile, saved.result.meta.profile.as_ref().unwrap());
    let profile = saved.result.meta.profile.as_ref().unwrap();
    assert_eq!(profile.name.as_deref(), Some("latency"));
    assert_eq!(profile.total_requests, 3);
    assert!(saved.records.iter().all(|r| r.prompt_tokens == Some(128)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// HTTP 401 and 404 name their fix: a server that wants a key says which flags give one;
/// a model it does not serve lists the models it does.
#[test]
fn a_refused_key_or_an_unknown_model_names_the_fix() {
    let (_h, target) = served(ServeOptions {
        api_key: Some("sk-test".into()),
        ..ServeOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let run = |extra: &[&str]| {
        let o = Command::new(BIN)
            .args([
                "bench",
                "--target",
                &target,
                "--quiet",
                "--max-requests",
                "2",
            ])
            .args(["--input-tokens", "8", "--output-tokens", "4", "--output"])
            .arg(&out)
            .args(extra)
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("HTTP 401") && err.contains("give --api-key KEY or set OPENAI_API_KEY"),
        "{err}"
    );
    let (code, err) = run(&["--api-key", "sk-wrong"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("refused the API key given"), "{err}");
    let (code, err) = run(&["--api-key", "sk-test", "--model", "no-such-model"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("HTTP 404") && err.contains("the server serves "),
        "{err}"
    );
}

/// `--profile sharegpt` without the ShareGPT file: the built-in length distribution
/// stands in, and both the console and the run file say so (it was silent).
#[test]
fn a_sharegpt_run_says_where_its_requests_came_from() {
    let (_h, target) = served(ServeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let o = Command::new(BIN)
        .current_dir(dir.path())
        .args([
            "bench",
            "--target",
            &target,
            "--quiet",
            "--profile",
            "sharegpt",
        ])
        .args(["--max-requests", "3", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("built-in ShareGPT length distribution"),
        "{err}"
    );
    let run = read_run(&out);
    assert_eq!(
        run.labels.get("dataset_source").map(String::as_str),
        Some("built-in ShareGPT length distribution")
    );
}

/// vLLM's ramp-up: `--ramp-up linear --ramp-start 10 --ramp-end 100` sends the run's
/// requests at a rate growing request by request (vLLM's flag names work too); the run
/// file keeps the ramp, and the send rate of the last quarter is well above the first's.
/// A ramp that falls is a usage error.
#[test]
fn a_ramp_up_sends_at_a_growing_rate() {
    let (_h, target) = served(ServeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let (_, _) = bench(
        &target,
        &[
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "--max-requests",
            "200",
            "--ramp-up-strategy",
            "linear",
            "--ramp-up-start-rps",
            "10",
            "--ramp-end",
            "100",
        ],
        &out,
    );
    let run = read_run(&out);
    assert!(
        matches!(run.arrivals, Some(servebench::driver::Arrivals::Ramp { start_rate, end_rate, .. })
            if start_rate == 10.0 && end_rate == 100.0),
        "{:?}",
        run.arrivals
    );
    let mut sent: Vec<f64> = run
        .records
        .iter()
        .map(|r| r.sent_at.as_secs_f64())
        .collect();
    sent.sort_by(f64::total_cmp);
    let rate = |a: usize, b: usize| (b - a) as f64 / (sent[b] - sent[a]);
    let (first, last) = (rate(0, 50), rate(150, 199));
    assert!(
        last > 3.0 * first,
        "first quarter {first:.1}/s, last {last:.1}/s"
    );
    let o = Command::new(BIN)
        .args(["bench", "--target", &target, "--ramp-up", "linear"])
        .args(["--ramp-start", "50", "--ramp-end", "10"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `--duration 2s --rate 25`: a run bounded by time sends rate × time requests (50), and
/// finishes those in flight; without a finite rate it is a usage error.
#[test]
fn a_run_bounded_by_duration_sends_rate_times_time_requests() {
    let (_h, target) = served(ServeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    bench(
        &target,
        &[
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "--duration",
            "2s",
            "--rate",
            "25",
        ],
        &out,
    );
    let run = read_run(&out);
    assert_eq!(run.records.len(), 50);
    assert!(run.status.is_complete() && run.records.iter().all(|r| r.outcome.is_success()));
    let o = Command::new(BIN)
        .args([
            "bench",
            "--target",
            &target,
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
        ])
        .args(["--duration", "2s", "--rate", "inf"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `--phases FILE`: a quiet phase, a burst under its own cap, a quiet phase again. The run
/// sends each phase's rate × seconds inside its span, keeps the phases in the run file, and
/// `report` prints each phase's figures; a bad phase file names itself and the line.
#[test]
fn a_phased_run_reports_each_phase() {
    let (_h, target) = served(ServeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("phases.toml");
    std::fs::write(
        &file,
        "[[phase]]\nname = \"quiet\"\nseconds = 1\nrate = 20\n\n\
         [[phase]]\nname = \"burst\"\nseconds = 1\nrate = 80\narrivals = \"poisson\"\nconcurrency = 8\n\n\
         [[phase]]\nseconds = 1\nrate = 20\n",
    )
    .unwrap();
    let out = dir.path().join("run.json");
    bench(
        &target,
        &[
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "--phases",
            file.to_str().unwrap(),
        ],
        &out,
    );
    let run = read_run(&out);
    assert_eq!(run.records.len(), 20 + 80 + 20);
    let phases = run.phases.as_ref().expect("the phases in the run file");
    assert_eq!(phases.phase.len(), 3);
    let o = Command::new(BIN)
        .args(["report", out.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("phase \"")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("phase \"quiet\" 0.0–1.0 s at 20 req/s: 20 requests sent"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("phase \"burst\" 1.0–2.0 s at 80 req/s (cap 8): "),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("phase \"phase 3\" 2.0–3.0 s at 20 req/s: "),
        "{}",
        lines[2]
    );
    std::fs::write(&file, "[[phase]]\nseconds = 1\nrate = \"fast\"\n").unwrap();
    let o = Command::new(BIN)
        .args([
            "bench",
            "--target",
            &target,
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
        ])
        .args(["--phases", file.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("phases.toml") && err.contains("line 3"),
        "{err}"
    );
}

/// `--warmup-seconds 1 --cooldown-seconds 1` on 4 s of requests at 20 req/s: the first and
/// last second's requests leave the figures and stay in the run file (warm-up, cool-down);
/// the result counts the 2 s between.
#[test]
fn the_first_and_last_seconds_are_cut_by_time() {
    let (_h, target) = served(ServeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    bench(
        &target,
        &[
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "--rate",
            "20",
            "--max-requests",
            "81",
            "--warmup-seconds",
            "1",
            "--cooldown-seconds",
            "1",
        ],
        &out,
    );
    let run = read_run(&out);
    // (A request sent exactly at a boundary may fall either side by the send jitter.)
    let (warm, cool, kept) = (
        run.warmup_records.len(),
        run.cooldown_records.len(),
        run.records.len(),
    );
    assert!(
        (19..=21).contains(&warm) && (19..=21).contains(&cool),
        "{warm} {cool}"
    );
    assert_eq!(warm + cool + kept, 81);
    assert_eq!(run.result.successful_requests, Some(kept as u64));
}

/// `--rate-expr "10 + 10 * (t >= 1)"`-style time-varying rates: a rate of 10 req/s for the
/// first second and 40 after (`if` spelled with `max`/`min`), over 2 s, sends 50 requests,
/// most of them in the second second; a bad expression is a usage error naming itself.
#[test]
fn a_rate_expression_sends_at_the_rate_it_says() {
    let (_h, target) = served(ServeOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    bench(
        &target,
        &[
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
            "--duration",
            "2s",
            "--rate-expr",
            "10 + 30 * min(max((t - 1) * 1000, 0), 1)",
        ],
        &out,
    );
    let run = read_run(&out);
    assert_eq!(run.records.len(), 50);
    let first = run
        .records
        .iter()
        .filter(|r| r.sent_at.as_secs_f64() - run.records[0].sent_at.as_secs_f64() < 0.95)
        .count();
    assert!((9..=11).contains(&first), "{first} in the first second");
    let o = Command::new(BIN)
        .args([
            "bench",
            "--target",
            &target,
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
        ])
        .args(["--duration", "2s", "--rate-expr", "10 + sin(t"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--rate-expr") && err.contains("10 + sin(t"),
        "{err}"
    );
}
