//! `servebench bench --target URL …`: benchmark an OpenAI-compatible server (vLLM, SGLang,
//! the `h200_server` example, …) with a load profile, showing a progress bar; prints the
//! "Serving Benchmark Result" block (or JSON, or CSV) on stdout, the lints on stderr, and
//! saves the run file (`--output`) so that every metric can be recomputed later.
//!
//! The numbers follow vLLM's definitions unless `--convention guidellm` asks for guidellm's
//! (GPUStack's), and then the output says so. The output path is checked before the first
//! request; SIGINT/SIGTERM stop the run and save what was measured, marked interrupted.
//! `vllm bench serve`'s flag names are accepted as aliases.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use servebench::app::bench::{self, BenchArgs, Progress};
use servebench::driver::workload::WorkloadOptions;
use servebench::driver::StopSignal;
use servebench::http::HttpConfig;
use servebench::metrics::{MetricsOptions, Slo};
use servebench::profile::{Dataset, Profile, PRESET_NAMES};
use servebench::result::Convention;
use servebench::runfile::RunStatus;

use crate::endpoint_args::EndpointArgs;
use crate::exit;
use crate::input::InputError;
use crate::progress::{progress_bar, progress_line, PLAIN_PROGRESS_EVERY};
use crate::render::StyleArg;
use crate::report::ConventionArg;
use crate::signals;
use crate::values::{percentile, positive_f64, range_ratio, rate, seconds, share};
use crate::workload_args::{Common, Structured, WorkloadArgs};
use servebench::format::bench::{self as bench_output, BenchFormat};

/// The datasets, as typed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DatasetArg {
    /// Synthetic prompts of fixed lengths (`--input-tokens`, `--output-tokens`).
    Random,
    /// ShareGPT conversations (`--dataset-path FILE`, else the built-in length distribution).
    Sharegpt,
    /// A Mooncake trace (`--dataset-path FILE`), sent at its timestamps × `--time-scale`.
    Mooncake,
    /// Prompts sharing per-group prefixes (`--prefix-groups`, `--prompts-per-group`,
    /// `--prefix-tokens`; vLLM's `prefix_repetition`).
    #[value(alias = "prefix-repetition", alias = "prefix_repetition")]
    SharedPrefix,
    /// Multi-turn conversations (`--conversations`, `--turns`, or a ShareGPT file).
    MultiTurn,
    /// One prompt per line, `{"prompt": …, "output_tokens"?: N}` (vLLM's `custom`).
    #[value(alias = "custom")]
    Jsonl,
}

/// Arrival processes, as typed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArrivalsArg {
    /// Request `i` at `i / rate` (guidellm's `constant`, the seed study's runs).
    Constant,
    /// Exponential gaps (a Poisson process; vLLM's default, = `--burstiness 1`).
    Poisson,
}

