//! The successful requests' output-token events in [`pair_order`], without a sort of
//! every event and without an array of every event.
//!
//! Each request's events form an arithmetic progression in time ([`Lane`]), so they are
//! already in order. Time is
//! cut into cells (a cell's index is monotone in the time, so cells are in order) and
//! cells into blocks. A request waits in the bucket of the block of its next event; each
//! block takes the events of the requests waiting in it up to the block's end (the
//! request then waits in the bucket of its next event's block), sorts these few events by
//! cell (a counting sort) and each cell's handful by [`pair_order`], and hands them on.
//! Every event is made once, and a request is only visited where it has events.
//!
//! A request whose times do not increase (the last before the first, or a rounding that
//! puts the last-but-one after the last) makes [`sorted_blocks`] return `None`: the
//! caller then uses the reference path.

use super::Stats;
use crate::stats::pair_order;

/// Events per time cell, on average.
const EVENTS_PER_CELL: usize = 4;
/// Cells per block (about 64 K events; a few in tests, so that the tests' small runs span
/// many blocks).
const BLOCK_CELLS: usize = if cfg!(test) { 8 } else { 1 << 14 };
/// Cells sorted by insertion up to this many events.
const INSERTION_MAX: usize = 24;

/// One request's output-token events: `(time(i), weight(i))` for `i` in `0..len()`.
/// guidellm places one output token at the first token and spreads the others evenly
/// (`np.linspace`) over the remaining iterations, or puts all of them at the last token
/// (else the end) when there is at most one iteration. The one place this is written:
/// `Stats::for_each_output_timing` reads it too.
pub(super) struct Lane {
    first: f64,
    last: f64,
    step: f64,
    /// Iterations (the progression's length when it has more than one event).
    num: usize,
    len: usize,
    w0: f64,
    per: f64,
    /// The next event to hand on (in [`sorted_blocks`]).
    next: usize,
}

impl Lane {
    /// The events of `s`.
    pub(super) fn new(s: &Stats) -> Lane {
        let n = s.output_tokens.unwrap_or(0);
        match (s.first, s.last) {
            (Some(first), Some(last)) if s.iterations > 1 => {
                let num = s.iterations;
                Lane {
                    first,
                    last,
                    step: (last - first) / (num - 1) as f64,
                    num,
                    len: if n > 1 { num } else { 1 },
                    w0: if n > 0 { 1.0 } else { 0.0 },
                    per: (n as f64 - 1.0) / (num as f64 - 1.0),
                    next: 0,
                }
            }
            _ => {
                let t = s.last.unwrap_or(s.end_time);
                Lane {
                    first: t,
                    last: t,
                    step: 0.0,
                    num: 1,
                    len: 1,
                    w0: n as f64,
                    per: 0.0,
                    next: 0,
                }
            }
        }
    }

    /// Whether the times never decrease (finite ends, the last-but-one not rounded past
    /// the last).
    fn increasing(&self) -> bool {
        self.len <= 1
            || (self.first.is_finite()
                && self.last.is_finite()
                && self.first <= self.last
                && self.time(self.len - 2) <= self.last)
    }

    /// The number of events.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The time of event `i`.
    #[inline]
    pub(super) fn time(&self, i: usize) -> f64 {
        if i == 0 {
            self.first
        } else if i == self.num - 1 {
            self.last
        } else if self.step == 0.0 {
            (i as f64 / (self.num - 1) as f64) * (self.last - self.first) + self.first
        } else {
            i as f64 * self.step + self.first
        }
    }

    /// The weight (tokens) of event `i`.
    #[inline]
    pub(super) fn weight(&self, i: usize) -> f64 {
        if i == 0 {
            self.w0
        } else {
            self.per
        }
    }

