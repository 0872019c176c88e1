//! The simulator's one command line, shared by `cargo run --example h200_server` and
//! `servebench simulate` (feature `cli`): which model on which GPU under which vLLM flags
//! ([`SimArgs`]), which load (a preset, or `--rate/--requests/--input-tokens/--output-tokens`),
//! and the report it prints ([`report`]: result blocks and the seed's conclusion table,
//! Markdown, or the result JSON; or the simulated-vs-seed fidelity table).
//!
//! ```
//! use clap::Parser;
//! use servebench::app::simulate::{report, SimArgs};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     sim: SimArgs,
//! }
//! let cli = Cli::parse_from([
//!     "sim", "--model", "qwen3.5-9b", "--gpu", "h100", "--rate", "4", "--requests", "20",
//!     "--input-tokens", "128", "--output-tokens", "16", "--format", "json",
//! ]);
//! let mut notes = Vec::new();
//! let json = report(&cli.sim, &mut notes).unwrap();
//! let r: servebench::result::BenchmarkResult = serde_json::from_str(&json).unwrap();
//! assert_eq!(r.successful_requests, Some(20));
//! assert_eq!(r.meta.model.as_deref(), Some("Qwen/Qwen3.5-9B"));
//! ```

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::compare::gpustack::{conclusion_row, speed_summary, ConclusionTable};
use crate::driver::{workload::ShareGptFilter, DriverError};
use crate::format::text::{self, Style};
use crate::profile::{Dataset, Profile, ProfileError};
use crate::result::BenchmarkResult;
use crate::sim::run::Simulated;

use crate::format::sim::markdown;
use crate::sim::engine::Config;
use crate::sim::engine_args::{EngineArgs, SimConfigError};
use crate::sim::run::{guidellm_view, simulate, simulate_with, SEED_BASELINE_S, SEED_OPTIMIZED_S};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// "Serving Benchmark Result" blocks, as the seed prints them.
    Text,
    /// The result JSON (one object for one run, an array for several).
    Json,
    /// Markdown tables.
    Markdown,
}

/// ShareGPT filtering rules (`--sharegpt-filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FilterArg {
    /// Every two-turn conversation (what guidellm did).
    None,
    /// `vllm bench serve`'s length filter.
    Vllm,
}

/// The simulator's flags.
#[derive(Debug, Clone, Args)]
pub struct SimArgs {
    /// Model: a shipped name (qwen3.5-35b-a3b, qwen3.5-9b, qwen3-embedding-0.6b), a Hugging Face id
    /// (Qwen/Qwen3.5-35B-A3B-FP8; case-insensitive; -FP8 selects FP8 weights) or a path to
    /// a config.json.
    #[arg(long, default_value = "qwen3.5-35b-a3b")]
    pub model: String,
    /// GPU: h100, h200 or a path to a GPU description JSON.
    #[arg(long, default_value = "h200")]
    pub gpu: String,
    /// vLLM flags, as one string ("--max-num-seqs=512 --speculative-config={...}");
    /// added to --config's flag set when both are given. Unknown flags are listed as
    /// ignored on stderr.
    #[arg(long, allow_hyphen_values = true, value_name = "FLAGS")]
    pub engine_args: Option<String>,
    /// Load profile preset (sharegpt, throughput, long-context, generation-heavy, latency).
    #[arg(long, value_parser = known_profile)]
    pub profile: Option<String>,
    /// Named configuration (baseline, quantization, prefix-cache, performance-mode,
    /// kv-fp8, optimized): a vLLM flag set.
    #[arg(long, value_parser = known_config)]
    pub config: Option<String>,
    /// Constant request rate, req/s (overrides the profile's).
    #[arg(long, value_parser = positive_rate)]
    pub rate: Option<f64>,
    /// Number of requests (overrides the profile's).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub requests: Option<u64>,
    /// Prompt tokens per request: synthetic random prompts (with --output-tokens).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub input_tokens: Option<u64>,
    /// Output tokens per request: synthetic random prompts (with --input-tokens).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub output_tokens: Option<u64>,
    /// Random seed (ShareGPT sampling, speculative acceptance is seeded by request).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Print what guidellm + GPUStack would have reported of the same runs.
    #[arg(long)]
    pub as_guidellm: bool,
    /// No cold start (every run on a warm server).
    #[arg(long)]
    pub warm: bool,
    /// The real ShareGPT_V3_unfiltered_cleaned_split.json instead of the built-in length
    /// distribution.
    #[arg(long, value_name = "FILE")]
    pub sharegpt: Option<PathBuf>,
    /// ShareGPT filtering rules.
    #[arg(long, value_enum, default_value_t = FilterArg::None)]
    pub sharegpt_filter: FilterArg,
    /// Print the simulated-vs-seed fidelity table instead.
    #[arg(long)]
    pub fidelity: bool,
    /// Print the operators a step of --model runs (the JSON scripts/profile_kernels.py
    /// measures) instead; FP8 weights for a -FP8 model or --engine-args
    /// --quantization=fp8.
    #[arg(long)]
    pub dump_operators: bool,
    /// Turn on the run-to-run noise model ([`crate::sim::NoiseModel`], its documented defaults) with
    /// this seed: each run varies as real runs of one server do (the ShareGPT sample is then
    /// drawn with seed 0). Off by default: a deterministic simulation.
    #[arg(long, value_name = "SEED")]
    pub noise_seed: Option<u64>,
}

