//! `servebench bench`: drive an OpenAI-compatible server with a load profile through
//! [`HttpEngine`] and the load [`driver`](crate::driver), then compute the report (vLLM's
//! definitions unless asked otherwise), the lints, and the [`RunFile`] that keeps the raw
//! records. A [`StopSignal`] ends the run early without losing what was measured.
//!
//! [`Progressed`] wraps any engine to report live counters (done, failed, in flight, tok/s)
//! while the driver runs; the CLI turns them into a progress bar.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crate::driver::arrivals::Arrivals;
use crate::driver::datasets::DatasetSpec;
use crate::driver::shard::Shard;
use crate::driver::stop::StopSignal;
use crate::driver::workload::WorkloadOptions;
use crate::driver::{run_profile, RunOptions, DEFAULT_DRAIN};
use crate::http::client::{model_ids, HttpConfig, HttpEngine};
use crate::lint::Finding;
use crate::metrics::{summarize, MetricsOptions};
use crate::profile::{Dataset, Profile};
use crate::result::Convention;
use crate::runfile::{check_writable, RunFile, RunStatus};

mod error;
mod prefix;
mod progress;
mod shape;
pub use error::BenchError;
mod spool;
pub use progress::{Progress, Progressed, PROGRESS_EVERY};
use spool::Spool;
pub use spool::{slim, SoakRecords, Spooled};

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchArgs {
    /// Server, endpoint, model, key, timeouts.
    pub http: HttpConfig,
    /// The load profile (dataset, rate, request count, concurrency cap).
    pub profile: Profile,
    /// When requests arrive; `None`: the profile's constant rate (guidellm's `constant`).
    pub arrivals: Option<Arrivals>,
    /// How the workload is built (range ratio, ShareGPT seed); prompt text is always on.
    pub workload: WorkloadOptions,
    /// Send at most this many requests.
    pub max_requests: Option<u64>,
    /// Stop sending after this much wall time; requests still in flight are cancelled and
    /// recorded as incomplete.
    pub max_duration: Option<Duration>,
    /// A staged fill: the concurrency cap reached over this time ([`RunOptions::fill`]).
    pub fill: Option<Duration>,
    /// Requests sent within this time of the first send leave the figures (kept as
    /// warm-up records).
    pub warmup_seconds: Option<Duration>,
    /// Requests sent within this time of the last send leave the figures (kept as the
    /// cool-down).
    pub cooldown_seconds: Option<Duration>,
    /// Explicit send times (a rate expression's schedule, [`crate::driver::rate_schedule`]);
    /// they replace the arrival process, and the profile's request count should be theirs.
    pub schedule: Option<Vec<Duration>>,
    /// A phased run ([`crate::driver::Phases`]): its send times and caps replace the
    /// arrival process; the profile's request count should be the phases' total.
    pub phases: Option<crate::driver::Phases>,
    /// Client-side cap on requests in flight; `None`: the profile's, else guidellm's 512.
    pub max_concurrency: Option<usize>,
    /// Ask `/v1/models` for the model name when `http.model` is `None` (the answer is kept
    /// in the run file either way when the server gives one).
    pub discover_model: bool,
    /// How the result is computed: convention (vLLM's by default, what the report labels
    /// say), percentiles, goodput SLOs.
    pub metrics: MetricsOptions,
    /// Requests sent (all at once, under the concurrency cap) before the measured run and
    /// excluded from the metrics; kept as [`RunFile::warmup_records`].
    pub warmup_requests: u64,
    /// Raised from another thread (a Ctrl-C handler) to stop the run early; what was
    /// measured is kept and the run file says [`RunStatus::Interrupted`].
    pub stop: Option<StopSignal>,
    /// How long requests in flight may finish after `stop` is raised.
    pub drain: Duration,
    /// Empty the server's prefix cache before the run ([`HttpEngine::reset_prefix_cache`]).
    pub reset_prefix_cache: bool,
    /// Send only this shard's part of the run ([`crate::driver::Shard`]); the warm-up is
    /// split the same way.
    pub shard: Option<Shard>,
    /// Start the measured schedule at this wall-clock instant (the shards of a run agree on
    /// it); `None`: as soon as the warm-up is done. An instant already past starts at once.
    pub start_at: Option<SystemTime>,
    /// Scrape the server's `/metrics` this often during the run, into
    /// [`RunFile::server_metrics`] (`None`: don't).
    pub scrape_interval: Option<Duration>,
    /// GPU telemetry to sample during the run (at the scrape interval, default 1 s), into
    /// [`RunFile::gpu_metrics`]: a DCGM exporter's base URL (`http://gpu-host:9400`) or
    /// `nvidia-smi` (run locally; see [`crate::observe::energy_figures`]).
    pub gpu_metrics: Option<String>,
    /// How often to sample [`BenchArgs::gpu_metrics`]; `None`: at the scrape interval, or
    /// every second without one.
    pub gpu_interval: Option<Duration>,
    /// Stop early once requests have failed to connect one after another for this long:
    /// the server is gone ([`crate::driver::GoneWatch`]); what was measured is kept and
    /// [`BenchRun::aborted`] says why. `None`: keep sending.
    pub server_gone: Option<Duration>,
    /// A cold run (`bench --cold`): wait up to this long for `GET /health` to answer 200
    /// before sending, record how long it took, and report the first requests apart from
    /// the steady state. `None`: the server is taken as ready.
    pub cold: Option<Duration>,
    /// A soak (`bench --duration`): each record streamed as it ends and kept slim in
    /// memory ([`SoakRecords`]); `None`: every record kept whole.
    pub soak: Option<SoakRecords>,
    /// Live metrics the run feeds as it goes (`bench --metrics-listen`: the counters at
    /// each progress report, each request as it ends).
    pub live: Option<std::sync::Arc<crate::observe::live::LiveMetrics>>,
    /// The server's prefix-cache block size, tokens, for the hit rate the workload implies
    /// (`bench --prefix-block-tokens`; vLLM's default 16, Qwen3.5's hybrid cache 544).
    pub prefix_block_tokens: u64,
}

