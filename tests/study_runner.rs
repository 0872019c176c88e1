//! The study runner against real server processes: the `h200_server` example launched by
//! the `command` engine on loopback (`--speed 50`, tiny profiles), through the `servebench`
//! binary. A whole small study; a runner killed with SIGKILL and resumed; a server killed
//! mid-study; servers that never become healthy, crash mid-run or cannot start. After each,
//! no server process is left.
//!
//! The example server has no `CARGO_BIN_EXE_*` variable (examples get none), so
//! [`example_server`] runs `cargo build --example h200_server` once (a no-op when it is
//! fresh) into the same target directory as the `servebench` binary under test.
#![cfg(all(feature = "study", feature = "cli", unix))]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use servebench::format::text;
use servebench::runfile::RunFile;
use servebench::study::group_alive;
use servebench::study::Journal;

mod common;
use common::example_server::example_server;

fn servebench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_servebench"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-study-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A study of the example server: `engines` (TOML `[[engines]]` tables) and one ladder step
/// (`--config=optimized`), profiles `a` and `b`, two repetitions.
fn study_text(engines: &str) -> String {
    format!(
        r#"format = "servebench-study"
version = 1
title = "Example server study"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "loopback"
repetitions = 2

[profiles.a]
dataset_name = "Random"
dataset_input_tokens = 64
dataset_output_tokens = 48
request_rate = 1000
total_requests = 6

[profiles.b]
dataset_name = "Random"
dataset_input_tokens = 256
dataset_output_tokens = 24
request_rate = 1000
total_requests = 6

{engines}

[ladder]
profiles = ["a", "b"]

[[ladder.steps]]
name = "Optimized"
add = ["--config=optimized"]

[final]
profiles = ["a", "b"]
"#
    )
}

fn good_engine(name: &str, speed: u32) -> String {
    format!(
        r#"[[engines]]
name = "{name}"
kind = "command"
version = "h200_server example"
flags = ["--config=baseline"]
command = ["{}", "--serve", "{{host}}:{{port}}", "--speed", "{speed}", "{{flags}}"]
start_timeout_s = 20
stop_timeout_s = 5
request_timeout_s = 30
"#,
        example_server().display()
    )
}

