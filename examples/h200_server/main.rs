//! Simulated H200 serving Qwen3.5-35B-A3B with vLLM 0.17: runs the seed study end to end.
//!
//! ```text
//! cargo run --release --example h200_server                  # the seed's study, its document
//! cargo run --release --example h200_server -- --study studies/qwen3.5-h200-latency.toml
//! cargo run --release --example h200_server -- --profile throughput --config optimized
//! cargo run --release --example h200_server -- --fidelity    # simulated vs seed figures
//! cargo run --release --example h200_server -- --serve 127.0.0.1:8000 --speed 10  # over HTTP
//! ```
//!
//! Without `--profile`/`--config` (and without `--format json`, `--as-guidellm`,
//! `--sharegpt`) it runs the study file `studies/qwen3.5-h200-throughput.toml` (or `--study
//! FILE`) on the embedded simulator with [`servebench::study`] and prints the document in
//! the seed's structure (what `servebench study run` writes as `STUDY.md`).
//!
//! Flags: `--profile NAME` (sharegpt, throughput, long-context, generation-heavy, latency),
//! `--config NAME` (baseline, quantization, prefix-cache, performance-mode, kv-fp8,
//! optimized), `--seed N`, `--format text|json|markdown`, `--as-guidellm` (what guidellm +
//! GPUStack would have reported), `--warm` (no cold start, see `starts_cold`), `--fidelity`
//! (the simulated-vs-seed table), `--sharegpt FILE` (the real
//! `ShareGPT_V3_unfiltered_cleaned_split.json` instead of the built-in length distribution;
//! token counts are approximated, see `servebench::driver::workload`; `--sharegpt-filter
//! vllm` applies `vllm bench serve`'s length filter, the default `none` keeps every
//! two-turn conversation as guidellm did); `--serve HOST:PORT
//! [--speed X] [--delta content|reasoning|reasoning_content] [--fault 500:N|cut:N:K|error:N:K]
//! [--max-connections N] [--api-key KEY]` serves the simulator (`--config`, default baseline;
//! warm) as an OpenAI-compatible streaming server (at most N connections at once, default
//! 8192; with a key, `/v1/…` requests need `Authorization: Bearer KEY`).

/// `writeln!` into the report buffer (a `String`: writing cannot fail).
macro_rules! out {
    ($w:expr) => {{
        $w.push('\n');
    }};
    ($w:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($w, $($t)*);
    }};
}

/// `write!` into the report buffer.
macro_rules! outp {
    ($w:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = write!($w, $($t)*);
    }};
}

mod report;
#[cfg(feature = "http")]
mod serve;

use std::process::ExitCode;

use servebench::compare::gpustack::{conclusion_row, speed_summary, ConclusionTable};
use servebench::driver::{workload::ShareGptFilter, DriverError, RunOutput};
use servebench::format::text::{self, Style};
use servebench::profile::{Dataset, Profile};
use servebench::result::BenchmarkResult;
use servebench::sim::run::{
    guidellm_view, simulate, simulate_with, SEED_BASELINE_S, SEED_OPTIMIZED_S,
};
use servebench::sim::{Config, CONFIG_NAMES};

/// `--max-connections` default of `--serve`: thousands of open streams (the library's own
/// default is 1024); the file-descriptor limit is raised to fit where the hard limit allows.
#[cfg(feature = "http")]
const DEFAULT_MAX_CONNECTIONS: usize = 8192;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Text,
    Json,
    Markdown,
}

#[derive(Debug)]
struct Args {
    profile: Option<String>,
    config: Option<String>,
    seed: u64,
    format: Format,
    as_guidellm: bool,
    fidelity: bool,
    warm: bool,
    sharegpt: Option<std::path::PathBuf>,
    sharegpt_filter: ShareGptFilter,
    serve: Option<std::net::SocketAddr>,
    study: Option<std::path::PathBuf>,
    speed: f64,
    #[cfg(feature = "http")]
    delta: Option<servebench::http::server::DeltaField>,
    #[cfg(feature = "http")]
    fault: Option<servebench::http::server::Fault>,
    #[cfg(feature = "http")]
    max_connections: usize,
    #[cfg(feature = "http")]
    api_key: Option<String>,
}

