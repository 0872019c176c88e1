//! Confidence intervals within one run, from its records: [`run_intervals`].
//!
//! # Method
//!
//! The run `[first send, first send + duration]` is cut into `B ≈ n^(2/3)` equal time
//! windows (`n` successful requests, so about `n^(1/3)` requests per window, the classic
//! block-length rate). Output tokens count in the window their chunk arrived in; a
//! request's count, its input tokens and its goodput count are spread over the windows it
//! streamed in, in proportion to its chunk tokens there (a batched server finishes requests
//! in waves, but produces tokens steadily: counting whole requests at their end would make
//! throughput look far noisier than it is). Each successful request's latencies go to the
//! window in which it **finished**: for each latency metric `Σw`, `Σw·x`, `Σw·x²` and
//! `Σw·[x ≤ q]` for every reported percentile `q` (for vLLM's ITL one term per chunk gap).
//! A Poisson(1)-weighted bootstrap over the windows (the crate-private `noise::bootstrap`)
//! then gives, per replicate:
//!
//! * **throughputs** = Σ weighted counts / Σ weighted window lengths — a block bootstrap
//!   over time, so bursts, queueing and the arrival process count;
//! * **means** and **standard deviations** = ratios of weighted Σw·x, Σw·x², Σw (requests
//!   in the same window are resampled together, so the correlation of neighbours in a
//!   saturated server widens the interval instead of being ignored);
//! * **percentiles** (median, p90, p99, …) by Woodruff's method (Woodruff 1952, "Confidence
//!   intervals for medians and other position measures", JASA 47:635–646): the standard
//!   error `s` of the empirical CDF at the reported value `x = Q(p)` comes from the block
//!   bootstrap — so that requests of one burst, which sit in the tail together, count as
//!   the one event they are — but never below the independent-sample `√(p(1−p)/n)`; the
//!   bounds `p ± z·s` are mapped back through the empirical quantile function (exactly, on
//!   the per-request values; for more than 4 M chunk gaps through a histogram of 1024
//!   sub-buckets per power of two, ≤ 0.1 % relative error).
//!
//! # Means of heavy tails
//!
//! A latency whose upper tail is so heavy that its variance looks infinite — Hill's tail
//! index over the `⌊√n⌋` largest values below [`MIN_TAIL_INDEX`] (2), as when a host stall
//! gives a few requests ten times the usual TTFT — gets no interval for its mean and
//! standard deviation: the bootstrap of a mean is not consistent there (Athreya 1987), and
//! such a mean swings from run to run with whether a stall happened at all, which no
//! resampling of one run shows. Its percentiles keep their intervals.
//!
//! # Tail percentiles: an interval only where one run can give it
//!
//! The effective sample `n_eff = p(1−p)/s²` says how many independent requests the
//! percentile rests on. A p99 needs `n_eff · (1 − p) ≥` [`MIN_TAIL_OBSERVATIONS`] (5)
//! effective requests beyond it, and both bounds strictly inside the sample; otherwise it
//! gets **no within-run interval** (and a comparison says "noise unknown" for it). A p99
//! of 300 requests rests on three requests, often of one burst: its value swings far more
//! from run to run than any resampling of that run can show (six A/A runs against one
//! example server gave p99 E2EL from 128 to 159 ms while each run's old interval was about
//! ±2 %, and every one of 15 A/A pairs was called different). Such tails need repetitions;
//! from about 1000 independent requests on, p99 gets its interval again (see the coverage
//! table of the compare guide).
//!
//! The windows are then grouped into blocks of consecutive windows as long as the run's
//! correlation needs: the automatic block length of Politis & White (2004, corrected 2009)
//! of the per-window series (output tokens, requests, each latency sum), their upper
//! median. A run correlated over so long that fewer than [`MIN_EFFECTIVE_BLOCKS`] blocks
//! remain (a burst served in a few waves) gets [`IntervalError::Correlated`]: one such run
//! cannot tell its own noise, repetitions can.
//!
//! Intervals are bootstrap percentile intervals at the chosen confidence; the standard
//! error is the replicates' standard deviation (for percentiles, the half-width divided by
//! the normal quantile). The figures are those of [`crate::metrics::compute`]: for
//! `Convention::Vllm` the statistic bootstrapped is the reported one; for
//! `Convention::Guidellm` (whose rates are means of event-merged rate distributions) the
//! interval of the request-level estimator with guidellm's definitions is transferred to
//! the reported figure as a relative interval.
//!
//! Cost: one walk over the records and chunks (on every core), then `resamples × B × K`
//! multiply-adds (`K` ≈ 30 sums) — independent of the number of chunks.
//!
//! ```
//! use std::time::Duration;
//! use servebench::metrics::compute;
//! use servebench::noise::{run_intervals, IntervalOptions};
//! use servebench::record::{Chunk, RequestRecord};
//! use servebench::result::Convention;
//!
//! let ms = Duration::from_millis;
//! let records: Vec<RequestRecord> = (0..400u64)
//!     .map(|i| {
//!         let mut r = RequestRecord::new(i, ms(50 * i));
//!         let ttft = 100 + (i * 37 % 61);
//!         r.chunks = (0..8).map(|k| Chunk { at: ms(50 * i + ttft + 20 * k), tokens: 1 }).collect();
//!         r
//!     })
//!     .collect();
//! let result = compute(&records, Convention::Vllm);
//! let ci = run_intervals(&records, &result, &IntervalOptions::default()).unwrap();
//! let ttft = ci.ttft.unwrap().mean.unwrap();
//! let mean = result.ttft.unwrap().mean.unwrap();
//! assert!(ttft.lo < mean && mean < ttft.hi);
//! assert!(ci.output_throughput_per_s.unwrap().contains(result.output_throughput_per_s.unwrap()));
//! ```