fn known_profile(v: &str) -> Result<String, String> {
    Profile::preset(v)
        .map(|_| v.to_string())
        .map_err(|e| e.to_string())
}

fn known_config(v: &str) -> Result<String, String> {
    if crate::sim::CONFIG_NAMES.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(format!(
            "unknown config `{v}` (known: {})",
            crate::sim::CONFIG_NAMES.join(", ")
        ))
    }
}

fn positive_rate(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r > 0.0)
        .ok_or(format!("not a positive number: `{v}`"))
}

/// Why the simulator could not report.
#[derive(Debug, thiserror::Error)]
pub enum SimCliError {
    /// The model, GPU or flags.
    #[error(transparent)]
    Config(#[from] SimConfigError),
    /// A profile.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A run.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// Flags that do not go together.
    #[error("{0}")]
    Usage(String),
}

impl SimArgs {
    /// Whether another model, GPU or load than the seed study's is asked for.
    fn custom(&self) -> bool {
        self.model != "qwen3.5-35b-a3b"
            || self.gpu != "h200"
            || self.rate.is_some()
            || self.requests.is_some()
            || self.input_tokens.is_some()
            || self.output_tokens.is_some()
    }

    /// The configurations to run: `--config` (plus `--engine-args`), `--engine-args` alone
    /// (a custom configuration), the baseline flag set for another model, GPU or load, or
    /// the seed's baseline and optimized.
    pub fn configs(&self) -> Result<Vec<Config>, SimCliError> {
        let extra = match &self.engine_args {
            Some(s) => EngineArgs::parse_str(s)?,
            None => EngineArgs::default(),
        };
        let merge = |base: Config| -> Result<Config, SimCliError> {
            if self.engine_args.is_none() {
                return Ok(base);
            }
            let mut flags = base.args.flags.clone();
            flags.extend(extra.flags.iter().cloned());
            let mut args = EngineArgs::parse(&flags)?;
            args.ignored = extra.ignored.clone();
            args.no_effect = extra.no_effect.clone();
            Ok(Config::from_parts(base.name, base.model, base.gpu, args)?)
        };
        match (&self.config, &self.engine_args) {
            (Some(name), _) => Ok(vec![merge(Config::named_on(
                name,
                &self.model,
                &self.gpu,
            )?)?]),
            (None, Some(_)) => {
                let model = crate::sim::spec::ModelSpec::resolve(&self.model)
                    .map_err(SimConfigError::from)?;
                let gpu =
                    crate::sim::spec::GpuSpec::resolve(&self.gpu).map_err(SimConfigError::from)?;
                Ok(vec![Config::from_parts("custom", model, gpu, extra)?])
            }
            // Another model, GPU or load: its baseline; else the seed's two configurations.
            (None, None) if self.custom() => {
                Ok(vec![Config::named_on("baseline", &self.model, &self.gpu)?])
            }
            (None, None) => Ok(vec![
                Config::named_on("baseline", &self.model, &self.gpu)?,
                Config::named_on("optimized", &self.model, &self.gpu)?,
            ]),
        }
    }

