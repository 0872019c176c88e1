//! The embedded simulator: a discrete-event model of vLLM 0.17 serving a Qwen3.5-family
//! model on one H100 or H200, in virtual time, behind the same
//! [`Engine`](crate::engine::Engine) trait as a real server. It owns the model and GPU
//! descriptions ([`spec`]), vLLM's flags ([`engine_args`]) and the configuration they make
//! ([`config`]), the engine
//! step physics incl. MTP speculative decoding ([`model`]), the API server's admission queue
//! ([`frontend`]), the scheduler and KV pool ([`engine`]) with its prefix cache
//! ([`prefix_cache`]), running load profiles on it
//! ([`run`]), its seeded run-to-run variation ([`noise`]), what guidellm would have reported of a run ([`guidellm`]), Markdown rows
//! ([`crate::format::sim`]), the shared command line ([`crate::app::simulate`], feature `cli`)
//! and, with `http`, serving it as an OpenAI-compatible streaming server ([`serve`]).
//!
//! ```
//! use servebench::profile::Profile;
//! use servebench::sim::{self, Config};
//!
//! let mut profile = Profile::preset("latency").unwrap();
//! profile.total_requests = 20;
//! let out = sim::run::simulate(&profile, &Config::named("baseline").unwrap(), 0, false).unwrap();
//! assert_eq!(out.result.successful_requests, Some(20));
//! ```

pub mod config;
pub mod engine;
pub mod engine_args;
pub mod fidelity;
pub mod frontend;
mod fused_moe;
pub mod guidellm;
pub mod kernels;

pub mod metrics;
pub mod model;
pub mod noise;
pub mod operators;
pub mod power;
pub mod prefix_cache;
pub mod run;
#[cfg(feature = "http")]
pub mod serve;
pub mod spec;

pub use engine::{Config, H200Sim, Params, CONFIG_NAMES};
pub use engine_args::{from_engine_args, EngineArgs, SimConfig, SimConfigError};
pub use model::{Efficiencies, StepLoad, StepModel, Weights, EFFICIENCIES};
pub use prefix_cache::PrefixCacheCounts;
pub use spec::{GpuSpec, ModelSpec};
