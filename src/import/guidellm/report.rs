//! What a guidellm report holds once read: its layout ([`Schema`]), each benchmark's runs,
//! counts and records ([`GuidellmBenchmark`]), the report ([`GuidellmReport`]).

use std::time::Duration;

use crate::import::ImportError;
use crate::record::RequestRecord;
use crate::result::BenchmarkResult;

/// Which guidellm report layout a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// guidellm 0.2.x–0.3.x: no `metadata`, per-benchmark `run_stats` and `request_totals`.
    Legacy02,
    /// guidellm 0.4: no `metadata`, top-level `args`.
    V04,
    /// `metadata.version` 1: guidellm 0.5–0.6 (what GPUStack's benchmark-runner wrote).
    V1,
    /// `metadata.version` 2: guidellm 0.7–0.8.
    V2,
}

/// Request counts by status as a guidellm file lists or reports them (the file's side;
/// [`crate::metrics::StatusCounts`] is guidellm's `request_totals` recomputed from records).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// Completed requests.
    pub successful: u64,
    /// Requests that failed.
    pub errored: u64,
    /// Requests cancelled or cut off (guidellm status `cancelled`).
    pub incomplete: u64,
}

impl RequestCounts {
    /// Sum of the three.
    pub fn total(&self) -> u64 {
        // Counts come from the file: saturate rather than overflow.
        self.successful
            .saturating_add(self.errored)
            .saturating_add(self.incomplete)
    }
}

/// Listed, in-window and reported request counts of one benchmark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests listed in the file's `requests` lists.
    pub listed: RequestCounts,
    /// Listed requests inside the measured window.
    pub in_window: RequestCounts,
    /// `metrics.request_totals` (what guidellm's metrics count), when present.
    pub reported: Option<RequestCounts>,
}

/// One benchmark of a guidellm report.
#[derive(Debug, Clone, PartialEq)]
pub struct GuidellmBenchmark {
    /// Strategy label as guidellm's console prints it (`constant@20.00`, `synchronous`).
    pub name: String,
    /// The file's aggregates, mapped as GPUStack did (see the module docs).
    pub result: BenchmarkResult,
    /// Every listed request, successful first, then errored, then incomplete.
    pub records: Vec<RequestRecord>,
    /// For each record, whether it lies in the measured window.
    pub in_window: Vec<bool>,
    /// Start of the measured window, offset from the records' origin.
    pub window_start: Duration,
    /// End of the measured window, offset from the records' origin.
    pub window_end: Duration,
    /// Unix time (s) of the records' origin (offset zero).
    pub origin_unix_s: f64,
    /// Request counts.
    pub counts: Counts,
}

impl GuidellmBenchmark {
    /// The records inside the measured window: the population guidellm's metrics use.
    pub fn measured_records(&self) -> Vec<RequestRecord> {
        self.records
            .iter()
            .zip(&self.in_window)
            .filter(|(_, &w)| w)
            .map(|(r, _)| r.clone())
            .collect()
    }

    /// Measured window length.
    pub fn window(&self) -> Duration {
        self.window_end.saturating_sub(self.window_start)
    }

    /// `true` when the file lists fewer requests than its metrics count (guidellm's
    /// `sample_size`): records then cover only a sample.
    pub fn is_sampled(&self) -> bool {
        match self.counts.reported {
            Some(r) => self.counts.in_window.total() < r.total(),
            None => false,
        }
    }
}

/// A whole guidellm report.
#[derive(Debug, Clone, PartialEq)]
pub struct GuidellmReport {
    /// Layout of the file.
    pub schema: Schema,
    /// `metadata.guidellm_version`, when present.
    pub guidellm_version: Option<String>,
    /// The benchmarks, in file order.
    pub benchmarks: Vec<GuidellmBenchmark>,
}

pub(crate) fn unsupported(v: i64) -> ImportError {
    ImportError::UnsupportedSchema {
        format: "guidellm",
        path: "$.metadata.version".into(),
        found: format!("version {v} (this crate reads 1 and 2)"),
    }
}
