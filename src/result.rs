//! The result schema: one [`BenchmarkResult`] holds every row of both report styles
//! (GPUStack's "Serving Benchmark Result" block and `vllm bench serve`'s report) plus the
//! run's metadata.
//!
//! # Units
//!
//! Inside a result **every time is in milliseconds** (`f64`), whatever the report printed:
//! the benchmark duration is `duration_ms`, the E2E latency summary is in ms although the
//! GPUStack block prints it in seconds. Conversion happens only at the edges (renderers,
//! parsers, importers). Throughputs are per second (`*_per_s`). Token and request counts are
//! integers. Every value is optional: `None` is printed as `N/A` (GPUStack) or the row is
//! omitted (vLLM).
//!
//! # JSON form
//!
//! `serde_json::to_string(&result)` is the documented, versioned JSON form; the field
//! `schema_version` is [`SCHEMA_VERSION`] and readers reject versions outside
//! [`MIN_SCHEMA_VERSION`]`..=`[`SCHEMA_VERSION`].
//! Non-finite values (a text report can print `nan`, `inf`, `-inf`) are written as the
//! strings `"nan"`, `"inf"` and `"-inf"`, so parse → JSON → render keeps them.
//!
//! | version | change |
//! |---|---|
//! | 1 | first version |
//! | 2 | `intervals`: confidence intervals of the figures ([`crate::noise::RunIntervals`]), optional |
//! | 2 | `capacity`: the answer of a capacity search under an SLO ([`CapacityEstimate`]), optional |
//!
//! Optional fields added within version 2 (older readers ignore them; absent when not
//! measured): `reasoning` ([`ReasoningFigures`]: time to first reasoning and first answer
//! token, reasoning and answer tokens), `energy` ([`EnergyFigures`]: joules, power, J per
//! output token, GPU utilization, memory, clocks), `spec_decode` ([`SpecDecodeFigures`]:
//! acceptance rate, mean accepted length, tokens per chunk) and `adapters`
//! ([`AdapterFigures`]: results per LoRA adapter).

use serde::{Deserialize, Serialize};

use crate::profile::Profile;

mod capacity;
mod float;
pub(crate) mod intervals;
mod production;
mod sweep;

pub use intervals::{Interval, IntervalMethod, PercentileInterval, RunIntervals, SummaryIntervals};

pub use production::{
    AdapterFigures, CheckFigures, CostFigures, EnergyFigures, ImageFigures, PrefixCacheFigures,
    Rate, ReasoningFigures, SessionFigures, SpecDecodeFigures,
};

pub use capacity::{CapacityEstimate, CapacityProbe, SearchKind};

pub use sweep::{to_file_bytes as sweep_to_file_bytes, Strategy, Sweep, SweepRun, SWEEP_FORMAT};

/// Version of the JSON form written by this crate. Bump on incompatible changes.
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest `schema_version` still read: version 1 is version 2 without
/// [`BenchmarkResult::intervals`].
pub const MIN_SCHEMA_VERSION: u32 = 1;

/// Which metric definitions produced a result's numbers.
///
/// vLLM and guidellm disagree on TPOT and ITL (see [`crate::metrics`]); a result says which
/// one it used so that comparisons never mix them silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Convention {
    /// `vllm bench serve` 0.34 `calculate_metrics`: TPOT excludes the first token, ITL is one
    /// gap per streamed chunk, request-weighted percentiles.
    Vllm,
    /// guidellm's definitions: TPOT includes the TTFT, "ITL" is a per-request decode mean,
    /// token-weighted distributions. GPUStack's reports are made of these numbers.
    Guidellm,
}

/// Summary statistics of one latency metric (E2E latency, TTFT, TPOT or ITL), in ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Arithmetic mean, ms.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub mean: Option<f64>,
    /// Median, ms.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub median: Option<f64>,
    /// Standard deviation, ms (population std for the vLLM convention).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub std: Option<f64>,
    /// Minimum, ms.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub min: Option<f64>,
    /// Maximum, ms.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub max: Option<f64>,
    /// Percentiles in the order a report lists them (p50, p90, p95, p99, p99.9, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<Percentile>,
}