const USAGE: &str = "usage: h200_server [--study FILE]\n       h200_server [--profile NAME] [--config NAME] [--seed N] [--format text|json|markdown] [--as-guidellm] [--warm] [--sharegpt FILE [--sharegpt-filter none|vllm]] [--fidelity]\n       h200_server --serve HOST:PORT [--speed X] [--config NAME] [--delta content|reasoning|reasoning_content] [--fault 500:N|cut:N:K|error:N:K] [--max-connections N] [--api-key KEY]";

fn parse_args(it: impl Iterator<Item = String>) -> Result<Args, String> {
    // `--flag=value` is `--flag value` (as vLLM accepts both; study files use `=`).
    let mut it = it
        .flat_map(|a| match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => vec![k.to_string(), v.to_string()],
            _ => vec![a],
        })
        .collect::<Vec<_>>()
        .into_iter();
    let mut a = Args {
        profile: None,
        config: None,
        seed: 0,
        format: Format::Text,
        as_guidellm: false,
        fidelity: false,
        warm: false,
        sharegpt: None,
        sharegpt_filter: ShareGptFilter::None,
        serve: None,
        study: None,
        speed: 1.0,
        #[cfg(feature = "http")]
        delta: None,
        #[cfg(feature = "http")]
        fault: None,
        #[cfg(feature = "http")]
        max_connections: DEFAULT_MAX_CONNECTIONS,
        #[cfg(feature = "http")]
        api_key: None,
    };
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--profile" => {
                let v = value("--profile")?;
                Profile::preset(&v).map_err(|e| e.to_string())?;
                a.profile = Some(v);
            }
            "--config" => {
                let v = value("--config")?;
                if Config::named(&v).is_none() {
                    return Err(format!(
                        "unknown config `{v}` (known: {})",
                        CONFIG_NAMES.join(", ")
                    ));
                }
                a.config = Some(v);
            }
            "--seed" => {
                let v = value("--seed")?;
                a.seed = v
                    .parse()
                    .map_err(|_| format!("--seed: not a number: `{v}`"))?;
            }
            "--format" => {
                a.format = match value("--format")?.as_str() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    "markdown" => Format::Markdown,
                    other => {
                        return Err(format!(
                            "--format: unknown format `{other}` (text, json, markdown)"
                        ))
                    }
                }
            }
            "--as-guidellm" => a.as_guidellm = true,
            "--fidelity" => a.fidelity = true,
            "--warm" => a.warm = true,
            "--sharegpt" => a.sharegpt = Some(value("--sharegpt")?.into()),
            "--study" => a.study = Some(value("--study")?.into()),
            "--sharegpt-filter" => {
                a.sharegpt_filter = match value("--sharegpt-filter")?.as_str() {
                    "none" => ShareGptFilter::None,
                    "vllm" => ShareGptFilter::Vllm,
                    other => {
                        return Err(format!(
                            "--sharegpt-filter: `{other}` is not one of none, vllm"
                        ))
                    }
                }
            }
            "--serve" => {
                let v = value("--serve")?;
                a.serve = Some(
                    v.parse()
                        .map_err(|_| format!("--serve: not an address (HOST:PORT): `{v}`"))?,
                );
            }
            "--speed" => {
                let v = value("--speed")?;
                a.speed = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or(format!("--speed: not a positive number: `{v}`"))?;
            }
            #[cfg(feature = "http")]
            "--delta" => a.delta = Some(servebench::sim::serve::parse_delta(&value("--delta")?)?),
            #[cfg(feature = "http")]
            "--fault" => {
                let v = value("--fault")?;
                a.fault = Some(v.parse().map_err(|e| format!("--fault: {e}"))?);
            }
            #[cfg(feature = "http")]
            "--max-connections" => {
                let v = value("--max-connections")?;
                a.max_connections = v
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n >= 1)
                    .ok_or(format!("--max-connections: not a positive integer: `{v}`"))?;
            }
            #[cfg(feature = "http")]
            "--api-key" => a.api_key = Some(value("--api-key")?).filter(|k| !k.is_empty()),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(a)
}

