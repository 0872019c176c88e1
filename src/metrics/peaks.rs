//! servebench's exact figures ([`ExactFigures`]): the most output tokens in any sliding
//! 1-second window (binned prefix sums, an exact sweep only where a better window can
//! start) and the most requests in flight at one instant.

use super::{nanos_u64, record_end, NANOS_PER_S};
use crate::record::RequestRecord;
use crate::result::ExactFigures;

/// servebench's exact figures over `records` (see the module docs).
pub fn exact_figures(records: &[RequestRecord]) -> ExactFigures {
    ExactFigures {
        peak_output_tokens_per_s: Some(sliding_window_peak_tokens(records) as f64),
        peak_in_flight: Some(peak_in_flight(records)),
    }
}

/// `d / cell_ns` for the four cell sizes, each a division by a constant.
#[inline]
pub(crate) fn cell_index(d: u64, cell_ns: u64) -> usize {
    (match cell_ns {
        1_000_000 => d / 1_000_000,
        10_000_000 => d / 10_000_000,
        100_000_000 => d / 100_000_000,
        _ => d / NANOS_PER_S,
    }) as usize
}

/// Token prefix sums over cells of the chunks in `[lo, hi]`: `(prefix, lo, cell_ns, K,
/// cells)`, or `None` when there is nothing to bin or a chunk lies outside `[lo, hi]`.
#[allow(clippy::type_complexity)]
fn bin_tokens<'a, I: Iterator<Item = &'a crate::record::Chunk>>(
    chunks: &impl Fn() -> I,
    lo: u64,
    hi: u64,
) -> Option<(Vec<u64>, u64, u64, usize, usize)> {
    if lo > hi {
        return None;
    }
    let span = hi - lo;
    let mut k: u64 = 1000;
    while k > 1 && span / (NANOS_PER_S / k) > (1 << 24) {
        k /= 10;
    }
    let cell_ns = NANOS_PER_S / k;
    let k = k as usize;
    let ncells = cell_index(span, cell_ns) + 1;
    if ncells > MAX_CELLS {
        // Longer than ~194 days (a corrupt timestamp): not worth a table per second.
        return None;
    }
    // prefix[i] = tokens in cells 0..i (cells past the last one are empty).
    let mut prefix = vec![0u64; ncells + k + 2];
    for c in chunks() {
        let t = nanos_u64(c.at);
        if t < lo || t > hi {
            return None;
        }
        prefix[cell_index(t - lo, cell_ns) + 1] += u64::from(c.tokens);
    }
    for i in 1..prefix.len() {
        prefix[i] += prefix[i - 1];
    }
    Some((prefix, lo, cell_ns, k, ncells))
}

/// Most cells [`bin_tokens`] makes: 1-second cells over 2^24 s (~194 days).
const MAX_CELLS: usize = (1 << 24) + 1;

/// [`sliding_window_peak_tokens`] by its definition: sort every chunk of the successful
/// requests and slide a 1-second window over them. O(n log n); used when the span is too
/// long to bin.
fn sorted_sweep_peak_tokens(records: &[RequestRecord]) -> u64 {
    let mut ev: Vec<(u64, u32)> = records
        .iter()
        .filter(|r| r.outcome.is_success())
        .flat_map(|r| r.chunks.iter())
        .filter(|c| c.tokens > 0)
        .map(|c| (nanos_u64(c.at), c.tokens))
        .collect();
    ev.sort_unstable();
    let (mut best, mut sum, mut lo) = (0u64, 0u64, 0usize);
    for &(t, tokens) in &ev {
        sum += u64::from(tokens);
        // The window ends at this chunk: drop the chunks a second or more before it
        // (`lo` never passes the current chunk, whose own gap is 0).
        while t - ev[lo].0 >= NANOS_PER_S {
            sum -= u64::from(ev[lo].1);
            lo += 1;
        }
        best = best.max(sum);
    }
    best
}

/// Most output tokens of successful requests in any half-open window `[s, s + 1 s)`.
///
/// Exact, without sorting every chunk: tokens are binned into cells of 1/K s (K = 1000, or
/// fewer for runs longer than ~4.6 h); windows aligned on cells are summed exactly from
/// prefix sums, giving a lower bound `L`. A window starting inside cell `c` can only beat
/// `L` if the K + 1 cells `c..=c+K` hold more than `L` tokens; only for those candidate
/// cells are the chunks of cells `c` and `c + K` sorted and the window swept exactly.
fn sliding_window_peak_tokens(records: &[RequestRecord]) -> u64 {
    let chunks = || {
        records
            .iter()
            .filter(|r| r.outcome.is_success())
            .flat_map(|r| r.chunks.iter())
            .filter(|c| c.tokens > 0)
    };
    // Chunks arrive in order within a record, so the first and last chunks usually bound
    // the run; binning checks it and falls back to a full min/max scan when they do not.
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for r in records.iter().filter(|r| r.outcome.is_success()) {
        if let (Some(f), Some(l)) = (r.chunks.first(), r.chunks.last()) {
            lo = lo.min(nanos_u64(f.at));
            hi = hi.max(nanos_u64(l.at));
        }
    }
    let (prefix, lo, cell_ns, k, ncells) = match bin_tokens(&chunks, lo, hi) {
        Some(binned) => binned,
        None => {
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            for c in chunks() {
                let t = nanos_u64(c.at);
                lo = lo.min(t);
                hi = hi.max(t);
            }
            match bin_tokens(&chunks, lo, hi) {
                Some(binned) => binned,
                // No chunks, or a span too long to bin.
                None => return sorted_sweep_peak_tokens(records),
            }
        }
    };
    let cell_of = |t: u64| cell_index(t - lo, cell_ns);
    let (best, candidates) = aligned_peak_and_candidates(&prefix, k, ncells);
    if candidates.is_empty() {
        return best;
    }
    let mut groups = CandidateGroups::new(&candidates, k, ncells);
    for c in chunks() {
        let t = nanos_u64(c.at);
        groups.push(cell_of(t), t, c.tokens);
    }
    groups.sweep(&prefix, k, &candidates, best)
}

