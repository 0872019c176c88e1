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
//! * `records`: one [`RequestRecord`](crate::record::RequestRecord) per listed request (successful, errored and
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
//!
//! [`Convention::Guidellm`]: crate::result::Convention::Guidellm
//! [`Chunk`]: crate::record::Chunk

use super::{json, read_file, ImportError};

mod convert;
pub(crate) mod csv;
mod parallel;
mod raw;
mod report;
mod request;
mod scan;
pub(crate) mod yaml;

use convert::convert;
pub use csv::{from_slice as from_csv_slice, CsvRun};
use raw::{Probe, RawReport};
use report::unsupported;
pub use report::{Counts, GuidellmBenchmark, GuidellmReport, RequestCounts, Schema};
pub use request::MAX_ITERATIONS;
pub use yaml::from_slice as from_yaml_slice;

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
