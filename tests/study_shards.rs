//! Sharded studies through the `servebench` binary against the `h200_server` example on
//! loopback: a study of three configurations (baseline and two ladder steps, each step
//! started from baseline so that the set of runs does not depend on the decisions) run
//! once unsharded and as two shard processes (`study run --shard K/2 --start-at
//! barrier:DIR`), then `study merge`d: every run's requests, tokens and (prompt, send
//! offset) pairs are the unsharded run's. A shard killed mid-study stops the other at the
//! next barrier with an error naming it; both resume with a fresh barrier directory and the
//! merged study is again the unsharded one. Bad input is refused by name.
#![cfg(all(feature = "study", feature = "cli", unix))]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use servebench::driver::Shard;
use servebench::runfile::RunFile;
use servebench::study::Journal;

mod common;
use common::example_server::example_server;

fn servebench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_servebench"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-shards-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The study: `engine_kind` `command` (the example server) or `simulator`.
fn study_text(engine_kind: &str) -> String {
    let engine = if engine_kind == "command" {
        format!(
            r#"command = ["{}", "--serve", "{{host}}:{{port}}", "--speed", "50", "{{flags}}"]
start_timeout_s = 20
stop_timeout_s = 5
request_timeout_s = 30"#,
            example_server().display()
        )
    } else {
        String::new()
    };
    format!(
        r#"format = "servebench-study"
version = 1
title = "Sharded example study"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "loopback"
seed = 11

[profiles.a]
dataset_name = "Random"
dataset_input_tokens = 64
dataset_output_tokens = 32
request_rate = 200
total_requests = 10

[profiles.b]
dataset_name = "Random"
dataset_input_tokens = 192
dataset_output_tokens = 16
request_rate = 300
total_requests = 7

[[engines]]
name = "vLLM"
kind = "{engine_kind}"
flags = ["--config=baseline"]
{engine}

[ladder]
profiles = ["a", "b"]

[[ladder.steps]]
name = "Optimized"
on = "baseline"
add = ["--config=optimized"]

[[ladder.steps]]
name = "Quantization"
on = "baseline"
model = "Qwen/Qwen3.5-35B-A3B-FP8"

[final]
profiles = ["a", "b"]
"#
    )
}

fn write_study(dir: &Path, kind: &str) -> PathBuf {
    let p = dir.join("study.in.toml");
    std::fs::write(&p, study_text(kind)).unwrap();
    p
}

fn cli(args: &[&str]) -> Output {
    Command::new(servebench()).args(args).output().unwrap()
}