use std::time::Duration;

use crate::metrics::{checks_pass, default_duration, meets_slo, record_end, Slo};
use crate::noise::bootstrap::{self, quantile_linear, BlockSums};
use crate::noise::dist::normal_quantile;
use crate::record::RequestRecord;
use crate::result::intervals::{Interval, PercentileInterval, RunIntervals, SummaryIntervals};
use crate::result::{BenchmarkResult, Convention, Summary};

mod quantile;
mod tail;
use quantile::{hist_bucket, QuantileFn, HIST_LEN};
use tail::cdf_bounds;
pub use tail::{MIN_TAIL_INDEX, MIN_TAIL_OBSERVATIONS};

/// How to compute a run's intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalOptions {
    /// Confidence level, strictly between 0 and 1 (default 0.95).
    pub confidence: f64,
    /// Bootstrap resamples (default 1000; at least 100).
    pub resamples: u32,
    /// Seed of the resampling (default 0).
    pub seed: u64,
    /// Time windows to cut the run into; default `round(n^(2/3))` for `n` successes.
    pub blocks: Option<u32>,
    /// The goodput SLOs the result was computed with, for the goodput interval.
    pub goodput: Option<Slo>,
}

impl Default for IntervalOptions {
    fn default() -> Self {
        IntervalOptions {
            confidence: 0.95,
            resamples: 1000,
            seed: 0,
            blocks: None,
            goodput: None,
        }
    }
}

/// Why intervals could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntervalError {
    /// The confidence level is not in (0, 1).
    #[error("confidence {0} is not between 0 and 1 (e.g. 0.95)")]
    BadConfidence(f64),
    /// Fewer resamples than the minimum.
    #[error("{got} resamples are too few (at least {min})")]
    TooFewResamples {
        /// Asked for.
        got: u32,
        /// The minimum.
        min: u32,
    },
    /// Too few successful requests (or windows) to resample.
    #[error("{successes} successful requests in {blocks} windows: too few to estimate noise (at least {min_requests} requests in {min_blocks} windows)")]
    TooFewRequests {
        /// Successful requests.
        successes: u64,
        /// Time windows.
        blocks: u32,
        /// Minimum requests.
        min_requests: u64,
        /// Minimum windows.
        min_blocks: u32,
    },
    /// The run is correlated over so long a time that too few independent blocks remain
    /// (e.g. a burst of requests served in a few waves): one run cannot tell its own noise;
    /// repeat it.
    #[error("too few independent blocks: the run is correlated over {block_s:.1} s, which leaves {blocks} independent blocks (at least {min_blocks}); one run cannot estimate its noise, repeat it")]
    Correlated {
        /// The block length the correlation needs, s.
        block_s: f64,
        /// Blocks of that length in the run.
        blocks: u32,
        /// Minimum blocks.
        min_blocks: u32,
    },
}

