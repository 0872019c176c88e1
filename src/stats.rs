//! Statistics over samples: exact summaries that reproduce numpy's arithmetic bit for bit
//! (vLLM's `np.mean`/`np.std`/`np.median`/`np.percentile`), guidellm's weighted inverse-CDF
//! distributions, and a streaming, bounded-memory [`Streaming`] summary on `hdrhistogram`
//! that can be serialized and merged across collectors, processes and hosts.
//!
//! # Exact, numpy convention
//!
//! * [`pairwise_sum`] is numpy's float64 summation (8 accumulators, blocks of 128, recursive
//!   halving), so [`mean`] and [`std()`] equal `np.mean` / `np.std` (population, `ddof=0`).
//! * [`percentile_linear`] is `np.percentile(x, p)` with the default `'linear'` method,
//!   including numpy's two-sided interpolation (`b − (b−a)(1−t)` for `t ≥ 0.5`).
//! * [`median_sorted`] is `np.median`: the middle value, or the mean of the two middle values.
//!
//! ```
//! use servebench::stats::{numpy_summary, percentile_linear};
//! let mut xs = vec![4.0, 1.0, 3.0, 2.0];
//! let s = numpy_summary(&mut xs, &[50.0, 90.0]).unwrap();
//! assert_eq!(s.mean, 2.5);
//! assert_eq!(s.median, 2.5);
//! assert!((s.percentiles[1].1 - 3.7).abs() < 1e-12);
//! assert_eq!(percentile_linear(&[1.0, 2.0, 3.0, 4.0], 100.0), Some(4.0));
//! ```

use std::cmp::Ordering;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `num / den` correctly rounded to the nearest f64 (ties to even); `None` when `den` is
/// zero or the quotient is outside f64's normal range (the only rounding is this one, so
/// it is exact to half an ulp whatever the sizes of `num` and `den`).
pub(crate) fn ratio_f64(num: u128, den: u128) -> Option<f64> {
    if den == 0 {
        return None;
    }
    if num == 0 {
        return Some(0.0);
    }
    // 55 significant bits of the quotient in `q` (value = (q + frac) · 2^exp, frac < 1),
    // the rest of the quotient as `sticky`.
    let mut q = num / den;
    let mut rem = num % den;
    let mut exp: i32 = 0;
    let mut sticky = false;
    if q >> 55 != 0 {
        let shift = 128 - q.leading_zeros() - 55;
        sticky = q & ((1u128 << shift) - 1) != 0;
        q >>= shift;
        exp = shift as i32;
    } else {
        while q >> 54 == 0 {
            // Next bit of the quotient: rem < den, so 2·rem ≥ den ⇔ rem ≥ den − rem.
            let bit = rem >= den - rem;
            rem = if bit { rem - (den - rem) } else { rem << 1 };
            q = (q << 1) | u128::from(bit);
            exp -= 1;
            if exp < -1200 {
                return None;
            }
        }
    }
    sticky |= rem != 0;
    // Round 55 bits to 53.
    let mut m = (q >> 2) as u64;
    let guard = (q >> 1) & 1 == 1;
    let rest = q & 1 == 1 || sticky;
    if guard && (rest || m & 1 == 1) {
        m += 1;
    }
    let mut e = exp + 2;
    if m >> 53 != 0 {
        m >>= 1;
        e += 1;
    }
    // m < 2^53 is exact as an f64; scale by 2^e (exact in the normal range).
    let top = e + 52;
    if !(-1022..=1023).contains(&top) {
        return None;
    }
    let scale = |p: i32| f64::from_bits(((1023 + p) as u64) << 52);
    // 2^e may itself be subnormal while the product is normal: scale in two steps.
    let half = e / 2;
    if !(-1022..=1023).contains(&half) || !(-1022..=1023).contains(&(e - half)) {
        return None;
    }
    Some(m as f64 * scale(half) * scale(e - half))
}

/// Exact first and second moments of integer samples (nanosecond gaps), for a mean and a
/// population standard deviation with no rounding until the final conversion. Sums are
/// u128; an overflow (beyond any realistic run) is remembered and makes
/// [`Moments::mean_std`] return `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Moments {
    pub(crate) n: u64,
    pub(crate) sum: u128,
    pub(crate) sum_sq: u128,
    pub(crate) overflow: bool,
}

impl Moments {
    /// Add one sample.
    #[inline]
    pub(crate) fn add(&mut self, x: u64) {
        let x = u128::from(x);
        self.add_sums(1, x, x * x);
    }

    /// Add `n` samples whose sum and sum of squares are given.
    #[inline]
    pub(crate) fn add_sums(&mut self, n: u64, sum: u128, sum_sq: u128) {
        self.n += n;
        let (s, o1) = self.sum.overflowing_add(sum);
        let (q, o2) = self.sum_sq.overflowing_add(sum_sq);
        self.sum = s;
        self.sum_sq = q;
        self.overflow |= o1 | o2;
    }

    /// Take the samples of `other` too.
    pub(crate) fn merge(&mut self, other: &Moments) {
        self.add_sums(other.n, other.sum, other.sum_sq);
        self.overflow |= other.overflow;
    }

    /// `(mean, std)` of the samples divided by `scale` (1e9 for ns → s): the mean correctly
    /// rounded, the standard deviation the correctly rounded square root of the correctly
    /// rounded population variance (within one ulp of exact). `None` for no samples or an
    /// overflow.
    pub(crate) fn mean_std(&self, scale: u64) -> Option<(f64, f64)> {
        if self.n == 0 || self.overflow {
            return None;
        }
        let n = u128::from(self.n);
        let scale = u128::from(scale);
        let mean = ratio_f64(self.sum, n.checked_mul(scale)?)?;
        // n²·Var = n·Σx² − (Σx)² ≥ 0 (Cauchy–Schwarz), exactly.
        let v = n
            .checked_mul(self.sum_sq)?
            .checked_sub(self.sum.checked_mul(self.sum)?)?;
        let den = n.checked_mul(n)?.checked_mul(scale.checked_mul(scale)?)?;
        let var = ratio_f64(v, den)?;
        Some((mean, var.sqrt()))
    }
}

