//! guidellm JSON reports: 0.8.x (`metadata.version` 2, also 0.7), 0.5–0.6
//! (`metadata.version` 1), 0.4 (no `metadata`, top-level `args`) and the 0.2/0.3 layout
//! (per-benchmark `run_stats`, the one guidellm's own test asset uses).
//!
//! # What is read
//!
//! Every benchmark in the file (a sweep or `--override` gives several) becomes a
//! [`GuidellmBenchmark`] holding:
//!
//! * `result`: the file's aggregates mapped to the "Serving Benchmark Result" rows the way
//!   GPUStack's report renderer does (all from the `successful` group of each metric):
//!
//!   | row | guidellm field |
//!   |---|---|
//!   | Successful requests | `metrics.request_totals.successful` |
//!   | Maximum request concurrency | `request_concurrency.max`, rounded half-to-even |
//!   | Benchmark duration | `duration` (else `measure_end_time − measure_start_time`) |
//!   | Total input / generated tokens | `prompt_token_count.mean` / `output_token_count.mean` × successful, rounded half-to-even |
//!   | Request throughput | `requests_per_second.mean` |
//!   | Output token throughput | `output_tokens_per_second.mean` |
//!   | Peak output token throughput | `output_tokens_per_second.max` |
//!   | Peak concurrent requests | `request_concurrency.max` |
//!   | Total token throughput | `tokens_per_second.mean` |
//!   | Latency (E2E) | `request_latency` (seconds, stored in ms) |
//!   | TTFT / TPOT / ITL | `time_to_first_token_ms` / `time_per_output_token_ms` / `inter_token_latency_ms` |
//!
//!   `failed_requests` is `errored + incomplete` of `request_totals`; `meta.convention` is
//!   [`Convention::Guidellm`]. Summaries carry mean, median, std, min, max and guidellm's 11
//!   percentiles (0.1 … 99.9).
//! * `records`: one [`RequestRecord`] per listed request (successful, errored and
//!   incomplete), see below.
//! * the measured window and the counts.
//!
//! # Records
//!
//! guidellm does not keep per-chunk timestamps. The records use guidellm's own
//! reconstruction of the token timeline (the one its throughput metrics use): the first
//! chunk, with 1 token, at `first_token_iteration`; the remaining `token_iterations − 1`
//! iterations evenly spaced up to `last_token_iteration` (a linspace that skips the first
//! point), sharing the remaining `output_tokens − 1` tokens. guidellm gives each of those
//! iterations the fractional share `(N − 1)/(iterations − 1)`; a [`Chunk`] holds whole
//! tokens, so the share is split into integers whose running sum follows the fractional
//! one (each chunk gets ⌊k·s⌋ − ⌊(k−1)·s⌋). With at most one token iteration (or no
//! iteration timestamps) all `output_tokens` sit in one chunk at `last_token_iteration`
//! (else at the request end), again as guidellm does — which is exactly the
//! single-iteration artifact that [`crate::lint`] detects.
//!
//! `sent_at` is `request_start`, `ended_at` is `request_end` (for failed requests, which
//! have none, the time guidellm resolved them), `scheduled_at` is `targeted_start`;
//! `usage_output_tokens` is guidellm's `output_tokens` (server usage when reported) and
//! `prompt_tokens` its `prompt_tokens`. All times are offsets from the earliest timestamp of
//! the benchmark.
//!
//! # The measured window
//!
//! With warmup or cooldown, guidellm lists every request it ran but computes its metrics
//! only over `[start_time, end_time]` (`scheduler_metrics.measure_start_time` …
//! `measure_end_time`): a request counts when it ends at or after the window start and
//! starts at or before the window end (a request without a start counts at its end).
//! `metrics.request_totals` counts those requests, so a file may list more requests than
//! it counts (a request cancelled at the end of a time-limited run may also fall outside).
//! [`GuidellmBenchmark::measured_records`] applies the same rule, and
//! [`GuidellmBenchmark::counts`] shows listed, in-window and reported counts. When guidellm
//! sampled the lists (`sample_size`), fewer requests are listed than counted:
//! [`GuidellmBenchmark::is_sampled`] says so and recomputation from records is partial.

use std::time::Duration;

use chrono::{DateTime, FixedOffset, TimeZone, Utc};
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::{json, read_file, round_count, ImportError};

