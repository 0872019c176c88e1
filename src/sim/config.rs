//! A deployment's configuration: the model, the GPU and the vLLM flags ([`Config`], the
//! seed's named flag sets among them) and the parameters the simulator derives from it
//! ([`Params`]: the step model, vLLM's batch limits, the KV pool left after weights, the
//! frontend's costs, speculative decoding).

use super::engine_args::{weights_of, EngineArgs, PerformanceMode, SimConfigError, NAMED_CONFIGS};
use super::model::{StepModel, Weights, EFFICIENCIES};
use super::spec::{GpuSpec, ModelSpec};

/// A serving configuration: a model on a GPU under vLLM flags. The seed's optimization
/// steps are named flag sets ([`Config::named`], [`super::engine_args::NAMED_CONFIGS`]);
/// [`super::engine_args::from_engine_args`] builds any other.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Name (`baseline`, `quantization`, …; `custom` for a configuration built from flags).
    pub name: &'static str,
    /// Weight precision (from the model id or `--quantization=fp8`).
    pub weights: Weights,
    /// `--kv-cache-dtype=fp8`.
    pub kv_fp8: bool,
    /// `--performance-mode=throughput`: doubles the batch defaults.
    pub performance_mode: bool,
    /// `--enable-prefix-caching`.
    pub prefix_caching: bool,
    /// The model served.
    pub model: ModelSpec,
    /// The GPU.
    pub gpu: GpuSpec,
    /// The vLLM flags, typed (the switches above are derived from them).
    pub args: EngineArgs,
}

/// Configuration names, in the seed's order.
pub const CONFIG_NAMES: [&str; 6] = [
    "baseline",
    "quantization",
    "prefix-cache",
    "performance-mode",
    "kv-fp8",
    "optimized",
];

/// Weight bytes read per second at start-up in [`Config::startup_s`] (a local NVMe copy
/// through the page cache; an assumption).
pub const STARTUP_LOAD_BYTES_PER_S: f64 = 2e9;

/// Seconds of `torch.compile` and CUDA-graph capture in [`Config::startup_s`] (an
/// assumption of the order vLLM's start-up logs show with a warm compile cache).
pub const STARTUP_COMPILE_S: f64 = 30.0;

impl Config {
    /// The seed's configuration called `name`: Qwen3.5-35B-A3B (BF16 or FP8) on one H200
    /// under its flag set.
    pub fn named(name: &str) -> Option<Config> {
        Config::named_on(name, "qwen3.5-35b-a3b", "h200").ok()
    }

    /// The flag set called `name` applied to `model` (its `-FP8` variant where the set
    /// uses FP8 weights) on `gpu`.
    pub fn named_on(name: &str, model: &str, gpu: &str) -> Result<Config, SimConfigError> {
        let Some((static_name, fp8, flags)) = NAMED_CONFIGS.iter().find(|(n, _, _)| *n == name)
        else {
            return Err(SimConfigError::Flag {
                flag: "--config".into(),
                message: format!(
                    "unknown config `{name}` (known: {})",
                    CONFIG_NAMES.join(", ")
                ),
            });
        };
        let mut m = ModelSpec::resolve(model)?;
        if *fp8 && !m.fp8_checkpoint {
            m.fp8_checkpoint = true;
            if !m.id.to_ascii_lowercase().ends_with("-fp8") && m.id.starts_with("Qwen/") {
                m.id.push_str("-FP8");
            }
        }
        let g = GpuSpec::resolve(gpu)?;
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        Config::from_parts(static_name, m, g, EngineArgs::parse(&flags)?)
    }

    /// A configuration from its parts (checks that the weights fit the GPU).
    pub fn from_parts(
        name: &'static str,
        model: ModelSpec,
        gpu: GpuSpec,
        args: EngineArgs,
    ) -> Result<Config, SimConfigError> {
        let c = Config {
            name,
            weights: weights_of(&model, &args),
            kv_fp8: args.kv_cache_fp8,
            performance_mode: args.performance_mode == PerformanceMode::Throughput,
            prefix_caching: args.enable_prefix_caching,
            model,
            gpu,
            args,
        };
        let budget = c.memory_budget_bytes();
        let weights = c.weight_bytes();
        let reserve = c.non_kv_reserve_bytes();
        if weights + reserve >= budget {
            return Err(SimConfigError::DoesNotFit {
                model: c.model.id.clone(),
                gpu: c.gpu.name.clone(),
                weights_gb: weights / 1e9,
                budget_gb: budget / 1e9,
                reserve_gb: reserve / 1e9,
                util: c.gpu_memory_utilization(),
            });
        }
        Ok(c)
    }

