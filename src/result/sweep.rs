//! The schema of a rate sweep (`bench --sweep N`): [`Sweep`], its runs ([`SweepRun`]) and
//! what each ran ([`Strategy`]), and the sweep file they are saved as
//! ([`to_file_bytes`], format [`SWEEP_FORMAT`]). The sweep itself is
//! [`crate::driver::sweep()`]; its rate table is [`crate::format::sweep`]; these types only
//! hold its figures and records.

use serde::{Deserialize, Serialize};

use super::BenchmarkResult;
use crate::record::RequestRecord;

/// What one run of a sweep was.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Strategy {
    /// One request at a time.
    Synchronous,
    /// Every request at once (client cap: the base options').
    Throughput,
    /// A constant rate.
    Constant {
        /// Requests per second offered.
        rate: f64,
    },
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRun {
    /// What was run.
    pub strategy: Strategy,
    /// Requests completed per second: successes over the run for synchronous; between the
    /// 25th and 75th percentile of the end times for throughput (its steady rate, without
    /// ramp-up and tail); the steady completion rate for a constant rate (see
    /// [`crate::driver::sweep()`]).
    pub achieved_rate_per_s: f64,
    /// Whether the server kept up (constant rates only).
    pub kept_up: Option<bool>,
    /// Why the detector stopped the run early, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// The run's figures.
    pub result: BenchmarkResult,
    /// The run's records.
    pub records: Vec<RequestRecord>,
}

/// A finished sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// The runs, in the order they ran.
    pub runs: Vec<SweepRun>,
    /// The highest constant rate kept up with (requests per second), if any.
    pub saturation_rate_per_s: Option<f64>,
}

/// The value of a sweep file's `format` field.
pub const SWEEP_FORMAT: &str = "servebench-sweep";

#[derive(Serialize)]
struct SweepFileOut<'a> {
    format: &'static str,
    version: u32,
    #[serde(flatten)]
    sweep: &'a Sweep,
}

/// A sweep file's bytes: `{"format": "servebench-sweep", "version": 1, "runs": [...],
/// "saturation_rate_per_s": …}`; [`crate::load`] reads them back.
///
/// # Errors
///
/// When a figure cannot be written as JSON.
pub fn to_file_bytes(s: &Sweep) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&SweepFileOut {
        format: SWEEP_FORMAT,
        version: 1,
        sweep: s,
    })
}