/// Arguments of `servebench bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Server base URL, e.g. http://127.0.0.1:8000 (plain http only).
    #[arg(long, visible_alias = "base-url")]
    target: String,
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// A load-profile preset.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(PRESET_NAMES),
          conflicts_with_all = ["input_tokens", "output_tokens", "dataset"])]
    profile: Option<String>,
    /// The prompts: random (fixed lengths) or sharegpt.
    #[arg(long, value_enum, visible_alias = "dataset-name")]
    dataset: Option<DatasetArg>,
    /// ShareGPT JSON file (default: ./ShareGPT_V3_unfiltered_cleaned_split.json if present,
    /// else a built-in length distribution).
    #[arg(long, value_name = "FILE")]
    dataset_path: Option<PathBuf>,
    /// A Hugging Face `tokenizer.json`: random prompts get exact token counts, made as
    /// vLLM's random dataset makes them (needs the `tokenizer` feature).
    #[arg(long, value_name = "FILE")]
    tokenizer: Option<PathBuf>,
    /// Random dataset: prompt tokens per request [default: 1024 with --dataset random].
    #[arg(long, visible_alias = "random-input-len", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    input_tokens: Option<u64>,
    /// Random dataset: output tokens per request, sent as max_tokens with ignore_eos
    /// [default: 128 with --dataset random].
    #[arg(long, visible_alias = "random-output-len", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    output_tokens: Option<u64>,
    /// Random dataset: each length uniform in [L·(1−r), L·(1+r)] (vLLM's), r in [0, 1).
    #[arg(long, visible_alias = "random-range-ratio", allow_negative_numbers = true,
          value_parser = range_ratio)]
    range_ratio: Option<f64>,
    /// Requests per second, or `inf` (all at once); default: the profile's (1000 for ad-hoc
    /// datasets: as fast as the concurrency cap allows).
    #[arg(long, visible_alias = "request-rate", allow_negative_numbers = true, value_parser = rate)]
    pub(crate) rate: Option<f64>,
    /// How requests arrive at the given rate.
    #[arg(
        long,
        value_enum,
        default_value = "constant",
        conflicts_with = "burstiness"
    )]
    pub(crate) arrivals: ArrivalsArg,
    /// vLLM's gamma arrivals: gamma-distributed gaps of this shape (1 = Poisson; smaller is
    /// burstier), rescaled so that the last request arrives at n / rate.
    #[arg(long, allow_negative_numbers = true, value_parser = positive_f64("--burstiness"))]
    pub(crate) burstiness: Option<f64>,
    /// vLLM's ramp-up: the rate grows over the run's requests from --ramp-start to
    /// --ramp-end, request by request (linear: equal steps; exponential: equal factors);
    /// gaps are gamma with --burstiness (default 1, Poisson), as `vllm bench serve
    /// --ramp-up-strategy` draws them.
    #[arg(long, visible_alias = "ramp-up-strategy", value_enum,
          requires_all = ["ramp_start", "ramp_end"], conflicts_with_all = ["rate", "arrivals"])]
    pub(crate) ramp_up: Option<crate::load_args::RampArg>,
    /// The ramp's first rate, requests/s.
    #[arg(long, visible_alias = "ramp-up-start-rps", requires = "ramp_up",
          value_parser = crate::load_args::non_negative_f64)]
    pub(crate) ramp_start: Option<f64>,
    /// The ramp's last rate, requests/s.
    #[arg(long, visible_alias = "ramp-up-end-rps", requires = "ramp_up",
          value_parser = positive_f64("--ramp-end"))]
    pub(crate) ramp_end: Option<f64>,
    /// Seed of the prompts and of the arrival times [default: the profile's, 42].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Client-side cap on requests in flight; default: the profile's, else 512 (guidellm).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    max_concurrency: Option<u64>,
    /// Requests to send; default: the profile's (100 for ad-hoc datasets).
    #[arg(long, visible_alias = "num-prompts", allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    max_requests: Option<u64>,
    /// Stop sending after this many seconds; requests in flight are recorded as incomplete.
    #[arg(long, allow_negative_numbers = true, value_parser = positive_f64("--max-seconds"))]
    max_seconds: Option<f64>,
    /// Run for this long (90s, 30m, 2h) at --rate: rate × time requests, sending stopped
    /// at the end (a soak). `report` shows the p99 TTFT's drift over 1-minute windows.
    #[arg(long, value_name = "TIME", value_parser = crate::load_args::duration, conflicts_with_all = ["max_requests", "max_seconds"])]
    pub(crate) duration: Option<Duration>,
    /// A phased run: a TOML file of `[[phase]]` tables (seconds, rate, arrivals =
    /// "constant"|"poisson", concurrency, name), run one after the other; `report` prints
    /// each phase's figures.
    #[arg(long, value_name = "FILE",
          conflicts_with_all = ["rate", "ramp_up", "duration", "max_requests", "arrivals"])]
    phases: Option<PathBuf>,
    /// A staged fill: reach the concurrency cap (--max-concurrency, or the profile's) over
    /// this many seconds instead of at t = 0 (the cap at t is cap × t / S, at least 1).
    #[arg(long, value_name = "S", value_parser = positive_f64("--fill-seconds"))]
    fill_seconds: Option<f64>,
    /// Requests sent before the measured run (all at once, under the cap), excluded from
    /// the metrics and kept apart in the run file.
    #[arg(
        long,
        visible_alias = "num-warmups",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    warmup_requests: u64,
    /// Save the run file here (checked before the first request, written atomically):
    /// `*.jsonl` in the JSON Lines form, anything else one JSON object.
    #[arg(long, visible_alias = "result-filename", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Save the run file even without --output, as servebench-run-DATE.json (in
    /// --result-dir).
    #[arg(long)]
    save_result: bool,
    /// Directory for --save-result / a relative --result-filename.
    #[arg(long, value_name = "DIR")]
    result_dir: Option<PathBuf>,
    /// Metric definitions: vllm (what the row labels say) or guidellm (GPUStack's numbers:
    /// TPOT includes the first token; the output then says so).
    #[arg(long, value_enum, default_value = "vllm")]
    convention: ConventionArg,
    /// Report style [default: vllm for --convention vllm, gpustack for guidellm]. The vLLM
    /// style cannot show guidellm's TPOT/ITL (its labels say otherwise).
    #[arg(long, value_enum)]
    style: Option<StyleArg>,
    /// Percentiles to report, comma-separated, each in (0, 100] [default: 99 for vllm,
    /// 95,99 for guidellm].
    #[arg(long, visible_alias = "metric-percentiles", value_delimiter = ',',
          value_name = "P,...", allow_negative_numbers = true, value_parser = percentile)]
    percentiles: Option<Vec<f64>>,
    /// Goodput SLOs in ms, vLLM's syntax (`ttft:500 tpot:50 e2el:2000`, inclusive); adds
    /// the `Request goodput (req/s)` row.
    #[arg(long, num_args = 1.., value_name = "KEY:MS")]
    goodput: Option<Vec<String>>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    /// After SIGINT/SIGTERM, how many seconds requests in flight may still finish.
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true,
          value_parser = positive_f64("--drain-timeout"))]
    drain_timeout: f64,
    /// API key, sent as `Authorization: Bearer KEY`; prefer $OPENAI_API_KEY (the default),
    /// which keeps the key out of the shell's history and `ps`. Never written to a file.
    #[arg(long)]
    api_key: Option<String>,
    /// Model name; default: the first id of GET /v1/models.
    #[arg(long)]
    model: Option<String>,
    /// Per-request timeout in seconds (connect to [DONE]).
    #[arg(long, default_value_t = 6.0 * 3600.0, allow_negative_numbers = true,
          value_parser = positive_f64("--timeout"))]
    timeout: f64,
    /// Do not ask for usage on every chunk (stream_options.continuous_usage_stats); each
    /// chunk then counts as one token.
    #[arg(long)]
    no_continuous_usage: bool,
    /// Do not open the first second's connections before the run (a run opens as many
    /// keep-alive connections as requests are due in its first second, at most its
    /// concurrency cap, so that the first wave's TTFT holds no TCP handshake); with this
    /// flag each request of the first wave connects after its send time, as `vllm bench
    /// serve` and guidellm do.
    #[arg(long)]
    no_preconnect: bool,
    /// Scrape the server's /metrics every this many seconds during the run (kept in the run
    /// file as server_metrics; a server without /metrics is noted, not an error).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true,
          value_parser = positive_f64("--scrape-interval"))]
    scrape_interval: f64,
    /// Do not scrape /metrics.
    #[arg(long)]
    no_scrape: bool,
    /// Sample GPU telemetry during the run at --scrape-interval (also with --no-scrape): a
    /// DCGM exporter's URL (`http://gpu-host:9400`) or `nvidia-smi` (run on this machine).
    /// Reports energy, joules per output token and tokens per joule; kept in the run file as
    /// gpu_metrics. Without it, DCGM metrics on the server's own /metrics are used when it
    /// has them.
    #[arg(long, value_name = "URL|nvidia-smi", value_parser = crate::values::gpu_source)]
    gpu_metrics: Option<String>,
    #[command(flatten)]
    extras: crate::cost_args::RunExtras,
    /// Send the requests to these LoRA adapters (their model names, as `vllm serve
    /// --lora-modules` names them) by a seeded split; results per adapter as well as overall.
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    lora_modules: Vec<String>,
    /// Each adapter's share of the requests, in --lora-modules order (default: equal).
    #[arg(
        long,
        value_name = "S,S,...",
        value_delimiter = ',',
        requires = "lora_modules"
    )]
    lora_split: Option<Vec<f64>>,
    /// No progress output (the bar on a terminal; plain lines every few seconds otherwise).
    #[arg(long, short)]
    quiet: bool,
    /// The measurement failed (exit 4) when more than this share of the requests failed or
    /// did not finish, in [0, 1]. A run that stopped because the server was gone (requests
    /// failing to connect for 2 s) always failed.
    #[arg(long, value_name = "SHARE", default_value_t = 0.5, allow_negative_numbers = true,
          value_parser = share)]
    max_failed_share: f64,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    capacity: crate::capacity_cmd::CapacityFlags,
    #[command(flatten)]
    pub(crate) shape: crate::load_args::ShapeArgs,
    /// Also compute 95 % confidence intervals from the records (stored in the saved result)
    /// and print them under the report block, which itself is unchanged.
    #[arg(long)]
    ci: bool,
    /// Run shard K of N (1-based): the whole workload and schedule are built from the seed,
    /// this process sends requests K-1, K-1+N, … at their original times; `servebench merge`
    /// joins the N run files.
    #[arg(long, value_name = "K/N")]
    shard: Option<servebench::driver::Shard>,
    /// Common start for the shards: an RFC 3339 time (2026-12-03T19:00:00Z), or
    /// barrier:DIR (each shard waits there for the others, then all start together).
    #[arg(long, value_name = "TIME|barrier:DIR")]
    start_at: Option<servebench::driver::StartAt>,
}

