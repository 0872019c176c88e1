//! Running load profiles on the simulator the way the seed ran them: a fresh deployment per
//! configuration (cold for the first profile, warm after), guidellm's client-side
//! concurrency cap and prompt synthesis cost, the run's metadata; what guidellm would have
//! reported of the same run; and the simulated-versus-seed fidelity table.

use std::time::Duration;

use crate::driver::{
    run_profile,
    workload::{ShareGptFilter, WorkloadOptions},
    DriverError, RunOutput, GUIDELLM_MAX_CONCURRENCY,
};
use crate::engine::Engine;
use crate::metrics::{self, MetricsOptions};
use crate::profile::{Dataset, Profile};
use crate::result::BenchmarkResult;
use crate::result::Convention;

use super::engine::{Config, H200Sim};
use super::guidellm;

/// guidellm's client-side prompt synthesis for random prompts, per prompt token.
pub const PROMPT_SYNTHESIS: Duration = Duration::from_nanos(3_400);

/// The seed's baseline measurements per profile: (name, duration s, mean TTFT s, mean E2E s).
pub const SEED_BASELINE_S: [(&str, f64, f64, f64); 4] = [
    ("sharegpt", 70.72, 4.07, 30.19),
    ("throughput", 40.37, 5.81, 19.96),
    ("long-context", 73.72, 31.98, 47.26),
    ("generation-heavy", 57.74, 1.92, 57.43),
];
/// The seed's optimized durations per profile: (name, duration s).
pub const SEED_OPTIMIZED_S: [(&str, f64); 4] = [
    ("sharegpt", 65.25),
    ("throughput", 33.09),
    ("long-context", 59.32),
    ("generation-heavy", 49.34),
];

/// A simulated run: the driver's records and their figures, computed once (vLLM's
/// convention with P50/P95/P99, the client cap and the profile; [`metrics::summarize`]),
/// with the run's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    /// One record per request sent, in request-id order.
    pub records: Vec<crate::record::RequestRecord>,
    /// The run's figures (vLLM convention).
    pub result: BenchmarkResult,
    /// Set when the engine failed fatally (see [`RunOutput::aborted`]).
    pub aborted: Option<String>,
    /// Set when the run was stopped early (see [`RunOutput::stopped`]).
    pub stopped: Option<String>,
}

impl Simulated {
    /// The figures of the driver's `out`, computed once.
    pub fn of(out: RunOutput) -> Simulated {
        let result = metrics::summarize(
            &out.records,
            out.profile.as_ref(),
            &MetricsOptions::load_run(),
            out.max_concurrency,
        );
        Simulated {
            records: out.records,
            result,
            aborted: out.aborted,
            stopped: out.stopped,
        }
    }
}

/// Runs `profile` on `engine` as guidellm's client sends it (the seed's runs): at most
/// guidellm's 512 requests in flight (fewer when the profile sends fewer) and, for random
/// prompts, guidellm's prompt synthesis time ([`PROMPT_SYNTHESIS`] per prompt token).
pub fn run_as_guidellm<E: Engine + ?Sized>(
    engine: &mut E,
    profile: &Profile,
    opts: &WorkloadOptions,
) -> Result<Simulated, DriverError> {
    let synthetic = matches!(profile.dataset, Dataset::Random { .. });
    let cap = usize::try_from(profile.total_requests)
        .unwrap_or(usize::MAX)
        .min(GUIDELLM_MAX_CONCURRENCY);
    let out = run_profile(engine, profile, opts, |o| {
        o.max_concurrency = Some(cap);
        if synthetic {
            o.client_prep_per_prompt_token = PROMPT_SYNTHESIS;
        }
    })?;
    Ok(Simulated::of(out))
}

/// Whether `profile` runs on a freshly deployed server: in the seed's order each
/// configuration is deployed, benchmarked with ShareGPT first, then with the other profiles
/// on the same (warm) server. `warm` makes every run warm. Constant-rate loads below the
/// presets' burst rate (GPUStack's latency studies, `--rate`) run warm: their published
/// low-rate TTFTs (46–126 ms) leave no room for a seconds-long first step.
pub fn starts_cold(profile: &Profile, warm: bool) -> bool {
    !warm && profile.name.as_deref() == Some("sharegpt") && profile.request_rate >= 1000.0
}