/// numpy's pairwise-summation block size (`PW_BLOCKSIZE`).
const PW_BLOCKSIZE: usize = 128;

/// Sum of `xs` exactly as numpy's float64 `add.reduce` adds a contiguous array: pairwise
/// summation with 8 partial sums per block of at most 128 values.
pub fn pairwise_sum(xs: &[f64]) -> f64 {
    let mut rest = xs;
    pairwise_tree(xs.len(), &mut |len| {
        let (leaf, tail) = rest.split_at(len);
        rest = tail;
        leaf_sum(leaf)
    })
}

/// numpy's pairwise summation tree over `n` values, with each leaf (a run of at most
/// [`PW_BLOCKSIZE`] consecutive values, in order) summed by `leaf(len)`: the leaves are
/// requested left to right, so `leaf` can consume the values from a stream.
pub(crate) fn pairwise_tree(n: usize, leaf: &mut impl FnMut(usize) -> f64) -> f64 {
    if n <= PW_BLOCKSIZE {
        leaf(n)
    } else {
        let n2 = pairwise_split(n);
        let a = pairwise_tree(n2, leaf);
        let b = pairwise_tree(n - n2, leaf);
        a + b
    }
}

/// Where numpy's pairwise summation of `n > 128` values splits them: the left half's
/// length (`n / 2` rounded down to a multiple of 8).
pub(crate) fn pairwise_split(n: usize) -> usize {
    let n2 = n / 2;
    n2 - n2 % 8
}

/// numpy's sum of one pairwise leaf (at most 128 values): a plain loop below 8 values,
/// else 8 partial sums combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))` plus the rest.
pub(crate) fn leaf_sum(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in xs {
            res += x;
        }
        return res;
    }
    let mut r = [0.0f64; 8];
    r.copy_from_slice(&xs[..8]);
    let full = n - n % 8;
    for block in xs[8..full].chunks_exact(8) {
        for (acc, &x) in r.iter_mut().zip(block) {
            *acc += x;
        }
    }
    let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for &x in &xs[full..] {
        res += x;
    }
    res
}

/// `np.mean(xs)`; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(pairwise_sum(xs) / xs.len() as f64)
}

/// `np.std(xs)` (population standard deviation, `ddof=0`), computed as numpy does: the
/// mean, then the pairwise sum of squared deviations divided by `n`. `None` when empty.
pub fn std(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    Some(variance_about(xs, m).sqrt())
}

/// Population variance about a given mean, with numpy's summation of the squared
/// deviations (in blocks, so no second full-size buffer is allocated).
fn variance_about(xs: &[f64], m: f64) -> f64 {
    // numpy materialises (x - m)^2 and pairwise-sums it: the same tree, with the squared
    // deviations computed leaf by leaf.
    let mut rest = xs;
    let mut buf = [0.0f64; PW_BLOCKSIZE];
    let sum = pairwise_tree(xs.len(), &mut |len| {
        let (leaf, tail) = rest.split_at(len);
        rest = tail;
        let sq = &mut buf[..len];
        for (d, &x) in sq.iter_mut().zip(leaf) {
            let dev = x - m;
            *d = dev * dev;
        }
        leaf_sum(sq)
    });
    sum / xs.len() as f64
}

/// numpy's `_lerp(a, b, t)`: `a + (b−a)·t`, or `b − (b−a)·(1−t)` when `t ≥ 0.5`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Where numpy's `'linear'` method looks for percentile `p` in `n` sorted values: the
/// lower index, the upper index and the interpolation weight. `None` when `n == 0` or `p`
/// is not in `[0, 100]`.
fn linear_position(n: usize, p: f64) -> Option<(usize, usize, f64)> {
    if n == 0 || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let q = p / 100.0;
    let virtual_index = (n - 1) as f64 * q;
    let last = n - 1;
    if virtual_index >= last as f64 {
        return Some((last, last, 0.0));
    }
    let lo = virtual_index.floor();
    let gamma = virtual_index - lo;
    let lo = lo as usize;
    Some((lo, (lo + 1).min(last), gamma))
}

/// `np.percentile(sorted, p)` (method `'linear'`) of values **already sorted ascending**.
/// `None` for an empty slice or `p` outside `[0, 100]`.
pub fn percentile_linear(sorted: &[f64], p: f64) -> Option<f64> {
    let (lo, hi, t) = linear_position(sorted.len(), p)?;
    Some(lerp(sorted[lo], sorted[hi], t))
}

/// `np.median(sorted)` of values already sorted ascending; `None` when empty.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    if n % 2 == 1 {
        Some(sorted[n / 2])
    } else {
        Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0)
    }
}

/// The values of the requested order statistics (0-based ranks into the sorted order) of
/// `values`, in O(n) without a full sort: small inputs use successive selections on a
/// shrinking slice (`values` is reordered); large ones (≥ 65 536 values) a two-pass radix
/// selection on the values' order-preserving bit patterns (a histogram of the top 16
/// varying bits, then an exact selection among the few values sharing each wanted bucket).
/// Ranks ≥ `values.len()` give `NaN`. Order is that of [`f64::total_cmp`].
pub fn order_statistics(values: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    if values.len() >= RADIX_MIN {
        return radix_order_statistics(values, ranks);
    }
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by_key(|&i| ranks[i]);
    let mut out = vec![f64::NAN; ranks.len()];
    let mut lo = 0usize;
    let mut last: Option<(usize, f64)> = None;
    for i in order {
        let r = ranks[i];
        if r >= values.len() {
            continue;
        }
        if let Some((lr, lv)) = last {
            if lr == r {
                out[i] = lv;
                continue;
            }
        }
        let (_, v, _) = values[lo..].select_nth_unstable_by(r - lo, f64::total_cmp);
        let v = *v;
        out[i] = v;
        last = Some((r, v));
        lo = r + 1;
    }
    out
}

