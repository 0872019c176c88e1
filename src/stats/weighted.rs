//! guidellm's weighted distributions: its standard percentiles, inverse-CDF rule, and the
//! event-merging, duration-weighted rate and concurrency distributions
//! ([`WeightedDistribution`]).

use serde::{Deserialize, Serialize};

use super::pair_sort::sort_pairs;
use super::{pairwise_sum, pairwise_sum_by};

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
        sort_pairs(&mut sorted);
        WeightedDistribution::from_sorted(sorted, count)
    }

    /// [`WeightedDistribution::from_weighted`] of pairs already sorted by [`pair_order`](super::pair_sort::pair_order)
    /// (not empty), with the observation count given.
    pub(crate) fn from_sorted(mut sorted: Vec<(f64, f64)>, count: u64) -> Self {
        let p = Probabilities::merge(&mut sorted);
        let n = sorted.len();
        if n == 0 {
            return WeightedDistribution {
                count,
                ..WeightedDistribution::from_weighted(&[], None)
            };
        }
        let prob = |i: usize| p.of(sorted[i].1);
        let mut cdf = Vec::with_capacity(n);
        let mut run = 0.0;
        for i in 0..n {
            run += prob(i);
            cdf.push(run);
        }
        let mean = p.mean(&sorted);
        let variance = pairwise_sum_by(n, |i| {
            let d = sorted[i].0 - mean;
            d * d * prob(i)
        });
        let mut mode_i = 0;
        let mut mode_p = prob(0);
        for i in 1..n {
            let p = prob(i);
            if p > mode_p {
                mode_i = i;
                mode_p = p;
            }
        }
        let values: Vec<f64> = sorted.iter().map(|x| x.0).collect();
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
        sort_pairs(&mut wt);
        WeightedDistribution::rate_from_sorted(wt)
    }

    /// [`WeightedDistribution::rate_from_timings`] of events already filtered to the window,
    /// with the window's `(start, 0)` and `(end, 0)` events added, sorted by [`pair_order`](super::pair_sort::pair_order).
    pub(crate) fn rate_from_sorted(sorted: impl IntoIterator<Item = (f64, f64)>) -> Self {
        let mut wt = merge_sorted_times(sorted, GUIDELLM_MERGE_THRESHOLD_S);
        if wt.len() <= 1 {
            return WeightedDistribution::from_weighted(&[], None);
        }
        let count = round_half_even_u64(pairwise_sum_by(wt.len(), |i| wt[i].1));
        sorted_rate_pairs(&mut wt);
        WeightedDistribution::from_sorted(wt, count)
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
        sort_pairs(&mut wt);
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

/// guidellm's rate pairs from merged events (`(time, weight)`, time order), in place:
/// each event lasts from the previous midpoint (the first: from its own time) to the next
/// (the last: to its own time, at least 1e-6 s) and becomes `(weight / duration,
/// duration)`; pair i needs only events i and i + 1.
fn rate_pairs(events: &mut [(f64, f64)]) {
    let Some(&(mut edge, _)) = events.first() else {
        return;
    };
    let n = events.len();
    for i in 0..n {
        let (t, w) = events[i];
        let d = match events.get(i + 1) {
            Some(&(next, _)) => {
                let mid = (next + t) / 2.0;
                let d = mid - edge;
                edge = mid;
                d
            }
            None => (t - edge).max(GUIDELLM_EPSILON),
        };
        events[i] = (w / d, d);
    }
}

/// The rate pairs of merged events (see [`rate_pairs`]), sorted by [`pair_order`](super::pair_sort::pair_order).
fn sorted_rate_pairs(merged: &mut [(f64, f64)]) {
    rate_pairs(merged);
    sort_pairs(merged);
}

/// The mean and the max of [`WeightedDistribution::rate_from_sorted`]'s distribution,
/// from its events already merged by a [`TimeMerger`] with
/// [`GUIDELLM_MERGE_THRESHOLD_S`]: what a caller needing only those two figures computes
/// (no CDF, variance or percentiles), with the same bits.
pub(crate) fn rate_mean_max(mut merged: Vec<(f64, f64)>) -> (f64, f64) {
    if merged.len() <= 1 {
        return (0.0, 0.0);
    }
    sorted_rate_pairs(&mut merged);
    let p = Probabilities::merge(&mut merged);
    match merged.last() {
        Some(&(max, _)) => (p.mean(&merged), max),
        None => (0.0, 0.0),
    }
}

/// guidellm's probabilities over pairs sorted by [`pair_order`](super::pair_sort::pair_order) whose equal values were
/// merged and non-positive weights dropped ([`Probabilities::merge`]).
struct Probabilities {
    total: f64,
    /// Every weight counts as 1 (the weights summed to at most 1e-6).
    ones: bool,
}

impl Probabilities {
    /// Merge equal values in place (weights summed in order), drop non-positive weights,
    /// and return the probabilities of what remains.
    fn merge(sorted: &mut Vec<(f64, f64)>) -> Self {
        let mut k: usize = 0;
        for i in 0..sorted.len() {
            let (v, w) = sorted[i];
            match k.checked_sub(1).map(|last| &mut sorted[last]) {
                Some(last) if last.0 == v => last.1 += w,
                _ => {
                    sorted[k] = (v, 0.0 + w);
                    k += 1;
                }
            }
        }
        sorted.truncate(k);
        sorted.retain(|&(_, w)| w > 0.0);
        let n = sorted.len();
        let total = pairwise_sum_by(n, |i| sorted[i].1);
        if total <= GUIDELLM_EPSILON {
            Probabilities {
                total: pairwise_sum_by(n, |_| 1.0),
                ones: true,
            }
        } else {
            Probabilities { total, ones: false }
        }
    }

    /// The probability of a merged weight.
    #[inline]
    fn of(&self, w: f64) -> f64 {
        (if self.ones { 1.0 } else { w }) / self.total
    }

    /// The weighted mean of the merged pairs.
    fn mean(&self, merged: &[(f64, f64)]) -> f64 {
        pairwise_sum_by(merged.len(), |i| merged[i].0 * self.of(merged[i].1))
    }
}

/// guidellm 0.8's `_merge_sorted_times_with_weights`: sum the weights of equal times, then
/// greedily group times lying within `threshold` of a group's first time (groups never
/// span a gap larger than `threshold`), keeping each group's first time. One pass over a
/// stream of sorted events (see `merge_sorted_times_reference` in the tests for the
/// array-shaped original).
fn merge_sorted_times(
    sorted: impl IntoIterator<Item = (f64, f64)>,
    threshold: f64,
) -> Vec<(f64, f64)> {
    let mut m = TimeMerger::new(threshold, 0);
    for (t, w) in sorted {
        m.push(t, w);
    }
    m.finish()
}

/// [`merge_sorted_times`] fed one event at a time (events in [`pair_order`](super::pair_sort::pair_order)), so that
/// several streams can be merged in one pass over their events.
pub(crate) struct TimeMerger {
    threshold: f64,
    /// The distinct time being summed, and its weight so far.
    cur: (f64, f64),
    has_cur: bool,
    /// The open group's first distinct time and weight; the last distinct time in it.
    first: (f64, f64),
    prev: f64,
    has_group: bool,
    /// The weights of the group's later distinct times.
    rest: Vec<f64>,
    out: Vec<(f64, f64)>,
}

impl TimeMerger {
    /// An empty merger; `capacity` groups are reserved.
    pub(crate) fn new(threshold: f64, capacity: usize) -> Self {
        TimeMerger {
            threshold,
            cur: (0.0, 0.0),
            has_cur: false,
            first: (0.0, 0.0),
            prev: 0.0,
            has_group: false,
            rest: Vec::new(),
            out: Vec::with_capacity(capacity),
        }
    }

    /// The next event.
    #[inline]
    pub(crate) fn push(&mut self, t: f64, w: f64) {
        if self.has_cur && self.cur.0 == t {
            // Equal times summed in order, as `np.unique` + `np.add.reduceat` do.
            self.cur.1 += w;
            return;
        }
        if self.has_cur {
            self.distinct(self.cur);
        }
        self.cur = (t, 0.0 + w);
        self.has_cur = true;
    }

    #[inline]
    fn distinct(&mut self, x: (f64, f64)) {
        if self.threshold <= 0.0 {
            self.out.push(x);
            return;
        }
        if self.has_group
            && x.0 - self.prev <= self.threshold
            && x.0 <= self.first.0 + self.threshold
        {
            // Inside the run (gap within the threshold) and within the group's reach.
            self.rest.push(x.1);
            self.prev = x.0;
            return;
        }
        self.close();
        self.first = x;
        self.prev = x.0;
        self.has_group = true;
    }

    fn close(&mut self) {
        if !self.has_group {
            return;
        }
        // np.add.reduceat: first element, then numpy's sum of the rest.
        if self.rest.is_empty() {
            self.out.push(self.first);
        } else {
            self.out
                .push((self.first.0, self.first.1 + pairwise_sum(&self.rest)));
            self.rest.clear();
        }
    }

    /// The groups: `(first time, summed weight)` in time order.
    pub(crate) fn finish(mut self) -> Vec<(f64, f64)> {
        if self.has_cur {
            self.distinct(self.cur);
        }
        self.close();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::pair_order;
    use proptest::prelude::*;

    /// The array-shaped original of [`merge_sorted_times`]: guidellm 0.8's `_merge_sorted_times_with_weights`: sum the weights of equal times, then
    /// greedily group times lying within `threshold` of a group's first time (groups never
    /// span a gap larger than `threshold`), keeping each group's first time.
    fn merge_sorted_times_reference(sorted: Vec<(f64, f64)>, threshold: f64) -> Vec<(f64, f64)> {
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

    /// The array-shaped original of the summary in `from_sorted`: (mean, variance, mode,
    /// values, cdf).
    #[allow(clippy::type_complexity)]
    fn summary_reference(sorted: Vec<(f64, f64)>) -> Option<(f64, f64, f64, Vec<f64>, Vec<f64>)> {
        let mut values: Vec<f64> = Vec::new();
        let mut weights: Vec<f64> = Vec::new();
        for (v, w) in sorted {
            match values.last() {
                Some(&last) if last == v => *weights.last_mut()? += w,
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
            return None;
        }
        let probs: Vec<f64> = weights.iter().map(|w| w / total).collect();
        let mut cdf = Vec::new();
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
            .map(|(v, p)| (v - mean) * (v - mean) * p)
            .collect();
        let mut mode_i = 0;
        for (i, &p) in probs.iter().enumerate() {
            if p > probs[mode_i] {
                mode_i = i;
            }
        }
        Some((mean, pairwise_sum(&dev), values[mode_i], values, cdf))
    }

    proptest! {
        #[test]
        fn summary_equals_the_array_summary(
            raw in proptest::collection::vec((0u16..300, -2i8..6), 1..1500),
            tiny in any::<bool>(),
        ) {
            let scale = if tiny { 1e-9 } else { 0.37 };
            let mut pairs: Vec<(f64, f64)> = raw
                .iter()
                .map(|&(v, w)| (f64::from(v) * 1.3, f64::from(w) * scale))
                .collect();
            sort_pairs(&mut pairs);
            let d = WeightedDistribution::from_sorted(pairs.clone(), 7);
            let bits = |xs: &[f64]| xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            match summary_reference(pairs) {
                None => prop_assert!(d.values.is_empty()),
                Some((mean, variance, mode, values, cdf)) => {
                    prop_assert_eq!(d.mean.to_bits(), mean.to_bits());
                    prop_assert_eq!(d.variance.to_bits(), variance.to_bits());
                    prop_assert_eq!(d.mode.to_bits(), mode.to_bits());
                    prop_assert_eq!(bits(&d.values), bits(&values));
                    prop_assert_eq!(bits(&d.cdf), bits(&cdf));
                }
            }
        }
    }

    proptest! {
        #[test]
        fn streaming_merge_equals_the_array_merge(
            mut ev in proptest::collection::vec((0u32..400, 0u8..4), 0..200),
            scale in prop_oneof![Just(1e-5), Just(3.3e-5), Just(1e-4)],
            threshold in prop_oneof![Just(0.0), Just(1e-4), Just(2.5e-4)],
        ) {
            let mut events: Vec<(f64, f64)> = ev
                .drain(..)
                .map(|(t, w)| (f64::from(t) * scale, f64::from(w) / 3.0))
                .collect();
            events.sort_unstable_by(pair_order);
            let a = merge_sorted_times(events.iter().copied(), threshold);
            let b = merge_sorted_times_reference(events, threshold);
            prop_assert_eq!(
                a.iter().map(|x| (x.0.to_bits(), x.1.to_bits())).collect::<Vec<_>>(),
                b.iter().map(|x| (x.0.to_bits(), x.1.to_bits())).collect::<Vec<_>>()
            );
        }
    }
}
