//! `servebench bench --target URL …`: benchmark an OpenAI-compatible server (vLLM, SGLang,
//! the `h200_server` example, …) with a load profile, showing a progress bar; prints the
//! "Serving Benchmark Result" block on stdout, the lints on stderr, and saves the raw
//! per-request records (`--output`) so every metric can be recomputed later.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use servebench::format::text;
use servebench::http::bench::{self, BenchArgs, Progress};
use servebench::http::{Endpoint, HttpConfig};
use servebench::profile::{Dataset, Profile, PRESET_NAMES};

use crate::input::InputError;
use crate::render::StyleArg;

/// The completion APIs, as typed on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum EndpointArg {
    /// `POST /v1/completions`.
    Completions,
    /// `POST /v1/chat/completions`.
    Chat,
}

/// Arguments of `servebench bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Server base URL, e.g. http://127.0.0.1:8000 (plain http only).
    #[arg(long)]
    target: String,
    /// Which completion API to call.
    #[arg(long, value_enum, default_value = "completions")]
    endpoint: EndpointArg,
    /// A load-profile preset.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(PRESET_NAMES),
          conflicts_with_all = ["input_tokens", "output_tokens"],
          required_unless_present_all = ["input_tokens", "output_tokens"])]
    profile: Option<String>,
    /// Random dataset: prompt tokens per request (with --output-tokens).
    #[arg(long, requires = "output_tokens")]
    input_tokens: Option<u64>,
    /// Random dataset: output tokens per request (sent as max_tokens with ignore_eos).
    #[arg(long, requires = "input_tokens")]
    output_tokens: Option<u64>,
    /// Requests per second (constant rate); default: the profile's (1000 for --input-tokens).
    #[arg(long)]
    rate: Option<f64>,
    /// Client-side cap on requests in flight; default: the profile's, else 512 (guidellm).
    #[arg(long)]
    max_concurrency: Option<usize>,
    /// Requests to send; default: the profile's (100 for --input-tokens).
    #[arg(long)]
    max_requests: Option<u64>,
    /// Stop sending after this many seconds; requests in flight are recorded as incomplete.
    #[arg(long)]
    max_seconds: Option<f64>,
    /// Save the run: `*.jsonl` gets one RequestRecord per line, anything else a JSON object
    /// {"result", "records"}.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Report style (also the metric convention: gpustack = guidellm's, vllm = vLLM's).
    #[arg(long, value_enum, default_value = "gpustack")]
    style: StyleArg,
    /// API key, sent as `Authorization: Bearer KEY` (default: $OPENAI_API_KEY).
    #[arg(long)]
    api_key: Option<String>,
    /// Model name; default: the first id of GET /v1/models.
    #[arg(long)]
    model: Option<String>,
    /// Per-request timeout in seconds (connect to [DONE]).
    #[arg(long, default_value_t = 6.0 * 3600.0)]
    timeout: f64,
    /// Do not ask for usage on every chunk (stream_options.continuous_usage_stats); each
    /// chunk then counts as one token.
    #[arg(long)]
    no_continuous_usage: bool,
    /// No progress output (the bar on a terminal; plain lines every few seconds otherwise).
    #[arg(long)]
    quiet: bool,
    /// Also compute 95 % confidence intervals from the records (stored in the saved result)
    /// and print them under the report block, which itself is unchanged.
    #[arg(long)]
    ci: bool,
}

fn seconds(name: &str, v: f64) -> Result<Duration, InputError> {
    Duration::try_from_secs_f64(v)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| InputError(format!("--{name}: not a positive number of seconds: {v}")))
}

fn profile(args: &Args) -> Result<Profile, InputError> {
    let mut p = match (&args.profile, args.input_tokens, args.output_tokens) {
        (Some(name), _, _) => Profile::preset(name).map_err(|e| InputError(e.to_string()))?,
        (None, Some(input_tokens), Some(output_tokens)) => Profile {
            name: None,
            dataset: Dataset::Random {
                input_tokens,
                output_tokens,
                seed: 42,
            },
            request_rate: 1000.0,
            total_requests: 100,
            max_concurrency: None,
        },
        _ => {
            return Err(InputError(
                "give --profile NAME or --input-tokens N --output-tokens M".into(),
            ))
        }
    };
    if let Some(r) = args.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(InputError(format!("--rate: not a positive number: {r}")));
        }
        p.request_rate = r;
    }
    if let Some(n) = args.max_requests {
        p.total_requests = n;
    }
    if let Some(c) = args.max_concurrency {
        if c == 0 {
            return Err(InputError("--max-concurrency must be at least 1".into()));
        }
        p.max_concurrency = Some(c as u64);
    }
    Ok(p)
}

