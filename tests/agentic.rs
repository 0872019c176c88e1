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

/// The example server (speed 10, baseline configuration) with `tune` applied to its options.
fn server(tune: impl FnOnce(&mut ServeOptions)) -> server::ServerHandle {
    serve(Config::named("baseline").unwrap(), tune)
}

/// `config` served by the example server (speed 10) with `tune` applied to its options.
fn serve(config: Config, tune: impl FnOnce(&mut ServeOptions)) -> server::ServerHandle {
    let args = ServeArgs {
        speed: 10.0,
        max_connections: 256,
        ..ServeArgs::default()
    };
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

/// The prefix-cache hit rate the workload implies, beside the server's: on the example
/// server with prefix caching (Qwen3.5's hybrid cache: 544-token blocks, the Gated DeltaNet
/// state saved at block boundaries) they agree; with a KV pool too small for the
/// workload's 20 prefixes, the cache evicts, the measured rate falls, and the report says
/// they disagree.
#[test]
fn implied_and_measured_prefix_hits_agree_until_the_cache_is_too_small() {
    let run = |utilization: Option<f64>, name: &str| {
        let mut config = Config::named("prefix-cache").unwrap();
        config.args.gpu_memory_utilization = utilization;
        let s = serve(config, |_| {});
        let target = format!("http://{}", s.local_addr());
        let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
            .args([
                "bench",
                "--target",
                &target,
                "--quiet",
                "--dataset",
                "shared-prefix",
            ])
            .args(["--prefix-groups", "20", "--prompts-per-group", "4"])
            .args([
                "--prefix-tokens",
                "2000",
                "--prefix-repetition-suffix-len",
                "200",
            ])
            .args([
                "--output-tokens",
                "16",
                "--max-requests",
                "80",
                "--rate",
                "20",
            ])
            .args(["--prefix-block-tokens", "544", "--output"])
            .arg(tmp(name))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        let p = RunFile::read(tmp(name))
            .unwrap()
            .result
            .prefix_cache
            .unwrap();
        (p, stderr)
    };
    let (ok, _) = run(None, "prefix-ok.json");
    // 80 prompts of 2200 words, 20 prefixes of 2000 each sent 4 times: each repeat finds
    // 3 whole 544-token blocks (1632 tokens; a 16-token-block cache would find 2000).
    assert_eq!(ok.queried_tokens, 80 * 2200);
    assert_eq!(ok.implied_hit_tokens, 60 * 3 * 544);
    let measured = ok.measured_hit_rate.unwrap();
    assert!((measured - ok.implied_hit_rate).abs() < 0.02, "{ok:?}");
    assert!(!ok.disagree);
    let (small, stderr) = run(Some(0.509), "prefix-small.json");
    assert!(small.disagree, "{small:?}");
    assert!(small.measured_hit_rate.unwrap() < small.implied_hit_rate - 0.1);
    assert!(stderr.contains("they disagree"), "{stderr}");
}

/// Sessions of four turns with a think time between a turn's answer and the next turn,
/// against a server that fails every 7th request: each session is counted complete or
/// failed mid-way (at its first failed turn), complete sessions take at least their three
/// think times to finish, and the figures round-trip through the run file.
#[test]
fn sessions_are_counted_whole_and_a_failed_turn_fails_its_session() {
    let s = server(|o| {
        o.fault = Some(servebench::http::server::Fault {
            every: 7,
            kind: servebench::http::server::FaultKind::Status500,
        })
    });
    let target = format!("http://{}", s.local_addr());
    let out = tmp("sessions.json");
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "bench",
            "--target",
            &target,
            "--quiet",
            "--sessions",
            "synthetic",
        ])
        .args([
            "--conversations",
            "12",
            "--turns",
            "4",
            "--think-time",
            "200ms",
        ])
        .args([
            "--input-tokens",
            "64",
            "--output-tokens",
            "8",
            "--rate",
            "20",
            "--output",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let run = RunFile::read(&out).unwrap();
    let f = run.result.sessions.as_ref().expect("sessions");
    assert_eq!((f.sessions, f.turns), (12, 48));
    // The server fails requests 7, 14, …, 42: six failed turns.
    let failed_turns = run
        .records
        .iter()
        .filter(|r| !r.outcome.is_success())
        .count();
    assert_eq!(failed_turns, 6);
    assert!(f.failed >= 1 && f.failed <= 6, "{f:?}");
    assert_eq!(f.complete + f.failed + f.cut_off, 12);
    // Three think times of 0.2 s in every complete session.
    assert!(f.duration.as_ref().unwrap().min.unwrap() >= 600.0, "{f:?}");
    assert!(stderr.contains("Sessions: 12 ("), "{stderr}");
}

/// A trace in SGLang's agentic format (`{"conversations": [[{"messages": […]}, …], …]}`,
/// each turn its new user and tool messages) replays as sessions against the example
/// server: one request per turn, each turn's prompt the session's history, tool results
/// included; the sessions and their turns are counted.
#[test]
fn an_agentic_trace_replays_as_sessions() {
    let s = server(|_| {});
    let target = format!("http://{}", s.local_addr());
    let out = tmp("trace.json");
    let trace = fixture("sglang-agentic-trace.json");
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "bench",
            "--target",
            &target,
            "--quiet",
            "--dataset",
            "multi-turn",
        ])
        .arg("--dataset-path")
        .arg(&trace)
        .args([
            "--conversations",
            "10",
            "--turns",
            "10",
            "--output-tokens",
            "12",
        ])
        .args(["--rate", "10", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = RunFile::read(&out).unwrap();
    assert_eq!(run.records.len(), 5);
    let f = run.result.sessions.as_ref().unwrap();
    assert_eq!((f.sessions, f.complete, f.turns), (2, 2, 5));
    // Conversation 0, turn 3: its three turns' messages (the system and user messages, two
    // tool results) and the two 12-token answers between them.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let texts: Vec<String> = json["conversations"][0]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["messages"].as_array().unwrap().clone())
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            parts => parts[0]["text"].as_str().unwrap().to_string(),
        })
        .collect();
    let words = servebench::driver::workload::approx_tokens(&texts.join(" "));
    let t3 = run
        .records
        .iter()
        .find(|r| r.turn.is_some_and(|t| t.conversation == 0 && t.turn == 3))
        .unwrap();
    assert_eq!(t3.prompt_tokens, Some(words + 2 * 12));
}

