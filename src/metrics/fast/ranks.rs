//! Finding ITL ranks: the log-linear histogram buckets, the sample-predicted value groups
//! and selection of the wanted ranks among the kept gaps.

use super::super::vllm_success;
use super::*;
use crate::record::RequestRecord;
use crate::rng::mix;

/// The gaps a second walk keeps: those in the histogram buckets of the wanted ranks, as
/// value ranges (few buckets) or a bucket → group table. Escaped gaps are never kept here
/// (their values come from the side lists).
pub(super) enum Wanted {
    /// `(lowest value, width)` of each group's bucket, escapes excluded.
    Ranges(Vec<(u32, u32)>),
    /// Group of each bucket, or [`NO_SLOT`].
    Slots(Vec<u16>),
}

/// The values of histogram bucket `b`: (lowest, width − 1), excluding [`ESCAPE`].
pub(super) fn bucket_values(b: usize) -> (u32, u32) {
    let sub = 1usize << SUB;
    if b < 2 * sub {
        return (b as u32, 0);
    }
    let shift = (b >> SUB) - 1;
    let m = b - (shift << SUB);
    let lo = (m as u64) << shift;
    let hi = (((m as u64) + 1) << shift) - 1;
    let hi = hi.min(u64::from(ESCAPE) - 1);
    (lo as u32, (hi - lo) as u32)
}

/// 0 if `r` is not a success, else 1 + its gaps (at most u32::MAX: only the sample and the
/// split read these, not the figures).
pub(super) fn gap_mark(r: &RequestRecord) -> u32 {
    if vllm_success(r) {
        u32::try_from(r.chunks.len()).unwrap_or(u32::MAX)
    } else {
        0
    }
}

/// Predict, from a sample of the gaps, value ranges that hold the gaps of `ranks` (0-based,
/// of `n_gaps`; only the first `limit` are predicted), given each record's [`gap_mark`] in
/// `gaps_of`. Empty when there is nothing to predict, or the ranges would hold too many gaps
/// or be too many.
///
/// The sample is systematic: one gap per stratum of `n_gaps / SAMPLE` consecutive gaps
/// (record order), at a pseudo-random place in it. Each rank gets a window of
/// ±[`SAMPLE_SIGMAS`] binomial standard deviations of its sample rank; the sample values
/// at the window's ends bound its range (overlapping ranges merge).
pub(super) fn predict_groups(
    records: &[RequestRecord],
    gaps_of: &[u32],
    n_gaps: usize,
    ranks: &[usize],
    limit: usize,
) -> Vec<Group> {
    if n_gaps == 0 || ranks.is_empty() || limit == 0 {
        return Vec::new();
    }
    let stride = (n_gaps / SAMPLE).max(1) as u64;
    let place = |j: u64| j * stride + mix(j) % stride;
    // Where the sampled gaps are (record, gap), then their values: two loops, so that the
    // second's memory loads overlap.
    let mut at: Vec<(usize, usize)> = Vec::with_capacity(n_gaps.min(SAMPLE) + 1);
    let (mut j, mut next) = (0u64, place(0));
    let mut seen = 0u64;
    for (r, &g) in gaps_of.iter().enumerate() {
        let g = u64::from(g.saturating_sub(1));
        while next < seen + g {
            at.push((r, (next - seen) as usize));
            j += 1;
            next = place(j);
        }
        seen += g;
    }
    let mut big = 0u64;
    let mut sample: Vec<u64> = Vec::with_capacity(at.len());
    for &(r, i) in &at {
        let chunks = records.get(r).map_or(&[][..], |r| &r.chunks[..]);
        if let (Some(a), Some(b)) = (chunks.get(i), chunks.get(i + 1)) {
            sample.push(ns(b.at, &mut big).saturating_sub(ns(a.at, &mut big)));
        }
    }
    let s = sample.len();
    if s == 0 {
        return Vec::new();
    }
    sample.sort_unstable();
    let mut windows: Vec<Group> = ranks
        .iter()
        .take(limit)
        .map(|&r| {
            let q = (r as f64 + 0.5) / n_gaps as f64;
            let centre = q * s as f64;
            let half = SAMPLE_SIGMAS * (s as f64 * q * (1.0 - q)).sqrt() + 2.0;
            let lo = (centre - half).floor().max(0.0) as usize;
            let hi = ((centre + half).ceil() as usize).min(s - 1);
            Group {
                lo: sample[lo.min(s - 1)],
                hi: sample[hi],
                ppm: 0,
            }
        })
        .collect();
    windows.sort_unstable_by_key(|g| g.lo);
    let mut merged: Vec<Group> = Vec::new();
    for w in windows {
        match merged.last_mut() {
            Some(m) if w.lo <= m.hi.saturating_add(1) => m.hi = m.hi.max(w.hi),
            _ => merged.push(w),
        }
    }
    // The sample's share of the gaps in the ranges: give up above a quarter.
    let mut inside = 0;
    for m in &mut merged {
        let n = sample.partition_point(|&g| g <= m.hi) - sample.partition_point(|&g| g < m.lo);
        m.ppm = u32::try_from(n as u64 * 1_000_000 / s as u64).unwrap_or(u32::MAX);
        inside += n;
    }
    if inside * 4 > s || merged.len() > MAX_GROUPS {
        return Vec::new();
    }
    merged
}

