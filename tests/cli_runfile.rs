//! `servebench bench` against the real example server process (`h200_server --serve`, on
//! 127.0.0.1): the run file and every verb reading it back, SIGINT/SIGTERM on the real
//! binary, the output path checked before the first request, honest defaults, the flags
//! and their validation.
#![cfg(all(feature = "http", feature = "cli", unix))]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use servebench::format::text;
use servebench::metrics::{compute, MetricsOptions};
use servebench::result::Convention;
use servebench::runfile::{RunFile, RunStatus};

mod common;
use common::example_server::{example_server, Served};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");
const MODEL: &str = "Qwen/Qwen3.5-35B-A3B";

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-runfile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sb(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn out_err(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A short, clean run: rate-limited well below the cap so nothing is client-capped.
fn bench(server: &Served, out: &Path, extra: &[&str]) -> (String, String) {
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &server.url, "--output"])
        .arg(out)
        .args([
            "--input-tokens",
            "64",
            "--output-tokens",
            "16",
            "--max-requests",
            "24",
            "--rate",
            "40",
            "--max-concurrency",
            "16",
        ])
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = out_err(&o);
    assert!(o.status.success(), "{stderr}");
    (stdout, stderr)
}

#[test]
fn bench_run_files_read_back_through_every_verb() {
    let server = Served::start(&["--speed", "10"]);
    let dir = temp_dir("verbs");
    let a = dir.join("a.json");
    let b = dir.join("b.jsonl");
    let (stdout, stderr) = bench(&server, &a, &[]);
    bench(&server, &b, &["--seed", "7"]);
    // The default output: vLLM's definitions under vLLM's labels, and no lint finding.
    assert!(!stderr.contains("lints ("), "{stderr}");
    let run_a = RunFile::read(&a).unwrap();
    let run_b = RunFile::read(&b).unwrap();
    assert_eq!(run_a.status, RunStatus::Complete);
    assert_eq!(run_a.records.len(), 24);
    assert_eq!(run_b.records.len(), 24);
    assert_eq!(run_a.model.as_deref(), Some(MODEL));
    assert_eq!(run_a.target.as_deref(), Some(server.url.as_str()));
    assert_eq!(
        run_a.models_response.as_ref().unwrap()["data"][0]["id"],
        MODEL
    );
    assert_eq!(run_a.command_line[1], "bench");
    assert_eq!(run_a.result.meta.convention, Some(Convention::Vllm));
    assert_eq!(run_b.seed, Some(7));
    assert_eq!(run_a.profile.total_requests, 24);
    assert_eq!(
        text::parse_block(&stdout)
            .unwrap()
            .result
            .successful_requests,
        Some(24)
    );

    let path = a.to_str().unwrap();
    // report: the saved block, and recomputed in either convention from the records.
    let o = sb(&["report", path]);
    let (rep, err) = out_err(&o);
    assert!(o.status.success(), "{err}");
    assert!(rep.contains(stdout.trim_end()), "{rep}\n---\n{stdout}");
    let o = sb(&["report", path, "--convention", "vllm"]);
    let (vl, err) = out_err(&o);
    assert!(o.status.success(), "{err}");
    assert!(vl.contains(stdout.trim_end()), "{vl}");
    let o = sb(&["report", path, "--convention", "guidellm"]);
    let (gl, err) = out_err(&o);
    assert!(o.status.success(), "{err}");
    let mut want = compute(&run_a.records, MetricsOptions::new(Convention::Guidellm));
    want.meta = run_a.result.meta.clone();
    want.meta.convention = Some(Convention::Guidellm);
    assert!(
        gl.contains(&text::render(&want, text::Style::Gpustack)),
        "{gl}"
    );
    // Above guidellm's numbers, the line `bench` prints too: the TPOT header's wording is
    // GPUStack's layout, guidellm's TPOT includes the first token.
    let note = servebench::format::labels::convention_note(Convention::Guidellm).unwrap();
    assert!(note.contains("TPOT includes the time to first token"));
    assert!(
        gl.contains(&format!(
            "{note}\n{}",
            text::render(&want, text::Style::Gpustack)
        )),
        "{gl}"
    );
    assert!(!vl.contains("Metric convention"), "{vl}");
    // render: the run file's result in the style its convention's labels fit.
    let o = sb(&["render", path]);
    assert!(o.status.success());
    assert_eq!(out_err(&o).0, stdout);
    // lint: nothing to say about a clean run (exit 0).
    let o = sb(&["lint", path, b.to_str().unwrap()]);
    let (lint_out, err) = out_err(&o);
    assert_eq!(o.status.code(), Some(0), "{lint_out}{err}");
    assert!(lint_out.is_empty(), "{lint_out}");
    // compare: two run files, JSON and JSON Lines.
    let o = sb(&["compare", path, b.to_str().unwrap()]);
    let (cmp, err) = out_err(&o);
    assert!(o.status.success(), "{err}");
    assert!(cmp.contains("Successful requests"), "{cmp}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts a long bench, waits until the server has answered some requests, sends
/// `signal`, and returns the process output and the run file.
fn interrupted(signal: &str, drain: &str) -> (Output, RunFile, Duration, String) {
    let server = Served::start(&["--speed", "1"]);
    let dir = temp_dir(&format!("sig-{signal}"));
    let out = dir.join("run.jsonl");
    // 200 requests at 20/s of 256 tokens: ~10 s of sending, far longer than we wait.
    let child = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &server.url, "--output"])
        .arg(&out)
        .args([
            "--input-tokens",
            "32",
            "--output-tokens",
            "256",
            "--num-prompts",
            "200",
            "--request-rate",
            "20",
            "--drain-timeout",
            drain,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t0 = Instant::now();
    let st = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    let waited = t0.elapsed();
    let run = RunFile::read(&out).unwrap_or_else(|e| panic!("{e}\n{}", out_err(&o).1));
    let lint = out_err(&sb(&["lint", out.to_str().unwrap()])).0;
    let _ = std::fs::remove_dir_all(&dir);
    (o, run, waited, lint)
}

#[test]
fn sigint_stops_sending_and_saves_the_run_marked_interrupted() {
    let (o, run, waited, lint) = interrupted("INT", "0.3");
    let (stdout, stderr) = out_err(&o);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert_eq!(
        run.status,
        RunStatus::Interrupted {
            reason: "SIGINT".into()
        }
    );
    assert!(stderr.contains("(marked interrupted)"), "{stderr}");
    // Sent for ~1.5 s at 20/s: far fewer than 200, and nothing sent after the signal.
    let n = run.records.len();
    assert!((5..150).contains(&n), "{n} records");
    let last_sent = run.records.iter().map(|r| r.sent_at).max().unwrap();
    assert!(last_sent < Duration::from_secs(8), "{last_sent:?}");
    // 256 tokens at speed 1 take longer than the 0.3 s drain: some were cut off.
    let cut = run
        .records
        .iter()
        .filter(|r| matches!(&r.outcome, servebench::Outcome::Incomplete { reason } if reason.contains("SIGINT")))
        .count();
    assert!(cut >= 1, "{stderr}");
    // Bounded: the drain, then saving (generous for a loaded 2-core machine).
    assert!(waited < Duration::from_secs(8), "{waited:?}");
    // The printed block is the saved result, and the saved result is the records'.
    let printed = text::parse_block(&stdout).unwrap().result;
    assert_eq!(printed.successful_requests, run.result.successful_requests);
    let again = compute(&run.records, MetricsOptions::new(Convention::Vllm));
    assert_eq!(again.successful_requests, run.result.successful_requests);
    assert_eq!(again.ttft, run.result.ttft);
    // The lints count an interrupted run against what it sent, not the 200 of the profile.
    assert!(!stderr.contains("requests=200"), "{stderr}");
    // `servebench lint` of the saved file says the same.
    assert!(lint.contains("run (interrupted: SIGINT)"), "{lint}");
    assert!(!lint.contains("requests=200"), "{lint}");
    if stderr.contains("[partial-success]") {
        assert!(stderr.contains(&format!("requests={n}")), "{stderr}");
    }
}

#[test]
fn sigterm_is_handled_like_sigint() {
    let (o, run, _, _) = interrupted("TERM", "5");
    let (_, stderr) = out_err(&o);
    assert_eq!(o.status.code(), Some(143), "{stderr}");
    assert_eq!(
        run.status,
        RunStatus::Interrupted {
            reason: "SIGTERM".into()
        }
    );
    // A 5 s drain is enough for every request in flight (256 tokens at speed 1 ≈ 2.6 s).
    assert!(
        run.records.iter().all(|r| r.outcome.is_success()),
        "{stderr}"
    );
}

#[test]
fn an_unwritable_output_is_refused_before_any_request() {
    let server = Served::start(&["--speed", "10"]);
    let dir = temp_dir("unwritable");
    let file = dir.join("file");
    std::fs::write(&file, "x").unwrap();
    for (out, needle) in [
        (dir.join("missing/run.json"), "missing"),
        (file.join("run.json"), "not a directory"),
        (dir.clone(), "is a directory"),
    ] {
        let o = Command::new(BIN)
            .args(["bench", "--quiet", "--target", &server.url, "--output"])
            .arg(&out)
            .args([
                "--input-tokens",
                "8",
                "--output-tokens",
                "4",
                "--max-requests",
                "3",
            ])
            .output()
            .unwrap();
        let (stdout, stderr) = out_err(&o);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("--output") && stderr.contains(needle),
            "{stderr}"
        );
        assert!(stdout.is_empty());
    }
    // The server saw no generation request.
    let metrics = get_metrics(&server.url);
    assert!(metrics.contains("\nservebench_requests 0\n"), "{metrics}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `GET /metrics` of the example server, with a bare TCP request.
fn get_metrics(url: &str) -> String {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body
}

#[test]
fn guidellm_numbers_only_when_asked_and_then_labelled() {
    let server = Served::start(&["--speed", "10"]);
    let dir = temp_dir("conv");
    let out = dir.join("g.json");
    let (stdout, stderr) = bench(&server, &out, &["--convention", "guidellm"]);
    assert!(
        stdout.starts_with("Metric convention: guidellm"),
        "{stdout}"
    );
    // The block after the note is GPUStack's style with guidellm's numbers.
    let run = RunFile::read(&out).unwrap();
    assert_eq!(run.result.meta.convention, Some(Convention::Guidellm));
    let block = text::render(&run.result, text::Style::Gpustack);
    assert!(stdout.ends_with(&format!("{block}\n")), "{stdout}");
    // guidellm's instantaneous-rate peak is its own definition; the default output (vLLM's)
    // never trips impossible-peak (see the clean run above), this one may say so in lints.
    let _ = stderr;
    // vLLM's labels over guidellm's numbers: refused before anything is sent.
    let o = sb(&[
        "bench",
        "--target",
        &server.url,
        "--input-tokens",
        "8",
        "--output-tokens",
        "4",
        "--convention",
        "guidellm",
        "--style",
        "vllm",
    ]);
    let (_, err) = out_err(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("excl. 1st token"), "{err}");
    // render --style vllm of that run file refuses too.
    let o = sb(&["render", out.to_str().unwrap(), "--style", "vllm"]);
    assert_eq!(o.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vllm_flag_names_formats_warmup_and_arrivals() {
    let server = Served::start(&["--speed", "10"]);
    let dir = temp_dir("flags");
    let out = dir.join("v.json");
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--base-url", &server.url])
        .args([
            "--dataset-name",
            "random",
            "--random-input-len",
            "40",
            "--random-output-len",
            "8",
            "--random-range-ratio",
            "0.5",
            "--num-prompts",
            "30",
            "--request-rate",
            "100",
            "--burstiness",
            "0.5",
            "--seed",
            "3",
            "--max-concurrency",
            "8",
            "--metric-percentiles",
            "50,90,99.9",
            "--goodput",
            "ttft:10000",
            "e2el:60000",
            "--num-warmups",
            "4",
            "--format",
            "csv",
            "--result-filename",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = out_err(&o);
    assert!(o.status.success(), "{stderr}");
    let run = RunFile::read(&out).unwrap();
    // Warm-up requests are kept apart and excluded from the figures.
    assert_eq!(run.warmup_records.len(), 4);
    assert_eq!(run.records.len(), 30);
    assert_eq!(run.result.successful_requests, Some(30));
    // Gamma arrivals, seeded, rescaled to n / rate.
    assert!(matches!(
        run.arrivals,
        Some(servebench::driver::Arrivals::Gamma { burstiness, seed: 3, .. }) if burstiness == 0.5
    ));
    let last = run
        .records
        .iter()
        .filter_map(|r| r.scheduled_at)
        .max()
        .unwrap();
    let first = run
        .records
        .iter()
        .filter_map(|r| r.scheduled_at)
        .min()
        .unwrap();
    assert!((last - first).as_secs_f64() <= 0.3 + 1e-9, "{last:?}");
    // Range ratio: prompt lengths vary within [20, 60].
    let lens: Vec<u64> = run.records.iter().filter_map(|r| r.prompt_tokens).collect();
    assert!(lens.iter().all(|&l| (20..=60).contains(&l)), "{lens:?}");
    assert!(lens.iter().any(|&l| l != 40), "{lens:?}");
    // CSV: a header of vLLM's key names and one row; the percentiles asked for.
    let mut lines = stdout.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(lines.next(), None);
    assert_eq!(head.len(), row.len());
    let col = |k: &str| {
        row[head
            .iter()
            .position(|h| *h == k)
            .unwrap_or_else(|| panic!("{k}"))]
    };
    assert_eq!(col("completed"), "30");
    assert_eq!(col("convention"), "vllm");
    assert!(
        head.contains(&"p99.9_ttft_ms") && head.contains(&"p90_e2el_ms"),
        "{head:?}"
    );
    assert_eq!(col("request_goodput"), col("request_throughput"));
    let p = run.result.ttft.as_ref().unwrap().percentile(99.9).unwrap();
    assert_eq!(col("p99.9_ttft_ms").parse::<f64>().unwrap(), p);

    // --rate inf: everything scheduled at once; a burst of 20 above the cap of 4 shows
    // vLLM's per-second peak above the cap, and bench says why.
    let o = Command::new(BIN)
        .args([
            "bench",
            "--quiet",
            "--target",
            &server.url,
            "--result-filename",
        ])
        .arg(&out)
        .args([
            "--input-tokens",
            "16",
            "--output-tokens",
            "32",
            "--num-prompts",
            "20",
        ])
        .args(["--request-rate", "inf", "--max-concurrency", "4"])
        .output()
        .unwrap();
    let (_, stderr) = out_err(&o);
    assert!(o.status.success(), "{stderr}");
    let run = RunFile::read(&out).unwrap();
    assert_eq!(run.arrivals, Some(servebench::driver::Arrivals::AllAtOnce));
    let first = run.records[0].scheduled_at;
    assert!(first.is_some() && run.records.iter().all(|r| r.scheduled_at == first));
    let peak = run.result.peak_concurrent_requests.unwrap();
    if peak > 4.0 {
        assert!(
            stderr.contains("1-second bucket; the most in flight at one instant was 4"),
            "{stderr}"
        );
    }
    // --format json: the result, as saved.
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &server.url])
        .args([
            "--dataset",
            "random",
            "--num-prompts",
            "5",
            "--format",
            "json",
        ])
        .args(["--input-tokens", "16", "--output-tokens", "4"])
        .output()
        .unwrap();
    let (stdout, stderr) = out_err(&o);
    assert!(o.status.success(), "{stderr}");
    let r: servebench::BenchmarkResult = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r.successful_requests, Some(5));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_flag_values_are_usage_errors_naming_the_flag() {
    // No server needed: every case is refused before anything is sent (port 9: discard).
    let base = [
        "bench",
        "--target",
        "http://127.0.0.1:9",
        "--profile",
        "latency",
    ];
    let cases: &[(&[&str], &str)] = &[
        (&["--percentiles", "150"], "--percentiles"),
        (&["--percentiles", "-1"], "--percentiles"),
        (&["--percentiles", "50,x"], "--percentiles"),
        (&["--max-requests", "0"], "--max-requests"),
        (&["--num-prompts", "-3"], "--max-requests"),
        (&["--rate", "-1"], "--rate"),
        (&["--rate", "0"], "positive"),
        (&["--rate", "fast"], "--rate"),
        (&["--max-concurrency", "0"], "--max-concurrency"),
        (&["--burstiness", "0"], "--burstiness"),
        (&["--max-seconds", "-2"], "--max-seconds"),
        (&["--timeout", "nan"], "--timeout"),
        (&["--goodput", "ttft"], "--goodput"),
        (&["--goodput", "tpot:abc"], "--goodput"),
        (&["--warmup-requests", "-1"], "--warmup-requests"),
        (&["--seed", "1.5"], "--seed"),
        (&["--range-ratio", "1"], "--range-ratio"),
        (&["--dataset-path", "x.json"], "--dataset sharegpt"),
    ];
    for (extra, needle) in cases {
        let o = Command::new(BIN).args(base).args(*extra).output().unwrap();
        let (stdout, stderr) = out_err(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(stdout.is_empty());
    }
    let random = [
        "bench",
        "--target",
        "http://127.0.0.1:9",
        "--input-tokens",
        "8",
    ];
    for (extra, needle) in [
        (&["--output-tokens", "0"][..], "--output-tokens"),
        (
            &["--output-tokens", "4", "--range-ratio", "1"][..],
            "--range-ratio",
        ),
        (&[][..], "--output-tokens"),
        (
            &["--output-tokens", "4", "--dataset", "sharegpt"][..],
            "--dataset random",
        ),
        (
            &[
                "--output-tokens",
                "4",
                "--convention",
                "guidellm",
                "--style",
                "vllm",
            ][..],
            "excl. 1st token",
        ),
    ] {
        let o = Command::new(BIN).args(random).args(extra).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
    }
    let o = sb(&[
        "bench",
        "--target",
        "http://127.0.0.1:9",
        "--dataset",
        "sharegpt",
        "--range-ratio",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("random datasets"));
    // report: --percentiles without --convention recomputes under the file's own
    // convention (as the README's synopsis shows): no usage error, here the missing file
    // is the error; --goodput still needs --convention.
    let o = sb(&["report", "x.json", "--percentiles", "90"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("x.json"), "{stderr}");
    let o = sb(&["report", "x.json", "--goodput", "ttft:5"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--convention"), "{stderr}");
}

#[test]
fn h200_server_help_is_not_an_error() {
    let o = Command::new(example_server())
        .arg("--help")
        .output()
        .unwrap();
    let (stdout, stderr) = out_err(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("--serve <HOST:PORT>"), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");
    // A real mistake is still a usage error on stderr.
    let o = Command::new(example_server())
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // clap's wording since the example parses its flags with clap.
    assert!(String::from_utf8_lossy(&o.stderr).contains("unexpected argument '--bogus'"));
}

/// `bench --dataset sharegpt --dataset-path FILE` against the example server: the prompts and
/// answer lengths come from the file (vLLM's sampling: shuffled, oversampled when short,
/// entries without a reply dropped), and the run file keeps them.
#[test]
fn sharegpt_file_drives_the_prompts_and_answer_lengths() {
    let dir = temp_dir("sharegpt");
    let data = dir.join("sharegpt.json");
    let long_answer = "The cache keeps the key and value vectors of every token already seen, \
        so each new token attends to them without recomputing the prompt. "
        .repeat(12);
    let entries = serde_json::json!([
        {"id": "a", "conversations": [
            {"from": "human", "value": "What is a KV cache?"},
            {"from": "gpt", "value": long_answer}]},
        {"id": "b", "conversations": [
            {"from": "human", "value": "Name three prime numbers, please, and say why they are prime."},
            {"from": "gpt", "value": "2, 3 and 5: each has no divisor but 1 and itself."}]},
        {"id": "c", "conversations": [
            {"from": "human", "value": "Translate 'good morning' into French."},
            {"from": "gpt", "value": "Bonjour."}]},
        {"id": "no-reply", "conversations": [
            {"from": "human", "value": "This entry has no answer and is dropped."}]}
    ]);
    std::fs::write(&data, serde_json::to_vec(&entries).unwrap()).unwrap();
    let server = Served::start(&["--speed", "20"]);
    let out = dir.join("run.json");
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &server.url, "--output"])
        .arg(&out)
        .args(["--dataset", "sharegpt", "--dataset-path"])
        .arg(&data)
        .args(["--num-prompts", "12", "--request-rate", "50", "--seed", "7"])
        .output()
        .unwrap();
    let (_, stderr) = out_err(&o);
    assert!(o.status.success(), "{stderr}");
    let run = RunFile::read(&out).unwrap();
    assert_eq!(run.records.len(), 12);
    assert_eq!(run.result.successful_requests, Some(12));
    // Three usable entries, oversampled to 12: at most three distinct (prompt, answer)
    // shapes, and the long answer's requests generate far more tokens than the others.
    let mut shapes: Vec<(Option<u64>, u64)> = run
        .records
        .iter()
        .map(|r| (r.prompt_tokens, r.output_tokens()))
        .collect();
    shapes.sort();
    shapes.dedup();
    assert!(
        (2..=3).contains(&shapes.len()),
        "shapes from the file: {shapes:?}"
    );
    let most = shapes.iter().map(|s| s.1).max().unwrap();
    let least = shapes.iter().map(|s| s.1).min().unwrap();
    assert!(most >= 10 * least, "{shapes:?}");
    // The server saw the file's text: its reported prompt lengths differ between entries.
    let mut usage: Vec<u64> = run
        .records
        .iter()
        .filter_map(|r| r.usage_prompt_tokens)
        .collect();
    assert_eq!(usage.len(), 12);
    usage.sort_unstable();
    usage.dedup();
    assert!(usage.len() >= 2, "{usage:?}");
    // A file that is not ShareGPT is refused naming it.
    std::fs::write(&data, b"{\"not\": \"a list\"}").unwrap();
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &server.url])
        .args(["--dataset", "sharegpt", "--dataset-path"])
        .arg(&data)
        .args(["--num-prompts", "2"])
        .output()
        .unwrap();
    let (_, stderr) = out_err(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("sharegpt.json"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
