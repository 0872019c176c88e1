//! The empirical quantile functions the within-run intervals map CDF bounds back through,
//! and the log-linear histogram of ns gaps used when a run has too many chunk gaps to keep.

use crate::noise::bootstrap::{self, quantile_linear};

/// Histogram bucket of a gap in ns: exact below 1024 ns, then 1024 sub-buckets per power
/// of two.
pub(super) fn hist_bucket(v: u64) -> usize {
    if v < 1024 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as usize; // ≥ 10
    let sub = ((v >> (e - 10)) & 1023) as usize;
    (e - 9) * 1024 + sub
}

/// Lower edge and width (ns) of a histogram bucket.
pub(super) fn hist_edges(i: usize) -> (f64, f64) {
    if i < 1024 {
        return (i as f64, 1.0);
    }
    let e = i / 1024 + 9;
    let sub = (i % 1024) as u64;
    let width = (1u64 << (e - 10)) as f64;
    (((1024 + sub) << (e - 10)) as f64, width)
}

pub(super) const HIST_LEN: usize = 55 * 1024;

/// The empirical quantile function of one metric (for mapping CDF bounds back).
pub(super) enum QuantileFn {
    /// Unweighted values, numpy's linear rule.
    Linear(Vec<f64>),
    /// Weighted values sorted by value, with the running weight: the first value whose
    /// cumulative weight reaches `p · total`.
    Weighted(Vec<(f64, f64)>),
    /// Histogram of ns gaps.
    Hist(Vec<u64>),
}

impl QuantileFn {
    pub(super) fn new(values: Vec<(f64, f64)>, weighted: bool) -> QuantileFn {
        if weighted {
            let mut v = values;
            v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
            let mut cum = 0.0;
            for x in &mut v {
                cum += x.1;
                x.1 = cum;
            }
            QuantileFn::Weighted(v)
        } else {
            QuantileFn::Linear(values.into_iter().map(|x| x.0).collect())
        }
    }

    /// The (effective) number of values behind a quantile function: Kish's `(Σw)²/Σw²` for
    /// weighted values.
    pub(super) fn sample_size(&self) -> f64 {
        match self {
            QuantileFn::Linear(v) => v.len() as f64,
            QuantileFn::Weighted(v) => {
                // Cumulative weights: recover each weight for Kish's effective size.
                let mut prev = 0.0;
                let (mut s1, mut s2) = (0.0, 0.0);
                for &(_, cum) in v {
                    let w = cum - prev;
                    prev = cum;
                    s1 += w;
                    s2 += w * w;
                }
                if s2 > 0.0 {
                    s1 * s1 / s2
                } else {
                    0.0
                }
            }
            QuantileFn::Hist(h) => h.iter().sum::<u64>() as f64,
        }
    }

    /// Hill's estimate of the upper tail index `a` (Hill 1975, "A simple general approach to
    /// inference about the tail of a distribution", Ann. Statist. 3:1163–1174) from the `k =
    /// ⌊√n⌋` largest of the unweighted values: `1 / mean(ln(X₍ᵢ₎ / X₍ₖ₊₁₎))`. `a < 2` says
    /// the variance looks infinite (a few values dominate the sum). `None` for weighted or
    /// binned values, fewer than 50 values, or a non-positive `X₍ₖ₊₁₎`.
    pub(super) fn tail_index(&self) -> Option<f64> {
        let QuantileFn::Linear(v) = self else {
            return None;
        };
        let n = v.len();
        if n < 50 {
            return None;
        }
        let k = (n as f64).sqrt().floor() as usize;
        let mut top: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        if top.len() <= k {
            return None;
        }
        top.select_nth_unstable_by(k, |a, b| b.total_cmp(a));
        let floor = top[k];
        if floor <= 0.0 {
            return None;
        }
        let gamma = top[..k].iter().map(|x| (x / floor).ln()).sum::<f64>() / k as f64;
        Some(if gamma > 0.0 {
            1.0 / gamma
        } else {
            f64::INFINITY
        })
    }

    /// Quantiles at every `q` in [0, 1], ms. Unweighted values are selected in ascending
    /// rank order, each selection in the part right of the previous one.
    pub(super) fn at_many(&mut self, qs: &[f64]) -> Vec<Option<f64>> {
        match self {
            QuantileFn::Linear(v) => bootstrap::quantiles_linear(v, qs),
            _ => qs.iter().map(|&q| self.at(q)).collect(),
        }
    }

    /// Quantile at `q` in [0, 1], ms.
    pub(super) fn at(&mut self, q: f64) -> Option<f64> {
        let q = q.clamp(0.0, 1.0);
        match self {
            QuantileFn::Linear(v) => quantile_linear(v, q),
            QuantileFn::Weighted(v) => {
                let total = v.last()?.1;
                let target = q * total;
                let i = v.partition_point(|x| x.1 < target).min(v.len() - 1);
                Some(v[i].0)
            }
            QuantileFn::Hist(h) => {
                let n: u64 = h.iter().sum();
                if n == 0 {
                    return None;
                }
                let target = (n - 1) as f64 * q;
                let mut cum = 0u64;
                for (i, &c) in h.iter().enumerate() {
                    if c > 0 && (cum + c) as f64 > target {
                        let (lo, width) = hist_edges(i);
                        let frac = ((target - cum as f64 + 0.5) / c as f64).clamp(0.0, 1.0);
                        return Some((lo + width * frac) * 1e-6);
                    }
                    cum += c;
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pareto values with index 1.5 read as heavy (< 2); exponential ones do not.
    #[test]
    fn hill_tells_heavy_tails_from_light_ones() {
        let n = 2000;
        let u = |i: usize| (i as f64 + 0.5) / n as f64;
        let pareto = QuantileFn::Linear((0..n).map(|i| u(i).powf(-1.0 / 1.5)).collect());
        let a = pareto.tail_index().unwrap();
        assert!((a - 1.5).abs() < 0.2, "{a}");
        let expo = QuantileFn::Linear((0..n).map(|i| 10.0 - 2.0 * u(i).ln()).collect());
        assert!(expo.tail_index().unwrap() > 4.0);
    }

    #[test]
    fn histogram_buckets_are_contiguous_and_tight() {
        for v in [
            0u64,
            1,
            1023,
            1024,
            1025,
            2047,
            2048,
            3_000_000,
            1 << 40,
            u64::MAX,
        ] {
            let i = hist_bucket(v);
            assert!(i < HIST_LEN, "{v}");
            let (lo, w) = hist_edges(i);
            assert!(lo <= v as f64 && (v as f64) <= lo + w, "{v}: {lo} {w}");
            assert!(w <= 1.0f64.max(v as f64 / 1024.0), "{v}: width {w}");
        }
        assert_eq!(hist_bucket(2047) + 1, hist_bucket(2048));
    }
}
