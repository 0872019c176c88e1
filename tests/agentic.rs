//! Tool calls and structured outputs against the example server, driven by the real
//! `servebench bench`: each tool call's arguments are checked against its tool's schema and
//! each structured answer against the response format's, and a server set to break a share
//! of them is measured at that share within sampling error; `lint` names a run whose tool
//! calls never validate.
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use servebench::http::server::{self, ServeOptions};
use servebench::runfile::RunFile;
use servebench::sim::serve::{self as sim_serve, ServeArgs};
use servebench::sim::{Config, H200Sim};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agentic")
        .join(rel)
}

/// The example server (speed 10) with `tune` applied to its options.
fn server(tune: impl FnOnce(&mut ServeOptions)) -> server::ServerHandle {
    let args = ServeArgs {
        addr: "127.0.0.1:0".parse().unwrap(),
        speed: 10.0,
        delta: None,
        fault: None,
        max_connections: 256,
        api_key: None,
        handoff_window: server::DEFAULT_HANDOFF_WINDOW,
        worker_threads: server::default_worker_threads(),
        startup_s: None,
    };
    let config = Config::named("baseline").unwrap();
    let mut opts = sim_serve::options(&config, &args);
    tune(&mut opts);
    server::spawn(
        sim_serve::engine(H200Sim::new(config), &args),
        args.addr,
        args.speed,
        opts,
    )
    .unwrap()
}

fn bench(target: &str, out: &Path, extra: &[&str]) -> RunFile {
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["bench", "--target", target, "--quiet", "--endpoint", "chat"])
        .args([
            "--input-tokens",
            "32",
            "--output-tokens",
            "24",
            "--rate",
            "100",
        ])
        .arg("--output")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    RunFile::read(out).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-agentic-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn a_server_breaking_ten_percent_of_tool_calls_measures_ten_percent() {
    let s = server(|o| {
        o.invalid_tool_calls = 0.10;
        o.checks_seed = 7;
    });
    let target = format!("http://{}", s.local_addr());
    let tools = fixture("tools.json");
    let run = bench(
        &target,
        &tmp("tools.json"),
        &["--max-requests", "400", "--tools", tools.to_str().unwrap()],
    );
    let c = run.result.checks.as_ref().expect("checked");
    assert_eq!((c.requests, c.tool_calls), (400, 400));
    let v = c.tool_call_validity.unwrap();
    // 400 draws at 90 % valid: sd 1.5 points; the interval holds the server's rate.
    assert!((v.value - 0.90).abs() < 0.045, "{v:?}");
    assert!(v.lo < 0.90 && v.hi > 0.90, "{v:?}");
    assert!(c
        .example_failure
        .as_deref()
        .unwrap()
        .contains("get_weather"));
    // The tool call streams from the first token: its first token is the answer's first.
    let t = c.time_to_first_tool_call.as_ref().unwrap();
    let ttft = run.result.ttft.as_ref().unwrap();
    assert_eq!(t.median, ttft.median);
    for r in &run.records {
        let k = r.checks.as_ref().unwrap();
        assert_eq!(k.first_tool_chunk, Some(0));
        assert_eq!(k.tool_tokens, r.output_tokens());
    }
    // The report says it in those words.
    let report = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .arg("report")
        .arg(tmp("tools.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stderr).to_string()
        + &String::from_utf8_lossy(&report.stdout);
    assert!(text.contains("Tool-call validity rate: "), "{text}");
}

#[test]
fn structured_outputs_are_checked_and_a_run_of_broken_tool_calls_is_linted() {
    let s = server(|o| {
        o.invalid_json = 0.25;
        o.invalid_tool_calls = 1.0;
        o.checks_seed = 11;
    });
    let target = format!("http://{}", s.local_addr());
    let schema = fixture("answer-schema.json");
    let run = bench(
        &target,
        &tmp("structured.json"),
        &[
            "--max-requests",
            "300",
            "--response-format",
            schema.to_str().unwrap(),
        ],
    );
    let c = run.result.checks.as_ref().unwrap();
    assert_eq!(c.structured, 300);
    let r = c.structured_correct_rate.unwrap();
    assert!((r.value - 0.75).abs() < 0.075, "{r:?}");
    assert!(r.lo < 0.75 && r.hi > 0.75, "{r:?}");
    // Every tool call broken: lint says the run's tool calls never validate.
    let tools = fixture("tools.json");
    let out = tmp("broken-tools.json");
    bench(
        &target,
        &out,
        &["--max-requests", "20", "--tools", tools.to_str().unwrap()],
    );
    let lint = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .arg("lint")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(lint.status.code(), Some(3), "{text}");
    assert!(
        text.contains("error[invalid-tool-calls]: only 0 of 20 tool calls parse and match"),
        "{text}"
    );
}
