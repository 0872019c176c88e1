//! From raw per-request records to a [`BenchmarkResult`]: every metric computed exactly as a
//! reference tool computes it, with the [`Convention`] recorded in `meta.convention`, plus
//! servebench's own exact figures ([`ExactFigures`]) beside them.
//!
//! # `Convention::Vllm` (vLLM 0.34 `calculate_metrics`)
//!
//! * Only successful requests count; a request is successful when its outcome is
//!   [`Outcome::Success`](crate::record::Outcome::Success) **and** it received at least one
//!   chunk (vLLM marks a stream without a token chunk as failed). Every other request is in
//!   `failed_requests`.
//! * `output_len` = the server's `usage` count if non-zero, else the client's chunk-token
//!   count ([`RequestRecord::output_tokens`]).
//! * TTFT = first chunk − send; E2EL = last chunk − send; TPOT = (E2EL − TTFT)/(output_len − 1)
//!   only for output_len > 1; ITL = every gap between consecutive chunks, all requests
//!   flattened (one gap per chunk, never divided by its token count).
//! * Statistics are numpy's (`np.mean`, population `np.std`, `np.median`, `np.percentile`
//!   'linear'), computed in seconds and multiplied by 1000, like vLLM; an empty list gives 0.
//!   One deliberate difference: the ITL mean and standard deviation come from the exact
//!   integer moments of the nanosecond gaps (the mean correctly rounded, the standard
//!   deviation within one ulp), not from numpy's float summation of rounded seconds. On
//!   10^8 gaps the two differ in the last bits (2e-16 relative on the benchmark run); the
//!   exact figure is the one that does not depend on summation order, so a run split over
//!   threads or hosts reproduces it.
//! * Total input = Σ [`RequestRecord::input_tokens`] over successes (server usage if
//!   reported, else the client's count — 0.34 behaviour; a missing count adds 0).
//! * Peak output throughput: 1-second buckets from the earliest success's send time,
//!   `ceil(span)+1` of them; every **chunk** adds 1 to bucket `floor(t − start)` (vLLM counts
//!   chunks, not tokens). Peak concurrency: each success adds 1 to every bucket from
//!   `floor(send − start)` to `floor(last chunk − start)` **inclusive** (0.34.0's rule, which
//!   can exceed the true instantaneous peak).
//! * Goodput (when [`MetricsOptions::goodput`] is set): a success is good iff every given SLO
//!   satisfies `slo_ms/1000 ≥ value_s` (inclusive); TPOT counts as 0 when output_len ≤ 1.
//! * Bucket indices are computed from integer nanoseconds; vLLM adds float seconds, which can
//!   move a timestamp lying exactly on a bucket edge by one bucket.
//!
//! # `Convention::Guidellm` (guidellm 0.8.1, the numbers in GPUStack's reports)
//!
//! TPOT includes the TTFT (`(last − start)/N`), "ITL" is the per-request decode mean
//! (`(last − first)/(N − 1)`), both token-weighted; latency = end − start; rates and
//! concurrency are guidellm's event-merging, duration-weighted distributions; percentiles
//! follow guidellm's inverse-CDF rule. [`guidellm_metrics`] returns every distribution per
//! status group; [`compute`] maps the successful group onto the GPUStack block's rows
//! (request/output/total-token throughput = the rate distributions' means, peak output
//! throughput = `output_tokens_per_second.max`, maximum and peak concurrency =
//! `request_concurrency.max`, totals = mean × successful). Details in [`guidellm_metrics`].
//! Verified figure by figure against guidellm's own aggregates in the test fixtures.
//!
//! # Exact figures ([`ExactFigures`])
//!
//! * `peak_output_tokens_per_s`: the most output tokens (chunk token counts of successful
//!   requests) arriving in any half-open window `[t, t + 1 s)`.
//! * `peak_in_flight`: the most requests in flight at one instant, sweep line over
//!   half-open `[send, end)` intervals of **all** requests (a failed request occupies the
//!   server too), departures before arrivals at equal times. A request's end is `ended_at`,
//!   else its last chunk, else its send time.
//!
//! ```
//! use std::time::Duration;
//! use servebench::metrics::{compute, MetricsOptions};
//! use servebench::record::{Chunk, RequestRecord};
//! use servebench::result::Convention;
//!
//! let ms = Duration::from_millis;
//! let mut r = RequestRecord::new(0, ms(0));
//! r.chunks = vec![Chunk { at: ms(100), tokens: 1 }, Chunk { at: ms(150), tokens: 1 }];
//! r.ended_at = Some(ms(150));
//! let res = compute(&[r], Convention::Vllm);
//! assert_eq!(res.successful_requests, Some(1));
//! let ttft = res.ttft.unwrap();
//! assert!((ttft.mean.unwrap() - 100.0).abs() < 1e-9);
//! assert!((res.tpot.unwrap().mean.unwrap() - 50.0).abs() < 1e-9);
//! ```
//!
//! # Where each part lives
//!
//! `request`: the per-request quantities ([`vllm_tpot`], [`vllm_itl_gaps`], …), one function per formula; `vllm`: vLLM's
//! reference computation and bucket peaks, with `fast`, its one-pass equivalent;
//! `guidellm`: guidellm's distributions ([`guidellm_metrics`]); `peaks`: the exact figures; `slo`: goodput;
//! `live`: bounded-memory histograms ([`VllmHistograms`], [`from_histograms`]).
//!
//! [`ExactFigures`]: crate::result::ExactFigures

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention};
use crate::stats::nanos_u64;

