//! The few distribution functions the noise statistics need, written from their
//! definitions (no table of magic coefficients): the standard normal and Student's t
//! cumulative distributions and their quantiles.
//!
//! * `ln Γ(x)`: Stirling's series after shifting `x` above 10 by the recurrence
//!   `Γ(x + 1) = x Γ(x)` (absolute error below 1e-14 for `x > 0`).
//! * Normal CDF: `Φ(x) = ½ erfc(−x/√2)`, with `erfc(z) = Q(½, z²)` the regularized upper
//!   incomplete gamma function (series below `a + 1`, Lentz's continued fraction above).
//! * Student's t CDF: the regularized incomplete beta function `I_x(ν/2, ½)` by its
//!   continued fraction (modified Lentz).
//! * Quantiles: bisection on the CDF to full double precision (each call costs ~100 CDF
//!   evaluations; the noise statistics need a handful).
//!
//! This is the crate's one home for distributions: the noise statistics, the sequential
//! design and the study document's `mean ± half-width` (a three-decimal t-table value, see
//! `study::verdict`) all take their quantiles from here.
//!
//! Why not the maintained [`statrs`](https://crates.io/crates/statrs) crate: four functions
//! are needed, and statrs brings `nalgebra` and `rand` with its default features. More
//! important, the study documents and the comparison tables are byte-exact outputs under
//! test; another implementation's quantiles differ in the last bits (statrs inverts its
//! CDFs with its own tolerance), which can move a rounded printed figure. The functions
//! here are checked against reference values (R's `qnorm`/`qt`, to 1e-9 and 1e-7) in this
//! module's tests, so a later switch can be judged by the same test.
//!
//! ```
//! use servebench::noise::{normal_quantile, t_quantile};
//! assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-12);
//! assert!((t_quantile(0.975, 10.0) - 2.228138851986273).abs() < 1e-10);
//! ```

use std::f64::consts::PI;

/// `ln Γ(x)` for `x > 0` (NaN otherwise).
pub fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    // Shift up: ln Γ(x) = ln Γ(x + k) − ln(x (x+1) … (x+k−1)).
    let mut shift = 0.0;
    let mut z = x;
    while z < 10.0 {
        shift += z.ln();
        z += 1.0;
    }
    let z2 = z * z;
    // Stirling's series: B2/(1·2 z) + B4/(3·4 z³) + B6/(5·6 z⁵) + B8/(7·8 z⁷) + B10/(9·10 z⁹).
    let series = 1.0 / (12.0 * z) - 1.0 / (360.0 * z * z2) + 1.0 / (1260.0 * z * z2 * z2)
        - 1.0 / (1680.0 * z * z2 * z2 * z2)
        + 1.0 / (1188.0 * z * z2 * z2 * z2 * z2);
    (z - 0.5) * z.ln() - z + 0.5 * (2.0 * PI).ln() + series - shift
}

/// Regularized upper incomplete gamma `Q(a, x) = Γ(a, x) / Γ(a)`, `a > 0`, `x ≥ 0`.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let log_prefix = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // Series for P(a, x).
        let mut term = 1.0 / a;
        let mut sum = term;
        let mut ap = a;
        for _ in 0..1000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        1.0 - sum * log_prefix.exp()
    } else {
        // Continued fraction for Q(a, x) (modified Lentz).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            let delta = lentz_step(an, b, &mut c, &mut d, tiny);
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        log_prefix.exp() * h
    }
}

/// The standard normal cumulative distribution `Φ(x)`.
///
/// ```
/// use servebench::noise::normal_cdf;
/// assert!((normal_cdf(0.0) - 0.5).abs() < 1e-15);
/// assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 1e-14);
/// ```
pub fn normal_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let q = gamma_q(0.5, x * x / 2.0);
    if x >= 0.0 {
        1.0 - 0.5 * q
    } else {
        0.5 * q
    }
}

