//! Simulated H200 serving Qwen3.5-35B-A3B with vLLM 0.17: runs the seed study end to end.
//!
//! ```text
//! cargo run --release --example h200_server                  # the whole study
//! cargo run --release --example h200_server -- --profile throughput --config optimized
//! cargo run --release --example h200_server -- --fidelity    # simulated vs seed figures
//! cargo run --release --example h200_server -- --serve 127.0.0.1:8000 --speed 10  # over HTTP
//! ```
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

mod frontend;
mod guidellm;
mod model;
mod report;
#[cfg(feature = "http")]
mod serve;
mod sim;

use std::process::ExitCode;
use std::time::Duration;

use servebench::compare::gpustack::{conclusion_row, speed_summary, ConclusionTable};
use servebench::driver::{
    run_profile,
    workload::{ShareGptFilter, WorkloadOptions},
    DriverError, RunOutput, GUIDELLM_MAX_CONCURRENCY,
};
use servebench::format::text::{self, Style};
use servebench::metrics::{self, MetricsOptions};
use servebench::profile::{Dataset, Profile};
use servebench::result::BenchmarkResult;
use servebench::Convention;

use sim::{Config, H200Sim, CONFIG_NAMES};

/// `--max-connections` default of `--serve`: thousands of open streams (the library's own
/// default is 1024); the file-descriptor limit is raised to fit where the hard limit allows.
#[cfg(feature = "http")]
const DEFAULT_MAX_CONNECTIONS: usize = 8192;

/// guidellm's client-side prompt synthesis for random prompts, per prompt token.
const PROMPT_SYNTHESIS: Duration = Duration::from_nanos(3_400);

/// The seed's baseline measurements per profile: duration s, mean TTFT s, mean E2E s.
const SEED_BASELINE: [(&str, f64, f64, f64); 4] = [
    ("sharegpt", 70.72, 4.07, 30.19),
    ("throughput", 40.37, 5.81, 19.96),
    ("long-context", 73.72, 31.98, 47.26),
    ("generation-heavy", 57.74, 1.92, 57.43),
];
/// The seed's optimized durations, s.
const SEED_OPTIMIZED: [(&str, f64); 4] = [
    ("sharegpt", 65.25),
    ("throughput", 33.09),
    ("long-context", 59.32),
    ("generation-heavy", 49.34),
];

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

const USAGE: &str = "usage: h200_server [--profile NAME] [--config NAME] [--seed N] [--format text|json|markdown] [--as-guidellm] [--warm] [--sharegpt FILE [--sharegpt-filter none|vllm]] [--fidelity]\n       h200_server --serve HOST:PORT [--speed X] [--config NAME] [--delta content|reasoning|reasoning_content] [--fault 500:N|cut:N:K|error:N:K] [--max-connections N] [--api-key KEY]";

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
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
            "--delta" => a.delta = Some(serve::parse_delta(&value("--delta")?)?),
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

/// Whether `profile` runs on a freshly deployed server: in the seed's order each
/// configuration is deployed, benchmarked with ShareGPT first, then with the other profiles
/// on the same (warm) server. `--warm` makes every run warm.
fn starts_cold(profile: &Profile, warm: bool) -> bool {
    !warm && profile.name.as_deref() == Some("sharegpt")
}

/// Runs `profile` against a fresh simulator in `config` (cold or warm, see [`starts_cold`]).
fn simulate(
    profile: &Profile,
    config: &Config,
    seed: u64,
    warm: bool,
) -> Result<RunOutput, DriverError> {
    simulate_with(profile, config, seed, warm, ShareGptFilter::None)
}