    /// The model the configuration serves (Hugging Face id).
    pub fn model(&self) -> &str {
        &self.model.id
    }

    /// The backend parameters: the vLLM flags, as given.
    pub fn backend_parameters(&self) -> Vec<String> {
        self.args.flags.clone()
    }

    /// `--gpu-memory-utilization` (default 0.9).
    pub fn gpu_memory_utilization(&self) -> f64 {
        self.args.gpu_memory_utilization.unwrap_or(0.9)
    }

    /// vLLM's memory budget: utilization × device memory, bytes.
    pub fn memory_budget_bytes(&self) -> f64 {
        self.gpu_memory_utilization() * self.gpu.memory_bytes
    }

    /// Seconds from `vllm serve` to a healthy server, as the served simulator's `--cold`
    /// start models it: the weights read at [`STARTUP_LOAD_BYTES_PER_S`] plus
    /// [`STARTUP_COMPILE_S`] of compilation and CUDA-graph capture. A stated assumption, not a
    /// measurement: `vllm bench startup` on the real server gives the real figure, which
    /// the example's `--startup-seconds` takes instead.
    pub fn startup_s(&self) -> f64 {
        self.weight_bytes() / STARTUP_LOAD_BYTES_PER_S + STARTUP_COMPILE_S
    }

    /// Resident weight bytes: FP8 linear layers (or BF16), BF16 embedding, lm_head and
    /// vision tower (absent with `--language-model-only`); the MTP layer only when
    /// speculative decoding uses it.
    pub fn weight_bytes(&self) -> f64 {
        let m = &self.model;
        let lm_only = self.args.language_model_only;
        let with_mtp = self.args.speculative_tokens() > 0;
        let all = m.resident_params(lm_only);
        let mtp = m.mtp_layers as f64 * m.mtp_layer_params();
        let mtp = if with_mtp { 0.0 } else { mtp };
        let embed = m.lm_head_params() * if m.tied_embeddings { 1.0 } else { 2.0 };
        let vision = if lm_only { 0.0 } else { m.vision_params };
        let linear = all - mtp - embed - vision;
        let w = match self.weights {
            Weights::Bf16 => 2.0,
            Weights::Fp8 => 1.0,
        };
        linear * w + 2.0 * (embed + vision)
    }

    /// Non-KV memory: [`NON_KV_RESERVE_FRACTION`] of device memory, bytes.
    pub fn non_kv_reserve_bytes(&self) -> f64 {
        NON_KV_RESERVE_FRACTION * self.gpu.memory_bytes
    }

    /// The KV + state pool: the memory budget less weights and the non-KV reserve.
    pub fn kv_pool_bytes(&self) -> f64 {
        (self.memory_budget_bytes() - self.weight_bytes() - self.non_kv_reserve_bytes()).max(0.0)
    }
}

/// Device memory vLLM's budget holds besides weights and the KV/state pool (activations
/// of the profiling run, CUDA graphs, the sampler's logits, the multimodal encoder's
/// profiling budget), as a fraction of device memory. Fitted, the one memory constant: it
/// gives the seed's BF16 deployment on an H200 a 26 GB pool (2,333 blocks; 39.5 GB held
/// back), which makes the Throughput profile (512 × (3 state + 3 attention) blocks)
/// capacity-bound and reproduces its duration, TTFT and the FP8 speed-up (the FP8 pool is
/// then derived: the same budget less the FP8 weights); on an H100 it holds back 22.4 GB,
/// which leaves Qwen3.5-9B the pool its development point's 1.6 s mean TTFT needs (a fixed
/// 39.5 GB would make that run capacity-bound: 6.6 s). It is far above the reference
/// notes' back-of-envelope 5 GB of activations; a real "GPU KV cache size" log line would
/// settle what it is.
pub const NON_KV_RESERVE_FRACTION: f64 = 39.5e9 / 150_754_820_096.0;