/// From token prefix sums over `ncells` cells of 1/K s (`prefix[i]` = tokens in cells
/// `0..i`, padded with K + 2 empty cells): the best window aligned on cells (a lower bound
/// of the peak) and the cells a better window could start in (see
/// [`sliding_window_peak_tokens`]).
pub(crate) fn aligned_peak_and_candidates(
    prefix: &[u64],
    k: usize,
    ncells: usize,
) -> (u64, Vec<usize>) {
    let sum = |a: usize, b: usize| prefix[b] - prefix[a]; // cells a..b
    let best = (0..ncells).map(|c| sum(c, c + k)).max().unwrap_or(0);
    let candidates: Vec<usize> = (0..ncells).filter(|&c| sum(c, c + k + 1) > best).collect();
    (best, candidates)
}

/// The chunks of every candidate cell and of its partner cell c + K, gathered for the
/// exact sweep of [`sliding_window_peak_tokens`].
pub(crate) struct CandidateGroups {
    /// Group index of each cell, or `NONE`.
    slot: Vec<u32>,
    groups: Vec<Vec<(u64, u32)>>,
}

impl CandidateGroups {
    const NONE: u32 = u32::MAX;

    pub(crate) fn new(candidates: &[usize], k: usize, ncells: usize) -> Self {
        let mut slot = vec![Self::NONE; ncells + k + 1];
        let mut groups: Vec<Vec<(u64, u32)>> = Vec::new();
        for &c in candidates {
            for cell in [c, c + k] {
                if slot[cell] == Self::NONE {
                    slot[cell] = groups.len() as u32;
                    groups.push(Vec::new());
                }
            }
        }
        CandidateGroups { slot, groups }
    }

    /// Cells `0..n` that are wanted, as prefix counts (`out[i]` = wanted cells below `i`).
    pub(crate) fn wanted_prefix(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.slot.len() + 1);
        let mut acc = 0u32;
        out.push(0);
        for &s in &self.slot {
            acc += u32::from(s != Self::NONE);
            out.push(acc);
        }
        out
    }

    /// Keep a chunk (time in ns, tokens) lying in `cell` if that cell is wanted; chunks
    /// without tokens are dropped.
    #[inline]
    pub(crate) fn push(&mut self, cell: usize, t: u64, tokens: u32) {
        if tokens == 0 {
            return;
        }
        if let Some(&s) = self.slot.get(cell) {
            if s != Self::NONE {
                self.groups[s as usize].push((t, tokens));
            }
        }
    }

    /// The exact peak: `best` or a better window starting inside a candidate cell.
    pub(crate) fn sweep(
        mut self,
        prefix: &[u64],
        k: usize,
        candidates: &[usize],
        mut best: u64,
    ) -> u64 {
        let sum = |a: usize, b: usize| prefix[b] - prefix[a]; // cells a..b
        for g in self.groups.iter_mut() {
            g.sort_unstable();
        }
        let window = NANOS_PER_S;
        for &c in candidates {
            let starts = &self.groups[self.slot[c] as usize];
            let ends = &self.groups[self.slot[c + k] as usize];
            let inner = sum(c + 1, c + k);
            // Tokens of cell c at or after the start, of cell c+K before the end.
            let mut tail: u64 = starts.iter().map(|e| u64::from(e.1)).sum();
            let mut head = 0u64;
            let mut j = 0;
            let mut i = 0;
            while i < starts.len() {
                let s = starts[i].0;
                while j < ends.len() && ends[j].0 < s + window {
                    head += u64::from(ends[j].1);
                    j += 1;
                }
                best = best.max(inner + tail + head);
                // Every chunk at time s leaves the window once the start moves past s.
                while i < starts.len() && starts[i].0 == s {
                    tail -= u64::from(starts[i].1);
                    i += 1;
                }
            }
        }
        best
    }
}

