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
use servebench::study::group_alive;
use servebench::study::{Journal, LiveServer};

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
    sh_argv_with(command, cwd, &[])
}

/// [`sh_argv`] with the shell variables `vars` set (a template's `${target}` filled in).
fn sh_argv_with(command: &str, cwd: &Path, vars: &[(&str, &str)]) -> Vec<String> {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {command}"))
        .current_dir(cwd)
        .envs(vars.iter().copied())
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
    // The serving command runs when pasted: the key is the variable's reference (filled
    // by the shell, never written), host and port are filled.
    assert!(
        md.contains(&format!("--api-key \"${{{var}}}\"")) && md.contains("127.0.0.1:8000"),
        "{md}"
    );
    assert!(!md.contains("{api_key}") && !md.contains("{port}"), "{md}");

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

/// `study run FILE --out OUT -q` in the background (with `env` set), until the server it
/// launched is in the journal and its port answers (argument `port_arg` of the server's
/// argument vector holds `host:port`): the runner, the server and its port.
fn study_until_serving(
    file: &Path,
    out: &Path,
    env: &[(&str, &str)],
    port_arg: usize,
) -> (Kids, LiveServer, u16) {
    let child = Command::new(BIN)
        .args(["study", "run"])
        .arg(file)
        .arg("--out")
        .arg(out)
        .arg("-q")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let kids = Kids(vec![child]);
    let mut live = None;
    wait_for("a launched server", Duration::from_secs(60), || {
        live = Journal::read(out).ok().and_then(|j| j.server);
        live.is_some()
    });
    let live = live.unwrap();
    let port: u16 = live.argv[port_arg]
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    wait_for("the server's port", Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    (kids, live, port)
}

#[test]
fn a_server_that_prints_its_key_leaves_no_key_in_its_log_even_when_the_runner_is_sigkilled() {
    let key = "sk-log-test-5e8a1f0c27";
    let var = "SERVEBENCH_TEST_LOG_KEY";
    let dir = tmp("log-key");
    // A launch command that prints the key before it becomes the server (as vLLM prints
    // its arguments), slow enough that the run is in flight when the runner is killed.
    let engine = format!(
        r#"flags = ["--config=baseline"]
api_key_env = "{var}"
command = ["/bin/sh", "-c", "echo \"starting, key=$1\"; exec \"$0\" --serve \"$2\" --speed 2 --api-key \"$1\" \"$3\"", "{}", "{{api_key}}", "{{host}}:{{port}}", "{{flags}}"]"#,
        example_server().display()
    );
    let file = write(&dir, "study.toml", &study_text(&engine, &[], 400));
    let out = dir.join("out");
    let (mut kids, live, _port) = study_until_serving(&file, &out, &[(var, key)], 5);
    // The server's first line has reached its log, redacted on the way.
    let logs = out.join("logs");
    let log_text = || -> String {
        std::fs::read_dir(&logs)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect()
    };
    wait_for(
        "the server's first log line",
        Duration::from_secs(10),
        || log_text().contains("starting, key="),
    );
    let runner = &mut kids.0[0];
    runner.kill().unwrap();
    runner.wait().unwrap();
    wait_for("the server's end", Duration::from_secs(10), || {
        !group_alive(live.pid)
    });
    // No cleanup ran after the SIGKILL, and still no byte of the key is in any file.
    assert!(log_text().contains("starting, key=***"), "{}", log_text());
    let n = assert_secret_nowhere(&out, key);
    assert!(n >= 2, "{n} files");
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
        // Filled: the study file's host, and (its port being 0, a free one per launch)
        // vLLM's default port.
        "127.0.0.1:8000".into(),
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

#[test]
fn the_guidellm_commands_of_the_study_document_paste_as_meant() {
    let dir = tmp("study-guidellm");
    let sandbox = tmp("study-guidellm-sandbox");
    // Dataset files whose paths hold every kind of shell syntax (they are read only when a
    // run is made, but they exist).
    let hostile = dir.join("data $(touch d) {a,b} 'q' ~ #c");
    std::fs::create_dir_all(&hostile).unwrap();
    let sharegpt = write(&hostile, "sg;`touch s`*.json", "[]");
    let jsonl = write(&hostile, "p \"x\" $HOME&.jsonl", "{\"prompt\": \"hi\"}\n");
    let never = "flags = []\ncommand = [\"sleep\", \"30\"]";
    let text = study_text(never, &[], 4)
        .replace("start_timeout_s = 30\n", "start_timeout_s = 1\n")
        .replace(
            "[[engines]]",
            &format!(
                r#"[profiles.sg]
dataset_name = "ShareGPT"
dataset_path = {}
request_rate = 2.5
total_requests = 4
max_concurrency = 8

[profiles.jl]
dataset_name = "jsonl"
request_rate = 1
total_requests = 4
dataset = {{ kind = "jsonl", path = {}, default_output_tokens = 4 }}

[profiles.sp]
dataset_name = "shared-prefix"
request_rate = 1
total_requests = 4
dataset = {{ kind = "shared-prefix", groups = 1, prompts_per_group = 4, prefix_tokens = 8, input_tokens = 8, output_tokens = 4, seed = 1 }}

[[engines]]"#,
                serde_json::to_string(&sharegpt.to_str().unwrap()).unwrap(),
                serde_json::to_string(&jsonl.to_str().unwrap()).unwrap(),
            ),
        )
        .replace(
            "[ladder]\nprofiles = [\"a\"]",
            "[ladder]\nprofiles = [\"a\", \"sg\", \"jl\", \"sp\"]",
        );
    let file = write(&dir, "study.toml", &text);
    let out = dir.join("out");
    // The server never starts (exit 4), and the document is written all the same.
    let o = study_run(&file, &out, &[]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    let section = md
        .split("### Open-Source Replacement\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    let commands: Vec<&str> = section
        .split("```\n")
        .skip(1)
        .step_by(2)
        .map(|c| c.trim_end())
        .collect();
    // The reader fills the seed's `${placeholders}`.
    let vars = [
        ("target", "http://127.0.0.1:8000"),
        ("model_path", "/models/Qwen3.5-35B-A3B"),
        ("request_rate", "2.5"),
        ("total_requests", "100"),
        ("dataset_input_tokens", "1024"),
        ("dataset_output_tokens", "128"),
    ];
    let common = |first: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = first.iter().map(|s| s.to_string()).collect();
        v.extend(
            [
                "--target",
                "http://127.0.0.1:8000",
                "--profile",
                "constant",
                "--rate",
                "2.5",
                "--max-requests",
                "100",
                "--processor",
                "/models/Qwen3.5-35B-A3B",
                "--data",
            ]
            .map(String::from),
        );
        v
    };
    let mut random = common(&["guidellm", "benchmark"]);
    random.extend(
        [
            "prompt_tokens=1024,output_tokens=128",
            "--random-seed",
            "42",
        ]
        .map(String::from),
    );
    let mut sg = common(&["GUIDELLM__MAX_CONCURRENCY=8", "guidellm", "benchmark"]);
    sg.push(sharegpt.display().to_string());
    let mut jl = common(&["guidellm", "benchmark"]);
    jl.push(jsonl.display().to_string());
    let mut sp = common(&["guidellm", "benchmark"]);
    sp.push("servebench dataset `shared-prefix`: no guidellm equivalent".into());
    let want = [random, sg, jl, sp];
    assert_eq!(commands.len(), want.len(), "{section}");
    for (cmd, want) in commands.iter().zip(&want) {
        assert_eq!(&sh_argv_with(cmd, &sandbox, &vars), want, "{cmd}");
    }
    assert_eq!(
        std::fs::read_dir(&sandbox).unwrap().count(),
        0,
        "pasting ran a command"
    );
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
    // The server is up and serving (its port answers), then the runner is SIGKILLed.
    let (mut kids, live, port) = study_until_serving(&file, &out, &[], 2);
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
    // The port is let go (retried: the kernel may take a moment to tear the socket down).
    wait_for("the server's port to close", Duration::from_secs(5), || {
        TcpStream::connect(("127.0.0.1", port)).is_err()
    });
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// 4. Exit codes that tell the truth

#[test]
fn bench_stops_soon_after_its_server_dies_saves_what_it_has_and_exits_4() {
    let dir = tmp("bench-gone");
    let port = free_port();
    // The example server, SIGKILLed by `timeout` 4 s after its start.
    let server = Command::new("timeout")
        .args(["-s", "KILL", "4"])
        .arg(example_server())
        .args(["--serve", &format!("127.0.0.1:{port}"), "--speed", "50"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // When the server died, on the wall clock (the run file's clock): `timeout` exits as
    // soon as it has killed it. (It ends by itself within 4 s, so no child is left behind
    // if the test fails.)
    let died = std::thread::spawn(move || {
        let mut server = server;
        server.wait().unwrap();
        chrono::Utc::now()
    });
    wait_for("the example server", Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let out = dir.join("run.json");
    // 200 requests at 10/s: 20 s of schedule, of which the server serves the first few.
    let o = Command::new(BIN)
        .args([
            "bench",
            "-q",
            "--target",
            &format!("http://127.0.0.1:{port}"),
        ])
        .args(["--input-tokens", "16", "--output-tokens", "4"])
        .args(["--max-requests", "200", "--rate", "10", "--no-scrape"])
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    let ended = chrono::Utc::now();
    let died = died.join().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("the measurement failed: the server is gone"),
        "{err}"
    );
    // The report was printed and the run saved, marked as stopped early.
    assert!(String::from_utf8_lossy(&o.stdout).contains("Successful requests"));
    let run = servebench::runfile::RunFile::read(&out).unwrap();
    assert!(!run.status.is_complete());
    let ok = run
        .records
        .iter()
        .filter(|r| r.outcome.is_success())
        .count();
    assert!(ok >= 5, "{ok} requests succeeded before the end");
    // Stopped about 2 s after the server was gone, not at the end of the schedule: the
    // last request was sent at most 4 s after the death (2 s of window, slack for a loaded
    // machine), where the schedule ran on for more than 10 s.
    let sent = |r: &servebench::record::RequestRecord| {
        run.started_at + chrono::Duration::from_std(r.sent_at).unwrap()
    };
    let last = run.records.iter().map(sent).max().unwrap();
    let after = (last - died.fixed_offset()).to_std().unwrap_or_default();
    assert!(
        after <= Duration::from_secs(4),
        "the last request was sent {after:?} after the server died"
    );
    assert!(
        run.records.len() < 150,
        "{} requests sent",
        run.records.len()
    );
    // Requests were sent to the dead server (that is how it was found gone), and every one
    // sent after the death failed; the bench ended soon after.
    let failed = run
        .records
        .iter()
        .filter(|r| !r.outcome.is_success())
        .count();
    assert!(failed >= 3, "{failed} failed");
    for r in &run.records {
        if sent(r) > died.fixed_offset() {
            assert!(!r.outcome.is_success(), "request {} after the death", r.id);
        }
    }
    let gone = (ended - died).to_std().unwrap_or_default();
    assert!(
        gone <= Duration::from_secs(8),
        "bench ended {gone:?} after the death"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_fails_the_measurement_above_the_failed_share_it_is_given() {
    let mut kids = Kids(Vec::new());
    // Every fourth request answers 500: a quarter fails.
    let target = start_server(&mut kids, &["--fault", "500:4"]);
    let bench = |extra: &[&str]| {
        Command::new(BIN)
            .args(["bench", "--quiet", "--target", &target])
            .args(["--input-tokens", "16", "--output-tokens", "4"])
            .args(["--max-requests", "12", "--max-concurrency", "1"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = bench(&[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "default share 0.5: {}",
        stderr(&o)
    );
    let o = bench(&["--max-failed-share", "0.2"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the measurement failed: 3 of 12 requests failed (25 %"),
        "{}",
        stderr(&o)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("Failed requests"));
    let o = bench(&["--max-failed-share", "1.5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_study_with_an_unmeasured_configuration_exits_4_and_says_so_and_empty_profiles_are_refused() {
    let dir = tmp("study-exit");
    let never = "flags = []\ncommand = [\"sleep\", \"30\"]";
    let text = study_text(never, &[], 4).replace("start_timeout_s = 30\n", "start_timeout_s = 1\n");
    let file = write(&dir, "never.toml", &text);
    let out = dir.join("out");
    let o = study_run(&file, &out, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("could not be measured: the server did not become healthy within 1 s"),
        "-q still names the failure on the console: {err}"
    );
    assert!(err.contains("--resume"), "{err}");
    assert!(out.join("STUDY.md").exists());

    // A profile of no request is refused before anything runs.
    let engine = format!(
        "flags = []\ncommand = [\"{}\", \"--serve\", \"{{host}}:{{port}}\", \"{{flags}}\"]",
        example_server().display()
    );
    let file = write(&dir, "zero.toml", &study_text(&engine, &[], 0));
    let o = study_run(&file, &dir.join("zero"), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("profiles.a.total_requests: must be at least 1"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("zero").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_study_whose_server_dies_mid_run_exits_4_names_the_configuration_and_resumes() {
    let dir = tmp("study-died");
    let engine = format!(
        r#"flags = ["--config=baseline"]
command = ["{}", "--serve", "{{host}}:{{port}}", "--speed", "50", "{{flags}}"]"#,
        example_server().display()
    );
    // 480 requests at 40/s: 12 s of schedule, a second into which the server is killed.
    let text =
        study_text(&engine, &[], 480).replace("request_rate = 1000\n", "request_rate = 40\n");
    let file = write(&dir, "study.toml", &text);
    let out = dir.join("out");
    // Not quiet: the progress lines say when the measurement starts.
    let mut child = Command::new(BIN)
        .args(["study", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let mut kids = Kids(vec![child]);
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(err).lines() {
            let line = line.unwrap();
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    // The prefix cache of the server is reset just before the run's first request.
    let Some(started) = rx.iter().find(|l| l.contains("a r1: prefix cache")) else {
        let status = kids.0[0].wait().unwrap();
        panic!(
            "the run never started ({status}): {}",
            reader.join().unwrap()
        );
    };
    assert!(
        started.contains("reset: POST /reset_prefix_cache"),
        "{started}"
    );
    let live = Journal::read(&out).unwrap().server.expect("a live server");
    // A second into the run, the server dies (SIGKILL, as a crashed engine would).
    std::thread::sleep(Duration::from_secs(1));
    let killed = Instant::now();
    let o = Command::new("kill")
        .args(["-KILL", &live.pid.to_string()])
        .status()
        .unwrap();
    assert!(o.success());
    let status = kids.0[0].wait().unwrap();
    let stopped = killed.elapsed();
    let err = reader.join().unwrap();
    assert_eq!(status.code(), Some(4), "{err}");
    // It stopped soon after the death (2 s of failed connections, a grace for the exit to
    // show, the document; slack for a loaded machine), not at the schedule's end 11 s on.
    assert!(stopped < Duration::from_secs(9), "{stopped:?}\n{err}");
    // The console names the configuration, the run and why, with its log, then the resume.
    let key = &live.config;
    let reason = "the server exited (signal 9) during a repetition 1";
    assert!(
        err.contains(&format!(
            "servebench: configuration {key} could not be measured: {reason} (log: "
        )),
        "{err}"
    );
    assert!(
        err.contains("1 configuration(s) not measured (exit 4); retry them with `servebench study run --resume"),
        "{err}"
    );
    // The journal records the failure (retryable, with its log) and no run; no server is
    // recorded as live, and none is.
    let j = Journal::read(&out).unwrap();
    let f = &j.failures[key];
    assert_eq!(f.reason, reason);
    assert!(f.retryable);
    assert!(out.join(f.log.as_ref().unwrap()).exists());
    assert!(j.runs.is_empty(), "{:?}", j.runs);
    assert!(j.server.is_none());
    assert!(
        j.events
            .iter()
            .any(|e| e == &format!("{key}: failed: {reason}")),
        "{:?}",
        j.events
    );
    assert!(!group_alive(live.pid));
    let md = std::fs::read_to_string(out.join("STUDY.md")).unwrap();
    assert!(md.contains(reason), "the document says so too");

    // The printed resume measures it, with a fresh server.
    let o = Command::new(BIN)
        .args(["study", "run", "-q", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = Journal::read(&out).unwrap();
    assert_eq!(j.runs.len(), 1, "{:?}", j.failures);
    assert!(j.failures.is_empty(), "{:?}", j.failures);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// 5. Impossible values

/// A real run file: `bench` against the example server.
fn real_run_file(dir: &Path) -> (PathBuf, serde_json::Value) {
    let mut kids = Kids(Vec::new());
    let target = start_server(&mut kids, &[]);
    let path = dir.join("run.json");
    let o = Command::new(BIN)
        .args(["bench", "-q", "--target", &target])
        .args(["--input-tokens", "16", "--output-tokens", "8"])
        .args(["--max-requests", "8", "--no-scrape", "--output"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (path, v)
}

fn write_json(path: &Path, v: &serde_json::Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap()).unwrap();
}

fn verb(args: &[&str], file: &Path) -> Output {
    Command::new(BIN).args(args).arg(file).output().unwrap()
}

#[test]
fn impossible_times_are_refused_by_every_verb_and_impossible_orders_are_linted() {
    let dir = tmp("impossible");
    let (path, run) = real_run_file(&dir);
    // The real file: reported, linted clean of the new codes; `--percentiles` alone works.
    let o = verb(&["report", "--percentiles", "50,90"], &path);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("P90 TTFT (ms):"), "{text}");
    assert!(text.contains("Median TTFT (ms):"), "{text}");
    let o = verb(&["lint"], &path);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("impossible-timing") && !out.contains("peak-below-mean"));

    // ended_at = u64::MAX seconds: refused by report, lint and compare, naming the request.
    let mut bad = run.clone();
    bad["records"][2]["ended_at"]["secs"] = u64::MAX.into();
    let late = dir.join("late.json");
    write_json(&late, &bad);
    let id = bad["records"][2]["id"].as_u64().unwrap();
    let refused = |args: &[&str], o: &Output| {
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "request {id}: ended_at is 18446744073709551616 s after"
            )) && err.contains("past any plausible clock"),
            "{args:?}: {err}"
        );
        assert!(!String::from_utf8_lossy(&o.stdout).contains("18446744073709551616"));
    };
    for args in [&["report"][..], &["lint"], &["render"], &["slices"]] {
        refused(args, &verb(args, &late));
    }
    // `compare`, the bad file on either side of a good one: refused, naming the file.
    for (base, candidate) in [(&path, &late), (&late, &path)] {
        let o = Command::new(BIN)
            .arg("compare")
            .args([base, candidate])
            .output()
            .unwrap();
        refused(&["compare"], &o);
        assert!(
            stderr(&o).contains(&format!("{}: ", late.display())),
            "{}",
            stderr(&o)
        );
    }
    // A duration past any clock in a result.
    let mut bad = run.clone();
    bad["result"]["duration_ms"] = 1.0e30.into();
    let long = dir.join("long.json");
    write_json(&long, &bad);
    let o = verb(&["report"], &long);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the duration is"), "{}", stderr(&o));

    // A chunk before its send, an end before the send, an end before the last chunk: lint
    // finds each (exit 3), counted apart. A bad record is first put in order (sent at
    // `base` s, its chunks 1 ms apart after that, ended 1 ms after the last), then broken
    // in one way only, so that it counts once.
    let at = |base: u64, ms: u64| {
        let (secs, nanos) = (base + ms / 1000, (ms % 1000) * 1_000_000);
        serde_json::json!({ "secs": secs, "nanos": nanos })
    };
    let in_order = |v: &serde_json::Value, i: usize, base: u64| {
        let mut v = v.clone();
        let rec = &mut v["records"][i];
        rec["sent_at"] = at(base, 0);
        let chunks = rec["chunks"].as_array_mut().unwrap();
        assert!(chunks.len() >= 2, "{chunks:?}");
        let n = chunks.len() as u64;
        for (k, c) in chunks.iter_mut().enumerate() {
            c["at"] = at(base, k as u64 + 1);
        }
        rec["ended_at"] = at(base, n + 1);
        let id = rec["id"].as_u64().unwrap();
        (v, id)
    };
    let timing_line = |bad: &serde_json::Value, name: &str| -> String {
        let file = dir.join(name);
        write_json(&file, bad);
        let o = verb(&["lint"], &file);
        assert_eq!(o.status.code(), Some(3), "{name}: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("error[impossible-timing]"))
            .collect();
        assert_eq!(lines.len(), 1, "{name}: {out}");
        lines[0].to_string()
    };
    let counts = |first: u64, chunk: u32, end: u32, last: u32| {
        format!(
            "(first: request {first}): {chunk} with a chunk before the send, {end} ending \
             before the send, {last} ending before their last chunk"
        )
    };
    // A chunk before the send.
    let (mut chunk, id1) = in_order(&run, 1, 1);
    chunk["records"][1]["chunks"][0]["at"] = at(0, 500);
    let line = timing_line(&chunk, "chunk.json");
    assert!(line.contains(&counts(id1, 1, 0, 0)), "{line}");
    // An end before the send.
    let (mut end, id3) = in_order(&run, 3, 2);
    end["records"][3]["ended_at"] = at(1, 500);
    let line = timing_line(&end, "end.json");
    assert!(line.contains(&counts(id3, 0, 1, 0)), "{line}");
    // An end after the send but before the last chunk.
    let (mut last, id5) = in_order(&run, 5, 3);
    last["records"][5]["ended_at"] = at(3, 1);
    let line = timing_line(&last, "last.json");
    assert!(line.contains(&counts(id5, 0, 0, 1)), "{line}");
    // All three in one file: one finding, each counted once, the first bad request named.
    let mut all = chunk.clone();
    all["records"][3] = end["records"][3].clone();
    all["records"][5] = last["records"][5].clone();
    let line = timing_line(&all, "order.json");
    assert!(line.contains(&counts(id1, 1, 1, 1)), "{line}");

    // Peak output throughput below the mean (an MTP run counting events): linted.
    let mut bad = run.clone();
    bad["result"]["duration_ms"] = 10_000.0.into();
    bad["result"]["output_throughput_per_s"] = 5490.0.into();
    bad["result"]["peak_output_throughput_per_s"] = 3597.0.into();
    let peak = dir.join("peak.json");
    write_json(&peak, &bad);
    let o = verb(&["lint"], &peak);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("error[peak-below-mean]: peak output token throughput (3597) is below the mean output throughput (5490)"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// 6. The smaller items

/// Runs `servebench args` with stderr (and, with `close_stdout`, stdout) writing into a
/// pipe whose reading end is already closed; its exit status.
fn with_broken_pipes(args: &[&str], close_stdout: bool) -> Option<i32> {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = Command::new(BIN);
    cmd.args(args).stderr(writer.try_clone().unwrap());
    cmd.stdout(if close_stdout {
        Stdio::from(writer)
    } else {
        Stdio::null()
    });
    cmd.status().unwrap().code()
}

#[test]
fn a_closed_or_broken_stderr_never_panics_and_the_status_still_tells() {
    let dir = tmp("closed-stderr");
    let bad = write(&dir, "bad.json", "{\"completed\": \"many\"}");
    let missing = dir.join("missing.json");
    let cases: Vec<(Vec<String>, i32)> = vec![
        (vec!["report".into(), missing.display().to_string()], 1),
        (vec!["lint".into(), bad.display().to_string()], 1),
        (vec!["study".into()], 2),
        (vec!["bench".into(), "--bogus".into()], 2),
        (
            vec![
                "bench".into(),
                "-q".into(),
                "--target".into(),
                format!("http://127.0.0.1:{}", free_port()),
                "--input-tokens".into(),
                "4".into(),
                "--output-tokens".into(),
                "4".into(),
                "--max-requests".into(),
                "3".into(),
                "--model".into(),
                "m".into(),
            ],
            1,
        ),
        (vec!["profiles".into()], 0),
    ];
    for (args, want) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for round in 0..12 {
            for close_stdout in [false, true] {
                let got = with_broken_pipes(&args, close_stdout);
                assert_eq!(
                    got,
                    Some(*want),
                    "{args:?} (round {round}, stdout closed: {close_stdout})"
                );
            }
            // And with file descriptor 2 closed outright.
            let script = format!(
                "exec 2>&- \"$0\" {}",
                servebench::format::shell::join(&args)
            );
            let o = Command::new("sh")
                .arg("-c")
                .arg(script)
                .arg(BIN)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert_eq!(o.code(), Some(*want), "{args:?} with fd 2 closed");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_example_server_refuses_unknown_engine_args_in_serve_mode() {
    let o = Command::new(example_server())
        .args(["--serve", &format!("127.0.0.1:{}", free_port())])
        .args(["--engine-args", "--max-num-seqs=8 --frobnicate=1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown --engine-args flag(s): --frobnicate=1"),
        "{}",
        stderr(&o)
    );
    // Known flags serve.
    let mut kids = Kids(Vec::new());
    let target = start_server(&mut kids, &["--engine-args", "--max-num-seqs=8"]);
    let o = Command::new(BIN)
        .args(["bench", "-q", "--target", &target])
        .args([
            "--input-tokens",
            "8",
            "--output-tokens",
            "4",
            "--max-requests",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_missing_result_dir_is_created_however_deep_and_one_that_cannot_be_is_refused_first() {
    let dir = tmp("result-dir");
    let mut kids = Kids(Vec::new());
    let target = start_server(&mut kids, &[]);
    let bench = |extra: &[&str], result_dir: &Path| {
        Command::new(BIN)
            .args(["bench", "-q", "--target", &target])
            .args(["--input-tokens", "8", "--output-tokens", "4"])
            .args(["--max-requests", "2", "--no-scrape"])
            .args(extra)
            .arg("--result-dir")
            .arg(result_dir)
            .output()
            .unwrap()
    };
    // A relative --result-filename lands in the nested directory, made as `vllm bench serve`
    // makes it.
    let nested = dir.join("a").join("b").join("c");
    assert!(!dir.join("a").exists());
    let o = bench(&["--result-filename", "run.json"], &nested);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = servebench::runfile::RunFile::read(nested.join("run.json")).unwrap();
    assert_eq!(run.records.len(), 2);
    // --save-result's dated name, in another nested directory.
    let other = dir.join("x").join("y");
    let o = bench(&["--save-result"], &other);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let saved: Vec<_> = std::fs::read_dir(&other).unwrap().flatten().collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let name = saved[0].file_name().to_string_lossy().into_owned();
    assert!(
        name.starts_with("servebench-run-") && name.ends_with(".json"),
        "{name}"
    );
    servebench::runfile::RunFile::read(saved[0].path()).unwrap();
    // A directory that cannot be made (a file is in the way) is an error before anything
    // is sent: no report.
    let blocker = write(&dir, "file", "not a directory");
    let o = bench(&["--result-filename", "run.json"], &blocker.join("d"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("--result-dir {}", blocker.join("d").display())),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty(), "no report: nothing was run");
    let _ = std::fs::remove_dir_all(&dir);
}
