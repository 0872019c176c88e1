//! Simulated vLLM 0.17 serving a Qwen3.5-family model on an H100 or H200: runs the seed
//! study end to end, or any model, GPU, vLLM flags and load.
//!
//! ```text
//! cargo run --release --example h200_server                  # the seed's study, its document
//! cargo run --release --example h200_server -- --study studies/qwen3.5-h200-latency.toml
//! cargo run --release --example h200_server -- --profile throughput --config optimized
//! cargo run --release --example h200_server -- --fidelity    # simulated vs seed figures
//! cargo run --release --example h200_server -- --model qwen3.5-9b --gpu h100 \
//!     --profile sharegpt --rate 8 --requests 1000 \
//!     --engine-args "--max-num-seqs=256 --speculative-config={\"method\":\"mtp\",\"num_speculative_tokens\":1}" \
//!     --format json
//! cargo run --release --example h200_server -- --serve 127.0.0.1:8000 --speed 10  # over HTTP
//! ```
//!
//! Without a profile, configuration, other model, GPU, load or flags (and without `--format
//! json`, `--as-guidellm`, `--sharegpt`, `--fidelity`) it runs the study file
//! `studies/qwen3.5-h200-throughput.toml` (or `--study FILE`) on the embedded simulator with
//! [`servebench::study`] and prints the document in the seed's structure (what `servebench
//! study run` writes as `STUDY.md`).
//!
//! `--help` lists every flag. The simulator's flags are
//! [`servebench::app::simulate::SimArgs`], the same as `servebench simulate`'s; `--serve
//! HOST:PORT [--speed X] [--delta content|reasoning|reasoning_content] [--reasoning-tokens N |
//! --reasoning-share F] [--lora-modules A,B] [--fault
//! 500:N|cut:N:K|error:N:K] [--max-connections N] [--api-key KEY] [--handoff-window N] [--workers N]` serves the simulator
//! (the configuration the flags select, default baseline; warm) as an OpenAI-compatible
//! streaming server (at most N connections at once, default 8192; with a key, `/v1/…`
//! requests need `Authorization: Bearer KEY`).

#[cfg(feature = "http")]
mod serve;

use std::process::ExitCode;

use clap::Parser;
use servebench::app::simulate::{report, OutputFormat, SimArgs};

/// `--max-connections` default of `--serve`: thousands of open streams (the library's own
/// default is 1024); the file-descriptor limit is raised to fit where the hard limit allows.
#[cfg(feature = "http")]
const DEFAULT_MAX_CONNECTIONS: usize = 8192;