/// Everything the simulator needs besides the configuration's switches.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// The step-time model.
    pub step: StepModel,
    /// `max_num_batched_tokens`.
    pub max_batched_tokens: u64,
    /// `max_num_seqs`.
    pub max_seqs: usize,
    /// `--max-model-len`.
    pub max_model_len: u64,
    /// KV + state pool, bytes.
    pub kv_pool_bytes: f64,
    /// Client → API server latency, s.
    pub net_in_s: f64,
    /// API server → client latency for output chunks, s (must not exceed `net_in_s`).
    pub net_out_s: f64,
    /// Serial admission cost per request (render, tokenize, multimodal processor path), s.
    pub admission_s: f64,
    /// Admission slow-down per request already in the engine (the reference's prototype
    /// used 0.004; with the capacity-bound KV pool the fit needs none, so it is 0).
    pub admission_load: f64,
    /// Requests the frontend admits concurrently (processor sharing); 1 is a serial FIFO.
    pub admission_concurrency: usize,
    /// Tokens the chat template adds to every prompt.
    pub chat_template_tokens: u64,
    /// Serial API-server cost per streamed output chunk (detokenize, reasoning parser, SSE),
    /// s: staggers the chunks of one step and caps the chunk rate at `1 / chunk_s` across
    /// all streams. The calibrated 10 µs only staggers (the reference's optional 140 µs cap
    /// did not improve the fit).
    pub chunk_s: f64,
    /// One-time cost of the first engine step on a fresh deployment of an MoE model (the
    /// Triton fused-MoE kernels' JIT and autotuning for the first batch shapes), s. A
    /// hypothesis fitted to the seed: its ShareGPT runs (the first benchmark on each fresh
    /// deployment) show no first token for about 6.5 s, then first tokens at the prefill
    /// rate (median TTFT above the mean, P95 ≈ P99 when the prefill budget doubles); the
    /// later profiles show no such gap. A dense model has no fused-MoE kernels: 0 (the
    /// Qwen3.5-9B development point's 1.6 s mean TTFT leaves no room for it).
    pub cold_start_s: f64,
    /// Whether even a warmed-up server pays `cold_start_s` once: with MTP speculative
    /// decoding the drafter's MoE layer first runs at new shapes on the first request. The
    /// same hypothesis, read off the FP8 + MTP development point (mean TTFT 263 ms against
    /// 68 ms without MTP, and a peak concurrency of 57 at 8 req/s — a ≈ 7 s backlog — where
    /// its 3.3 s mean latency gives ≈ 26 in flight).
    pub cold_start_when_warm: bool,
    /// Draft tokens per step (`num_speculative_tokens`; 0 without speculative decoding).
    pub spec_tokens: u64,
    /// Probability that the first draft token is accepted ([`MTP_ACCEPTANCE`]; deeper
    /// positions: [`mtp_position_acceptance`]).
    pub spec_acceptance: f64,
    /// Run-to-run variation ([`super::NoiseModel`]); `None` (the default) replays one run
    /// exactly.
    pub noise: Option<super::noise::NoiseModel>,
    /// An injected slow leak, for testing drift detection: every step takes this fraction
    /// longer per hour of the engine's (virtual) time since it started (0.2: +20 % after an
    /// hour). 0 (the default): none. Not a model of anything vLLM does.
    pub leak_per_hour: f64,
}

/// Acceptance of Qwen3.5's first MTP draft token: 0.65, the pooled teacher-forced
/// acceptance measured for a Qwen3.5-family MTP head (tenstorrent/vllm issue #442,
/// 2026-08-25: 0.647 ± 0.020 over code, factual, prose and technical text; prose 0.49,
/// code 0.91). Deeper positions: [`MTP_ACCEPTANCE_DECAY`]. Not fitted.
pub const MTP_ACCEPTANCE: f64 = 0.65;