/// Fewest resamples accepted.
pub const MIN_RESAMPLES: u32 = 100;
/// Fewest successful requests accepted.
pub const MIN_REQUESTS: u64 = 10;
/// Fewest windows accepted.
pub const MIN_BLOCKS: u32 = 5;
/// Fewest resampling blocks (after grouping correlated windows) for an interval.
pub const MIN_EFFECTIVE_BLOCKS: u32 = 12;
/// Most windows by default.
const MAX_BLOCKS: f64 = 20_000.0;
/// Above this many chunk gaps, ITL percentile bounds come from a histogram.
const EXACT_GAPS_MAX: usize = 1 << 22;

// Fixed columns of the per-window sums.
const ONE: usize = 0;
const N_OK: usize = 1;
const OUT: usize = 2;
const IN: usize = 3;
const GOOD: usize = 4;
const FIXED: usize = 5;

/// Which latency metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lat {
    Ttft,
    E2el,
    Tpot,
    Itl,
}

const LATS: [Lat; 4] = [Lat::Ttft, Lat::E2el, Lat::Tpot, Lat::Itl];

/// The columns of one latency metric: `Σw`, `Σw·x`, `Σw·x²` at `base`, then one
/// `Σw·[x ≤ q]` per threshold.
#[derive(Debug, Clone)]
struct LatCols {
    base: usize,
    /// (rank in percent, reported value in ms, is the median).
    thresholds: Vec<(f64, f64, bool)>,
    /// The thresholds in ns, for chunk gaps.
    thresholds_ns: Vec<u64>,
}

fn lat_summary(result: &BenchmarkResult, lat: Lat) -> Option<&Summary> {
    match lat {
        Lat::Ttft => result.ttft.as_ref(),
        Lat::E2el => result.e2el.as_ref(),
        Lat::Tpot => result.tpot.as_ref(),
        Lat::Itl => result.itl.as_ref(),
    }
}

/// One request's contribution, before it is added to its window.
struct Walker<'a> {
    conv: Convention,
    cols: [Option<LatCols>; 4],
    slo: Option<&'a Slo>,
    t0_ns: u64,
    block_ns: u64,
    blocks: usize,
    exact_gaps: bool,
}

/// What one thread collects.
struct Part {
    sums: BlockSums,
    /// Per-request values (ms) and weights of TTFT, E2EL, TPOT and (guidellm) ITL.
    values: [Vec<(f64, f64)>; 4],
    /// vLLM chunk gaps, ms (when exact).
    gaps: Vec<f64>,
    /// vLLM chunk gaps, histogram (when not exact).
    hist: Vec<u64>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Walker<'_> {
    fn new_part(&self) -> Part {
        let k = self.k();
        Part {
            sums: BlockSums::new(self.blocks, k),
            values: Default::default(),
            gaps: Vec::new(),
            hist: if self.conv == Convention::Vllm && !self.exact_gaps {
                vec![0; HIST_LEN]
            } else {
                Vec::new()
            },
        }
    }

    fn k(&self) -> usize {
        self.cols
            .iter()
            .flatten()
            .map(|c| c.base + 3 + c.thresholds.len())
            .max()
            .unwrap_or(FIXED)
            .max(FIXED)
    }

    fn success(&self, r: &RequestRecord) -> bool {
        match self.conv {
            Convention::Vllm => {
                r.outcome.is_success() && (!r.chunks.is_empty() || !r.response.is_streamed())
            }
            Convention::Guidellm => r.outcome.is_success(),
        }
    }

    /// Adds latency value `x` (ms) with weight `w` to metric `lat` of `row`.
    fn add_lat(&self, part: &mut Part, row: usize, lat: Lat, x: f64, w: f64) {
        let Some(c) = &self.cols[lat as usize] else {
            return;
        };
        let cols = &mut part.sums.cols[row..];
        cols[c.base] += w;
        cols[c.base + 1] += w * x;
        cols[c.base + 2] += w * x * x;
        for (j, &(_, q, _)) in c.thresholds.iter().enumerate() {
            if x <= q {
                cols[c.base + 3 + j] += w;
            }
        }
        part.values[lat as usize].push((x, w));
    }