/// Simulated vLLM serving Qwen3.5 on an H100/H200: the seed study, any load, or an
/// OpenAI-compatible server.
#[derive(Debug, Parser)]
#[command(name = "h200_server")]
struct Args {
    #[command(flatten)]
    sim: SimArgs,
    /// Serve the simulator over HTTP at HOST:PORT instead of running a study.
    #[arg(long, value_name = "HOST:PORT")]
    serve: Option<std::net::SocketAddr>,
    /// Run this study file on the simulator and print its document (default: the seed's,
    /// studies/qwen3.5-h200-throughput.toml, when no profile, configuration or load is
    /// asked for).
    #[arg(long, value_name = "FILE")]
    study: Option<std::path::PathBuf>,
    /// With --serve: virtual seconds per wall second.
    #[arg(long, default_value_t = 1.0, value_parser = positive_speed, allow_negative_numbers = true)]
    speed: f64,
    /// With --serve: the chat delta field reasoning tokens stream in.
    #[cfg(feature = "http")]
    #[arg(long, value_parser = servebench::sim::serve::parse_delta)]
    delta: Option<servebench::http::server::DeltaField>,
    /// With --serve: a reasoning phase before the answer — the first N output tokens of
    /// every chat answer stream as reasoning (in the --delta field when that is a reasoning
    /// field, else `delta.reasoning`), the rest as `delta.content` (like vLLM with
    /// `--reasoning-parser qwen3`).
    #[cfg(feature = "http")]
    #[arg(long, value_name = "N", conflicts_with = "reasoning_share")]
    reasoning_tokens: Option<u64>,
    /// With --serve: like --reasoning-tokens, with this share (0–1) of each request's
    /// `max_tokens` as reasoning.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "F", value_parser = share)]
    reasoning_share: Option<f64>,
    /// With --serve: LoRA adapter names requests may name as their `model` besides the base
    /// model (like `vllm serve --lora-modules`; listed by /v1/models).
    #[cfg(feature = "http")]
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    lora_modules: Vec<String>,
    /// With --serve: inject a fault (500:N, cut:N:K, error:N:K).
    #[cfg(feature = "http")]
    #[arg(long, value_parser = parse_fault)]
    fault: Option<servebench::http::server::Fault>,
    /// With --serve: connections served at once.
    #[cfg(feature = "http")]
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = positive_usize)]
    max_connections: usize,
    /// With --serve: require `Authorization: Bearer KEY` on /v1/ routes.
    #[cfg(feature = "http")]
    #[arg(long)]
    api_key: Option<String>,
    /// With --serve: most streams woken to write at once; the others wait in line, first
    /// tokens in front (0: wake every stream at once).
    #[cfg(feature = "http")]
    #[arg(long, value_name = "N", default_value_t = servebench::http::server::DEFAULT_HANDOFF_WINDOW)]
    handoff_window: usize,
    /// With --serve: HTTP worker threads (default: the cores besides the engine thread's,
    /// 1–8).
    #[cfg(feature = "http")]
    #[arg(long, value_name = "N", default_value_t = servebench::http::server::default_worker_threads(), value_parser = positive_usize)]
    workers: usize,
    /// With --serve: record every request's server-side timeline, serve it at
    /// `GET /timeline` and write it to FILE (JSON Lines) on SIGTERM/SIGINT.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "FILE")]
    timeline: Option<std::path::PathBuf>,
    /// With --serve: start as a fresh deployment — 503 on every route but /metrics for the
    /// modelled start-up (weights loaded at 2 GB/s plus 30 s of compilation and CUDA-graph
    /// capture; an assumption), then a first batch that pays the cold-start cost.
    #[cfg(feature = "http")]
    #[arg(long)]
    cold: bool,
    /// With --serve: start cold (as --cold) and take this many virtual seconds to become
    /// healthy (what `vllm bench startup` measured on the real server).
    #[cfg(feature = "http")]
    #[arg(long, value_name = "S", value_parser = non_negative_seconds)]
    startup_seconds: Option<f64>,
    /// With --serve: answer the synthetic eval items of `servebench quality` (`Compute A +
    /// B. …`) rightly with probability P per item (seeded: `servebench::quality::answers`),
    /// so a quality difference between configurations can be staged.
    #[cfg(all(feature = "http", feature = "quality"))]
    #[arg(long, value_name = "P", value_parser = share)]
    accuracy: Option<f64>,
    /// With --accuracy: the seed of this server's own draws (two servers with different
    /// seeds differ as two runs of one model do).
    #[cfg(all(feature = "http", feature = "quality"))]
    #[arg(long, value_name = "S", default_value_t = 0, requires = "accuracy")]
    accuracy_seed: u64,
    /// With --serve: the share of tool calls (requests that offer `tools`) whose arguments
    /// break their tool's schema, drawn per request.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "SHARE", value_parser = share, default_value_t = 0.0)]
    invalid_tool_calls: f64,
    /// With --serve: the share of structured answers (a `json_schema` response format) that
    /// break their schema, drawn per request.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "SHARE", value_parser = share, default_value_t = 0.0)]
    invalid_json: f64,
    /// With --serve: the seed of those draws.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "S", default_value_t = 0)]
    checks_seed: u64,
    /// With --serve: compute nothing — every answer streams all its tokens at once, the
    /// cheapest valid stream — to measure the client's own ceiling (`servebench
    /// self-test`).
    #[arg(long, requires = "serve")]
    zero_compute: bool,
}