const RADIX_MIN: usize = 1 << 16;
const RADIX_BITS: u32 = 16;

/// A u64 whose unsigned order is [`f64::total_cmp`]'s order.
#[inline]
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

#[inline]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

fn radix_order_statistics(values: &[f64], ranks: &[usize]) -> Vec<f64> {
    let n = values.len();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for &v in values {
        let k = order_key(v);
        lo = lo.min(k);
        hi = hi.max(k);
    }
    let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(RADIX_BITS);
    let bucket = |v: f64| ((order_key(v) - lo) >> shift) as usize;
    let mut hist = vec![0usize; 1 << RADIX_BITS];
    for &v in values {
        hist[bucket(v)] += 1;
    }
    // start[b] = number of values in buckets before b.
    let mut start = Vec::with_capacity(hist.len());
    let mut acc = 0usize;
    for &h in &hist {
        start.push(acc);
        acc += h;
    }
    // Where each rank falls: (bucket, rank within the bucket).
    let place: Vec<Option<(usize, usize)>> = ranks
        .iter()
        .map(|&r| {
            (r < n).then(|| {
                let b = start.partition_point(|&s| s <= r) - 1;
                (b, r - start[b])
            })
        })
        .collect();
    if shift == 0 {
        // Every bucket holds a single bit pattern: no second pass needed.
        return place
            .iter()
            .map(|p| p.map_or(f64::NAN, |(b, _)| from_order_key(lo + b as u64)))
            .collect();
    }
    let mut slot = vec![u32::MAX; 1 << RADIX_BITS];
    let mut gathered: Vec<Vec<f64>> = Vec::new();
    for &(b, _) in place.iter().flatten() {
        if slot[b] == u32::MAX {
            slot[b] = gathered.len() as u32;
            gathered.push(Vec::with_capacity(hist[b]));
        }
    }
    for &v in values {
        let s = slot[bucket(v)];
        if s != u32::MAX {
            gathered[s as usize].push(v);
        }
    }
    place
        .iter()
        .map(|p| match p {
            Some((b, local)) => {
                let g = &mut gathered[slot[*b] as usize];
                *g.select_nth_unstable_by(*local, f64::total_cmp).1
            }
            None => f64::NAN,
        })
        .collect()
}

/// Exact summary of a sample in numpy's conventions (what vLLM reports). Units are those of
/// the input.
#[derive(Debug, Clone, PartialEq)]
pub struct NumpySummary {
    /// Number of values.
    pub count: usize,
    /// `np.mean`.
    pub mean: f64,
    /// `np.median`.
    pub median: f64,
    /// `np.std` (population).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// `(p, np.percentile(x, p))` in the order asked; `NaN` for `p` outside `[0, 100]`.
    pub percentiles: Vec<(f64, f64)>,
}

/// Summarize `values` as numpy does (see the module docs). `values` is reordered (partial
/// selection, not a full sort). `None` for an empty slice — vLLM substitutes `0` then.
pub fn numpy_summary(values: &mut [f64], percentiles: &[f64]) -> Option<NumpySummary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean_v = pairwise_sum(values) / n as f64;
    let std_v = variance_about(values, mean_v).sqrt();
    let (mut min_v, mut max_v) = (f64::INFINITY, f64::NEG_INFINITY);
    for &x in values.iter() {
        if x.total_cmp(&min_v) == Ordering::Less {
            min_v = x;
        }
        if x.total_cmp(&max_v) == Ordering::Greater {
            max_v = x;
        }
    }
    let ranks = SummaryRanks::new(n, percentiles);
    let vals = order_statistics(values, &ranks.ranks);
    Some(ranks.summary(mean_v, std_v, min_v, max_v, &vals))
}

/// The order statistics a [`NumpySummary`] of `n` values needs, and how to assemble it
/// from them (shared by [`numpy_summary`] and computations that select the values their
/// own way).
pub(crate) struct SummaryRanks<'a> {
    n: usize,
    percentiles: &'a [f64],
    positions: Vec<Option<(usize, usize, f64)>>,
    /// 0-based ranks: the median's two (equal for odd `n`), then each valid percentile's
    /// lower and upper index.
    pub(crate) ranks: Vec<usize>,
}

impl<'a> SummaryRanks<'a> {
    /// Ranks for `n > 0` values.
    pub(crate) fn new(n: usize, percentiles: &'a [f64]) -> Self {
        let mut ranks = vec![n.saturating_sub(1) / 2, n / 2];
        let positions: Vec<Option<(usize, usize, f64)>> =
            percentiles.iter().map(|&p| linear_position(n, p)).collect();
        for &(lo, hi, _) in positions.iter().flatten() {
            ranks.push(lo);
            ranks.push(hi);
        }
        SummaryRanks {
            n,
            percentiles,
            positions,
            ranks,
        }
    }

    /// The summary, given the values at [`SummaryRanks::ranks`] (`vals[i]` for `ranks[i]`).
    pub(crate) fn summary(
        &self,
        mean: f64,
        std: f64,
        min: f64,
        max: f64,
        vals: &[f64],
    ) -> NumpySummary {
        let at = |i: usize| vals.get(i).copied().unwrap_or(f64::NAN);
        let median = if self.n % 2 == 1 {
            at(1)
        } else {
            (at(0) + at(1)) / 2.0
        };
        let mut out = Vec::with_capacity(self.percentiles.len());
        let mut k = 2;
        for (&p, pos) in self.percentiles.iter().zip(&self.positions) {
            match pos {
                Some((_, _, t)) => {
                    out.push((p, lerp(at(k), at(k + 1), *t)));
                    k += 2;
                }
                None => out.push((p, f64::NAN)),
            }
        }
        NumpySummary {
            count: self.n,
            mean,
            median,
            std,
            min,
            max,
            percentiles: out,
        }
    }
}