impl Summary {
    /// The value of percentile `p` (e.g. `99.0`), if the summary has that percentile.
    ///
    /// ```
    /// use servebench::result::{Percentile, Summary};
    /// let s = Summary { percentiles: vec![Percentile { p: 99.0, value: Some(12.5) }], ..Default::default() };
    /// assert_eq!(s.percentile(99.0), Some(12.5));
    /// assert_eq!(s.percentile(95.0), None);
    /// ```
    pub fn percentile(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|q| q.p == p)
            .and_then(|q| q.value)
    }
}

/// One percentile of a [`Summary`]: `p` in percent (`99.9`) and its value in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// The percentile rank, in percent (0–100).
    pub p: f64,
    /// The value, ms; `None` where the source printed `N/A`.
    #[serde(default, with = "float")]
    pub value: Option<f64>,
}

/// servebench's own exact figures, computed beside a convention's numbers so users can see
/// where the conventions over- or under-count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExactFigures {
    /// Largest number of output tokens in any sliding 1-second window, tokens/s.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub peak_output_tokens_per_s: Option<f64>,
    /// Largest number of requests in flight at one instant (sweep line over [send, end)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_in_flight: Option<u64>,
}

/// Metadata of a run, kept beside the numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// Free-form label ("baseline", "Quantization", …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When the run happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// Serving engine ("vLLM", "SGLang", "h200-sim", …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Engine version ("0.17.1").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// Model served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Backend (server) parameters, one per entry, as the seed lists them
    /// (`--reasoning-parser=qwen3`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backend_parameters: Vec<String>,
    /// The load profile that produced the run, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// Metric definitions the numbers follow, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convention: Option<Convention>,
    /// Where the result came from (a file name, `h200-sim`, a URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The concurrency the client was configured with, where
    /// [`BenchmarkResult::max_concurrency`] holds something else: guidellm's concurrent
    /// `streams` (or a rate profile's `max_concurrency`), while GPUStack's mapping puts
    /// guidellm's *measured* maximum of concurrent requests in `max_concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured_concurrency: Option<u64>,
    /// The API the run called (`completions`, `chat`, `embeddings`, `rerank`, …), when it
    /// is known and not `completions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// One benchmark run's figures: every row of both report styles. See the module docs for
/// units; every value may be absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    /// JSON schema version, [`SCHEMA_VERSION`] when written by this crate.
    pub schema_version: u32,
    /// Run metadata.
    #[serde(default)]
    pub meta: RunMeta,
    /// Requests that completed successfully (in the measured window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_requests: Option<u64>,
    /// Requests that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_requests: Option<u64>,
    /// "Maximum request concurrency": the client cap for vLLM, the observed peak for GPUStack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u64>,
    /// Configured request rate, requests/s (`None` for an infinite rate or when unknown).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub request_rate_configured: Option<f64>,
    /// Benchmark duration, ms.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub duration_ms: Option<f64>,
    /// Total prompt tokens of the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_input_tokens: Option<u64>,
    /// Total generated tokens of the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_output_tokens: Option<u64>,
    /// Successful requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub request_throughput_per_s: Option<f64>,
    /// Requests per second that met the goodput SLOs.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub request_goodput_per_s: Option<f64>,
    /// Input tokens per second (old vLLM reports print it).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub input_throughput_per_s: Option<f64>,
    /// Output tokens per second.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub output_throughput_per_s: Option<f64>,
    /// Peak output token throughput, tokens/s, as the convention defines it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub peak_output_throughput_per_s: Option<f64>,
    /// Peak concurrent requests, as the convention defines it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub peak_concurrent_requests: Option<f64>,
    /// Inputs per second, for runs whose requests carried several (embeddings batches,
    /// rerank and score documents): the texts the server pooled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_per_s: Option<f64>,
    /// Input + output tokens per second.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub total_token_throughput_per_s: Option<f64>,
    /// End-to-end request latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el: Option<Summary>,
    /// Time to first token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<Summary>,
    /// Time per output token, ms (definition depends on the convention).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot: Option<Summary>,
    /// Inter-token latency, ms (definition depends on the convention).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl: Option<Summary>,
    /// servebench's exact figures, when computed from records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactFigures>,
    /// Confidence intervals of the figures, when computed from the records (schema
    /// version 2; see [`crate::noise::run_intervals`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<intervals::RunIntervals>,
    /// The capacity under an SLO, when this run is the representative of a capacity
    /// search (the probe at the highest load that held; see [`CapacityEstimate`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityEstimate>,
    /// Reasoning-aware latency, when some stream carried reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningFigures>,
    /// Energy and GPU telemetry, when GPU metrics were scraped or sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergyFigures>,
    /// Speculative decoding: the server's counters and the client's tokens per chunk,
    /// when the server decoded speculatively or chunks carried several tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_decode: Option<SpecDecodeFigures>,
    /// Results per LoRA adapter, when requests were sent to adapters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adapters: Vec<AdapterFigures>,
    /// The images the requests carried, when they carried any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImageFigures>,
    /// What the answers' checks found (tool calls, structured outputs), when checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<CheckFigures>,
    /// The prefix-cache hit rate implied by the workload beside the server's, when the
    /// server reported prefix-cache counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache: Option<PrefixCacheFigures>,
    /// Multi-turn sessions, when the requests were turns of sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionFigures>,
    /// What the tokens cost, when a GPU price was given (`bench --gpu-price`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostFigures>,
}

