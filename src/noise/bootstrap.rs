//! The resampling engine: a Poisson-weighted bootstrap over blocks of per-block sufficient
//! statistics.
//!
//! A run is cut into `B` blocks (time windows); each block holds `K` sums (request counts,
//! token counts, Σx, Σx², counts below a percentile, …). One bootstrap replicate draws an
//! independent Poisson(1) weight per block and forms the `K` weighted totals; every
//! statistic is then a function of the totals (a ratio of two of them, a variance, a CDF
//! value). This is the Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012):
//! with many blocks it is equivalent to drawing `B` blocks with replacement, but each
//! replicate costs `B·K` multiply-adds, independent of the number of requests and chunks.
//!
//! Replicate `r` uses its own generator seeded from `(seed, r)`, so the totals do not
//! depend on how the replicates are split over threads.

use crate::rng::Rng;

/// Per-block sums: `blocks × k` values, block-major.
#[derive(Debug, Clone)]
pub(crate) struct BlockSums {
    /// Number of sums per block.
    pub k: usize,
    /// `cols[b * k + j]`: sum `j` of block `b`.
    pub cols: Vec<f64>,
}

impl BlockSums {
    pub(crate) fn new(blocks: usize, k: usize) -> BlockSums {
        BlockSums {
            k,
            cols: vec![0.0; blocks * k],
        }
    }

    pub(crate) fn blocks(&self) -> usize {
        self.cols.len().checked_div(self.k).unwrap_or(0)
    }

    /// Adds `other` (same shape) into `self`.
    pub(crate) fn merge(&mut self, other: &BlockSums) {
        for (a, b) in self.cols.iter_mut().zip(&other.cols) {
            *a += b;
        }
    }

    /// Sums of `per` consecutive blocks (the last group may be shorter).
    pub(crate) fn coarsen(&self, per: usize) -> BlockSums {
        if per <= 1 {
            return self.clone();
        }
        let k = self.k;
        let mut out = BlockSums::new(self.blocks().div_ceil(per), k);
        for (i, row) in self.cols.chunks_exact(k.max(1)).enumerate() {
            let dst = &mut out.cols[(i / per) * k..(i / per + 1) * k];
            for (a, b) in dst.iter_mut().zip(row) {
                *a += b;
            }
        }
        out
    }

    /// The unweighted totals (every weight 1): the point estimate's sums.
    pub(crate) fn totals(&self) -> Vec<f64> {
        let mut t = vec![0.0; self.k];
        for row in self.cols.chunks_exact(self.k.max(1)) {
            for (a, b) in t.iter_mut().zip(row) {
                *a += b;
            }
        }
        t
    }
}

/// `⌊CDF_Poisson(1)(k) · 2³²⌋` for k = 0, 1, …: a 32-bit uniform `u` gives weight
/// `min{k : u < T[k]}`.
fn poisson1_table() -> [u64; 24] {
    let mut t = [0u64; 24];
    let mut p = (-1.0f64).exp();
    let mut cdf = 0.0;
    for (k, slot) in t.iter_mut().enumerate() {
        cdf += p;
        p /= (k + 1) as f64;
        *slot = (cdf * 4294967296.0).floor() as u64;
    }
    // The last entry catches every remaining u (probability ~1e-24 mass above).
    t[23] = u64::MAX;
    t
}

/// The generator of replicate `r`.
fn replicate_rng(seed: u64, r: usize) -> Rng {
    Rng::new(
        seed ^ (r as u64)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15),
    )
}

/// Draws the Poisson(1) weights of one replicate, two per 64-bit draw.
fn weights(rng: &mut Rng, table: &[u64; 24], out: &mut [u32]) {
    let draw = |u: u64| -> u32 {
        let mut k = 0;
        while u >= table[k] {
            k += 1;
        }
        k as u32
    };
    let mut pairs = out.chunks_exact_mut(2);
    for pair in &mut pairs {
        let x = rng.next_u64();
        pair[0] = draw(x & 0xFFFF_FFFF);
        pair[1] = draw(x >> 32);
    }
    for w in pairs.into_remainder() {
        *w = draw(rng.next_u64() >> 32);
    }
}

/// The weighted totals of `resamples` replicates: `resamples × k` values, replicate-major.
/// Runs on up to `threads` threads; the result does not depend on their number.
pub(crate) fn replicate_totals(
    sums: &BlockSums,
    resamples: usize,
    seed: u64,
    threads: usize,
) -> Vec<f64> {
    let k = sums.k;
    let nb = sums.blocks();
    let mut out = vec![0.0; resamples * k];
    if k == 0 || resamples == 0 {
        return out;
    }
    let table = poisson1_table();
    let threads = threads.clamp(1, resamples);
    let per = resamples.div_ceil(threads);
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(per * k).enumerate() {
            let table = &table;
            s.spawn(move || {
                let mut w = vec![0u32; nb];
                for (i, totals) in chunk.chunks_exact_mut(k).enumerate() {
                    let r = t * per + i;
                    let mut rng = replicate_rng(seed, r);
                    weights(&mut rng, table, &mut w);
                    for (b, &wb) in w.iter().enumerate() {
                        if wb == 0 {
                            continue;
                        }
                        let wb = f64::from(wb);
                        let row = &sums.cols[b * k..(b + 1) * k];
                        for (a, &c) in totals.iter_mut().zip(row) {
                            *a += wb * c;
                        }
                    }
                }
            });
        }
    });
    out
}