// ------------------------------------------------------------------------------------------
// guidellm's weighted distributions
// ------------------------------------------------------------------------------------------

/// guidellm's standard percentiles, in percent: p001, p01, p05, p10, p25, p50, p75, p90,
/// p95, p99, p999.
pub const GUIDELLM_PERCENTILES: [f64; 11] = [
    0.1, 1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9,
];

/// The probabilities guidellm searches for its standard percentiles, as it writes them
/// (`0.999`, not `99.9 / 100`, which is one ulp larger).
const GUIDELLM_QUANTILES: [f64; 11] = [
    0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999,
];

/// Events closer than this (seconds) are merged by guidellm's rate and concurrency
/// distributions.
pub const GUIDELLM_MERGE_THRESHOLD_S: f64 = 1e-4;

const GUIDELLM_EPSILON: f64 = 1e-6;

fn guidellm_quantile(p: f64) -> f64 {
    GUIDELLM_PERCENTILES
        .iter()
        .position(|&g| g == p)
        .map_or(p / 100.0, |i| GUIDELLM_QUANTILES[i])
}

/// A weighted distribution summarized exactly as guidellm 0.8's `DistributionSummary`
/// does, reproducing its float arithmetic:
///
/// 1. sort by value, merge equal values by summing their weights, drop non-positive
///    weights (all weights become 1 if their sum is ≤ 1e-6);
/// 2. probabilities = weight / Σ weight, CDF = running sum in order;
/// 3. percentile `p` = the first value whose CDF ≥ `p/100` (inverse CDF, no interpolation);
/// 4. mean = Σ value·probability, variance = Σ (value − mean)²·probability (population),
///    mode = most probable value (smallest on ties), `total_sum` = mean × count.
///
/// `count` is the number of observations the caller states, else round(Σ weights).
/// An empty input gives all zeros and count 0.
///
/// ```
/// use servebench::stats::WeightedDistribution;
/// // 60 equal weights: the running CDF reaches 0.49999999999999994 at the 30th value,
/// // so guidellm's median is the 31st.
/// let xs: Vec<f64> = (1..=60).map(f64::from).collect();
/// let d = WeightedDistribution::from_values(&xs);
/// assert_eq!(d.median, 31.0);
/// assert_eq!(d.count, 60);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WeightedDistribution {
    /// Weighted mean.
    pub mean: f64,
    /// p50 by the inverse-CDF rule.
    pub median: f64,
    /// Most probable value.
    pub mode: f64,
    /// Weighted population variance.
    pub variance: f64,
    /// √variance.
    pub std_dev: f64,
    /// Smallest value with positive weight.
    pub min: f64,
    /// Largest value with positive weight.
    pub max: f64,
    /// Observations (see the type docs).
    pub count: u64,
    /// mean × count.
    pub total_sum: f64,
    /// `(p, value)` for [`GUIDELLM_PERCENTILES`].
    pub percentiles: Vec<(f64, f64)>,
    /// Distinct values, ascending (kept for [`WeightedDistribution::percentile`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<f64>,
    /// Running cumulative probability at each of `values`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<f64>,
}

impl WeightedDistribution {
    /// Unweighted values (weight 1 each).
    pub fn from_values(values: &[f64]) -> Self {
        let pairs: Vec<(f64, f64)> = values.iter().map(|&v| (v, 1.0)).collect();
        WeightedDistribution::from_weighted(&pairs, None)
    }

    /// `(value, weight)` pairs; `count` overrides the observation count.
    pub fn from_weighted(pairs: &[(f64, f64)], count: Option<u64>) -> Self {
        if pairs.is_empty() {
            return WeightedDistribution {
                percentiles: GUIDELLM_PERCENTILES.iter().map(|&p| (p, 0.0)).collect(),
                ..WeightedDistribution::default()
            };
        }
        let count = count.unwrap_or_else(|| {
            let w: Vec<f64> = pairs.iter().map(|p| p.1).collect();
            round_half_even_u64(pairwise_sum(&w))
        });
        let mut sorted = pairs.to_vec();
        sorted.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut values: Vec<f64> = Vec::with_capacity(sorted.len());
        let mut weights: Vec<f64> = Vec::with_capacity(sorted.len());
        for (v, w) in sorted {
            match values.last() {
                Some(&last) if last == v => {
                    if let Some(acc) = weights.last_mut() {
                        *acc += w;
                    }
                }
                _ => {
                    values.push(v);
                    weights.push(0.0 + w);
                }
            }
        }
        let (values, mut weights): (Vec<f64>, Vec<f64>) = values
            .into_iter()
            .zip(weights)
            .filter(|&(_, w)| w > 0.0)
            .unzip();
        let mut total = pairwise_sum(&weights);
        if total <= GUIDELLM_EPSILON {
            weights = vec![1.0; values.len()];
            total = pairwise_sum(&weights);
        }
        if values.is_empty() {
            return WeightedDistribution {
                count,
                ..WeightedDistribution::from_weighted(&[], None)
            };
        }
        let probs: Vec<f64> = weights.iter().map(|w| w / total).collect();
        let mut cdf = Vec::with_capacity(probs.len());
        let mut run = 0.0;
        for &p in &probs {
            run += p;
            cdf.push(run);
        }
        let products: Vec<f64> = values.iter().zip(&probs).map(|(v, p)| v * p).collect();
        let mean = pairwise_sum(&products);
        let dev: Vec<f64> = values
            .iter()
            .zip(&probs)
            .map(|(v, p)| {
                let d = v - mean;
                d * d * p
            })
            .collect();
        let variance = pairwise_sum(&dev);
        let mut mode_i = 0;
        for (i, &p) in probs.iter().enumerate() {
            if p > probs[mode_i] {
                mode_i = i;
            }
        }
        let mut d = WeightedDistribution {
            mean,
            median: 0.0,
            mode: values[mode_i],
            variance,
            std_dev: variance.sqrt(),
            min: values[0],
            max: values[values.len() - 1],
            count,
            total_sum: mean * count as f64,
            percentiles: Vec::new(),
            values,
            cdf,
        };
        d.percentiles = GUIDELLM_PERCENTILES
            .iter()
            .map(|&p| (p, d.percentile(p).unwrap_or(0.0)))
            .collect();
        d.median = d.percentile(50.0).unwrap_or(0.0);
        d
    }