pub mod csv;
mod parallel;
pub mod yaml;
use crate::record::{Chunk, ErrorKind, Outcome, RequestRecord};
use crate::result::{BenchmarkResult, Convention, Percentile, RunMeta, Summary};

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

/// Request counts by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusCounts {
    /// Completed requests.
    pub successful: u64,
    /// Requests that failed.
    pub errored: u64,
    /// Requests cancelled or cut off (guidellm status `cancelled`).
    pub incomplete: u64,
}

impl StatusCounts {
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
    pub listed: StatusCounts,
    /// Listed requests inside the measured window.
    pub in_window: StatusCounts,
    /// `metrics.request_totals` (what guidellm's metrics count), when present.
    pub reported: Option<StatusCounts>,
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

/// Read a guidellm report from a file.
pub fn from_path(path: &std::path::Path) -> Result<GuidellmReport, ImportError> {
    let bytes = read_file(path)?;
    from_slice(&bytes).map_err(|e| super::in_file(path, e))
}

/// Read a guidellm report from bytes (JSON; bare `NaN`/`Infinity` accepted).
///
/// A file of 1 MiB or more is parsed on up to 4 threads (the available parallelism): the
/// request lists in pieces, the rest of the document as a small copy in which each list is
/// a placeholder. The result is the one [`from_slice_sequential`] gives; whenever the
/// pieces or the placeholders are not exactly where they should be (or the file holds a
/// bare `NaN`), this falls back to the sequential parse and its errors.
///
/// ```
/// let bytes = std::fs::read("tests/fixtures/guidellm/constant_rate20.json").unwrap();
/// let report = servebench::import::guidellm::from_slice(&bytes).unwrap();
/// let b = &report.benchmarks[0];
/// assert_eq!(b.name, "constant@20.00");
/// assert_eq!(b.result.successful_requests, Some(60));
/// assert_eq!(b.measured_records().len(), 60);
/// ```
pub fn from_slice(bytes: &[u8]) -> Result<GuidellmReport, ImportError> {
    if bytes.len() >= parallel::MIN_BYTES {
        let threads = parallel::threads();
        if threads > 1 {
            if let Some(raw) = parallel::parse(bytes, threads) {
                return convert(raw, threads);
            }
        }
    }
    from_slice_sequential(bytes)
}

/// [`from_slice`] on one thread, whatever the size.
pub fn from_slice_sequential(bytes: &[u8]) -> Result<GuidellmReport, ImportError> {
    let raw: RawReport = match json::parse_slice(bytes, 0) {
        Ok(r) => r,
        Err(e) => {
            // A file of another schema version usually fails on a type first: say so.
            if let Ok(probe) = json::parse_slice::<Probe>(bytes, 0) {
                if let Some(v) = probe.metadata.and_then(|m| m.version) {
                    if v != 1 && v != 2 {
                        return Err(unsupported(v));
                    }
                }
            }
            return Err(e);
        }
    };
    convert(raw, 1)
}

/// [`from_slice`]'s parallel parse on `threads` threads, whatever the size: `None` when it
/// does not apply and [`from_slice`] would parse sequentially (see the module docs of
/// the parallel path in the source). For tests and benchmarks.
#[doc(hidden)]
pub fn from_slice_parallel(
    bytes: &[u8],
    threads: usize,
) -> Option<Result<GuidellmReport, ImportError>> {
    parallel::parse(bytes, threads).map(|raw| convert(raw, threads))
}

fn unsupported(v: i64) -> ImportError {
    ImportError::UnsupportedSchema {
        format: "guidellm",
        path: "$.metadata.version".into(),
        found: format!("version {v} (this crate reads 1 and 2)"),
    }
}

// ---------------------------------------------------------------------------------------
// Raw file structures (tolerant: every field optional, unknown fields ignored).

#[derive(Deserialize)]
struct Probe {
    metadata: Option<RawMetadata>,
}

/// The report; `L` is what a request list reads as (the requests themselves, or
/// [`parallel`]'s placeholder for a list parsed on its own).
#[derive(Deserialize)]
struct RawReport<L = Vec<RawRequest>> {
    metadata: Option<RawMetadata>,
    args: Option<IgnoredAny>,
    benchmarks: Option<Vec<RawBenchmark<L>>>,
}

#[derive(Deserialize)]
struct RawMetadata {
    version: Option<i64>,
    guidellm_version: Option<String>,
}

#[derive(Deserialize)]
struct RawBenchmark<L = Vec<RawRequest>> {
    config: Option<RawBenchConfig>,
    scheduler_metrics: Option<RawSchedulerMetrics>,
    metrics: Option<RawMetrics>,
    requests: Option<RawRequests<L>>,
    start_time: Option<f64>,
    end_time: Option<f64>,
    duration: Option<f64>,
    // 0.2/0.3
    args: Option<RawLegacyArgs>,
    run_stats: Option<IgnoredAny>,
    request_totals: Option<RawTotals>,
    worker: Option<RawLegacyWorker>,
    // 0.1
    benchmarks: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct RawBenchConfig {
    strategy: Option<RawStrategy>,
    backend: Option<RawBackend>,
}

#[derive(Deserialize)]
struct RawStrategy {
    type_: Option<String>,
    rate: Option<serde_json::Value>,
    streams: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawBackend {
    model: Option<String>,
}

#[derive(Deserialize)]
struct RawLegacyArgs {
    strategy: Option<RawStrategy>,
}

#[derive(Deserialize)]
struct RawLegacyWorker {
    backend_model: Option<String>,
}

#[derive(Deserialize)]
struct RawSchedulerMetrics {
    measure_start_time: Option<f64>,
    measure_end_time: Option<f64>,
}

#[derive(Deserialize, Clone, Copy)]
struct RawTotals {
    successful: Option<u64>,
    errored: Option<u64>,
    incomplete: Option<u64>,
}

#[derive(Deserialize)]
struct RawMetrics {
    request_totals: Option<RawTotals>,
    requests_per_second: Option<RawStatusDist>,
    request_concurrency: Option<RawStatusDist>,
    request_latency: Option<RawStatusDist>,
    prompt_token_count: Option<RawStatusDist>,
    output_token_count: Option<RawStatusDist>,
    time_to_first_token_ms: Option<RawStatusDist>,
    time_per_output_token_ms: Option<RawStatusDist>,
    inter_token_latency_ms: Option<RawStatusDist>,
    output_tokens_per_second: Option<RawStatusDist>,
    tokens_per_second: Option<RawStatusDist>,
}

#[derive(Deserialize)]
struct RawStatusDist {
    successful: Option<RawDist>,
}

#[derive(Deserialize)]
struct RawDist {
    mean: Option<f64>,
    median: Option<f64>,
    std_dev: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    percentiles: Option<RawPercentiles>,
}

#[derive(Deserialize)]
struct RawPercentiles {
    p001: Option<f64>,
    p01: Option<f64>,
    p05: Option<f64>,
    p10: Option<f64>,
    p25: Option<f64>,
    p50: Option<f64>,
    p75: Option<f64>,
    p90: Option<f64>,
    p95: Option<f64>,
    p99: Option<f64>,
    p999: Option<f64>,
}

#[derive(Deserialize)]
struct RawRequests<L = Vec<RawRequest>> {
    successful: Option<L>,
    errored: Option<L>,
    incomplete: Option<L>,
}

#[derive(Deserialize)]
struct RawRequest {
    info: Option<RawInfo>,
    request_start_time: Option<f64>,
    request_end_time: Option<f64>,
    prompt_tokens: Option<u64>,
    output_tokens: Option<u64>,
    // 0.2/0.3
    scheduler_info: Option<RawSchedulerInfo>,
    start_time: Option<f64>,
    end_time: Option<f64>,
    first_token_time: Option<f64>,
    last_token_time: Option<f64>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct RawInfo {
    status: Option<String>,
    timings: Option<RawTimings>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct RawTimings {
    targeted_start: Option<f64>,
    request_start: Option<f64>,
    first_token_iteration: Option<f64>,
    last_token_iteration: Option<f64>,
    token_iterations: Option<u64>,
    request_end: Option<f64>,
    resolve_start: Option<f64>,
    resolve_end: Option<f64>,
}

#[derive(Deserialize)]
struct RawSchedulerInfo {
    targeted_start_time: Option<f64>,
    request_start: Option<f64>,
    request_end: Option<f64>,
}

/// A parsed request list: one vector (the sequential parse) or its pieces in order (the
/// parallel parse, which so never concatenates them).
trait RequestList {
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

// ---------------------------------------------------------------------------------------
// Conversion.

/// Convert the parsed report, using up to `threads` threads for large benchmarks.
fn convert<L: RequestList>(
    raw: RawReport<L>,
    threads: usize,
) -> Result<GuidellmReport, ImportError> {
    let benchmarks = raw.benchmarks.ok_or_else(|| ImportError::Invalid {
        path: "$".into(),
        message: "no `benchmarks` list: not a guidellm report".into(),
    })?;
    if let Some(b) = benchmarks.first() {
        if b.benchmarks.is_some() {
            return Err(ImportError::UnsupportedSchema {
                format: "guidellm",
                path: "$.benchmarks[0].benchmarks".into(),
                found: "the guidellm 0.1 layout (no precomputed statistics)".into(),
            });
        }
    }
    let (schema, guidellm_version) = match &raw.metadata {
        Some(m) => match m.version {
            Some(1) => (Schema::V1, m.guidellm_version.clone()),
            Some(2) => (Schema::V2, m.guidellm_version.clone()),
            Some(v) => return Err(unsupported(v)),
            None => {
                return Err(ImportError::UnsupportedSchema {
                    format: "guidellm",
                    path: "$.metadata".into(),
                    found: "no `version`".into(),
                })
            }
        },
        None if raw.args.is_some() => (Schema::V04, None),
        None if benchmarks.first().is_some_and(|b| b.run_stats.is_some()) => {
            (Schema::Legacy02, None)
        }
        None => (Schema::V04, None),
    };
    if benchmarks.is_empty() {
        return Err(ImportError::Empty {
            path: "$.benchmarks".into(),
        });
    }
    let source = match &guidellm_version {
        Some(v) => format!("guidellm {v}"),
        None => "guidellm".to_string(),
    };
    let benchmarks = benchmarks
        .into_iter()
        .enumerate()
        .map(|(i, b)| convert_benchmark(i, b, &source, threads))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GuidellmReport {
        schema,
        guidellm_version,
        benchmarks,
    })
}

fn strategy_label(s: Option<&RawStrategy>) -> String {
    let Some(s) = s else {
        return "benchmark".into();
    };
    let kind = s.type_.clone().unwrap_or_else(|| "benchmark".into());
    let num = |v: &Option<serde_json::Value>| -> Option<f64> {
        match v {
            Some(serde_json::Value::Number(n)) => n.as_f64(),
            Some(serde_json::Value::Array(a)) => a.first().and_then(|x| x.as_f64()),
            _ => None,
        }
    };
    match kind.as_str() {
        "constant" | "poisson" | "async" => match num(&s.rate) {
            Some(r) => format!("{kind}@{r:.2}"),
            None => kind,
        },
        "concurrent" => match num(&s.streams) {
            Some(n) => format!("{kind}@{n}"),
            None => kind,
        },
        _ => kind,
    }
}

fn strategy_rate(s: Option<&RawStrategy>) -> Option<f64> {
    let s = s?;
    match s.type_.as_deref() {
        Some("constant" | "poisson" | "async") => {}
        _ => return None,
    }
    match &s.rate {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::Array(a)) => a.first().and_then(|x| x.as_f64()),
        _ => None,
    }
    .filter(|r| r.is_finite() && *r > 0.0)
}

fn summary(d: Option<&RawStatusDist>, scale: f64) -> Option<Summary> {
    let d = d?.successful.as_ref()?;
    let s = |v: Option<f64>| v.map(|x| x * scale);
    let mut percentiles = Vec::new();
    if let Some(p) = &d.percentiles {
        let p50 = p.p50.or(d.median);
        for (rank, v) in [
            (0.1, p.p001),
            (1.0, p.p01),
            (5.0, p.p05),
            (10.0, p.p10),
            (25.0, p.p25),
            (50.0, p50),
            (75.0, p.p75),
            (90.0, p.p90),
            (95.0, p.p95),
            (99.0, p.p99),
            (99.9, p.p999),
        ] {
            percentiles.push(Percentile {
                p: rank,
                value: s(v),
            });
        }
    }
    Some(Summary {
        mean: s(d.mean),
        median: s(d
            .median
            .or_else(|| d.percentiles.as_ref().and_then(|p| p.p50))),
        std: s(d.std_dev),
        min: s(d.min),
        max: s(d.max),
        percentiles,
    })
}

fn dist(d: Option<&RawStatusDist>) -> Option<&RawDist> {
    d?.successful.as_ref()
}

fn finite_non_negative(v: Option<f64>, path: &str, what: &str) -> Result<Option<f64>, ImportError> {
    match v {
        Some(x) if !x.is_finite() => {
            Err(ImportError::invalid(path, format!("{what} is not finite")))
        }
        Some(x) if x < 0.0 => Err(ImportError::invalid(
            path,
            format!("{what} is negative ({x})"),
        )),
        other => Ok(other),
    }
}

struct Listed<'a> {
    status: Status,
    index: usize,
    raw: &'a RawRequest,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Successful,
    Errored,
    Incomplete,
}

impl Status {
    fn key(self) -> &'static str {
        match self {
            Status::Successful => "successful",
            Status::Errored => "errored",
            Status::Incomplete => "incomplete",
        }
    }
}

/// The times of one request in epoch seconds, resolved across schema versions.
struct Times {
    scheduled: Option<f64>,
    start: Option<f64>,
    first: Option<f64>,
    last: Option<f64>,
    end: Option<f64>,
    /// `request_end_time` in guidellm's sense (request end, else resolve end).
    end_for_window: Option<f64>,
    iterations: Option<u64>,
}

fn times(r: &RawRequest) -> Times {
    if let Some(t) = r.info.as_ref().and_then(|i| i.timings.as_ref()) {
        let start = t.request_start.or(r.request_start_time).or(t.resolve_start);
        let end_for_window = r.request_end_time.or(t.request_end).or(t.resolve_end);
        Times {
            scheduled: t.targeted_start,
            start,
            first: t.first_token_iteration,
            last: t.last_token_iteration,
            end: t.request_end.or(end_for_window),
            end_for_window,
            iterations: t.token_iterations,
        }
    } else {
        // 0.2/0.3 layout.
        let si = r.scheduler_info.as_ref();
        let start = r
            .start_time
            .or(si.and_then(|s| s.request_start))
            .filter(|v| *v >= 0.0);
        let end = r
            .end_time
            .or(si.and_then(|s| s.request_end))
            .filter(|v| *v >= 0.0);
        Times {
            scheduled: si.and_then(|s| s.targeted_start_time).filter(|v| *v >= 0.0),
            start,
            first: r.first_token_time,
            last: r.last_token_time.or(end),
            end,
            end_for_window: end,
            iterations: None,
        }
    }
}

fn classify_error(message: &str) -> ErrorKind {
    let m = message.to_ascii_lowercase();
    if m.starts_with("httpstatuserror") || m.contains("status code") {
        ErrorKind::HttpStatus
    } else if m.contains("remoteprotocolerror")
        || m.contains("incomplete chunked")
        || m.contains("peer closed")
    {
        ErrorKind::StreamCut
    } else if m.contains("streaming response returned an error") {
        ErrorKind::ServerError
    } else if m.contains("timeout") {
        ErrorKind::Timeout
    } else if m.contains("connecterror") || m.contains("connection refused") {
        ErrorKind::Connect
    } else {
        ErrorKind::Other
    }
}

/// Benchmarks with at least this many listed requests convert on several threads (when
/// the caller offers them).
const PARALLEL_RECORDS: usize = 2048;

fn convert_benchmark<L: RequestList>(
    i: usize,
    b: RawBenchmark<L>,
    source: &str,
    threads: usize,
) -> Result<GuidellmBenchmark, ImportError> {
    let bp = format!("$.benchmarks[{i}]");
    let strategy = b
        .config
        .as_ref()
        .and_then(|c| c.strategy.as_ref())
        .or_else(|| b.args.as_ref().and_then(|a| a.strategy.as_ref()));
    let name = strategy_label(strategy);

    // Window.
    let sm = b.scheduler_metrics.as_ref();
    let w_start = b.start_time.or(sm.and_then(|s| s.measure_start_time));
    let w_end = b.end_time.or(sm.and_then(|s| s.measure_end_time));
    let w_start = finite_non_negative(w_start, &format!("{bp}.start_time"), "the window start")?;
    let w_end = finite_non_negative(w_end, &format!("{bp}.end_time"), "the window end")?;
    if let (Some(s), Some(e)) = (w_start, w_end) {
        if e < s {
            return Err(ImportError::invalid(
                format!("{bp}.end_time"),
                format!("the measured window ends {:.6} s before it starts", s - e),
            ));
        }
    }
    let duration_s = match b.duration {
        Some(d) => Some(d),
        None => match (w_start, w_end) {
            (Some(s), Some(e)) => Some(e - s),
            _ => None,
        },
    };
    let duration_s = finite_non_negative(
        duration_s,
        &format!("{bp}.duration"),
        "the benchmark duration",
    )?
    .ok_or_else(|| ImportError::invalid(format!("{bp}.duration"), "missing or not finite"))?;

    // Requests.
    let mut listed: Vec<Listed> = Vec::new();
    if let Some(reqs) = &b.requests {
        for (status, list) in [
            (Status::Successful, &reqs.successful),
            (Status::Errored, &reqs.errored),
            (Status::Incomplete, &reqs.incomplete),
        ] {
            for (index, raw) in list.iter().flat_map(L::requests).enumerate() {
                listed.push(Listed { status, index, raw });
            }
        }
    }

    let reported = b
        .metrics
        .as_ref()
        .and_then(|m| m.request_totals)
        .or(b.request_totals)
        .map(|t| StatusCounts {
            successful: t.successful.unwrap_or(0),
            errored: t.errored.unwrap_or(0),
            incomplete: t.incomplete.unwrap_or(0),
        });
    if reported.is_none_or(|r| r.total() == 0) && listed.is_empty() {
        return Err(ImportError::Empty { path: bp });
    }

    // Origin: the earliest timestamp we convert.
    let all_times: Vec<Times> = listed.iter().map(|l| times(l.raw)).collect();
    let mut origin = f64::INFINITY;
    for t in &all_times {
        for v in [
            t.scheduled,
            t.start,
            t.first,
            t.last,
            t.end,
            t.end_for_window,
        ]
        .into_iter()
        .flatten()
        {
            if v.is_finite() && v < origin {
                origin = v;
            }
        }
    }
    for v in [w_start, w_end].into_iter().flatten() {
        if v < origin {
            origin = v;
        }
    }
    if !origin.is_finite() {
        origin = 0.0;
    }
    // Paths are only formatted on the error path: this runs once per chunk.
    let at = |v: f64, path: &dyn Fn() -> String| -> Result<Duration, ImportError> {
        Duration::try_from_secs_f64(v - origin).map_err(|_| {
            ImportError::invalid(
                path(),
                format!("timestamp {v} is not a finite time after {origin}"),
            )
        })
    };

    // One record; `n` is its index in `listed`.
    let one = |n: usize, l: &Listed<'_>, t: &Times| -> Result<(RequestRecord, bool), ImportError> {
        let tp = |field: &str| {
            format!(
                "{bp}.requests.{}[{}].info.timings.{field}",
                l.status.key(),
                l.index
            )
        };
        let start = t
            .start
            .ok_or_else(|| ImportError::invalid(tp("request_start"), "missing or not finite"))?;
        let sent_at = at(start, &|| tp("request_start"))?;
        let ended_at = match t.end {
            Some(e) => {
                if e < start {
                    return Err(ImportError::invalid(
                        tp("request_end"),
                        format!("the request ends {:.6} s before it starts", start - e),
                    ));
                }
                Some(at(e, &|| tp("request_end"))?)
            }
            None => None,
        };
        let output_tokens = l.raw.output_tokens;
        let chunks = reconstruct_chunks(t, output_tokens, &at, &tp)?;
        let message = l
            .raw
            .info
            .as_ref()
            .and_then(|i| i.error.clone())
            .or_else(|| l.raw.error.clone());
        let outcome = match l.status {
            Status::Successful => Outcome::Success,
            Status::Errored => {
                let message = message.unwrap_or_else(|| "errored".into());
                Outcome::Error {
                    kind: classify_error(&message),
                    message,
                }
            }
            Status::Incomplete => Outcome::Incomplete {
                reason: message
                    .or_else(|| l.raw.info.as_ref().and_then(|i| i.status.clone()))
                    .unwrap_or_else(|| "cancelled".into()),
            },
        };
        let record = RequestRecord {
            id: n as u64,
            scheduled_at: match t.scheduled {
                Some(s) => Some(at(s, &|| tp("targeted_start"))?),
                None => None,
            },
            sent_at,
            ended_at,
            chunks,
            prompt_tokens: l.raw.prompt_tokens,
            usage_prompt_tokens: None,
            usage_output_tokens: output_tokens,
            outcome,
            turn: None,
        };
        // guidellm's get_within_range.
        let inside = match (w_start, w_end, t.end_for_window) {
            (Some(ws), Some(we), Some(end)) => end >= ws && start <= we,
            _ => true,
        };
        Ok((record, inside))
    };
    let convert_range = |from: usize, to: usize| {
        listed[from..to]
            .iter()
            .zip(&all_times[from..to])
            .enumerate()
            .map(|(k, (l, t))| one(from + k, l, t))
            .collect::<Result<Vec<_>, ImportError>>()
    };
    // Requests convert independently: a large benchmark on `threads` threads, in
    // consecutive parts whose errors are taken in order (the first is the sequential one).
    let parts = if threads > 1 && listed.len() >= PARALLEL_RECORDS {
        let bounds: Vec<usize> = (0..=threads).map(|k| listed.len() * k / threads).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = bounds[1..]
                .windows(2)
                .map(|w| s.spawn(|| convert_range(w[0], w[1])))
                .collect();
            let mut parts = vec![convert_range(0, bounds[1])];
            for h in handles {
                parts.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            parts
        })
    } else {
        vec![convert_range(0, listed.len())]
    };
    let mut records = Vec::with_capacity(listed.len());
    let mut in_window = Vec::with_capacity(listed.len());
    let mut counts = Counts {
        reported,
        ..Counts::default()
    };
    let mut statuses = listed.iter().map(|l| l.status);
    for part in parts {
        for ((record, inside), status) in part?.into_iter().zip(&mut statuses) {
            let bump = |c: &mut StatusCounts| match status {
                Status::Successful => c.successful += 1,
                Status::Errored => c.errored += 1,
                Status::Incomplete => c.incomplete += 1,
            };
            bump(&mut counts.listed);
            if inside {
                bump(&mut counts.in_window);
            }
            records.push(record);
            in_window.push(inside);
        }
    }

