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
//! `request_concurrency.max`, totals = mean × successful). Details in [`guidellm`].
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

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention, ExactFigures, Percentile, Summary};
use crate::stats::{numpy_summary, Moments, NumpySummary};

mod fast;
pub mod guidellm;
pub use guidellm::{guidellm_metrics, GuidellmMetrics, StatusCounts, StatusDistributions};

/// Goodput service-level objectives, in ms; a request is "good" when it meets every one
/// that is set (inclusive bounds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// Maximum time to first token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// Maximum time per output token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// Maximum end-to-end latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el_ms: Option<f64>,
}

/// A goodput SLO string could not be read (see [`Slo`]'s `FromStr`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SloParseError {
    /// No `KEY:VALUE` pair at all.
    #[error("no SLO given (expected e.g. `ttft:500 tpot:50 e2el:2000`)")]
    Empty,
    /// An item without a `:`.
    #[error("`{0}` is not KEY:VALUE (e.g. `ttft:500`)")]
    NotAPair(String),
    /// A key other than `ttft`, `tpot`, `e2el`.
    #[error("unknown SLO `{0}` (valid: ttft, tpot, e2el)")]
    UnknownKey(String),
    /// A value that is not a finite, non-negative number of milliseconds.
    #[error("SLO `{key}`: `{value}` is not a non-negative number of milliseconds")]
    BadValue {
        /// The key.
        key: String,
        /// The value as typed.
        value: String,
    },
    /// The same key twice.
    #[error("SLO `{0}` given twice")]
    Duplicate(String),
}

impl std::str::FromStr for Slo {
    type Err = SloParseError;

    /// vLLM's `--goodput` syntax: `KEY:VALUE` items in milliseconds, separated by spaces
    /// (or commas), keys `ttft`, `tpot`, `e2el`.
    ///
    /// ```
    /// use servebench::metrics::Slo;
    /// let slo: Slo = "ttft:500 tpot:50 e2el:2000".parse().unwrap();
    /// assert_eq!((slo.ttft_ms, slo.tpot_ms, slo.e2el_ms), (Some(500.0), Some(50.0), Some(2000.0)));
    /// assert!("ttft=500".parse::<Slo>().is_err());
    /// assert!("itl:5".parse::<Slo>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Slo, SloParseError> {
        let mut slo = Slo::default();
        let mut any = false;
        for item in s.split(|c: char| c.is_whitespace() || c == ',') {
            if item.is_empty() {
                continue;
            }
            let (key, value) = item
                .split_once(':')
                .ok_or_else(|| SloParseError::NotAPair(item.to_string()))?;
            let slot = match key {
                "ttft" => &mut slo.ttft_ms,
                "tpot" => &mut slo.tpot_ms,
                "e2el" => &mut slo.e2el_ms,
                other => return Err(SloParseError::UnknownKey(other.to_string())),
            };
            let v: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| SloParseError::BadValue {
                    key: key.to_string(),
                    value: value.to_string(),
                })?;
            if slot.replace(v).is_some() {
                return Err(SloParseError::Duplicate(key.to_string()));
            }
            any = true;
        }
        if any {
            Ok(slo)
        } else {
            Err(SloParseError::Empty)
        }
    }
}

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
            goodput: None,
            window: None,
            time_origin_s: None,
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

/// Compute a [`BenchmarkResult`] from raw records. `opts` is a [`MetricsOptions`] (or a
/// reference to one) or just a [`Convention`] for the defaults.
pub fn compute<O: Into<MetricsOptions>>(records: &[RequestRecord], opts: O) -> BenchmarkResult {
    let opts = opts.into();
    match opts.convention {
        Convention::Vllm => compute_vllm(records, &opts),
        Convention::Guidellm => guidellm::compute_guidellm(records, &opts),
    }
}

