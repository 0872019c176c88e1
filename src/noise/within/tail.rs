//! The rules that decide whether a within-run interval can be made for a latency's tail:
//! the minimum tail index for an interval of the mean ([`MIN_TAIL_INDEX`]) and the
//! effective observations a percentile needs beyond it ([`MIN_TAIL_OBSERVATIONS`], with
//! Woodruff's CDF bounds in `cdf_bounds`). See the `within` module docs.

/// Smallest Hill tail index of a latency's values for an interval of its mean: below 2 the
/// variance looks infinite and the bootstrap of the mean is not consistent (Athreya 1987,
/// "Bootstrap of the mean in the infinite variance case", Ann. Statist. 15:724–731).
pub const MIN_TAIL_INDEX: f64 = 2.0;

/// Fewest effective independent observations beyond a percentile (below it for ranks under
/// 50) for its within-run interval: with fewer, the percentile of one run is decided by a
/// handful of requests (often of one burst) and no interval from that run is honest.
pub const MIN_TAIL_OBSERVATIONS: f64 = 5.0;

/// Woodruff's CDF bounds `q ± z·se` for the percentile at rank `q` (0–1): `se` is the
/// bootstrap standard error of the empirical CDF there, raised to the binomial
/// `√(q(1−q)/n)` when smaller (dependence never makes a percentile surer than independent
/// requests would). `None` when the effective sample `q(1−q)/se²` holds fewer than
/// [`MIN_TAIL_OBSERVATIONS`] values beyond the percentile, or a bound leaves (0, 1): the
/// interval would end at the sample's extreme, which is no bound at all.
pub(super) fn cdf_bounds(q: f64, se_boot: f64, n: f64, z: f64) -> Option<(f64, f64)> {
    if !(n >= 1.0 && q > 0.0 && q < 1.0) {
        return None;
    }
    let var_iid = q * (1.0 - q) / n;
    let se = se_boot.max(var_iid.sqrt());
    let n_eff = q * (1.0 - q) / (se * se);
    if n_eff * q.min(1.0 - q) < MIN_TAIL_OBSERVATIONS {
        return None;
    }
    let (lo, hi) = (q - z * se, q + z * se);
    // The bounds must stay inside the sample with at least one value beyond them.
    let step = 1.0 / n;
    (lo >= step && hi <= 1.0 - step).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A p99 of 300 independent requests (three beyond it) gets no bounds; of 4000 it does,
    /// at `0.99 ± 1.96·√(0.99·0.01/4000)`; a bootstrap error below the binomial one is
    /// raised to it, and one above it widens the bounds and can refuse them.
    #[test]
    fn tail_bounds_need_enough_effective_observations() {
        let z = 1.959_963_984_540_054;
        assert_eq!(cdf_bounds(0.99, 0.0, 300.0, z), None);
        let se = (0.99f64 * 0.01 / 4000.0).sqrt();
        let (lo, hi) = cdf_bounds(0.99, 0.0, 4000.0, z).unwrap();
        assert!((lo - (0.99 - z * se)).abs() < 1e-12 && (hi - (0.99 + z * se)).abs() < 1e-12);
        let (lo2, _) = cdf_bounds(0.99, 2.0 * se, 4000.0, z).unwrap();
        assert!(lo2 < lo);
        // Design effect 10: 40 effective requests beyond, too few.
        assert_eq!(cdf_bounds(0.99, 10f64.sqrt() * se, 4000.0, z), None);
        // The median of 300 is always fine.
        assert!(cdf_bounds(0.5, 0.0, 300.0, z).is_some());
    }
}
