//! # servebench
//!
//! Schemas, timing collectors, metric computations, comparisons and report renderers for
//! LLM-serving benchmarks (vLLM, SGLang, TGI, …), plus an embedded simulated H200 engine so
//! the whole pipeline runs on any laptop.
//!
//! # Where to start
//!
//! The names a library user reaches for first are re-exported here at the root; each lives
//! in the module that owns it, one level down, with its neighbours.
//!
//! * **The guide** ([`guide`]) teaches servebench chapter by chapter: the two metric
//!   conventions, the command line, benchmarking a real server, studies, the simulator, noise.
//! * **Measuring in your own load generator**: a [`Collector`] hands out per-request timing
//!   handles; [`compute`] turns the [`RequestRecord`]s into a [`BenchmarkResult`] in the
//!   [`Convention`] you ask for (example below); [`summarize`] takes [`MetricsOptions`].
//! * **Driving a server**: anything that implements [`Engine`] (the HTTP client
//!   `HttpEngine`, feature `http`; the simulator `H200Sim`, feature `sim`; your own) runs a
//!   [`Profile`] through [`run_profile`] into a [`RunOutput`]; a saved run is a [`RunFile`].
//!   `simulate` (feature `sim`) does all of it on the embedded H200. The verbs of the
//!   `servebench` binary are composed in [`app`].
//! * **Reading and judging files**: [`load_path`] reads any file servebench knows (text
//!   reports, run files, guidellm, vLLM, SGLang, aiperf) into [`Run`]s; [`compare::compare`],
//!   [`noise`] and [`lint_result`] judge the results; [`mod@format`] writes every text.
//! * **Errors** are typed and name the file, line, JSON path or flag: [`LoadError`],
//!   [`ImportError`], [`DriverError`], [`EngineError`].
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
//! | any result file, its format sniffed, as runs | [`load`] |
//! | the run files of a sharded run merged into one | [`merge`] |
//! | capacity under an SLO: the SLO syntax and the noise-aware search | [`capacity`] |
//! | measurements that cannot be true | [`lint`] |
//! | server metrics, time slices, explained deltas, plots (feature `plot`) | [`observe`] |
//! | OpenAI-compatible HTTP client and server (feature `http`) | `http` |
//! | a client's figures against the server's own (feature `http`) | `accuracy` |
//! | secrets kept out of every file written | [`secret`] |
//! | the embedded simulated H200 (feature `sim`) | `sim` |
//! | tuning studies (feature `study`) | `study` |
//! | the verbs of the `servebench` binary, composed from the parts above | [`app`] |
//! | the user guide | [`guide`] |
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
pub mod atomic;
pub mod capacity;
pub mod collector;
pub mod compare;
pub mod driver;
pub mod engine;
pub mod format;
pub mod guide;
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
#[cfg(feature = "quality")]
pub mod quality;
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

// The entry points a library user reaches for first, flat at the root. Everything else is
// one level down, in the module that owns it.
pub use collector::{Clock, Collector};
pub use driver::{run_profile, DriverError, RunOptions, RunOutput};
pub use engine::{Engine, EngineError};
pub use format::text::Style;
#[cfg(feature = "http")]
pub use http::{HttpConfig, HttpEngine};
pub use import::ImportError;
pub use lint::{lint_result, Finding, LintOptions};
pub use load::{load_path, LoadError, Run};
pub use metrics::{compute, summarize, MetricsOptions};
pub use profile::Profile;
pub use record::{Chunk, Outcome, RequestRecord};
pub use result::{BenchmarkResult, Convention, Summary};
pub use runfile::RunFile;
#[cfg(feature = "sim")]
pub use sim::{simulate, H200Sim};

/// The README's examples, compiled and run as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
