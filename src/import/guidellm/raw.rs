//! guidellm's file structures as serde reads them: tolerant (every field optional,
//! unknown fields ignored), one shape for every schema version, and the request lists of
//! the sequential and the parallel parse.

use serde::de::IgnoredAny;
use serde::Deserialize;

#[derive(Deserialize)]
pub(super) struct Probe {
    pub(super) metadata: Option<RawMetadata>,
}

/// The report; `L` is what a request list reads as (the requests themselves, or
/// [`parallel`]'s placeholder for a list parsed on its own).
#[derive(Deserialize)]
pub(super) struct RawReport<L = Vec<RawRequest>> {
    pub(super) metadata: Option<RawMetadata>,
    pub(super) args: Option<IgnoredAny>,
    pub(super) benchmarks: Option<Vec<RawBenchmark<L>>>,
}

#[derive(Deserialize)]
pub(super) struct RawMetadata {
    pub(super) version: Option<i64>,
    pub(super) guidellm_version: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RawBenchmark<L = Vec<RawRequest>> {
    pub(super) config: Option<RawBenchConfig>,
    pub(super) scheduler_metrics: Option<RawSchedulerMetrics>,
    pub(super) metrics: Option<RawMetrics>,
    pub(super) requests: Option<RawRequests<L>>,
    pub(super) start_time: Option<f64>,
    pub(super) end_time: Option<f64>,
    pub(super) duration: Option<f64>,
    // 0.2/0.3
    pub(super) args: Option<RawLegacyArgs>,
    pub(super) run_stats: Option<IgnoredAny>,
    pub(super) request_totals: Option<RawTotals>,
    pub(super) worker: Option<RawLegacyWorker>,
    // 0.1
    pub(super) benchmarks: Option<IgnoredAny>,
}

#[derive(Deserialize)]
pub(super) struct RawBenchConfig {
    pub(super) strategy: Option<RawStrategy>,
    pub(super) backend: Option<RawBackend>,
}

#[derive(Deserialize)]
pub(super) struct RawStrategy {
    pub(super) type_: Option<String>,
    pub(super) rate: Option<serde_json::Value>,
    pub(super) streams: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub(super) struct RawBackend {
    pub(super) model: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RawLegacyArgs {
    pub(super) strategy: Option<RawStrategy>,
}

#[derive(Deserialize)]
pub(super) struct RawLegacyWorker {
    pub(super) backend_model: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RawSchedulerMetrics {
    pub(super) measure_start_time: Option<f64>,
    pub(super) measure_end_time: Option<f64>,
}

#[derive(Deserialize, Clone, Copy)]
pub(super) struct RawTotals {
    pub(super) successful: Option<u64>,
    pub(super) errored: Option<u64>,
    pub(super) incomplete: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct RawMetrics {
    pub(super) request_totals: Option<RawTotals>,
    pub(super) requests_per_second: Option<RawStatusDist>,
    pub(super) request_concurrency: Option<RawStatusDist>,
    pub(super) request_latency: Option<RawStatusDist>,
    pub(super) prompt_token_count: Option<RawStatusDist>,
    pub(super) output_token_count: Option<RawStatusDist>,
    pub(super) time_to_first_token_ms: Option<RawStatusDist>,
    pub(super) time_per_output_token_ms: Option<RawStatusDist>,
    pub(super) inter_token_latency_ms: Option<RawStatusDist>,
    pub(super) output_tokens_per_second: Option<RawStatusDist>,
    pub(super) tokens_per_second: Option<RawStatusDist>,
}

#[derive(Deserialize)]
pub(super) struct RawStatusDist {
    pub(super) successful: Option<RawDist>,
}

#[derive(Deserialize)]
pub(super) struct RawDist {
    pub(super) mean: Option<f64>,
    pub(super) median: Option<f64>,
    pub(super) std_dev: Option<f64>,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    pub(super) percentiles: Option<RawPercentiles>,
}

#[derive(Deserialize)]
pub(super) struct RawPercentiles {
    pub(super) p001: Option<f64>,
    pub(super) p01: Option<f64>,
    pub(super) p05: Option<f64>,
    pub(super) p10: Option<f64>,
    pub(super) p25: Option<f64>,
    pub(super) p50: Option<f64>,
    pub(super) p75: Option<f64>,
    pub(super) p90: Option<f64>,
    pub(super) p95: Option<f64>,
    pub(super) p99: Option<f64>,
    pub(super) p999: Option<f64>,
}

#[derive(Deserialize)]
pub(super) struct RawRequests<L = Vec<RawRequest>> {
    pub(super) successful: Option<L>,
    pub(super) errored: Option<L>,
    pub(super) incomplete: Option<L>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct RawRequest {
    pub(super) info: Option<RawInfo>,
    pub(super) request_start_time: Option<f64>,
    pub(super) request_end_time: Option<f64>,
    pub(super) prompt_tokens: Option<u64>,
    pub(super) output_tokens: Option<u64>,
    // 0.2/0.3
    pub(super) scheduler_info: Option<RawSchedulerInfo>,
    pub(super) start_time: Option<f64>,
    pub(super) end_time: Option<f64>,
    pub(super) first_token_time: Option<f64>,
    pub(super) last_token_time: Option<f64>,
    pub(super) error: Option<String>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct RawInfo {
    pub(super) status: Option<String>,
    pub(super) timings: Option<RawTimings>,
    pub(super) error: Option<String>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct RawTimings {
    pub(super) targeted_start: Option<f64>,
    pub(super) request_start: Option<f64>,
    pub(super) first_token_iteration: Option<f64>,
    pub(super) last_token_iteration: Option<f64>,
    pub(super) token_iterations: Option<u64>,
    pub(super) request_end: Option<f64>,
    pub(super) resolve_start: Option<f64>,
    pub(super) resolve_end: Option<f64>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct RawSchedulerInfo {
    pub(super) targeted_start_time: Option<f64>,
    pub(super) request_start: Option<f64>,
    pub(super) request_end: Option<f64>,
}

/// A parsed request list: one vector (the sequential parse) or its pieces in order (the
/// parallel parse, which so never concatenates them).
pub(super) trait RequestList {
    fn requests(&self) -> impl Iterator<Item = &RawRequest>;
}

impl RequestList for Vec<RawRequest> {
    fn requests(&self) -> impl Iterator<Item = &RawRequest> {
        self.iter()
    }
}

impl RequestList for Vec<Vec<RawRequest>> {
    fn requests(&self) -> impl Iterator<Item = &RawRequest> {
        self.iter().flatten()
    }
}