/// A result from a collector's streaming histograms (bounded-memory mode, see
/// [`crate::collector::LatencyHistograms`]): vLLM's definitions, but every latency figure is
/// within the histograms' resolution (3 significant digits, see [`crate::stats::Streaming`])
/// and percentiles use the nearest-rank rule instead of numpy's interpolation; the median
/// is the nearest-rank p50. Counts and token totals are exact. `duration` is the benchmark
/// duration; rates are `None` when it is zero. Failed counts and peaks are not known to
/// histograms and are left `None`.
///
/// ```
/// use std::time::Duration;
/// use servebench::collector::{Collector, CollectorOptions, ManualClock};
/// use servebench::engine::Usage;
/// use servebench::metrics::from_histograms;
///
/// let c = Collector::with_options(ManualClock::new(), CollectorOptions { keep_records: false, histograms: true });
/// let mut h = c.begin_at(Duration::ZERO);
/// h.chunk_at(Duration::from_millis(100), 1);
/// h.chunk_at(Duration::from_millis(120), 1);
/// h.finish_at(Duration::from_millis(120), Usage::default());
/// let res = from_histograms(&c.histograms().unwrap().unwrap(), Duration::from_secs(1), &[99.0]);
/// assert_eq!(res.successful_requests, Some(1));
/// let ttft = res.ttft.unwrap().mean.unwrap();
/// assert!((ttft - 100.0).abs() <= 100.0 / 1024.0);
/// ```
pub fn from_histograms(
    h: &crate::collector::LatencyHistograms,
    duration: Duration,
    percentiles: &[f64],
) -> BenchmarkResult {
    let dur_s = duration.as_secs_f64();
    let per_s = |x: f64| (dur_s > 0.0).then(|| x / dur_s);
    let mut res = BenchmarkResult {
        successful_requests: Some(h.requests),
        duration_ms: Some(dur_s * 1000.0),
        total_output_tokens: Some(h.output_tokens),
        request_throughput_per_s: per_s(h.requests as f64),
        output_throughput_per_s: per_s(h.output_tokens as f64),
        ttft: Some(h.ttft.summary_ms(percentiles)),
        tpot: Some(h.tpot.summary_ms(percentiles)),
        itl: Some(h.itl.summary_ms(percentiles)),
        e2el: Some(h.e2el.summary_ms(percentiles)),
        ..BenchmarkResult::default()
    };
    res.meta.convention = Some(Convention::Vllm);
    res
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

/// A success in vLLM's sense: outcome success and at least one chunk.
fn vllm_success(r: &RequestRecord) -> bool {
    r.outcome.is_success() && !r.chunks.is_empty()
}

/// Convert a numpy summary in seconds (or `None` = empty → vLLM's zeros) to a [`Summary`]
/// in ms, with the requested percentiles.
fn vllm_summary_ms(s: Option<NumpySummary>, percentiles: &[f64]) -> Summary {
    let ms = |x: f64| x * 1000.0;
    match s {
        Some(s) => Summary {
            mean: Some(ms(s.mean)),
            median: Some(ms(s.median)),
            std: Some(ms(s.std)),
            min: Some(ms(s.min)),
            max: Some(ms(s.max)),
            percentiles: s
                .percentiles
                .iter()
                .map(|&(p, v)| Percentile {
                    p,
                    value: if v.is_nan() { None } else { Some(ms(v)) },
                })
                .collect(),
        },
        None => Summary {
            mean: Some(0.0),
            median: Some(0.0),
            std: Some(0.0),
            min: Some(0.0),
            max: Some(0.0),
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    value: if (0.0..=100.0).contains(&p) {
                        Some(0.0)
                    } else {
                        None
                    },
                })
                .collect(),
        },
    }
}

const NANOS_PER_S: u64 = 1_000_000_000;

/// vLLM's 1-second buckets, filled request by request (so the chunks are read while they are
/// in cache for the other per-request figures).
///
/// The buckets are dense arrays as long as the run's span in seconds, unless that span is
/// far larger than the number of events (a corrupt far-future timestamp): then only the
/// events are kept and sorted, with the same results.
struct VllmPeaks {
    min_ns: u64,
    /// Number of 1-second buckets from the first send to the last chunk.
    n: u64,
    /// Dense per-bucket chunk counts (empty in sparse mode).
    tokens: Vec<u64>,
    /// Difference array for the inclusive concurrency ranges (empty in sparse mode).
    conc: Vec<i64>,
    /// Sparse mode: the events themselves.
    sparse: Option<SparsePeaks>,
}

/// [`VllmPeaks`] for spans far longer than the run has events.
#[derive(Default)]
struct SparsePeaks {
    /// The bucket of every chunk.
    tokens: Vec<u64>,
    /// (bucket, concurrency difference).
    conc: Vec<(u64, i64)>,
}

/// Dense bucket arrays are used up to this many buckets, or up to 4 per chunk and request.
const DENSE_BUCKETS_MIN: u64 = 1 << 20;

impl VllmPeaks {
    fn new(successes: &[&RequestRecord]) -> Self {
        VllmPeaks::with_mode(successes, false)
    }

    /// `force_sparse`: keep events even when dense arrays would do (tests compare both).
    fn with_mode(successes: &[&RequestRecord], force_sparse: bool) -> Self {
        let Some(min_start) = successes.iter().map(|r| r.sent_at).min() else {
            return VllmPeaks {
                min_ns: 0,
                n: 0,
                tokens: Vec::new(),
                conc: Vec::new(),
                sparse: None,
            };
        };
        let max_end = successes
            .iter()
            .filter_map(|r| r.chunks.last().map(|c| c.at))
            .max()
            .unwrap_or(min_start);
        let span = duration_nanos(max_end.saturating_sub(min_start));
        let n = span.div_ceil(NANOS_PER_S) + 1;
        let events: usize = successes.iter().map(|r| r.chunks.len() + 1).sum();
        let dense_limit = DENSE_BUCKETS_MIN.max((events as u64).saturating_mul(4));
        let (tokens, conc, sparse) = match usize::try_from(n) {
            Ok(len) if n <= dense_limit && !force_sparse => (vec![0; len], vec![0; len + 1], None),
            _ => (Vec::new(), Vec::new(), Some(SparsePeaks::default())),
        };
        VllmPeaks {
            min_ns: duration_nanos(min_start),
            n,
            tokens,
            conc,
            sparse,
        }
    }