/// Sessions whose first turn forks two sub-agents of two turns each, with a think time:
/// every sub-agent's first turn goes out after its parent's first turn ended plus the think
/// time, both sub-agents run at once, the parent's second turn waits for both to end and
/// carries their answers (its prompt is turn 1's prompt and answer plus two answers); the
/// figures count the sub-agents, and a session SLO with validity gives session goodput.
#[test]
fn a_session_forks_sub_agents_and_waits_for_them() {
    let s = server(|_| {});
    let target = format!("http://{}", s.local_addr());
    let out = tmp("fanout.json");
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["bench", "--target", &target, "--sessions", "synthetic"])
        .args(["--conversations", "3", "--turns", "3", "--fanout", "2"])
        .args(["--subagent-turns", "2", "--think-time", "100ms"])
        .args(["--tool-result-tokens", "40", "--tool-result-sigma", "0.5"])
        .args([
            "--input-tokens",
            "64",
            "--output-tokens",
            "8",
            "--rate",
            "20",
        ])
        .args(["--goodput", "session:60000 valid", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let run = RunFile::read(&out).unwrap();
    assert_eq!(run.records.len(), 3 * (3 + 2 * 2));
    let think = std::time::Duration::from_millis(100);
    for c in 0..3 {
        let turn = |agent: u32, t: u32| {
            run.records
                .iter()
                .find(|r| {
                    r.turn
                        .is_some_and(|x| (x.conversation, x.agent, x.turn) == (c, agent, t))
                })
                .unwrap_or_else(|| panic!("session {c} agent {agent} turn {t}"))
        };
        let main1 = turn(0, 1);
        let main2 = turn(0, 2);
        let subs = [turn(1, 1), turn(2, 1)];
        let sub_ends = [turn(1, 2), turn(2, 2)];
        for s in &subs {
            assert!(s.sent_at >= main1.ended_at.unwrap() + think, "session {c}");
        }
        // Forked together: sent within 50 ms of each other, each before the other's end.
        let gap = subs[0].sent_at.abs_diff(subs[1].sent_at);
        assert!(gap < std::time::Duration::from_millis(50), "{gap:?}");
        assert!(subs[0].sent_at < subs[1].ended_at.unwrap());
        let last = sub_ends.iter().map(|r| r.ended_at.unwrap()).max().unwrap();
        assert!(
            main2.sent_at >= last + think,
            "session {c}: the join went early"
        );
        // Turn 2: turn 1 (64) + its answer (8) + two sub-agents' answers (2 × 8).
        assert_eq!(main2.prompt_tokens, Some(64 + 8 + 16));
        // A sub-agent's first prompt: the parent's 72 tokens + its own 64-token task.
        assert_eq!(subs[0].prompt_tokens, Some(72 + 64));
    }
    let f = run.result.sessions.as_ref().unwrap();
    assert_eq!(
        (f.sessions, f.complete, f.subagents, f.turns),
        (3, 3, 6, 21)
    );
    assert_eq!((f.slo_ms, f.within_slo), (Some(60000.0), Some(3)));
    assert!(f.goodput_per_s.unwrap() > 0.0);
    assert!(stderr.contains("6 sub-agents forked"), "{stderr}");
    assert!(
        stderr.contains("within the session SLO (60000 ms): 3 of 3"),
        "{stderr}"
    );
    // `valid` judges requests: no checks were asked for, so every success is good.
    assert_eq!(
        run.result.request_goodput_per_s,
        run.result.request_throughput_per_s
    );
}

/// A session run stopped by Ctrl-C keeps what ran: the file is saved marked interrupted,
/// with every turn sent so far (finished turns succeeded) and the sessions they belong to.
#[test]
fn a_session_run_stopped_by_ctrl_c_keeps_what_ran() {
    let s = server(|_| {});
    let target = format!("http://{}", s.local_addr());
    let out = tmp("sessions-sigint.json");
    let child = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "bench",
            "--target",
            &target,
            "--quiet",
            "--sessions",
            "synthetic",
        ])
        .args(["--conversations", "8", "--turns", "6", "--think-time", "1s"])
        .args([
            "--input-tokens",
            "32",
            "--output-tokens",
            "8",
            "--rate",
            "4",
        ])
        .arg("--output")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = RunFile::read(&out).unwrap();
    assert!(matches!(
        run.status,
        servebench::runfile::RunStatus::Interrupted { .. }
    ));
    // 2.5 s of 6-turn sessions with 1 s think times: some turns, far from all 48.
    let n = run.records.len();
    assert!((4..48).contains(&n), "{n} records");
    let ok = run
        .records
        .iter()
        .filter(|r| r.outcome.is_success())
        .count();
    assert!(ok >= 4, "{ok} finished turns");
    let f = run.result.sessions.as_ref().unwrap();
    assert_eq!(f.turns, n as u64);
    assert!(f.sessions >= 2, "{f:?}");
}