impl BenchArgs {
    /// The limits these arguments put on a measured run (`bench` and each run of `bench
    /// --sweep`): the concurrency cap, the request cap (the smaller of the profile's and
    /// this one), the wall-time limit, the stop signal and the drain after it.
    pub(crate) fn limit_run(&self, o: &mut RunOptions) {
        if let Some(c) = self.max_concurrency {
            o.max_concurrency = Some(c);
        }
        if let Some(n) = self.max_requests {
            o.max_requests = Some(o.max_requests.map_or(n, |m| m.min(n)));
        }
        o.max_duration = self.max_duration;
        o.fill = self.fill;
        if let Some(at) = &self.schedule {
            o.send_at = Some(at.clone());
        }
        if let Some(p) = &self.phases {
            let seed = match self.arrivals {
                Some(Arrivals::Poisson { seed, .. }) => seed,
                _ => 42,
            };
            o.send_at = Some(p.send_at(seed));
            o.caps = p.caps();
        }
        o.stop = self.stop.clone();
        o.drain = self.drain;
    }

    /// Defaults for `target` and `profile`: completions, model discovery on, vLLM's metric
    /// definitions, the profile's constant rate, no warm-up, no stop signal.
    pub fn new(target: impl Into<String>, profile: Profile) -> Self {
        BenchArgs {
            http: HttpConfig::new(target),
            profile,
            arrivals: None,
            workload: WorkloadOptions::default(),
            max_requests: None,
            max_duration: None,
            fill: None,
            warmup_seconds: None,
            cooldown_seconds: None,
            schedule: None,
            phases: None,
            cold: None,
            soak: None,
            live: None,
            prefix_block_tokens: 16,
            max_concurrency: None,
            discover_model: true,
            metrics: MetricsOptions::new(Convention::Vllm),
            warmup_requests: 0,
            stop: None,
            drain: DEFAULT_DRAIN,
            reset_prefix_cache: false,
            shard: None,
            start_at: None,
            scrape_interval: Some(DEFAULT_SCRAPE_INTERVAL),
            gpu_metrics: None,
            gpu_interval: None,
            server_gone: Some(crate::driver::gone::DEFAULT_SERVER_GONE),
        }
    }
}

