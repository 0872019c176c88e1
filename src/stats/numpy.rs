//! numpy's arithmetic, bit for bit: pairwise summation ([`pairwise_sum`]), `np.mean`,
//! `np.std` (population), `np.percentile` (`'linear'`), `np.median`, and the whole
//! [`NumpySummary`] vLLM reports.

use std::cmp::Ordering;

use super::order_statistics;

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

/// [`pairwise_sum`] of `f(0), f(1), …, f(n − 1)` without storing them: the same leaves,
/// the same order, the same bits.
pub(crate) fn pairwise_sum_by(n: usize, f: impl Fn(usize) -> f64) -> f64 {
    let mut at = 0;
    let mut buf = [0.0f64; PW_BLOCKSIZE];
    pairwise_tree(n, &mut |len| {
        for (k, b) in buf[..len].iter_mut().enumerate() {
            *b = f(at + k);
        }
        at += len;
        leaf_sum(&buf[..len])
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

#[cfg(test)]
mod tests {
    use super::*;
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
}
