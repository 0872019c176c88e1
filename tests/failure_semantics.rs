//! Failure semantics and secrets, through the `servebench` binary and the real `h200_server`
//! example: no key in any byte of any file written, printed commands that paste into `sh`
//! as the argument vector meant, no server outliving a SIGKILLed runner, exit codes that
//! tell the truth, impossible values refused or linted, and the smaller CLI promises.
#![cfg(all(feature = "study", feature = "cli", unix))]

mod common;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::example_server::example_server;
use common::kids::Kids;
use servebench::study::journal::Journal;
use servebench::study::process::group_alive;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-fs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The example server on a free loopback port with `extra` flags; its URL. Killed with `kids`.
fn start_server(kids: &mut Kids, extra: &[&str]) -> String {
    let port = free_port();
    let child = Command::new(example_server())
        .args(["--serve", &format!("127.0.0.1:{port}"), "--speed", "50"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    kids.0.push(child);
    wait_for("the example server", Duration::from_secs(60), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    format!("http://127.0.0.1:{port}")
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Asserts that no byte sequence of `secret` occurs in any file under `dir`; the number of
/// files scanned.
fn assert_secret_nowhere(dir: &Path, secret: &str) -> usize {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{} holds the key",
            f.display()
        );
    }
    files.len()
}

/// The argument vector `sh` runs for the pasted `command` (a printed command line, with
/// its `\` line continuations), read back with `printf '%s\0'` in `cwd`.
fn sh_argv(command: &str, cwd: &Path) -> Vec<String> {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {command}"))
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "sh: {}", stderr(&o));
    let mut words: Vec<String> = o
        .stdout
        .split(|b| *b == 0)
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect();
    assert_eq!(words.pop().as_deref(), Some(""), "NUL-terminated");
    words
}

/// Hostile flags: braces, a command list with substitutions, quotes, spaces, a newline,
/// globs, a tilde, a comment, a variable.
fn hostile_flags() -> Vec<String> {
    [
        "--brace={a,b}",
        "--list=; touch x $(touch y)",
        "--back=`touch z`",
        r#"--quotes=it's "quoted""#,
        "--two words",
        "--new\nline",
        "--glob=*",
        "~",
        "#comment",
        "--var=$HOME",
        "--and=a&&b|c>d<e",
        "",
    ]
    .map(String::from)
    .to_vec()
}

/// Every flag of both shipped study files (engine flags, steps' and final additions).
fn shipped_flags() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in [
        "studies/qwen3.5-h200-throughput.toml",
        "studies/qwen3.5-h200-latency.toml",
    ] {
        let s = servebench::study::StudyFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(f))
            .unwrap();
        let flags = s
            .engines
            .iter()
            .flat_map(|e| e.flags.clone())
            .chain(s.ladder.steps.iter().flat_map(|st| st.add.clone()))
            .chain(s.final_.add.clone());
        for flag in flags {
            if !out.contains(&flag) {
                out.push(flag);
            }
        }
    }
    assert!(out.iter().any(|f| f.starts_with("--speculative-config={")));
    out
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// A one-configuration study of the example server: `engine` is the `[[engines]]` table's
/// body after its name; `final_add` the final additions.
fn study_text(engine: &str, final_add: &[String], total_requests: u64) -> String {
    format!(
        r#"format = "servebench-study"
version = 1
title = "Failure semantics"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "loopback"

[profiles.a]
dataset_name = "Random"
dataset_input_tokens = 32
dataset_output_tokens = 8
request_rate = 1000
total_requests = {total_requests}

[[engines]]
name = "vLLM"
kind = "command"
start_timeout_s = 30
stop_timeout_s = 5
request_timeout_s = 30
{engine}

[ladder]
profiles = ["a"]

[final]
profiles = ["a"]
add = {}
"#,
        toml_list(final_add)
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn study_run(file: &Path, out: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(["study", "run"])
        .arg(file)
        .arg("--out")
        .arg(out)
        .arg("-q")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// 1. Secrets

#[test]
fn bench_writes_the_key_in_no_file_whichever_way_it_was_given() {
    let key = "sk-servebench-test-7f3a9c1e";
    let mut kids = Kids(Vec::new());
    let target = start_server(&mut kids, &["--api-key", key]);
    let dir = tmp("bench-key");
    let load = [
        "--input-tokens",
        "16",
        "--output-tokens",
        "4",
        "--max-requests",
        "4",
        "--quiet",
    ];
    let runs: [(Vec<String>, Option<&str>); 4] = [
        (vec!["--api-key".into(), key.into()], None),
        (vec![format!("--api-key={key}")], None),
        (Vec::new(), Some(key)),
        (
            vec!["--api-key".into(), key.into(), "--save-result".into()],
            None,
        ),
    ];
    for (i, (flags, env)) in runs.iter().enumerate() {
        let mut cmd = Command::new(BIN);
        cmd.args(["bench", "--target", &target])
            .args(load)
            .args(flags)
            .env_remove("OPENAI_API_KEY");
        if flags.iter().any(|f| f == "--save-result") {
            cmd.arg("--result-dir").arg(dir.join("saved"));
        } else {
            cmd.arg("--output").arg(dir.join(format!("run{i}.json")));
        }
        if let Some(k) = env {
            cmd.env("OPENAI_API_KEY", k);
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{flags:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains(key));
        assert!(!String::from_utf8_lossy(&o.stdout).contains(key));
    }
    // The key was needed: without it every request is refused.
    let o = Command::new(BIN)
        .args(["bench", "--target", &target])
        .args(load)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "the server requires the key");
    // The run files say a key was given, not which.
    let run = servebench::runfile::RunFile::read(dir.join("run0.json")).unwrap();
    assert!(run
        .command_line
        .windows(2)
        .any(|w| w == ["--api-key", "***"]));
    let run = servebench::runfile::RunFile::read(dir.join("run1.json")).unwrap();
    assert!(run.command_line.iter().any(|a| a == "--api-key=***"));
    let n = assert_secret_nowhere(&dir, key);
    assert_eq!(n, 4, "four run files written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_study_writes_the_key_in_no_file_and_refuses_an_unset_or_written_key() {
    let key = "sk-study-test-0c9d2e71b4";
    let var = "SERVEBENCH_TEST_STUDY_KEY";
    let dir = tmp("study-key");
    let engine = format!(
        r#"flags = ["--config=baseline"]
api_key_env = "{var}"
command = ["{}", "--serve", "{{host}}:{{port}}", "--speed", "50", "--api-key", "{{api_key}}", "{{flags}}"]"#,
        example_server().display()
    );
    let file = write(&dir, "study.toml", &study_text(&engine, &[], 4));
    let out = dir.join("out");
    let o = study_run(&file, &out, &[(var, key)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains(key));
    let j = Journal::read(&out).unwrap();
    assert_eq!(j.runs.len(), 1, "{:?}", j.failures);
    // Journal, run files, logs, STUDY.md, study.json, report.html: no byte of the key.
    let n = assert_secret_nowhere(&out, key);
    assert!(n >= 5, "{n} files");
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    assert!(md.contains("--api-key '{api_key}'"), "{md}");

    // An unset variable is an error naming it, before anything is made or launched.
    let unset = dir.join("unset");
    let o = Command::new(BIN)
        .args(["study", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&unset)
        .env_remove(var)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(var), "{}", stderr(&o));
    assert!(!unset.exists());
    // So is an empty one.
    let o = study_run(&file, &unset, &[(var, "")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    // A key written in the study file itself is refused, by its flag, in either spelling.
    for flags in [
        vec![format!("--api-key={key}")],
        vec!["--api-key".to_string(), key.to_string()],
    ] {
        let engine = format!(
            "flags = {}\ncommand = [\"{}\", \"{{flags}}\"]",
            toml_list(&flags),
            example_server().display()
        );
        let bad = write(&dir, "bad.toml", &study_text(&engine, &[], 4));
        let o = study_run(&bad, &dir.join("bad"), &[]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("engines[0].flags") && stderr(&o).contains("api_key_env"),
            "{}",
            stderr(&o)
        );
        assert!(!dir.join("bad").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// 2. Paste-safe commands

#[test]
fn the_printed_serving_command_pasted_into_sh_runs_the_studys_argument_vector() {
    let dir = tmp("quoting");
    let server = example_server();
    // The server ignores the flags (they follow `sh -c`'s script as unused arguments), so
    // that any flag can be carried through a real study to its document.
    let engine = format!(
        "flags = {}\ncommand = {}",
        toml_list(&shipped_flags()),
        toml_list(&[
            "/bin/sh".into(),
            "-c".into(),
            r#"exec "$0" --serve "$1" --speed 50 --config=baseline"#.into(),
            server.display().to_string(),
            "{host}:{port}".into(),
            "{flags}".into(),
        ])
    );
    let hostile = hostile_flags();
    let file = write(&dir, "study.toml", &study_text(&engine, &hostile, 4));
    let out = dir.join("out");
    let o = study_run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    let printed = md
        .split("### Serving Command\n\n```\n")
        .nth(1)
        .and_then(|s| s.split("\n```\n").next())
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(json["serving_command"].as_str(), Some(printed));
    let flags: Vec<String> =
        serde_json::from_value(json["analysis"]["recommended"]["flags"].clone()).unwrap();
    for f in shipped_flags().iter().chain(&hostile) {
        assert!(flags.contains(f), "{f:?} is not in the recommended flags");
    }
    let mut want: Vec<String> = vec![
        "/bin/sh".into(),
        "-c".into(),
        r#"exec "$0" --serve "$1" --speed 50 --config=baseline"#.into(),
        server.display().to_string(),
        "{host}:{port}".into(),
    ];
    want.extend(flags);
    let sandbox = tmp("quoting-sandbox");
    assert_eq!(sh_argv(printed, &sandbox), want, "{printed}");
    assert_eq!(
        std::fs::read_dir(&sandbox).unwrap().count(),
        0,
        "pasting ran a command"
    );

    // The simulator's `vllm serve` form, for every shipped and hostile flag.
    let mut flags = shipped_flags();
    flags.extend(hostile);
    let cmd = servebench::format::gpustack::serving_command("vLLM", "Org/M 1", &flags);
    let mut want: Vec<String> = vec!["vllm".into(), "serve".into(), "Org/M 1".into()];
    want.extend(flags.iter().cloned());
    assert_eq!(sh_argv(&cmd, &sandbox), want, "{cmd}");
    let cmd = servebench::format::gpustack::serving_command("SGLang", "m", &flags);
    let mut want: Vec<String> = ["python3", "-m", "sglang.launch_server", "--model", "m"]
        .map(String::from)
        .to_vec();
    want.extend(flags.iter().cloned());
    assert_eq!(sh_argv(&cmd, &sandbox), want, "{cmd}");
    assert_eq!(std::fs::read_dir(&sandbox).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&sandbox);
}

#[test]
fn printed_guidellm_commands_and_resume_hints_paste_as_meant() {
    let sandbox = tmp("guidellm-sandbox");
    let (target, model) = ("http://h:1/a b;$(touch t)", "/m's dir/{x,y}");
    for syntax in ["benchmark", "run"] {
        let o = Command::new(BIN)
            .args(["profiles", "latency", "--syntax", syntax, "--guidellm"])
            .args([target, model])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let cmd = text.split("\n\n").nth(1).unwrap().trim_end();
        let argv = sh_argv(cmd, &sandbox);
        let (t, m) = if syntax == "run" {
            (
                format!("kind=openai_http,target={target}"),
                format!("kind=hf_auto,model={model}"),
            )
        } else {
            (target.to_string(), model.to_string())
        };
        let at = |flag: &str| argv[argv.iter().position(|a| a == flag).unwrap() + 1].clone();
        let (tflag, mflag) = if syntax == "run" {
            ("--backend", "--tokenizer")
        } else {
            ("--target", "--processor")
        };
        assert_eq!((at(tflag), at(mflag)), (t, m), "{cmd}");
    }
    assert_eq!(std::fs::read_dir(&sandbox).unwrap().count(), 0);

    // The resume hint of a directory that already holds a study.
    let dir = tmp("resume hint $(touch r) 'q'");
    let sim = r#"format = "servebench-study"
version = 1
title = "T"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "NVIDIA H200"
[profiles.tiny]
dataset_name = "Random"
dataset_input_tokens = 16
dataset_output_tokens = 4
request_rate = 1000
total_requests = 4
[[engines]]
name = "vLLM"
kind = "simulator"
[ladder]
profiles = ["tiny"]
[final]
profiles = ["tiny"]
"#;
    let file = write(&dir, "s.toml", sim);
    let out = dir.join("out {a,b}");
    assert!(study_run(&file, &out, &[]).status.success());
    let o = study_run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let hint = err.split("continue it with `").nth(1).unwrap();
    let hint = &hint[..hint.rfind('`').unwrap()];
    assert_eq!(
        sh_argv(hint, &sandbox),
        [
            "servebench",
            "study",
            "run",
            "--resume",
            out.to_str().unwrap()
        ]
    );
    assert_eq!(std::fs::read_dir(&sandbox).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&sandbox);
}

// ---------------------------------------------------------------------------------------
// 3. No orphans

/// The pids of live (not zombie) processes whose argument vector is `argv`.
fn live_with_argv(argv: &[String]) -> Vec<i32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, r)| &r[..1]).unwrap_or("Z");
        if cmdline == want && state != "Z" && state != "X" {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_sigkilled_study_runner_leaves_no_server_alive() {
    let dir = tmp("orphan");
    // Slow (speed 2) and long enough that the run is in flight when the runner is killed.
    let engine = format!(
        r#"flags = ["--config=baseline"]
command = ["{}", "--serve", "{{host}}:{{port}}", "--speed", "2", "{{flags}}"]"#,
        example_server().display()
    );
    let file = write(&dir, "study.toml", &study_text(&engine, &[], 400));
    let out = dir.join("out");
    let child = Command::new(BIN)
        .args(["study", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("-q")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut kids = Kids(vec![child]);
    let mut live = None;
    wait_for("a launched server", Duration::from_secs(60), || {
        live = Journal::read(&out).ok().and_then(|j| j.server);
        live.is_some()
    });
    let live = live.unwrap();
    // The server is up and serving (its port answers), then the runner is SIGKILLed.
    let port: u16 = live.argv[2].rsplit(':').next().unwrap().parse().unwrap();
    wait_for("the server's port", Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(group_alive(live.pid));
    assert_eq!(live_with_argv(&live.argv), [live.pid]);
    let runner = &mut kids.0[0];
    runner.kill().unwrap();
    runner.wait().unwrap();
    // The watchdog sees its pipe close and kills the server's group.
    wait_for("the server's end", Duration::from_secs(10), || {
        !group_alive(live.pid)
    });
    assert!(live_with_argv(&live.argv).is_empty(), "a server survived");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the port is still held"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