    /// Adds a request's counts to the windows it streamed in: its output tokens where its
    /// chunks arrived, and its request, input-token and goodput counts in proportion (a
    /// request's share of a window is the share of its chunk tokens that arrived there).
    /// A request without chunk tokens counts in `end_block`.
    fn credit(
        &self,
        sums: &mut BlockSums,
        r: &RequestRecord,
        end_block: usize,
        out: u64,
        input: u64,
        good: bool,
    ) {
        let k = sums.k;
        let good = if good { 1.0 } else { 0.0 };
        let mut add = |b: usize, share: f64| {
            let cols = &mut sums.cols[b * k..b * k + k];
            cols[N_OK] += share;
            cols[OUT] += share * out as f64;
            cols[IN] += share * input as f64;
            cols[GOOD] += share * good;
        };
        let client: u64 = r.chunks.iter().map(|c| u64::from(c.tokens)).sum();
        if client == 0 {
            add(end_block, 1.0);
            return;
        }
        let inv = 1.0 / client as f64;
        let last = self.blocks - 1;
        let block_of =
            |t: u64| ((t.saturating_sub(self.t0_ns)) / self.block_ns).min(last as u64) as usize;
        let mut b = block_of(nanos(r.chunks[0].at));
        let mut lo = self.t0_ns.saturating_add(b as u64 * self.block_ns);
        let mut hi = lo.saturating_add(self.block_ns);
        let mut acc = 0u64;
        for c in &r.chunks {
            let t = nanos(c.at);
            if t >= hi && b < last || t < lo {
                add(b, acc as f64 * inv);
                acc = 0;
                b = block_of(t);
                lo = self.t0_ns.saturating_add(b as u64 * self.block_ns);
                hi = lo.saturating_add(self.block_ns);
            }
            acc += u64::from(c.tokens);
        }
        add(b, acc as f64 * inv);
    }

    fn walk(&self, records: &[RequestRecord]) -> Part {
        let mut part = self.new_part();
        let k = part.sums.k;
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let itl_cols = self.cols[Lat::Itl as usize].clone();
        let mut below = vec![0u64; itl_cols.as_ref().map_or(0, |c| c.thresholds_ns.len())];
        for r in records.iter().filter(|r| self.success(r)) {
            let end = match self.conv {
                // An answer that came whole ends with its body, as its latency does.
                Convention::Vllm if !r.response.is_streamed() => record_end(r),
                Convention::Vllm => r.chunks.last().map_or(r.sent_at, |c| c.at),
                Convention::Guidellm => record_end(r),
            };
            let b = ((nanos(end).saturating_sub(self.t0_ns)) / self.block_ns.max(1))
                .min(self.blocks as u64 - 1) as usize;
            let row = b * k;
            let out = match self.conv {
                Convention::Vllm => r.output_tokens(),
                Convention::Guidellm => r
                    .usage_output_tokens
                    .or_else(|| (!r.chunks.is_empty()).then(|| r.client_output_tokens()))
                    .unwrap_or(0),
            };
            let input = r.input_tokens().unwrap_or(0);
            let ttft = r.ttft().map(ms);
            let e2el = ms(end.saturating_sub(r.sent_at));
            let tpot = match self.conv {
                Convention::Vllm => (out > 1)
                    .then(|| (e2el - ttft.unwrap_or(0.0)) / (out - 1) as f64)
                    .map(|x| (x, 1.0)),
                Convention::Guidellm => (out > 0).then(|| {
                    let last = r.chunks.last().map_or(end, |c| c.at);
                    (ms(last.saturating_sub(r.sent_at)) / out as f64, out as f64)
                }),
            };
            let good = self.slo.is_some_and(|slo| {
                let t = ttft.unwrap_or(0.0) / 1000.0;
                let tp = tpot.map_or(0.0, |x| x.0) / 1000.0;
                meets_slo(slo, t, tp, e2el / 1000.0) && (!slo.valid || checks_pass(r))
            });
            self.credit(&mut part.sums, r, b, out, input, good);
            if let Some(t) = ttft {
                self.add_lat(&mut part, row, Lat::Ttft, t, 1.0);
            }
            self.add_lat(&mut part, row, Lat::E2el, e2el, 1.0);
            if let Some((x, w)) = tpot {
                self.add_lat(&mut part, row, Lat::Tpot, x, w);
            }
            match (self.conv, &itl_cols) {
                (Convention::Guidellm, Some(_)) => {
                    if let (Some(f), Some(l)) = (r.chunks.first(), r.chunks.last()) {
                        if out > 1 {
                            let x = ms(l.at.saturating_sub(f.at)) / (out - 1) as f64;
                            self.add_lat(&mut part, row, Lat::Itl, x, out as f64);
                        }
                    }
                }
                (Convention::Vllm, Some(c)) => {
                    below.iter_mut().for_each(|x| *x = 0);
                    let (mut n, mut sum, mut sumsq) = (0u64, 0.0f64, 0.0f64);
                    let mut prev = None;
                    for ch in &r.chunks {
                        let t = nanos(ch.at);
                        if let Some(p) = prev {
                            let g: u64 = t.saturating_sub(p);
                            let gm = g as f64 * 1e-6;
                            n += 1;
                            sum += gm;
                            sumsq += gm * gm;
                            for (cnt, &q) in below.iter_mut().zip(&c.thresholds_ns) {
                                *cnt += u64::from(g <= q);
                            }
                            if self.exact_gaps {
                                part.gaps.push(gm);
                            } else {
                                part.hist[hist_bucket(g).min(HIST_LEN - 1)] += 1;
                            }
                        }
                        prev = Some(t);
                    }
                    let cols = &mut part.sums.cols[row..row + k];
                    cols[c.base] += n as f64;
                    cols[c.base + 1] += sum;
                    cols[c.base + 2] += sumsq;
                    for (j, &cnt) in below.iter().enumerate() {
                        cols[c.base + 3 + j] += cnt as f64;
                    }
                }
                _ => {}
            }
        }
        part
    }
}

