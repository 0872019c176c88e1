//! The embedded simulator: a discrete-event model of vLLM 0.17 serving a Qwen3.5-family
//! model on one H100 or H200, in virtual time, behind the same
//! [`Engine`](crate::engine::Engine) trait as a real server. It owns the model and GPU
//! descriptions ([`ModelSpec`], [`GpuSpec`]), vLLM's flags ([`EngineArgs`]) and the
//! configuration they make ([`Config`]), the engine step physics incl. MTP speculative
//! decoding ([`StepModel`]), the API server's admission queue, the scheduler and KV pool
//! ([`H200Sim`]) with its prefix cache ([`PrefixCache`]), running load profiles on it
//! ([`simulate()`]), its seeded run-to-run variation ([`NoiseModel`]), what guidellm would
//! have reported of a run ([`guidellm_view`]), Markdown rows ([`crate::format::sim_markdown`]), the
//! shared command line (`app::simulate`, feature `cli`) and, with `http`, serving it as an
//! OpenAI-compatible streaming server (`serve`).
//!
//! ```
//! use servebench::profile::Profile;
//! use servebench::sim::{self, Config};
//!
//! let mut profile = Profile::preset("latency").unwrap();
//! profile.total_requests = 20;
//! let out = sim::simulate(&profile, &Config::named("baseline").unwrap(), 0, false).unwrap();
//! assert_eq!(out.result.successful_requests, Some(20));
//! ```

pub(crate) mod config;
pub(crate) mod engine;
pub(crate) mod engine_args;
pub(crate) mod fidelity;
pub(crate) mod frontend;
mod fused_moe;
pub(crate) mod guidellm;
pub(crate) mod kernels;
pub(crate) mod metrics;
pub(crate) mod model;
pub(crate) mod noise;
pub(crate) mod operators;
pub(crate) mod power;
pub(crate) mod prefix_cache;
pub(crate) mod run;
#[cfg(feature = "http")]
pub mod serve;
pub(crate) mod spec;
pub(crate) mod step_load;

pub use config::{
    mtp_position_acceptance, uses_operator_tables, MTP_ACCEPTANCE, MTP_ACCEPTANCE_DECAY,
    NON_KV_RESERVE_FRACTION, STARTUP_COMPILE_S, STARTUP_LOAD_BYTES_PER_S,
};
pub use engine::{Config, H200Sim, Params, CONFIG_NAMES};
pub use engine_args::{
    from_engine_args, EngineArgs, PerformanceMode, SimConfig, SimConfigError, Speculative,
    NAMED_CONFIGS,
};
pub use fidelity::{
    development_points, e2e_mean_absolute_error, moe_decode_decomposition, DevLoad, DevPoint,
    DevResult, FidelityError, StepDecomposition, DEV_POINTS, EFFECT_ERROR_FRACTION,
    SEED_DECODE_STEPS,
};
pub use guidellm::{reasoning_blind, Thinking, THINKING_RANDOM, THINKING_SHAREGPT};
pub use kernels::{
    interpolate, Axis, Curve, Dtype, FusedMoe, KernelTable, Operator, Roofline, TableEntry,
    TableError, FUSED_MOE, KERNELS_FORMAT, KNEE_WEIGHT, ROOFLINE, STREAM_CEILING,
};
pub use metrics::SimMetrics;
pub use model::{Efficiencies, StepModel, Weights, EFFICIENCIES, GRAMMAR_MASK_S, MIXED_SEQ_S};
pub use noise::{
    seed_for, simulate_repetition, NoiseModel, ARRIVAL_JITTER_S, RUN_SIGMA, STEP_SIGMA,
};
pub use operators::{
    draft_pass_overhead_s, forward_ops, operator_list_json, MoeKernel, OperatorModel, OperatorTime,
    EAGER_LAYER_S, OPERATORS_FORMAT, STEP_OVERHEAD_S,
};
pub use power::{EnergyMeter, PowerModel, StepWork};
pub use prefix_cache::PrefixCacheCounts;
pub use prefix_cache::{block_hashes, PrefixCache};
pub use run::{
    guidellm_view, run_as_guidellm, simulate, simulate_observed, simulate_observed_with,
    simulate_with, starts_cold, Simulated, PROMPT_SYNTHESIS, SEED_BASELINE_S, SEED_OPTIMIZED_S,
};
pub use spec::{GpuSpec, ModelSpec};
pub use spec::{HybridLayout, SpecError, SHIPPED_GPUS, SHIPPED_MODELS};
pub use step_load::StepLoad;