    // Aggregates, GPUStack's mapping.
    let m = b.metrics.as_ref();
    let successful = reported
        .map(|r| r.successful)
        .unwrap_or(counts.in_window.successful);
    let failed = reported
        .map(|r| r.errored.saturating_add(r.incomplete))
        .unwrap_or(counts.in_window.errored + counts.in_window.incomplete);
    let mean_times = |d: Option<&RawStatusDist>| -> Option<u64> {
        dist(d)
            .and_then(|d| d.mean)
            .and_then(|mean| round_count(mean * successful as f64))
    };
    let concurrency_max = dist(m.and_then(|m| m.request_concurrency.as_ref())).and_then(|d| d.max);
    let model = b
        .config
        .as_ref()
        .and_then(|c| c.backend.as_ref())
        .and_then(|bk| bk.model.clone())
        .or_else(|| b.worker.as_ref().and_then(|w| w.backend_model.clone()))
        .filter(|s| !s.is_empty());
    let result = BenchmarkResult {
        meta: RunMeta {
            label: Some(name.clone()),
            date: w_start.and_then(epoch_to_date),
            model,
            convention: Some(Convention::Guidellm),
            source: Some(source.to_string()),
            ..RunMeta::default()
        },
        successful_requests: Some(successful),
        failed_requests: Some(failed),
        max_concurrency: concurrency_max.and_then(round_count),
        request_rate_configured: strategy_rate(strategy),
        duration_ms: Some(duration_s * 1000.0),
        total_input_tokens: mean_times(m.and_then(|m| m.prompt_token_count.as_ref())),
        total_output_tokens: mean_times(m.and_then(|m| m.output_token_count.as_ref())),
        request_throughput_per_s: dist(m.and_then(|m| m.requests_per_second.as_ref()))
            .and_then(|d| d.mean),
        output_throughput_per_s: dist(m.and_then(|m| m.output_tokens_per_second.as_ref()))
            .and_then(|d| d.mean),
        peak_output_throughput_per_s: dist(m.and_then(|m| m.output_tokens_per_second.as_ref()))
            .and_then(|d| d.max),
        peak_concurrent_requests: concurrency_max,
        total_token_throughput_per_s: dist(m.and_then(|m| m.tokens_per_second.as_ref()))
            .and_then(|d| d.mean),
        e2el: summary(m.and_then(|m| m.request_latency.as_ref()), 1000.0),
        ttft: summary(m.and_then(|m| m.time_to_first_token_ms.as_ref()), 1.0),
        tpot: summary(m.and_then(|m| m.time_per_output_token_ms.as_ref()), 1.0),
        itl: summary(m.and_then(|m| m.inter_token_latency_ms.as_ref()), 1.0),
        ..BenchmarkResult::default()
    };

