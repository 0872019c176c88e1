//! # servebench
//!
//! Schemas, timing collectors, metric computations, comparisons and report renderers for
//! LLM-serving benchmarks (vLLM, SGLang, TGI, …), plus an embedded simulated H200 engine so
//! the whole pipeline runs on any laptop.
//!
//! The modules follow the pipeline:
//!
//! | stage | module |
//! |---|---|
//! | what to send | [`profile`] |
//! | the result schema | [`result`] |
//! | a saved run (`bench --output`): result, records, profile, target | [`runfile`] |
//! | per-request raw timings | [`record`] |
//! | collecting them from many threads/tasks | [`collector`] |
//! | the server adapter (virtual or real time) | [`engine`] |
//! | workloads, arrivals and the load loop | [`driver`] |
//! | reports as text (GPUStack and vLLM styles) | [`mod@format`] |
//! | records → metrics, both conventions | [`metrics`] |
//! | exact and streaming statistics | [`stats`] |
//! | seeded random numbers (SplitMix64, xoshiro256**) | [`rng`] |
//! | confidence intervals, repetitions, noise-aware verdicts | [`noise`] |
//! | comparing runs, GPUStack's conclusion and optimization tables | [`compare`] |
//! | other tools' result files (guidellm, vLLM, SGLang) | [`import`] |
//! | measurements that cannot be true | [`lint`] |
//! | server metrics, time slices, explained deltas, plots (feature `plot`) | [`observe`] |
//! | OpenAI-compatible HTTP client, server and `bench` (feature `http`) | `http` |
//! | the embedded simulated H200 (feature `sim`) | `sim` |
//!
//! Collecting timings in your own load generator and computing both conventions:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use servebench::collector::ManualClock;
//! use servebench::engine::Usage;
//! use servebench::{metrics, Collector, Convention};
//!
//! let clock = Arc::new(ManualClock::new());
//! let collector = Collector::with_clock(clock.clone());
//! let mut req = collector.begin();              // from any thread or task
//! clock.advance(Duration::from_millis(100));
//! req.chunk(1);                                 // first token after 100 ms
//! for _ in 0..3 {
//!     clock.advance(Duration::from_millis(20));
//!     req.chunk(1);                             // then one token every 20 ms
//! }
//! req.finish(Usage { prompt_tokens: Some(32), completion_tokens: Some(4) });
//!
//! let records = collector.records();
//! let vllm = metrics::compute(&records, Convention::Vllm);
//! let gl = metrics::compute(&records, Convention::Guidellm);
//! // vLLM's TPOT excludes the first token (60 ms / 3); guidellm's includes it
//! // (160 ms / 4), and guidellm's "ITL" is vLLM's TPOT formula.
//! assert!((vllm.tpot.unwrap().mean.unwrap() - 20.0).abs() < 1e-9);
//! assert!((gl.tpot.unwrap().mean.unwrap() - 40.0).abs() < 1e-9);
//! assert!((gl.itl.unwrap().mean.unwrap() - 20.0).abs() < 1e-9);
//! assert_eq!(vllm.meta.convention, Some(Convention::Vllm));
//! ```
//!
//! ```
//! use servebench::profile::Profile;
//! let p = Profile::preset("sharegpt").unwrap();
//! assert_eq!(p.total_requests, 1000);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Library code never unwraps, expects or panics (tests may). Set here rather than in
// Cargo.toml's `[lints]`, which would apply to every test, bench and example too.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "http")]
pub mod accuracy;
pub mod app;
pub mod capacity;
pub mod collector;
pub mod compare;
pub mod driver;
pub mod engine;
pub mod format;
#[cfg(feature = "http")]
pub mod http;
pub mod import;
pub mod lint;
pub mod load;
pub mod merge;
pub mod metrics;
pub mod noise;
pub mod observe;
pub mod profile;
pub mod record;
pub mod result;
pub mod rng;
pub mod runfile;
pub mod secret;
#[cfg(feature = "sim")]
pub mod sim;
pub mod stats;
#[cfg(all(feature = "study", unix))]
pub mod study;

pub use collector::{Clock, Collector};
pub use profile::Profile;
pub use record::{Chunk, Outcome, RequestRecord};
pub use result::{BenchmarkResult, Convention, Summary};

/// The README's examples, compiled and run as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