impl Default for BenchmarkResult {
    fn default() -> Self {
        BenchmarkResult {
            schema_version: SCHEMA_VERSION,
            meta: RunMeta::default(),
            successful_requests: None,
            failed_requests: None,
            max_concurrency: None,
            request_rate_configured: None,
            duration_ms: None,
            total_input_tokens: None,
            total_output_tokens: None,
            request_throughput_per_s: None,
            request_goodput_per_s: None,
            input_throughput_per_s: None,
            output_throughput_per_s: None,
            peak_output_throughput_per_s: None,
            peak_concurrent_requests: None,
            inputs_per_s: None,
            total_token_throughput_per_s: None,
            e2el: None,
            ttft: None,
            tpot: None,
            itl: None,
            exact: None,
            intervals: None,
            capacity: None,
            reasoning: None,
            energy: None,
            spec_decode: None,
            adapters: Vec::new(),
            images: None,
            checks: None,
            prefix_cache: None,
            sessions: None,
            cost: None,
        }
    }
}

impl BenchmarkResult {
    /// Benchmark duration in seconds, if known.
    pub fn duration_s(&self) -> Option<f64> {
        self.duration_ms.map(|ms| ms / 1000.0)
    }

    /// Success rate = successful / total requests. The total is the profile's
    /// `total_requests` when the result carries a profile, else `fallback_total`, else
    /// successful + failed. `None` when nothing is known.
    pub fn success_rate(&self, fallback_total: Option<u64>) -> Option<f64> {
        let ok = self.successful_requests?;
        // u128: successful + failed of any two u64 counts fits.
        let total = self
            .meta
            .profile
            .as_ref()
            .map(|p| u128::from(p.total_requests))
            .or(fallback_total.map(u128::from))
            .or_else(|| self.failed_requests.map(|f| u128::from(f) + u128::from(ok)))?;
        if total == 0 {
            return None;
        }
        Some(ok as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts read from JSON can be anything a u64 holds: successful + failed must not
    /// overflow (a panic in debug builds, a wrapped total and a rate above 1 in release).
    #[test]
    fn success_rate_does_not_overflow_on_huge_counts() {
        let r = BenchmarkResult {
            successful_requests: Some(u64::MAX),
            failed_requests: Some(u64::MAX),
            ..Default::default()
        };
        assert_eq!(r.success_rate(None), Some(0.5));
        let r = BenchmarkResult {
            successful_requests: Some(3),
            failed_requests: Some(1),
            ..Default::default()
        };
        assert_eq!(r.success_rate(None), Some(0.75));
        assert_eq!(r.success_rate(Some(6)), Some(0.5));
    }
}