/// Samples `source` (`nvidia-smi`, or a DCGM exporter's base URL) every `every`.
/// One sample of the GPU telemetry `source`, taken before the run so that a source that
/// cannot be read stops the run loudly instead of leaving it without energy figures.
fn check_gpu_source(source: &str) -> Result<(), BenchError> {
    use crate::observe::gpu::{nvidia_smi_samples, NVIDIA_SMI};
    let failed = |reason: String| BenchError::GpuMetrics {
        source_name: source.to_string(),
        reason,
    };
    let samples = if source == NVIDIA_SMI {
        nvidia_smi_samples().map_err(failed)?
    } else {
        crate::observe::scrape::scrape_once(source, Duration::from_secs(5))
            .map_err(|e| failed(e.to_string()))?
    };
    if !crate::observe::gpu::has_gpu_series(&samples) {
        return Err(failed(
            "it answered, but with no GPU power or energy series (DCGM_FI_DEV_POWER_USAGE, \
             DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)"
                .into(),
        ));
    }
    Ok(())
}

fn gpu_sampler(
    source: &str,
    every: Duration,
    zero: std::time::Instant,
) -> crate::observe::scrape::Scraper {
    use crate::observe::gpu::{nvidia_smi_samples, NVIDIA_SMI};
    use crate::observe::scrape::{ScrapeError, Scraper};
    if source == NVIDIA_SMI {
        Scraper::start_source(NVIDIA_SMI.into(), every, zero, || {
            nvidia_smi_samples().map_err(ScrapeError::Sampler)
        })
    } else {
        Scraper::start(source, every, zero)
    }
}

/// The run-file label saying where a ShareGPT profile's requests came from:
/// `file:PATH`, or [`BUILT_IN_SHAREGPT`].
pub const DATASET_SOURCE_LABEL: &str = "dataset_source";

/// [`DATASET_SOURCE_LABEL`]'s value when no ShareGPT file was found and the built-in
/// length distribution stood in.
pub const BUILT_IN_SHAREGPT: &str = "built-in ShareGPT length distribution";

/// How often `bench` scrapes `/metrics` by default.
pub const DEFAULT_SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// A finished (or interrupted) run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRun {
    /// Everything to save: the result (with the profile, model, target and convention in
    /// `meta`), the records, the warm-up records, the `/v1/models` answer, the status.
    pub file: RunFile,
    /// Lint findings on the result and the records.
    pub findings: Vec<Finding>,
    /// Set when the engine failed as a whole and the run stopped early.
    pub aborted: Option<String>,
    /// The endpoint that emptied the server's prefix cache before the run
    /// (`/reset_prefix_cache` or `/flush_cache`); `None` when no reset was asked for.
    pub prefix_cache_reset: Option<String>,
    /// A soak's spool ([`BenchArgs::soak`]): the file holding the whole records, which the
    /// run file is written with.
    pub spooled: Option<Spooled>,
}

/// How many connections a run needs at its start: the requests due in its first second
/// (all of them for a run without a rate), at most its concurrency cap. A run at a rate the
/// cap does not bind opens few; a concurrency-bound run (`--max-concurrency 256` at the
/// default 1000/s or `inf`) opens its cap.
fn first_burst(args: &BenchArgs) -> usize {
    let rate_per_s = match args.arrivals {
        Some(Arrivals::AllAtOnce) => f64::INFINITY,
        Some(
            Arrivals::Constant { rate }
            | Arrivals::Poisson { rate, .. }
            | Arrivals::Gamma { rate, .. },
        ) => rate,
        // A ramp's first second runs at about its start rate.
        Some(Arrivals::Ramp { start_rate, .. }) => start_rate.max(1.0),
        None => args.profile.request_rate,
    };
    let first_second = if rate_per_s.is_finite() {
        // Saturating float-to-int conversion; a NaN rate opens none.
        rate_per_s.ceil().max(0.0) as usize
    } else {
        usize::MAX
    };
    let cap = args
        .max_concurrency
        .or_else(|| {
            args.profile
                .max_concurrency
                .and_then(|c| usize::try_from(c).ok())
        })
        .unwrap_or(crate::driver::GUIDELLM_MAX_CONCURRENCY);
    let cap = match args.shard {
        Some(shard) => shard.cap_share(cap).unwrap_or(cap),
        None => cap,
    };
    let requests = args.max_requests.map_or(args.profile.total_requests, |m| {
        m.min(args.profile.total_requests)
    });
    cap.min(first_second)
        .min(usize::try_from(requests).unwrap_or(usize::MAX))
}