/// [`simulate`] with a choice of ShareGPT filtering rules (for `--sharegpt FILE`).
fn simulate_with(
    profile: &Profile,
    config: &Config,
    seed: u64,
    warm: bool,
    sharegpt_filter: ShareGptFilter,
) -> Result<RunOutput, DriverError> {
    let mut engine = H200Sim::new(config.clone());
    if !starts_cold(profile, warm) {
        engine = engine.warmed_up();
    }
    let opts = WorkloadOptions {
        sharegpt_seed: seed,
        sharegpt_filter,
        ..WorkloadOptions::default()
    };
    let synthetic = matches!(profile.dataset, Dataset::Random { .. });
    let cap = (profile.total_requests as usize).min(GUIDELLM_MAX_CONCURRENCY);
    let mut out = run_profile(&mut engine, profile, &opts, |o| {
        o.max_concurrency = Some(cap);
        if synthetic {
            o.client_prep_per_prompt_token = PROMPT_SYNTHESIS;
        }
    })?;
    debug_assert_eq!(engine.config(), config);
    let meta = &mut out.result.meta;
    meta.label = Some(config.name.to_string());
    meta.engine = Some("h200-sim (vLLM 0.17.1 model)".into());
    meta.engine_version = Some("0.17.1".into());
    meta.model = Some(config.model().into());
    meta.backend_parameters = config.backend_parameters();
    meta.source = Some("h200-sim".into());
    Ok(out)
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
        let thinking = match profile.dataset {
            Dataset::ShareGpt { .. } => guidellm::THINKING_SHAREGPT,
            Dataset::Random { .. } => guidellm::THINKING_RANDOM,
        };
        let seen = guidellm::reasoning_blind(&out.records, thinking, seed);
        let mut opts = MetricsOptions::new(Convention::Guidellm);
        opts.percentiles = vec![50.0, 95.0, 99.0];
        let mut r = metrics::compute(&seen, &opts);
        r.meta = out.result.meta.clone();
        r.meta.convention = Some(Convention::Guidellm);
        r
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
    for ((name, dur, ttft, e2e), (_, odur)) in SEED_BASELINE.iter().zip(SEED_OPTIMIZED.iter()) {
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
            let serve_args = serve::ServeArgs {
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
        fidelity(args.seed)
    } else {
        study(&args)
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
    //! The fidelity test runs the whole baseline and optimized study (eight simulated runs,
    //! about 2.5 M streamed tokens); the simulator is fast enough that this takes a few
    //! seconds even in a debug build, so nothing is marked `#[ignore]`.

    use super::*;

    fn mean_s(s: &Option<servebench::result::Summary>) -> f64 {
        s.as_ref().and_then(|s| s.mean).unwrap_or(f64::NAN) / 1000.0
    }

    /// Relative tolerances: duration 5%, mean TTFT 15%, mean E2E 10%.
    const TOLERANCE: (f64, f64, f64) = (0.05, 0.15, 0.10);

    #[test]
    fn simulated_baseline_matches_the_seed() {
        let mut failures = Vec::new();
        for (name, dur, ttft, e2e) in SEED_BASELINE {
            let r = simulate(&preset(name), &config("baseline"), 0, false)
                .unwrap()
                .result;
            assert_eq!(r.successful_requests, Some(preset(name).total_requests));
            assert_eq!(r.failed_requests, Some(0));
            let (td, tt, te) = TOLERANCE;
            let got = [
                ("duration", r.duration_s().unwrap_or(f64::NAN), dur, td),
                ("mean TTFT", mean_s(&r.ttft), ttft, tt),
                ("mean E2E", mean_s(&r.e2el), e2e, te),
            ];
            for (what, sim, seed, tol) in got {
                let err = (sim / seed - 1.0).abs();
                if err.is_nan() || err > tol {
                    failures.push(format!("{name} {what}: simulated {sim:.2} vs seed {seed:.2} ({:+.1}%, tolerance {:.0}%)", (sim / seed - 1.0) * 100.0, tol * 100.0));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// The seed's ShareGPT TTFT has its median above its mean (5.79 vs 4.07 s) and a P99 of
    /// 10.20 s: no first token for the first seconds, then first tokens at the prefill
    /// rate. The cold-start model reproduces the shape, not just the mean.
    #[test]
    fn sharegpt_ttft_distribution_has_the_seeds_shape() {
        let r = simulate(&preset("sharegpt"), &config("baseline"), 0, false)
            .unwrap()
            .result;
        let ttft = r.ttft.unwrap_or_default();
        let (mean, median) = (ttft.mean.unwrap_or(0.0), ttft.median.unwrap_or(0.0));
        assert!(median > mean, "median {median} <= mean {mean}");
        let p99 = ttft.percentile(99.0).unwrap_or(0.0) / 1000.0;
        assert!((p99 / 10.20 - 1.0).abs() < 0.15, "P99 {p99}");
        // A warm server shows no such gap: most requests get their first token quickly.
        let w = simulate(&preset("sharegpt"), &config("baseline"), 0, true)
            .unwrap()
            .result;
        let wt = w.ttft.unwrap_or_default();
        assert!(wt.median.unwrap_or(0.0) < wt.mean.unwrap_or(0.0));
    }

    #[test]
    fn optimized_beats_baseline_on_every_profile() {
        for ((name, _, _, _), (_, seed_opt)) in SEED_BASELINE.iter().zip(SEED_OPTIMIZED) {
            let b = simulate(&preset(name), &config("baseline"), 0, false)
                .unwrap()
                .result;
            let o = simulate(&preset(name), &config("optimized"), 0, false)
                .unwrap()
                .result;
            let (bd, od) = (b.duration_s().unwrap_or(0.0), o.duration_s().unwrap_or(0.0));
            assert!(
                od < bd,
                "{name}: optimized {od:.2} s not faster than baseline {bd:.2} s"
            );
            assert!(
                o.total_token_throughput_per_s > b.total_token_throughput_per_s,
                "{name}: throughput"
            );
            // Within 10% of the seed's optimized duration too.
            assert!(
                (od / seed_opt - 1.0).abs() < 0.10,
                "{name}: {od:.2} vs {seed_opt}"
            );
        }
    }

    #[test]
    fn runs_are_deterministic_and_the_seed_matters_for_sharegpt() {
        let p = preset("long-context");
        let a = simulate(&p, &config("quantization"), 3, false).unwrap();
        let b = simulate(&p, &config("quantization"), 3, false).unwrap();
        assert_eq!(a.records, b.records);
        let s1 = simulate(&preset("sharegpt"), &config("kv-fp8"), 1, false)
            .unwrap()
            .result;
        let s2 = simulate(&preset("sharegpt"), &config("kv-fp8"), 2, false)
            .unwrap()
            .result;
        assert_ne!(s1.total_input_tokens, s2.total_input_tokens);
    }

    #[test]
    fn every_config_runs_the_latency_profile_like_gpustacks_low_rate_runs() {
        // Random 128/128 at 1 req/s: nothing queues, TTFT is one admission plus a short
        // prefill, decode steps are a few ms.
        for name in CONFIG_NAMES {
            let r = simulate(&preset("latency"), &config(name), 0, false)
                .unwrap()
                .result;
            assert_eq!(r.successful_requests, Some(100), "{name}");
            let ttft = mean_s(&r.ttft);
            assert!((0.01..0.1).contains(&ttft), "{name}: TTFT {ttft}");
            let tpot = r.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
            assert!((4.0..8.0).contains(&tpot), "{name}: TPOT {tpot} ms");
        }
    }

    #[test]
    fn the_guidellm_view_reproduces_the_single_iteration_artifact() {
        let p = preset("throughput");
        let out = simulate(&p, &config("baseline"), 0, false).unwrap();
        let g = shown(&out, &p, 0, true);
        let v = out.result;
        // guidellm's "TPOT" is sum(TTFT) / sum(output tokens) when every request shows one
        // iteration, and its ITL is 0.
        let ttft_sum: f64 = out
            .records
            .iter()
            .filter_map(|r| r.ttft())
            .map(|d| d.as_secs_f64() * 1000.0)
            .sum();
        let tpot = g.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
        assert!((tpot - ttft_sum / 128_000.0).abs() < 0.01, "{tpot}");
        assert_eq!(g.itl.as_ref().and_then(|s| s.mean), Some(0.0));
        // All of a request's tokens land at one instant: the "peak" rate is inflated above
        // the real output rate.
        let real = v.output_throughput_per_s.unwrap_or(f64::MAX);
        assert!(g.peak_output_throughput_per_s.unwrap_or(0.0) > real);
        assert_eq!(g.meta.convention, Some(servebench::Convention::Guidellm));
    }

    /// The "Mean TPOT(ms)" GPUStack printed for the baselines (an artifact of the
    /// reasoning-blind client) is reproduced by the guidellm view within 15%: 45.39
    /// (Throughput), 319.79 (Long Context) and the mixture 2.48 (Generation Heavy, where
    /// about 5% of requests finish thinking and get real timing).
    #[test]
    fn the_guidellm_view_reproduces_gpustacks_reported_tpot() {
        for (name, seed_tpot) in [
            ("throughput", 45.39),
            ("long-context", 319.79),
            ("generation-heavy", 2.48),
        ] {
            let p = preset(name);
            let out = simulate(&p, &config("baseline"), 0, false).unwrap();
            let g = shown(&out, &p, 0, true);
            let tpot = g.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
            assert!(
                (tpot / seed_tpot - 1.0).abs() < 0.15,
                "{name}: {tpot:.2} vs {seed_tpot}"
            );
        }
    }

    #[test]
    fn huge_token_counts_are_rejected_not_an_overflow() {
        use servebench::engine::{Engine, EngineEvent, EngineRequest};
        use servebench::record::ErrorKind;
        use std::time::Duration;
        let mut e = H200Sim::new(config("baseline"));
        e.submit(EngineRequest {
            id: 7,
            prompt_tokens: 1000,
            prompt: None,
            max_output_tokens: u64::MAX,
            ignore_eos: true,
            arrival: Duration::ZERO,
            shared_prefix_tokens: 0,
        })
        .unwrap();
        let mut ev = Vec::new();
        while e.in_flight() > 0 {
            e.advance(None, &mut ev).unwrap();
        }
        match &ev[..] {
            [EngineEvent::Sent { id: 7, .. }, EngineEvent::Failed {
                id: 7,
                kind,
                message,
                ..
            }] => {
                assert_eq!(*kind, ErrorKind::Rejected);
                assert!(message.contains("maximum context length"), "{message}");
                assert!(message.contains(&u64::MAX.to_string()), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cancelled_requests_leave_the_engine_and_stay_silent() {
        use servebench::engine::{Engine, EngineEvent, EngineRequest};
        use std::time::Duration;
        let mut e = H200Sim::new(config("baseline"));
        let req = |id| EngineRequest {
            id,
            prompt_tokens: 1000,
            prompt: None,
            max_output_tokens: 50,
            ignore_eos: true,
            arrival: Duration::ZERO,
            shared_prefix_tokens: 0,
        };
        for id in 0..4 {
            e.submit(req(id)).unwrap();
        }
        // 0 is still in the frontend; run until 1 has streamed a token, then cancel 1 too.
        assert!(e.cancel(0));
        let mut ev = Vec::new();
        while !ev
            .iter()
            .any(|x: &EngineEvent| matches!(x, EngineEvent::Chunk { id: 1, .. }))
        {
            e.advance(Some(e.now() + Duration::from_millis(5)), &mut ev)
                .unwrap();
        }
        assert!(e.cancel(1));
        assert!(!e.cancel(1), "already cancelled");
        assert_eq!(e.in_flight(), 2);
        ev.clear();
        while e.in_flight() > 0 {
            e.advance(None, &mut ev).unwrap();
        }
        assert!(ev.iter().all(|x| x.id() >= 2), "no events after cancel");
        let done: Vec<u64> = ev
            .iter()
            .filter(|x| x.is_terminal())
            .map(|x| x.id())
            .collect();
        assert_eq!(done, vec![2, 3]);
        assert!(!e.cancel(2), "finished requests cannot be cancelled");
    }

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
                assert_eq!(run.meta.convention, Some(Convention::Vllm));
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
        assert!(a(&["--seed"]).is_err());
    }
}