/// Tool calls on the Responses and Messages APIs: the example server streams each call as
/// its API's events (a `function_call` item's argument deltas; a `tool_use` block's
/// `input_json_delta` pieces), the client collects and checks them, and a server breaking
/// a fifth of them is measured at a fifth within sampling error; the Responses API's
/// structured output (`text.format`) is checked the same way.
#[test]
fn tool_calls_and_structured_output_on_the_responses_and_messages_apis() {
    let s = server(|o| {
        o.invalid_tool_calls = 0.20;
        o.invalid_json = 0.25;
        o.checks_seed = 5;
    });
    let target = format!("http://{}", s.local_addr());
    let tools = fixture("tools.json");
    let run = |endpoint: &str, name: &str, extra: &[&str]| {
        let out = tmp(name);
        let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
            .args([
                "bench",
                "--target",
                &target,
                "--quiet",
                "--endpoint",
                endpoint,
            ])
            .args([
                "--input-tokens",
                "32",
                "--output-tokens",
                "24",
                "--rate",
                "100",
            ])
            .args(["--max-requests", "250", "--output"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        RunFile::read(&out).unwrap()
    };
    for endpoint in ["responses", "messages"] {
        let r = run(
            endpoint,
            &format!("{endpoint}-tools.json"),
            &[
                "--tools",
                tools.to_str().unwrap(),
                "--tool-choice",
                "required",
            ],
        );
        let c = r.result.checks.as_ref().expect("checked");
        assert_eq!((c.requests, c.tool_calls), (250, 250), "{endpoint}");
        let v = c.tool_call_validity.unwrap();
        // 250 draws at 80 % valid: sd 2.5 points.
        assert!((v.value - 0.80).abs() < 0.075, "{endpoint}: {v:?}");
        assert!(v.lo < 0.80 && v.hi > 0.80, "{endpoint}: {v:?}");
        for rec in &r.records {
            let k = rec.checks.as_ref().unwrap();
            assert_eq!(
                (k.tool_calls, k.first_tool_chunk),
                (1, Some(0)),
                "{endpoint}"
            );
        }
    }
    let schema = fixture("answer-schema.json");
    let r = run(
        "responses",
        "responses-structured.json",
        &["--response-format", schema.to_str().unwrap()],
    );
    let c = r.result.checks.as_ref().unwrap();
    assert_eq!(c.structured, 250);
    let rate = c.structured_correct_rate.unwrap();
    assert!((rate.value - 0.75).abs() < 0.08, "{rate:?}");
}

/// Constrained decoding's cost shows as TPOT beside the same run unconstrained: 32
/// structured answers at a time each pay the grammar's token mask (40 µs per sampled
/// position, `sim::GRAMMAR_MASK_S`) in every decode step, 1.28 ms of server time per step —
/// 0.128 ms at the example server's speed 10 (asserted within 0.05–0.25 ms: two runs on
/// a loaded machine) — and `compare` shows the TPOT rows up.
#[test]
fn structured_output_costs_tpot_against_the_same_run_unconstrained() {
    let s = server(|_| {});
    let target = format!("http://{}", s.local_addr());
    let schema = fixture("answer-schema.json");
    let run = |name: &str, extra: &[&str]| {
        let out = tmp(name);
        let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
            .args([
                "bench",
                "--target",
                &target,
                "--quiet",
                "--endpoint",
                "chat",
            ])
            .args([
                "--input-tokens",
                "64",
                "--output-tokens",
                "128",
                "--rate",
                "inf",
            ])
            .args([
                "--max-requests",
                "64",
                "--max-concurrency",
                "32",
                "--output",
            ])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (out.clone(), RunFile::read(&out).unwrap())
    };
    let (free_path, free) = run("free.json", &[]);
    let (held_path, held) = run(
        "constrained.json",
        &["--response-format", schema.to_str().unwrap()],
    );
    // Every token of the structured answer is a chunk the client counts.
    for r in &held.records {
        assert_eq!(r.chunks.len() as u64, r.output_tokens());
    }
    let tpot = |r: &RunFile| r.result.tpot.as_ref().unwrap().mean.unwrap();
    let extra = tpot(&held) - tpot(&free);
    assert!((0.05..0.25).contains(&extra), "TPOT +{extra:.3} ms");
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .arg("compare")
        .args([&free_path, &held_path])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("Mean TPOT (ms)"))
        .unwrap_or_else(|| panic!("{text}"));
    // Metric, baseline, candidate, change: the change is the TPOT difference, up.
    let change: f64 = row.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert!((change - extra).abs() < 0.006 && change > 0.0, "{row}");
}

/// vLLM's own structured-output request fields: `--schema-field structured-outputs` sends
/// `structured_outputs: {"json": SCHEMA}` and `guided-json` the older `guided_json`; the
/// example server reads both, as vLLM does, and the answers are checked the same way.
#[test]
fn vllms_structured_output_fields_are_sent_and_checked() {
    let s = server(|o| {
        o.invalid_json = 0.25;
        o.checks_seed = 3;
    });
    let target = format!("http://{}", s.local_addr());
    let schema = fixture("answer-schema.json");
    for field in ["structured-outputs", "guided-json"] {
        let run = bench(
            &target,
            &tmp(&format!("{field}.json")),
            &[
                "--max-requests",
                "200",
                "--response-format",
                schema.to_str().unwrap(),
                "--schema-field",
                field,
            ],
        );
        let c = run.result.checks.as_ref().unwrap();
        assert_eq!(c.structured, 200, "{field}");
        let r = c.structured_correct_rate.unwrap();
        // 200 draws at 75 %: sd 3.1 points.
        assert!((r.value - 0.75).abs() < 0.095, "{field}: {r:?}");
    }
}