/// Runs `profile` against a fresh simulator in `config` (cold or warm, see [`starts_cold`]).
pub fn simulate(
    profile: &Profile,
    config: &Config,
    seed: u64,
    warm: bool,
) -> Result<Simulated, DriverError> {
    simulate_with(profile, config, seed, warm, ShareGptFilter::None)
}

/// [`simulate`] with a choice of ShareGPT filtering rules (for a real ShareGPT file).
pub fn simulate_with(
    profile: &Profile,
    config: &Config,
    seed: u64,
    warm: bool,
    sharegpt_filter: ShareGptFilter,
) -> Result<Simulated, DriverError> {
    let mut engine = H200Sim::new(config.clone());
    if !starts_cold(profile, warm) {
        engine = engine.warmed_up();
    }
    simulate_on(&mut engine, profile, config, seed, sharegpt_filter)
}

/// [`simulate`] that also samples the simulator's vLLM metrics every `interval` of
/// virtual time, as a scraper would have seen them (see [`super::SimMetrics`]).
pub fn simulate_observed(
    profile: &Profile,
    config: &Config,
    seed: u64,
    warm: bool,
    interval: Duration,
) -> Result<(Simulated, crate::observe::ServerSeries), DriverError> {
    simulate_observed_with(profile, config, None, seed, warm, interval)
}

/// [`simulate_observed`] with the run-to-run noise model `noise` on (`None`: a
/// deterministic simulation).
pub fn simulate_observed_with(
    profile: &Profile,
    config: &Config,
    noise: Option<crate::sim::noise::NoiseModel>,
    seed: u64,
    warm: bool,
    interval: Duration,
) -> Result<(Simulated, crate::observe::ServerSeries), DriverError> {
    let mut params = crate::sim::Params::for_config(config);
    params.noise = noise;
    let mut engine = H200Sim::with_params(config.clone(), params).sample_metrics_every(interval);
    if !starts_cold(profile, warm) {
        engine = engine.warmed_up();
    }
    let out = simulate_on(&mut engine, profile, config, seed, ShareGptFilter::None)?;
    let series = engine
        .metrics_series()
        .unwrap_or_else(|| crate::observe::ServerSeries::new("h200-sim", interval.as_secs_f64()));
    Ok((out, series))
}

fn simulate_on(
    engine: &mut H200Sim,
    profile: &Profile,
    config: &Config,
    seed: u64,
    sharegpt_filter: ShareGptFilter,
) -> Result<Simulated, DriverError> {
    let opts = WorkloadOptions {
        sharegpt_seed: seed,
        sharegpt_filter,
        ..WorkloadOptions::default()
    };
    let mut out = run_as_guidellm(engine, profile, &opts)?;
    let meta = &mut out.result.meta;
    meta.label = Some(config.name.to_string());
    meta.engine = Some(format!("h200-sim (vLLM 0.17.1 model, {})", config.gpu.name));
    meta.engine_version = Some("0.17.1".into());
    meta.model = Some(config.model().into());
    meta.backend_parameters = config.backend_parameters();
    meta.source = Some("h200-sim".into());
    Ok(out)
}

/// What guidellm 0.5 + GPUStack would have reported of `out` (see [`super::reasoning_blind`]): the
/// records as a client blind to reasoning deltas saw them, computed with guidellm's
/// definitions and the seed's percentiles; the metadata is `out`'s.
pub fn guidellm_view(out: &Simulated, profile: &Profile, seed: u64) -> BenchmarkResult {
    let thinking = match profile.dataset {
        Dataset::ShareGpt { .. } => guidellm::THINKING_SHAREGPT,
        Dataset::Random { .. } | Dataset::Structured(_) => guidellm::THINKING_RANDOM,
    };
    let seen = guidellm::reasoning_blind(&out.records, thinking, seed);
    let mut opts = MetricsOptions::new(Convention::Guidellm);
    opts.percentiles = vec![50.0, 95.0, 99.0];
    let mut r = metrics::compute(&seen, &opts);
    r.meta = out.result.meta.clone();
    r.meta.convention = Some(Convention::Guidellm);
    r
}