/// One step of the modified Lentz recurrence for a continued fraction's partial numerator
/// `a` and denominator `b`: `d ← 1/(b + a·d)`, `c ← b + a/c` (each kept off zero by
/// `tiny`); returns the step's factor `d·c`.
fn lentz_step(a: f64, b: f64, c: &mut f64, d: &mut f64, tiny: f64) -> f64 {
    *d = b + a * *d;
    if d.abs() < tiny {
        *d = tiny;
    }
    *c = b + a / *c;
    if c.abs() < tiny {
        *c = tiny;
    }
    *d = 1.0 / *d;
    *d * *c
}

/// Continued fraction of the regularized incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    let tiny = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..2000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        h *= lentz_step(aa, 1.0, &mut c, &mut d, tiny);
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        let delta = lentz_step(aa, 1.0, &mut c, &mut d, tiny);
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// Regularized incomplete beta `I_x(a, b)`.
fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Student's t cumulative distribution with `df > 0` degrees of freedom (any real `df`, as
/// Welch's approximation gives). Infinite `df` is the normal distribution.
///
/// ```
/// use servebench::noise::t_cdf;
/// assert!((t_cdf(0.0, 3.0) - 0.5).abs() < 1e-15);
/// assert!((t_cdf(12.706204736174707, 1.0) - 0.975).abs() < 1e-12);
/// ```
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return normal_cdf(t);
    }
    let x = df / (df + t * t);
    let tail = 0.5 * beta_inc(df / 2.0, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Inverts a continuous increasing `cdf` at `p` by bisection (to adjacent doubles).
fn invert(p: f64, cdf: impl Fn(f64) -> f64) -> f64 {
    if p.is_nan() || p <= 0.0 {
        return if p == 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    if p >= 1.0 {
        return if p == 1.0 { f64::INFINITY } else { f64::NAN };
    }
    let (mut lo, mut hi) = (-1.0, 1.0);
    while cdf(lo) > p {
        lo *= 2.0;
        if lo < -1e300 {
            return lo;
        }
    }
    while cdf(hi) < p {
        hi *= 2.0;
        if hi > 1e300 {
            return hi;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The standard normal quantile `Φ⁻¹(p)`: `−∞` at 0, `+∞` at 1, NaN outside `[0, 1]`.
pub fn normal_quantile(p: f64) -> f64 {
    invert(p, normal_cdf)
}

/// Student's t quantile with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_infinite() {
        return normal_quantile(p);
    }
    invert(p, |t| t_cdf(t, df))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from R (`qnorm`, `qt`, `lgamma`).
    #[test]
    fn matches_reference_values() {
        let cases_ln_gamma = [
            (0.5, 0.5723649429247001),
            (1.0, 0.0),
            (5.0, 24f64.ln()),
            (4.5, 2.453736570842442),
            (0.1, 2.252712651734206),
        ];
        for (x, want) in cases_ln_gamma {
            assert!(
                (ln_gamma(x) - want).abs() < 1e-12,
                "lgamma({x}) = {}",
                ln_gamma(x)
            );
        }
        let cases_q = [
            (0.5, 0.0),
            (0.8413447460685429, 1.0),
            (0.975, 1.959963984540054),
            (0.995, 2.5758293035489),
            (0.025, -1.959963984540054),
            (1e-10, -6.361340902404056),
        ];
        for (p, want) in cases_q {
            let got = normal_quantile(p);
            assert!((got - want).abs() < 1e-9, "qnorm({p}) = {got}");
        }
        let cases_t = [
            (0.975, 1.0, 12.70620473617471),
            (0.975, 2.0, 4.302652729911275),
            (0.975, 10.0, 2.228138851986273),
            (0.8, 5.0, 0.9195437678947919),
            (0.025, 30.0, -2.042272456301238),
        ];
        for (p, df, want) in cases_t {
            let got = t_quantile(p, df);
            assert!((got - want).abs() < 1e-7, "qt({p}, {df}) = {got}");
        }
        assert!(normal_quantile(1.5).is_nan());
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert!(t_cdf(1.0, -1.0).is_nan());
    }
}