    /// Percentile `p` (0–100) by guidellm's inverse-CDF rule: the first value whose
    /// cumulative probability is ≥ `p/100`. `None` when empty or `p` is outside `[0, 100]`.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.values.is_empty() || !(0.0..=100.0).contains(&p) {
            return None;
        }
        let q = guidellm_quantile(p);
        let i = self.cdf.partition_point(|&c| c < q);
        // guidellm would index past the end if rounding left the CDF's total below q.
        self.values.get(i).or(self.values.last()).copied()
    }

    /// The value of a standard percentile as stored in `percentiles`.
    pub fn standard_percentile(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(q, _)| *q == p)
            .map(|&(_, v)| v)
    }

    /// guidellm's rate distribution (`rate_distribution_from_timings`) over `(time_s,
    /// weight)` events: keep the events inside `[start, end]` and add zero-weight events
    /// there, merge events within 0.1 ms, give each event the time from the previous
    /// midpoint to the next (first: from `start`; last: to `end`, at least 1e-6 s), and
    /// summarize `weight / duration` weighted by duration. Its mean is Σ weight / (end −
    /// start); `count` is round(Σ weight).
    pub fn rate_from_timings(events: &[(f64, f64)], start: Option<f64>, end: Option<f64>) -> Self {
        let mut wt: Vec<(f64, f64)> = Vec::with_capacity(events.len() + 2);
        if let Some(s) = start {
            wt.push((s, 0.0));
            wt.extend(events.iter().copied().filter(|e| e.0 >= s));
        } else {
            wt.extend_from_slice(events);
        }
        if let Some(e) = end {
            wt.retain(|x| x.0 <= e);
            wt.push((e, 0.0));
        }
        wt.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let wt = merge_sorted_times(wt, GUIDELLM_MERGE_THRESHOLD_S);
        if wt.len() <= 1 {
            return WeightedDistribution::from_weighted(&[], None);
        }
        let n = wt.len();
        let mids: Vec<f64> = (0..n - 1).map(|i| (wt[i + 1].0 + wt[i].0) / 2.0).collect();
        let mut durations = vec![0.0; n];
        durations[0] = mids[0] - wt[0].0;
        for i in 1..n - 1 {
            durations[i] = mids[i] - mids[i - 1];
        }
        durations[n - 1] = (wt[n - 1].0 - mids[n - 2]).max(GUIDELLM_EPSILON);
        let occurrences: Vec<f64> = wt.iter().map(|e| e.1).collect();
        let count = round_half_even_u64(pairwise_sum(&occurrences));
        let pairs: Vec<(f64, f64)> = occurrences
            .iter()
            .zip(&durations)
            .map(|(o, d)| (o / d, *d))
            .collect();
        WeightedDistribution::from_weighted(&pairs, Some(count))
    }

    /// guidellm's concurrency distribution (`concurrency_distribution_from_timings`) over
    /// `(start_s, end_s, weight)` intervals: drop intervals outside `[start, end]`, turn the
    /// rest into +weight/−weight events, merge events within 0.1 ms, carry the level from
    /// before `start`, and summarize each level weighted by how long it lasts. The mean is
    /// the time-averaged concurrency; `count` is the number of intervals.
    pub fn concurrency_from_intervals(
        intervals: &[(f64, f64, f64)],
        start: Option<f64>,
        end: Option<f64>,
    ) -> Self {
        let kept: Vec<&(f64, f64, f64)> = intervals
            .iter()
            .filter(|iv| start.is_none_or(|s| iv.1 >= s) && end.is_none_or(|e| iv.0 <= e))
            .collect();
        let count = kept.len() as u64;
        let mut wt: Vec<(f64, f64)> = kept.iter().map(|iv| (iv.0, iv.2)).collect();
        wt.extend(kept.iter().map(|iv| (iv.1, -iv.2)));
        wt.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut wt = merge_sorted_times(wt, GUIDELLM_MERGE_THRESHOLD_S);
        if let (Some(s), false) = (start, wt.is_empty()) {
            let i = wt.partition_point(|e| e.0 < s);
            let prior = if i > 0 {
                let w: Vec<f64> = wt[..i].iter().map(|e| e.1).collect();
                pairwise_sum(&w)
            } else {
                0.0
            };
            let mut v = Vec::with_capacity(wt.len() - i + 1);
            v.push((s, prior));
            v.extend_from_slice(&wt[i..]);
            wt = v;
        }
        if let (Some(e), false) = (end, wt.is_empty()) {
            let i = wt.partition_point(|x| x.0 <= e);
            wt.truncate(i);
            wt.push((e, 0.0));
        }
        let mut levels = Vec::with_capacity(wt.len());
        let mut run = 0.0;
        for e in &wt {
            run += e.1;
            levels.push(run.max(0.0));
        }
        if levels.len() <= 1 {
            return match levels.first() {
                Some(&l) if count > 0 => WeightedDistribution::from_values(&[l]),
                _ => WeightedDistribution::from_weighted(&[], None),
            };
        }
        let durations: Vec<f64> = wt.windows(2).map(|w| (w[1].0 - w[0].0).max(0.0)).collect();
        if !durations.iter().any(|&d| d > 0.0) {
            return WeightedDistribution::from_weighted(&[], None);
        }
        let pairs: Vec<(f64, f64)> = levels
            .iter()
            .zip(&durations)
            .map(|(l, d)| (*l, *d))
            .collect();
        WeightedDistribution::from_weighted(&pairs, Some(count))
    }
}

