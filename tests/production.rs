//! The production figures against the example server (the simulator served over HTTP on
//! 127.0.0.1, as `cargo run --example h200_server -- --serve …` runs it): reasoning-aware
//! latency on a reasoning stream, energy from the server's DCGM metrics against the
//! simulator's own energy, speculative-decoding counters, LoRA adapter names.
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use servebench::driver::workload::random;
use servebench::driver::Arrivals;
use servebench::driver::{run, RunOptions};
use servebench::http::client::REQUEST_ID_PREFIX;
use servebench::http::server::{self, ReasoningPhase, ServeOptions, ServerHandle};
use servebench::http::{Endpoint, HttpConfig, HttpEngine};
use servebench::metrics::{compute, MetricsOptions};
use servebench::record::RequestRecord;
use servebench::result::Convention;
use servebench::sim::serve::{self as sim_serve, ServeArgs};
use servebench::sim::{Config, H200Sim};

/// One server at a time: the timing checks must not share the cores with another test's.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn args(speed: f64) -> ServeArgs {
    ServeArgs {
        speed,
        ..ServeArgs::default()
    }
}

fn serve_sim(config: &str, speed: f64, tune: impl FnOnce(&mut ServeOptions)) -> ServerHandle {
    serve_config(Config::named(config).unwrap(), speed, tune)
}

fn serve_config(config: Config, speed: f64, tune: impl FnOnce(&mut ServeOptions)) -> ServerHandle {
    let a = args(speed);
    let mut opts = ServeOptions {
        record_timeline: true,
        ..sim_serve::options(&config, &a)
    };
    tune(&mut opts);
    server::spawn(H200Sim::new(config).warmed_up(), a.addr, a.speed, opts).unwrap()
}

fn client(server: &ServerHandle, model: &str) -> HttpEngine {
    let mut cfg = HttpConfig::new(format!("http://{}", server.local_addr()));
    cfg.endpoint = Endpoint::Chat;
    cfg.model = Some(model.into());
    HttpEngine::new(cfg).unwrap()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Wall-clock lateness a client stamp may carry on a loaded 2-core machine (as in
/// `tests/h200_serve.rs`): never early, at most this late.
const NOISE_WALL_MS: f64 = 20.0;

/// The server's timeline entry of each record (joined on `x-request-id`), waiting for the
/// engine thread to file the last ones.
fn timeline_of(server: &ServerHandle, records: &[RequestRecord]) -> Vec<RequestRecord> {
    let give_up = Instant::now() + Duration::from_secs(30);
    let mut timeline = server.timeline();
    while timeline.len() < records.len() && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(5));
        timeline = server.timeline();
    }
    records
        .iter()
        .map(|r| {
            let tag = format!("{REQUEST_ID_PREFIX}{}", r.id);
            timeline
                .iter()
                .find(|s| s.request_id.as_deref() == Some(tag.as_str()))
                .expect("the server saw the x-request-id")
                .record
                .clone()
        })
        .collect()
}

/// A reasoning stream: the first 40 of 100 tokens in `delta.reasoning`, the rest in
/// `delta.content`. The client counts exactly 40 reasoning and 60 answer tokens per
/// request, and its time to the first answer token, times the speed, is the simulator's
/// own time of token 41 (its virtual timeline), late by at most the wall-clock noise.
#[test]
fn reasoning_and_answer_ttft_on_a_reasoning_stream() {
    let _serial = serial();
    let speed = 10.0;
    let (n, output, reasoning) = (8, 100u64, 40u64);
    let server = serve_sim("baseline", speed, |o| {
        o.reasoning = Some(ReasoningPhase::Tokens(reasoning))
    });
    let mut engine = client(&server, "Qwen/Qwen3.5-35B-A3B");
    let work = random(n, 256, output, 0.0, 7, true).unwrap();
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 50.0 },
        max_concurrency: Some(4),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let out = run(&mut engine, &work, &opts).unwrap();
    assert_eq!(out.records.len(), n);
    let truth = timeline_of(&server, &out.records);
    let mut answer_err = Vec::new();
    for (r, e) in out.records.iter().zip(&truth) {
        assert!(r.outcome.is_success(), "{:?}", r.outcome);
        let split = r.reasoning.expect("a reasoning stream");
        assert_eq!(split.reasoning_tokens, reasoning);
        assert_eq!(split.answer_tokens, output - reasoning);
        assert_eq!(split.first_reasoning_chunk, Some(0));
        // One token per chunk (no speculative decoding in the baseline): token 41 is
        // chunk 40, on the client's side and on the server's.
        assert_eq!(split.first_answer_chunk, Some(reasoning as u32));
        assert_eq!(r.chunks.len(), e.chunks.len());
        let sim_answer = e.chunks[reasoning as usize].at - e.sent_at;
        let err = ms(r.time_to_first_answer().unwrap()) * speed - ms(sim_answer);
        answer_err.push(err);
        // TTFT counts either stream: here the reasoning token came first.
        assert_eq!(r.ttft(), r.time_to_first_reasoning());
        assert!(r.time_to_first_answer() > r.ttft());
    }
    assert!(
        answer_err
            .iter()
            .all(|&e| e > -0.1 * speed && e < NOISE_WALL_MS * speed),
        "client TTFA x speed - sim (virtual ms): {answer_err:?}"
    );
    let result = compute(&out.records, MetricsOptions::new(Convention::Vllm));
    let f = result.reasoning.clone().expect("reasoning figures");
    assert_eq!(f.requests_with_reasoning, n as u64);
    assert_eq!(f.reasoning_tokens, n as u64 * reasoning);
    assert_eq!(f.answer_tokens, n as u64 * (output - reasoning));
    let ttfa = f.time_to_first_answer.unwrap().mean.unwrap();
    let ttfr = f.time_to_first_reasoning.unwrap().mean.unwrap();
    // The run's TTFT is the reasoning one; the answer comes ~40 decode steps later.
    assert_eq!(Some(ttfr), result.ttft.as_ref().unwrap().mean);
    assert!(ttfa > ttfr, "{ttfa} {ttfr}");
    let lines = servebench::format::production::lines(&result);
    assert!(
        lines[0].starts_with("TTFT counts the first token of either stream"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Time to first answer token (ms): mean")),
        "{lines:?}"
    );
    // The record's split survives the run file's JSON.
    let json = serde_json::to_string(&out.records[0]).unwrap();
    let back: RequestRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out.records[0]);
    assert!(json.contains("\"first_answer_chunk\":40"), "{json}");
}