    /// The profiles to run: `--profile`, or a custom load (`--rate/--requests`, with
    /// `--input-tokens/--output-tokens` for random prompts, else ShareGPT), or the seed's
    /// four.
    pub fn profiles(&self) -> Result<Vec<Profile>, SimCliError> {
        let custom_load = self.rate.is_some()
            || self.requests.is_some()
            || self.input_tokens.is_some()
            || self.output_tokens.is_some();
        let mut profiles = match (&self.profile, custom_load) {
            (Some(p), _) => vec![Profile::preset(p)?],
            (None, true) => vec![Profile {
                name: None,
                dataset: Dataset::ShareGpt { path: None },
                request_rate: 1000.0,
                total_requests: 1000,
                max_concurrency: None,
            }],
            (None, false) => Profile::seed_study(),
        };
        for p in &mut profiles {
            match (self.input_tokens, self.output_tokens) {
                (Some(i), Some(o)) => {
                    p.dataset = Dataset::Random {
                        input_tokens: i,
                        output_tokens: o,
                        seed: 42,
                    };
                    p.name = None;
                }
                (None, None) => {}
                _ => {
                    return Err(SimCliError::Usage(
                        "--input-tokens and --output-tokens go together".into(),
                    ))
                }
            }
            if let Some(r) = self.rate {
                p.request_rate = r;
            }
            if let Some(n) = self.requests {
                p.total_requests = n;
            }
            if let (Some(path), Dataset::ShareGpt { path: slot }) = (&self.sharegpt, &mut p.dataset)
            {
                *slot = Some(path.clone());
            }
        }
        Ok(profiles)
    }

