//! Run-to-run variation for the simulator: a documented, seeded noise model, so that the
//! noise-aware statistics ([`crate::noise`]) can be exercised without a GPU.
//!
//! Real servers vary from run to run; the simulator without noise replays one run exactly
//! (the main job's single-run replay keeps it off). With a [`NoiseModel`]:
//!
//! | source | model | default |
//! |---|---|---|
//! | run-level speed (clocks, thermals, the deployment's kernel choices) | every step time × one log-normal factor per run, log-sd `run_sigma` | 0.005 |
//! | step-time jitter (batch composition, launch overheads, interference) | each step × an independent log-normal factor, log-sd `step_sigma` | 0.03 |
//! | arrival jitter (client → server network and scheduling) | each request enters `Exp(arrival_jitter_s)` later, never overtaking the one before | 0.5 ms |
//! | dataset sampling | a ShareGPT sample drawn with a seed derived from the run's seed | on |
//!
//! # Calibration: how much real runs vary
//!
//! The defaults are sized on published run-to-run spread of identical vLLM runs:
//!
//! * Throughput of repeated identical runs (fixed seed, same server) varies with a
//!   coefficient of variation of **0.36–0.64 %** for vLLM at concurrency 8–32, and
//!   0.11–0.26 % for SGLang on the same host (vLLM issue #53436,
//!   <https://github.com/vllm-project/vllm/issues/53436>; at concurrency 1–4 with
//!   speculative decoding vLLM's CV rose to 7.5–20 %, a bug of acceptance non-determinism).
//!   `run_sigma = 0.005` puts the simulated throughput CV in that band: it is the only
//!   source that does not average out over the thousands of steps of a run.
//! * Tail latencies vary far more than means: P99 TTFT of three identical
//!   `benchmark_serving.py` runs was 533, 741 and 597 ms, P99 TPOT 377–447 ms, while P90
//!   TTFT stayed within 319–341 ms (vLLM PR #7062,
//!   <https://github.com/vllm-project/vllm/pull/7062>). Per-step jitter (`step_sigma`
//!   0.03) and arrival jitter make the simulated tails move from run to run while the
//!   means barely do.
//! * At concurrency 1, six identical runs of one decode-bound workload spanned 6.9 %
//!   (CV 2.4 %; <https://github.com/0xBakeer/qwen38-flash-next-spark/issues/6>): single
//!   streams are noisier than loaded servers, which the per-step jitter reproduces (few
//!   steps per request to average over).
//!
//! Both log-normal factors have mean one (`exp(σ·Z − σ²/2)`), so the noise does not move the
//! configuration's expected figures; each run's generator is seeded from
//! [`NoiseModel::seed`], so repetitions are reproducible.
//!
//! ```
//! use servebench::profile::Profile;
//! use servebench::sim::{simulate_repetition, NoiseModel};
//! use servebench::sim::Config;
//!
//! let mut profile = Profile::preset("latency").unwrap();
//! profile.total_requests = 20;
//! let config = Config::named("baseline").unwrap();
//! let a = simulate_repetition(&profile, &config, true, &NoiseModel::typical(1)).unwrap();
//! let b = simulate_repetition(&profile, &config, true, &NoiseModel::typical(2)).unwrap();
//! let again = simulate_repetition(&profile, &config, true, &NoiseModel::typical(1)).unwrap();
//! assert_eq!(a.records, again.records);
//! assert_ne!(a.records, b.records);
//! ```

use crate::driver::workload::WorkloadOptions;
use crate::driver::DriverError;
use crate::profile::Profile;
use crate::rng::Rng;

use super::engine::{Config, H200Sim, Params};
use super::run::{run_as_guidellm, starts_cold};

/// The simulator's run-to-run variation (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseModel {
    /// Seed of this run's noise (one per repetition).
    pub seed: u64,
    /// Log-sd of the per-run speed factor.
    pub run_sigma: f64,
    /// Log-sd of the per-step time factor.
    pub step_sigma: f64,
    /// Mean extra client → server delay per request, s.
    pub arrival_jitter_s: f64,
    /// Draw the ShareGPT sample with a seed derived from `seed`.
    pub resample_dataset: bool,
}