    #[inline]
    fn bucket(&self, t: Duration) -> u64 {
        duration_nanos(t).saturating_sub(self.min_ns) / NANOS_PER_S
    }

    fn add(&mut self, r: &RequestRecord) {
        let n = self.n;
        let first = self.bucket(r.sent_at);
        let last = r.chunks.last().map(|l| self.bucket(l.at));
        if let Some(SparsePeaks { tokens, conc }) = &mut self.sparse {
            for c in &r.chunks {
                let b = duration_nanos(c.at).saturating_sub(self.min_ns) / NANOS_PER_S;
                if b < n {
                    tokens.push(b);
                }
            }
            if let Some(last) = last {
                if first < n {
                    conc.push((first, 1));
                    conc.push(((last + 1).min(n), -1));
                }
            }
            return;
        }
        // Dense mode: every bucket below n indexes the arrays (n fits in usize).
        for c in &r.chunks {
            let b = self.bucket(c.at);
            if b < n {
                self.tokens[b as usize] += 1;
            }
        }
        if let Some(last) = last {
            if first < n {
                self.conc[first as usize] += 1;
                self.conc[(last + 1).min(n) as usize] -= 1;
            }
        }
    }

    /// (peak chunks per bucket, peak requests per bucket).
    fn finish(&mut self) -> (f64, f64) {
        let mut level = 0i64;
        let mut peak_conc = 0i64;
        if let Some(SparsePeaks { tokens, conc }) = &mut self.sparse {
            tokens.sort_unstable();
            let peak_tokens = tokens
                .chunk_by(|a, b| a == b)
                .map(|run| run.len())
                .max()
                .unwrap_or(0);
            conc.sort_unstable_by_key(|e| e.0);
            for run in conc.chunk_by(|a, b| a.0 == b.0) {
                if run.first().is_none_or(|e| e.0 >= self.n) {
                    break;
                }
                level += run.iter().map(|e| e.1).sum::<i64>();
                peak_conc = peak_conc.max(level);
            }
            return (peak_tokens as f64, peak_conc as f64);
        }
        let peak_tokens = self.tokens.iter().copied().max().unwrap_or(0);
        for d in self.conc.iter().take(self.tokens.len()) {
            level += d;
            peak_conc = peak_conc.max(level);
        }
        (peak_tokens as f64, peak_conc as f64)
    }
}

/// servebench's exact figures over `records` (see the module docs).
pub fn exact_figures(records: &[RequestRecord]) -> ExactFigures {
    ExactFigures {
        peak_output_tokens_per_s: Some(sliding_window_peak_tokens(records) as f64),
        peak_in_flight: Some(peak_in_flight(records)),
    }
}

/// `d / cell_ns` for the four cell sizes, each a division by a constant.
#[inline]
fn cell_index(d: u64, cell_ns: u64) -> usize {
    (match cell_ns {
        1_000_000 => d / 1_000_000,
        10_000_000 => d / 10_000_000,
        100_000_000 => d / 100_000_000,
        _ => d / NANOS_PER_S,
    }) as usize
}

/// Token prefix sums over cells of the chunks in `[lo, hi]`: `(prefix, lo, cell_ns, K,
/// cells)`, or `None` when there is nothing to bin or a chunk lies outside `[lo, hi]`.
#[allow(clippy::type_complexity)]
fn bin_tokens<'a, I: Iterator<Item = &'a crate::record::Chunk>>(
    chunks: &impl Fn() -> I,
    lo: u64,
    hi: u64,
) -> Option<(Vec<u64>, u64, u64, usize, usize)> {
    if lo > hi {
        return None;
    }
    let span = hi - lo;
    let mut k: u64 = 1000;
    while k > 1 && span / (NANOS_PER_S / k) > (1 << 24) {
        k /= 10;
    }
    let cell_ns = NANOS_PER_S / k;
    let k = k as usize;
    let ncells = cell_index(span, cell_ns) + 1;
    if ncells > MAX_CELLS {
        // Longer than ~194 days (a corrupt timestamp): not worth a table per second.
        return None;
    }
    // prefix[i] = tokens in cells 0..i (cells past the last one are empty).
    let mut prefix = vec![0u64; ncells + k + 2];
    for c in chunks() {
        let t = duration_nanos(c.at);
        if t < lo || t > hi {
            return None;
        }
        prefix[cell_index(t - lo, cell_ns) + 1] += u64::from(c.tokens);
    }
    for i in 1..prefix.len() {
        prefix[i] += prefix[i - 1];
    }
    Some((prefix, lo, cell_ns, k, ncells))
}