mod cost;
mod fast;
pub(crate) mod guidellm;
mod live;
mod peaks;
pub mod prefix;
pub(crate) mod production;
pub(crate) mod request;
mod slo;
mod summary;
mod vllm;
mod whole;

pub use cost::cost_figures;
pub use guidellm::{guidellm_metrics, GuidellmMetrics, StatusCounts, StatusDistributions};
pub use live::{from_histograms, summary_ms as streaming_summary_ms, VllmHistograms};
pub use peaks::exact_figures;
pub(crate) use peaks::{aligned_peak_and_candidates, cell_index, CandidateGroups};
pub use production::{
    adapter_figures, check_figures, image_figures, measured_window_s, reasoning_figures,
    session_figures, tokens_per_chunk,
};
pub use request::{vllm_itl_gaps, vllm_success, vllm_tpot, vllm_tpot_s};
pub(crate) use slo::{checks_pass, meets_slo};
pub use slo::{Slo, SloParseError};
use vllm::compute_vllm;
pub use vllm::vllm_peaks_streamed;
#[cfg(test)]
pub(crate) use vllm::{compute_vllm_reference, vllm_figures_reference};
pub(crate) use vllm::{default_duration_from, VllmFigures};
pub use whole::answered_whole;

/// How to compute metrics from records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsOptions {
    /// Which tool's definitions to follow.
    pub convention: Convention,
    /// Percentiles to report, in percent, in report order (vLLM's default is `[99]`).
    pub percentiles: Vec<f64>,
    /// Benchmark duration (`Convention::Vllm`); default: from the first send to the last
    /// end over all records. `Convention::Guidellm` reports its window's length instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// `Convention::Vllm`: the duration in seconds exactly as a tool saved it (vLLM's and
    /// SGLang's `duration` float), so that rates divide by the very same number the tool
    /// divided by; it overrides [`MetricsOptions::duration`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Goodput SLOs (vLLM `--goodput`; guidellm's `slo`, whose TPOT objective is compared
    /// with its ITL); `None`: no goodput figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Slo>,
    /// `Convention::Guidellm` only: the measurement window `(start, end)`; default from the
    /// first send to the last end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(Duration, Duration)>,
    /// `Convention::Guidellm` only: epoch seconds of offset zero, so that computations run
    /// on the same float timestamps guidellm used (bit-exact reproduction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_origin_s: Option<f64>,
}

impl MetricsOptions {
    /// Defaults for a convention: the percentiles its report prints (vLLM `[99]`,
    /// GPUStack/guidellm `[95, 99]`), duration and window from the records, no goodput.
    pub fn new(convention: Convention) -> Self {
        MetricsOptions {
            convention,
            percentiles: match convention {
                Convention::Vllm => vec![99.0],
                Convention::Guidellm => vec![95.0, 99.0],
            },
            duration: None,
            duration_s: None,
            goodput: None,
            window: None,
            time_origin_s: None,
        }
    }