/// A share in [0, 1].
/// A usage error (exit 2, clap's format) for combinations clap cannot check.
pub(crate) fn usage(msg: impl std::fmt::Display) -> clap::Error {
    use clap::CommandFactory as _;
    let mut cmd = crate::Cli::command();
    let cmd = cmd.find_subcommand_mut("bench").cloned().unwrap_or(cmd);
    cmd.clone()
        .error(clap::error::ErrorKind::ArgumentConflict, msg)
}

fn profile(args: &Args) -> Result<Profile, clap::Error> {
    let sessions = args.workload.sessions.as_deref();
    let session_file = sessions.filter(|s| *s != "synthetic").map(PathBuf::from);
    let dataset = args
        .dataset
        .or(sessions.map(|_| DatasetArg::MultiTurn))
        .or_else(|| {
            (args.input_tokens.is_some() || args.output_tokens.is_some())
                .then_some(DatasetArg::Random)
        });
    let mut p = match (&args.profile, dataset) {
        (Some(name), _) => Profile::preset(name).map_err(usage)?,
        (None, Some(DatasetArg::Random)) => {
            // A pooling endpoint generates nothing: its input length is enough.
            let pooled = !args.endpoint.streams();
            if args.dataset.is_none()
                && (args.input_tokens.is_none() || (args.output_tokens.is_none() && !pooled))
            {
                return Err(usage(
                    "give both --input-tokens and --output-tokens (or --dataset random for \
                     vLLM's 1024/128)",
                ));
            }
            Profile {
                name: None,
                dataset: Dataset::Random {
                    input_tokens: args.input_tokens.unwrap_or(1024),
                    output_tokens: args.output_tokens.unwrap_or(if pooled { 1 } else { 128 }),
                    seed: 42,
                },
                request_rate: 1000.0,
                total_requests: 100,
                max_concurrency: None,
            }
        }
        (None, Some(DatasetArg::Sharegpt)) => {
            if args.input_tokens.is_some() || args.output_tokens.is_some() {
                return Err(usage(
                    "--input-tokens/--output-tokens are for --dataset random; ShareGPT \
                     lengths come from the conversations",
                ));
            }
            Profile {
                name: None,
                dataset: Dataset::ShareGpt {
                    path: args.dataset_path.clone(),
                },
                request_rate: 1000.0,
                total_requests: 100,
                max_concurrency: None,
            }
        }
        (None, Some(d)) => {
            let kind = match d {
                DatasetArg::Mooncake => Structured::Mooncake,
                DatasetArg::SharedPrefix => Structured::SharedPrefix,
                DatasetArg::MultiTurn if sessions == Some("synthetic") => Structured::Sessions,
                DatasetArg::MultiTurn => Structured::MultiTurn,
                _ => Structured::Jsonl,
            };
            let common = Common {
                path: args.dataset_path.as_ref().or(session_file.as_ref()),
                input_tokens: args.input_tokens,
                output_tokens: args.output_tokens,
                max_requests: args.max_requests,
                seed: args.seed.unwrap_or(42),
            };
            let spec = args.workload.spec(kind, &common).map_err(usage)?;
            // Every request of the dataset (a trace's lines, G × Q prompts, C × T turns),
            // cut by --max-requests.
            let plan = spec
                .build(args.max_requests)
                .map_err(|e| usage(format!("--dataset-name {}: {e}", spec.name())))?;
            Profile {
                name: None,
                dataset: Dataset::Structured(spec),
                request_rate: 1000.0,
                total_requests: plan.items.len() as u64,
                max_concurrency: None,
            }
        }
        (None, None) => {
            return Err(usage(
                "give --profile NAME, --dataset random|sharegpt|mooncake|shared-prefix|\
                 multi-turn|jsonl, or --input-tokens N --output-tokens M",
            ))
        }
    };
    if args.dataset_path.is_some()
        && matches!(
            p.dataset,
            Dataset::Random { .. }
                | Dataset::Structured(servebench::driver::DatasetSpec::SharedPrefix { .. })
        )
    {
        return Err(usage(
            "--dataset-path is for --dataset sharegpt, mooncake, multi-turn or jsonl",
        ));
    }
    if args.range_ratio.is_some() && !matches!(p.dataset, Dataset::Random { .. }) {
        return Err(usage("--range-ratio is for random datasets"));
    }
    if let Some(r) = args.rate.filter(|r| r.is_finite()) {
        p.request_rate = r;
    }
    if let Some(n) = args.max_requests {
        p.total_requests = p.total_requests.min(n).max(match p.dataset {
            Dataset::Structured(_) => 0,
            _ => n,
        });
    }
    if let Some(c) = args.max_concurrency {
        p.max_concurrency = Some(c);
    }
    if let (Some(s), Dataset::Random { seed, .. }) = (args.seed, &mut p.dataset) {
        *seed = s;
    }
    if let Some(d) = args.duration {
        // A run bounded by time: as many requests as the rate sends in it.
        let unbounded = args.rate.is_some_and(f64::is_infinite) || !p.request_rate.is_finite();
        if unbounded || matches!(p.dataset, Dataset::Structured(_)) {
            return Err(usage(
                "--duration needs a finite --rate (a run bounded by time sends rate × time \
                 requests) and a random or ShareGPT dataset",
            ));
        }
        // Saturating float-to-int conversion.
        p.total_requests = (p.request_rate * d.as_secs_f64()).ceil().max(1.0) as u64;
    }
    Ok(p)
}