/// Most cells [`bin_tokens`] makes: 1-second cells over 2^24 s (~194 days).
const MAX_CELLS: usize = (1 << 24) + 1;

/// [`sliding_window_peak_tokens`] by its definition: sort every chunk of the successful
/// requests and slide a 1-second window over them. O(n log n); used when the span is too
/// long to bin.
fn sorted_sweep_peak_tokens(records: &[RequestRecord]) -> u64 {
    let mut ev: Vec<(u64, u32)> = records
        .iter()
        .filter(|r| r.outcome.is_success())
        .flat_map(|r| r.chunks.iter())
        .filter(|c| c.tokens > 0)
        .map(|c| (duration_nanos(c.at), c.tokens))
        .collect();
    ev.sort_unstable();
    let (mut best, mut sum, mut lo) = (0u64, 0u64, 0usize);
    for &(t, tokens) in &ev {
        sum += u64::from(tokens);
        // The window ends at this chunk: drop the chunks a second or more before it
        // (`lo` never passes the current chunk, whose own gap is 0).
        while t - ev[lo].0 >= NANOS_PER_S {
            sum -= u64::from(ev[lo].1);
            lo += 1;
        }
        best = best.max(sum);
    }
    best
}

/// Most output tokens of successful requests in any half-open window `[s, s + 1 s)`.
///
/// Exact, without sorting every chunk: tokens are binned into cells of 1/K s (K = 1000, or
/// fewer for runs longer than ~4.6 h); windows aligned on cells are summed exactly from
/// prefix sums, giving a lower bound `L`. A window starting inside cell `c` can only beat
/// `L` if the K + 1 cells `c..=c+K` hold more than `L` tokens; only for those candidate
/// cells are the chunks of cells `c` and `c + K` sorted and the window swept exactly.
fn sliding_window_peak_tokens(records: &[RequestRecord]) -> u64 {
    let chunks = || {
        records
            .iter()
            .filter(|r| r.outcome.is_success())
            .flat_map(|r| r.chunks.iter())
            .filter(|c| c.tokens > 0)
    };
    // Chunks arrive in order within a record, so the first and last chunks usually bound
    // the run; binning checks it and falls back to a full min/max scan when they do not.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for r in records.iter().filter(|r| r.outcome.is_success()) {
        if let (Some(f), Some(l)) = (r.chunks.first(), r.chunks.last()) {
            lo = lo.min(duration_nanos(f.at));
            hi = hi.max(duration_nanos(l.at));
        }
    }
    let (prefix, lo, cell_ns, k, ncells) = match bin_tokens(&chunks, lo, hi) {
        Some(binned) => binned,
        None => {
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            for c in chunks() {
                let t = duration_nanos(c.at);
                lo = lo.min(t);
                hi = hi.max(t);
            }
            match bin_tokens(&chunks, lo, hi) {
                Some(binned) => binned,
                // No chunks, or a span too long to bin.
                None => return sorted_sweep_peak_tokens(records),
            }
        }
    };
    let cell_of = |t: u64| cell_index(t - lo, cell_ns);
    let (best, candidates) = aligned_peak_and_candidates(&prefix, k, ncells);
    if candidates.is_empty() {
        return best;
    }
    let mut groups = CandidateGroups::new(&candidates, k, ncells);
    for c in chunks() {
        let t = duration_nanos(c.at);
        groups.push(cell_of(t), t, c.tokens);
    }
    groups.sweep(&prefix, k, &candidates, best)
}

/// From token prefix sums over `ncells` cells of 1/K s (`prefix[i]` = tokens in cells
/// `0..i`, padded with K + 2 empty cells): the best window aligned on cells (a lower bound
/// of the peak) and the cells a better window could start in (see
/// [`sliding_window_peak_tokens`]).
pub(crate) fn aligned_peak_and_candidates(
    prefix: &[u64],
    k: usize,
    ncells: usize,
) -> (u64, Vec<usize>) {
    let sum = |a: usize, b: usize| prefix[b] - prefix[a]; // cells a..b
    let best = (0..ncells).map(|c| sum(c, c + k)).max().unwrap_or(0);
    let candidates: Vec<usize> = (0..ncells).filter(|&c| sum(c, c + k + 1) > best).collect();
    (best, candidates)
}