fn non_negative_seconds(v: &str) -> Result<f64, String> {
    v.parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| format!("`{v}` is not a number of seconds (0 or more)"))
}

fn positive_speed(v: &str) -> Result<f64, String> {
    v.parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .ok_or(format!("not a positive number: `{v}`"))
}

#[cfg(feature = "http")]
fn positive_usize(v: &str) -> Result<usize, String> {
    v.parse()
        .ok()
        .filter(|&n: &usize| n >= 1)
        .ok_or(format!("not a positive integer: `{v}`"))
}

#[cfg(feature = "http")]
fn share(v: &str) -> Result<f64, String> {
    v.parse()
        .ok()
        .filter(|s: &f64| (0.0..=1.0).contains(s))
        .ok_or(format!("not a share between 0 and 1: `{v}`"))
}

#[cfg(feature = "http")]
fn parse_fault(v: &str) -> Result<servebench::http::server::Fault, String> {
    v.parse().map_err(|e| format!("{e}"))
}

/// The seed's study file, shipped in the repository.
const SEED_STUDY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/studies/qwen3.5-h200-throughput.toml"
));

/// Whether the arguments ask for the study document: `--study FILE`, or none of a single
/// profile or config, another model, GPU, load or flags, JSON, the guidellm view, a ShareGPT
/// file or the fidelity table.
fn wants_document(args: &Args) -> bool {
    let s = &args.sim;
    args.study.is_some()
        || (s.profile.is_none()
            && s.config.is_none()
            && s.engine_args.is_none()
            && s.model == "qwen3.5-35b-a3b"
            && s.gpu == "h200"
            && s.rate.is_none()
            && s.requests.is_none()
            && s.input_tokens.is_none()
            && s.output_tokens.is_none()
            && s.format != OutputFormat::Json
            && !s.as_guidellm
            && !s.fidelity
            && s.sharegpt.is_none())
}

/// Runs the study file (the seed's, or `--study FILE`) on the simulator: its document.
#[cfg(all(feature = "study", unix))]
fn study_document(args: &Args) -> Result<String, String> {
    use servebench::app::study;
    use servebench::study::StudyFile;
    let parsed = match &args.study {
        Some(path) => StudyFile::read(path),
        None => StudyFile::parse(SEED_STUDY, "studies/qwen3.5-h200-throughput.toml".as_ref()),
    };
    let file = parsed.map_err(|e| e.to_string())?;
    study::run_in_memory(&file)
        .map(|d| d.markdown)
        .map_err(|e| e.to_string())
}