fn preset(name: &str) -> Profile {
    match Profile::preset(name) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn config(name: &str) -> Config {
    match Config::named(name) {
        Some(c) => c,
        None => panic!("unknown config {name}"),
    }
}

/// The result to print: servebench's true figures, or guidellm's view of the same run.
fn shown(out: &RunOutput, profile: &Profile, seed: u64, as_guidellm: bool) -> BenchmarkResult {
    if as_guidellm {
        guidellm_view(out, profile, seed)
    } else {
        out.result.clone()
    }
}

fn print_result(w: &mut String, r: &BenchmarkResult, format: Format) {
    match format {
        Format::Text => out!(w, "{}", text::render(r, Style::Gpustack)),
        Format::Markdown => outp!(w, "{}", report::markdown(r)),
        Format::Json => {}
    }
}

/// The simulated-vs-seed fidelity table (Markdown).
fn fidelity(seed: u64) -> Result<String, DriverError> {
    let mut w = String::new();
    let w = &mut w;
    out!(w, "| Profile | duration sim / seed (s) | mean TTFT sim / seed (s) | mean E2E sim / seed (s) | optimized duration sim / seed (s) |");
    out!(w, "|---|---|---|---|---|");
    for ((name, dur, ttft, e2e), (_, odur)) in SEED_BASELINE_S.iter().zip(SEED_OPTIMIZED_S.iter()) {
        let p = preset(name);
        let bo = simulate(&p, &config("baseline"), seed, false)?;
        let b = bo.result;
        let o = simulate(&p, &config("optimized"), seed, false)?.result;
        let pct = |a: f64, b: f64| (a / b - 1.0) * 100.0;
        let bd = b.duration_s().unwrap_or(0.0);
        let bt = b.ttft.as_ref().and_then(|s| s.mean).unwrap_or(0.0) / 1000.0;
        let be = b.e2el.as_ref().and_then(|s| s.mean).unwrap_or(0.0) / 1000.0;
        let od = o.duration_s().unwrap_or(0.0);
        out!(w,
            "| {} | {bd:.2} / {dur:.2} ({:+.1}%) | {bt:.2} / {ttft:.2} ({:+.1}%) | {be:.2} / {e2e:.2} ({:+.1}%) | {od:.2} / {odur:.2} ({:+.1}%) |",
            p.title(),
            pct(bd, *dur),
            pct(bt, *ttft),
            pct(be, *e2e),
            pct(od, *odur)
        );
    }
    Ok(std::mem::take(w))
}

/// The seed's study file, shipped in the repository.
const SEED_STUDY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/studies/qwen3.5-h200-throughput.toml"
));

/// Whether the arguments ask for the study document (no single profile or config, no JSON,
/// no guidellm view, no ShareGPT file).
fn wants_document(args: &Args) -> bool {
    args.study.is_some()
        || (args.profile.is_none()
            && args.config.is_none()
            && args.format != Format::Json
            && !args.as_guidellm
            && args.sharegpt.is_none())
}