/// The chunks of every candidate cell and of its partner cell c + K, gathered for the
/// exact sweep of [`sliding_window_peak_tokens`].
pub(crate) struct CandidateGroups {
    /// Group index of each cell, or `NONE`.
    slot: Vec<u32>,
    groups: Vec<Vec<(u64, u32)>>,
}

impl CandidateGroups {
    const NONE: u32 = u32::MAX;

    pub(crate) fn new(candidates: &[usize], k: usize, ncells: usize) -> Self {
        let mut slot = vec![Self::NONE; ncells + k + 1];
        let mut groups: Vec<Vec<(u64, u32)>> = Vec::new();
        for &c in candidates {
            for cell in [c, c + k] {
                if slot[cell] == Self::NONE {
                    slot[cell] = groups.len() as u32;
                    groups.push(Vec::new());
                }
            }
        }
        CandidateGroups { slot, groups }
    }

    /// Cells `0..n` that are wanted, as prefix counts (`out[i]` = wanted cells below `i`).
    pub(crate) fn wanted_prefix(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.slot.len() + 1);
        let mut acc = 0u32;
        out.push(0);
        for &s in &self.slot {
            acc += u32::from(s != Self::NONE);
            out.push(acc);
        }
        out
    }

    /// Keep a chunk (time in ns, tokens) lying in `cell` if that cell is wanted; chunks
    /// without tokens are dropped.
    #[inline]
    pub(crate) fn push(&mut self, cell: usize, t: u64, tokens: u32) {
        if tokens == 0 {
            return;
        }
        if let Some(&s) = self.slot.get(cell) {
            if s != Self::NONE {
                self.groups[s as usize].push((t, tokens));
            }
        }
    }

    /// The exact peak: `best` or a better window starting inside a candidate cell.
    pub(crate) fn sweep(
        mut self,
        prefix: &[u64],
        k: usize,
        candidates: &[usize],
        mut best: u64,
    ) -> u64 {
        let sum = |a: usize, b: usize| prefix[b] - prefix[a]; // cells a..b
        for g in self.groups.iter_mut() {
            g.sort_unstable();
        }
        let window = NANOS_PER_S;
        for &c in candidates {
            let starts = &self.groups[self.slot[c] as usize];
            let ends = &self.groups[self.slot[c + k] as usize];
            let inner = sum(c + 1, c + k);
            // Tokens of cell c at or after the start, of cell c+K before the end.
            let mut tail: u64 = starts.iter().map(|e| u64::from(e.1)).sum();
            let mut head = 0u64;
            let mut j = 0;
            let mut i = 0;
            while i < starts.len() {
                let s = starts[i].0;
                while j < ends.len() && ends[j].0 < s + window {
                    head += u64::from(ends[j].1);
                    j += 1;
                }
                best = best.max(inner + tail + head);
                // Every chunk at time s leaves the window once the start moves past s.
                while i < starts.len() && starts[i].0 == s {
                    tail -= u64::from(starts[i].1);
                    i += 1;
                }
            }
        }
        best
    }
}

/// Nanoseconds as u64 (saturating after ~584 years), without u128 arithmetic.
#[inline]
fn duration_nanos(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(NANOS_PER_S)
        .saturating_add(u64::from(d.subsec_nanos()))
}

/// Exact peak of requests in flight: sweep line over half-open `[send, end)`.
fn peak_in_flight(records: &[RequestRecord]) -> u64 {
    let mut ev: Vec<(u64, i8)> = Vec::with_capacity(records.len() * 2);
    for r in records {
        let s = duration_nanos(r.sent_at);
        let e = duration_nanos(record_end(r));
        if e > s {
            ev.push((s, 1));
            ev.push((e, -1));
        }
    }
    ev.sort_unstable();
    let (mut level, mut peak) = (0i64, 0i64);
    for (_, d) in ev {
        level += i64::from(d);
        peak = peak.max(level);
    }
    peak as u64
}

/// Below this many chunks the exact figures are computed inline; above, on a second
/// thread while the convention's statistics are computed.
const PARALLEL_CHUNKS: usize = 1 << 20;

/// Run `f` and the exact figures concurrently for large runs.
fn with_exact_figures<T: Send>(
    records: &[RequestRecord],
    f: impl FnOnce() -> T + Send,
) -> (T, ExactFigures) {
    let chunks: usize = records.iter().map(|r| r.chunks.len()).sum();
    if chunks < PARALLEL_CHUNKS {
        return (f(), exact_figures(records));
    }
    std::thread::scope(|s| {
        match std::thread::Builder::new().spawn_scoped(s, || exact_figures(records)) {
            Ok(h) => {
                let t = f();
                let exact = h
                    .join()
                    .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
                (t, exact)
            }
            // No thread available: do both here.
            Err(_) => (f(), exact_figures(records)),
        }
    })
}