fn wall_clock_at(origin: Instant) -> chrono::DateTime<chrono::FixedOffset> {
    let now = chrono::Utc::now();
    let back = chrono::Duration::from_std(origin.elapsed()).unwrap_or_default();
    (now - back).fixed_offset()
}

/// Run a benchmark against `args.http.target`, calling `progress` as it goes.
///
/// The run file's `started_at` is the wall-clock time of the engine's origin: record times
/// are offsets from it (warm-up records first, then the measured ones).
pub fn run(args: &BenchArgs, progress: &mut dyn FnMut(&Progress)) -> Result<BenchRun, BenchError> {
    let mut http = args.http.clone();
    let probe = HttpEngine::new(http.clone())?;
    // A cold run starts on a server still starting: wait for it to become healthy.
    let healthy_after = args
        .cold
        .map(|within| probe.wait_healthy("/health", within))
        .transpose()?;
    let models_response = match probe.models_response() {
        Ok(v) => Some(v),
        // A server without `/v1/models` is fine when the model is given.
        Err(_) if http.model.is_some() || !args.discover_model => None,
        Err(e) => return Err(e.into()),
    };
    drop(probe);
    if http.model.is_none() && args.discover_model {
        http.model = models_response
            .as_ref()
            .and_then(|v| model_ids(v).into_iter().next());
    }
    let model = http.model.clone();
    let target = http.target.clone();
    let mut workload = args.workload.clone();
    // A soak's random prompts are made as each request is sent, not held for the run.
    workload.with_text =
        args.soak.is_none() || !matches!(args.profile.dataset, Dataset::Random { .. });
    let spool = args
        .soak
        .as_ref()
        .map(|s| Spool::create(s.spool.as_deref()))
        .transpose()?;
    let engine = HttpEngine::new(http)?;
    if args.http.preconnect {
        let burst = first_burst(args);
        if burst > 1 {
            engine.preconnect(burst);
        }
    }
    let prefix_cache_reset = if args.reset_prefix_cache {
        Some(engine.reset_prefix_cache()?.to_string())
    } else {
        None
    };
    let started_at = wall_clock_at(engine.origin());
    // The agreed start on the engine's clock (an instant already past: now).
    let zero = engine.origin();
    let agreed = args.start_at.map(|t| {
        let engine_zero = SystemTime::from(started_at);
        t.duration_since(engine_zero).unwrap_or(zero.elapsed())
    });
    // The server's metrics, on the records' clock (the engine's origin); stopped (with a
    // last scrape) when the run ends, or when an error returns early (the handle drops).
    let scraper = args
        .scrape_interval
        .map(|every| crate::observe::scrape::Scraper::start(&target, every, zero));
    if let Some(source) = args.gpu_metrics.as_deref() {
        check_gpu_source(source)?;
    }
    let gpu_scraper = args.gpu_metrics.as_deref().map(|source| {
        let every = args
            .gpu_interval
            .or(args.scrape_interval)
            .unwrap_or(DEFAULT_SCRAPE_INTERVAL);
        gpu_sampler(source, every, zero)
    });
    let live = args.live.clone();
    let mut feed = |p: &Progress| {
        if let Some(l) = &live {
            l.set_counts(crate::observe::live::LiveCounts {
                done: p.done,
                failed: p.failed,
                in_flight: p.in_flight,
                output_tokens: p.output_tokens,
                elapsed: p.elapsed,
            });
        }
        progress(p);
    };
    let mut engine = Progressed::new(engine, &mut feed);
    let mut warmup_records = Vec::new();
    if args.warmup_requests > 0 {
        let out = run_profile(&mut engine, &args.profile, &workload, |o| {
            o.arrivals = Arrivals::AllAtOnce;
            o.max_requests = Some(args.warmup_requests);
            if let Some(c) = args.max_concurrency {
                o.max_concurrency = Some(c);
            }
            o.shard = args.shard;
            o.stop = args.stop.clone();
            o.drain = args.drain;
        })?;
        warmup_records = out.records;
    }
    let mut cap = None;
    let mut schedule_origin = None;
    let stopped_in_warmup = args.stop.as_ref().is_some_and(|s| s.is_stopping());
    let out = if stopped_in_warmup {
        None
    } else {
        Some(run_profile(&mut engine, &args.profile, &workload, |o| {
            if let Some(a) = args.arrivals {
                o.arrivals = a;
            }
            args.limit_run(o);
            o.shard = args.shard;
            o.server_gone = args.server_gone;
            // The schedule counts from the agreed start, else from now (after the warm-up
            // and the workload are ready).
            let start = agreed.unwrap_or_else(|| zero.elapsed());
            schedule_origin = Some(start);
            o.start_at = Some(start);
            o.sink = match (spool.as_ref().map(Spool::sink), args.live.clone()) {
                (sink, None) => sink,
                // Each record feeds the live metrics, then goes where it would have.
                (sink, Some(live)) => Some(crate::collector::RecordSink::new(move |r| {
                    live.record(&r);
                    match &sink {
                        Some(s) => s.take(r),
                        None => Some(r),
                    }
                })),
            };
            cap = o.max_concurrency;
        })?)
    };
    engine.tick(true);
    let server_metrics = scraper.map(|s| s.stop());
    let gpu_metrics = gpu_scraper.map(|s| s.stop());
    let server_clock = engine.into_inner().server_clock();
    let (records, aborted, stopped, work) = match out {
        Some(o) => (o.records, o.aborted, o.stopped, o.work),
        None => (
            Vec::new(),
            None,
            args.stop
                .as_ref()
                .and_then(|s| s.reason())
                .map(|r| format!("{r} during the warm-up")),
            Vec::new(),
        ),
    };
    let mut records = records;
    if let Some(split) = &args.http.lora {
        // Each request went to the adapter its id falls on (`HttpConfig::lora`).
        for r in records.iter_mut().chain(warmup_records.iter_mut()) {
            r.adapter = Some(split.pick(r.id).to_string());
        }
    }
    // Cut by time: the first and last seconds' requests leave the figures (kept in the run
    // file beside the warm-up requests and as the cool-down).
    let (mut records, cut_warmup, cooldown_records) =
        crate::observe::cut_by_time(records, args.warmup_seconds, args.cooldown_seconds);
    warmup_records.extend(cut_warmup);
    records.sort_by_key(|r| r.id);
    let mut result = summarize(&records, Some(&args.profile), &args.metrics, cap);
    result.meta.model = model.clone();
    result.meta.source = Some(target.clone());
    if args.http.endpoint != crate::http::Endpoint::Completions {
        result.meta.endpoint = Some(args.http.endpoint.name().to_string());
    }
    crate::observe::gpu::add_server_figures(
        &mut result,
        crate::metrics::production::measured_window_s(&records),
        server_metrics.as_ref(),
        gpu_metrics.as_ref(),
        crate::metrics::production::tokens_per_chunk(&records),
    );
    result.prefix_cache = prefix::figures(
        &records,
        &work,
        args.prefix_block_tokens,
        server_metrics.as_ref(),
    );
    drop(work);
    let spooled = spool.map(Spool::finish).transpose()?;
    if let Some(sp) = &spooled {
        // The slim records lost the chunk gaps: vLLM's ITL comes from the spool's histogram,
        // its 1-second peaks from the spool on disk (without one they are not known: none
        // is printed rather than a wrong one), and the sliding peak is not known.
        if result.meta.convention == Some(Convention::Vllm) {
            result.itl = Some(crate::metrics::streaming_summary_ms(
                &sp.itl,
                &args.metrics.percentiles,
            ));
            let (tokens, conc) = match &sp.path {
                Some(path) => spool::spooled_peaks(path).map(|(t, c)| (Some(t), Some(c)))?,
                None => (None, result.peak_concurrent_requests),
            };
            result.peak_output_throughput_per_s = tokens;
            result.peak_concurrent_requests = conc;
        }
        if let Some(exact) = result.exact.as_mut() {
            exact.peak_output_tokens_per_s = None;
        }
    }
    let mut file = RunFile::new(result, records, args.profile.clone(), started_at);
    file.finished_at = Some(chrono::Utc::now().fixed_offset());
    file.status = match (&stopped, &aborted) {
        (Some(reason), _) => RunStatus::Interrupted {
            reason: reason.clone(),
        },
        (None, Some(why)) => RunStatus::Interrupted {
            reason: format!("the engine failed: {why}"),
        },
        (None, None) => RunStatus::Complete,
    };
    file.target = Some(target);
    file.model = model;
    file.models_response = models_response;
    file.metrics_options = Some(args.metrics.clone());
    file.arrivals = args.arrivals;
    file.seed = match (&args.profile.dataset, args.arrivals) {
        (
            _,
            Some(
                Arrivals::Poisson { seed, .. }
                | Arrivals::Gamma { seed, .. }
                | Arrivals::Ramp { seed, .. },
            ),
        ) => Some(seed),
        (Dataset::Random { seed, .. }, _) => Some(*seed),
        (Dataset::ShareGpt { .. }, _) => Some(args.workload.sharegpt_seed),
        (Dataset::Structured(spec), _) => match spec {
            DatasetSpec::SharedPrefix { seed, .. } | DatasetSpec::MultiTurn { seed, .. } => {
                Some(*seed)
            }
            DatasetSpec::Sessions(s) => Some(s.seed),
            DatasetSpec::Mooncake { .. } | DatasetSpec::Jsonl { .. } => None,
        },
    };
    // The run's trace, for finding a tracing server's spans of its requests.
    if let Some(t) = &args.http.trace {
        file.labels.insert("trace_id".into(), t.hex());
    }
    // Where a ShareGPT profile's requests came from: the file, or the built-in lengths.
    if let Dataset::ShareGpt { path } = &args.profile.dataset {
        file.labels.insert(
            DATASET_SOURCE_LABEL.into(),
            match crate::driver::workload::sharegpt_source(path.as_deref()) {
                Some(f) => format!("file:{}", f.display()),
                None => BUILT_IN_SHAREGPT.into(),
            },
        );
    }
    // Whether the run started from an empty prefix cache (`--reset-prefix-cache`).
    file.labels.insert(
        "prefix_cache_reset".into(),
        match &prefix_cache_reset {
            Some(path) => format!("POST {path}"),
            None => "no".into(),
        },
    );
    file.warmup_records = warmup_records;
    file.cooldown_records = cooldown_records;
    file.shard = args.shard;
    file.schedule_origin = schedule_origin;
    file.start_at = args
        .start_at
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).fixed_offset());
    file.server_clock = (server_clock.samples > 0).then_some(server_clock);
    file.server_metrics = server_metrics;
    file.gpu_metrics = gpu_metrics;
    if spooled.is_some() {
        file.labels.insert(
            "soak".into(),
            "records streamed as they ended and kept slim in memory; vLLM's ITL from a \
             streaming histogram (relative error ≤ 1/1024), recomputed exactly by `report`"
                .into(),
        );
    }
    file.stages = args.stages();
    file.cold_start = healthy_after.map(|d| crate::runfile::ColdStart {
        healthy_after_s: d.as_secs_f64(),
    });
    file.phases = args.phases.clone();
    let findings = super::lint_files::lint_run_file(&file);
    Ok(BenchRun {
        file,
        findings,
        aborted,
        prefix_cache_reset,
        spooled,
    })
}

