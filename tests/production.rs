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
        addr: "127.0.0.1:0".parse().unwrap(),
        speed,
        delta: None,
        fault: None,
        max_connections: 1024,
        api_key: None,
        handoff_window: server::DEFAULT_HANDOFF_WINDOW,
        worker_threads: server::default_worker_threads(),
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
    let out = dir.join("run.json");
    let o = std::process::Command::new(BIN)
        .args(["bench", "--target", target, "--quiet", "--style", "vllm"])
        .args(extra)
        .arg("--output")
        .arg(&out)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    // The block on stdout, the production figures on stderr.
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    (text, servebench::runfile::RunFile::read(&out).unwrap())
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