fn progress_bar(total: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr_with_hz(5),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// How often a progress line is printed when stderr is not a terminal (CI logs, pipes).
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(5);

fn progress_line(p: &Progress, total: u64) -> String {
    format!(
        "servebench: progress {:.1} s: done {}/{total}, failed {}, in flight {}, {:.0} tok/s",
        p.elapsed.as_secs_f64(),
        p.done,
        p.failed,
        p.in_flight,
        p.tokens_per_s()
    )
}

/// Run the benchmark; the output is the report block.
pub fn run(args: &Args) -> Result<String, InputError> {
    let profile = profile(args)?;
    let mut http = HttpConfig::new(args.target.clone());
    http.endpoint = match args.endpoint {
        EndpointArg::Completions => Endpoint::Completions,
        EndpointArg::Chat => Endpoint::Chat,
    };
    http.model = args.model.clone();
    http.api_key = args
        .api_key
        .clone()
        .or_else(|| std::env::var("OPENAI_API_KEY").ok())
        .filter(|k| !k.is_empty());
    http.request_timeout = Some(seconds("timeout", args.timeout)?);
    http.continuous_usage = !args.no_continuous_usage;
    let bench_args = BenchArgs {
        http,
        profile: profile.clone(),
        max_requests: args.max_requests,
        max_duration: args
            .max_seconds
            .map(|s| seconds("max-seconds", s))
            .transpose()?,
        max_concurrency: args.max_concurrency,
        discover_model: true,
        style: args.style.into(),
    };
    let total = profile.total_requests;
    let bar = progress_bar(total, args.quiet);
    // Without a terminal the bar draws nothing: print a plain line now and then instead.
    let plain = !args.quiet && !std::io::stderr().is_terminal();
    let mut last: Option<Progress> = None;
    let mut report = |p: &Progress| {
        bar.set_position(p.done);
        bar.set_message(format!(
            "done {} failed {} in flight {} {:.0} tok/s",
            p.done,
            p.failed,
            p.in_flight,
            p.tokens_per_s()
        ));
        if plain && last.is_none_or(|l| p.elapsed >= l.elapsed.saturating_add(PLAIN_PROGRESS_EVERY))
        {
            eprintln!("{}", progress_line(p, total));
            last = Some(*p);
        }
    };
    let outcome = bench::run(&bench_args, &mut report);
    bar.finish_and_clear();
    let mut run = outcome.map_err(|e| InputError(format!("bench: {e}")))?;
    if args.ci {
        let opts = servebench::noise::within::IntervalOptions::default();
        if let Err(e) =
            servebench::noise::within::attach_intervals(&run.records, &mut run.result, &opts)
        {
            eprintln!("servebench: no confidence intervals: {e}");
        }
    }
    if plain {
        let failed = run
            .records
            .iter()
            .filter(|r| !r.outcome.is_success())
            .count();
        eprintln!(
            "servebench: finished: {} requests sent, {} succeeded, {failed} failed or incomplete",
            run.records.len(),
            run.records.len() - failed,
        );
    }
    if let Some(why) = &run.aborted {
        eprintln!("servebench: the run stopped early: {why}");
    }
    if !run.findings.is_empty() {
        eprintln!("servebench: lints ({}):", run.findings.len());
    }
    for f in &run.findings {
        eprintln!("{f}");
    }
    if let Some(path) = &args.output {
        bench::save(path, &run).map_err(|e| InputError(e.to_string()))?;
        eprintln!(
            "servebench: {} request records saved to {}",
            run.records.len(),
            path.display()
        );
    }
    // Nothing succeeded (an unreachable target, a wrong model, a server that fails every
    // request): that is an error, naming the target and the first reason.
    if !run.records.is_empty() && run.records.iter().all(|r| !r.outcome.is_success()) {
        let first = run
            .records
            .iter()
            .find_map(|r| match &r.outcome {
                servebench::record::Outcome::Error { message, .. } => Some(message.as_str()),
                servebench::record::Outcome::Incomplete { reason } => Some(reason.as_str()),
                _ => None,
            })
            .unwrap_or("no reason given");
        return Err(InputError(format!(
            "bench: no request to {} succeeded ({} failed; first: {first})",
            args.target,
            run.records.len()
        )));
    }
    let block = text::render(&run.result, args.style.into()) + "\n";
    if args.ci {
        return Ok(format!(
            "{block}\n{}",
            servebench::format::intervals::render(&run.result)
        ));
    }
    Ok(block)
}