fn metrics(args: &Args) -> Result<MetricsOptions, clap::Error> {
    let convention = match args.convention {
        ConventionArg::Vllm => Convention::Vllm,
        ConventionArg::Guidellm => Convention::Guidellm,
    };
    let mut m = MetricsOptions::new(convention);
    if let Some(p) = &args.percentiles {
        m.percentiles = p.clone();
    }
    if let Some(g) = &args.goodput {
        let slo: Slo = g
            .join(" ")
            .parse()
            .map_err(|e| usage(format!("--goodput: {e}")))?;
        m.goodput = Some(slo);
    }
    Ok(m)
}

fn style(
    args: &Args,
    convention: Convention,
) -> Result<servebench::format::text::Style, clap::Error> {
    use servebench::format::text::Style;
    let style = match (args.style, convention) {
        (Some(s), _) => s.into(),
        (None, Convention::Vllm) => Style::Vllm,
        (None, Convention::Guidellm) => Style::Gpustack,
    };
    if style == Style::Vllm
        && convention == Convention::Guidellm
        && args.format == OutputFormat::Text
    {
        return Err(usage(
            "--style vllm cannot print --convention guidellm: vLLM's rows say \"Time per Output \
             Token (excl. 1st token)\" and guidellm's TPOT includes the first token; use \
             --style gpustack, or --convention vllm",
        ));
    }
    Ok(style)
}