/// Threads to use for the heavy parts.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(16)
}

/// The `q`-quantile (0–1) of `xs` by linear interpolation between order statistics
/// (numpy's default); `xs` is reordered. `None` for an empty slice.
pub(crate) fn quantile_linear(xs: &mut [f64], q: f64) -> Option<f64> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(n - 1);
    let frac = h - lo as f64;
    let (_, &mut a, right) = xs.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || right.is_empty() {
        return Some(a);
    }
    let b = right.iter().copied().fold(f64::INFINITY, f64::min);
    Some(a + frac * (b - a))
}

/// [`quantile_linear`] at every `q` of `qs` (0–1), in one pass of selections: the order
/// statistics needed are selected in ascending order, each in the part of `xs` right of the
/// previous one (everything left of it is no larger). `xs` is reordered.
pub(crate) fn quantiles_linear(xs: &mut [f64], qs: &[f64]) -> Vec<Option<f64>> {
    let n = xs.len();
    if n == 0 {
        return vec![None; qs.len()];
    }
    let pos: Vec<(usize, f64)> = qs
        .iter()
        .map(|q| {
            let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
            let lo = (h.floor() as usize).min(n - 1);
            (lo, h - lo as f64)
        })
        .collect();
    let mut need: Vec<usize> = pos
        .iter()
        .flat_map(|&(lo, frac)| [Some(lo), (frac > 0.0 && lo + 1 < n).then_some(lo + 1)])
        .flatten()
        .collect();
    need.sort_unstable();
    need.dedup();
    let mut got: Vec<(usize, f64)> = Vec::with_capacity(need.len());
    let mut base = 0;
    for &j in &need {
        let rest = &mut xs[base..];
        let (_, &mut v, _) = rest.select_nth_unstable_by(j - base, f64::total_cmp);
        got.push((j, v));
        base = j + 1;
    }
    let at = |j: usize| got.binary_search_by_key(&j, |g| g.0).ok().map(|i| got[i].1);
    pos.iter()
        .map(|&(lo, frac)| {
            let a = at(lo)?;
            if frac == 0.0 || lo + 1 >= n {
                return Some(a);
            }
            Some(a + frac * (at(lo + 1)? - a))
        })
        .collect()
}

/// Mean and (sample) standard deviation of `xs`.
pub(crate) fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::NAN);
    }
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, (ss / (n - 1.0)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_weights_have_mean_and_variance_one() {
        let table = poisson1_table();
        let mut rng = Rng::new(7);
        let mut w = vec![0u32; 200_001];
        weights(&mut rng, &table, &mut w);
        let xs: Vec<f64> = w.iter().map(|&x| f64::from(x)).collect();
        let (m, sd) = mean_sd(&xs);
        assert!((m - 1.0).abs() < 0.01, "mean {m}");
        assert!((sd * sd - 1.0).abs() < 0.02, "variance {}", sd * sd);
        let zeros = w.iter().filter(|&&x| x == 0).count() as f64 / w.len() as f64;
        assert!((zeros - (-1.0f64).exp()).abs() < 0.005, "P(0) = {zeros}");
    }

    #[test]
    fn totals_do_not_depend_on_threads() {
        let mut s = BlockSums::new(37, 3);
        for (i, c) in s.cols.iter_mut().enumerate() {
            *c = (i % 11) as f64 + 0.5;
        }
        let a = replicate_totals(&s, 101, 9, 1);
        let b = replicate_totals(&s, 101, 9, 4);
        assert_eq!(a, b);
        assert_ne!(a, replicate_totals(&s, 101, 10, 1));
        // Each replicate's mean weight is about one: totals near the unweighted ones.
        let t = s.totals();
        let mean0: f64 = a.chunks(3).map(|r| r[0]).sum::<f64>() / 101.0;
        assert!((mean0 / t[0] - 1.0).abs() < 0.05, "{mean0} vs {}", t[0]);
    }

    #[test]
    fn linear_quantile_is_numpys() {
        let mut xs = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile_linear(&mut xs, 0.5), Some(2.5));
        assert_eq!(quantile_linear(&mut xs, 1.0), Some(4.0));
        assert_eq!(quantile_linear(&mut xs, 0.0), Some(1.0));
        assert_eq!(quantile_linear(&mut [], 0.5), None);
        let mut xs = vec![10.0, 20.0];
        assert_eq!(quantile_linear(&mut xs, 0.99), Some(19.9));
    }

    #[test]
    fn many_quantiles_equal_one_at_a_time() {
        let mut rng = Rng::new(11);
        let xs: Vec<f64> = (0..5001).map(|_| (rng.normal() * 10.0).round()).collect();
        let qs = [0.99, 0.5, 0.4999, 0.995, 0.0, 1.0, 0.5, 0.123];
        let many = quantiles_linear(&mut xs.clone(), &qs);
        for (q, m) in qs.iter().zip(many) {
            assert_eq!(m, quantile_linear(&mut xs.clone(), *q), "q {q}");
        }
        assert_eq!(quantiles_linear(&mut [], &[0.5]), vec![None]);
    }
}

