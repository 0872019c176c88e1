//! The embedded simulator: a discrete-event model of vLLM 0.17 serving Qwen3.5-35B-A3B on
//! one H200, in virtual time, behind the same [`Engine`](crate::engine::Engine) trait as a
//! real server. It owns the engine step physics ([`model`]), the API server's admission
//! queue ([`frontend`]), the scheduler and KV pool ([`engine`]), running the seed's
//! profiles on it ([`run`]), its seeded run-to-run variation ([`noise`]), what guidellm
//! would have reported of a run ([`guidellm`]) and,
//! with the `http` feature, serving it as an OpenAI-compatible streaming server ([`serve`]).
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

pub mod engine;
pub mod frontend;
pub mod guidellm;
pub mod model;
pub mod noise;
pub mod run;
#[cfg(feature = "http")]
pub mod serve;

pub use engine::{Config, H200Sim, Params, CONFIG_NAMES};
pub use model::{StepLoad, StepModel, Weights};