/// Percentile interval and standard deviation of replicate values (NaNs skipped).
fn percentile_interval(mut xs: Vec<f64>, alpha: f64) -> Option<Interval> {
    xs.retain(|x| x.is_finite());
    if xs.len() < 2 {
        return None;
    }
    let (_, se) = bootstrap::mean_sd(&xs);
    let lo = quantile_linear(&mut xs, alpha / 2.0)?;
    let hi = quantile_linear(&mut xs, 1.0 - alpha / 2.0)?;
    Some(Interval { lo, hi, se })
}

/// Transfers an interval of a proxy estimator (point `proxy`) to the reported figure.
fn transfer(i: Interval, proxy: f64, reported: f64) -> Interval {
    if proxy > 0.0 && reported.is_finite() && proxy.is_finite() {
        let s = reported / proxy;
        Interval {
            lo: i.lo * s,
            hi: i.hi * s,
            se: i.se * s.abs(),
        }
    } else {
        let d = reported - proxy;
        Interval {
            lo: i.lo + d,
            hi: i.hi + d,
            se: i.se,
        }
    }
}

/// The 95 % (or chosen) intervals of `result`'s figures, from the `records` it was computed
/// from (with the same convention, duration and percentiles). See the module docs.
pub fn run_intervals(
    records: &[RequestRecord],
    result: &BenchmarkResult,
    opts: &IntervalOptions,
) -> Result<RunIntervals, IntervalError> {
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        return Err(IntervalError::BadConfidence(opts.confidence));
    }
    if opts.resamples < MIN_RESAMPLES {
        return Err(IntervalError::TooFewResamples {
            got: opts.resamples,
            min: MIN_RESAMPLES,
        });
    }
    let conv = result.meta.convention.unwrap_or(Convention::Vllm);
    let mut walker = Walker {
        conv,
        cols: Default::default(),
        slo: opts.goodput.as_ref().filter(|s| s.judges_requests()),
        t0_ns: records.iter().map(|r| nanos(r.sent_at)).min().unwrap_or(0),
        block_ns: 1,
        blocks: 1,
        exact_gaps: true,
    };
    let successes = records.iter().filter(|r| walker.success(r)).count() as u64;
    let blocks = opts
        .blocks
        .unwrap_or_else(|| (successes as f64).powf(2.0 / 3.0).round().min(MAX_BLOCKS) as u32);
    if successes < MIN_REQUESTS || blocks < MIN_BLOCKS {
        return Err(IntervalError::TooFewRequests {
            successes,
            blocks,
            min_requests: MIN_REQUESTS,
            min_blocks: MIN_BLOCKS,
        });
    }
    let duration = result
        .duration_ms
        .filter(|d| d.is_finite() && *d > 0.0)
        .map(|d| Duration::from_secs_f64(d / 1000.0))
        .unwrap_or_else(|| default_duration(records));
    let duration_ns = nanos(duration).max(1);
    walker.blocks = blocks as usize;
    walker.block_ns = duration_ns.div_ceil(u64::from(blocks)).max(1);
    let block_s = duration.as_secs_f64() / f64::from(blocks);
    let mut next = FIXED;
    for lat in LATS {
        let Some(s) = lat_summary(result, lat) else {
            continue;
        };
        let mut thresholds = Vec::new();
        if let Some(m) = s.median {
            thresholds.push((50.0, m, true));
        }
        for p in &s.percentiles {
            if let Some(v) = p.value.filter(|v| v.is_finite()) {
                if (0.0..=100.0).contains(&p.p) {
                    thresholds.push((p.p, v, false));
                }
            }
        }
        let thresholds_ns = thresholds
            .iter()
            .map(|t| (t.1 * 1e6).max(0.0).floor() as u64)
            .collect();
        let n = thresholds.len();
        walker.cols[lat as usize] = Some(LatCols {
            base: next,
            thresholds,
            thresholds_ns,
        });
        next += 3 + n;
    }
    let total_gaps: usize = records
        .iter()
        .filter(|r| walker.success(r))
        .map(|r| r.chunks.len().saturating_sub(1))
        .sum();
    walker.exact_gaps = total_gaps <= EXACT_GAPS_MAX;

    // The walk, over contiguous ranges of records on every core.
    let threads = bootstrap::threads();
    let per = records.len().div_ceil(threads).max(1);
    let parts: Vec<Part> = std::thread::scope(|s| {
        let handles: Vec<_> = records
            .chunks(per)
            .map(|chunk| {
                let w = &walker;
                s.spawn(move || w.walk(chunk))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut parts = parts.into_iter();
    let mut all = parts.next().unwrap_or_else(|| walker.new_part());
    for p in parts {
        all.sums.merge(&p.sums);
        for (a, b) in all.values.iter_mut().zip(p.values) {
            a.extend(b);
        }
        all.gaps.extend(p.gaps);
        for (a, b) in all.hist.iter_mut().zip(&p.hist) {
            *a += b;
        }
    }
    let k = all.sums.k;
    for row in all.sums.cols.chunks_exact_mut(k) {
        row[ONE] = 1.0;
    }

    // Blocks of consecutive windows, as long as the run's correlation needs (the automatic
    // length of the most correlated per-window series), unless the caller fixed them.
    let windows = blocks as usize;
    let series =
        |col: usize| -> Vec<f64> { all.sums.cols.chunks_exact(k).map(|r| r[col]).collect() };
    let mut probe = vec![OUT, N_OK];
    for c in walker.cols.iter().flatten() {
        probe.push(c.base + 1);
    }
    let block_windows = if opts.blocks.is_some() {
        1
    } else {
        // The upper median over the series: one series' chance estimate does not decide.
        let mut bs: Vec<f64> = probe
            .iter()
            .map(|&c| bootstrap::auto_block_length(&series(c), (windows / 2).min(1000)))
            .collect();
        bs.sort_by(f64::total_cmp);
        bs.get(bs.len() / 2).copied().unwrap_or(1.0).round() as usize
    };
    let sums = all.sums.coarsen(block_windows.max(1));
    let effective = sums.blocks() as u32;
    if effective < MIN_EFFECTIVE_BLOCKS {
        return Err(IntervalError::Correlated {
            block_s: block_s * block_windows as f64,
            blocks: effective,
            min_blocks: MIN_EFFECTIVE_BLOCKS,
        });
    }

    let resamples = opts.resamples as usize;
    let reps = bootstrap::replicate_totals(&sums, resamples, opts.seed, threads);
    let point = sums.totals();
    let alpha = 1.0 - opts.confidence;
    let z = normal_quantile(1.0 - alpha / 2.0);

    let mut out = RunIntervals::empty(opts.confidence, opts.resamples, opts.seed);
    out.blocks = effective;

    // Throughputs: Σ count / (Σ windows · window length).
    let rate = |t: &[f64], cols: &[usize]| -> f64 {
        cols.iter().map(|&c| t[c]).sum::<f64>() / (t[ONE] * block_s)
    };
    let throughput = |cols: &[usize], reported: Option<f64>| -> Option<Interval> {
        let reported = reported?;
        let xs: Vec<f64> = reps.chunks_exact(k).map(|t| rate(t, cols)).collect();
        Some(transfer(
            percentile_interval(xs, alpha)?,
            rate(&point, cols),
            reported,
        ))
    };
    out.request_throughput_per_s = throughput(&[N_OK], result.request_throughput_per_s);
    out.output_throughput_per_s = throughput(&[OUT], result.output_throughput_per_s);
    out.input_throughput_per_s = throughput(&[IN], result.input_throughput_per_s);
    out.total_token_throughput_per_s = throughput(&[IN, OUT], result.total_token_throughput_per_s);
    if opts.goodput.is_some_and(|s| s.judges_requests()) {
        out.request_goodput_per_s = throughput(&[GOOD], result.request_goodput_per_s);
    }

    // Latencies.
    let mut values = std::mem::take(&mut all.values);
    for lat in LATS {
        let (Some(c), Some(summary)) = (&walker.cols[lat as usize], lat_summary(result, lat))
        else {
            continue;
        };
        let weighted = conv == Convention::Guidellm && matches!(lat, Lat::Tpot | Lat::Itl);
        let mut qf = if lat == Lat::Itl && conv == Convention::Vllm {
            if walker.exact_gaps {
                QuantileFn::Linear(std::mem::take(&mut all.gaps))
            } else {
                QuantileFn::Hist(std::mem::take(&mut all.hist))
            }
        } else {
            QuantileFn::new(std::mem::take(&mut values[lat as usize]), weighted)
        };
        let b = c.base;
        let mean_of = |t: &[f64]| t[b + 1] / t[b];
        let std_of = |t: &[f64]| {
            let m = t[b + 1] / t[b];
            (t[b + 2] / t[b] - m * m).max(0.0).sqrt()
        };
        let mut si = SummaryIntervals::default();
        let stat = |f: &dyn Fn(&[f64]) -> f64, reported: Option<f64>| -> Option<Interval> {
            let reported = reported?;
            let xs: Vec<f64> = reps.chunks_exact(k).map(f).collect();
            Some(transfer(
                percentile_interval(xs, alpha)?,
                f(&point),
                reported,
            ))
        };
        // A mean (and sd) whose variance looks infinite — a few requests, e.g. of one
        // stall, dominate the sum — has no honest bootstrap interval.
        if qf.tail_index().is_none_or(|a| a >= MIN_TAIL_INDEX) {
            si.mean = stat(&mean_of, summary.mean);
            si.std = stat(&std_of, summary.std);
        }
        // The CDF bounds of every threshold first, then all their quantiles in one pass.
        // Woodruff: the standard error of the empirical CDF at the reported value, from the
        // block bootstrap but never below the independent-sample (binomial) one; the
        // effective sample it implies must hold enough requests beyond the percentile.
        let n_values = qf.sample_size();
        let mut wanted: Vec<(usize, f64, f64)> = Vec::new(); // (threshold, lo q, hi q)
        for (j, &(p, _, _)) in c.thresholds.iter().enumerate() {
            let col = b + 3 + j;
            let cdf_point = point[col] / point[b];
            let deltas: Vec<f64> = reps
                .chunks_exact(k)
                .map(|t| t[col] / t[b] - cdf_point)
                .collect();
            let Some(d) = percentile_interval(deltas, alpha) else {
                continue;
            };
            let q = p / 100.0;
            if let Some((lo, hi)) = cdf_bounds(q, d.se, n_values, z) {
                wanted.push((j, lo, hi));
            }
        }
        let qs: Vec<f64> = wanted
            .iter()
            .flat_map(|&(j, lo, hi)| [lo, hi, c.thresholds[j].0 / 100.0])
            .collect();
        let values = qf.at_many(&qs);
        for (n, &(j, _, _)) in wanted.iter().enumerate() {
            let (p, reported, is_median) = c.thresholds[j];
            let (Some(lo), Some(hi), Some(mid)) =
                (values[3 * n], values[3 * n + 1], values[3 * n + 2])
            else {
                continue;
            };
            let raw = Interval {
                lo,
                hi,
                se: (hi - lo) / (2.0 * z),
            };
            let iv = transfer(raw, mid, reported);
            if is_median {
                si.median = Some(iv);
            } else {
                si.percentiles.push(PercentileInterval { p, interval: iv });
            }
        }
        let slot = match lat {
            Lat::Ttft => &mut out.ttft,
            Lat::E2el => &mut out.e2el,
            Lat::Tpot => &mut out.tpot,
            Lat::Itl => &mut out.itl,
        };
        *slot = Some(si);
    }
    Ok(out)
}

/// [`run_intervals`] stored into `result.intervals`.
pub fn attach_intervals(
    records: &[RequestRecord],
    result: &mut BenchmarkResult,
    opts: &IntervalOptions,
) -> Result<(), IntervalError> {
    result.intervals = Some(run_intervals(records, result, opts)?);
    Ok(())
}