/// Everything `Convention::Vllm` reports, before the conversion to a [`BenchmarkResult`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VllmFigures {
    completed: u64,
    failed: u64,
    total_input: u64,
    total_output: u64,
    good: Option<u64>,
    peak_tokens: f64,
    peak_conc: f64,
    ttft: Option<NumpySummary>,
    tpot: Option<NumpySummary>,
    itl: Option<NumpySummary>,
    e2el: Option<NumpySummary>,
    duration: Duration,
    peak_output_tokens_exact: u64,
    peak_in_flight: u64,
}

/// [`default_duration`] from (first send, last end) in ns, if there are records.
fn default_duration_from(bounds: Option<(u64, u64)>) -> Duration {
    match bounds {
        Some((s, e)) => Duration::from_nanos(e.saturating_sub(s)),
        None => Duration::ZERO,
    }
}

/// Below this many chunks the straightforward computation is used: the one-pass method's
/// set-up (sizing scan, sample, tables) costs more than it saves.
const ONE_PASS_MIN_CHUNKS: usize = 1 << 14;

fn compute_vllm(records: &[RequestRecord], opts: &MetricsOptions) -> BenchmarkResult {
    let chunks: usize = records.iter().map(|r| r.chunks.len()).sum();
    let figures = if chunks < ONE_PASS_MIN_CHUNKS {
        None
    } else {
        fast::vllm_figures(records, opts, PARALLEL_CHUNKS)
    };
    let figures = figures.unwrap_or_else(|| vllm_figures_reference(records, opts));
    vllm_result(figures, &opts.percentiles)
}

/// `Convention::Vllm` computed the straightforward way (every ITL materialised as f64
/// seconds, numpy's algorithms on the lists, the exact figures by [`exact_figures`]). The
/// one-pass computation equals it bit for bit; it is also the fallback for inputs the
/// one-pass method does not cover.
#[cfg(test)]
pub(crate) fn compute_vllm_reference(
    records: &[RequestRecord],
    opts: &MetricsOptions,
) -> BenchmarkResult {
    vllm_result(vllm_figures_reference(records, opts), &opts.percentiles)
}

fn vllm_figures_reference(records: &[RequestRecord], opts: &MetricsOptions) -> VllmFigures {
    let (mut figures, exact) = with_exact_figures(records, || vllm_stats_reference(records, opts));
    figures.peak_output_tokens_exact = sliding_peak_of(&exact);
    figures.peak_in_flight = exact.peak_in_flight.unwrap_or(0);
    figures
}

/// The ITL summary with its mean and standard deviation taken from the exact integer
/// moments of the nanosecond gaps (numpy's, from rounded seconds, when they overflow).
fn with_exact_moments(mut s: NumpySummary, m: &Moments) -> NumpySummary {
    if let Some((mean, std)) = m.mean_std(NANOS_PER_S) {
        s.mean = mean;
        s.std = std;
    }
    s
}

fn sliding_peak_of(exact: &ExactFigures) -> u64 {
    exact.peak_output_tokens_per_s.unwrap_or(0.0) as u64
}

fn vllm_result(f: VllmFigures, pct: &[f64]) -> BenchmarkResult {
    let dur_s = f.duration.as_secs_f64();
    let per_s = |x: f64| if dur_s > 0.0 { Some(x / dur_s) } else { None };
    let mut res = BenchmarkResult {
        successful_requests: Some(f.completed),
        failed_requests: Some(f.failed),
        duration_ms: Some(dur_s * 1000.0),
        total_input_tokens: Some(f.total_input),
        total_output_tokens: Some(f.total_output),
        request_throughput_per_s: per_s(f.completed as f64),
        request_goodput_per_s: f.good.and_then(|g| per_s(g as f64)),
        output_throughput_per_s: per_s(f.total_output as f64),
        peak_output_throughput_per_s: Some(f.peak_tokens),
        peak_concurrent_requests: Some(f.peak_conc),
        total_token_throughput_per_s: per_s(f.total_input as f64 + f.total_output as f64),
        ttft: Some(vllm_summary_ms(f.ttft, pct)),
        tpot: Some(vllm_summary_ms(f.tpot, pct)),
        itl: Some(vllm_summary_ms(f.itl, pct)),
        e2el: Some(vllm_summary_ms(f.e2el, pct)),
        exact: Some(ExactFigures {
            peak_output_tokens_per_s: Some(f.peak_output_tokens_exact as f64),
            peak_in_flight: Some(f.peak_in_flight),
        }),
        ..BenchmarkResult::default()
    };
    res.meta.convention = Some(Convention::Vllm);
    res
}