fn spawn(args: &[&str]) -> Child {
    Command::new(servebench())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

impl Kids {
    /// Waits for every shard; (success, stderr) each.
    fn wait(mut self, limit: Duration) -> Vec<(bool, String)> {
        let t0 = Instant::now();
        let mut out = Vec::new();
        for c in &mut self.0 {
            loop {
                if let Some(st) = c.try_wait().unwrap() {
                    let mut err = String::new();
                    use std::io::Read;
                    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                    out.push((st.success(), err));
                    break;
                }
                assert!(t0.elapsed() < limit, "shards still running after {limit:?}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        out
    }
}

fn shard_run(study: &Path, out: &Path, k: u32, barrier: &Path, extra: &[&str]) -> Child {
    let mut args = vec![
        "study".to_string(),
        "run".into(),
        study.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(shard_args(k, barrier));
    args.extend(extra.iter().map(|s| s.to_string()));
    spawn(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn shard_args(k: u32, barrier: &Path) -> Vec<String> {
    vec![
        "--shard".into(),
        format!("{k}/2"),
        "--start-at".into(),
        format!("barrier:{}", barrier.display()),
        "--quiet".into(),
    ]
}

/// The unsharded study, run once for every test.
fn unsharded() -> &'static (PathBuf, Journal) {
    static U: OnceLock<(PathBuf, Journal)> = OnceLock::new();
    U.get_or_init(|| {
        let dir = tmp("unsharded");
        let study = write_study(&dir, "command");
        let out = dir.join("study");
        let o = cli(&[
            "study",
            "run",
            study.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let j = Journal::read(&out).unwrap();
        (out, j)
    })
}

use common::kids::Kids;
use common::request_keys::keys;

/// The merged study holds the unsharded study's runs, request for request.
fn assert_same_runs_as_unsharded(merged: &Path) {
    let (u_dir, u) = unsharded();
    let m = Journal::read(merged).unwrap();
    assert!(m.shard.is_none());
    assert_eq!(
        m.runs.keys().collect::<Vec<_>>(),
        u.runs.keys().collect::<Vec<_>>()
    );
    assert_eq!(m.runs.len(), 6, "3 configurations × 2 profiles");
    for (key, e) in &m.runs {
        let got = RunFile::read(merged.join(&e.file)).unwrap();
        let want = RunFile::read(u_dir.join(&u.runs[key].file)).unwrap();
        assert_eq!(got.shard, None);
        assert_eq!(got.records.len(), want.records.len(), "{key}");
        assert_eq!(
            got.result.successful_requests, want.result.successful_requests,
            "{key}"
        );
        assert_eq!(
            got.result.total_input_tokens,
            want.result.total_input_tokens
        );
        assert_eq!(
            got.result.total_output_tokens, want.result.total_output_tokens,
            "{key}"
        );
        assert_eq!(keys(&got), keys(&want), "{key}");
    }
    let md = std::fs::read_to_string(merged.join("STUDY.md")).unwrap();
    let umd = std::fs::read_to_string(u_dir.join("STUDY.md")).unwrap();
    let headings = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(headings(&md), headings(&umd));
    assert!(merged.join("study.json").exists());
}

/// Each shard's part of every run carries its shard; the two parts partition the run; the
/// shards decided on the run `study merge` writes.
fn assert_shard_dirs(s1: &Path, s2: &Path, merged: &Path) {
    let m = Journal::read(merged).unwrap();
    for (k, dir) in [(1, s1), (2, s2)] {
        let j = Journal::read(dir).unwrap();
        assert_eq!(j.shard, Some(Shard::new(k, 2).unwrap()));
        for (key, e) in &j.runs {
            let part = RunFile::read(dir.join(&e.file)).unwrap();
            assert_eq!(part.shard, Some(Shard::new(k, 2).unwrap()), "{key}");
            let whole = RunFile::read(merged.join(&m.runs[key].file)).unwrap();
            assert_eq!(
                part.records.len(),
                Shard::new(k, 2)
                    .unwrap()
                    .indices(whole.records.len())
                    .count()
            );
            assert!(part.records.iter().all(|r| r.id % 2 == u64::from(k - 1)));
            // What this shard decided on is what the merged study shows.
            let seen = RunFile::read(dir.join(e.merged.as_ref().unwrap())).unwrap();
            assert_eq!(seen.records, whole.records, "{key}");
            assert_eq!(seen.result, whole.result, "{key}");
        }
    }
    // Only shard 1 launched servers.
    let launched = |d: &Path| {
        Journal::read(d)
            .unwrap()
            .events
            .iter()
            .filter(|e| e.contains("launched pid"))
            .count()
    };
    assert!(launched(s1) >= 3, "{:?}", Journal::read(s1).unwrap().events);
    assert_eq!(launched(s2), 0);
}

fn merge(dirs: &[&Path], out: &Path) -> Output {
    let mut args = vec!["study".to_string(), "merge".into()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    Command::new(servebench()).args(&args).output().unwrap()
}

#[test]
fn two_shard_processes_run_and_merge_into_the_unsharded_study() {
    unsharded();
    let dir = tmp("two");
    let study = write_study(&dir, "command");
    let barrier = dir.join("barrier");
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    let kids = Kids(vec![
        shard_run(&study, &s1, 1, &barrier, &[]),
        shard_run(&study, &s2, 2, &barrier, &[]),
    ]);
    for (ok, err) in kids.wait(Duration::from_secs(240)) {
        assert!(ok, "{err}");
    }
    assert!(!s1.join("STUDY.md").exists(), "a shard writes no document");
    let merged = dir.join("merged");
    // Any order of the directories.
    let o = merge(&[&s2, &s1], &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_same_runs_as_unsharded(&merged);
    assert_shard_dirs(&s1, &s2, &merged);

    // Refusals, each naming the directory or run.
    let err = |o: Output| {
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = err(merge(&[&s1, &s1], &dir.join("m2")));
    assert!(e.contains("shard 1/2 is also"), "{e}");
    let e = err(merge(&[&s1], &dir.join("m2")));
    assert!(e.contains("shards [2] of 2 are missing"), "{e}");
    let e = err(merge(&[&s1, &unsharded().0], &dir.join("m2")));
    assert!(e.contains("not a shard of a study"), "{e}");
    // Another study: the title changed in a copy of shard 2's directory.
    let other = dir.join("other");
    copy_dir(&s2, &other);
    edit_journal(&other, |j| j["study"]["title"] = "Another study".into());
    let e = err(merge(&[&s1, &other], &dir.join("m2")));
    assert!(
        e.contains("study file differs") && e.contains("other"),
        "{e}"
    );
    // A run shard 2 never finished.
    let short = dir.join("short");
    copy_dir(&s2, &short);
    let gone = Journal::read(&short)
        .unwrap()
        .runs
        .keys()
        .next()
        .unwrap()
        .clone();
    edit_journal(&short, |j| {
        j["runs"].as_object_mut().unwrap().remove(&gone);
    });
    let e = err(merge(&[&s1, &short], &dir.join("m2")));
    assert!(
        e.contains(&format!("run {gone} is missing")) && e.contains("short"),
        "{e}"
    );
    assert!(!dir.join("m2").join("journal.json").exists());
    let e = err(merge(&[&s1, &s2], &merged));
    assert!(e.contains("holds a study already"), "{e}");
}

#[test]
fn a_killed_shard_stops_the_other_by_name_and_both_resume() {
    unsharded();
    let dir = tmp("killed");
    let study = write_study(&dir, "command");
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    let first = dir.join("barrier-1");
    let timeout = ["--shard-timeout-s", "15"];
    let mut kids = Kids(vec![
        shard_run(&study, &s1, 1, &first, &timeout),
        shard_run(&study, &s2, 2, &first, &timeout),
    ]);
    // Kill shard 2 (SIGKILL: it tells no one) once it has finished a run.
    let t0 = Instant::now();
    while Journal::read(&s2).map_or(0, |j| j.runs.len()) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no run finished");
        std::thread::sleep(Duration::from_millis(5));
    }
    kids.0[1].kill().unwrap();
    let results = kids.wait(Duration::from_secs(120));
    let (ok, err) = &results[0];
    assert!(!ok, "shard 1 must not finish alone");
    assert!(err.contains("[2] of 2 did not"), "{err}");
    let j1 = Journal::read(&s1).unwrap();
    assert!(j1.server.is_none(), "shard 1 stopped its server");
    assert!(j1.runs.len() < 6);
    // Not mergeable yet: a run only shard 1 finished, or a study neither finished.
    let o = merge(&[&s1, &s2], &dir.join("early"));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("resume"), "{e}");
    assert!(!dir.join("early").join("journal.json").exists());

    // Both resume, meeting in a fresh directory; the reused one is refused.
    let resume = |k: u32, dir: &Path, barrier: &Path| {
        let mut args = vec![
            "study".to_string(),
            "run".into(),
            "--resume".into(),
            dir.display().to_string(),
        ];
        args.extend(shard_args(k, barrier));
        spawn(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let reused = Kids(vec![resume(1, &s1, &first)]).wait(Duration::from_secs(60));
    assert!(
        !reused[0].0 && reused[0].1.contains("fresh barrier directory"),
        "{}",
        reused[0].1
    );
    let second = dir.join("barrier-2");
    let kids = Kids(vec![resume(1, &s1, &second), resume(2, &s2, &second)]);
    for (ok, err) in kids.wait(Duration::from_secs(240)) {
        assert!(ok, "{err}");
    }
    let merged = dir.join("merged");
    let o = merge(&[&s1, &s2], &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_same_runs_as_unsharded(&merged);
    assert_shard_dirs(&s1, &s2, &merged);
}

#[test]
fn ctrl_c_on_one_shard_stops_the_other_at_once() {
    let dir = tmp("ctrlc");
    let study = write_study(&dir, "command");
    let (s1, s2) = (dir.join("s1"), dir.join("s2"));
    let barrier = dir.join("barrier");
    let mut kids = Kids(vec![
        shard_run(&study, &s1, 1, &barrier, &[]),
        shard_run(&study, &s2, 2, &barrier, &[]),
    ]);
    let t0 = Instant::now();
    while Journal::read(&s2).map_or(0, |j| j.runs.len()) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no run finished");
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(kids.0[1].id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let stopped = Instant::now();
    let code = kids.0[1].wait().unwrap().code();
    assert_eq!(code, Some(130), "shard 2 was interrupted");
    let results = kids.wait(Duration::from_secs(60));
    // Not the 600 s timeout: shard 2 said it stopped.
    assert!(stopped.elapsed() < Duration::from_secs(60));
    let (ok, err) = &results[0];
    assert!(!ok);
    assert!(err.contains("shard 2 stopped: cancelled (Ctrl-C)"), "{err}");
    assert!(Journal::read(&s1).unwrap().server.is_none());
}

#[test]
fn bad_shard_requests_are_refused_by_name() {
    let dir = tmp("bad");
    let sim = write_study(&dir, "simulator");
    let s = sim.to_str().unwrap();
    let out = dir.join("out");
    let o = dir.join("out");
    let o = o.to_str().unwrap();
    let barrier = format!("barrier:{}", dir.join("b").display());
    let stderr = |args: &[&str]| {
        let r = cli(args);
        assert!(!r.status.success(), "{args:?}");
        String::from_utf8_lossy(&r.stderr).into_owned()
    };
    let run = ["study", "run", s, "--out", o];
    for (shard, why) in [
        ("3/2", "K must be between 1 and N"),
        ("0/2", "K must be between 1 and N"),
        ("2", "is not K/N"),
    ] {
        let e = stderr(&[&run[..], &["--shard", shard, "--start-at", &barrier]].concat());
        assert!(e.contains("--shard") && e.contains(why), "{shard}: {e}");
    }
    let e = stderr(&[&run[..], &["--shard", "1/2", "--start-at", &barrier]].concat());
    assert!(e.contains("engine `vLLM` is the embedded simulator"), "{e}");
    assert!(!out.join("journal.json").exists(), "nothing created");
    let e = stderr(&[&run[..], &["--shard", "1/2"]].concat());
    assert!(e.contains("needs --start-at barrier:DIR"), "{e}");
    let e = stderr(
        &[
            &run[..],
            &["--shard", "1/2", "--start-at", "2026-12-03T19:00:00Z"],
        ]
        .concat(),
    );
    assert!(e.contains("needs --start-at barrier:DIR"), "{e}");
    let e = stderr(&[&run[..], &["--start-at", &barrier]].concat());
    assert!(e.contains("give --shard K/N"), "{e}");
    assert!(!out.join("journal.json").exists(), "nothing created");
    // Nor can a simulator study's directory be resumed as a shard. (The simulator does not
    // model the example server's `--config=…`: the study finishes with that configuration
    // not measured, exit 4.)
    let ok = cli(&run);
    assert_eq!(
        ok.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let e = stderr(&[
        "study",
        "run",
        "--resume",
        o,
        "--shard",
        "1/2",
        "--start-at",
        &barrier,
    ]);
    assert!(e.contains("embedded simulator"), "{e}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn edit_journal(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join("journal.json");
    let mut j: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    f(&mut j);
    std::fs::write(&p, serde_json::to_vec_pretty(&j).unwrap()).unwrap();
}