/// How the conditional acceptance falls with each deeper draft position: vLLM reuses the
/// one MTP layer for positions 2, 3, …, each conditioned on the drafter's own previous
/// guess, so later drafts are accepted less often. 0.92 per position: the ratio of the
/// conditional acceptance at positions 2–4 to position 1's in vLLM's own
/// `SpecDecoding metrics` log of a Qwen3.6-27B MTP head with six draft tokens
/// (noonghunna/club-3090 issue #105, vLLM 0.20.1: per-position 0.917, 0.837, 0.648,
/// 0.538, …, i.e. conditional 0.917, 0.913, 0.774, 0.830: mean of positions 2–4 over
/// position 1 = 0.915). Not fitted.
pub const MTP_ACCEPTANCE_DECAY: f64 = 0.92;

/// Probability that draft position `position` (1-based) is accepted given every earlier
/// one was, when the first is accepted with probability `first`.
pub fn mtp_position_acceptance(first: f64, position: u64) -> f64 {
    let depth = position.saturating_sub(1).min(i32::MAX as u64) as i32;
    (first * MTP_ACCEPTANCE_DECAY.powi(depth)).clamp(0.0, 1.0)
}

/// Whether a deployment of `model` with `weights` runs on the operator-table step model
/// ([`StepModel::with_operator_tables`]) rather than the calibrated roofline. A dense
/// model does (cuBLAS GEMMs, the Gated DeltaNet kernels vLLM runs), and so does a BF16
/// MoE model (its routed experts timed as vLLM's fused-MoE kernel,
/// [`super::kernels::FusedMoe`]). An FP8 MoE model does not: the checkpoints are
/// block-scaled (128 × 128), and vLLM's block-scaled FP8 kernels — the per-token-group
/// activation quantization, the block-scaled GEMMs and fused-MoE path — were not measured
/// (the table's FP8 rows are per-tensor-scaled `torch._scaled_mm`); on those rows the
/// seed's optimized (FP8) runs leave their bounds (Generation Heavy 11 % short), so FP8
/// MoE deployments keep the roofline fitted to the seed's FP8 runs. The rule is per weight
/// precision: a BF16 checkpoint served with `--quantization fp8` (per-tensor scales, like
/// the measured rows) keeps the roofline too, its fused-MoE FP8 path being unmeasured
/// as well.
pub fn uses_operator_tables(model: &ModelSpec, weights: Weights) -> bool {
    model.experts == 0 || weights == Weights::Bf16
}

impl Params {
    /// The parameters for a configuration: the step model of its model on its GPU, vLLM's
    /// batch limits for its flags, and the KV pool its memory leaves.
    pub fn for_config(c: &Config) -> Params {
        let max_model_len = c
            .args
            .max_model_len
            .or(c.model.max_position_embeddings)
            .unwrap_or(32_768);
        let (tokens, seqs) = c.args.batch_limits(&c.gpu, max_model_len);
        let mut step =
            StepModel::for_deployment(&c.model, &c.gpu, c.weights, c.kv_fp8, &EFFICIENCIES);
        if uses_operator_tables(&c.model, c.weights) {
            step = step.with_operator_tables(&c.model, &c.gpu, c.weights, c.kv_fp8);
        }
        step.max_cudagraph_tokens = c.args.max_cudagraph_capture_size.unwrap_or(512);
        let spec_tokens = if c.model.mtp_layers > 0 {
            c.args.speculative_tokens()
        } else {
            0
        };
        Params {
            step,
            max_batched_tokens: tokens,
            max_seqs: seqs,
            max_model_len,
            kv_pool_bytes: c.kv_pool_bytes(),
            net_in_s: 2e-3,
            net_out_s: 1e-3,
            admission_s: 18e-3,
            admission_load: 0.0,
            admission_concurrency: 1,
            chat_template_tokens: 10,
            chunk_s: 10e-6,
            cold_start_s: if c.model.experts > 0 { 6.5 } else { 0.0 },
            cold_start_when_warm: spec_tokens > 0 && c.model.experts > 0,
            spec_tokens,
            spec_acceptance: MTP_ACCEPTANCE,
            noise: None,
            leak_per_hour: 0.0,
        }
    }
}
