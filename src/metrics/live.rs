//! Live, bounded-memory summaries in vLLM's definitions: [`VllmHistograms`], an
//! [`Accumulator`] of finished requests on streaming histograms (record, merge, serialize),
//! and the [`BenchmarkResult`] read from such histograms ([`from_histograms`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::request::{vllm_itl_gaps, vllm_success, vllm_tpot};
use crate::record::{Accumulator, RequestRecord};
use crate::result::{BenchmarkResult, Convention, Summary};
use crate::stats::{StatsError, Streaming};

/// Streaming latency histograms in vLLM's definitions ([`super::vllm_tpot`], [`super::vllm_itl_gaps`]), fed by
/// successful requests with at least one chunk: TTFT, TPOT (for output_len > 1), every
/// chunk gap (ITL) and E2EL (last chunk − send). Bounded memory, exact merge, serializable
/// (each histogram as base64 V2 text) — see [`Streaming`] for the error bound.
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::VllmHistograms;
/// use servebench::record::{Accumulator, Chunk, RequestRecord};
///
/// let ms = Duration::from_millis;
/// let mut r = RequestRecord::new(0, ms(0));
/// r.chunks = vec![Chunk { at: ms(100), tokens: 1 }, Chunk { at: ms(120), tokens: 1 }];
/// let (mut a, mut b) = (VllmHistograms::new(), VllmHistograms::new());
/// a.record(&r);
/// b.record(&r);
/// a.merge(&b).unwrap();
/// let res = a.result(Duration::from_secs(1), &[99.0]);
/// assert_eq!(res.successful_requests, Some(2));
/// let tpot = res.tpot.unwrap().mean.unwrap();
/// assert!((tpot - 20.0).abs() <= 20.0 / 1024.0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VllmHistograms {
    /// Requests recorded.
    pub requests: u64,
    /// Output tokens of the recorded requests (usage if non-zero, else client count).
    pub output_tokens: u64,
    /// Time to first token.
    pub ttft: Streaming,
    /// Time per output token, excluding the first.
    pub tpot: Streaming,
    /// Inter-chunk gaps.
    pub itl: Streaming,
    /// End-to-end latency.
    pub e2el: Streaming,
}

impl VllmHistograms {
    /// Empty histograms.
    pub fn new() -> Self {
        VllmHistograms::default()
    }

    /// Record one request (ignored unless it is a success in vLLM's sense).
    pub fn record(&mut self, r: &RequestRecord) {
        if !vllm_success(r) {
            return;
        }
        let (Some(ttft), Some(latency)) = (r.ttft(), r.latency()) else {
            return;
        };
        let output_len = r.output_tokens();
        self.requests = self.requests.saturating_add(1);
        self.output_tokens = self.output_tokens.saturating_add(output_len);
        self.ttft.record(ttft);
        self.e2el.record(latency);
        if let Some(tpot) = vllm_tpot(r) {
            self.tpot.record(tpot);
        }
        for gap in vllm_itl_gaps(r) {
            self.itl.record(gap);
        }
    }

    /// Add everything `other` recorded.
    pub fn merge(&mut self, other: &VllmHistograms) -> Result<(), StatsError> {
        self.requests = self.requests.saturating_add(other.requests);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.ttft.merge(&other.ttft)?;
        self.tpot.merge(&other.tpot)?;
        self.itl.merge(&other.itl)?;
        self.e2el.merge(&other.e2el)
    }

    /// The result these histograms give for a run of `duration` (see [`from_histograms`]).
    pub fn result(&self, duration: Duration, percentiles: &[f64]) -> BenchmarkResult {
        histogram_result(
            [self.requests, self.output_tokens],
            [&self.ttft, &self.tpot, &self.itl, &self.e2el],
            duration,
            percentiles,
        )
    }
}

impl Accumulator for VllmHistograms {
    type Error = StatsError;

    fn record(&mut self, r: &RequestRecord) {
        VllmHistograms::record(self, r);
    }

    fn merge(&mut self, other: &Self) -> Result<(), StatsError> {
        VllmHistograms::merge(self, other)
    }
}

/// A result from a collector's streaming histograms (bounded-memory mode, see
/// [`crate::collector::CollectorOptions::histograms`]): vLLM's definitions, but every latency figure is
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
/// use servebench::metrics::{from_histograms, VllmHistograms};
///
/// let c = Collector::<_, VllmHistograms>::with_accumulator(ManualClock::new(), CollectorOptions { keep_records: false, histograms: true });
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
    h: &VllmHistograms,
    duration: Duration,
    percentiles: &[f64],
) -> BenchmarkResult {
    histogram_result(
        [h.requests, h.output_tokens],
        [&h.ttft, &h.tpot, &h.itl, &h.e2el],
        duration,
        percentiles,
    )
}

/// The result of (requests, output tokens) and the (TTFT, TPOT, ITL, E2EL) histograms.
fn histogram_result(
    [requests, output_tokens]: [u64; 2],
    [ttft, tpot, itl, e2el]: [&Streaming; 4],
    duration: Duration,
    percentiles: &[f64],
) -> BenchmarkResult {
    let dur_s = duration.as_secs_f64();
    let per_s = |x: f64| (dur_s > 0.0).then(|| x / dur_s);
    let mut res = BenchmarkResult {
        successful_requests: Some(requests),
        duration_ms: Some(dur_s * 1000.0),
        total_output_tokens: Some(output_tokens),
        request_throughput_per_s: per_s(requests as f64),
        output_throughput_per_s: per_s(output_tokens as f64),
        ttft: Some(summary_ms(ttft, percentiles)),
        tpot: Some(summary_ms(tpot, percentiles)),
        itl: Some(summary_ms(itl, percentiles)),
        e2el: Some(summary_ms(e2el, percentiles)),
        ..BenchmarkResult::default()
    };
    res.meta.convention = Some(Convention::Vllm);
    res
}