/// Runs the study file (the seed's, or `--study FILE`) on the simulator: its document.
#[cfg(all(feature = "study", unix))]
fn study_document(args: &Args) -> Result<String, String> {
    use servebench::study::{self, StudyFile};
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

/// The study's whole report: every run's block, then (for two configs) the conclusion
/// table and the summary lines.
fn study(args: &Args) -> Result<String, DriverError> {
    let mut w = String::new();
    let w = &mut w;
    let mut profiles: Vec<Profile> = match &args.profile {
        Some(p) => vec![preset(p)],
        None => Profile::seed_study(),
    };
    if let Some(path) = &args.sharegpt {
        for p in &mut profiles {
            if let Dataset::ShareGpt { path: slot } = &mut p.dataset {
                *slot = Some(path.clone());
            }
        }
    }
    let configs: Vec<Config> = match &args.config {
        Some(c) => vec![config(c)],
        None => vec![config("baseline"), config("optimized")],
    };
    let single = profiles.len() == 1 && configs.len() == 1;
    let headings = !single && args.format != Format::Json;
    let mut table = Vec::new();
    let mut all = Vec::new();
    for p in &profiles {
        let mut results = Vec::new();
        if headings {
            out!(w, "{} Profile\n", p.title());
        }
        for c in &configs {
            let out = simulate_with(p, c, args.seed, args.warm, args.sharegpt_filter)?;
            if headings {
                let who = match c.name {
                    "baseline" => "Baseline",
                    "optimized" => "Optimized",
                    other => other,
                };
                out!(w, "{who} Backend Parameters:\n");
                for b in c.backend_parameters() {
                    out!(w, "{b}");
                }
                out!(w, "\n{who} benchmark result\n");
            }
            let r = shown(&out, p, args.seed, args.as_guidellm);
            print_result(w, &r, args.format);
            if headings {
                out!(w);
            }
            results.push(r);
        }
        table.push((p.title(), results));
    }
    if args.format == Format::Json {
        for (_, rs) in &table {
            all.extend(rs.iter().cloned());
        }
        let json = if single {
            all.first().map(serde_json::to_string_pretty)
        } else {
            Some(serde_json::to_string_pretty(&all))
        };
        match json {
            Some(Ok(s)) => out!(w, "{s}"),
            Some(Err(e)) => eprintln!("h200_server: cannot serialize the results: {e}"),
            None => {}
        }
        return Ok(std::mem::take(w));
    }
    if single || configs.len() < 2 {
        return Ok(std::mem::take(w));
    }
    let rows: Vec<_> = table
        .iter()
        .map(|(title, r)| conclusion_row(&format!("{title} Profile"), &r[0], &r[1]))
        .collect();
    let conclusion = ConclusionTable::new(rows);
    out!(
        w,
        "Comparison of benchmark results before and after optimization:\n"
    );
    match args.format {
        Format::Markdown => outp!(w, "{}", conclusion.markdown()),
        _ => outp!(w, "{}", conclusion.text()),
    }
    out!(w);
    for (title, r) in &table {
        let runs = [(configs[0].name, &r[0]), (configs[1].name, &r[1])];
        if let Some(s) = speed_summary(&runs) {
            match args.format {
                Format::Markdown => out!(w, "{title}: {}", s.markdown()),
                _ => out!(w, "{title} Profile {}", s.text()),
            }
        }
    }
    Ok(std::mem::take(w))
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        // `--help` is not an error: the usage on stdout, status 0.
        Err(msg) if msg == USAGE => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("h200_server: {msg}");
            return ExitCode::from(2);
        }
    };
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
                api_key: args.api_key.clone(),
            };
            let config = config(args.config.as_deref().unwrap_or("baseline"));
            if let Err(e) = serve::run(config, &serve_args) {
                eprintln!("h200_server: {e}");
                return ExitCode::from(1);
            }
            return ExitCode::SUCCESS;
        }
    }
    let res = if args.fidelity {
        fidelity(args.seed).map_err(|e| e.to_string())
    } else if wants_document(&args) {
        study_document(&args)
    } else {
        study(&args).map_err(|e| e.to_string())
    };
    match res {
        Ok(report) => {
            use std::io::Write as _;
            // A closed stdout (`| head`) is not an error.
            let _ = std::io::stdout().lock().write_all(report.as_bytes());
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

    fn report_for(argv: &[&str]) -> String {
        let args = parse_args(argv.iter().map(|s| s.to_string())).unwrap();
        study(&args).unwrap()
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
        // The engine baseline, four modelled steps, baseline and optimized on four profiles.
        assert_eq!(text::parse(&doc).unwrap().len(), 13);
        let a = |v: &[&str]| parse_args(v.iter().map(|s| s.to_string())).unwrap();
        for argv in [
            &["--format", "json"][..],
            &["--profile", "latency"],
            &["--config", "baseline"],
            &["--as-guidellm"],
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
        assert_eq!(ok.profile.as_deref(), Some("throughput"));
        assert_eq!(ok.config.as_deref(), Some("kv-fp8"));
        assert_eq!((ok.seed, ok.format), (7, Format::Json));
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
            a(&["--sharegpt-filter", "vllm"]).unwrap().sharegpt_filter,
            ShareGptFilter::Vllm
        );
        assert!(a(&["--sharegpt-filter", "sglang"]).is_err());
        assert!(a(&["--warm"]).unwrap().warm);
        // `--flag=value` is `--flag value`.
        let eq = a(&["--config=optimized", "--seed=3"]).unwrap();
        assert_eq!((eq.config.as_deref(), eq.seed), (Some("optimized"), 3));
        assert!(a(&["--seed"]).is_err());
    }
}
