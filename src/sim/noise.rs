//! Run-to-run variation for the simulator: a documented, seeded noise model, so that the
//! noise-aware statistics ([`crate::noise`]) can be exercised without a GPU.
//!
//! Real servers vary from run to run; the simulator without noise replays one run exactly
//! (the main job's single-run replay keeps it off). With a [`NoiseModel`]:
//!
//! | source | model | default |
//! |---|---|---|
//! | run-level speed (clocks, thermals, the deployment's kernel choices) | every step time × one log-normal factor per run, log-sd `run_sigma` | 0.01 |
//! | step-time jitter (batch composition, launch overheads, interference) | each step × an independent log-normal factor, log-sd `step_sigma` | 0.03 |
//! | arrival jitter (client → server network and scheduling) | each request enters `Exp(arrival_jitter_s)` later, never overtaking the one before | 0.5 ms |
//! | dataset sampling | a ShareGPT sample drawn with a seed derived from the run's seed | on |
//!
//! Both log-normal factors have mean one (`exp(σ·Z − σ²/2)`), so the noise does not move the
//! configuration's expected figures; each run's generator is seeded from
//! [`NoiseModel::seed`], so repetitions are reproducible.
//!
//! ```
//! use servebench::profile::Profile;
//! use servebench::sim::noise::{simulate_repetition, NoiseModel};
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

impl NoiseModel {
    /// The documented defaults for run `seed`.
    pub fn typical(seed: u64) -> NoiseModel {
        NoiseModel {
            seed,
            run_sigma: 0.01,
            step_sigma: 0.03,
            arrival_jitter_s: 0.5e-3,
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
