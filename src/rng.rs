//! Seeded pseudo-random numbers, one home for the whole crate: [`SplitMix64`] (a stream,
//! and [`mix`], its finaliser, for hashing a key to a well-spread `u64`) and [`Rng`]
//! (xoshiro256** seeded through SplitMix64) with the few distributions the workloads,
//! arrival processes, bootstrap and simulator need. Deterministic across platforms: the
//! same seed gives the same stream everywhere.

/// SplitMix64's golden-ratio increment (2^64 / φ), the step between successive states.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser (Stafford's "Mix13"): a bijective scramble of `z`, so distinct
/// keys give distinct, well-spread outputs.
///
/// ```
/// use servebench::rng::mix;
/// assert_ne!(mix(1), mix(2));
/// assert_eq!(mix(0), 0);
/// ```
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64 (Steele, Lea & Flood): a tiny, good-enough seeded generator, and the seeder
/// of [`Rng`].
///
/// ```
/// use servebench::rng::SplitMix64;
/// let mut a = SplitMix64::new(7);
/// assert_eq!(a.next_u64(), SplitMix64::new(7).next_u64());
/// assert!((10..20).contains(&a.range(10, 20)));
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        mix(self.0)
    }

    /// Uniform in `[lo, hi)` (by remainder: biased by at most `(hi - lo) / 2^64`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % hi.saturating_sub(lo).max(1)
    }
}

/// xoshiro256** (Blackman & Vigna), seeded from a `u64` with SplitMix64.
///
/// ```
/// use servebench::rng::Rng;
/// let mut a = Rng::new(42);
/// let mut b = Rng::new(42);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let x = a.f64();
/// assert!((0.0..1.0).contains(&x));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut seeder = SplitMix64::new(seed);
        let s = [
            seeder.next_u64(),
            seeder.next_u64(),
            seeder.next_u64(),
            seeder.next_u64(),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)`, 53 bits of precision.
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]`: safe to take the logarithm of.
    pub fn f64_open0(&mut self) -> f64 {
        1.0 - self.f64()
    }

    /// Uniform integer in the inclusive range `[lo, hi]` (`lo` when `hi < lo`).
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // Lemire's multiply-shift; the bias is below 2^-64 * span, negligible here.
        let r = ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as u64;
        lo + r
    }

    /// Uniform index in `[0, n)`; `0` when `n == 0`.
    pub fn index(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        self.range_inclusive(0, n as u64 - 1) as usize
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.f64_open0();
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Log-normal with the given median (`exp(mu)`) and log-space `sigma`.
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.f64_open0().ln()
    }

    /// Gamma(shape `k`, scale `theta`) by Marsaglia–Tsang (with the `k < 1` boost).
    /// Returns 0 for a non-positive or non-finite shape or scale.
    ///
    /// ```
    /// use servebench::rng::Rng;
    /// let mut r = Rng::new(7);
    /// let n = 20_000;
    /// let mean = (0..n).map(|_| r.gamma(0.5, 4.0)).sum::<f64>() / n as f64;
    /// assert!((mean - 2.0).abs() < 0.1, "{mean}");
    /// ```
    pub fn gamma(&mut self, k: f64, theta: f64) -> f64 {
        if !(k.is_finite() && theta.is_finite() && k > 0.0 && theta > 0.0) {
            return 0.0;
        }
        if k < 1.0 {
            let u = self.f64_open0();
            return self.gamma(k + 1.0, theta) * u.powf(1.0 / k);
        }
        let d = k - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let mut x;
            let mut v;
            loop {
                x = self.normal();
                v = 1.0 + c * x;
                if v > 0.0 {
                    break;
                }
            }
            v = v * v * v;
            let u = self.f64_open0();
            if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v * theta;
            }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.range_inclusive(0, i as u64) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_and_normal_moments() {
        let mut r = Rng::new(1);
        let n = 50_000;
        let xs: Vec<f64> = (0..n).map(|_| r.f64()).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.01, "{m}");
        let zs: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let m = zs.iter().sum::<f64>() / n as f64;
        let v = zs.iter().map(|z| (z - m) * (z - m)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.02 && (v - 1.0).abs() < 0.03, "{m} {v}");
    }

    #[test]
    fn gamma_moments_for_shapes_around_one() {
        let mut r = Rng::new(3);
        for &(k, theta) in &[(0.3, 1.0), (1.0, 2.0), (4.0, 0.25)] {
            let n = 40_000;
            let xs: Vec<f64> = (0..n).map(|_| r.gamma(k, theta)).collect();
            let m = xs.iter().sum::<f64>() / n as f64;
            let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
            assert!(
                (m - k * theta).abs() < 0.03 * k * theta + 0.01,
                "k={k} mean {m}"
            );
            let want_v = k * theta * theta;
            assert!(
                (v - want_v).abs() < 0.08 * want_v,
                "k={k} var {v} vs {want_v}"
            );
        }
    }

    #[test]
    fn range_is_inclusive_and_covers() {
        let mut r = Rng::new(9);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = r.range_inclusive(10, 14);
            assert!((10..=14).contains(&x));
            seen[(x - 10) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.range_inclusive(5, 3), 5);
    }
}