fn output_path(args: &Args) -> Option<PathBuf> {
    let dir = args.result_dir.clone();
    match (&args.output, args.save_result) {
        (Some(p), _) => Some(match (&dir, p.is_relative()) {
            (Some(d), true) => d.join(p),
            _ => p.clone(),
        }),
        (None, true) => {
            let name = format!(
                "servebench-run-{}.json",
                chrono::Local::now().format("%Y%m%d-%H%M%S")
            );
            Some(dir.map_or_else(|| PathBuf::from(&name), |d| d.join(&name)))
        }
        (None, false) => None,
    }
}

/// Run the benchmark: the report on stdout, the exit status (0; 1 for bad input or a run in
/// which nothing succeeded; 2 for usage; 4 when the measurement failed — the server went
/// away, or more than `--max-failed-share` of the requests failed; 130/143 when
/// SIGINT/SIGTERM interrupted it).
pub fn main(args: &Args) -> ExitCode {
    match run(args) {
        Ok((text, status)) => crate::print_stdout(&text)
            .map_or(ExitCode::from(exit::BAD_INPUT), |()| ExitCode::from(status)),
        Err(Failure::Usage(e)) => e.exit(),
        Err(Failure::Input(e)) => {
            eprintln!("servebench: {e}");
            ExitCode::from(exit::BAD_INPUT)
        }
    }
}