/// Energy: the example server exposes the simulator's power model on `/metrics` in the DCGM
/// exporter's names; scrapes during a run give the run's energy. The truth is the simulator
/// itself: the requests replayed offline in virtual time at the exact virtual times the
/// served simulator received them (its own timeline), with no HTTP and no wall clock. The
/// scraped energy over the scraped span equals the offline simulator's energy over the same
/// span of virtual time within 1 %.
#[test]
fn energy_from_the_example_servers_dcgm_metrics_equals_the_simulators() {
    use servebench::engine::{Engine, EngineRequest};
    use servebench::observe::energy_figures;
    use servebench::observe::Scraper;
    let _serial = serial();
    // A scrape is stamped when it is sent; the server reads its counter a little later.
    // At the span's (idle) edges that lag costs idle power x lag x speed: 2 ms of wall
    // time at speed 2.5 is 0.6 J of a run's ~1500 J.
    let speed = 2.5;
    let (n, input, output) = (16usize, 128u64, 128u64);
    let server = serve_sim("baseline", speed, |_| {});
    let target = format!("http://{}", server.local_addr());
    let mut cfg = HttpConfig::new(target.clone());
    cfg.model = Some("Qwen/Qwen3.5-35B-A3B".into());
    let mut engine = HttpEngine::new(cfg).unwrap();
    let work = random(n, input, output, 0.0, 11, true).unwrap();
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 8.0 },
        max_concurrency: Some(n),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let scraper = Scraper::start(&target, Duration::from_millis(50), engine.origin());
    let out = run(&mut engine, &work, &opts).unwrap();
    let series = scraper.stop();
    assert!(series.notes.is_empty(), "{:?}", series.notes);
    assert!(out.records.iter().all(|r| r.outcome.is_success()));
    let served = energy_figures(&series, None, None).expect("DCGM metrics on /metrics");
    assert_eq!(served.source, format!("dcgm:{target}/metrics"));
    assert_eq!(served.gpus, 1);
    let truth = timeline_of(&server, &out.records);

    // The served simulator's virtual time of a scrape (seconds from the client's origin).
    let virtual_s = |t: f64| {
        let wall = (engine.origin() + Duration::from_secs_f64(t)).duration_since(server.origin());
        wall.as_secs_f64() * speed
    };
    let (v0, v1) = (
        virtual_s(series.times_s[0]),
        virtual_s(*series.times_s.last().unwrap()),
    );

    // Offline: the same requests at the virtual times the server received them.
    let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
    let mut arrivals: Vec<&RequestRecord> = truth.iter().collect();
    arrivals.sort_by_key(|r| r.sent_at);
    let mut events = Vec::new();
    for r in arrivals {
        while sim.now() < r.sent_at {
            sim.advance(Some(r.sent_at), &mut events).unwrap();
        }
        sim.submit(EngineRequest {
            id: r.id,
            prompt_tokens: r.prompt_tokens.unwrap(),
            prompt: None,
            max_output_tokens: output,
            ignore_eos: true,
            arrival: r.sent_at,
            shared_prefix_tokens: 0,
            image_patches: Vec::new(),
            shares_admission: false,
            constrained: false,
        })
        .unwrap();
    }
    let end = Duration::from_secs_f64(v1.max(1.0) + 1.0);
    while sim.now() < end {
        sim.advance(Some(end), &mut events).unwrap();
    }
    let finished = events
        .iter()
        .filter(|e| matches!(e, servebench::engine::EngineEvent::Finished { .. }))
        .count();
    assert_eq!(finished, n);
    let meter = sim.metrics().power.clone().unwrap();
    let offline_j = meter.energy_j(v1) - meter.energy_j(v0);
    let got = served.energy_j.unwrap();
    let rel = (got - offline_j).abs() / offline_j;
    eprintln!(
        "served (DCGM scrapes) {got:.1} J, offline simulator {offline_j:.1} J over {:.2} s \
         of virtual time: error {:.3} %",
        v1 - v0,
        rel * 100.0
    );
    assert!(rel < 0.01, "{rel}");
    // The GPU was busy: mean power well above idle, below the cap.
    let idle_w = meter.model().idle_w;
    let mean_w = offline_j / (v1 - v0);
    assert!(mean_w > idle_w * 1.2 && mean_w < 700.0, "{mean_w}");

    // J per output token through the result, as `bench` reports it.
    let mut result = compute(&out.records, MetricsOptions::new(Convention::Vllm));
    servebench::observe::add_server_figures(
        &mut result,
        servebench::metrics::measured_window_s(&out.records),
        Some(&series),
        None,
        None,
    );
    let energy = result.energy.as_ref().unwrap();
    let per_token = energy.joules_per_output_token.unwrap();
    assert!(per_token > 0.0 && per_token < got / (n as f64 * output as f64) * 1.01);
    assert!((energy.output_tokens_per_joule.unwrap() * per_token - 1.0).abs() < 1e-12);
    let lines = servebench::format::production::lines(&result);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Energy per output token: ")),
        "{lines:?}"
    );
}

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("servebench-prod-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `servebench bench … --output DIR/run.json` against `target`: (stdout and stderr, the run
/// file).
fn bench(
    target: &str,
    dir: &std::path::Path,
    extra: &[&str],
) -> (String, servebench::runfile::RunFile) {
    bench_to(target, &dir.join("run.json"), extra, None)
}

/// [`bench`] writing the run file to `out`, with `path` (when given) first on `PATH`.
fn bench_to(
    target: &str,
    out: &std::path::Path,
    extra: &[&str],
    path: Option<&std::path::Path>,
) -> (String, servebench::runfile::RunFile) {
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["bench", "--target", target, "--quiet", "--style", "vllm"])
        .args(extra)
        .arg("--output")
        .arg(out)
        .env_remove("OPENAI_API_KEY");
    if let Some(dir) = path {
        cmd.env("PATH", path_with(dir));
    }
    let o = cmd.output().unwrap();
    // The block on stdout, the production figures on stderr.
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    (text, servebench::runfile::RunFile::read(out).unwrap())
}

/// `$PATH` with `dir` first.
fn path_with(dir: &std::path::Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap()
}