/// The flat-top lag window of Politis & Romano: 1 up to `|t| = ½`, then linear to 0 at 1.
fn flat_top(t: f64) -> f64 {
    let t = t.abs();
    if t <= 0.5 {
        1.0
    } else if t <= 1.0 {
        2.0 * (1.0 - t)
    } else {
        0.0
    }
}

/// Automatic block length (in series elements) for the stationary bootstrap of the mean of
/// `xs`, by Politis & White (2004) with the correction of Patton, Politis & White (2009):
/// the autocorrelations are cut where `K` consecutive ones are insignificant
/// (`|ρ| < 2√(log₁₀ n / n)`), and `b = (2 G² / D)^(1/3) n^(1/3)` with `G = Σ λ(k/M)|k| R(k)`,
/// `D = 2 (Σ λ(k/M) R(k))²`. At least 1, at most `min(3√n, n/3)` and twice the lag
/// `m̂ + 1` beyond which the series is uncorrelated. Lags are searched up to `max_lag`.
pub(crate) fn auto_block_length(xs: &[f64], max_lag: usize) -> f64 {
    let n = xs.len();
    if n < 8 {
        return 1.0;
    }
    let nf = n as f64;
    let mean = xs.iter().sum::<f64>() / nf;
    let c: Vec<f64> = xs.iter().map(|x| x - mean).collect();
    let acov = |k: usize| -> f64 {
        c[..n - k]
            .iter()
            .zip(&c[k..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / nf
    };
    let r0 = acov(0);
    if r0 <= 0.0 || !r0.is_finite() {
        return 1.0;
    }
    let kn = (nf.log10().sqrt().ceil() as usize).max(5);
    let bound = 2.0 * (nf.log10() / nf).sqrt();
    let max_lag = max_lag.min(n - 1);
    let mut rs = vec![r0];
    let mut m_hat = None;
    let mut run = 0;
    for k in 1..=max_lag {
        let r = acov(k);
        rs.push(r);
        if (r / r0).abs() < bound {
            run += 1;
            if run == kn {
                m_hat = Some(k - kn);
                break;
            }
        } else {
            run = 0;
        }
    }
    // No cut-off within max_lag: correlated over the whole searched range.
    let m_hat = m_hat.unwrap_or(max_lag);
    let big_m = (2 * m_hat).max(1).min(n - 1);
    while rs.len() <= big_m {
        rs.push(acov(rs.len()));
    }
    let (mut g, mut s) = (0.0, r0);
    for (k, &r) in rs.iter().enumerate().take(big_m + 1).skip(1) {
        let l = flat_top(k as f64 / big_m as f64);
        g += 2.0 * l * k as f64 * r;
        s += 2.0 * l * r;
    }
    let d = 2.0 * s * s;
    if d <= 0.0 || !d.is_finite() {
        return 1.0;
    }
    // Politis & White's cap, min(3√n, n/3), and twice the correlation length: with few
    // elements G/D is noisy, but a block need not be longer than the lags that are
    // correlated at all.
    let cap = (3.0 * nf.sqrt())
        .min(nf / 3.0)
        .min(2.0 * (m_hat + 1) as f64)
        .max(1.0);
    ((2.0 * g * g / d).cbrt() * nf.cbrt()).clamp(1.0, cap)
}

#[cfg(test)]
mod block_tests {
    use super::*;

    #[test]
    fn block_length_grows_with_correlation() {
        let mut rng = Rng::new(3);
        let white: Vec<f64> = (0..2000).map(|_| rng.normal()).collect();
        let mut x = 0.0;
        let ar: Vec<f64> = (0..2000)
            .map(|_| {
                x = 0.9 * x + rng.normal();
                x
            })
            .collect();
        // A square wave: long deterministic phases.
        let phases: Vec<f64> = (0..200)
            .map(|i| if (i / 50) % 2 == 0 { 0.0 } else { 10.0 })
            .collect();
        let (bw, ba, bp) = (
            auto_block_length(&white, 500),
            auto_block_length(&ar, 500),
            auto_block_length(&phases, 50),
        );
        assert!(bw < 3.0, "white noise: {bw}");
        assert!(ba > 10.0 && ba > 4.0 * bw, "AR(0.9): {ba}");
        assert!(bp > 20.0, "phases: {bp}");
    }
}