    let window_start = match w_start {
        Some(s) => at(s, &|| format!("{bp}.start_time"))?,
        None => Duration::ZERO,
    };
    let window_end = match w_end {
        Some(e) => at(e, &|| format!("{bp}.end_time"))?,
        None => Duration::try_from_secs_f64(duration_s)
            .ok()
            .and_then(|d| window_start.checked_add(d))
            .ok_or_else(|| {
                ImportError::invalid(
                    format!("{bp}.duration"),
                    format!("the window ends past the clock's range ({duration_s} s)"),
                )
            })?,
    };
    Ok(GuidellmBenchmark {
        name,
        result,
        records,
        in_window,
        window_start,
        window_end,
        origin_unix_s: origin,
        counts,
    })
}

fn epoch_to_date(t: f64) -> Option<DateTime<FixedOffset>> {
    if !t.is_finite() {
        return None;
    }
    let secs = t.floor();
    let nanos = ((t - secs) * 1e9) as u32;
    Utc.timestamp_opt(secs as i64, nanos.min(999_999_999))
        .single()
        .map(|d| d.fixed_offset())
}

/// Converts an epoch timestamp to an offset; the path closure names the field on error.
type ToOffset<'a> = dyn Fn(f64, &dyn Fn() -> String) -> Result<Duration, ImportError> + 'a;