/// Default log-sd of the per-run speed factor (see the module docs' calibration).
pub const RUN_SIGMA: f64 = 0.005;
/// Default log-sd of the per-step time factor.
pub const STEP_SIGMA: f64 = 0.03;
/// Default mean extra client → server delay per request, s.
pub const ARRIVAL_JITTER_S: f64 = 0.5e-3;

/// A run's noise seed from a base seed and the run's name (configuration, profile,
/// repetition): FNV-1a of the name, mixed with the base. Different runs get independent
/// noise; the same run gets the same noise again (a resumed study decides the same).
pub fn seed_for(base: u64, key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ base.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl NoiseModel {
    /// The documented defaults for run `seed`.
    pub fn typical(seed: u64) -> NoiseModel {
        NoiseModel {
            seed,
            run_sigma: RUN_SIGMA,
            step_sigma: STEP_SIGMA,
            arrival_jitter_s: ARRIVAL_JITTER_S,
            resample_dataset: true,
        }
    }

    /// A mean-one log-normal factor.
    fn factor(rng: &mut Rng, sigma: f64) -> f64 {
        if sigma > 0.0 && sigma.is_finite() {
            (sigma * rng.normal() - sigma * sigma / 2.0).exp()
        } else {
            1.0
        }
    }
}

/// The noise state of one simulated server.
#[derive(Debug, Clone)]
pub(crate) struct NoiseState {
    model: NoiseModel,
    rng: Rng,
    run_factor: f64,
    last_enter_s: f64,
}

impl NoiseState {
    pub(crate) fn new(model: NoiseModel) -> NoiseState {
        let mut rng = Rng::new(model.seed ^ 0x6E6F_6973_655F_736D);
        let run_factor = NoiseModel::factor(&mut rng, model.run_sigma);
        NoiseState {
            model,
            rng,
            run_factor,
            last_enter_s: 0.0,
        }
    }

    /// A step's duration with the run and step factors applied.
    pub(crate) fn step_seconds(&mut self, seconds: f64) -> f64 {
        seconds * self.run_factor * NoiseModel::factor(&mut self.rng, self.model.step_sigma)
    }

    /// When a request sent to enter at `enter_s` really enters (never before the previous).
    pub(crate) fn enter_s(&mut self, enter_s: f64) -> f64 {
        let j = self.model.arrival_jitter_s;
        let extra = if j > 0.0 && j.is_finite() {
            self.rng.exponential(j)
        } else {
            0.0
        };
        self.last_enter_s = (enter_s + extra).max(self.last_enter_s);
        self.last_enter_s
    }
}

/// One repetition of `profile` on a fresh simulator running `config` with `noise` (cold or
/// warm as in [`crate::sim::run::simulate`]). Different `noise.seed`s give independent
/// runs of one configuration.
pub fn simulate_repetition(
    profile: &Profile,
    config: &Config,
    warm: bool,
    noise: &NoiseModel,
) -> Result<crate::sim::run::Simulated, DriverError> {
    let mut params = Params::for_config(config);
    params.noise = Some(*noise);
    let mut engine = H200Sim::with_params(config.clone(), params);
    if !starts_cold(profile, warm) {
        engine = engine.warmed_up();
    }
    let dataset_seed = if noise.resample_dataset {
        noise.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED
    } else {
        0
    };
    let opts = WorkloadOptions {
        sharegpt_seed: dataset_seed,
        ..WorkloadOptions::default()
    };
    let mut out = run_as_guidellm(&mut engine, profile, &opts)?;
    let meta = &mut out.result.meta;
    meta.label = Some(config.name.to_string());
    meta.engine = Some("h200-sim (vLLM 0.17.1 model, noise on)".into());
    meta.engine_version = Some("0.17.1".into());
    meta.model = Some(config.model().into());
    meta.backend_parameters = config.backend_parameters();
    meta.source = Some(format!("h200-sim noise seed {}", noise.seed));
    Ok(out)
}