/// Python's `round()` of a non-negative float to an integer (half to even).
fn round_half_even_u64(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.round_ties_even() as u64
    } else {
        0
    }
}

/// guidellm 0.8's `_merge_sorted_times_with_weights`: sum the weights of equal times, then
/// greedily group times lying within `threshold` of a group's first time (groups never
/// span a gap larger than `threshold`), keeping each group's first time.
fn merge_sorted_times(sorted: Vec<(f64, f64)>, threshold: f64) -> Vec<(f64, f64)> {
    let mut uniq: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
    for (t, w) in sorted {
        match uniq.last_mut() {
            Some(last) if last.0 == t => last.1 += w,
            _ => uniq.push((t, 0.0 + w)),
        }
    }
    if threshold <= 0.0 || uniq.len() <= 1 {
        return uniq;
    }
    let n = uniq.len();
    let within: Vec<bool> = (0..n - 1)
        .map(|k| uniq[k + 1].0 - uniq[k].0 <= threshold)
        .collect();
    if !within.iter().any(|&b| b) {
        return uniq;
    }
    let mut out = Vec::with_capacity(n);
    let mut run_start = 0;
    while run_start < n {
        let mut run_end = run_start + 1;
        while run_end < n && within[run_end - 1] {
            run_end += 1;
        }
        let mut g = run_start;
        while g < run_end {
            let limit = uniq[g].0 + threshold;
            let mut e = g + 1;
            while e < run_end && uniq[e].0 <= limit {
                e += 1;
            }
            // np.add.reduceat: first element, then numpy's sum of the rest.
            if e == g + 1 {
                out.push(uniq[g]);
            } else {
                let rest: Vec<f64> = uniq[g + 1..e].iter().map(|x| x.1).collect();
                out.push((uniq[g].0, uniq[g].1 + pairwise_sum(&rest)));
            }
            g = e;
        }
        run_start = run_end;
    }
    out
}

// ------------------------------------------------------------------------------------------
// Streaming, bounded-memory summaries (hdrhistogram)
// ------------------------------------------------------------------------------------------

/// Errors of the streaming histograms.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// The histogram could not be created (significant digits outside 0–5).
    #[error("cannot create histogram: {0:?}")]
    Create(hdrhistogram::CreationError),
    /// Two histograms could not be merged.
    #[error("cannot merge histograms: {0:?}")]
    Merge(hdrhistogram::AdditionError),
    /// The histogram could not be serialized.
    #[error("cannot serialize histogram: {0:?}")]
    Serialize(hdrhistogram::serialization::V2DeflateSerializeError),
    /// The bytes are not a V2 (optionally deflate-compressed) histogram.
    #[error("cannot deserialize histogram: {0:?}")]
    Deserialize(hdrhistogram::serialization::DeserializeError),
    /// The text is not valid base64.
    #[error("invalid base64 at byte {0}")]
    Base64(usize),
}

/// A streaming, bounded-memory summary of durations on an auto-resizing
/// [`hdrhistogram::Histogram`] of nanoseconds with **3 significant digits** (by default).
///
/// # Error bound
///
/// With `d` significant digits every value is kept within its bucket of relative width
/// at most `2^-⌈log2(2·10^d)⌉+1` (1/1024 for `d = 3`):
///
/// * [`Streaming::percentile`]`(p)` returns a value `v` with `x₍ₖ₎ ≤ v ≤ x₍ₖ₎·(1 + 1/1024)`,
///   where `x₍ₖ₎` is the `k`-th smallest recorded value and `k = max(1, ⌈p/100·n⌉)` (the
///   nearest-rank / inverse-CDF rule, the same rank guidellm uses for unweighted samples;
///   numpy's linear rule interpolates between ranks `⌊(n−1)p/100⌋+1` and the next one);
/// * `min`/`max` are within 1/1024 relative of the exact extremes, `mean` within 1/2048,
///   values below 2048 ns are exact.
///
/// Memory is a few tens of KiB whatever the number of samples. Histograms merge exactly
/// ([`Streaming::merge`]) and travel between processes and hosts as HdrHistogram's standard
/// V2 deflate-compressed encoding ([`Streaming::to_bytes`], or base64 text — the form
/// HdrHistogram log files use — via [`Streaming::to_base64`] and serde).
///
/// ```
/// use std::time::Duration;
/// use servebench::stats::Streaming;
/// let mut a = Streaming::new();
/// let mut b = Streaming::new();
/// for ms in 1..=50 { a.record(Duration::from_millis(ms)); }
/// for ms in 51..=100 { b.record(Duration::from_millis(ms)); }
/// // Ship `b` to another process as text, merge it there.
/// let wire = b.to_base64().unwrap();
/// a.merge(&Streaming::from_base64(&wire).unwrap()).unwrap();
/// assert_eq!(a.count(), 100);
/// let p50 = a.percentile(50.0).unwrap().as_secs_f64() * 1e3;
/// assert!((50.0..=50.0 * (1.0 + 1.0 / 1024.0)).contains(&p50));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Streaming {
    hist: hdrhistogram::Histogram<u64>,
}

impl Default for Streaming {
    fn default() -> Self {
        Streaming::new()
    }
}

impl Streaming {
    /// Significant digits of [`Streaming::new`].
    pub const DEFAULT_SIGFIG: u8 = 3;

    /// An empty summary with 3 significant digits.
    pub fn new() -> Self {
        match hdrhistogram::Histogram::new(Self::DEFAULT_SIGFIG) {
            Ok(hist) => Streaming { hist },
            // 3 significant digits is always a valid configuration.
            Err(e) => unreachable!("hdrhistogram rejected 3 significant digits: {e:?}"),
        }
    }

    /// An empty summary with `sigfig` significant digits (0–5).
    pub fn with_sigfig(sigfig: u8) -> Result<Self, StatsError> {
        hdrhistogram::Histogram::new(sigfig)
            .map(|hist| Streaming { hist })
            .map_err(StatsError::Create)
    }