/// The ITL gaps (ns) at `ranks`: from the walk's groups when every rank falls in one,
/// else by a histogram walk and a gather walk ([`itl_by_histogram`]).
pub(super) fn itl_order_statistics(
    workers: &[&Worker],
    setup: &Setup,
    ranks: &[usize],
    parallel: bool,
) -> Option<Vec<u64>> {
    match itl_from_groups(workers, &setup.groups, ranks) {
        Some(vals) => Some(vals),
        None => itl_by_histogram(workers, ranks, parallel),
    }
}

/// The gaps at `ranks` when each falls in a group: a group's rank range starts at the
/// number of gaps below it. `None` when a rank falls in none.
pub(super) fn itl_from_groups(
    workers: &[&Worker],
    groups: &[Group],
    ranks: &[usize],
) -> Option<Vec<u64>> {
    let mut out: Vec<Option<u64>> = vec![None; ranks.len()];
    let side = || workers.iter().flat_map(|w| w.side.iter().copied());
    for (i, group) in groups.iter().enumerate() {
        let below = workers
            .iter()
            .map(|w| w.below.get(i).copied().unwrap_or(0))
            .sum::<u64>()
            + side().filter(|&g| g < group.lo).count() as u64;
        let mut kept: Vec<u32> = Vec::new();
        for w in workers {
            kept.extend_from_slice(w.gathered.get(i)?);
        }
        let escaped: Vec<u64> = side().filter(|&g| group.contains(g)).collect();
        let count = (kept.len() + escaped.len()) as u64;
        // (local rank, index into `ranks`) of the ranks in this group, ascending.
        let mut mine: Vec<(usize, usize)> = ranks
            .iter()
            .enumerate()
            .filter(|&(_, &r)| (below..below + count).contains(&(r as u64)))
            .map(|(j, &r)| (r - below as usize, j))
            .collect();
        if mine.is_empty() {
            continue;
        }
        mine.sort_unstable();
        let locals: Vec<usize> = mine.iter().map(|m| m.0).collect();
        let vals = if escaped.is_empty() {
            select_ascending(&mut kept, &locals)
                .into_iter()
                .map(u64::from)
                .collect()
        } else {
            let mut all: Vec<u64> = kept.into_iter().map(u64::from).chain(escaped).collect();
            select_ascending(&mut all, &locals)
        };
        for (&(_, j), v) in mine.iter().zip(vals) {
            out[j] = Some(v);
        }
    }
    out.into_iter().collect()
}

/// The values of ascending 0-based ranks `locals` (each below `vals.len()`), each selected
/// in what is right of the previous one.
pub(super) fn select_ascending<T: Ord + Copy>(vals: &mut [T], locals: &[usize]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(locals.len());
    let (mut rest, mut base) = (vals, 0usize);
    for &l in locals {
        match out.last() {
            Some(&v) if l < base => out.push(v),
            _ => {
                let (_, x, right) = std::mem::take(&mut rest).select_nth_unstable(l - base);
                out.push(*x);
                rest = right;
                base = l + 1;
            }
        }
    }
    out
}

/// The gaps at `ranks` by two more walks: the histogram of every gap, then the gaps of the
/// buckets holding the ranks. `None` if the counts disagree (they cannot, short of a bug).
pub(super) fn itl_by_histogram(
    workers: &[&Worker],
    ranks: &[usize],
    parallel: bool,
) -> Option<Vec<u64>> {
    let hists = per_worker(workers, parallel, |w| w.histogram());
    let mut hist = filled(HBUCKETS, 0u64);
    for h in &hists {
        for (a, &x) in hist.iter_mut().zip(h) {
            *a += x;
        }
    }
    let mut start = Vec::with_capacity(HBUCKETS);
    let mut acc = 0u64;
    for &h in &hist {
        start.push(acc);
        acc += h;
    }
    let place: Vec<(usize, usize)> = ranks
        .iter()
        .map(|&r| {
            let r = r as u64;
            if r >= acc {
                return None;
            }
            let b = start.partition_point(|&s| s <= r) - 1;
            Some((b, usize::try_from(r - start[b]).ok()?))
        })
        .collect::<Option<_>>()?;
    let mut wanted_buckets: Vec<usize> = place.iter().map(|p| p.0).collect();
    wanted_buckets.sort_unstable();
    wanted_buckets.dedup();
    let wanted = if wanted_buckets.len() <= 4 {
        Wanted::Ranges(wanted_buckets.iter().map(|&b| bucket_values(b)).collect())
    } else {
        let mut slots = filled(HBUCKETS, NO_SLOT);
        for (i, &b) in wanted_buckets.iter().enumerate() {
            *slots.get_mut(b)? = u16::try_from(i).ok()?;
        }
        Wanted::Slots(slots)
    };
    let groups = wanted_buckets.len();
    let wanted = &wanted;
    let found = per_worker(workers, parallel, |w| w.gather(wanted, groups));
    let top = hbucket(ESCAPE);
    let mut buckets: Vec<Vec<u64>> = wanted_buckets
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let mut vals: Vec<u64> = found
                .iter()
                .filter_map(|f| f.get(i))
                .flatten()
                .map(|&x| u64::from(x))
                .collect();
            // The top bucket also holds every escaped gap.
            if b == top {
                for w in workers {
                    vals.extend_from_slice(&w.side);
                }
            }
            vals
        })
        .collect();
    place
        .iter()
        .map(|&(b, local)| {
            let i = wanted_buckets.binary_search(&b).ok()?;
            let vals = buckets.get_mut(i)?;
            if local >= vals.len() || vals.len() as u64 != hist[b] {
                return None;
            }
            Some(*vals.select_nth_unstable(local).1)
        })
        .collect()
}