/// A streaming histogram as a report [`Summary`] in ms with the given percentiles (the
/// median is the nearest-rank p50). Empty → every value `None`.
pub fn summary_ms(s: &Streaming, percentiles: &[f64]) -> Summary {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    Summary {
        mean: s.mean_ns().map(|v| v / 1e6),
        median: s.percentile(50.0).map(ms),
        std: s.std_ns().map(|v| v / 1e6),
        min: s.min().map(ms),
        max: s.max().map(ms),
        percentiles: percentiles
            .iter()
            .map(|&p| crate::result::Percentile {
                p,
                value: s.percentile(p).map(ms),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collector::{Collector, CollectorOptions, ManualClock};
    use crate::record::{Chunk, Outcome, Usage};

    /// Records with every shape the definitions care about: one token, many, usage above
    /// the chunk count, an out-of-order chunk, no chunk, a failure.
    fn records() -> Vec<RequestRecord> {
        let ms = Duration::from_millis;
        let chunk = |at, tokens| Chunk { at: ms(at), tokens };
        let mut out = Vec::new();
        for (i, (chunks, usage, ok)) in [
            (vec![chunk(40, 1)], None, true),
            (
                vec![chunk(30, 1), chunk(45, 2), chunk(70, 1)],
                Some(9),
                true,
            ),
            (vec![chunk(80, 1), chunk(75, 1), chunk(90, 1)], None, true),
            (vec![], None, true),
            (vec![chunk(20, 1), chunk(25, 1)], None, false),
        ]
        .into_iter()
        .enumerate()
        {
            let mut r = RequestRecord::new(i as u64, ms(i as u64 * 3));
            r.chunks = chunks;
            r.usage_output_tokens = usage;
            if !ok {
                r.outcome = Outcome::Incomplete {
                    reason: "cut".into(),
                };
            }
            out.push(r);
        }
        out
    }

    #[test]
    fn merged_halves_equal_one_accumulator() {
        let rs = records();
        let mut whole = VllmHistograms::new();
        rs.iter().for_each(|r| whole.record(r));
        let (mut a, mut b) = (VllmHistograms::new(), VllmHistograms::new());
        rs[..2].iter().for_each(|r| a.record(r));
        rs[2..].iter().for_each(|r| b.record(r));
        Accumulator::merge(&mut a, &b).unwrap();
        assert_eq!(a, whole);
        assert_eq!(whole.requests, 3);
        assert_eq!(whole.output_tokens, 1 + 9 + 3);
        assert_eq!((whole.tpot.count(), whole.itl.count()), (2, 4));
    }

    /// usage token counts come from the server (or a JSONL file): u64::MAX must saturate
    /// the totals, not overflow them.
    #[test]
    fn token_totals_saturate() {
        let mut r = RequestRecord::new(0, Duration::ZERO);
        r.chunks.push(Chunk {
            at: Duration::from_millis(1),
            tokens: 1,
        });
        r.usage_output_tokens = Some(u64::MAX);
        let mut h = VllmHistograms::new();
        h.record(&r);
        h.record(&r);
        assert_eq!((h.output_tokens, h.requests), (u64::MAX, 2));
        let other = h.clone();
        h.merge(&other).unwrap();
        assert_eq!((h.output_tokens, h.requests), (u64::MAX, 4));
    }

    /// The histograms hold the reference definitions' values, within their resolution.
    #[test]
    fn histograms_match_the_reference_definitions() {
        let rs = records();
        let mut h = VllmHistograms::new();
        rs.iter().for_each(|r| h.record(r));
        let exact = super::super::compute(&rs, Convention::Vllm);
        let live = h.result(Duration::from_secs(1), &[50.0, 99.0]);
        for (name, e, l) in [
            ("ttft", &exact.ttft, &live.ttft),
            ("tpot", &exact.tpot, &live.tpot),
            ("itl", &exact.itl, &live.itl),
            ("e2el", &exact.e2el, &live.e2el),
        ] {
            let (e, l) = (e.as_ref().unwrap(), l.as_ref().unwrap());
            for (x, y) in [(e.min, l.min), (e.max, l.max), (e.mean, l.mean)] {
                let (x, y) = (x.unwrap(), y.unwrap());
                assert!(
                    (x - y).abs() <= x.abs() / 1000.0 + 1e-6,
                    "{name}: {x} vs {y}"
                );
            }
        }
        assert_eq!(live.successful_requests, exact.successful_requests);
        assert_eq!(live.total_output_tokens, exact.total_output_tokens);
    }

    /// The collector's live histograms and this accumulator agree (until the collector
    /// feeds a pluggable accumulator itself).
    #[test]
    fn collector_histograms_agree_with_the_accumulator() {
        let c = Collector::<_, VllmHistograms>::with_accumulator(
            ManualClock::new(),
            CollectorOptions {
                keep_records: true,
                histograms: true,
            },
        );
        let ms = Duration::from_millis;
        for i in 0..20u64 {
            let mut h = c.begin_at(ms(i));
            for k in 1..=(i % 5) {
                h.chunk_at(ms(i + 7 * k + i % 3), 1 + (k % 2) as u32);
            }
            h.finish_at(ms(i + 40), Usage::default());
        }
        let mut acc = VllmHistograms::new();
        c.records().iter().for_each(|r| acc.record(r));
        let live = c.histograms().unwrap().unwrap();
        let d = Duration::from_secs(1);
        assert_eq!(from_histograms(&live, d, &[99.0]), acc.result(d, &[99.0]));
    }
}