    /// Record one duration (saturating at `u64::MAX` ns, about 584 years).
    pub fn record(&mut self, d: Duration) {
        self.record_n(d, 1);
    }

    /// Record `count` copies of one duration.
    pub fn record_n(&mut self, d: Duration, count: u64) {
        // Auto-resizing histograms only fail on u64 counter overflow; saturate instead.
        // The histogram grows to fit; past its largest representable value it clamps.
        if self.hist.record_n(nanos_u64(d), count).is_err() {
            self.hist.saturating_record_n(nanos_u64(d), count);
        }
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// `true` when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Add every value of `other` (exact: bucket counts are summed).
    pub fn merge(&mut self, other: &Streaming) -> Result<(), StatsError> {
        self.hist.add(&other.hist).map_err(StatsError::Merge)
    }

    /// Percentile `p` (0–100) by the nearest-rank rule, see the type docs; `None` when
    /// empty or `p` is outside `[0, 100]`.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.is_empty() || !(0.0..=100.0).contains(&p) {
            return None;
        }
        Some(Duration::from_nanos(self.hist.value_at_quantile(p / 100.0)))
    }

    /// Smallest value (within the resolution); `None` when empty.
    pub fn min(&self) -> Option<Duration> {
        (!self.is_empty()).then(|| Duration::from_nanos(self.hist.min()))
    }

    /// Largest value (within the resolution); `None` when empty.
    pub fn max(&self) -> Option<Duration> {
        (!self.is_empty()).then(|| Duration::from_nanos(self.hist.max()))
    }

    /// Mean in nanoseconds; `None` when empty.
    pub fn mean_ns(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.hist.mean())
    }

    /// Population standard deviation in nanoseconds; `None` when empty.
    pub fn std_ns(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.hist.stdev())
    }

    /// A report [`Summary`](crate::result::Summary) in ms with the given percentiles (the
    /// median is the nearest-rank p50). Empty → every value `None`.
    pub fn summary_ms(&self, percentiles: &[f64]) -> crate::result::Summary {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        crate::result::Summary {
            mean: self.mean_ns().map(|v| v / 1e6),
            median: self.percentile(50.0).map(ms),
            std: self.std_ns().map(|v| v / 1e6),
            min: self.min().map(ms),
            max: self.max().map(ms),
            percentiles: percentiles
                .iter()
                .map(|&p| crate::result::Percentile {
                    p,
                    value: self.percentile(p).map(ms),
                })
                .collect(),
        }
    }

    /// The underlying histogram (values in nanoseconds).
    pub fn histogram(&self) -> &hdrhistogram::Histogram<u64> {
        &self.hist
    }

    /// Serialize as HdrHistogram's V2 deflate-compressed encoding.
    pub fn to_bytes(&self) -> Result<Vec<u8>, StatsError> {
        use hdrhistogram::serialization::Serializer as _;
        let mut out = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&self.hist, &mut out)
            .map_err(StatsError::Serialize)?;
        Ok(out)
    }

    /// Read a histogram written by [`Streaming::to_bytes`] (or by any HdrHistogram
    /// implementation's V2 serializer, compressed or not).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, StatsError> {
        let mut reader = bytes;
        let hist: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut reader)
            .map_err(StatsError::Deserialize)?;
        Ok(Streaming { hist })
    }

    /// [`Streaming::to_bytes`] as standard base64 text (HdrHistogram log format payload).
    pub fn to_base64(&self) -> Result<String, StatsError> {
        Ok(base64_encode(&self.to_bytes()?))
    }

    /// Read the text written by [`Streaming::to_base64`].
    pub fn from_base64(text: &str) -> Result<Self, StatsError> {
        Streaming::from_bytes(&base64_decode(text)?)
    }
}

impl serde::Serialize for Streaming {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.to_base64().map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }
}