    /// The first event at or after `ws` (`len` when none).
    fn first_from(&self, ws: f64) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.time(mid) < ws {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Call `f` with the output-token events of `ok` inside `[ws, we]` plus `(ws, 0)` and
/// `(we, 0)`, in [`pair_order`], one block at a time. `events` bounds the number of
/// events (at least one per request). `None` (before any call) when a request's times do
/// not increase (see the module docs).
pub(super) fn sorted_blocks(
    ok: &[&Stats],
    events: usize,
    ws: f64,
    we: f64,
    mut f: impl FnMut(&[(f64, f64)]),
) -> Option<()> {
    let ncells = (events / EVENTS_PER_CELL).clamp(1, 1 << 26);
    let scale = ncells as f64 / (we - ws);
    let last = ncells - 1;
    // Monotone in t: a subtraction, a product by a positive constant, a truncation.
    let cell = |t: f64| (((t - ws) * scale) as usize).min(last);
    let bc = BLOCK_CELLS.min(ncells);
    let nblocks = ncells.div_ceil(bc);
    let mut lanes = Vec::with_capacity(ok.len());
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); nblocks];
    for s in ok {
        let mut lane = Lane::new(s);
        if !lane.increasing() {
            return None;
        }
        lane.next = lane.first_from(ws);
        if lane.next < lane.len {
            let t = lane.time(lane.next);
            if t <= we {
                buckets[cell(t) / bc].push(lanes.len() as u32);
                lanes.push(lane);
            }
        }
    }
    let edges = [(ws, 0.0), (we, 0.0)];
    let mut staged: Vec<(f64, f64)> = Vec::new();
    let mut cells: Vec<u32> = Vec::new();
    let mut sorted: Vec<(f64, f64)> = Vec::new();
    let mut at = vec![0u32; bc + 1];
    let mut next = vec![0u32; bc + 1];
    for b in 0..nblocks {
        let c0 = b * bc;
        let c1 = (c0 + bc).min(ncells);
        staged.clear();
        cells.clear();
        for &e in &edges {
            let k = cell(e.0);
            if (c0..c1).contains(&k) {
                staged.push(e);
                cells.push((k - c0) as u32);
            }
        }
        let waiting = std::mem::take(&mut buckets[b]);
        for &id in &waiting {
            let lane = &mut lanes[id as usize];
            let mut i = lane.next;
            while i < lane.len {
                let t = lane.time(i);
                if t > we {
                    break;
                }
                let k = cell(t);
                if k >= c1 {
                    buckets[k / bc].push(id);
                    break;
                }
                staged.push((t, lane.weight(i)));
                cells.push((k - c0) as u32);
                i += 1;
            }
            lane.next = i;
        }
        drop(waiting);
        if staged.is_empty() {
            continue;
        }
        // Counting sort by cell, then each cell by pair_order.
        let width = c1 - c0;
        at[..=width].iter_mut().for_each(|x| *x = 0);
        for &k in &cells {
            at[k as usize + 1] += 1;
        }
        for k in 0..width {
            at[k + 1] += at[k];
        }
        sorted.clear();
        sorted.resize(staged.len(), (0.0, 0.0));
        {
            next[..=width].copy_from_slice(&at[..=width]);
            for (&k, &e) in cells.iter().zip(&staged) {
                let p = &mut next[k as usize];
                sorted[*p as usize] = e;
                *p += 1;
            }
        }
        for k in 0..width {
            sort_cell(&mut sorted[at[k] as usize..at[k + 1] as usize]);
        }
        f(&sorted);
    }
    Some(())
}

/// Sort a cell's events by [`pair_order`] (insertion sort for the usual few).
fn sort_cell(xs: &mut [(f64, f64)]) {
    if xs.len() > INSERTION_MAX {
        xs.sort_unstable_by(pair_order);
    } else {
        crate::stats::insertion_sort(xs);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Status;
    use super::*;
    use crate::record::synthetic::SplitMix64;

    fn stats(first: Option<f64>, last: Option<f64>, iterations: usize, n: Option<u64>) -> Stats {
        Stats {
            status: Status::Successful,
            start: 0.0,
            end_time: last.unwrap_or(0.5) + 0.01,
            request_end: None,
            first,
            last,
            iterations,
            output_tokens: n,
            prompt_tokens: Some(10),
            scheduled: None,
            checks_ok: true,
        }
    }

    /// Every event `for_each_output_timing` makes inside the window plus the window's
    /// edges, sorted by `pair_order`: what the blocks must hand on, in that order.
    fn expected(ok: &[&Stats], ws: f64, we: f64) -> Vec<(f64, f64)> {
        let mut all = vec![(ws, 0.0), (we, 0.0)];
        for s in ok {
            s.for_each_output_timing(|t, w| {
                if t >= ws && t <= we {
                    all.push((t, w));
                }
            });
        }
        all.sort_unstable_by(pair_order);
        all
    }

    #[test]
    fn blocks_hand_on_every_event_in_order() {
        let mut rng = SplitMix64::new(11);
        let mut runs: Vec<Stats> = Vec::new();
        for i in 0..400 {
            let first = rng.range(0, 10_000) as f64 / 1000.0;
            let len = rng.range(0, 4_000) as f64 / 1000.0;
            runs.push(match i % 7 {
                // Single events, events at one time, tokens without iterations.
                0 => stats(None, Some(first), 1, Some(rng.range(0, 50))),
                1 => stats(Some(first), Some(first), 30, Some(40)),
                2 => stats(Some(first), Some(first + len), 20, Some(1)),
                3 => stats(None, None, 0, None),
                _ => stats(
                    Some(first),
                    Some(first + len),
                    rng.range(2, 200) as usize,
                    Some(rng.range(2, 400)),
                ),
            });
        }
        let ok: Vec<&Stats> = runs.iter().collect();
        let events = ok.iter().map(|s| s.iterations.max(1)).sum();
        for (ws, we) in [(0.0, 14.0), (2.5, 7.25), (3.0, 3.0)] {
            let mut got = Vec::new();
            let mut blocks = 0;
            sorted_blocks(&ok, events, ws, we, |b| {
                got.extend_from_slice(b);
                blocks += 1;
            })
            .expect("increasing times");
            let bits = |xs: &[(f64, f64)]| {
                xs.iter()
                    .map(|x| (x.0.to_bits(), x.1.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                bits(&got),
                bits(&expected(&ok, ws, we)),
                "window {ws}..{we}"
            );
            assert!(ws == we || blocks > 10, "{blocks} blocks");
        }
    }

    #[test]
    fn times_that_do_not_increase_give_up() {
        let backwards = stats(Some(2.0), Some(1.0), 10, Some(20));
        let infinite = stats(Some(1.0), Some(f64::INFINITY), 10, Some(20));
        let fine = stats(Some(1.0), Some(2.0), 10, Some(20));
        for bad in [&backwards, &infinite] {
            let ok = [&fine, bad];
            assert!(sorted_blocks(&ok, 20, 0.0, 3.0, |_| {}).is_none());
        }
        assert!(sorted_blocks(&[&fine], 10, 0.0, 3.0, |_| {}).is_some());
    }
}