    fn filter(&self) -> ShareGptFilter {
        match self.sharegpt_filter {
            FilterArg::None => ShareGptFilter::None,
            FilterArg::Vllm => ShareGptFilter::Vllm,
        }
    }
}

/// The result to print: servebench's true figures, or guidellm's view of the same run.
fn shown(out: &Simulated, profile: &Profile, seed: u64, as_guidellm: bool) -> BenchmarkResult {
    if as_guidellm {
        guidellm_view(out, profile, seed)
    } else {
        out.result.clone()
    }
}

fn print_result(w: &mut String, r: &BenchmarkResult, format: OutputFormat) {
    match format {
        OutputFormat::Text => {
            w.push_str(&text::render(r, Style::Gpustack));
            w.push('\n');
        }
        OutputFormat::Markdown => w.push_str(&markdown(r)),
        OutputFormat::Json => {}
    }
}

/// The report `args` ask for. Notices (flags ignored or without effect) go to `notes`.
pub fn report(args: &SimArgs, notes: &mut dyn std::io::Write) -> Result<String, SimCliError> {
    if args.fidelity {
        return fidelity(args.seed);
    }
    if args.dump_operators {
        let c = args.configs()?.into_iter().next();
        return match c {
            Some(c) => Ok(crate::sim::operators::operator_list_json(
                &c.model,
                match c.weights {
                    crate::sim::model::Weights::Bf16 => crate::sim::kernels::Dtype::Bf16,
                    crate::sim::model::Weights::Fp8 => crate::sim::kernels::Dtype::Fp8,
                },
            )),
            None => Err(SimCliError::Usage("no configuration".into())),
        };
    }
    let profiles = args.profiles()?;
    let configs = args.configs()?;
    for c in &configs {
        let n = c.args.notice();
        if !n.is_empty() {
            // Notices are best effort (a closed stderr is not an error).
            let _ = notes.write_all(n.as_bytes());
        }
    }
    let mut w = String::new();
    let single = profiles.len() == 1 && configs.len() == 1;
    let headings = !single && args.format != OutputFormat::Json;
    let mut table = Vec::new();
    for p in &profiles {
        let mut results = Vec::new();
        if headings {
            w.push_str(&format!("{} Profile\n\n", p.title()));
        }
        for c in &configs {
            let out = match args.noise_seed {
                // Each (profile, configuration) run gets its own noise.
                Some(n) => crate::sim::noise::simulate_repetition(
                    p,
                    c,
                    args.warm,
                    &crate::sim::noise::NoiseModel {
                        resample_dataset: false,
                        ..crate::sim::noise::NoiseModel::typical(crate::sim::noise::seed_for(
                            n,
                            &format!("{}/{}", p.title(), c.name),
                        ))
                    },
                )?,
                None => simulate_with(p, c, args.seed, args.warm, args.filter())?,
            };
            if headings {
                let who = match c.name {
                    "baseline" => "Baseline",
                    "optimized" => "Optimized",
                    other => other,
                };
                w.push_str(&format!("{who} Backend Parameters:\n\n"));
                for b in c.backend_parameters() {
                    w.push_str(&format!("{b}\n"));
                }
                w.push_str(&format!("\n{who} benchmark result\n\n"));
            }
            let r = shown(&out, p, args.seed, args.as_guidellm);
            print_result(&mut w, &r, args.format);
            if headings {
                w.push('\n');
            }
            results.push(r);
        }
        table.push((p.title(), results));
    }
    if args.format == OutputFormat::Json {
        let all: Vec<&BenchmarkResult> = table.iter().flat_map(|(_, rs)| rs.iter()).collect();
        let json = if single {
            all.first().map(serde_json::to_string_pretty)
        } else {
            Some(serde_json::to_string_pretty(&all))
        };
        if let Some(s) = json {
            let s = s.map_err(|e| SimCliError::Usage(format!("cannot serialize: {e}")))?;
            w.push_str(&s);
            w.push('\n');
        }
        return Ok(w);
    }
    if single || configs.len() < 2 {
        return Ok(w);
    }
    let rows: Vec<_> = table
        .iter()
        .map(|(title, r)| conclusion_row(&format!("{title} Profile"), &r[0], &r[1]))
        .collect();
    let conclusion = ConclusionTable::new(rows);
    w.push_str("Comparison of benchmark results before and after optimization:\n\n");
    match args.format {
        OutputFormat::Markdown => w.push_str(&conclusion.markdown()),
        _ => w.push_str(&conclusion.text()),
    }
    w.push('\n');
    for (title, r) in &table {
        let runs = [(configs[0].name, &r[0]), (configs[1].name, &r[1])];
        if let Some(s) = speed_summary(&runs) {
            match args.format {
                OutputFormat::Markdown => w.push_str(&format!("{title}: {}\n", s.markdown())),
                _ => w.push_str(&format!("{title} Profile {}\n", s.text())),
            }
        }
    }
    Ok(w)
}

/// The simulated-vs-seed fidelity table (Markdown).
pub fn fidelity(seed: u64) -> Result<String, SimCliError> {
    let mut w = String::new();
    w.push_str("| Profile | duration sim / seed (s) | mean TTFT sim / seed (s) | mean E2E sim / seed (s) | optimized duration sim / seed (s) |\n");
    w.push_str("|---|---|---|---|---|\n");
    let baseline = Config::named_on("baseline", "qwen3.5-35b-a3b", "h200")?;
    let optimized = Config::named_on("optimized", "qwen3.5-35b-a3b", "h200")?;
    for ((name, dur, ttft, e2e), (_, odur)) in SEED_BASELINE_S.iter().zip(SEED_OPTIMIZED_S.iter()) {
        let p = Profile::preset(name)?;
        let b = simulate(&p, &baseline, seed, false)?.result;
        let o = simulate(&p, &optimized, seed, false)?.result;
        let pct = |a: f64, b: f64| (a / b - 1.0) * 100.0;
        let bd = b.duration_s().unwrap_or(0.0);
        let bt = b.ttft.as_ref().and_then(|s| s.mean).unwrap_or(0.0) / 1000.0;
        let be = b.e2el.as_ref().and_then(|s| s.mean).unwrap_or(0.0) / 1000.0;
        let od = o.duration_s().unwrap_or(0.0);
        w.push_str(&format!(
            "| {} | {bd:.2} / {dur:.2} ({:+.1}%) | {bt:.2} / {ttft:.2} ({:+.1}%) | {be:.2} / {e2e:.2} ({:+.1}%) | {od:.2} / {odur:.2} ({:+.1}%) |\n",
            p.title(),
            pct(bd, *dur),
            pct(bt, *ttft),
            pct(be, *e2e),
            pct(od, *odur)
        ));
    }
    // The development points (checks, not fitted).
    let dev = crate::sim::fidelity::development_points(seed)
        .map_err(|e| SimCliError::Usage(e.to_string()))?;
    w.push_str("\n| Development point | duration sim / published (s) | mean TTFT sim / published (s) | mean E2E sim / published (s) |\n");
    w.push_str("|---|---|---|---|\n");
    for r in &dev {
        let [ed, et, ee] = r.errors();
        let cell = |sim: f64, published: Option<f64>, err: Option<f64>| match (published, err) {
            (Some(p), Some(e)) => format!("{sim:.2} / {p:.2} ({:+.1}%)", e * 100.0),
            _ => format!("{sim:.2} / –"),
        };
        w.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.point.label,
            cell(r.duration_s, r.point.duration_s, ed),
            cell(r.ttft_s, r.point.ttft_s, et),
            cell(r.e2e_s, r.point.e2e_s, ee)
        ));
    }
    w.push_str(&format!(
        "\nMean absolute error of mean E2E latency over the development points: {:.1}%\n",
        crate::sim::fidelity::e2e_mean_absolute_error(&dev) * 100.0
    ));
    // The seed's measured 35B decode steps taken apart on the operator tables.
    let steps = crate::sim::fidelity::moe_decode_decomposition()
        .map_err(|e| SimCliError::Usage(e.to_string()))?;
    w.push_str("\n35B BF16 decode steps on the H200, operator tables (fused-MoE model) against the seed's measured steps, ms:\n\n| | ");
    let heads: Vec<String> = steps
        .iter()
        .map(|s| format!("{} seqs @ {}", s.seqs, s.context))
        .collect();
    w.push_str(&heads.join(" | "));
    w.push_str(" |\n|---|");
    w.push_str(&"---|".repeat(steps.len()));
    w.push('\n');
    let row = |w: &mut String, label: &str, cells: Vec<String>| {
        w.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
    };
    if let Some(first) = steps.first() {
        for (i, (name, _)) in first.operators.iter().enumerate() {
            let cells = steps
                .iter()
                .map(|s| {
                    s.operators
                        .get(i)
                        .map_or(String::new(), |o| format!("{:.2}", o.1))
                })
                .collect();
            row(&mut w, name, cells);
        }
    }
    let pct = |a: f64, b: f64| (a / b - 1.0) * 100.0;
    let measured = |s: &crate::sim::fidelity::StepDecomposition| {
        let (lo, hi) = s.measured_ms;
        if lo == hi {
            format!("{lo:.1}")
        } else {
            format!("{lo:.1}–{hi:.1}")
        }
    };
    let mid =
        |s: &crate::sim::fidelity::StepDecomposition| (s.measured_ms.0 + s.measured_ms.1) / 2.0;
    row(
        &mut w,
        "**step, operator tables**",
        steps
            .iter()
            .map(|s| format!("**{:.2}** ({:+.1}%)", s.tables_ms, pct(s.tables_ms, mid(s))))
            .collect(),
    );
    row(
        &mut w,
        "step, routed experts as torch._grouped_mm",
        steps
            .iter()
            .map(|s| format!("{:.2} ({:+.1}%)", s.grouped_ms, pct(s.grouped_ms, mid(s))))
            .collect(),
    );
    row(
        &mut w,
        "step, calibrated roofline, BF16 (the model the FP8 35B runs)",
        steps
            .iter()
            .map(|s| format!("{:.2} ({:+.1}%)", s.roofline_ms, pct(s.roofline_ms, mid(s))))
            .collect(),
    );
    row(
        &mut w,
        "measured (seed)",
        steps.iter().map(measured).collect(),
    );
    Ok(w)
}
