//! The simulator's error budget on its development points: published GPUStack runs of
//! other loads, models and GPUs than the seed's (vLLM 0.17.1, guidellm at a constant
//! rate), each simulated with the same flags ([`DEV_POINTS`], [`development_points`]).
//! Nothing is fitted to them: they are checks. The seed's own runs (in sample) are
//! [`super::run::SEED_BASELINE_S`].

use crate::driver::DriverError;
use crate::profile::{Dataset, Profile, ProfileError};

use super::engine_args::{from_engine_args, SimConfigError};
use super::run::simulate;

/// The simulator's stated error on the **size of a configuration change's effect** on
/// throughput, as a fraction of the predicted effect: the mean absolute relative error of the
/// seed study's one measured change (baseline → its optimized command) over its four
/// profiles. The simulator predicts +11.7 / +32.8 / +23.1 / +23.7 % more throughput
/// (ShareGPT, Throughput, Long Context, Generation Heavy) where the source measured
/// +8.4 / +22.0 / +24.3 / +17.0 %: relative errors +40 / +49 / −5 / +39 %, mean 33 %.
/// A study decides on simulated runs with this band around each difference
/// (`difference × (1 ± EFFECT_ERROR_FRACTION)`), so a step inside it is "within model
/// error", never "exact". `tests/sim_fidelity.rs` recomputes it from the simulator.
pub const EFFECT_ERROR_FRACTION: f64 = 0.33;

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
    /// A model or GPU description.
    #[error(transparent)]
    Spec(#[from] super::spec::SpecError),
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

/// The seed's measured decode steps of Qwen3.5-35B-A3B (BF16) on the H200: (sequences,
/// context tokens per sequence, measured step low, high, ms). At 2 / 13 / 40 sequences the
/// P95 TPOT of GPUStack's ShareGPT runs at 1 / 4 / 8 req/s (peak concurrency 6 / 34 / 59;
/// 6.4–6.9 ms at the lowest load), at 200 the Generation Heavy profile's pure-decode step
/// (57.74 s over 2000 steps of 200 sequences at 1–3k context). In sample: the calibrated
/// roofline was fitted to them.
pub const SEED_DECODE_STEPS: [(u64, u64, f64, f64); 4] = [
    (2, 600, 6.4, 6.9),
    (13, 600, 11.7, 11.7),
    (40, 600, 18.9, 18.9),
    (200, 2000, 27.8, 27.8),
];

/// One seed decode step taken apart ([`moe_decode_decomposition`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StepDecomposition {
    /// Sequences decoding.
    pub seqs: u64,
    /// Context tokens per sequence.
    pub context: u64,
    /// The measured step, ms (low, high).
    pub measured_ms: (f64, f64),
    /// The calibrated roofline's step with BF16 weights (the model the FP8 35B runs), ms.
    pub roofline_ms: f64,
    /// The operator tables' step with the fused-MoE model, ms.
    pub tables_ms: f64,
    /// The operator tables' step with the routed experts as the measured
    /// `torch._grouped_mm` rows, ms.
    pub grouped_ms: f64,
    /// Each operator's share of `tables_ms` (summed over the layers that run it; the
    /// per-step overhead as `step overhead`), ms, in forward order.
    pub operators: Vec<(&'static str, f64)>,
}

/// The seed's decode steps ([`SEED_DECODE_STEPS`]) of the 35B BF16 on the H200, taken
/// apart operator by operator on the operator tables (fused-MoE model,
/// [`super::kernels::FusedMoe`]) beside the grouped-GEMM rows and the calibrated roofline.
pub fn moe_decode_decomposition() -> Result<Vec<StepDecomposition>, FidelityError> {
    use super::kernels::{Dtype, KernelTable};
    use super::model::{StepModel, Weights, EFFICIENCIES};
    use super::operators::{MoeKernel, OperatorModel, STEP_OVERHEAD_S};
    use super::spec::{GpuSpec, ModelSpec};
    use super::step_load::StepLoad;
    let model = ModelSpec::resolve("qwen3.5-35b-a3b")?;
    let gpu = GpuSpec::resolve("h200")?;
    let roofline = StepModel::for_deployment(&model, &gpu, Weights::Bf16, false, &EFFICIENCIES);
    let tables = OperatorModel::new(&model, &gpu, Dtype::Bf16, false, KernelTable::for_gpu(&gpu));
    let grouped = tables.clone().with_moe_kernel(MoeKernel::GroupedMm);
    let mut out = Vec::new();
    for (seqs, context, low, high) in SEED_DECODE_STEPS {
        let mut load = StepLoad::default();
        for _ in 0..seqs {
            load.add(1, context, false);
        }
        let mut operators: Vec<(&'static str, f64)> = Vec::new();
        for t in tables.breakdown(&load) {
            match operators.iter_mut().find(|(n, _)| *n == t.name) {
                Some((_, ms)) => *ms += t.seconds * 1e3,
                None => operators.push((t.name, t.seconds * 1e3)),
            }
        }
        operators.retain(|(_, ms)| *ms > 0.0);
        operators.push(("step overhead", STEP_OVERHEAD_S * 1e3));
        out.push(StepDecomposition {
            seqs,
            context,
            measured_ms: (low, high),
            roofline_ms: roofline.step_seconds(&load) * 1e3,
            tables_ms: tables.step_seconds(&load, true) * 1e3,
            grouped_ms: grouped.step_seconds(&load, true) * 1e3,
            operators,
        });
    }
    Ok(out)
}