/// vLLM's goodput count: the successes meeting every SLO that is set, inclusive
/// (`slo_ms / 1000 >= value_s`); per success its TTFT, TPOT (0 for output ≤ 1) and E2EL, s.
pub(crate) fn goodput_count(
    slo: Option<Slo>,
    ttfts: &[f64],
    all_tpots: &[f64],
    e2els: &[f64],
) -> Option<u64> {
    slo.map(|slo| {
        ttfts
            .iter()
            .zip(all_tpots)
            .zip(e2els)
            .filter(|((&ttft, &tpot), &e2el)| meets_slo(&slo, ttft, tpot, e2el))
            .count() as u64
    })
}

/// Whether one success (TTFT, TPOT — 0 for output ≤ 1 — and E2EL, s) meets every SLO
/// that is set, inclusive (`slo_ms / 1000 >= value_s`), as vLLM counts goodput.
#[inline]
pub(crate) fn meets_slo(slo: &Slo, ttft: f64, tpot: f64, e2el: f64) -> bool {
    let ok = |limit: Option<f64>, v: f64| limit.is_none_or(|ms| ms / 1000.0 >= v);
    ok(slo.ttft_ms, ttft) && ok(slo.tpot_ms, tpot) && ok(slo.e2el_ms, e2el)
}