/// Most token iterations one request may have (a million-token stream is beyond any model;
/// a larger count is corrupt input, and would make the importer allocate without bound).
pub const MAX_ITERATIONS: u64 = 1_000_000;

/// guidellm's token timeline as chunks (see the module docs).
fn reconstruct_chunks(
    t: &Times,
    output_tokens: Option<u64>,
    at: &ToOffset<'_>,
    tp: &dyn Fn(&str) -> String,
) -> Result<Vec<Chunk>, ImportError> {
    let iterations = t.iterations.unwrap_or(0);
    let n = match output_tokens {
        Some(n) => n,
        None => iterations,
    };
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match (t.first, t.last) {
        (Some(first), Some(last))
            if n >= 1 && (iterations >= 2 || (t.iterations.is_none() && n >= 2)) =>
        {
            if last < first {
                return Err(ImportError::invalid(
                    tp("last_token_iteration"),
                    "the last token arrives before the first",
                ));
            }
            // 0.2/0.3 files have no iteration count: one token per iteration.
            let iters = if iterations >= 2 { iterations } else { n };
            if iters > MAX_ITERATIONS {
                return Err(ImportError::invalid(
                    tp("token_iterations"),
                    format!("{iters} token iterations in one request (more than {MAX_ITERATIONS})"),
                ));
            }
            let mut chunks = Vec::with_capacity(usize::try_from(iters).unwrap_or(0));
            chunks.push(Chunk {
                at: at(first, &|| tp("first_token_iteration"))?,
                tokens: 1,
            });
            let gaps = iters - 1;
            let rest = n - 1;
            let step = (last - first) / gaps as f64;
            let mut given = 0u64;
            for k in 1..=gaps {
                let time = if k == gaps {
                    last
                } else {
                    first + k as f64 * step
                };
                // Integer share whose running sum is floor(k * rest / gaps).
                let upto = (u128::from(k) * u128::from(rest) / u128::from(gaps)) as u64;
                let tokens = upto - given;
                given = upto;
                chunks.push(Chunk {
                    at: at(time, &|| tp("last_token_iteration"))?,
                    tokens: clamp(tokens),
                });
            }
            Ok(chunks)
        }
        _ => {
            if n == 0 {
                return Ok(Vec::new());
            }
            let time = t.last.or(t.end_for_window);
            match time {
                Some(time) => Ok(vec![Chunk {
                    at: at(time, &|| tp("last_token_iteration"))?,
                    tokens: clamp(n),
                }]),
                None => Ok(Vec::new()),
            }
        }
    }
}
