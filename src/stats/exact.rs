//! Exact integer arithmetic for statistics: a correctly rounded `u128 / u128` ([`ratio_f64`])
//! and exact first and second moments of integer samples ([`Moments`]), so that a mean and
//! a standard deviation do not depend on summation order (threads, hosts).

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{mean, std};
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
}