fn vllm_stats_reference(records: &[RequestRecord], opts: &MetricsOptions) -> VllmFigures {
    let successes: Vec<&RequestRecord> = records.iter().filter(|r| vllm_success(r)).collect();
    let failed = (records.len() - successes.len()) as u64;

    let mut ttfts = Vec::with_capacity(successes.len());
    let mut e2els = Vec::with_capacity(successes.len());
    let mut tpots = Vec::with_capacity(successes.len());
    let mut all_tpots = Vec::with_capacity(successes.len());
    let n_gaps: usize = successes
        .iter()
        .map(|r| r.chunks.len().saturating_sub(1))
        .sum();
    let mut itls = Vec::with_capacity(n_gaps);
    let mut itl_moments = Moments::default();
    let mut total_input = 0u64;
    let mut total_output = 0u64;
    let mut peaks = VllmPeaks::new(&successes);
    for r in &successes {
        peaks.add(r);
        let output_len = r.output_tokens();
        total_output = total_output.saturating_add(output_len);
        total_input = total_input.saturating_add(r.input_tokens().unwrap_or(0));
        let ttft = r.ttft().unwrap_or_default().as_secs_f64();
        let latency = r.latency().unwrap_or_default().as_secs_f64();
        let mut tpot = 0.0;
        if output_len > 1 {
            tpot = (latency - ttft) / (output_len - 1) as f64;
            tpots.push(tpot);
        }
        all_tpots.push(tpot);
        ttfts.push(ttft);
        e2els.push(latency);
        for w in r.chunks.windows(2) {
            let gap = w[1].at.saturating_sub(w[0].at);
            itls.push(gap.as_secs_f64());
            match u64::try_from(gap.as_nanos()) {
                Ok(g) => itl_moments.add(g),
                Err(_) => itl_moments.overflow = true,
            }
        }
    }

    let good = goodput_count(opts.goodput, &ttfts, &all_tpots, &e2els);

    let (peak_tokens, peak_conc) = peaks.finish();

    let pct = &opts.percentiles;
    VllmFigures {
        completed: successes.len() as u64,
        failed,
        total_input,
        total_output,
        good,
        peak_tokens,
        peak_conc,
        ttft: numpy_summary(&mut ttfts, pct),
        tpot: numpy_summary(&mut tpots, pct),
        itl: numpy_summary(&mut itls, pct).map(|s| with_exact_moments(s, &itl_moments)),
        e2el: numpy_summary(&mut e2els, pct),
        duration: opts.duration.unwrap_or_else(|| default_duration(records)),
        peak_output_tokens_exact: 0,
        peak_in_flight: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Chunk;
    use proptest::prelude::*;

    /// The definition: sort every chunk, slide a window.
    fn naive_peak(records: &[RequestRecord]) -> u64 {
        let mut ev: Vec<(u64, u32)> = records
            .iter()
            .filter(|r| r.outcome.is_success())
            .flat_map(|r| r.chunks.iter())
            .map(|c| (duration_nanos(c.at), c.tokens))
            .collect();
        ev.sort_unstable();
        let (mut best, mut sum, mut lo) = (0u64, 0u64, 0usize);
        for hi in 0..ev.len() {
            sum += u64::from(ev[hi].1);
            while ev[hi].0 - ev[lo].0 >= 1_000_000_000 {
                sum -= u64::from(ev[lo].1);
                lo += 1;
            }
            best = best.max(sum);
        }
        best
    }

    #[test]
    fn sliding_peak_on_a_ten_hour_run_uses_coarser_cells() {
        // 10 h span → 10 ms cells; the burst straddles cell edges.
        let at = |ns: u64| Chunk {
            at: Duration::from_nanos(ns),
            tokens: 3,
        };
        let mut r = RequestRecord::new(0, Duration::ZERO);
        r.chunks = vec![at(0), at(36_000_000_000_000)];
        let mut burst = RequestRecord::new(1, Duration::ZERO);
        let base = 5_000_004_999_999u64;
        burst.chunks = (0..50).map(|i| at(base + i * 20_000_001)).collect();
        let records = vec![r, burst];
        assert_eq!(sliding_window_peak_tokens(&records), naive_peak(&records));
        assert_eq!(naive_peak(&records), 50 * 3);
    }

    /// A record with u64::MAX usage tokens (from a hand-edited or corrupt JSONL file) must
    /// not overflow the totals (a panic in debug builds, a wrapped total in release).
    #[test]
    fn huge_usage_token_counts_saturate_the_totals() {
        let mut records = Vec::new();
        for i in 0..2 {
            let mut r = RequestRecord::new(i, Duration::ZERO);
            r.chunks.push(Chunk {
                at: Duration::from_millis(10),
                tokens: 1,
            });
            r.usage_output_tokens = Some(u64::MAX);
            r.usage_prompt_tokens = Some(u64::MAX);
            records.push(r);
        }
        for convention in [Convention::Vllm, Convention::Guidellm] {
            let res = compute(&records, convention);
            assert_eq!(res.total_output_tokens, Some(u64::MAX), "{convention:?}");
            assert_eq!(res.total_input_tokens, Some(u64::MAX), "{convention:?}");
        }
    }

    /// One chunk stamped ~146 billion years after the run started (a corrupt timestamp)
    /// must not make the per-second tables as long as the span.
    #[test]
    fn a_far_future_timestamp_does_not_size_tables_by_the_span() {
        let ms = Duration::from_millis;
        let mut a = RequestRecord::new(0, Duration::ZERO);
        a.chunks = vec![
            Chunk {
                at: ms(5),
                tokens: 1,
            },
            Chunk {
                at: ms(6),
                tokens: 1,
            },
        ];
        let mut b = RequestRecord::new(1, Duration::ZERO);
        b.chunks = vec![Chunk {
            at: Duration::from_secs(u64::MAX / 4),
            tokens: 1,
        }];
        let records = vec![a, b];
        let res = compute(&records, Convention::Vllm);
        assert_eq!(res.peak_output_throughput_per_s, Some(2.0));
        assert_eq!(res.peak_concurrent_requests, Some(2.0));
        let exact = res.exact.unwrap();
        assert_eq!(exact.peak_output_tokens_per_s, Some(2.0));
        assert_eq!(exact.peak_in_flight, Some(2));
        assert_eq!(sliding_window_peak_tokens(&records), naive_peak(&records));
    }

    proptest! {
        #[test]
        fn vllm_peaks_sparse_equals_dense(
            reqs in prop::collection::vec((0u64..20_000, prop::collection::vec(0u64..20_000, 0..12)), 1..20),
        ) {
            let records: Vec<RequestRecord> = reqs
                .iter()
                .enumerate()
                .map(|(i, (sent, gaps))| {
                    let mut r = RequestRecord::new(i as u64, Duration::from_millis(*sent));
                    let mut t = *sent;
                    r.chunks = gaps
                        .iter()
                        .map(|g| {
                            t += g;
                            Chunk { at: Duration::from_millis(t), tokens: 1 }
                        })
                        .collect();
                    r
                })
                .collect();
            let successes: Vec<&RequestRecord> = records.iter().filter(|r| vllm_success(r)).collect();
            prop_assume!(!successes.is_empty());
            let (mut dense, mut sparse) =
                (VllmPeaks::with_mode(&successes, false), VllmPeaks::with_mode(&successes, true));
            prop_assert!(dense.sparse.is_none() && sparse.sparse.is_some());
            for r in &successes {
                dense.add(r);
                sparse.add(r);
            }
            prop_assert_eq!(dense.finish(), sparse.finish());
        }

        #[test]
        fn sliding_peak_equals_definition(
            scale in prop::sample::select(vec![1_000u64, 1_000_000, 100_000_000, 30_000_000_000]),
            reqs in prop::collection::vec(prop::collection::vec((0u64..5_000, 0u32..5), 0..40), 0..20),
        ) {
            let records: Vec<RequestRecord> = reqs
                .iter()
                .enumerate()
                .map(|(i, chunks)| {
                    let mut r = RequestRecord::new(i as u64, Duration::ZERO);
                    r.chunks = chunks
                        .iter()
                        .map(|&(t, tokens)| Chunk { at: Duration::from_nanos(t * scale / 1000 * 7 / 3), tokens })
                        .collect();
                    r
                })
                .collect();
            prop_assert_eq!(sliding_window_peak_tokens(&records), naive_peak(&records));
        }
    }
}