enum Failure {
    Usage(clap::Error),
    Input(InputError),
}

impl From<clap::Error> for Failure {
    fn from(e: clap::Error) -> Self {
        Failure::Usage(e)
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        Failure::Input(e)
    }
}

fn run(args: &Args) -> Result<(String, u8), Failure> {
    let profile = profile(args)?;
    let arrivals = crate::load_args::arrivals(args, &profile)?;
    let metrics = metrics(args)?;
    let style = style(args, metrics.convention)?;
    let out_path = output_path(args);
    // Before anything is sent: a run that cannot be saved is not started. A missing
    // --result-dir is created (as `vllm bench serve` does).
    if let Some(dir) = args.result_dir.as_ref().filter(|_| out_path.is_some()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError(format!("--result-dir {}: {e}", dir.display())))?;
    }
    if let Some(path) = &out_path {
        bench::check_output(path).map_err(|e| InputError(format!("--output: {e}")))?;
    }
    let mut http = HttpConfig::new(args.target.clone());
    args.endpoint.apply(&mut http)?;
    http.model = args.model.clone();
    http.api_key = args
        .api_key
        .clone()
        .or_else(|| std::env::var("OPENAI_API_KEY").ok())
        .filter(|k| !k.is_empty());
    http.request_timeout = Some(seconds(args.timeout));
    http.continuous_usage = !args.no_continuous_usage;
    http.preconnect = !args.no_preconnect;
    http.trace = args.extras.trace();
    if !args.lora_modules.is_empty() {
        let split = servebench::driver::LoraSplit::new(
            args.lora_modules.clone(),
            args.lora_split.clone(),
            args.seed.unwrap_or(42),
        )
        .map_err(crate::flagged::lora)?;
        http.lora = Some(split);
    }
    let stop = StopSignal::new();
    let mut bench_args = BenchArgs::new(args.target.clone(), profile.clone());
    bench_args.http = http;
    bench_args.arrivals = arrivals;
    bench_args.workload = WorkloadOptions {
        range_ratio: args.range_ratio.unwrap_or(0.0),
        sharegpt_seed: args.seed.unwrap_or(42),
        ..WorkloadOptions::default()
    };
    if let Some(path) = &args.tokenizer {
        let tok = servebench::driver::tokenized::PromptTokenizer::from_file(path)
            .map_err(crate::flagged::tokenizer)?;
        bench_args.workload.tokenizer = Some(std::sync::Arc::new(tok));
    }
    bench_args.max_requests = args.max_requests;
    // A run bounded by --duration sends its last request at the end and then lets those in
    // flight finish, up to a minute (or a tenth of the run) more.
    bench_args.max_duration = args.max_seconds.map(seconds).or_else(|| {
        args.duration
            .map(|d| d + d.mul_f64(0.1).max(Duration::from_secs(60)))
    });
    bench_args.fill = args.fill_seconds.map(seconds);
    bench_args.warmup_seconds = args.shape.warmup_seconds.map(seconds);
    bench_args.cooldown_seconds = args.shape.cooldown_seconds.map(seconds);
    bench_args.cold = args.shape.cold.then(|| seconds(args.shape.cold_timeout));
    crate::load_args::apply_rate_expr(args, &mut bench_args)?;
    bench_args.soak = crate::load_args::soak(args, out_path.as_deref());
    if let Some(path) = &args.phases {
        let phases = crate::load_args::phases(path)?;
        bench_args.profile.total_requests = phases.total_requests();
        bench_args.phases = Some(phases);
    }
    bench_args.max_concurrency = args
        .max_concurrency
        .map(|c| usize::try_from(c).unwrap_or(usize::MAX));
    bench_args.metrics = metrics;
    bench_args.warmup_requests = args.warmup_requests;
    bench_args.stop = Some(stop.clone());
    bench_args.drain = seconds(args.drain_timeout);
    bench_args.shard = args.shard;
    bench_args.start_at = crate::shard::start_instant(args.shard, args.start_at.as_ref())?;
    bench_args.scrape_interval = (!args.no_scrape).then(|| seconds(args.scrape_interval));
    bench_args.gpu_metrics = args.gpu_metrics.clone();
    // GPU telemetry is sampled at --scrape-interval even with --no-scrape.
    bench_args.gpu_interval = Some(seconds(args.scrape_interval));
    bench_args.reset_prefix_cache = args.workload.reset_prefix_cache;
    if let Some(search) = args.capacity.search {
        if search == crate::capacity_cmd::SearchArg::Concurrency && args.max_concurrency.is_some() {
            return Err(usage(
                "--max-concurrency: --search concurrency sets the cap of each probe",
            )
            .into());
        }
        let cap = crate::capacity_cmd::capacity_args(
            &args.capacity,
            search,
            args.result_dir.as_deref(),
            args.max_seconds,
        )
        .map_err(usage)?;
        // Ctrl-C ends the probe in flight; the probes before it stay saved.
        let watch = signals::watch(stop.clone(), args.drain_timeout)
            .map_err(|e| InputError(format!("bench: cannot watch for Ctrl-C: {e}")))?;
        let out = crate::capacity_cmd::run(&bench_args, &cap, args.quiet);
        drop(watch);
        return match (out, stop.reason()) {
            (Err(e), Some(sig)) => {
                eprintln!("servebench: {e}");
                Ok((String::new(), signals::exit_status(&sig)))
            }
            (out, _) => out.map_err(Failure::Input),
        };
    }
    if let Some(n) = args.workload.sweep {
        return crate::sweep_cmd::run(&bench_args, n, out_path.as_deref(), args.quiet)
            .map_err(Failure::Input);
    }

    // A shard sends its part of the requests.
    let total = match args.shard {
        Some(shard) => shard
            .indices(usize::try_from(bench_args.profile.total_requests).unwrap_or(usize::MAX))
            .count() as u64,
        None => bench_args.profile.total_requests,
    };
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
    let watch = signals::watch(stop.clone(), args.drain_timeout)
        .map_err(|e| InputError(format!("bench: cannot watch for Ctrl-C: {e}")))?;
    let _live = args.extras.listen(&mut bench_args)?;
    let outcome = bench::run(&bench_args, &mut report);
    drop(watch);
    bar.finish_and_clear();
    let has_key = bench_args.http.api_key.is_some();
    let mut run = outcome.map_err(|e| match e {
        bench::BenchError::GpuMetrics { .. } => InputError(format!("bench: --gpu-metrics: {e}")),
        e => {
            let text = e.to_string();
            let hint = crate::bench_notes::status_hint(&text, has_key, &[]);
            InputError(format!("bench: {text}{hint}"))
        }
    })?;
    // The command line without the key (`--api-key KEY` or `--api-key=KEY`).
    run.file.command_line = servebench::secret::redact_argv(&std::env::args().collect::<Vec<_>>());
    if args.ci {
        let opts = servebench::noise::IntervalOptions::default();
        let file = &mut run.file;
        if let Err(e) = servebench::noise::attach_intervals(&file.records, &mut file.result, &opts)
        {
            eprintln!("servebench: no confidence intervals: {e}");
        }
    }
    let records = &run.file.records;
    if plain {
        let failed = records.iter().filter(|r| !r.outcome.is_success()).count();
        eprintln!(
            "servebench: finished: {} requests sent, {} succeeded, {failed} failed or incomplete",
            records.len(),
            records.len() - failed,
        );
    }
    if let Some(why) = &run.aborted {
        eprintln!("servebench: the run stopped early: {why}");
    }
    args.extras.cost.apply(&mut run.file.result);
    crate::bench_notes::print(&run);
    if let Some(path) = &out_path {
        bench::save(path, &run).map_err(|e| InputError(e.to_string()))?;
        eprintln!(
            "servebench: {} request records saved to {}{}",
            records.len(),
            path.display(),
            if run.file.status.is_complete() {
                ""
            } else {
                " (marked interrupted)"
            }
        );
    }
    let mut status = exit::SUCCESS;
    if let RunStatus::Interrupted { reason } = &run.file.status {
        if let Some(sig) = stop.reason() {
            eprintln!(
                "servebench: interrupted by {sig}: the figures cover the requests sent before it"
            );
            status = signals::exit_status(&sig);
        } else {
            eprintln!("servebench: interrupted: {reason}");
        }
    }
    // Nothing succeeded (an unreachable target, a wrong model, a server that fails every
    // request): that is an error, naming the target and the first reason.
    if stop.reason().is_none()
        && !records.is_empty()
        && records.iter().all(|r| !r.outcome.is_success())
    {
        let first = records
            .iter()
            .find_map(|r| match &r.outcome {
                servebench::record::Outcome::Error { message, .. } => Some(message.as_str()),
                servebench::record::Outcome::Incomplete { reason } => Some(reason.as_str()),
                _ => None,
            })
            .unwrap_or("no reason given");
        let served = run
            .file
            .models_response
            .as_ref()
            .map(servebench::http::client::model_ids)
            .unwrap_or_default();
        return Err(InputError(format!(
            "bench: no request to {} succeeded ({} failed; first: {first}){}",
            args.target,
            records.len(),
            crate::bench_notes::status_hint(first, has_key, &served)
        ))
        .into());
    }
    // Ran, but did not measure what was asked: the server went away, or too many requests
    // failed. The figures are printed and saved; the status and a last line say so.
    if status == exit::SUCCESS {
        let failed = records.iter().filter(|r| !r.outcome.is_success()).count();
        let share = failed as f64 / records.len().max(1) as f64;
        let why = match &run.aborted {
            Some(why) => Some(why.clone()),
            None if share > args.max_failed_share => Some(format!(
                "{failed} of {} requests failed ({:.0} %, above --max-failed-share {})",
                records.len(),
                share * 100.0,
                args.max_failed_share
            )),
            None => None,
        };
        if let Some(why) = why {
            eprintln!("servebench: the measurement failed: {why}");
            status = exit::MEASUREMENT_FAILED;
        }
    }
    let mut text = bench_output::render(&run.file.result, args.format.into(), style)
        .map_err(|e| InputError(format!("bench: {e}")))?;
    if args.ci {
        text.push('\n');
        text.push_str(&servebench::format::intervals::render(&run.file.result));
    }
    Ok((text, status))
}

/// `--format`: what `bench` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A "Serving Benchmark Result" block.
    Text,
    /// The result as JSON (servebench's schema).
    Json,
    /// A header row and one data row (vLLM's key names; times in ms, duration in s).
    Csv,
}

impl From<OutputFormat> for BenchFormat {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Text => BenchFormat::Text,
            OutputFormat::Json => BenchFormat::Json,
            OutputFormat::Csv => BenchFormat::Csv,
        }
    }
}