/// `servebench ARGS…`: (success, stdout, stderr).
fn servebench(args: &[&str]) -> (bool, String, String) {
    let o = std::process::Command::new(BIN).args(args).output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Speculative decoding: the simulator's MTP (2 draft tokens, each accepted with
/// probability 0.65 given the one before) exposes vLLM's counters; `bench` reports the
/// acceptance rate, the mean accepted length and the per-position rates from them, and the
/// client's tokens per streamed chunk, counted independently, agrees with the server's mean
/// accepted length.
#[test]
fn speculative_decoding_acceptance_from_the_servers_counters() {
    let _serial = serial();
    let flags: Vec<String> = [
        "--max-model-len=32768",
        r#"--speculative-config={"method":"mtp","num_speculative_tokens":2}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let config = servebench::sim::from_engine_args("qwen3.5-35b-a3b", "h200", &flags).unwrap();
    let server = serve_config(config, 20.0, |_| {});
    let target = format!("http://{}", server.local_addr());
    let dir = temp_dir("spec");
    let (stdout, run) = bench(
        &target,
        &dir,
        &[
            "--input-tokens",
            "128",
            "--output-tokens",
            "256",
            "--max-requests",
            "16",
            "--rate",
            "50",
            "--max-concurrency",
            "16",
            "--scrape-interval",
            "0.05",
        ],
    );
    let s = run.result.spec_decode.clone().expect("spec-decode figures");
    let p: f64 = 0.65;
    // Per draft of 2: position 0 accepted with p, position 1 with p^2 (drafts cut short by
    // a request's last tokens propose fewer).
    let (rate, len) = (s.acceptance_rate.unwrap(), s.mean_accepted_length.unwrap());
    let drafts = s.drafts.unwrap();
    eprintln!("{s:?}");
    let se = (p * (1.0 - p) / drafts).sqrt();
    assert!(drafts > 1000.0, "{drafts}");
    assert!((s.acceptance_per_position[0] - p).abs() < 4.0 * se, "{s:?}");
    assert!(
        (s.acceptance_per_position[1] - p * p).abs() < 4.0 * se + 0.01,
        "{s:?}"
    );
    assert!((rate - (p + p * p) / 2.0).abs() < 4.0 * se + 0.01, "{s:?}");
    assert!((len - (1.0 + p + p * p)).abs() < 8.0 * se + 0.02, "{s:?}");
    // The identity behind the two figures: accepted = (length - 1) x drafts.
    assert!(((len - 1.0) * drafts - s.accepted_tokens.unwrap()).abs() < 1e-6);
    let tpc = s.tokens_per_chunk.unwrap();
    assert!(
        (tpc / len - 1.0).abs() < 0.03,
        "client {tpc} tokens/chunk, server {len}"
    );
    assert!(
        stdout.contains("Speculative decoding: acceptance rate"),
        "{stdout}"
    );
    // A recomputation under either convention keeps the server's counters' figures.
    for convention in ["vllm", "guidellm"] {
        let o = std::process::Command::new(BIN)
            .args(["report", "--convention", convention])
            .arg(dir.join("run.json"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{text}");
        assert!(
            text.contains("Speculative decoding: acceptance rate"),
            "{convention}: {text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// LoRA traffic: requests split over three adapters by a seeded split; the example server
/// accepts the adapter names (and lists them); results per adapter add up to the run's.
#[test]
fn lora_traffic_is_split_by_seed_and_reported_per_adapter() {
    let _serial = serial();
    let adapters = ["sql-lora", "chat-lora", "code-lora"];
    let server = serve_sim("baseline", 20.0, |o| {
        o.lora_modules = adapters.iter().map(|a| a.to_string()).collect();
    });
    let target = format!("http://{}", server.local_addr());
    let dir = temp_dir("lora");
    let (stdout, run) = bench(
        &target,
        &dir,
        &[
            "--input-tokens",
            "64",
            "--output-tokens",
            "16",
            "--max-requests",
            "60",
            "--rate",
            "200",
            "--max-concurrency",
            "32",
            "--lora-modules",
            "sql-lora,chat-lora,code-lora",
            "--lora-split",
            "0.5,0.3,0.2",
            "--seed",
            "3",
        ],
    );
    let split = servebench::driver::LoraSplit::new(
        adapters.iter().map(|a| a.to_string()).collect(),
        Some(vec![0.5, 0.3, 0.2]),
        3,
    )
    .unwrap();
    let r = &run.result;
    assert_eq!(r.successful_requests, Some(60), "{stdout}");
    assert_eq!(r.adapters.len(), 3);
    for a in &r.adapters {
        let want = run
            .records
            .iter()
            .filter(|x| split.pick(x.id) == a.adapter)
            .count() as u64;
        assert_eq!(a.requests, want, "{}", a.adapter);
        assert_eq!(a.successful_requests, want);
        assert_eq!(a.output_tokens, want * 16);
        assert!(a.ttft.as_ref().unwrap().mean.unwrap() > 0.0);
    }
    assert_eq!(r.adapters.iter().map(|a| a.requests).sum::<u64>(), 60);
    assert!(run
        .records
        .iter()
        .all(|x| x.adapter.as_deref() == Some(split.pick(x.id))));
    assert!(stdout.contains("LoRA adapter sql-lora: "), "{stdout}");
    // An adapter the server was not started with is a 404, as with vLLM: nothing succeeds.
    let o = std::process::Command::new(BIN)
        .args([
            "bench",
            "--target",
            &target,
            "--quiet",
            "--input-tokens",
            "8",
        ])
        .args([
            "--output-tokens",
            "2",
            "--max-requests",
            "2",
            "--lora-modules",
            "nope",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!o.status.success(), "{text}");
    assert!(text.contains("404") && text.contains("nope"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A study with `production = true` on the simulator: the document has a "Production
/// Figures" table with, per configuration, energy per output token and tokens per joule
/// beside throughput (from the simulator's power model), and the MTP step's acceptance.
#[test]
fn the_study_document_reports_energy_and_acceptance_per_configuration() {
    const STUDY: &str = r#"format = "servebench-study"
version = 1
title = "Production figures"
model = "Qwen/Qwen3.5-35B-A3B"
hardware = "NVIDIA H200"
production = true

[profiles.small]
dataset_name = "Random"
dataset_input_tokens = 256
dataset_output_tokens = 128
request_rate = 16
total_requests = 32

[[engines]]
name = "vLLM"
kind = "simulator"
flags = ["--max-model-len=32768"]

[ladder]
profiles = ["small"]

[[ladder.steps]]
name = "MTP"
add = ['--speculative-config={"method":"mtp","num_speculative_tokens":2}']

[final]
profiles = ["small"]
"#;
    let s = servebench::study::StudyFile::parse(STUDY, "p.toml".as_ref()).unwrap();
    assert!(s.production);
    let doc = servebench::app::study::run_in_memory(&s).unwrap();
    let md = &doc.markdown;
    let section = md
        .split("## Production Figures")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap();
    let rows: Vec<Vec<&str>> = section
        .lines()
        .filter(|l| {
            l.starts_with("| ") && !l.starts_with("| Configuration") && !l.starts_with("| ---")
        })
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{section}");
    let (base, mtp) = (&rows[0], &rows[1]);
    assert_eq!((base[0], mtp[0]), ("vLLM", "MTP"));
    for r in &rows {
        let j: f64 = r[2].parse().unwrap();
        let tpj: f64 = r[3].parse().unwrap();
        let w: f64 = r[4].parse().unwrap();
        assert!(j > 0.0 && (j * tpj - 1.0).abs() < 0.01, "{r:?}");
        assert!((119.0..=700.0).contains(&w), "{r:?}");
    }
    assert_eq!(base[5], "-", "no speculative decoding in the baseline");
    assert!(mtp[5].ends_with('%'), "{mtp:?}");
    let len: f64 = mtp[6].parse().unwrap();
    assert!((1.5..3.0).contains(&len), "{mtp:?}");
    // Without `production` the section is absent (the seed's documents are unchanged).
    let mut plain = s.clone();
    plain.production = false;
    let doc = servebench::app::study::run_in_memory(&plain).unwrap();
    assert!(!doc.markdown.contains("Production Figures"));
}

/// Each new run-file field (the records' reasoning split and adapter; the result's
/// reasoning, energy, speculative-decoding and per-adapter figures; the run's GPU
/// telemetry) survives both run-file forms, and an old file without them reads back with
/// them absent.
#[test]
fn new_schema_fields_round_trip_through_the_run_file() {
    use servebench::observe::prom::Sample;
    use servebench::observe::ServerSeries;
    use servebench::profile::Profile;
    use servebench::record::{Chunk, StreamSplit};
    use servebench::result::{AdapterFigures, EnergyFigures, ReasoningFigures, SpecDecodeFigures};
    use servebench::runfile::{Form, RunFile};
    let ms = Duration::from_millis;
    let mut r = RequestRecord::new(0, ms(1));
    r.chunks = vec![
        Chunk {
            at: ms(20),
            tokens: 1,
        },
        Chunk {
            at: ms(30),
            tokens: 2,
        },
    ];
    r.ended_at = Some(ms(30));
    r.reasoning = Some(StreamSplit {
        first_reasoning_chunk: Some(0),
        first_answer_chunk: Some(1),
        reasoning_tokens: 1,
        answer_tokens: 2,
    });
    r.adapter = Some("sql-lora".into());
    let mut result = compute(
        std::slice::from_ref(&r),
        MetricsOptions::new(Convention::Vllm),
    );
    // Computed from the record: reasoning, tokens per chunk, the adapter.
    assert_eq!(result.reasoning.as_ref().unwrap().reasoning_tokens, 1);
    assert_eq!(
        result.spec_decode.as_ref().unwrap().tokens_per_chunk,
        Some(1.5)
    );
    assert_eq!(result.adapters[0].adapter, "sql-lora");
    result.energy = Some(EnergyFigures {
        source: "nvidia-smi".into(),
        gpus: 2,
        span_s: Some(1.0),
        energy_j: Some(900.0),
        mean_power_w: Some(900.0),
        peak_power_w: Some(f64::INFINITY),
        joules_per_output_token: Some(300.0),
        output_tokens_per_joule: Some(1.0 / 300.0),
        gpu_util_mean_pct: Some(35.0),
        fb_used_peak_mib: Some(1024.0),
        sm_clock_mean_mhz: Some(1980.0),
        server_speed: Some(10.0),
        notes: vec!["a note".into()],
    });
    result.spec_decode = Some(SpecDecodeFigures {
        drafts: Some(10.0),
        draft_tokens: Some(20.0),
        accepted_tokens: Some(13.0),
        acceptance_rate: Some(0.65),
        mean_accepted_length: Some(2.3),
        acceptance_per_position: vec![0.8, 0.5],
        tokens_per_chunk: Some(1.5),
    });
    let mut run = RunFile::new(
        result,
        vec![r],
        Profile::preset("latency").unwrap(),
        chrono::DateTime::parse_from_rfc3339("2026-12-04T18:00:00Z").unwrap(),
    );
    let mut gpu = ServerSeries::new("nvidia-smi", 1.0);
    gpu.push(0.0, vec![Sample::new("DCGM_FI_DEV_POWER_USAGE", 119.3)]);
    run.gpu_metrics = Some(gpu);
    for form in [Form::Json, Form::Jsonl] {
        let mut bytes = Vec::new();
        run.write_to(&mut bytes, form).unwrap();
        let back = RunFile::from_slice(&bytes).unwrap();
        assert_eq!(back, run, "{form:?}");
        let text = String::from_utf8(bytes).unwrap();
        for key in [
            "\"reasoning\"",
            "\"first_answer_chunk\":1",
            "\"adapter\":\"sql-lora\"",
            "\"energy\"",
            "\"joules_per_output_token\":300",
            "\"peak_power_w\":\"inf\"",
            "\"spec_decode\"",
            "\"acceptance_per_position\"",
            "\"adapters\"",
            "\"gpu_metrics\"",
        ] {
            assert!(text.contains(key), "{form:?}: {key}");
        }
    }
    // A result without the new fields (an older file) reads with them absent.
    let old = serde_json::json!({"schema_version": 2, "successful_requests": 1});
    let res: servebench::BenchmarkResult = serde_json::from_value(old).unwrap();
    assert!(res.reasoning.is_none() && res.energy.is_none() && res.spec_decode.is_none());
    assert!(res.adapters.is_empty());
    let _ = (ReasoningFigures::default(), AdapterFigures::default());
    // A bad value names its JSON path.
    let bad = serde_json::json!({"schema_version": 2, "energy": {"source": "x", "gpus": "two"}});
    let err = serde_json::from_value::<servebench::BenchmarkResult>(bad).unwrap_err();
    assert!(
        err.to_string().contains("gpus") || err.to_string().contains("invalid type"),
        "{err}"
    );
}

/// The DCGM energy counter (mJ) of `s` at `t`: linear between the scrapes around `t`.
fn counter_mj_at(s: &servebench::observe::ServerSeries, t: f64) -> f64 {
    let col = s.metric(&["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]).unwrap();
    let points: Vec<(f64, f64)> = s
        .times_s
        .iter()
        .zip(col)
        .filter_map(|(t, v)| Some((*t, v?)))
        .collect();
    let i = points
        .iter()
        .position(|p| p.0 >= t)
        .expect("t within the scrapes");
    if i == 0 || points[i].0 == t {
        return points[i].1;
    }
    let ((t0, a), (t1, b)) = (points[i - 1], points[i]);
    a + (b - a) * (t - t0) / (t1 - t0)
}

/// `bench --gpu-metrics URL` end to end, the example server's own `/metrics` (DCGM's names)
/// standing in for a DCGM exporter and the server scrape off (`--no-scrape`), so the
/// energy can only come from the GPU series. The run file keeps that series (sampled at
/// `--scrape-interval`, which holds with `--no-scrape` too, from before the first request
/// to after the last); the energy is the
/// energy counter's increase over the measured window, recomputed here from the stored
/// scrapes; J per output token is that energy over the run's output tokens, tokens per J
/// its inverse; the mean power over the window (virtual joules over virtual seconds) lies
/// between the simulator's idle power and the 700 W cap. `bench` and `report` print the
/// same figures.
#[test]
fn bench_gpu_metrics_url_puts_the_dcgm_energy_in_the_run_file() {
    let _serial = serial();
    let speed = 10.0;
    let (n, output) = (32u64, 256u64);
    let server = serve_sim("baseline", speed, |_| {});
    let target = format!("http://{}", server.local_addr());
    let dir = temp_dir("gpu-url");
    let (text, run) = bench(
        &target,
        &dir,
        &[
            "--input-tokens",
            "128",
            "--output-tokens",
            &output.to_string(),
            "--max-requests",
            &n.to_string(),
            "--rate",
            "20",
            "--max-concurrency",
            "32",
            "--no-scrape",
            "--scrape-interval",
            "0.5",
            "--gpu-metrics",
            &target,
        ],
    );
    assert!(run.server_metrics.is_none(), "--no-scrape");
    let gpu = run.gpu_metrics.as_ref().expect("the GPU series");
    assert_eq!(gpu.target, format!("{target}/metrics"));
    assert!(gpu.notes.is_empty(), "{:?}", gpu.notes);
    assert!((gpu.interval_s - 0.5).abs() < 1e-9);
    let (w0, w1) = servebench::metrics::measured_window_s(&run.records).unwrap();
    let (first, last) = (gpu.times_s[0], *gpu.times_s.last().unwrap());
    assert!(
        first <= w0 && w1 <= last,
        "sampled {first}..{last}, window {w0}..{w1}"
    );
    let r = &run.result;
    assert_eq!(r.total_output_tokens, Some(n * output));
    let e = r.energy.as_ref().expect("energy from the GPU series");
    assert_eq!(e.source, format!("dcgm:{target}/metrics"));
    assert_eq!(e.gpus, 1);
    assert_eq!(e.span_s, Some(w1 - w0));
    let joules = e.energy_j.unwrap();
    let want = (counter_mj_at(gpu, w1) - counter_mj_at(gpu, w0)) / 1000.0;
    assert!(
        (joules - want).abs() <= 1e-9 * want,
        "{joules} J, counters say {want} J"
    );
    let mean_w = joules / ((w1 - w0) * speed);
    let idle_w = servebench::sim::PowerModel::h200().idle_w;
    assert!(mean_w > idle_w * 1.1 && mean_w < 700.0 * 1.01, "{mean_w} W");
    let per_token = e.joules_per_output_token.unwrap();
    assert!((per_token - joules / (n * output) as f64).abs() <= 1e-12 * per_token);
    assert!((e.output_tokens_per_joule.unwrap() * per_token - 1.0).abs() < 1e-12);
    // The server runs 10× the wall clock and says so: the line gives both clocks, and its
    // mean power is the energy over the server's seconds (it once read 8834.9 J over 1.8 s
    // beside a mean power of 300 W).
    let head = format!(
        "Energy (dcgm:{target}/metrics, 1 GPU): {joules:.1} J over {:.1} s ({:.1} s of server \
         time at 10×), mean power ",
        w1 - w0,
        (w1 - w0) * speed
    );
    assert_eq!(e.server_speed, Some(speed));
    let power = e.mean_power_w.unwrap();
    assert!(
        (power / (joules / ((w1 - w0) * speed)) - 1.0).abs() < 1e-9,
        "{power} W against {joules} J over {} server seconds",
        (w1 - w0) * speed
    );
    let per = format!(
        "Energy per output token: {per_token:.4} J/token ({:.3} tokens/J)",
        1.0 / per_token
    );
    assert!(text.contains(&head) && text.contains(&per), "{text}");
    let (ok, report, err) = servebench(&["report", dir.join("run.json").to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(report.contains(&head) && report.contains(&per), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without an energy counter (`nvidia-smi` has none) the energy is the power samples'
/// integral by the trapezoid rule: 500 W for 2 s is 1000 J; a ramp from 100 to 300 W over
/// 2 s is 400 J (holding each sample until the next would say 300 J), and a window inside
/// the span takes the ramp's own share. Several GPUs' energy adds up, each GPU's series
/// on its own: a sample missing from one scrape (`[N/A]`, or a GPU absent from one DCGM
/// scrape) is bridged for that GPU.
#[test]
fn energy_without_a_counter_is_the_trapezoid_integral_of_the_power_samples() {
    use servebench::observe::prom::Sample;
    use servebench::observe::{energy_figures, parse_nvidia_smi, ServerSeries};
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
    let series = |points: &[(f64, &str)]| {
        let mut s = ServerSeries::new("nvidia-smi", 1.0);
        for (t, out) in points {
            s.push(*t, parse_nvidia_smi(out).unwrap());
        }
        s
    };
    // Constant power.
    let s = series(&[
        (0.0, "0, 500, 90, 1000, 1980"),
        (1.0, "0, 500, 90, 1000, 1980"),
        (2.0, "0, 500, 90, 1000, 1980"),
    ]);
    let e = energy_figures(&s, None, Some(400)).unwrap();
    assert_eq!(e.energy_j, Some(1000.0));
    assert_eq!(e.span_s, Some(2.0));
    assert_eq!(e.joules_per_output_token, Some(2.5));
    assert_eq!(e.output_tokens_per_joule, Some(0.4));
    assert_eq!((e.mean_power_w, e.peak_power_w), (Some(500.0), Some(500.0)));
    assert_eq!(e.gpus, 1);
    // A ramp: 100, 200, 300 W at 0, 1, 2 s.
    let s = series(&[
        (0.0, "0, 100, 0, 0, 0"),
        (1.0, "0, 200, 0, 0, 0"),
        (2.0, "0, 300, 0, 0, 0"),
    ]);
    let e = energy_figures(&s, None, None).unwrap();
    assert!(close(e.energy_j.unwrap(), 400.0), "{:?}", e.energy_j);
    // [0.5, 1.5] s of the ramp: mean power 200 W for 1 s.
    let e = energy_figures(&s, Some((0.5, 1.5)), None).unwrap();
    assert!(close(e.energy_j.unwrap(), 200.0), "{:?}", e.energy_j);
    // [0, 1] s: 150 J.
    let e = energy_figures(&s, Some((0.0, 1.0)), Some(15)).unwrap();
    assert!(close(e.energy_j.unwrap(), 150.0), "{:?}", e.energy_j);
    assert!(close(e.joules_per_output_token.unwrap(), 10.0));
    // Two GPUs: 300 W and 200 W for 2 s, the second GPU's sample at 1 s missing.
    let s = series(&[
        (0.0, "0, 300, 40, 1000, 1980\n1, 200, 60, 2000, 1800"),
        (1.0, "0, 300, 40, 1000, 1980\n1, [N/A], 60, 2000, 1800"),
        (2.0, "0, 300, 40, 1000, 1980\n1, 200, 60, 2000, 1800"),
    ]);
    let e = energy_figures(&s, None, None).unwrap();
    assert_eq!(e.gpus, 2);
    assert!(close(e.energy_j.unwrap(), 1000.0), "{:?}", e.energy_j);
    assert_eq!(e.gpu_util_mean_pct, Some(50.0));
    assert_eq!(e.sm_clock_mean_mhz, Some(1890.0));
    assert_eq!(e.fb_used_peak_mib, Some(3000.0));
    // Mean power is each GPU's own mean, added up: 300 W + 200 W (a per-scrape sum would
    // read the scrape missing the second GPU as 300 W and give 400 W).
    assert!(
        close(e.mean_power_w.unwrap(), 500.0),
        "{:?}",
        e.mean_power_w
    );
    // Power without a `gpu` label (a DCGM exporter without the counter) is read the same.
    let mut s = ServerSeries::new("http://gpu-host:9400/metrics", 1.0);
    for (t, w) in [(0.0, 100.0), (2.0, 300.0)] {
        s.push(t, vec![Sample::new("DCGM_FI_DEV_POWER_USAGE", w)]);
    }
    let e = energy_figures(&s, None, None).unwrap();
    assert!(close(e.energy_j.unwrap(), 400.0), "{:?}", e.energy_j);
    // Two GPUs' energy counters (mJ since boot), the second GPU's missing from the scrape
    // at 1 s: each GPU's counter on its own, 600 J + 400 J (added up per scrape, the
    // missing GPU would read as a counter reset: megajoules).
    let counter = |gpu: &str, mj: f64| Sample {
        name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION".into(),
        labels: vec![("gpu".into(), gpu.into())],
        value: mj,
    };
    let mut s = ServerSeries::new("http://gpu-host:9400/metrics", 1.0);
    s.push(0.0, vec![counter("0", 1e9), counter("1", 2e9)]);
    s.push(1.0, vec![counter("0", 1e9 + 3e5)]);
    s.push(2.0, vec![counter("0", 1e9 + 6e5), counter("1", 2e9 + 4e5)]);
    let e = energy_figures(&s, None, Some(100)).unwrap();
    assert_eq!(e.gpus, 2);
    assert!(close(e.energy_j.unwrap(), 1000.0), "{:?}", e.energy_j);
    assert!(close(e.joules_per_output_token.unwrap(), 10.0));
    // Over [0.5, 1.5] s: each counter interpolated between its own scrapes, 300 + 200 J.
    let e = energy_figures(&s, Some((0.5, 1.5)), None).unwrap();
    assert!(close(e.energy_j.unwrap(), 500.0), "{:?}", e.energy_j);
}

/// A fake `nvidia-smi` in `dir`/bin, to put first on `PATH`: it prints `csv` when asked
/// exactly what `servebench` asks (`--query-gpu=` [`NVIDIA_SMI_QUERY`], CSV without header
/// or units), else fails.
#[cfg(unix)]
fn fake_nvidia_smi(dir: &std::path::Path, csv: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("nvidia-smi");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             if [ $# -ne 2 ] || [ \"$1\" != \"--query-gpu={}\" ] \
             || [ \"$2\" != \"--format=csv,noheader,nounits\" ]; then\n\
             echo \"unexpected arguments: $*\" >&2; exit 2\n\
             fi\n\
             cat <<'CSV'\n{csv}\nCSV\n",
            servebench::observe::NVIDIA_SMI_QUERY
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `bench --gpu-metrics nvidia-smi` end to end with a fake `nvidia-smi` first on `PATH`
/// (two GPUs drawing 300 W and 200 W): the run file keeps the sampled series under DCGM's
/// names, and its energy is 500 W times the measured window (the power integrated, not the
/// example server's own DCGM energy, which its scraped `/metrics` also carry: the GPU
/// series comes first); J per output token over the run's output tokens; utilization and
/// clock per GPU, memory added up. `report` prints them. An `nvidia-smi` that fails leaves
/// notes in the series, and no figure claims to be from it.
#[cfg(unix)]
#[test]
fn bench_gpu_metrics_nvidia_smi_integrates_the_sampled_power() {
    let _serial = serial();
    let server = serve_sim("baseline", 20.0, |_| {});
    let target = format!("http://{}", server.local_addr());
    let dir = temp_dir("gpu-smi");
    let bin = fake_nvidia_smi(&dir, "0, 300.00, 40, 1000, 1980\n1, 200.00, 60, 2000, 1800");
    let out = dir.join("run.json");
    let flags = [
        "--input-tokens",
        "128",
        "--output-tokens",
        "128",
        "--max-requests",
        "16",
        "--rate",
        "40",
        "--scrape-interval",
        "0.1",
        "--gpu-metrics",
        "nvidia-smi",
    ];
    let (text, run) = bench_to(&target, &out, &flags, Some(&bin));
    let gpu = run.gpu_metrics.as_ref().expect("the nvidia-smi series");
    assert_eq!(gpu.target, "nvidia-smi");
    assert!(gpu.notes.is_empty(), "{:?}", gpu.notes);
    assert!(gpu.len() >= 2);
    // The example server's DCGM metrics were scraped too.
    let server_metrics = run.server_metrics.as_ref().unwrap();
    assert!(server_metrics
        .metric(&["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"])
        .is_some());
    let (w0, w1) = servebench::metrics::measured_window_s(&run.records).unwrap();
    assert!(gpu.times_s[0] <= w0 && w1 <= *gpu.times_s.last().unwrap());
    let e = run.result.energy.as_ref().expect("energy");
    assert_eq!((e.source.as_str(), e.gpus), ("nvidia-smi", 2));
    let joules = e.energy_j.unwrap();
    assert!(
        (joules - 500.0 * (w1 - w0)).abs() < 1e-9 * joules,
        "{joules} J over {} s",
        w1 - w0
    );
    let near = |v: Option<f64>, want: f64| (v.unwrap() - want).abs() < 1e-9 * want;
    assert!(
        near(e.mean_power_w, 500.0) && near(e.peak_power_w, 500.0),
        "{e:?}"
    );
    assert!(near(e.gpu_util_mean_pct, 50.0), "{e:?}");
    assert!(near(e.sm_clock_mean_mhz, 1890.0), "{e:?}");
    assert_eq!(e.fb_used_peak_mib, Some(3000.0));
    let tokens = run.result.total_output_tokens.unwrap();
    assert_eq!(tokens, 16 * 128);
    let per_token = e.joules_per_output_token.unwrap();
    assert!((per_token - joules / tokens as f64).abs() < 1e-12 * per_token);
    let head = format!(
        "Energy (nvidia-smi, 2 GPUs): {joules:.1} J over {:.1} s, mean power 500.0 W, \
         peak 500.0 W, GPU utilization 50.0 %, memory used up to 3000 MiB, SM clock 1890 MHz",
        w1 - w0
    );
    assert!(text.contains(&head), "{text}");
    let (ok, report, err) = servebench(&["report", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(report.contains(&head), "{report}");
    assert!(
        report.contains(&format!("Energy per output token: {per_token:.4} J/token")),
        "{report}"
    );

    // A failing nvidia-smi, a missing one, an exporter that does not answer, a source that
    // is neither: each stops `bench` before a request is sent, naming the source and why
    // (exit 1; 2 for a value that is no source at all). Nothing is saved.
    let broken = dir.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let bin = fake_nvidia_smi(&broken, "0, 300.00, 40, 1000");
    let empty = dir.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let cases: [(&str, Option<std::ffi::OsString>, i32, &[&str]); 4] = [
        (
            "nvidia-smi",
            Some(path_with(&bin)),
            1,
            &["--gpu-metrics", "nvidia-smi line 1"],
        ),
        (
            "nvidia-smi",
            Some(empty.clone().into_os_string()),
            1,
            &["--gpu-metrics", "nvidia-smi:"],
        ),
        (
            &closed,
            None,
            1,
            &["--gpu-metrics", &closed, "failed before the run started"],
        ),
        ("foo", None, 2, &["--gpu-metrics", "`foo` is neither"]),
    ];
    for (source, path, code, words) in cases {
        let out = broken.join("run.json");
        let mut cmd = std::process::Command::new(BIN);
        cmd.args(["bench", "--target", &target, "--quiet"])
            .args(&flags[..flags.len() - 2])
            .args(["--gpu-metrics", source, "--output"])
            .arg(&out);
        if let Some(p) = path {
            cmd.env("PATH", p);
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{source}: {err}");
        for w in words {
            assert!(err.contains(w), "{source}: no `{w}` in {err}");
        }
        assert!(!out.exists(), "{source}: a run file was written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run file `dir/NAME.json` of chat streams against the example server serving Qwen3.5
/// on an H200, with MTP (`spec` draft tokens) and a reasoning phase (`reasoning` tokens
/// of each answer's 128) when given; the server scraped every 50 ms, so the run file
/// carries its spec-decode counters and DCGM energy.
fn production_run(
    dir: &std::path::Path,
    name: &str,
    spec: Option<u32>,
    reasoning: Option<u64>,
) -> (String, servebench::runfile::RunFile) {
    let mut flags = vec!["--max-model-len=32768".to_string()];
    if let Some(k) = spec {
        flags.push(format!(
            r#"--speculative-config={{"method":"mtp","num_speculative_tokens":{k}}}"#
        ));
    }
    let config = servebench::sim::from_engine_args("qwen3.5-35b-a3b", "h200", &flags).unwrap();
    let server = serve_config(config, 20.0, |o| {
        o.reasoning = reasoning.map(ReasoningPhase::Tokens)
    });
    let target = format!("http://{}", server.local_addr());
    let path = dir.join(format!("{name}.json"));
    let (_, run) = bench_to(
        &target,
        &path,
        &[
            "--endpoint",
            "chat",
            "--input-tokens",
            "128",
            "--output-tokens",
            "128",
            "--max-requests",
            "16",
            "--rate",
            "50",
            "--max-concurrency",
            "16",
            "--scrape-interval",
            "0.05",
        ],
        None,
    );
    assert_eq!(run.result.successful_requests, Some(16));
    (path.to_str().unwrap().to_string(), run)
}

/// `compare` of two runs that both carry the production figures: MTP with 1 draft token
/// and 120 reasoning tokens per answer against MTP with 3 draft tokens and 8 reasoning
/// tokens (both pay the simulator's one-time MTP cold start, so the answers' head start,
/// about 60 ms of wall time at speed 20, is what the time to first answer compares). Each production row (time to first answer, J per output token, tokens per J,
/// spec-decode acceptance rate and mean accepted length) shows each file's own figure,
/// and the change's sign is the candidate's figure less the baseline's. The direction
/// words: the library's point verdicts follow each metric's direction (3 draft tokens:
/// a longer accepted length, a lower acceptance rate; 8 reasoning tokens: an earlier
/// answer; J per token and tokens per J agree); the CLI, with no interval for these rows,
/// says `noise unknown` rather than better or worse. The TTFT note says both runs
/// streamed reasoning.
#[test]
fn compare_shows_the_production_rows_of_both_run_files() {
    let _serial = serial();
    let dir = temp_dir("compare-prod");
    let (base_path, base) = production_run(&dir, "mtp1", Some(1), Some(120));
    let (cand_path, cand) = production_run(&dir, "mtp3", Some(3), Some(8));
    let (b, c) = (&base.result, &cand.result);
    let figures = |r: &servebench::BenchmarkResult| {
        let answer = r.reasoning.as_ref().unwrap().time_to_first_answer.as_ref();
        let energy = r.energy.as_ref().unwrap();
        let spec = r.spec_decode.as_ref().unwrap();
        [
            (
                "Mean TTFT of the answer (ms)",
                answer.unwrap().mean.unwrap(),
            ),
            (
                "P99 TTFT of the answer (ms)",
                answer.unwrap().percentile(99.0).unwrap(),
            ),
            (
                "Energy per output token (J)",
                energy.joules_per_output_token.unwrap(),
            ),
            (
                "Output tokens per joule",
                energy.output_tokens_per_joule.unwrap(),
            ),
            ("Spec-decode acceptance rate", spec.acceptance_rate.unwrap()),
            (
                "Spec-decode mean accepted len",
                spec.mean_accepted_length.unwrap(),
            ),
        ]
    };
    let (fb, fc) = (figures(b), figures(c));
    // The library's verdicts from the point values.
    let cmp = servebench::compare::compare(b, c);
    let verdict = |key: &str| {
        cmp.metrics
            .iter()
            .find(|m| m.metric.key == key)
            .unwrap_or_else(|| panic!("{key} compared"))
            .verdict()
    };
    assert_eq!(verdict("spec_decode_mean_accepted_length"), "better");
    assert_eq!(verdict("spec_decode_acceptance_rate"), "worse");
    assert_eq!(verdict("mean_time_to_first_answer_ms"), "better");
    assert_eq!(verdict("p99_time_to_first_answer_ms"), "better");
    assert_eq!(
        verdict("joules_per_output_token"),
        verdict("output_tokens_per_joule")
    );
    let (ok, text, err) = servebench(&["compare", &base_path, &cand_path]);
    assert!(ok, "{err}");
    for ((label, vb), (_, vc)) in fb.iter().zip(&fc) {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label}:\n{text}"));
        let cells: Vec<&str> = line[label.len()..].split_whitespace().collect();
        let num = |i: usize| -> f64 { cells[i].trim_end_matches('%').parse().unwrap() };
        // Two decimals in the table.
        assert!(
            (num(0) - vb).abs() <= 0.005 + 1e-9,
            "{label}: {line} vs {vb}"
        );
        assert!(
            (num(1) - vc).abs() <= 0.005 + 1e-9,
            "{label}: {line} vs {vc}"
        );
        let change = vc - vb;
        assert!((num(2) - change).abs() <= 0.005 + 1e-9, "{label}: {line}");
        assert_eq!(cells[2].starts_with('+'), change >= 0.0, "{label}: {line}");
        let pct = change / vb.abs() * 100.0;
        assert!((num(3) - pct).abs() <= 0.005 + 1e-9, "{label}: {line}");
        assert_eq!(cells[4..].join(" "), "noise unknown", "{label}: {line}");
    }
    assert!(
        text.contains(
            "Note: both runs streamed reasoning: TTFT counts the first token of either stream"
        ),
        "{text}"
    );
    // The markdown table has the same rows.
    let (ok, md, err) = servebench(&["compare", "--format", "markdown", &base_path, &cand_path]);
    assert!(ok, "{err}");
    let rate = |v: f64| format!("{v:.2}");
    assert!(
        md.contains(&format!(
            "| Spec-decode acceptance rate | {} | {} | ",
            rate(fb[4].1),
            rate(fc[4].1)
        )),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `explain` on runs with speculative decoding and reasoning: for each such run, the note
/// that its TPOT split overstates the step time, with the run file's own acceptance rate,
/// mean accepted length and tokens per streamed chunk, and the note that its TTFT counts
/// the first reasoning token. A run with neither gets neither note, though its TPOT is
/// split (so the notes' absence is not just a missing breakdown).
#[test]
fn explain_notes_speculative_decoding_and_reasoning_with_the_run_files_figures() {
    let _serial = serial();
    let dir = temp_dir("explain-prod");
    let (mtp_path, mtp) = production_run(&dir, "mtp", Some(2), Some(40));
    let (plain_path, _) = production_run(&dir, "plain", None, None);
    let spec_note = |label: &str, run: &servebench::runfile::RunFile| {
        let s = run.result.spec_decode.as_ref().unwrap();
        format!(
            "note: TPOT: {label} used speculative decoding (acceptance {:.0} %, mean accepted \
             length {:.2}, {:.2} tokens per streamed chunk): a step then yields more than one \
             token per request",
            s.acceptance_rate.unwrap() * 100.0,
            s.mean_accepted_length.unwrap(),
            s.tokens_per_chunk.unwrap()
        )
    };
    let reasoning_note = |label: &str| {
        format!(
            "note: TTFT: {label} streamed reasoning; TTFT counts the first token of either \
             stream (reasoning or answer), not the first answer token"
        )
    };
    // Both notes for the run that has both; none for the plain one.
    let (ok, text, err) = servebench(&["explain", &plain_path, &mtp_path]);
    assert!(ok, "{err}");
    assert!(text.contains("\nmean TPOT: "), "{text}");
    assert!(text.contains(&spec_note("mtp", &mtp)), "{text}");
    assert!(text.contains(&reasoning_note("mtp")), "{text}");
    assert_eq!(
        text.matches("used speculative decoding").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("streamed reasoning").count(), 1, "{text}");
    // Two plain runs: a TPOT split, and neither note.
    let (ok, text, err) = servebench(&["explain", &plain_path, &plain_path]);
    assert!(ok, "{err}");
    assert!(text.contains("\nmean TPOT: "), "{text}");
    assert!(!text.contains("used speculative decoding"), "{text}");
    assert!(!text.contains("streamed reasoning"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