/// Check that `path` can take the run file, before the run starts (see
/// [`runfile::check_writable`](crate::runfile::check_writable)).
pub fn check_output(path: &Path) -> Result<(), BenchError> {
    check_writable(path).map_err(|e| BenchError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Save a run atomically as a run file ([`RunFile::write_atomic`]): `*.jsonl` in the JSON
/// Lines form, anything else as one JSON object.
pub fn save(path: &Path, run: &BenchRun) -> Result<(), BenchError> {
    let written = match run
        .spooled
        .as_ref()
        .and_then(|s| Some((s.path.as_ref()?, s.records)))
    {
        // A soak's whole records are in its spool; once in the run file, the spool goes.
        Some((spool, n)) => run
            .file
            .write_atomic_spooled(path, spool, n)
            .map(|()| drop(std::fs::remove_file(spool))),
        None => run.file.write_atomic(path),
    };
    written.map_err(|e| BenchError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};

    #[test]
    fn the_first_seconds_connections_are_opened_ahead_up_to_the_cap() {
        let profile = |rate: f64, n: u64, cap: Option<u64>| Profile {
            request_rate: rate,
            total_requests: n,
            max_concurrency: cap,
            ..Profile::seed_study()[0].clone()
        };
        let args = |p: Profile, cap: Option<usize>, arrivals: Option<Arrivals>| {
            let mut a = BenchArgs::new("http://127.0.0.1:1", p);
            a.max_concurrency = cap;
            a.arrivals = arrivals;
            a
        };
        // (profile rate, requests, profile cap, --max-concurrency, arrivals) → connections
        let table = [
            (1000.0, 400, None, Some(256), None, 256),
            (f64::INFINITY, 100, Some(64), None, None, 64),
            (f64::INFINITY, 10, Some(64), None, None, 10),
            (5.0, 1000, None, Some(256), None, 5),
            (2.5, 1000, None, None, None, 3),
            (5.0, 1000, None, Some(256), Some(Arrivals::AllAtOnce), 256),
            (1000.0, 1000, None, None, None, 512),
        ];
        for (rate, n, pcap, cap, arrivals, want) in table {
            let a = args(profile(rate, n, pcap), cap, arrivals);
            assert_eq!(
                first_burst(&a),
                want,
                "rate {rate}, {n} requests, caps {pcap:?}/{cap:?}"
            );
        }
        let mut sharded = args(profile(1000.0, 400, None), Some(256), None);
        sharded.shard = Some("1/4".parse().unwrap());
        assert_eq!(first_burst(&sharded), 64);
    }

    /// One chunk per request, 50 ms after submission.
    struct Echo {
        now: Duration,
        queue: Vec<(Duration, u64)>,
    }

    impl Engine for Echo {
        fn now(&self) -> Duration {
            self.now
        }
        fn submit(&mut self, r: EngineRequest) -> Result<(), EngineError> {
            self.queue
                .push((self.now + Duration::from_millis(50), r.id));
            Ok(())
        }
        fn advance(
            &mut self,
            deadline: Option<Duration>,
            ev: &mut Vec<EngineEvent>,
        ) -> Result<(), EngineError> {
            self.queue.sort();
            match self.queue.first().copied() {
                Some((at, id)) if deadline.is_none_or(|d| at <= d) => {
                    self.queue.remove(0);
                    self.now = at;
                    ev.push(EngineEvent::Chunk { id, at, tokens: 3 });
                    ev.push(EngineEvent::Finished {
                        id,
                        at,
                        usage: Usage::default(),
                    });
                }
                _ => {
                    if let Some(d) = deadline {
                        self.now = self.now.max(d)
                    }
                }
            }
            Ok(())
        }
        fn in_flight(&self) -> usize {
            self.queue.len()
        }
    }

    #[test]
    fn progressed_reports_while_waiting_and_keeps_the_contract() {
        let mut reports = Vec::new();
        let mut cb = |p: &Progress| reports.push(*p);
        let mut e = Progressed::new(
            Echo {
                now: Duration::ZERO,
                queue: vec![],
            },
            &mut cb,
        );
        for id in 0..2 {
            e.submit(EngineRequest {
                id,
                prompt_tokens: 1,
                prompt: None,
                max_output_tokens: 3,
                ignore_eos: true,
                arrival: Duration::ZERO,
                shared_prefix_tokens: 0,
                image_patches: Vec::new(),
                shares_admission: false,
                constrained: false,
            })
            .unwrap();
        }
        let mut ev = Vec::new();
        e.advance(None, &mut ev).unwrap();
        assert_eq!(ev.len(), 2, "returns right after the first terminal event");
        assert_eq!(e.now(), Duration::from_millis(50));
        e.advance(Some(Duration::from_millis(40)), &mut ev).unwrap();
        assert_eq!(ev.len(), 2, "nothing happens before an earlier deadline");
        e.advance(Some(Duration::from_secs(1)), &mut ev).unwrap();
        assert_eq!(ev.len(), 4);
        e.advance(Some(Duration::from_secs(1)), &mut ev).unwrap();
        assert_eq!(e.now(), Duration::from_secs(1));
        let p = e.progress();
        assert_eq!((p.done, p.failed, p.output_tokens), (2, 0, 6));
        drop(e);
        assert!(!reports.is_empty());
        assert_eq!(reports.last().unwrap().done, 2);
    }
}