    /// What the load driver's callers report by default: vLLM's convention with P50, P95
    /// and P99.
    pub fn load_run() -> Self {
        MetricsOptions {
            percentiles: vec![50.0, 95.0, 99.0],
            ..MetricsOptions::new(Convention::Vllm)
        }
    }
}

impl From<Convention> for MetricsOptions {
    fn from(c: Convention) -> Self {
        MetricsOptions::new(c)
    }
}

impl From<&MetricsOptions> for MetricsOptions {
    fn from(o: &MetricsOptions) -> Self {
        o.clone()
    }
}

/// The figures of a load run (what `bench` and the simulator report): `opts`' convention,
/// percentiles and goodput, `profile` in `meta`, and for vLLM's convention the client cap
/// as "Maximum request concurrency" (as `vllm bench serve` prints it). Computed once, from
/// the records the driver returned.
///
/// ```
/// use servebench::metrics::{summarize, MetricsOptions};
/// let r = summarize(&[], None, &MetricsOptions::load_run(), Some(8));
/// assert_eq!(r.max_concurrency, Some(8));
/// ```
pub fn summarize(
    records: &[RequestRecord],
    profile: Option<&crate::profile::Profile>,
    opts: &MetricsOptions,
    max_concurrency: Option<usize>,
) -> BenchmarkResult {
    let mut result = compute(records, opts.clone());
    result.meta.profile = profile.cloned();
    result.meta.convention = Some(opts.convention);
    if opts.convention == Convention::Vllm {
        result.max_concurrency = max_concurrency.map(|c| c as u64);
    }
    result
}

/// Compute a [`BenchmarkResult`] from raw records. `opts` is a [`MetricsOptions`] (or a
/// reference to one) or just a [`Convention`] for the defaults.
pub fn compute<O: Into<MetricsOptions>>(records: &[RequestRecord], opts: O) -> BenchmarkResult {
    let opts = opts.into();
    if whole::answered_whole(records) {
        // Answers that do not stream have one timing, in either convention.
        let dur_s = opts
            .duration_s
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or_else(|| default_duration(records).as_secs_f64());
        return whole::compute_whole(
            records,
            dur_s,
            &opts.percentiles,
            opts.goodput.filter(Slo::judges_requests),
        );
    }
    let mut result = match opts.convention {
        Convention::Vllm => compute_vllm(records, &opts),
        Convention::Guidellm => guidellm::compute_guidellm(records, &opts),
    };
    with_production_figures(&mut result, records, &opts);
    result
}

/// Adds the production figures ([`reasoning_figures`], [`tokens_per_chunk`], …) a run's records carry: reasoning-aware latency when a
/// stream carried reasoning, tokens per chunk when chunks carried more than one token,
/// results per LoRA adapter when requests named adapters. A run without any of these is
/// left as it was.
pub fn with_production_figures(
    result: &mut BenchmarkResult,
    records: &[RequestRecord],
    opts: &MetricsOptions,
) {
    result.reasoning = production::reasoning_figures(records, &opts.percentiles);
    if let Some(t) = production::tokens_per_chunk(records).filter(|&t| t != 1.0) {
        result
            .spec_decode
            .get_or_insert_with(Default::default)
            .tokens_per_chunk = Some(t);
    }
    let duration = result
        .duration_ms
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .unwrap_or_else(|| default_duration(records));
    result.adapters = production::adapter_figures(records, duration, &opts.percentiles);
    result.images = production::image_figures(records);
    result.checks = production::check_figures(records, &opts.percentiles);
    result.sessions = production::session_figures(
        records,
        duration,
        &opts.percentiles,
        opts.goodput.and_then(|s| s.session_ms),
    );
}

/// When a record ends: `ended_at`, else its last chunk, else its send time.
pub(crate) fn record_end(r: &RequestRecord) -> Duration {
    r.ended_at
        .or_else(|| r.chunks.last().map(|c| c.at))
        .unwrap_or(r.sent_at)
}

/// Default benchmark duration: first send to last end over all records (zero if none).
pub fn default_duration(records: &[RequestRecord]) -> Duration {
    let start = records.iter().map(|r| r.sent_at).min();
    let end = records.iter().map(record_end).max();
    match (start, end) {
        (Some(s), Some(e)) => e.saturating_sub(s),
        _ => Duration::ZERO,
    }
}

const NANOS_PER_S: u64 = 1_000_000_000;