#[cfg(not(all(feature = "study", unix)))]
fn study_document(_: &Args) -> Result<String, String> {
    let _ = SEED_STUDY;
    Err("the study document needs the `study` feature (on by default)".into())
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(addr) = args.serve {
        #[cfg(not(feature = "http"))]
        {
            let _ = addr;
            eprintln!("h200_server: --serve needs the `http` feature (on by default)");
            return ExitCode::from(2);
        }
        #[cfg(feature = "http")]
        {
            let serve_args = servebench::sim::serve::ServeArgs {
                addr,
                speed: args.speed,
                delta: args.delta,
                fault: args.fault,
                max_connections: args.max_connections,
                api_key: args.api_key.clone().filter(|k| !k.is_empty()),
                handoff_window: args.handoff_window,
                worker_threads: args.workers,
                startup_s: None,
            };
            let config = match args.sim.configs() {
                Ok(c) => c.into_iter().next(),
                Err(e) => {
                    eprintln!("h200_server: {e}");
                    return ExitCode::from(2);
                }
            };
            let Some(config) = config else {
                return ExitCode::from(2);
            };
            // Unknown flags are refused, naming them: a served simulator silently running
            // without them would be measured as if it had them. Flags known but not
            // modelled are listed, as in the report modes.
            if !config.args.ignored.is_empty() {
                eprintln!(
                    "h200_server: unknown --engine-args flag(s): {} (the simulator would run \
                     without them; see --help for the flags it reads)",
                    config.args.ignored.join(" ")
                );
                return ExitCode::from(2);
            }
            let serve_args = servebench::sim::serve::ServeArgs {
                startup_s: args
                    .startup_seconds
                    .or(args.cold.then(|| config.startup_s())),
                ..serve_args
            };
            let notice = config.args.notice();
            if !notice.is_empty() {
                use std::io::Write as _;
                let _ = std::io::stderr().write_all(notice.as_bytes());
            }
            use servebench::http::server::ReasoningPhase;
            let reasoning = match (args.reasoning_tokens, args.reasoning_share) {
                (Some(n), _) => Some(ReasoningPhase::Tokens(n)),
                (None, Some(f)) => Some(ReasoningPhase::Share(f)),
                (None, None) => None,
            };
            let lora_modules = args.lora_modules.clone();
            #[cfg(feature = "quality")]
            let answerer = args.accuracy.map(|p| {
                let seed = args.accuracy_seed;
                servebench::http::server::Answerer(std::sync::Arc::new(move |prompt: &str| {
                    servebench::quality::answers::answer(prompt, p, seed)
                }))
            });
            #[cfg(not(feature = "quality"))]
            let answerer = None;
            let (invalid_tool_calls, invalid_json, checks_seed) =
                (args.invalid_tool_calls, args.invalid_json, args.checks_seed);
            let tune = move |o: &mut servebench::http::server::ServeOptions| {
                o.invalid_tool_calls = invalid_tool_calls;
                o.invalid_json = invalid_json;
                o.checks_seed = checks_seed;
                o.reasoning = reasoning;
                o.lora_modules = lora_modules;
                o.answerer = answerer;
            };
            let engine = if args.zero_compute {
                serve::Engine::ZeroCompute
            } else {
                serve::Engine::Simulator {
                    noise_seed: args.sim.noise_seed,
                }
            };
            if let Err(e) = serve::run(config, &serve_args, args.timeline.as_deref(), engine, tune)
            {
                eprintln!("h200_server: {e}");
                return ExitCode::from(1);
            }
            return ExitCode::SUCCESS;
        }
    }
    let res = if wants_document(&args) {
        study_document(&args)
    } else {
        report(&args.sim, &mut std::io::stderr()).map_err(|e| e.to_string())
    };
    match res {
        Ok(text) => {
            use std::io::Write as _;
            // A closed stdout (`| head`) is not an error.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("h200_server: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    //! The example's own flags and printing; the simulator itself is tested in
    //! `tests/sim_fidelity.rs`.

    use super::*;
    use servebench::app::simulate::FilterArg;
    use servebench::format::text::{self, Style};
    use servebench::profile::Profile;
    use servebench::result::BenchmarkResult;
    use servebench::sim::simulate;
    use servebench::sim::Config;

    fn parse_args(argv: impl Iterator<Item = String>) -> Result<Args, String> {
        Args::try_parse_from(std::iter::once("h200_server".to_string()).chain(argv))
            .map_err(|e| e.to_string())
    }

    fn preset(name: &str) -> Profile {
        Profile::preset(name).unwrap()
    }

    fn config(name: &str) -> Config {
        Config::named(name).unwrap()
    }

    fn report_for(argv: &[&str]) -> String {
        let args = parse_args(argv.iter().map(|s| s.to_string())).unwrap();
        report(&args.sim, &mut Vec::new()).unwrap()
    }

    #[test]
    fn the_default_study_prints_eight_blocks_the_conclusion_table_and_four_summaries() {
        let report = report_for(&[]);
        let blocks = text::parse(&report).unwrap();
        assert_eq!(blocks.len(), 8, "four profiles x (baseline, optimized)");
        // Each block is the seed-style rendering of that run's true (vLLM-convention) result.
        let titles = ["ShareGPT", "Throughput", "Long Context", "Generation Heavy"];
        for (i, title) in titles.iter().enumerate() {
            let heading = format!("{title} Profile\n\nBaseline Backend Parameters:\n");
            assert!(report.contains(&heading), "missing heading for {title}");
            for (k, cfg) in ["baseline", "optimized"].iter().enumerate() {
                let p = preset(["sharegpt", "throughput", "long-context", "generation-heavy"][i]);
                let run = simulate(&p, &config(cfg), 0, false).unwrap().result;
                let block = &blocks[2 * i + k];
                assert_eq!(
                    &report[block.span.clone()],
                    text::render(&run, Style::Gpustack).trim_end_matches('\n'),
                    "{title} {cfg}"
                );
                assert_eq!(run.meta.convention, Some(servebench::Convention::Vllm));
            }
        }
        // The conclusion table: header, then one row per profile whose Total TPS change is
        // the delta between that profile's two printed blocks.
        let table_at = report
            .find("Comparison of benchmark results before and after optimization:\n\n")
            .expect("conclusion heading");
        let lines: Vec<&str> = report[table_at..].lines().collect();
        assert_eq!(
            lines[2],
            "Benchmark Case\tbaseline (vLLM without any optimizations)\tOptimized"
        );
        for (i, title) in titles.iter().enumerate() {
            let row = lines[3 + i];
            assert!(
                row.starts_with(&format!("{title} Profile\tTotal TPS: ")),
                "{row}"
            );
            let base = blocks[2 * i].result.total_token_throughput_per_s.unwrap();
            let opt = blocks[2 * i + 1]
                .result
                .total_token_throughput_per_s
                .unwrap();
            let pct = servebench::compare::Delta::new(base, opt)
                .percent()
                .unwrap();
            assert!(
                row.contains(&format!("Total TPS: {opt:.2} ({pct:+.2}%)")),
                "{row} vs {opt:.2} ({pct:+.2}%)"
            );
            assert!(pct > 0.0, "optimized is faster on {title}");
        }
        let summaries: Vec<&str> = report
            .lines()
            .filter(|l| l.contains(" Profile Summary: optimized Total TPS = "))
            .collect();
        assert_eq!(summaries.len(), 4, "{summaries:?}");
        assert!(summaries
            .iter()
            .all(|l| l.contains("optimized is faster by")));
    }

    #[cfg(all(feature = "study", unix))]
    #[test]
    fn without_a_profile_or_config_it_prints_the_seed_studys_document() {
        let args = parse_args(std::iter::empty()).unwrap();
        assert!(wants_document(&args));
        let doc = study_document(&args).unwrap();
        assert!(doc.starts_with("# Optimizing Qwen3.5-35B-A3B Throughput\n\n## Conclusion\n"));
        // The engine baseline and the five steps (MTP is simulated) on the ladder's four
        // profiles, baseline and optimized on the four final profiles.
        assert_eq!(text::parse(&doc).unwrap().len(), 4 + 5 * 4 + 8);
        let a = |v: &[&str]| parse_args(v.iter().map(|s| s.to_string())).unwrap();
        for argv in [
            &["--format", "json"][..],
            &["--profile", "latency"],
            &["--config", "baseline"],
            &["--as-guidellm"],
            &["--fidelity"],
            &["--model", "qwen3.5-9b"],
            &["--gpu", "h100"],
            &["--rate", "8"],
            &["--engine-args", "--max-num-seqs=256"],
        ] {
            assert!(!wants_document(&a(argv)), "{argv:?}");
        }
        assert!(wants_document(&a(&["--study", "x.toml"])));
        let missing = study_document(&a(&["--study", "/nonexistent/x.toml"])).unwrap_err();
        assert!(missing.starts_with("/nonexistent/x.toml: "), "{missing}");
    }

    #[test]
    fn one_profile_and_config_prints_just_its_block_and_json_and_markdown_work() {
        let one = report_for(&["--profile", "latency", "--config", "kv-fp8"]);
        let blocks = text::parse(&one).unwrap();
        assert_eq!(blocks.len(), 1);
        assert_eq!(one.trim_end(), &one[blocks[0].span.clone()]);
        assert_eq!(blocks[0].result.successful_requests, Some(100));

        let json = report_for(&["--format", "json"]);
        let all: Vec<BenchmarkResult> = serde_json::from_str(&json).unwrap();
        let labels: Vec<_> = all.iter().map(|r| r.meta.label.as_deref()).collect();
        assert_eq!(labels.len(), 8);
        assert!(labels
            .chunks(2)
            .all(|c| c == [Some("baseline"), Some("optimized")]));
        let single: BenchmarkResult = serde_json::from_str(&report_for(&[
            "--format",
            "json",
            "--profile",
            "throughput",
            "--config",
            "baseline",
        ]))
        .unwrap();
        assert_eq!(single.successful_requests, Some(1000));
        // Server-reported usage: 1024 prompt tokens + the 10-token chat template (the seed
        // reports 1033932 for this profile).
        assert_eq!(single.total_input_tokens, Some(1034 * 1000));

        let md = report_for(&["--format", "markdown"]);
        assert_eq!(md.matches("| Metric | Value |").count(), 8);
        assert!(md.contains("| Successful requests | 1000 |"), "{md}");
        assert!(md.contains("Comparison of benchmark results before and after optimization:"));
        assert!(
            text::parse(&md).unwrap().is_empty(),
            "markdown has no text blocks"
        );
    }

    #[test]
    fn a_real_sharegpt_file_can_be_filtered_by_vllms_rules() {
        let dir = std::env::temp_dir().join(format!("h200-sharegpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ShareGPT_V3_unfiltered_cleaned_split.json");
        let long = "word ".repeat(1500);
        let json = serde_json::json!([
            {"id": "a", "conversations": [{"from": "human", "value": "What is the capital of France?"}, {"from": "gpt", "value": "The capital of France is Paris, a city on the Seine."}]},
            {"id": "d", "conversations": [{"from": "human", "value": long}, {"from": "gpt", "value": "That is a lot of words in one message."}]}
        ]);
        std::fs::write(&path, json.to_string()).unwrap();
        let file = path.to_str().unwrap();
        let run = |filter: &str| {
            let argv = [
                "--profile",
                "sharegpt",
                "--config",
                "baseline",
                "--format",
                "json",
                "--sharegpt",
                file,
                "--sharegpt-filter",
                filter,
            ];
            serde_json::from_str::<BenchmarkResult>(&report_for(&argv)).unwrap()
        };
        let vllm = run("vllm");
        // Only "a" (7 approximate prompt tokens) survives vLLM's filter; every one of the
        // 1000 requests uses it, plus the 10-token chat template.
        assert_eq!(vllm.total_input_tokens, Some(1000 * (7 + 10)));
        let none = run("none");
        assert!(
            none.total_input_tokens.unwrap() > 100 * 1500,
            "the long prompt is kept"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn arguments() {
        let a = |v: &[&str]| parse_args(v.iter().map(|s| s.to_string()));
        let ok = a(&[
            "--profile",
            "throughput",
            "--config",
            "kv-fp8",
            "--seed",
            "7",
            "--format",
            "json",
        ])
        .unwrap();
        assert_eq!(ok.sim.profile.as_deref(), Some("throughput"));
        assert_eq!(ok.sim.config.as_deref(), Some("kv-fp8"));
        assert_eq!((ok.sim.seed, ok.sim.format), (7, OutputFormat::Json));
        assert!(a(&["--config", "turbo"])
            .unwrap_err()
            .contains("unknown config"));
        assert!(a(&["--profile", "nope"]).is_err());
        let serve = a(&["--serve", "127.0.0.1:8000", "--speed", "10"]).unwrap();
        assert_eq!(serve.serve, Some("127.0.0.1:8000".parse().unwrap()));
        assert_eq!(serve.speed, 10.0);
        #[cfg(feature = "http")]
        {
            assert_eq!(serve.max_connections, 8192);
            assert_eq!(serve.api_key, None);
            let more = a(&["--max-connections", "20000", "--api-key", "sk-1"]).unwrap();
            assert_eq!(
                (more.max_connections, more.api_key.as_deref()),
                (20000, Some("sk-1"))
            );
            assert!(a(&["--max-connections", "0"]).is_err());
            assert!(a(&["--max-connections", "many"]).is_err());
        }
        assert!(a(&["--serve", "localhost"]).is_err());
        assert!(a(&["--speed", "0"]).is_err());
        assert!(a(&["--sharegpt"]).is_err());
        assert_eq!(
            a(&["--sharegpt-filter", "vllm"])
                .unwrap()
                .sim
                .sharegpt_filter,
            FilterArg::Vllm
        );
        assert!(a(&["--sharegpt-filter", "sglang"]).is_err());
        assert!(a(&["--warm"]).unwrap().sim.warm);
        // `--flag=value` is `--flag value` (study files write flags with `=`).
        let eq = a(&["--config=optimized", "--seed=3"]).unwrap();
        assert_eq!(
            (eq.sim.config.as_deref(), eq.sim.seed),
            (Some("optimized"), 3)
        );
        assert!(a(&["--seed"]).is_err());
        // clap's --help is a "success" error (exit 0, on stdout) listing the new flags.
        let help = Args::try_parse_from(["h200_server", "--help"]).unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        assert_eq!(help.exit_code(), 0);
        for flag in [
            "--engine-args",
            "--model",
            "--gpu",
            "--rate",
            "--input-tokens",
        ] {
            assert!(help.to_string().contains(flag), "{flag}");
        }
        let custom = a(&[
            "--model",
            "qwen3.5-9b",
            "--gpu",
            "h100",
            "--rate",
            "8",
            "--requests",
            "1000",
            "--engine-args",
            "--max-num-seqs=256 --frobnicate",
        ])
        .unwrap();
        assert_eq!(
            custom.sim.engine_args.as_deref(),
            Some("--max-num-seqs=256 --frobnicate")
        );
        assert!(a(&["--rate", "0"]).is_err());
        assert!(a(&["--requests", "0"]).is_err());
    }

    #[test]
    fn a_custom_model_gpu_load_and_flags_print_one_result_and_list_ignored_flags() {
        let args = parse_args(
            [
                "--model",
                "Qwen/Qwen3.5-9B",
                "--gpu",
                "h100",
                "--profile",
                "sharegpt",
                "--rate",
                "8",
                "--requests",
                "40",
                "--engine-args",
                "--max-num-seqs=256 --frobnicate",
                "--format",
                "json",
            ]
            .iter()
            .map(|s| s.to_string()),
        )
        .unwrap();
        let mut notes = Vec::new();
        let json = report(&args.sim, &mut notes).unwrap();
        let r: BenchmarkResult = serde_json::from_str(&json).unwrap();
        assert_eq!(r.successful_requests, Some(40));
        assert_eq!(r.meta.model.as_deref(), Some("Qwen/Qwen3.5-9B"));
        assert_eq!(
            r.meta.backend_parameters,
            vec!["--max-num-seqs=256".to_string()]
        );
        assert!(r.meta.engine.as_deref().unwrap_or("").contains("H100"));
        let notes = String::from_utf8(notes).unwrap();
        assert!(notes.contains("(ignored): --frobnicate"), "{notes}");
        // 40 requests at 8 req/s: about 5 s of arrivals plus the last request's latency.
        let d = r.duration_s().unwrap();
        assert!((4.8..40.0).contains(&d), "{d}");
    }
}
