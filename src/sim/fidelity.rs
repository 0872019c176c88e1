//! The simulator's error budget on its development points: published GPUStack runs of
//! other loads, models and GPUs than the seed's (vLLM 0.17.1, guidellm at a constant
//! rate), each simulated with the same flags ([`DEV_POINTS`], [`development_points`]).
//! Nothing is fitted to them: they are checks. The seed's own runs (in sample) are
//! [`super::run::SEED_BASELINE_S`].

use crate::driver::DriverError;
use crate::profile::{Dataset, Profile, ProfileError};

use super::engine_args::{from_engine_args, SimConfigError};
use super::run::simulate;

/// The load of a development point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DevLoad {
    /// A preset profile of the seed study.
    Preset(&'static str),
    /// ShareGPT at a constant rate (req/s) for a number of requests.
    ShareGpt(f64, u64),
}

/// A published run the simulator is checked against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevPoint {
    /// What it is.
    pub label: &'static str,
    /// Model (shipped name or Hugging Face id).
    pub model: &'static str,
    /// GPU.
    pub gpu: &'static str,
    /// vLLM flags.
    pub flags: &'static [&'static str],
    /// The load.
    pub load: DevLoad,
    /// Published duration, s.
    pub duration_s: Option<f64>,
    /// Published mean TTFT, s.
    pub ttft_s: Option<f64>,
    /// Published mean end-to-end latency, s.
    pub e2e_s: Option<f64>,
}

const BASE: &[&str] = &["--reasoning-parser=qwen3", "--max-model-len=32768"];
const LATENCY_OPTIMIZED_MTP: &[&str] = &[
    "--reasoning-parser=qwen3",
    "--max-model-len=32768",
    "--max-cudagraph-capture-size=512",
    "--max-num-batched-tokens=4096",
    "--performance-mode=interactivity",
    "--enable-prefix-caching",
    "--speculative-config={\"method\":\"mtp\",\"num_speculative_tokens\":1}",
];

/// The development points: GPUStack's published Qwen3.5 runs besides the seed's (its
/// latency study of the 35B on an H200 at 1, 4, 8 and 16 req/s, BF16 and with its
/// optimized FP8 + MTP stack; its Qwen3.5-9B run on an H100), as in the README's
/// "Development points and predictions".
pub const DEV_POINTS: [DevPoint; 6] = [
    DevPoint {
        label: "35B BF16, H200, ShareGPT 1 req/s x 1000",
        model: "qwen3.5-35b-a3b",
        gpu: "h200",
        flags: BASE,
        load: DevLoad::ShareGpt(1.0, 1000),
        duration_s: None,
        ttft_s: Some(0.046),
        e2e_s: Some(1.85),
    },
    DevPoint {
        label: "35B BF16, H200, ShareGPT 4 req/s x 1000",
        model: "qwen3.5-35b-a3b",
        gpu: "h200",
        flags: BASE,
        load: DevLoad::ShareGpt(4.0, 1000),
        duration_s: None,
        ttft_s: Some(0.126),
        e2e_s: Some(3.30),
    },
    DevPoint {
        label: "35B BF16, H200, ShareGPT 8 req/s x 1000",
        model: "qwen3.5-35b-a3b",
        gpu: "h200",
        flags: BASE,
        load: DevLoad::ShareGpt(8.0, 1000),
        duration_s: Some(132.25),
        ttft_s: Some(0.06848),
        e2e_s: Some(5.32),
    },
    DevPoint {
        label: "35B BF16, H200, ShareGPT 16 req/s x 1000",
        model: "qwen3.5-35b-a3b",
        gpu: "h200",
        flags: BASE,
        load: DevLoad::ShareGpt(16.0, 1000),
        duration_s: None,
        ttft_s: None,
        e2e_s: Some(18.59),
    },
    DevPoint {
        label: "35B FP8 + MTP (k = 1), H200, ShareGPT 8 req/s x 1000",
        model: "Qwen/Qwen3.5-35B-A3B-FP8",
        gpu: "h200",
        flags: LATENCY_OPTIMIZED_MTP,
        load: DevLoad::ShareGpt(8.0, 1000),
        duration_s: Some(129.19),
        ttft_s: Some(0.26311),
        e2e_s: Some(3.28),
    },
    DevPoint {
        label: "9B BF16, H100, seed ShareGPT profile",
        model: "qwen3.5-9b",
        gpu: "h100",
        flags: BASE,
        load: DevLoad::Preset("sharegpt"),
        duration_s: Some(54.74),
        ttft_s: Some(1.604),
        e2e_s: Some(24.11),
    },
];

/// Why a development point could not be simulated.
#[derive(Debug, thiserror::Error)]
pub enum FidelityError {
    /// Its configuration.
    #[error(transparent)]
    Config(#[from] SimConfigError),
    /// Its profile.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The run.
    #[error(transparent)]
    Driver(#[from] DriverError),
}

/// One development point's prediction beside its published figures.
#[derive(Debug, Clone, PartialEq)]
pub struct DevResult {
    /// The point.
    pub point: DevPoint,
    /// Simulated duration, s.
    pub duration_s: f64,
    /// Simulated mean TTFT, s.
    pub ttft_s: f64,
    /// Simulated mean end-to-end latency, s.
    pub e2e_s: f64,
}

impl DevResult {
    /// Relative errors (simulated / published − 1) of duration, mean TTFT and mean E2E,
    /// where published.
    pub fn errors(&self) -> [Option<f64>; 3] {
        let err = |sim: f64, p: Option<f64>| p.map(|p| sim / p - 1.0);
        [
            err(self.duration_s, self.point.duration_s),
            err(self.ttft_s, self.point.ttft_s),
            err(self.e2e_s, self.point.e2e_s),
        ]
    }
}

/// Simulates every development point (seeded by `seed`).
pub fn development_points(seed: u64) -> Result<Vec<DevResult>, FidelityError> {
    let mut out = Vec::new();
    for point in DEV_POINTS {
        let flags: Vec<String> = point.flags.iter().map(|f| f.to_string()).collect();
        let config = from_engine_args(point.model, point.gpu, &flags)?;
        let profile = match point.load {
            DevLoad::Preset(name) => Profile::preset(name)?,
            DevLoad::ShareGpt(rate, n) => Profile {
                name: None,
                dataset: Dataset::ShareGpt { path: None },
                request_rate: rate,
                total_requests: n,
                max_concurrency: None,
            },
        };
        let r = simulate(&profile, &config, seed, false)?.result;
        let mean = |s: &Option<crate::result::Summary>| {
            s.as_ref().and_then(|s| s.mean).unwrap_or(f64::NAN) / 1000.0
        };
        out.push(DevResult {
            point,
            duration_s: r.duration_s().unwrap_or(f64::NAN),
            ttft_s: mean(&r.ttft),
            e2e_s: mean(&r.e2el),
        });
    }
    Ok(out)
}

/// Mean absolute relative error of mean E2E latency over the points that publish it.
pub fn e2e_mean_absolute_error(results: &[DevResult]) -> f64 {
    let errs: Vec<f64> = results
        .iter()
        .filter_map(|r| r.errors()[2])
        .map(f64::abs)
        .collect();
    if errs.is_empty() {
        return f64::NAN;
    }
    errs.iter().sum::<f64>() / errs.len() as f64
}