/// Exact peak of requests in flight: sweep line over half-open `[send, end)`.
fn peak_in_flight(records: &[RequestRecord]) -> u64 {
    let mut ev: Vec<(u64, i8)> = Vec::with_capacity(records.len() * 2);
    for r in records {
        let s = nanos_u64(r.sent_at);
        let e = nanos_u64(record_end(r));
        if e > s {
            ev.push((s, 1));
            ev.push((e, -1));
        }
    }
    ev.sort_unstable();
    let (mut level, mut peak) = (0i64, 0i64);
    for (_, d) in ev {
        level += i64::from(d);
        peak = peak.max(level);
    }
    peak as u64
}

/// Below this many chunks the exact figures are computed inline; above, on a second
/// thread while the convention's statistics are computed.
pub(super) const PARALLEL_CHUNKS: usize = 1 << 20;

/// Run `f` and the exact figures concurrently for large runs.
pub(super) fn with_exact_figures<T: Send>(
    records: &[RequestRecord],
    f: impl FnOnce() -> T + Send,
) -> (T, ExactFigures) {
    let chunks: usize = records.iter().map(|r| r.chunks.len()).sum();
    if chunks < PARALLEL_CHUNKS {
        return (f(), exact_figures(records));
    }
    std::thread::scope(|s| {
        match std::thread::Builder::new().spawn_scoped(s, || exact_figures(records)) {
            Ok(h) => {
                let t = f();
                let exact = h
                    .join()
                    .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
                (t, exact)
            }
            // No thread available: do both here.
            Err(_) => (f(), exact_figures(records)),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::compute;
    use crate::record::Chunk;
    use crate::result::Convention;
    use proptest::prelude::*;

    /// The definition: sort every chunk, slide a window.
    fn naive_peak(records: &[RequestRecord]) -> u64 {
        let mut ev: Vec<(u64, u32)> = records
            .iter()
            .filter(|r| r.outcome.is_success())
            .flat_map(|r| r.chunks.iter())
            .map(|c| (nanos_u64(c.at), c.tokens))
            .collect();
        ev.sort_unstable();
        let (mut best, mut sum, mut lo) = (0u64, 0u64, 0usize);
        for hi in 0..ev.len() {
            sum += u64::from(ev[hi].1);
            while ev[hi].0 - ev[lo].0 >= 1_000_000_000 {
                sum -= u64::from(ev[lo].1);
                lo += 1;
            }
            best = best.max(sum);
        }
        best
    }

    #[test]
    fn sliding_peak_on_a_ten_hour_run_uses_coarser_cells() {
        // 10 h span → 10 ms cells; the burst straddles cell edges.
        let at = |ns: u64| Chunk {
            at: Duration::from_nanos(ns),
            tokens: 3,
        };
        let mut r = RequestRecord::new(0, Duration::ZERO);
        r.chunks = vec![at(0), at(36_000_000_000_000)];
        let mut burst = RequestRecord::new(1, Duration::ZERO);
        let base = 5_000_004_999_999u64;
        burst.chunks = (0..50).map(|i| at(base + i * 20_000_001)).collect();
        let records = vec![r, burst];
        assert_eq!(sliding_window_peak_tokens(&records), naive_peak(&records));
        assert_eq!(naive_peak(&records), 50 * 3);
    }

    /// One chunk stamped ~146 billion years after the run started (a corrupt timestamp)
    /// must not make the per-second tables as long as the span.
    #[test]
    fn a_far_future_timestamp_does_not_size_tables_by_the_span() {
        let ms = Duration::from_millis;
        let mut a = RequestRecord::new(0, Duration::ZERO);
        a.chunks = vec![
            Chunk {
                at: ms(5),
                tokens: 1,
            },
            Chunk {
                at: ms(6),
                tokens: 1,
            },
        ];
        let mut b = RequestRecord::new(1, Duration::ZERO);
        b.chunks = vec![Chunk {
            at: Duration::from_secs(u64::MAX / 4),
            tokens: 1,
        }];
        let records = vec![a, b];
        let res = compute(&records, Convention::Vllm);
        assert_eq!(res.peak_output_throughput_per_s, Some(2.0));
        assert_eq!(res.peak_concurrent_requests, Some(2.0));
        let exact = res.exact.unwrap();
        assert_eq!(exact.peak_output_tokens_per_s, Some(2.0));
        assert_eq!(exact.peak_in_flight, Some(2));
        assert_eq!(sliding_window_peak_tokens(&records), naive_peak(&records));
    }

    proptest! {
        #[test]
        fn sliding_peak_equals_definition(
            scale in prop::sample::select(vec![1_000u64, 1_000_000, 100_000_000, 30_000_000_000]),
            reqs in prop::collection::vec(prop::collection::vec((0u64..5_000, 0u32..5), 0..40), 0..20),
        ) {
            let records: Vec<RequestRecord> = reqs
                .iter()
                .enumerate()
                .map(|(i, chunks)| {
                    let mut r = RequestRecord::new(i as u64, Duration::ZERO);
                    r.chunks = chunks
                        .iter()
                        .map(|&(t, tokens)| Chunk { at: Duration::from_nanos(t * scale / 1000 * 7 / 3), tokens })
                        .collect();
                    r
                })
                .collect();
            prop_assert_eq!(sliding_window_peak_tokens(&records), naive_peak(&records));
        }
    }
}