fn write_study(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("study.in.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Writes the study `text` in `dir` and runs it to the end (`study run FILE --out DIR/out
/// -q`), which must succeed; the output directory.
fn run_study(dir: &Path, text: &str) -> PathBuf {
    let file = write_study(dir, text);
    let out = dir.join("out");
    let o = run_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn run_cli(args: &[&str]) -> std::process::Output {
    Command::new(servebench()).args(args).output().unwrap()
}

fn spawn_cli(args: &[&str]) -> Child {
    Command::new(servebench())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every pid the journal says was launched.
fn launched_pids(j: &Journal) -> Vec<i32> {
    j.events
        .iter()
        .filter_map(|e| e.split("launched pid ").nth(1))
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

fn assert_no_server_left(dir: &Path) {
    let j = Journal::read(dir).unwrap();
    assert!(j.server.is_none(), "journal still records a live server");
    let pids = launched_pids(&j);
    assert!(!pids.is_empty());
    for pid in pids {
        assert!(!group_alive(pid), "process group {pid} is still alive");
    }
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn journal_if_any(dir: &Path) -> Option<Journal> {
    Journal::read(dir).ok()
}

/// Run files' bytes by path.
fn run_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let j = Journal::read(dir).unwrap();
    for e in j.runs.values() {
        let p = dir.join(&e.file);
        let meta = std::fs::metadata(&p).unwrap();
        out.push((
            p.clone(),
            std::fs::read(&p).unwrap(),
            meta.modified().unwrap(),
        ));
    }
    out
}

#[test]
fn a_study_of_two_configurations_runs_every_run_and_its_document_matches_the_run_files() {
    let dir = tmp("e2e");
    let file = write_study(&dir, &study_text(&good_engine("vLLM", 50)));
    let out = dir.join("out");
    let o = run_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = Journal::read(&out).unwrap();
    // 2 configurations x 2 profiles x 2 repetitions.
    assert_eq!(j.configs.len(), 2, "{:?}", j.configs.keys());
    assert_eq!(j.runs.len(), 8);
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("study.json")).unwrap()).unwrap();
    for section in [
        "## Conclusion",
        "### Serving Command",
        "## Experimental Setup",
        "## Experiment Results",
        "### Baseline of the Inference Engine",
        "### Optimized",
        "## Summary of Optimization Options",
        "## Other Benchmark Cases",
        "### a Profile",
        "### b Profile",
        "## Files",
    ] {
        assert!(md.contains(&format!("\n{section}\n")), "missing {section}");
    }
    // Every block in the document is the rendering of a run file named in study.json.
    let blocks = text::parse(&md).unwrap();
    let used: Vec<String> = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(!used.is_empty());
    let rendered: Vec<String> = used
        .iter()
        .map(|k| {
            let run = RunFile::read(out.join(&j.runs[k].file)).unwrap();
            text::render(&run.result, text::Style::Gpustack)
                .trim_end()
                .to_string()
        })
        .collect();
    for b in &blocks {
        let shown = md[b.span.clone()].trim_end().to_string();
        assert!(
            rendered.contains(&shown),
            "a block matches no run file:\n{shown}"
        );
    }
    // The decision table's values are the run files' total throughputs.
    for row in json["conclusion"].as_array().unwrap() {
        let profile = row["profile"].as_str().unwrap();
        let base = json["analysis"]["baseline"].clone();
        let key = j
            .configs
            .iter()
            .find(|(_, c)| serde_json::to_value(c).unwrap() == base)
            .map(|(k, _)| k.clone())
            .unwrap();
        let mut want: Vec<f64> = (1..=2)
            .map(|r| {
                let e = &j.runs[&format!("{key}/{profile}/r{r}")];
                RunFile::read(out.join(&e.file))
                    .unwrap()
                    .result
                    .total_token_throughput_per_s
                    .unwrap()
            })
            .collect();
        let mut got: Vec<f64> = row["baseline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        want.sort_by(f64::total_cmp);
        got.sort_by(f64::total_cmp);
        assert_eq!(got, want, "{profile}");
    }
    // Server logs kept; no server left.
    assert!(std::fs::read_dir(out.join("logs")).unwrap().count() >= 2);
    assert_no_server_left(&out);
    // Run files read back and carry the study's labels; no wall-clock time in the document.
    let any = j.runs.values().next().unwrap();
    let run = RunFile::read(out.join(&any.file)).unwrap();
    assert_eq!(run.labels["study"], "Example server study");
    // One server serves both repetitions: every run emptied its prefix cache first, and
    // says so.
    for e in j.runs.values() {
        let run = RunFile::read(out.join(&e.file)).unwrap();
        assert_eq!(
            run.labels["prefix_cache_reset"], "reset: POST /reset_prefix_cache",
            "{}",
            e.file
        );
    }
    assert!(!md.contains("2026-"), "no timestamps in the document");
    // The launched server's /metrics were scraped at 1 s during every run: its
    // generation-token counter grew by the output tokens of the run's records.
    for e in j.runs.values() {
        let run = RunFile::read(out.join(&e.file)).unwrap();
        let s = run
            .server_metrics
            .as_ref()
            .unwrap_or_else(|| panic!("{}: not scraped", e.file));
        assert!(s.notes.is_empty(), "{}: {:?}", e.file, s.notes);
        assert!(
            s.len() >= 2 && (s.interval_s - 1.0).abs() < 1e-9,
            "{}",
            e.file
        );
        let records: u64 = run.records.iter().map(|r| r.output_tokens()).sum();
        assert_eq!(
            s.increase(servebench::observe::Known::GenerationTokens.names()),
            Some(records as f64),
            "{}",
            e.file
        );
    }
    // The step is explained against the baseline, from the scraped series.
    assert_eq!(md.matches("\nWhy (profile a;").count(), 1, "{md}");
    if cfg!(feature = "plot") {
        assert!(out.join("report.html").exists());
        assert!(out.join("plots/a/total_tps.svg").exists());
        assert!(md.contains("- [plots/b/ttft_cdf.svg](plots/b/ttft_cdf.svg)"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_runner_resumes_without_rerunning_anything_and_writes_the_same_document() {
    // The simulator engine makes the numbers deterministic, so the resumed document can be
    // compared byte for byte with an uninterrupted run's.
    let dir = tmp("resume-sim");
    let sim = r#"[[engines]]
name = "vLLM"
kind = "simulator"
flags = ["--max-model-len=32768"]"#;
    let text = study_text(sim)
        .replace("--config=optimized", "--enable-prefix-caching")
        .replace("total_requests = 6", "total_requests = 400");
    let file = write_study(&dir, &text);
    let full = dir.join("full");
    let o = run_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        full.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let total = Journal::read(&full).unwrap().runs.len();
    assert_eq!(total, 8);

    let part = dir.join("part");
    let mut child = spawn_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        part.to_str().unwrap(),
        "-q",
    ]);
    wait_for("a first finished run", Duration::from_secs(120), || {
        journal_if_any(&part).is_some_and(|j| !j.runs.is_empty())
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = run_files(&part);
    assert!(
        before.len() < total,
        "killed before the end ({} runs)",
        before.len()
    );
    assert!(!part.join("STUDY.md").exists());

    let o = run_cli(&["study", "run", "--resume", part.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (p, bytes, mtime) in &before {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            bytes,
            "{} was rewritten",
            p.display()
        );
        assert_eq!(&std::fs::metadata(p).unwrap().modified().unwrap(), mtime);
    }
    assert_eq!(Journal::read(&part).unwrap().runs.len(), total);
    for f in ["STUDY.md", "study.json"] {
        assert_eq!(
            std::fs::read(part.join(f)).unwrap(),
            std::fs::read(full.join(f)).unwrap(),
            "{f} differs from the uninterrupted run's"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn killed_runner_and_killed_server_are_resumed_and_leave_no_server() {
    let dir = tmp("resume-cmd");
    // Slow enough (speed 5) that a run is in flight when we kill.
    let file = write_study(&dir, &study_text(&good_engine("vLLM", 5)));
    let out = dir.join("out");
    let mut child = spawn_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    wait_for(
        "a server and a finished run",
        Duration::from_secs(120),
        || journal_if_any(&out).is_some_and(|j| j.server.is_some() && !j.runs.is_empty()),
    );
    child.kill().unwrap(); // SIGKILL: the runner cannot stop its server
    child.wait().unwrap();
    let j = Journal::read(&out).unwrap();
    let orphan = j.server.clone().unwrap().pid;
    let before = run_files(&out);
    // Resume: the orphaned server is stopped, nothing finished is run again.
    let o = run_cli(&["study", "run", "--resume", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !group_alive(orphan),
        "the orphaned server survived the resume"
    );
    for (p, bytes, mtime) in &before {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            bytes,
            "{} was rewritten",
            p.display()
        );
        assert_eq!(&std::fs::metadata(p).unwrap().modified().unwrap(), mtime);
    }
    assert_eq!(Journal::read(&out).unwrap().runs.len(), 8);
    assert_no_server_left(&out);
    let doc = std::fs::read(out.join("STUDY.md")).unwrap();
    // A resume of a complete study runs nothing and writes the same document.
    let o = run_cli(&["study", "run", "--resume", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(out.join("STUDY.md")).unwrap(), doc);

    // Now kill a server mid-study: a recorded failure, the study goes on to the end.
    let out2 = dir.join("out2");
    let mut child = spawn_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out2.to_str().unwrap(),
        "-q",
    ]);
    wait_for(
        "a server with a finished run",
        Duration::from_secs(120),
        || journal_if_any(&out2).is_some_and(|j| j.server.is_some() && !j.runs.is_empty()),
    );
    let victim = Journal::read(&out2).unwrap().server.unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(victim.pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let st = child.wait().unwrap();
    // The study goes on after a server crash to its end, and its exit status says that a
    // configuration could not be measured (4).
    assert_eq!(st.code(), Some(4), "the study goes on after a server crash");
    let j = Journal::read(&out2).unwrap();
    let failure = &j.failures[&victim.config];
    assert!(
        failure.reason.contains("the server exited (signal 9)"),
        "{}",
        failure.reason
    );
    let md = std::fs::read_to_string(out2.join("STUDY.md")).unwrap();
    assert!(
        md.contains("the server exited (signal 9)"),
        "the document reports the crash"
    );
    assert_no_server_left(&out2);
    // Resume retries the failed configuration's unfinished runs only.
    let before = run_files(&out2);
    let o = run_cli(&["study", "run", "--resume", out2.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (p, bytes, _) in &before {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            bytes,
            "{} was rewritten",
            p.display()
        );
    }
    let j = Journal::read(&out2).unwrap();
    assert_eq!(j.runs.len(), 8);
    assert!(j.failures.is_empty());
    let md = std::fs::read_to_string(out2.join("STUDY.md")).unwrap();
    assert!(
        !md.contains("signal 9"),
        "the retried configuration finished"
    );
    assert_no_server_left(&out2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failing_servers_are_recorded_and_the_study_goes_on() {
    let dir = tmp("failures");
    let never = r#"[[engines]]
name = "NeverHealthy"
kind = "command"
command = ["sleep", "30"]
start_timeout_s = 1
stop_timeout_s = 1
"#;
    let wrong = r#"[[engines]]
name = "WrongCommand"
kind = "command"
command = ["/nonexistent/servebench-server", "--port", "{port}"]
start_timeout_s = 5
"#;
    // `timeout` kills the server 1.5 s after launch, in the middle of its runs (speed 0.5).
    let crash = format!(
        r#"[[engines]]
name = "Crashes"
kind = "command"
flags = ["--config=baseline"]
command = ["timeout", "-s", "KILL", "1.5", "{}", "--serve", "{{host}}:{{port}}", "--speed", "0.5", "{{flags}}"]
start_timeout_s = 20
stop_timeout_s = 2
"#,
        example_server().display()
    );
    let engines = format!("{never}\n{wrong}\n{crash}\n{}", good_engine("vLLM", 50));
    let file = write_study(&dir, &study_text(&engines));
    let out = dir.join("out");
    let o = run_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    // The study completes around the failures; its status (4) and the console name them.
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let console = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        console.matches("could not be measured:").count(),
        3,
        "{console}"
    );
    let j = Journal::read(&out).unwrap();
    let reason = |engine: &str| {
        j.configs
            .iter()
            .find(|(_, c)| c.engine == engine)
            .and_then(|(k, _)| j.failures.get(k))
            .map(|f| f.reason.clone())
            .unwrap_or_else(|| panic!("no failure recorded for {engine}: {:?}", j.failures))
    };
    assert_eq!(
        reason("NeverHealthy"),
        "the server did not become healthy within 1 s"
    );
    assert!(
        reason("WrongCommand").starts_with("cannot start `/nonexistent/servebench-server`"),
        "{}",
        reason("WrongCommand")
    );
    let crashed = reason("Crashes");
    assert!(crashed.contains("the server exited"), "{crashed}");
    // The healthy engine is selected and the study completes around the failures.
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    for r in [reason("NeverHealthy"), reason("WrongCommand"), crashed] {
        assert!(md.contains(&r), "the document reports: {r}");
    }
    let good: Vec<_> = j.runs.keys().filter(|k| k.starts_with("vllm-")).collect();
    assert_eq!(good.len(), 8, "{good:?}");
    assert!(md.contains("#### vLLM"));
    assert_no_server_left(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_the_server_keeps_finished_runs_and_the_study_resumes() {
    let dir = tmp("sigint");
    let file = write_study(&dir, &study_text(&good_engine("vLLM", 5)));
    let out = dir.join("out");
    let mut child = spawn_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    wait_for(
        "a server and a finished run",
        Duration::from_secs(120),
        || journal_if_any(&out).is_some_and(|j| j.server.is_some() && !j.runs.is_empty()),
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "interrupted exit status");
    let j = Journal::read(&out).unwrap();
    assert!(
        j.failures.is_empty(),
        "an interrupted run is not a failure: {:?}",
        j.failures
    );
    assert!(!j.runs.is_empty() && j.runs.len() < 8);
    assert!(!out.join("STUDY.md").exists());
    assert_no_server_left(&out);
    let o = run_cli(&["study", "run", "--resume", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(Journal::read(&out).unwrap().runs.len(), 8);
    assert_no_server_left(&out);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_api_key_comes_from_the_environment_and_is_written_nowhere() {
    let dir = tmp("apikey");
    let secret = "sk-servebench-test-4242";
    let engine = good_engine("vLLM", 50).replace(
        "\"{flags}\"]",
        "\"--api-key\", \"{api_key}\", \"{flags}\"]\napi_key_env = \"SERVEBENCH_TEST_KEY\"",
    );
    assert!(engine.contains("api_key_env"));
    let file = write_study(&dir, &study_text(&engine));
    let out = dir.join("out");
    let o = Command::new(servebench())
        .args([
            "study",
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ])
        .env("SERVEBENCH_TEST_KEY", secret)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = Journal::read(&out).unwrap();
    // The server required the key (the example answers 401 without it) and every run passed.
    assert_eq!(j.runs.len(), 8, "{:?}", j.failures);
    let mut files = vec![out.clone()];
    let mut seen = 0;
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            seen += 1;
            let bytes = std::fs::read(&p).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(secret), "the key is in {}", p.display());
        }
    }
    assert!(seen > 10, "{seen} files checked");
    // The launch command is recorded with the placeholder, not the key.
    let any = j.runs.values().next().unwrap();
    let run = RunFile::read(out.join(&any.file)).unwrap();
    assert!(
        run.command_line.iter().any(|a| a == "{api_key}"),
        "{:?}",
        run.command_line
    );
    assert_eq!(
        run.result.failed_requests,
        Some(0),
        "the bearer token was accepted"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The study file's `gpu_metrics` key, as `bench --gpu-metrics` for every run of a
/// launched server: `"nvidia-smi"`, answered by a fake `nvidia-smi` first on the runner's
/// `PATH` (two GPUs drawing 250 W and 150 W). Every run file keeps the sampled series and
/// takes its energy from it (400 W times the run's measured window, though the example
/// server's own `/metrics`, scraped too, carry the simulator's DCGM energy), and the
/// document's "Production Figures" row of each configuration shows that run's J per output
/// token, tokens per J and mean power.
#[test]
fn the_studys_gpu_metrics_key_samples_the_gpus_of_every_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp("gpu-metrics");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    std::fs::write(
        &smi,
        format!(
            "#!/bin/sh\n\
             [ \"$1\" = \"--query-gpu={}\" ] || exit 2\n\
             echo '0, 250.00, 30, 4000, 1980'\n\
             echo '1, 150.00, 10, 2000, 1980'\n",
            servebench::observe::NVIDIA_SMI_QUERY
        ),
    )
    .unwrap();
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = format!(
        r#"format = "servebench-study"
version = 1
title = "GPU metrics study"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "loopback"
production = true
gpu_metrics = "nvidia-smi"

[profiles.a]
dataset_name = "Random"
dataset_input_tokens = 64
dataset_output_tokens = 48
request_rate = 1000
total_requests = 6

{}
[ladder]
profiles = ["a"]

[[ladder.steps]]
name = "Optimized"
add = ["--config=optimized"]

[final]
profiles = ["a"]
"#,
        good_engine("vLLM", 50)
    );
    let file = write_study(&dir, &text);
    let out = dir.join("out");
    let mut path = vec![bin.clone()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let o = Command::new(servebench())
        .args(["study", "run", file.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap(), "-q"])
        .env("PATH", std::env::join_paths(path).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = Journal::read(&out).unwrap();
    assert_eq!(j.runs.len(), 2, "{:?}", j.failures);
    assert_no_server_left(&out);
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    let section = md
        .split("## Production Figures")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap();
    for (key, entry) in &j.runs {
        let run = RunFile::read(out.join(&entry.file)).unwrap();
        let gpu = run.gpu_metrics.as_ref().expect("sampled");
        assert_eq!(gpu.target, "nvidia-smi", "{key}");
        assert!(gpu.notes.is_empty() && gpu.len() >= 2, "{key}: {gpu:?}");
        assert!(run
            .server_metrics
            .as_ref()
            .and_then(|s| s.metric(&["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]))
            .is_some());
        let e = run.result.energy.as_ref().expect("energy");
        assert_eq!((e.source.as_str(), e.gpus), ("nvidia-smi", 2), "{key}");
        let (w0, w1) = servebench::metrics::measured_window_s(&run.records).unwrap();
        let joules = e.energy_j.unwrap();
        assert!((joules - 400.0 * (w1 - w0)).abs() < 1e-9 * joules, "{key}");
        let per_token = e.joules_per_output_token.unwrap();
        let tokens = run.result.total_output_tokens.unwrap();
        assert_eq!(tokens, 6 * 48);
        assert!((per_token - joules / tokens as f64).abs() < 1e-12 * per_token);
        // The configuration's row: the engine's name for the baseline, else the step's.
        let optimized = j.configs[key.split('/').next().unwrap()]
            .flags
            .iter()
            .any(|f| f == "--config=optimized");
        let name = if optimized { "Optimized" } else { "vLLM" };
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row {name}:\n{section}"));
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells[2], format!("{per_token:.4}"), "{row}");
        assert_eq!(cells[3], format!("{:.3}", 1.0 / per_token), "{row}");
        assert_eq!(cells[4], "400.0", "{row}");
        assert_eq!(cells[5], "-", "no speculative decoding: {row}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_plan_and_bad_input_on_the_command_line() {
    let o = run_cli(&["study", "--explain"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for field in [
        "api_key_env",
        "start_timeout_s",
        "stop_signal",
        "[[ladder.steps]]",
        "repetitions",
        "{flags}",
    ] {
        assert!(text.contains(field), "--explain documents {field}");
    }
    let dir = tmp("cli");
    let sim = "[[engines]]\nname = \"vLLM\"\nkind = \"simulator\"\n";
    let file = write_study(&dir, &study_text(sim));
    let o = run_cli(&["study", "plan", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.starts_with("Plan of \"Example server study\": "),
        "{plan}"
    );
    // `--config=optimized` is not a flag the simulator models: the plan says so.
    assert!(
        plan.contains("unknown (not run: the simulator does not model `--config=optimized`)"),
        "{plan}"
    );
    assert!(plan.contains("a r2"));
    // A baseline the simulator cannot model (an SGLang flag): the ladder is still the plan,
    // listed as if every step were kept (it was dropped).
    let sglang = "[[engines]]\nname = \"SGLang\"\nkind = \"simulator\"\nflags = [\"--mem-fraction-static=0.9\"]\n";
    let file = write_study(&dir, &study_text(sglang));
    let o = run_cli(&["study", "plan", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("listed as if every step were kept")
            && plan.contains("step Optimized (assumed kept)")
            && plan.contains("--mem-fraction-static=0.9 --config=optimized")
            && plan.contains("2 server sessions, 8 runs"),
        "{plan}"
    );
    // A bad study file: exit 1, the file and the key named.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        study_text(sim).replace("repetitions = 2", "repetitions = \"two\""),
    )
    .unwrap();
    let o = run_cli(&[
        "study",
        "run",
        bad.to_str().unwrap(),
        "--out",
        dir.join("x").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml") && err.contains("repetitions"),
        "{err}"
    );
    assert!(!dir.join("x").exists(), "nothing created for a bad file");
    // An existing study directory is not overwritten.
    let out = dir.join("out");
    let o = run_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    // (Its step is not modelled by the simulator: a configuration not measured, exit 4.)
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run_cli(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Launched servers that take time to start (`--startup-seconds 50` at speed 50: a second
/// to healthy, then the MoE cold-start cost on the first batch): the journal, `study.json`
/// and the document's "Start-up" section give each configuration's time to healthy, time
/// to its first token and the first request's TTFT, well above the steady state's.
#[test]
fn the_document_gives_each_launched_configurations_start_up() {
    let dir = tmp("startup");
    let engine = good_engine("vLLM", 50).replace(
        r#""--speed", "50","#,
        r#""--speed", "50", "--startup-seconds", "50","#,
    );
    let text = format!(
        r#"format = "servebench-study"
version = 1
title = "Start-up"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "loopback"
repetitions = 1

[profiles.a]
dataset_name = "Random"
dataset_input_tokens = 256
dataset_output_tokens = 32
request_rate = 100
total_requests = 60

{engine}

[ladder]
profiles = ["a"]

[[ladder.steps]]
name = "Optimized"
add = ["--config=optimized"]

[final]
profiles = ["a"]
"#
    );
    let out = run_study(&dir, &text);
    let j = Journal::read(&out).unwrap();
    assert_eq!(j.startups.len(), 2, "{:?}", j.startups);
    for (key, launches) in &j.startups {
        assert_eq!(launches.len(), 1, "{key}: {launches:?}");
        let s = &launches[0];
        assert!((0.9..5.0).contains(&s.healthy_s), "{key}: {s:?}");
        let first = s.first_token_s.unwrap();
        assert!(first > s.healthy_s, "{key}: {s:?}");
        // The first batch waits for the cold start (6.5 virtual seconds: 0.13 s here).
        assert!(s.first_ttft_ms.unwrap() > 100.0, "{key}: {s:?}");
        assert!(s.run.is_some(), "{key}: {s:?}");
    }
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    let section = &md[md.find("## Start-up").expect("a Start-up section")..];
    eprintln!("{section}");
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| vLLM") || l.starts_with("| Optimized"))
        .collect();
    assert_eq!(rows.len(), 2, "{section}");
    assert!(
        rows.iter().all(|r| r.split(" | ").nth(1) == Some("1")),
        "{rows:?}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(json["startups"].as_object().unwrap().len(), 2);
    assert_no_server_left(&out);
}

/// A study of an embeddings tier (`[endpoint] name = "embeddings"`, 4 texts per request)
/// against the example server launched as a command: every run calls `/v1/embeddings`, its
/// records are whole answers with 4 inputs, no run has a TTFT, and the document is written
/// with the request latency as the only timing. A simulator engine is refused for it.
#[test]
fn a_study_of_an_embeddings_tier_calls_the_endpoint_in_every_run() {
    let dir = tmp("embeddings");
    let text = study_text(&good_engine("vLLM", 50)).replace(
        "[ladder]",
        "[endpoint]\nname = \"embeddings\"\nbatch_size = 4\n\n[ladder]",
    );
    let out = run_study(&dir, &text);
    let j = Journal::read(&out).unwrap();
    assert_eq!(j.runs.len(), 8);
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let mut seen = 0;
    for (path, _, _) in run_files(&out) {
        let run = servebench::runfile::RunFile::read(&path).unwrap();
        assert_eq!(run.result.meta.endpoint.as_deref(), Some("embeddings"));
        assert!(run.result.ttft.is_none(), "{}", path.display());
        assert!(run.records.iter().all(|r| {
            r.response == servebench::record::ResponseForm::Whole && r.inputs == Some(4)
        }));
        seen += 1;
    }
    assert_eq!(seen, 8);
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    // The method says where the figures come from; the blocks print no TTFT figure.
    assert!(
        md.contains("the embeddings endpoint answers whole: request latency is its only timing"),
        "{md}"
    );
    assert!(
        md.contains("Mean Latency(s):")
            && md.contains("Mean TTFT (ms):                          N/A"),
        "{md}"
    );
    // The simulator serves completions only: such a study is refused before any run.
    let sim = text.replace(
        &good_engine("vLLM", 50),
        "[[engines]]\nname = \"vLLM\"\nkind = \"simulator\"\n",
    );
    let file = write_study(&dir, &sim);
    let o = run_cli(&["study", "plan", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("needs command engines"),
        "{err}"
    );
}

/// A study judged on agent sessions against the example server launched as a command:
/// the prefix-caching step (`--enable-prefix-caching` through `--engine-args`) on a
/// session profile with sub-agents (long shared histories). Every run is a session run —
/// its sessions complete, its sub-agents counted, the server's measured prefix hits
/// present once caching is on — and the step is judged better.
#[test]
fn a_study_judges_prefix_caching_on_agent_sessions_against_launched_servers() {
    let dir = tmp("sessions");
    // Speed 2: a run lasts about a second of wall time, long enough for the loopback
    // client's timing noise to stay small beside the step's effect.
    let text = study_text(&good_engine("vLLM", 2))
        .replace(
            "[profiles.a]",
            "[profiles.s]\ndataset_name = \"sessions\"\nrequest_rate = 1000\ntotal_requests = 28\n\
             [profiles.s.dataset]\nkind = \"sessions\"\nsessions = 4\nturns = 3\ninput_tokens = 1500\n\
             output_tokens = 16\ntool_result_tokens = 200\nfanout = 2\nsubagent_turns = 2\nseed = 5\n\n\
             [profiles.a]",
        )
        .replace("profiles = [\"a\", \"b\"]", "profiles = [\"s\"]")
        .replace("add = [\"--config=optimized\"]", "add = [\"--engine-args=--enable-prefix-caching\"]")
        .replace("name = \"Optimized\"", "name = \"Prefix Cache\"");
    let out = run_study(&dir, &text);
    let j = Journal::read(&out).unwrap();
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let mut cached = 0;
    for (path, _, _) in run_files(&out) {
        let run = servebench::runfile::RunFile::read(&path).unwrap();
        let f = run.result.sessions.as_ref().expect("a session run");
        assert_eq!(
            (f.sessions, f.complete, f.subagents),
            (4, 4, 8),
            "{}",
            path.display()
        );
        // Figures only where the server counts prefix-cache lookups (caching on).
        if let Some(p) = run.result.prefix_cache.as_ref() {
            assert!(p.implied_hit_rate > 0.5, "{p:?}");
            if p.measured_hit_rate.is_some_and(|m| m > 0.3) {
                cached += 1;
            }
        }
    }
    // The step's runs and the final configuration's: caching on, hits measured.
    assert!(cached >= 2, "{cached} runs with measured prefix hits");
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    let verdict = md
        .lines()
        .find(|l| l.starts_with("Kept:") || l.starts_with("Skipped:"))
        .unwrap_or_else(|| panic!("{md}"));
    eprintln!("{verdict}");
    assert!(verdict.starts_with("Kept: better"), "{verdict}");
    assert_no_server_left(&out);
}

/// `study run --metrics-listen ADDR` serves the run in progress's live metrics while the
/// study runs against launched servers: scraped mid-study, a run is under way (requests
/// sent and completed) and the runs started so far are counted.
#[test]
fn a_study_serves_live_metrics_while_it_runs() {
    use common::scrape::{scrape, value};
    use std::io::BufRead;
    let dir = tmp("live");
    // Speed 1 and 40 requests per run at 20 req/s: each run lasts about two seconds.
    let text = study_text(&good_engine("vLLM", 1)).replace(
        "request_rate = 1000\ntotal_requests = 6",
        "request_rate = 20\ntotal_requests = 40",
    );
    let file = write_study(&dir, &text);
    let out = dir.join("out");
    let mut child = Command::new(servebench())
        .args([
            "study",
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["-q", "--metrics-listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("study exited before listening")
            .unwrap();
        if let Some(rest) = line.strip_prefix("servebench: live metrics at http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let start = Instant::now();
    let body = loop {
        std::thread::sleep(Duration::from_millis(300));
        let t = scrape(&addr);
        let body = t.split("\r\n\r\n").nth(1).unwrap_or_default().to_string();
        if body.contains("servebench_requests_completed_total")
            && value(&body, "servebench_requests_completed_total") > 0.0
        {
            break body;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no run under way:\n{body}"
        );
    };
    assert!(
        value(&body, "servebench_runs_started_total") >= 1.0,
        "{body}"
    );
    assert!(
        value(&body, "servebench_requests_sent_total") >= 1.0,
        "{body}"
    );
    assert!(child.wait().unwrap().success());
    assert_no_server_left(&out);
}
