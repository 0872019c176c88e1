//! `Convention::Vllm`: vLLM 0.34's `calculate_metrics` — the straightforward reference
//! computation, vLLM's 1-second bucket peaks, and the conversion of its figures to a
//! [`BenchmarkResult`] (the one-pass fast path in `fast` equals the reference bit for bit).

use std::time::Duration;

use super::peaks::{with_exact_figures, PARALLEL_CHUNKS};
use super::request::{vllm_itl_gaps, vllm_success, vllm_tpot_s};
use super::slo::goodput_count;
use super::summary::vllm_summary_ms;
use super::{default_duration, fast, nanos_u64, MetricsOptions, NANOS_PER_S};
use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention, ExactFigures};
use crate::stats::{numpy_summary, Moments, NumpySummary};

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

    /// Buckets from `min_start` to `max_end` for `events` chunks and requests (the bounds
    /// of records seen in a first pass, [`vllm_peak_output_streamed`]).
    fn over(min_start: Duration, max_end: Duration, events: usize) -> Self {
        let span = nanos_u64(max_end.saturating_sub(min_start));
        let n = span.div_ceil(NANOS_PER_S) + 1;
        let dense_limit = DENSE_BUCKETS_MIN.max((events as u64).saturating_mul(4));
        let (tokens, conc, sparse) = match usize::try_from(n) {
            Ok(len) if n <= dense_limit => (vec![0; len], vec![0; len + 1], None),
            _ => (Vec::new(), Vec::new(), Some(SparsePeaks::default())),
        };
        VllmPeaks {
            min_ns: nanos_u64(min_start),
            n,
            tokens,
            conc,
            sparse,
        }
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
        let events: usize = successes.iter().map(|r| r.chunks.len() + 1).sum();
        let mut peaks = VllmPeaks::over(min_start, max_end, events);
        if force_sparse {
            (peaks.tokens, peaks.conc) = (Vec::new(), Vec::new());
            peaks.sparse = Some(SparsePeaks::default());
        }
        peaks
    }

    #[inline]
    fn bucket(&self, t: Duration) -> u64 {
        nanos_u64(t).saturating_sub(self.min_ns) / NANOS_PER_S
    }

    fn add(&mut self, r: &RequestRecord) {
        let n = self.n;
        let first = self.bucket(r.sent_at);
        let last = r.chunks.last().map(|l| self.bucket(l.at));
        if let Some(SparsePeaks { tokens, conc }) = &mut self.sparse {
            for c in &r.chunks {
                let b = nanos_u64(c.at).saturating_sub(self.min_ns) / NANOS_PER_S;
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

/// vLLM's peak output throughput and peak concurrent requests (chunks and requests in the
/// busiest 1-second bucket from the first send) over records read twice through `records`
/// — a soak's spool on disk: memory per second of the run, not per chunk. The same figures
/// as the whole records' [`crate::metrics::compute`].
pub fn vllm_peaks_streamed<I: Iterator<Item = RequestRecord>>(
    mut records: impl FnMut() -> I,
) -> (f64, f64) {
    let (mut min_start, mut max_end, mut events) = (None::<Duration>, None::<Duration>, 0usize);
    for r in records().filter(super::request::vllm_success) {
        min_start = Some(min_start.map_or(r.sent_at, |m| m.min(r.sent_at)));
        if let Some(l) = r.chunks.last() {
            max_end = Some(max_end.map_or(l.at, |m| m.max(l.at)));
        }
        events += r.chunks.len() + 1;
    }
    let Some(min_start) = min_start else {
        return (0.0, 0.0);
    };
    let mut peaks = VllmPeaks::over(min_start, max_end.unwrap_or(min_start), events);
    for r in records().filter(super::request::vllm_success) {
        peaks.add(&r);
    }
    peaks.finish()
}

/// Everything `Convention::Vllm` reports, before the conversion to a [`BenchmarkResult`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VllmFigures {
    pub(crate) completed: u64,
    pub(crate) failed: u64,
    pub(crate) total_input: u64,
    pub(crate) total_output: u64,
    pub(crate) good: Option<u64>,
    pub(crate) peak_tokens: f64,
    pub(crate) peak_conc: f64,
    pub(crate) ttft: Option<NumpySummary>,
    pub(crate) tpot: Option<NumpySummary>,
    pub(crate) itl: Option<NumpySummary>,
    pub(crate) e2el: Option<NumpySummary>,
    pub(crate) duration: Duration,
    pub(crate) peak_output_tokens_exact: u64,
    pub(crate) peak_in_flight: u64,
}

/// [`default_duration`] from (first send, last end) in ns, if there are records.
pub(crate) fn default_duration_from(bounds: Option<(u64, u64)>) -> Duration {
    match bounds {
        Some((s, e)) => Duration::from_nanos(e.saturating_sub(s)),
        None => Duration::ZERO,
    }
}

/// Below this many chunks the straightforward computation is used: the one-pass method's
/// set-up (sizing scan, sample, tables) costs more than it saves.
const ONE_PASS_MIN_CHUNKS: usize = 1 << 14;

pub(super) fn compute_vllm(records: &[RequestRecord], opts: &MetricsOptions) -> BenchmarkResult {
    let chunks: usize = records.iter().map(|r| r.chunks.len()).sum();
    let figures = if chunks < ONE_PASS_MIN_CHUNKS {
        None
    } else {
        fast::vllm_figures(records, opts, PARALLEL_CHUNKS)
    };
    let figures = figures.unwrap_or_else(|| vllm_figures_reference(records, opts));
    vllm_result(figures, opts)
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
    // `compute` adds the production figures to either computation alike.
    let mut r = vllm_result(vllm_figures_reference(records, opts), opts);
    super::with_production_figures(&mut r, records, opts);
    r
}

pub(crate) fn vllm_figures_reference(
    records: &[RequestRecord],
    opts: &MetricsOptions,
) -> VllmFigures {
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

fn vllm_result(f: VllmFigures, opts: &MetricsOptions) -> BenchmarkResult {
    let pct = &opts.percentiles;
    let dur_s = opts
        .duration_s
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(f.duration.as_secs_f64());
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

fn vllm_stats_reference(records: &[RequestRecord], opts: &MetricsOptions) -> VllmFigures {
    let successes: Vec<&RequestRecord> = records.iter().filter(|r| vllm_success(r)).collect();
    let failed = (records.len() - successes.len()) as u64;

    let mut ttfts = Vec::with_capacity(successes.len());
    let mut e2els = Vec::with_capacity(successes.len());
    let mut tpots = Vec::with_capacity(successes.len());
    let mut all_tpots = Vec::with_capacity(successes.len());
    let mut valid = Vec::with_capacity(successes.len());
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
        let tpot = vllm_tpot_s(ttft, latency, output_len);
        tpots.extend(tpot);
        all_tpots.push(tpot.unwrap_or(0.0));
        ttfts.push(ttft);
        e2els.push(latency);
        valid.push(super::slo::checks_pass(r));
        for gap in vllm_itl_gaps(r) {
            itls.push(gap.as_secs_f64());
            match u64::try_from(gap.as_nanos()) {
                Ok(g) => itl_moments.add(g),
                Err(_) => itl_moments.overflow = true,
            }
        }
    }

    let good = goodput_count(opts.goodput, &ttfts, &all_tpots, &e2els, &valid);

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
    use crate::metrics::compute;
    use crate::record::Chunk;
    use proptest::prelude::*;

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

    }
}
