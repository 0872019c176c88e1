//! Exact peaks from the workers' results: the sliding 1-second token peak from the cells,
//! and the most requests in flight at one instant.

use super::super::{aligned_peak_and_candidates, cell_index, CandidateGroups};
use super::*;

/// The exact sliding-window token peak from the merged token cells (cells from the
/// earliest successful send): aligned windows, then the candidate cells' chunks.
pub(super) fn exact_peak_tokens(
    workers: &[&Worker],
    cells: &[u64],
    setup: &Setup,
    spare: Vec<u64>,
) -> u64 {
    let k = setup.k;
    let ncells = cells.len();
    let mut prefix = spare;
    prefix.clear();
    prefix.reserve(ncells + k + 2);
    let mut acc = 0u64;
    prefix.push(0);
    for c in cells {
        acc += c & TOKENS_MASK;
        prefix.push(acc);
    }
    prefix.resize(ncells + k + 2, acc);
    let (best, candidates) = aligned_peak_and_candidates(&prefix, k, ncells);
    if candidates.is_empty() {
        return best;
    }
    let mut groups = CandidateGroups::new(&candidates, k, ncells);
    let wanted = groups.wanted_prefix();
    let sorted = workers.iter().all(|w| w.chunks_sorted);
    let cell_of = |t: u64| cell_index(t - setup.min_ns, setup.cell_ns);
    let mut big = 0u64;
    for w in workers {
        for &(first, last, i) in &w.first_last {
            if sorted {
                let (a, b) = (cell_of(first), cell_of(last) + 1);
                let hits = wanted.get(b).zip(wanted.get(a)).map_or(1, |(y, x)| y - x);
                if hits == 0 {
                    continue;
                }
            }
            for c in w.records.get(i).map_or(&[][..], |r| &r.chunks[..]) {
                let t = ns(c.at, &mut big);
                groups.push(cell_of(t), t, c.tokens);
            }
        }
    }
    groups.sweep(&prefix, k, &candidates, best)
}

/// Exact peak in flight from the workers' `[send, end)` intervals (their ends sorted):
/// at each arrival, arrivals so far minus departures at or before it.
pub(super) fn peak_in_flight(workers: &[&Worker]) -> u64 {
    let sorted = workers.iter().all(|w| w.starts.is_sorted())
        && workers
            .windows(2)
            .all(|p| match (p[0].starts.last(), p[1].starts.first()) {
                (Some(a), Some(b)) => a <= b,
                _ => true,
            });
    let owned: Vec<u64>;
    let starts: Vec<&[u64]> = if sorted {
        workers.iter().map(|w| &w.starts[..]).collect()
    } else {
        let mut all: Vec<u64> = workers
            .iter()
            .flat_map(|w| w.starts.iter().copied())
            .collect();
        all.sort_unstable();
        owned = all;
        vec![&owned[..]]
    };
    let ends: Vec<&[u64]> = workers.iter().map(|w| &w.ends[..]).collect();
    let mut j = vec![0usize; ends.len()];
    let (mut arrived, mut peak) = (0u64, 0u64);
    for &s in starts.iter().flat_map(|l| l.iter()) {
        arrived += 1;
        let mut departed = 0u64;
        for (jj, e) in j.iter_mut().zip(&ends) {
            while *jj < e.len() && e[*jj] <= s {
                *jj += 1;
            }
            departed += *jj as u64;
        }
        peak = peak.max(arrived - departed);
    }
    peak
}
