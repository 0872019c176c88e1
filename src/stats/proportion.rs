//! A proportion's confidence interval: the Wilson score interval (Wilson 1927), which keeps
//! its coverage near the nominal level for small samples and shares near 0 or 1, where the
//! Wald interval does not. Quality's accuracies and the serving checks' validity rates
//! (tool calls, structured outputs) use it.

/// The standard normal quantile of 0.975: a two-sided 95 % interval's `z`.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson interval of `k` successes in `n` trials for the normal quantile `z` (two-sided
/// confidence `c`: `z = Φ⁻¹(1 − (1 − c)/2)`, [`Z_95`] for 95 %), as `(lo, hi)`; `(0, 1)` for
/// no trials.
///
/// ```
/// use servebench::stats::{wilson_interval, Z_95};
/// let (lo, hi) = wilson_interval(80, 100, Z_95);
/// assert!((lo - 0.7112).abs() < 1e-4 && (hi - 0.8666).abs() < 1e-4);
/// assert_eq!(wilson_interval(0, 0, Z_95), (0.0, 1.0));
/// ```
pub fn wilson_interval(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let nf = n as f64;
    let p = k as f64 / nf;
    let d = 1.0 + z * z / nf;
    let centre = (p + z * z / (2.0 * nf)) / d;
    let half = z * (p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt() / d;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}