impl<'de> serde::Deserialize<'de> for Streaming {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        Streaming::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// `d` in nanoseconds, saturating at `u64::MAX` (about 584 years).
pub(crate) fn nanos_u64(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Standard-alphabet base64 that writes padding and reads text with or without it.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    BASE64.encode(bytes)
}

fn base64_decode(text: &str) -> Result<Vec<u8>, StatsError> {
    use base64::{DecodeError, Engine as _};
    BASE64.decode(text).map_err(|e| {
        StatsError::Base64(match e {
            DecodeError::InvalidByte(at, _) | DecodeError::InvalidLastSymbol(at, _) => at,
            DecodeError::InvalidLength(len) => len,
            DecodeError::InvalidPadding => text.len(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_f64_is_correctly_rounded() {
        // Operands below 2^53 are exact f64s, and IEEE division rounds correctly.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = x >> (11 + x % 40);
            let q = (x.rotate_left(29) >> (11 + (x >> 7) % 45)).max(1);
            let want = p as f64 / q as f64;
            assert_eq!(
                ratio_f64(u128::from(p), u128::from(q)),
                Some(want),
                "{p}/{q}"
            );
        }
        // Ties go to even; quotients past 2^55 keep their sticky bits.
        let two53 = 1u128 << 53;
        assert_eq!(ratio_f64(two53 + 1, 1), Some(9_007_199_254_740_992.0));
        assert_eq!(ratio_f64(two53 + 3, 1), Some(9_007_199_254_740_996.0));
        assert_eq!(
            ratio_f64((two53 + 1) << 60, 1 << 60),
            Some(9_007_199_254_740_992.0)
        );
        assert_eq!(
            ratio_f64(((two53 + 1) << 60) + 1, 1 << 60),
            Some(9_007_199_254_740_994.0)
        );
        assert_eq!(ratio_f64(u128::MAX, 1), Some(2f64.powi(128)));
        assert_eq!(ratio_f64(1, u128::MAX), Some(2f64.powi(-128)));
        assert_eq!(ratio_f64(1, 3), Some(1.0 / 3.0));
        assert_eq!(ratio_f64(0, 7), Some(0.0));
        assert_eq!(ratio_f64(7, 0), None);
    }

    #[test]
    fn moments_give_exact_mean_and_std() {
        let mut m = Moments::default();
        for x in [1u64, 2, 3, 4] {
            m.add(x);
        }
        assert_eq!(m.mean_std(1), Some((2.5, 1.25f64.sqrt())));
        // 40 ms and 60 ms gaps: 0.05 s exactly (as close as f64 gets), std 0.01 s.
        let mut g = Moments::default();
        g.add(40_000_000);
        g.add(60_000_000);
        assert_eq!(g.mean_std(1_000_000_000), Some((0.05, 0.01)));
        // Merging equals adding; numpy's figures agree to rounding.
        let xs: Vec<u64> = (0..5000u64)
            .map(|i| (i * 7919) % 60_000_000 + 5_000_000)
            .collect();
        let (mut a, mut b, mut all) = (Moments::default(), Moments::default(), Moments::default());
        for (i, &x) in xs.iter().enumerate() {
            if i % 3 == 0 {
                a.add(x)
            } else {
                b.add(x)
            }
            all.add(x);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let secs: Vec<f64> = xs.iter().map(|&x| x as f64 / 1e9).collect();
        let (mean_e, std_e) = all.mean_std(1_000_000_000).unwrap();
        let (mean_n, std_n) = (mean(&secs).unwrap(), std(&secs).unwrap());
        assert!(
            (mean_e - mean_n).abs() <= 4.0 * f64::EPSILON * mean_n,
            "{mean_e} {mean_n}"
        );
        assert!(
            (std_e - std_n).abs() <= 64.0 * f64::EPSILON * std_n,
            "{std_e} {std_n}"
        );
        // Empty and overflowing moments give nothing.
        assert_eq!(Moments::default().mean_std(1), None);
        let mut big = Moments::default();
        big.add(u64::MAX);
        big.add(u64::MAX);
        big.add(u64::MAX);
        assert!(big.overflow);
        assert_eq!(big.mean_std(1), None);
    }

    #[test]
    fn pairwise_sum_matches_simple_sum_on_small_exact_values() {
        let xs: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(pairwise_sum(&xs), 500_500.0);
        assert_eq!(pairwise_sum(&[]), 0.0);
    }

    #[test]
    fn numpy_percentiles_known_values() {
        // np.percentile([1,2,3,4,5,6,7,8,9,10], [0, 25, 50, 90, 99, 100])
        // -> [1.0, 3.25, 5.5, 9.1, 9.91, 10.0]
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        let want = [
            (0.0, 1.0),
            (25.0, 3.25),
            (50.0, 5.5),
            (90.0, 9.1),
            (99.0, 9.91),
            (100.0, 10.0),
        ];
        for (p, v) in want {
            let got = percentile_linear(&sorted, p).unwrap();
            assert!((got - v).abs() < 1e-12, "p{p}: {got} vs {v}");
        }
        assert_eq!(percentile_linear(&sorted, 101.0), None);
        assert_eq!(percentile_linear(&[], 50.0), None);
    }

    #[test]
    fn summary_equals_sorted_definitions() {
        let mut xs = vec![5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0];
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let s = numpy_summary(&mut xs, &[10.0, 50.0, 99.0]).unwrap();
        assert_eq!(s.median, median_sorted(&sorted).unwrap());
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 9.0);
        for (p, v) in &s.percentiles {
            assert_eq!(*v, percentile_linear(&sorted, *p).unwrap());
        }
        // population std of [1,2,3,5,7,8,9]: mean 5, squared deviations sum 58 → sqrt(58/7)
        assert!((s.std - (58.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn radix_selection_equals_sorting() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..4 {
            let n = RADIX_MIN + 1000 * case;
            let mut vals: Vec<f64> = (0..n)
                .map(|i| match case {
                    0 => (next() % 1_000_000) as f64 * 1e-9,
                    1 => (next() % 7) as f64, // few distinct values
                    2 => (next() as i64 >> 20) as f64 * 0.5, // negatives too
                    _ => {
                        if i % 2 == 0 {
                            1e-300
                        } else {
                            1e300
                        }
                    } // extreme spread
                })
                .collect();
            let mut sorted = vals.clone();
            sorted.sort_by(f64::total_cmp);
            let mut ranks = vec![0, 1, n / 2 - 1, n / 2, n * 99 / 100, n - 1, n];
            // More wanted buckets than a byte can index.
            ranks.extend((0..400).map(|i| i * (n / 400)));
            let got = order_statistics(&mut vals, &ranks);
            for (r, g) in ranks.iter().zip(got) {
                match sorted.get(*r) {
                    Some(want) => assert_eq!(g.to_bits(), want.to_bits(), "case {case} rank {r}"),
                    None => assert!(g.is_nan()),
                }
            }
        }
        for x in [0.0, -0.0, 1.5, -2.25, f64::MAX, f64::MIN_POSITIVE] {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(37).wrapping_add(200))
                .collect();
            let text = base64_encode(&bytes);
            assert_eq!(text.len() % 4, 0);
            assert_eq!(base64_decode(&text).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert!(matches!(base64_decode("TW!u"), Err(StatsError::Base64(2))));
    }

    #[test]
    fn streaming_serde_round_trip_and_bounds() {
        let mut s = Streaming::new();
        for us in (1..=10_000u64).map(|i| i * 37) {
            s.record(Duration::from_micros(us));
        }
        let json = serde_json::to_string(&s).unwrap();
        let back: Streaming = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        let p99 = s.percentile(99.0).unwrap().as_nanos() as f64;
        // k = ceil(0.99 * 10000) = 9900 → 9900 * 37 µs
        let exact = 9900.0 * 37_000.0;
        assert!(p99 >= exact && p99 <= exact * (1.0 + 1.0 / 1024.0), "{p99}");
        assert!(Streaming::from_bytes(b"not a histogram").is_err());
    }
}
