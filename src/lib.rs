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
//! | per-request raw timings | [`record`] |
//! | collecting them from many threads/tasks | [`collector`] |
//! | the server adapter (virtual or real time) | [`engine`] |
//! | workloads, arrivals and the load loop | [`driver`] |
//! | reports as text (GPUStack and vLLM styles) | [`format`] |
//! | records → metrics, both conventions | [`metrics`] |
//! | exact and streaming statistics | [`stats`] |
//! | comparing runs, GPUStack's conclusion and optimization tables | [`compare`] |
//! | other tools' result files (guidellm, vLLM, SGLang) | [`import`] |
//! | measurements that cannot be true | [`lint`] |
//! | OpenAI-compatible HTTP client, server and `bench` (feature `http`) | `http` |
//!
//! ```
//! use servebench::profile::Profile;
//! let p = Profile::preset("sharegpt").unwrap();
//! assert_eq!(p.total_requests, 1000);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod collector;
pub mod compare;
pub mod driver;
pub mod engine;
pub mod format;
#[cfg(feature = "http")]
pub mod http;
pub mod import;
pub mod lint;
pub mod metrics;
pub mod profile;
pub mod record;
pub mod result;
pub mod stats;

pub use collector::{Clock, Collector};
pub use profile::Profile;
pub use record::{Chunk, Outcome, RequestRecord};
pub use result::{BenchmarkResult, Convention, Summary};
