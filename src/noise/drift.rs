//! Drift over a long run (a soak): does a latency figure trend over time? The run is cut
//! into windows by send time, each window's p99 TTFT is taken, and the series is tested for
//! a monotonic trend with the Mann–Kendall test (Mann 1945, Kendall 1975; the standard
//! non-parametric trend test: no distribution assumed, robust to a few outlying windows),
//! its size by Sen's slope (Sen 1968: the median of the pairwise slopes), reported
//! relative to the series' median per hour: "p99 TTFT drifts +18.0 % per hour
//! (Mann–Kendall p = 0.0004): significant".
//!
//! A leak (a cache that grows, a fragmentation that slows each step a little more) shows
//! as a significant positive drift; a steady server's windows vary around one level, and
//! the test keeps its level (α) on them.
//!
//! ```
//! use servebench::noise::mann_kendall;
//! let rising: Vec<f64> = (0..20).map(|i| 100.0 + i as f64 + (i % 3) as f64).collect();
//! let (s, p) = mann_kendall(&rising).unwrap();
//! assert!(s > 0.0 && p < 0.001);
//! let flat: Vec<f64> = (0..20).map(|i| 100.0 + ((i * 7) % 5) as f64).collect();
//! assert!(mann_kendall(&flat).unwrap().1 > 0.05);
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;

/// The level at which a drift is called significant.
pub const DRIFT_ALPHA: f64 = 0.01;

/// The fewest windows a drift test needs.
pub const MIN_DRIFT_WINDOWS: usize = 8;

/// The fewest successful requests a window needs for its p99.
pub const MIN_WINDOW_REQUESTS: usize = 20;

/// A trend of one figure over a run's windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// The figure (`p99 TTFT`).
    pub metric: String,
    /// The windows' length, seconds.
    pub window_s: f64,
    /// Windows tested.
    pub windows: usize,
    /// Sen's slope over the series' median, per hour (0.18: +18 % per hour).
    pub relative_slope_per_hour: f64,
    /// The Mann–Kendall test's two-sided p-value.
    pub p_value: f64,
    /// `p_value < DRIFT_ALPHA`.
    pub significant: bool,
}

/// Mann–Kendall's statistic S and its two-sided p-value (normal approximation with the
/// variance corrected for ties); `None` for fewer than three values or a non-finite one.
pub fn mann_kendall(x: &[f64]) -> Option<(f64, f64)> {
    let n = x.len();
    if n < 3 || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut s = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            s += (x[j] - x[i]).signum() * f64::from(u8::from(x[j] != x[i]));
        }
    }
    // Ties: Σ t(t−1)(2t+5) over groups of equal values.
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut k = 0;
    while k < n {
        let mut t = 1;
        while k + t < n && sorted[k + t] == sorted[k] {
            t += 1;
        }
        let t = t as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        k += t as usize;
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    if var <= 0.0 {
        return Some((s, 1.0));
    }
    let z = (s - s.signum()) / var.sqrt();
    Some((s, 2.0 * (1.0 - super::normal_cdf(z.abs()))))
}

/// Sen's slope of `y` over `t`: the median of the pairwise slopes.
pub fn sen_slope(t: &[f64], y: &[f64]) -> Option<f64> {
    let mut slopes = Vec::new();
    for i in 0..t.len().min(y.len()) {
        for j in i + 1..t.len().min(y.len()) {
            if t[j] != t[i] {
                slopes.push((y[j] - y[i]) / (t[j] - t[i]));
            }
        }
    }
    slopes.sort_by(f64::total_cmp);
    let m = slopes.len();
    match m {
        0 => None,
        _ if m % 2 == 1 => Some(slopes[m / 2]),
        _ => Some((slopes[m / 2 - 1] + slopes[m / 2]) / 2.0),
    }
}

/// The drift of the p99 TTFT of `records` over windows of `window` by send time (see the
/// module docs); `None` with fewer than [`MIN_DRIFT_WINDOWS`] windows of at least
/// [`MIN_WINDOW_REQUESTS`] successful requests.
pub fn ttft_drift(records: &[RequestRecord], window: Duration) -> Option<Drift> {
    let w = window.as_secs_f64();
    if w <= 0.0 {
        return None;
    }
    let mut by_window: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for r in records.iter().filter(|r| r.outcome.is_success()) {
        if let Some(ttft) = r.ttft() {
            // Saturating float-to-int conversion: the window's index.
            let k = (r.sent_at.as_secs_f64() / w) as u64;
            by_window
                .entry(k)
                .or_default()
                .push(ttft.as_secs_f64() * 1e3);
        }
    }
    let (mut t, mut y) = (Vec::new(), Vec::new());
    for (k, mut v) in by_window {
        if v.len() < MIN_WINDOW_REQUESTS {
            continue;
        }
        v.sort_by(f64::total_cmp);
        if let Some(p99) = crate::stats::percentile_linear(&v, 99.0) {
            t.push((k as f64 + 0.5) * w);
            y.push(p99);
        }
    }
    if y.len() < MIN_DRIFT_WINDOWS {
        return None;
    }
    let (_, p) = mann_kendall(&y)?;
    let slope = sen_slope(&t, &y)?;
    let mut sorted = y.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    Some(Drift {
        metric: "p99 TTFT".into(),
        window_s: w,
        windows: y.len(),
        relative_slope_per_hour: if median > 0.0 {
            slope * 3600.0 / median
        } else {
            0.0
        },
        p_value: p,
        significant: p < DRIFT_ALPHA,
    })
}
