//! `Convention::Vllm` in one pass over the chunks, on two threads for large runs, with the
//! same bits as the straightforward computation ([`super::compute_vllm_reference`]).
//!
//! * Times are handled as u64 nanoseconds. `Duration::as_secs_f64` is a monotone function
//!   of the nanoseconds, so the ITL order statistics are selected on integers and only the
//!   selected gaps are converted; the ITL sum and the sum of squared deviations are computed
//!   on the converted seconds in numpy's pairwise tree, leaf by leaf, from gaps streamed
//!   through a small window of u32 nanoseconds (gaps of 2^32 − 1 ns or more are kept in a
//!   side list, in order). No per-gap array is allocated: fresh pages cost more than
//!   reading the chunks twice.
//! * The two threads split the gaps at numpy's top-level pairwise split point, so adding
//!   their two sums is numpy's last addition. Each thread walks its records once: per-request
//!   figures, the gaps, a log-linear histogram of the gaps, 1/K-second cells of chunk and
//!   token counts (vLLM's 1-second buckets are K cells each; the exact sliding-window peak
//!   is computed from the token cells) and the intervals for the exact peak in flight.
//! * A second walk over the same chunks sums the squared deviations about the mean and
//!   gathers the gaps of the histogram buckets that hold the wanted ranks.
//!
//! Inputs this path does not cover (a time of 2^34 s or more, a chunk of a successful request
//! before every successful send, a last chunk before its send, a span much longer than the
//! run has chunks) return `None`, and the caller uses the reference computation.

use std::time::Duration;

use super::{
    aligned_peak_and_candidates, cell_index, default_duration_from, record_end, vllm_success,
    CandidateGroups, MetricsOptions, VllmFigures, NANOS_PER_S,
};
use crate::record::{Chunk, RequestRecord};
use crate::stats::{leaf_sum, numpy_summary, pairwise_split, pairwise_tree, SummaryRanks};

/// Times below 2^34 s (~544 years) fit in u64 nanoseconds with room to spare.
const SECS_LIMIT_BITS: u32 = 34;
/// Marks a gap kept in the side list (too long for a u32 of nanoseconds).
const ESCAPE: u32 = u32::MAX;
/// Leaf size of numpy's pairwise summation.
const LEAF: usize = 128;
/// Histogram sub-bucket bits: values below 2^SUB are exact, above each power of two is
/// split in 2^SUB buckets.
const SUB: u32 = 11;
const HBUCKETS: usize = (33 - SUB as usize) << SUB;
/// Fast path only when the cell table is at most this many cells or 8 per chunk.
const DENSE_CELLS_MIN: usize = 1 << 20;
/// Coarsen cells until the estimated span needs at most this many.
const TARGET_CELLS: u64 = 1 << 22;

/// `d` in nanoseconds; ORs the seconds into `big` (checked against 2^34 at the end).
#[inline]
fn ns(d: Duration, big: &mut u64) -> u64 {
    *big |= d.as_secs();
    d.as_secs()
        .wrapping_mul(NANOS_PER_S)
        .wrapping_add(u64::from(d.subsec_nanos()))
}

/// `Duration::from_nanos(ns).as_secs_f64()`, bit for bit.
#[inline]
pub(crate) fn secs_f64(ns: u64) -> f64 {
    (ns / NANOS_PER_S) as f64 + (ns % NANOS_PER_S) as f64 / NANOS_PER_S as f64
}

/// Log-linear histogram bucket of a gap (monotone in `g`).
#[inline]
fn hbucket(g: u32) -> usize {
    if g < (1 << SUB) {
        g as usize
    } else {
        let shift = 31 - g.leading_zeros() - SUB;
        ((shift as usize) << SUB) + (g >> shift) as usize
    }
}

/// `n` copies of `v`, written now. (`vec![0; n]` maps zero pages that are copied on the
/// first write to each; under two threads every such fault flushes the other core's TLB,
/// which costs far more than writing the zeros.)
fn filled<T: Clone>(n: usize, v: T) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    out.resize(n, v);
    out
}

/// Cell size (ns) and cells per second for a span.
fn cell_size(span: u64) -> (u64, usize) {
    let mut k: u64 = 1000;
    while k > 1 && span / (NANOS_PER_S / k) > TARGET_CELLS {
        k /= 10;
    }
    (NANOS_PER_S / k, k as usize)
}

/// What every worker needs to know.
struct Setup {
    /// Earliest send of a successful request: origin of the cells and of vLLM's buckets.
    min_ns: u64,
    cell_ns: u64,
    k: usize,
    init_cells: usize,
    max_cells: usize,
}

/// One worker's share: a range of records and a range of the flattened gaps.
struct Part<'a> {
    records: &'a [RequestRecord],
    /// Gaps of the first record that belong to the previous part.
    skip: usize,
    /// The next part's first record, whose first `tail_gaps` gaps belong to this part.
    tail: &'a [Chunk],
    tail_gaps: usize,
    n_gaps: usize,
}

/// Per-worker state and results of the first pass.
struct Worker<'a> {
    part: Part<'a>,
    setup: &'a Setup,
    /// Length of each of numpy's pairwise leaves over the part's gaps, in order.
    leaves: Vec<u8>,
    /// Next leaf to sum.
    leaf: usize,
    /// Sum of each leaf, in order (combined in numpy's tree at the end).
    leaf_sums: Vec<f64>,
    /// Gaps produced but not yet summed (fewer than a batch plus one request's).
    gaps: Vec<u32>,
    /// The part's gaps of 2^32 − 1 ns or more, in order ([`ESCAPE`] in `gaps`).
    side: Vec<u64>,
    side_cursor: usize,
    hist: Vec<u64>,
    itl_sum: f64,
    gap_min: u64,
    gap_max: u64,
    ttfts: Vec<f64>,
    e2els: Vec<f64>,
    tpots: Vec<f64>,
    all_tpots: Vec<f64>,
    /// (first, last) chunk of each success.
    first_last: Vec<(u64, u64)>,
    /// Per cell: chunks << 32 | tokens of successful requests, wrapping (an overflow shows
    /// in the totals: see [`unpack_check`]).
    cells: Vec<u64>,
    /// Chunks and tokens added to `cells`.
    cell_chunks: u64,
    cell_tokens: u64,
    /// vLLM concurrency difference array over 1-second buckets.
    conc: Vec<i64>,
    max_last: u64,
    successes: u64,
    starts: Vec<u64>,
    ends: Vec<u64>,
    min_sent: u64,
    max_end: u64,
    total_input: u64,
    total_output: u64,
    big: u64,
    bad: bool,
    chunks_sorted: bool,
}

/// Gaps collected before the complete leaves among them are summed.
const BATCH: usize = 1 << 12;

/// The lengths of numpy's pairwise leaves over `n` values, left to right.
fn leaf_lengths(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n / (LEAF / 2) + 1);
    pairwise_tree(n, &mut |len| {
        // A leaf holds at most LEAF = 128 values.
        out.push(len as u8);
        0.0
    });
    out
}

/// numpy's pairwise sum of `n` values from the sums of its leaves (as [`leaf_lengths`]
/// lists them); NaN if there are fewer sums than leaves.
fn combine_leaves(n: usize, sums: &[f64]) -> f64 {
    let mut it = sums.iter();
    pairwise_tree(n, &mut |_| it.next().copied().unwrap_or(f64::NAN))
}

/// [`leaf_sum`] of `f` over `g`, without materialising the values (the same additions in
/// the same order).
#[inline(always)]
fn leaf_sum_of(g: &[u32], f: impl Fn(u32) -> f64) -> f64 {
    let n = g.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in g {
            res += f(x);
        }
        return res;
    }
    let full = n - n % 8;
    let (head, rest) = g.split_at(8);
    let mut r = [0.0f64; 8];
    for (acc, &x) in r.iter_mut().zip(head) {
        *acc = f(x);
    }
    for block in rest[..full - 8].chunks_exact(8) {
        for (acc, &x) in r.iter_mut().zip(block) {
            *acc += f(x);
        }
    }
    let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for &x in &g[full..] {
        res += f(x);
    }
    res
}

/// One chunk in a packed cell (chunks in the high 32 bits, tokens in the low).
const CHUNK_ONE: u64 = 1 << 32;
const TOKENS_MASK: u64 = (1 << 32) - 1;

/// Whether packed cells hold exactly `chunks` chunks and `tokens` tokens, i.e. no 32-bit
/// half wrapped. (A half only wraps by losing 2^32, and tokens carry into the chunks only
/// when they wrap, so the two sums match the totals if and only if nothing wrapped.)
fn cells_exact(cells: &[u64], chunks: u64, tokens: u64) -> bool {
    let (mut c, mut t) = (0u64, 0u64);
    for &x in cells {
        c = c.wrapping_add(x >> 32);
        t = t.wrapping_add(x & TOKENS_MASK);
    }
    c == chunks && t == tokens
}

/// Running state of one request's walk over its chunks (kept in registers).
#[derive(Default)]
struct Walk {
    prev: u64,
    tokens: u64,
    big: u64,
    longest: u64,
    unsorted: bool,
    /// A chunk's cell was past the table.
    missed: bool,
}

impl Walk {
    /// One chunk: its time in ns, its cell (or `missed`), its tokens.
    #[inline(always)]
    fn visit<const CELL_NS: u64>(&mut self, c: &Chunk, min_ns: u64, cells: &mut [u64]) -> u64 {
        let secs = c.at.as_secs();
        self.big |= secs;
        let t = secs
            .wrapping_mul(NANOS_PER_S)
            .wrapping_add(u64::from(c.at.subsec_nanos()));
        let cell = (t.wrapping_sub(min_ns) / CELL_NS) as usize;
        match cells.get_mut(cell) {
            Some(e) => *e = e.wrapping_add(CHUNK_ONE | u64::from(c.tokens)),
            None => self.missed = true,
        }
        self.tokens += u64::from(c.tokens);
        t
    }
}

/// Smallest and largest of `g` (`(u32::MAX, 0)` when empty).
#[inline]
fn min_max(g: &[u32]) -> (u32, u32) {
    let (mut mn, mut mx) = (u32::MAX, 0u32);
    for &x in g {
        mn = mn.min(x);
        mx = mx.max(x);
    }
    (mn, mx)
}

impl<'a> Worker<'a> {
    fn new(part: Part<'a>, setup: &'a Setup) -> Self {
        let recs = part.records.len();
        let leaves = leaf_lengths(part.n_gaps);
        Worker {
            leaf_sums: Vec::with_capacity(leaves.len()),
            leaves,
            leaf: 0,
            gaps: Vec::with_capacity(2 * BATCH),
            part,
            setup,
            side: Vec::new(),
            side_cursor: 0,
            hist: filled(HBUCKETS, 0),
            itl_sum: 0.0,
            gap_min: u64::MAX,
            gap_max: 0,
            ttfts: Vec::with_capacity(recs),
            e2els: Vec::with_capacity(recs),
            tpots: Vec::with_capacity(recs),
            all_tpots: Vec::with_capacity(recs),
            first_last: Vec::with_capacity(recs),
            cells: filled(setup.init_cells, 0),
            cell_chunks: 0,
            cell_tokens: 0,
            conc: filled(setup.init_cells / setup.k + 2, 0),
            max_last: 0,
            successes: 0,
            starts: Vec::with_capacity(recs),
            ends: Vec::with_capacity(recs),
            min_sent: u64::MAX,
            max_end: 0,
            total_input: 0,
            total_output: 0,
            big: 0,
            bad: false,
            chunks_sorted: true,
        }
    }

    /// First pass: everything but the squared deviations.
    fn run(mut self) -> Self {
        let records = self.part.records;
        for (i, r) in records.iter().enumerate() {
            let skip = if i == 0 { self.part.skip } else { 0 };
            self.record(r, skip);
            if self.bad {
                return self;
            }
            if self.gaps.len() >= BATCH {
                self.sum_leaves();
            }
        }
        let (tail, count) = (self.part.tail, self.part.tail_gaps);
        push_gaps(tail, 0, count, &mut self.gaps, &mut self.side, &mut self.big);
        self.sum_leaves();
        if self.leaf != self.leaves.len()
            || !self.gaps.is_empty()
            || self.side_cursor != self.side.len()
        {
            self.bad = true;
        }
        self.itl_sum = combine_leaves(self.part.n_gaps, &self.leaf_sums);
        self.ends.sort_unstable();
        self
    }

    /// Sum every complete leaf in `gaps` (histogram and extremes too); keep the rest.
    fn sum_leaves(&mut self) {
        let mut pos = 0usize;
        while let Some(&len) = self.leaves.get(self.leaf) {
            let Some(g) = self.gaps.get(pos..pos + usize::from(len)) else {
                break;
            };
            let (mn, mx) = min_max(g);
            for &x in g {
                if let Some(h) = self.hist.get_mut(hbucket(x)) {
                    *h += 1;
                }
            }
            let sum = if mx < NANOS_PER_S as u32 {
                self.gap_min = self.gap_min.min(u64::from(mn));
                self.gap_max = self.gap_max.max(u64::from(mx));
                leaf_sum_of(g, |x| f64::from(x) / NANOS_PER_S as f64)
            } else {
                let mut buf = [0.0f64; LEAF];
                let (lo, hi) = convert(g, &self.side, &mut self.side_cursor, &mut buf);
                self.gap_min = self.gap_min.min(lo);
                self.gap_max = self.gap_max.max(hi);
                leaf_sum(&buf[..g.len()])
            };
            self.leaf_sums.push(sum);
            self.leaf += 1;
            pos += usize::from(len);
        }
        self.gaps.drain(..pos);
    }

    fn grow_cells(&mut self, cell: usize) -> bool {
        if cell >= self.setup.max_cells {
            self.bad = true;
            return false;
        }
        let len = (cell + 1)
            .max(self.cells.len() + self.cells.len() / 4)
            .min(self.setup.max_cells);
        self.cells.resize(len, 0);
        self.conc.resize(len / self.setup.k + 2, 0);
        true
    }

    fn record(&mut self, r: &RequestRecord, skip: usize) {
        let sent = ns(r.sent_at, &mut self.big);
        let end = ns(record_end(r), &mut self.big);
        self.min_sent = self.min_sent.min(sent);
        self.max_end = self.max_end.max(end);
        if end > sent {
            self.starts.push(sent);
            self.ends.push(end);
        }
        if !vllm_success(r) {
            return;
        }
        let (Some(first), Some(last)) = (r.chunks.first(), r.chunks.last()) else {
            return;
        };
        let first_ns = ns(first.at, &mut self.big);
        let last_ns = ns(last.at, &mut self.big);
        let min_ns = self.setup.min_ns;
        if last_ns < sent || sent < min_ns {
            self.bad = true;
            return;
        }
        let tokens = match self.setup.cell_ns {
            1_000_000 => self.chunks::<1_000_000>(&r.chunks, skip),
            10_000_000 => self.chunks::<10_000_000>(&r.chunks, skip),
            100_000_000 => self.chunks::<100_000_000>(&r.chunks, skip),
            _ => self.chunks::<NANOS_PER_S>(&r.chunks, skip),
        };
        let Some(tokens) = tokens else {
            self.bad = true;
            return;
        };
        let output_len = match r.usage_output_tokens {
            Some(n) if n > 0 => n,
            _ => tokens,
        };
        self.total_output = self.total_output.saturating_add(output_len);
        self.total_input = self
            .total_input
            .saturating_add(r.input_tokens().unwrap_or(0));
        let ttft = secs_f64(first_ns.saturating_sub(sent));
        let latency = secs_f64(last_ns - sent);
        let mut tpot = 0.0;
        if output_len > 1 {
            tpot = (latency - ttft) / (output_len - 1) as f64;
            self.tpots.push(tpot);
        }
        self.all_tpots.push(tpot);
        self.ttfts.push(ttft);
        self.e2els.push(latency);
        self.first_last.push((first_ns, last_ns));
        self.successes += 1;
        self.max_last = self.max_last.max(last_ns);
        let first_b = ((sent - min_ns) / NANOS_PER_S) as usize;
        let last_b = ((last_ns - min_ns) / NANOS_PER_S) as usize;
        if let Some(c) = self.conc.get_mut(first_b) {
            *c += 1;
        }
        match self.conc.get_mut(last_b + 1) {
            Some(c) => *c -= 1,
            None => self.bad = true,
        }
    }

    /// The chunks of one successful request: cells, gaps (from gap `skip` on); returns the
    /// request's token count, `None` for a chunk before the origin or past the cell cap.
    #[inline]
    fn chunks<const CELL_NS: u64>(&mut self, chunks: &[Chunk], skip: usize) -> Option<u64> {
        let min_ns = self.setup.min_ns;
        // Chunks usually arrive in order: size the table for the last one up front.
        if let Some(last) = chunks.last() {
            let t = ns(last.at, &mut self.big);
            let cell = (t.wrapping_sub(min_ns) / CELL_NS) as usize;
            if t >= min_ns && cell >= self.cells.len() && !self.grow_cells(cell) {
                return None;
            }
        }
        // Chunks `..=skip` emit no gap of this part (the first emits none at all).
        let head = chunks.len().min(skip + 1);
        let (before, after) = chunks.split_at(head);
        let start = self.gaps.len();
        self.gaps.resize(start + after.len(), 0);
        let out = self.gaps.get_mut(start..).unwrap_or(&mut []);
        let table = self.cells.len();
        let mut walk = Walk::default();
        let cells = &mut self.cells[..];
        if let Some((first, rest)) = before.split_first() {
            walk.prev = walk.visit::<CELL_NS>(first, min_ns, cells);
            for c in rest {
                let t = walk.visit::<CELL_NS>(c, min_ns, cells);
                walk.unsorted |= t < walk.prev;
                walk.prev = t;
            }
        }
        for (o, c) in out.iter_mut().zip(after) {
            let t = walk.visit::<CELL_NS>(c, min_ns, cells);
            walk.unsorted |= t < walk.prev;
            let g = t.saturating_sub(walk.prev);
            walk.prev = t;
            walk.longest = walk.longest.max(g);
            *o = g.min(u64::from(ESCAPE)) as u32;
        }
        if walk.longest >= u64::from(ESCAPE) {
            // The long gaps again, for the side list.
            let from = head.saturating_sub(1);
            push_side(&chunks[from..], &mut self.side);
        }
        self.big |= walk.big;
        self.chunks_sorted &= !walk.unsorted;
        self.cell_chunks += chunks.len() as u64;
        self.cell_tokens += walk.tokens;
        if walk.missed && !self.add_missed::<CELL_NS>(chunks, table) {
            return None;
        }
        Some(walk.tokens)
    }

    /// Add the chunks whose cells were past the table (of `table` cells) when the request
    /// was walked: grow the table to hold them; `false` if it cannot (a chunk before the
    /// origin, or past the cap).
    #[cold]
    fn add_missed<const CELL_NS: u64>(&mut self, chunks: &[Chunk], table: usize) -> bool {
        let min_ns = self.setup.min_ns;
        let mut big = 0u64;
        let missed: Vec<(usize, u32)> = chunks
            .iter()
            .map(|c| {
                let cell = (ns(c.at, &mut big).wrapping_sub(min_ns) / CELL_NS) as usize;
                (cell, c.tokens)
            })
            .filter(|&(cell, _)| cell >= table)
            .collect();
        let Some(max) = missed.iter().map(|p| p.0).max() else {
            return true;
        };
        if !self.grow_cells(max) {
            return false;
        }
        for (cell, tok) in missed {
            let Some(e) = self.cells.get_mut(cell) else {
                return false;
            };
            *e = e.wrapping_add(CHUNK_ONE | u64::from(tok));
        }
        true
    }

    /// Second pass over this worker's gaps: the pairwise sum of squared deviations about
    /// `mean`, and the gaps whose histogram bucket has a slot in `slots`.
    fn second_pass(&self, mean: f64, wanted: &Wanted, groups: usize) -> (f64, Vec<Vec<u64>>) {
        let mut out: Vec<Vec<u64>> = vec![Vec::new(); groups];
        let mut sums: Vec<f64> = Vec::with_capacity(self.leaves.len());
        let mut cursor = 0usize;
        let mut gaps: Vec<u32> = Vec::with_capacity(2 * BATCH);
        let mut leaf = 0usize;
        // Every gap is below a second unless the first pass saw a longer one.
        let short = self.gap_max < NANOS_PER_S;
        let mut big = 0u64;
        let mut side = Vec::new();
        let mut flush = |gaps: &mut Vec<u32>, out: &mut Vec<Vec<u64>>| {
            let mut pos = 0usize;
            while let Some(&len) = self.leaves.get(leaf) {
                let Some(g) = gaps.get(pos..pos + usize::from(len)) else {
                    break;
                };
                let sum = if short {
                    leaf_sum_of(g, |x| {
                        let d = f64::from(x) / NANOS_PER_S as f64 - mean;
                        d * d
                    })
                } else {
                    let mut buf = [0.0f64; LEAF];
                    let vals = &mut buf[..g.len()];
                    convert(g, &self.side, &mut cursor, vals);
                    for v in vals.iter_mut() {
                        let d = *v - mean;
                        *v = d * d;
                    }
                    leaf_sum(vals)
                };
                sums.push(sum);
                leaf += 1;
                pos += usize::from(len);
            }
            let done = gaps.get(..pos).unwrap_or(&[]);
            match wanted {
                Wanted::Ranges(ranges) => {
                    for &x in done {
                        for (i, &(lo, width)) in ranges.iter().enumerate() {
                            if x.wrapping_sub(lo) <= width {
                                out[i].push(u64::from(x));
                            }
                        }
                    }
                }
                Wanted::Slots(slots) => {
                    for &x in done {
                        let s = slots[hbucket(x)];
                        if s != NO_SLOT && x != ESCAPE {
                            out[s as usize].push(u64::from(x));
                        }
                    }
                }
            }
            gaps.drain(..pos);
        };
        for (i, r) in self.part.records.iter().enumerate() {
            if vllm_success(r) {
                let skip = if i == 0 { self.part.skip } else { 0 };
                push_gaps(&r.chunks, skip, usize::MAX, &mut gaps, &mut side, &mut big);
                side.clear();
                if gaps.len() >= BATCH {
                    flush(&mut gaps, &mut out);
                }
            }
        }
        let (tail, count) = (self.part.tail, self.part.tail_gaps);
        push_gaps(tail, 0, count, &mut gaps, &mut side, &mut big);
        flush(&mut gaps, &mut out);
        let sq = if leaf == self.leaves.len() && gaps.is_empty() {
            combine_leaves(self.part.n_gaps, &sums)
        } else {
            f64::NAN
        };
        (sq, out)
    }
}

/// Push gaps `skip..skip + count` of `chunks` (as u32 ns, [`ESCAPE`] for long ones, whose
/// values go to `side`).
#[inline]
fn push_gaps(
    chunks: &[Chunk],
    skip: usize,
    count: usize,
    out: &mut Vec<u32>,
    side: &mut Vec<u64>,
    big: &mut u64,
) {
    let end = chunks
        .len()
        .min(skip.saturating_add(count).saturating_add(1));
    let Some(chunks) = chunks.get(skip..end) else {
        return;
    };
    let Some((first, rest)) = chunks.split_first() else {
        return;
    };
    let start = out.len();
    out.resize(start + rest.len(), 0);
    let dst = out.get_mut(start..).unwrap_or(&mut []);
    let (mut b, mut longest) = (0u64, 0u64);
    let mut prev = ns(first.at, &mut b);
    for (o, c) in dst.iter_mut().zip(rest) {
        let t = ns(c.at, &mut b);
        let g = t.saturating_sub(prev);
        prev = t;
        longest = longest.max(g);
        *o = g.min(u64::from(ESCAPE)) as u32;
    }
    *big |= b;
    if longest >= u64::from(ESCAPE) {
        push_side(chunks, side);
    }
}

/// The gaps of 2^32 − 1 ns or more between consecutive `chunks`, in order.
#[cold]
fn push_side(chunks: &[Chunk], side: &mut Vec<u64>) {
    let mut big = 0u64;
    for w in chunks.windows(2) {
        let g = ns(w[1].at, &mut big).saturating_sub(ns(w[0].at, &mut big));
        if g >= u64::from(ESCAPE) {
            side.push(g);
        }
    }
}

const NO_SLOT: u16 = u16::MAX;

/// The gaps the second pass keeps: those in the histogram buckets of the wanted ranks,
/// as value ranges (few buckets) or a bucket → group table. Escaped gaps are never kept
/// here (their values come from the side lists).
enum Wanted {
    /// `(lowest value, width)` of each group's bucket, escapes excluded.
    Ranges(Vec<(u32, u32)>),
    /// Group of each bucket, or [`NO_SLOT`]; the top bucket's escapes excluded by the caller.
    Slots(Vec<u16>),
}

/// The values of histogram bucket `b`: (lowest, width − 1), excluding [`ESCAPE`].
fn bucket_values(b: usize) -> (u32, u32) {
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

/// Gaps → seconds in `out` (side list values for escapes, in order); returns the smallest
/// and largest gap in ns.
#[inline]
fn convert(g: &[u32], side: &[u64], cursor: &mut usize, out: &mut [f64]) -> (u64, u64) {
    let mut mx = 0u32;
    let mut mn = u32::MAX;
    for &x in g {
        mx = mx.max(x);
        mn = mn.min(x);
    }
    if mx < NANOS_PER_S as u32 {
        for (o, &x) in out.iter_mut().zip(g) {
            *o = f64::from(x) / NANOS_PER_S as f64;
        }
        return (u64::from(mn), u64::from(mx));
    }
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for (o, &x) in out.iter_mut().zip(g) {
        let v = if x == ESCAPE {
            let v = side.get(*cursor).copied().unwrap_or(u64::MAX);
            *cursor += 1;
            v
        } else {
            u64::from(x)
        };
        lo = lo.min(v);
        hi = hi.max(v);
        *o = secs_f64(v);
    }
    (lo, hi)
}

/// Run `a` here and `b` on a second thread (or both here when `parallel` is false or no
/// thread can be started).
fn join<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    // `b` is taken by the thread, or back here when the thread cannot be started.
    let b = std::sync::Mutex::new(Some(b));
    let take = || b.lock().ok().and_then(|mut g| g.take());
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().spawn_scoped(s, || take().map(|f| f()));
        let ra = a();
        let rb = match spawned {
            Ok(h) => h
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
            Err(_) => take().map(|f| f()),
        };
        match rb {
            Some(rb) => (ra, rb),
            None => unreachable!("`b` runs exactly once, on the thread or here"),
        }
    })
}

/// The vLLM figures by the one-pass method, or `None` for inputs it does not cover.
/// Runs on two threads when the records hold at least `parallel_chunks` chunks.
pub(super) fn vllm_figures(
    records: &[RequestRecord],
    opts: &MetricsOptions,
    parallel_chunks: usize,
) -> Option<VllmFigures> {
    // Sizes, the origin and an estimate of the span, from the records alone.
    let mut big = 0u64;
    let (mut n_gaps, mut total_chunks) = (0usize, 0usize);
    let (mut min_ns, mut est_hi) = (u64::MAX, 0u64);
    for r in records {
        total_chunks += r.chunks.len();
        let sent = ns(r.sent_at, &mut big);
        if let Some(e) = r.ended_at {
            est_hi = est_hi.max(ns(e, &mut big));
        }
        if vllm_success(r) {
            n_gaps += r.chunks.len() - 1;
            min_ns = min_ns.min(sent);
            est_hi = est_hi.max(sent);
        }
    }
    if big >> SECS_LIMIT_BITS != 0 {
        return None;
    }
    if min_ns == u64::MAX {
        min_ns = 0;
    }
    let span = est_hi.saturating_sub(min_ns);
    let (cell_ns, k) = cell_size(span);
    let dense_limit = DENSE_CELLS_MIN.max(total_chunks.saturating_mul(8));
    let init_cells = usize::try_from(span / cell_ns).ok()?.checked_add(2)?;
    if init_cells > dense_limit {
        return None;
    }
    let setup = Setup {
        min_ns,
        cell_ns,
        k,
        init_cells,
        max_cells: dense_limit.max(init_cells.saturating_mul(2)),
    };

    let parallel = total_chunks >= parallel_chunks && n_gaps > 4 * LEAF;
    let (part1, part2) = if parallel {
        let n2 = pairwise_split(n_gaps);
        let mut cum = 0usize;
        let mut split = None;
        for (i, r) in records.iter().enumerate() {
            if vllm_success(r) {
                let g = r.chunks.len() - 1;
                if cum + g > n2 {
                    split = Some((i, n2 - cum));
                    break;
                }
                cum += g;
            }
        }
        let (rs, skip) = split?;
        let (a, b) = records.split_at(rs);
        let tail = b.first().map_or(&[][..], |r| &r.chunks[..]);
        (
            Part {
                records: a,
                skip: 0,
                tail,
                tail_gaps: skip,
                n_gaps: n2,
            },
            Some(Part {
                records: b,
                skip,
                tail: &[],
                tail_gaps: 0,
                n_gaps: n_gaps - n2,
            }),
        )
    } else {
        (
            Part {
                records,
                skip: 0,
                tail: &[],
                tail_gaps: 0,
                n_gaps,
            },
            None,
        )
    };

    // First pass.
    let setup = &setup;
    let (mut w1, w2) = join(
        parallel,
        || Worker::new(part1, setup).run(),
        || part2.map(|p| Worker::new(p, setup).run()),
    );
    let mut cells = std::mem::take(&mut w1.cells);
    let mut conc = std::mem::take(&mut w1.conc);
    let workers: Vec<&Worker> = std::iter::once(&w1).chain(w2.as_ref()).collect();
    if workers
        .iter()
        .any(|w| w.bad || w.big >> SECS_LIMIT_BITS != 0)
    {
        return None;
    }

    // ITL: mean, extremes, the buckets of the wanted ranks.
    let pct = &opts.percentiles;
    let itl_sum: f64 = match &w2 {
        Some(w2) => w1.itl_sum + w2.itl_sum,
        None => w1.itl_sum,
    };
    let mean = itl_sum / n_gaps as f64;
    let ranks = SummaryRanks::new(n_gaps, pct);
    let mut hist = filled(HBUCKETS, 0u64);
    for w in &workers {
        for (h, &x) in hist.iter_mut().zip(&w.hist) {
            *h += x;
        }
    }
    let mut start = Vec::with_capacity(HBUCKETS + 1);
    let mut acc = 0u64;
    for &h in &hist {
        start.push(acc);
        acc += h;
    }
    let mut slots = filled(HBUCKETS, NO_SLOT);
    let mut wanted: Vec<usize> = Vec::new();
    let place: Vec<Option<(usize, u64)>> = ranks
        .ranks
        .iter()
        .map(|&r| {
            let r = r as u64;
            (r < acc).then(|| {
                let b = start.partition_point(|&s| s <= r) - 1;
                (b, r - start[b])
            })
        })
        .collect();
    for &(b, _) in place.iter().flatten() {
        if slots[b] == NO_SLOT {
            slots[b] = wanted.len() as u16;
            wanted.push(b);
        }
    }
    let top = hbucket(ESCAPE);

    let (mut r1, r2) = {
        let w1 = &w1;
        let w2 = w2.as_ref();
        let groups = wanted.len();
        let sel = if groups <= 4 {
            Wanted::Ranges(wanted.iter().map(|&b| bucket_values(b)).collect())
        } else {
            Wanted::Slots(slots.clone())
        };
        let sel = &sel;
        join(
            parallel,
            || w1.second_pass(mean, sel, groups),
            || w2.map(|w| w.second_pass(mean, sel, groups)),
        )
    };
    let sq_sum = match &r2 {
        Some(r2) => r1.0 + r2.0,
        None => r1.0,
    };
    if let Some(r2) = r2 {
        for (g, o) in r1.1.iter_mut().zip(r2.1) {
            g.extend(o);
        }
    }
    if let Some(&s) = slots.get(top) {
        if s != NO_SLOT {
            for w in &workers {
                r1.1[s as usize].extend_from_slice(&w.side);
            }
        }
    }
    let mut groups = r1.1;
    let vals: Vec<f64> = place
        .iter()
        .map(|p| match p {
            Some((b, local)) => {
                let g = &mut groups[slots[*b] as usize];
                match usize::try_from(*local).ok().filter(|&l| l < g.len()) {
                    Some(l) => secs_f64(*g.select_nth_unstable(l).1),
                    None => f64::NAN,
                }
            }
            None => f64::NAN,
        })
        .collect();
    if vals.iter().any(|v| v.is_nan()) && n_gaps > 0 {
        return None;
    }
    let itl = (n_gaps > 0).then(|| {
        let std = (sq_sum / n_gaps as f64).sqrt();
        let (lo, hi) = workers.iter().fold((u64::MAX, 0u64), |(l, h), w| {
            (l.min(w.gap_min), h.max(w.gap_max))
        });
        ranks.summary(mean, std, secs_f64(lo), secs_f64(hi), &vals)
    });

    // Per-request lists in record order.
    let cat = |f: for<'w> fn(&'w Worker<'_>) -> &'w [f64]| -> Vec<f64> {
        let mut out = Vec::with_capacity(workers.iter().map(|w| f(w).len()).sum());
        for w in &workers {
            out.extend_from_slice(f(w));
        }
        out
    };
    let mut ttfts = cat(|w| &w.ttfts);
    let mut e2els = cat(|w| &w.e2els);
    let mut tpots = cat(|w| &w.tpots);
    let all_tpots = cat(|w| &w.all_tpots);

    let good = super::goodput_count(opts.goodput, &ttfts, &all_tpots, &e2els);

    // Cells of both workers.
    if let Some(w2) = &w2 {
        if w2.cells.len() > cells.len() {
            cells.resize(w2.cells.len(), 0);
        }
        for (c, o) in cells.iter_mut().zip(&w2.cells) {
            *c = c.wrapping_add(*o);
        }
        if w2.conc.len() > conc.len() {
            conc.resize(w2.conc.len(), 0);
        }
        for (c, o) in conc.iter_mut().zip(&w2.conc) {
            *c += o;
        }
    }
    let successes: u64 = workers.iter().map(|w| w.successes).sum();
    let chunks: u64 = workers.iter().map(|w| w.cell_chunks).sum();
    let tokens: u64 = workers.iter().map(|w| w.cell_tokens).sum();
    if !cells_exact(&cells, chunks, tokens) {
        return None;
    }

    let ((ttft, e2el, exact_tokens), (tpot, peak_in_flight)) = join(
        parallel,
        || {
            let ttft = numpy_summary(&mut ttfts, pct);
            let e2el = numpy_summary(&mut e2els, pct);
            let exact = exact_peak_tokens(records, &workers, &cells, setup);
            (ttft, e2el, exact)
        },
        || {
            let tpot = numpy_summary(&mut tpots, pct);
            (tpot, peak_in_flight(&workers))
        },
    );

    // vLLM's buckets: K cells each, `ceil(span) + 1` of them.
    let n_buckets = if successes == 0 {
        0
    } else {
        let max_last = workers.iter().map(|w| w.max_last).max().unwrap_or(min_ns);
        max_last.saturating_sub(min_ns).div_ceil(NANOS_PER_S) + 1
    };
    let n_buckets = usize::try_from(n_buckets).unwrap_or(usize::MAX);
    let peak_chunks = cells
        .chunks(k)
        .take(n_buckets)
        .map(|b| b.iter().map(|c| c >> 32).sum::<u64>())
        .max()
        .unwrap_or(0);
    let (mut level, mut peak_conc) = (0i64, 0i64);
    for d in conc.iter().take(n_buckets) {
        level += d;
        peak_conc = peak_conc.max(level);
    }

    let (min_sent, max_end) = workers.iter().fold((u64::MAX, 0u64), |(s, e), w| {
        (s.min(w.min_sent), e.max(w.max_end))
    });
    let duration = opts.duration.unwrap_or_else(|| {
        default_duration_from((!records.is_empty()).then_some((min_sent, max_end)))
    });

    Some(VllmFigures {
        completed: successes,
        failed: records.len() as u64 - successes,
        total_input: workers
            .iter()
            .fold(0u64, |a, w| a.saturating_add(w.total_input)),
        total_output: workers
            .iter()
            .fold(0u64, |a, w| a.saturating_add(w.total_output)),
        good,
        peak_tokens: peak_chunks as f64,
        peak_conc: peak_conc as f64,
        ttft,
        tpot,
        itl,
        e2el,
        duration,
        peak_output_tokens_exact: exact_tokens,
        peak_in_flight,
    })
}

/// The exact sliding-window token peak from the merged token cells (cells from the
/// earliest successful send): aligned windows, then the candidate cells' chunks.
fn exact_peak_tokens(
    records: &[RequestRecord],
    workers: &[&Worker],
    cells: &[u64],
    setup: &Setup,
) -> u64 {
    let k = setup.k;
    let ncells = cells.len();
    let mut prefix = filled(ncells + k + 2, 0u64);
    for (i, c) in cells.iter().enumerate() {
        prefix[i + 1] = prefix[i] + (c & TOKENS_MASK);
    }
    for i in ncells + 1..prefix.len() {
        prefix[i] = prefix[i - 1];
    }
    let (best, candidates) = aligned_peak_and_candidates(&prefix, k, ncells);
    if candidates.is_empty() {
        return best;
    }
    let mut groups = CandidateGroups::new(&candidates, k, ncells);
    let wanted = groups.wanted_prefix();
    let sorted = workers.iter().all(|w| w.chunks_sorted);
    let cell_of = |t: u64| cell_index(t - setup.min_ns, setup.cell_ns);
    let mut first_last = workers.iter().flat_map(|w| w.first_last.iter());
    let mut big = 0u64;
    for r in records.iter().filter(|r| vllm_success(r)) {
        let Some(&(first, last)) = first_last.next() else {
            break;
        };
        if sorted {
            let (a, b) = (cell_of(first), cell_of(last) + 1);
            let hits = wanted.get(b).zip(wanted.get(a)).map_or(1, |(y, x)| y - x);
            if hits == 0 {
                continue;
            }
        }
        for c in &r.chunks {
            let t = ns(c.at, &mut big);
            groups.push(cell_of(t), t, c.tokens);
        }
    }
    groups.sweep(&prefix, k, &candidates, best)
}

/// Exact peak in flight from the workers' `[send, end)` intervals (their ends sorted):
/// at each arrival, arrivals so far minus departures at or before it.
fn peak_in_flight(workers: &[&Worker]) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{vllm_figures_reference, Slo};
    use crate::record::{ErrorKind, Outcome};
    use crate::result::Convention;
    use proptest::prelude::*;

    /// Both figure sets, every f64 compared by its bits (via `{:?}`, which prints the
    /// shortest round-trip form and the sign of zero).
    fn same(a: &VllmFigures, b: &VllmFigures) -> Result<(), TestCaseError> {
        prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
        Ok(())
    }

    #[derive(Debug, Clone)]
    struct Req {
        sent: u64,
        gaps: Vec<(u64, u32)>,
        first: u64,
        ok: bool,
        ended: Option<u64>,
        usage: Option<u64>,
        prompt: Option<u64>,
    }

    fn build(reqs: &[Req], scale: u64) -> Vec<RequestRecord> {
        reqs.iter()
            .enumerate()
            .map(|(i, q)| {
                let mut r = RequestRecord::new(i as u64, Duration::from_nanos(q.sent * scale));
                let mut t = q.sent * scale + q.first;
                r.chunks = q
                    .gaps
                    .iter()
                    .map(|&(g, tokens)| {
                        // Gaps ≥ 2^63 stand for "go back": an out-of-order chunk.
                        if g >> 63 == 1 {
                            t = t.saturating_sub(g & 0xffff_ffff);
                        } else {
                            t += g;
                        }
                        Chunk {
                            at: Duration::from_nanos(t),
                            tokens,
                        }
                    })
                    .collect();
                r.ended_at = q.ended.map(|e| Duration::from_nanos(t + e));
                r.usage_output_tokens = q.usage;
                r.prompt_tokens = q.prompt;
                if !q.ok {
                    r.outcome = Outcome::Error {
                        kind: ErrorKind::StreamCut,
                        message: "cut".into(),
                    };
                }
                r
            })
            .collect()
    }

    fn gap() -> impl Strategy<Value = u64> {
        prop_oneof![
            6 => 0u64..60_000_000,
            1 => Just(0u64),
            1 => 900_000_000u64..1_100_000_000,
            1 => 4_000_000_000u64..9_000_000_000,
            1 => (0..50_000_000u64).prop_map(|g| (1u64 << 63) | g),
        ]
    }

    fn req() -> impl Strategy<Value = Req> {
        (
            0u64..3_000,
            prop::collection::vec((gap(), prop_oneof![4 => Just(1u32), 1 => 0u32..5]), 0..60),
            0u64..500_000_000,
            prop::bool::weighted(0.9),
            prop::option::of(0u64..2_000_000_000),
            prop::option::of(0u64..100),
            prop::option::of(0u64..3_000),
        )
            .prop_map(|(sent, gaps, first, ok, ended, usage, prompt)| Req {
                sent,
                gaps,
                first,
                ok,
                ended,
                usage,
                prompt,
            })
    }

    fn options(pct: Vec<f64>, slo: bool) -> MetricsOptions {
        let mut o = MetricsOptions::new(Convention::Vllm);
        o.percentiles = pct;
        if slo {
            o.goodput = Some(Slo {
                ttft_ms: Some(250.0),
                tpot_ms: Some(20.0),
                e2el_ms: None,
            });
        }
        o
    }

    fn check(records: &[RequestRecord], opts: &MetricsOptions) -> Result<(), TestCaseError> {
        let want = vllm_figures_reference(records, opts);
        for parallel in [usize::MAX, 0] {
            match vllm_figures(records, opts, parallel) {
                Some(got) => same(&got, &want)?,
                None => {
                    // Only inputs outside the one-pass method's scope may decline.
                    let huge = |d: Duration| d.as_secs() >> SECS_LIMIT_BITS != 0;
                    let odd = records.iter().any(|r| {
                        huge(r.sent_at)
                            || r.chunks.iter().any(|c| c.at < r.sent_at || huge(c.at))
                            || r.ended_at.is_some_and(huge)
                    });
                    // Or a span of more than 2^20 cells of 1 ms.
                    let long = records
                        .iter()
                        .flat_map(|r| {
                            let chunks = r.chunks.iter().map(|c| c.at);
                            std::iter::once(r.sent_at).chain(r.ended_at).chain(chunks)
                        })
                        .max()
                        .is_some_and(|t| t >= Duration::from_secs(1 << 10));
                    prop_assert!(odd || long, "declined an ordinary input");
                }
            }
        }
        let res = crate::metrics::compute(records, opts);
        prop_assert_eq!(
            format!("{res:?}"),
            format!(
                "{:?}",
                crate::metrics::compute_vllm_reference(records, opts)
            )
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn one_pass_equals_reference(
            reqs in prop::collection::vec(req(), 0..30),
            scale in prop::sample::select(vec![1u64, 1_000, 1_000_000, 1_000_000_000]),
            pct in prop::sample::select(vec![
                vec![99.0],
                vec![],
                vec![0.0, 50.0, 100.0],
                vec![25.0, 99.9, 101.0, -1.0, f64::NAN, 1.0, 99.0],
            ]),
            slo in any::<bool>(),
        ) {
            let records = build(&reqs, scale);
            check(&records, &options(pct, slo))?;
        }
    }

    fn plain_req() -> impl Strategy<Value = Req> {
        (
            0u64..2_000,
            prop::collection::vec(
                (
                    prop_oneof![8 => 0u64..60_000_000, 1 => Just(0u64), 1 => Just(5_000_000u64)],
                    prop_oneof![9 => Just(1u32), 1 => 0u32..5],
                ),
                1..120,
            ),
            0u64..400_000_000,
            prop::bool::weighted(0.95),
            prop::option::of(0u64..1_000_000),
            prop::option::of(1u64..200),
        )
            .prop_map(|(sent, gaps, first, ok, ended, usage)| Req {
                sent,
                gaps,
                first,
                ok,
                ended,
                usage,
                prompt: Some(100),
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Runs large enough for the two-thread split (> 512 gaps), ordinary gaps.
        #[test]
        fn one_pass_equals_reference_on_split_runs(
            reqs in prop::collection::vec(plain_req(), 8..40),
            scale in prop::sample::select(vec![1_000u64, 1_000_000]),
            pct in prop::sample::select(vec![vec![99.0], vec![0.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0]]),
        ) {
            let records = build(&reqs, scale);
            let opts = options(pct, true);
            let want = vllm_figures_reference(&records, &opts);
            let got = vllm_figures(&records, &opts, 0);
            prop_assert!(got.is_some(), "declined an ordinary run");
            if let Some(got) = got {
                same(&got, &want)?;
            }
        }
    }

    #[test]
    fn edge_cases() {
        let ms = Duration::from_millis;
        let chunk = |t: u64, tokens: u32| Chunk { at: ms(t), tokens };
        let mut cases: Vec<Vec<RequestRecord>> = vec![Vec::new()];
        // One request, one chunk.
        let mut r = RequestRecord::new(0, ms(5));
        r.chunks = vec![chunk(10, 1)];
        cases.push(vec![r.clone()]);
        // Only failures; a success without chunks.
        let mut f = r.clone();
        f.outcome = Outcome::Incomplete { reason: "x".into() };
        cases.push(vec![f.clone(), RequestRecord::new(1, ms(3))]);
        // Zero gaps only.
        let mut z = RequestRecord::new(0, ms(0));
        z.chunks = vec![chunk(7, 1); 300];
        cases.push(vec![z.clone(), f]);
        // Huge times: past 2^34 s (the reference path) and a chunk 146 billion years out.
        let mut h = z.clone();
        h.chunks.push(Chunk {
            at: Duration::from_secs(u64::MAX / 4),
            tokens: 1,
        });
        cases.push(vec![h, r.clone()]);
        let mut h = z.clone();
        h.sent_at = Duration::from_secs(1 << 40);
        cases.push(vec![h]);
        // Usage of u64::MAX tokens.
        let mut u = r.clone();
        u.usage_output_tokens = Some(u64::MAX);
        u.usage_prompt_tokens = Some(u64::MAX);
        cases.push(vec![u.clone(), u]);
        // A long run without `ended_at`: the cells grow while walking.
        let recs: Vec<RequestRecord> = (0..2000u64)
            .map(|i| {
                let mut r = RequestRecord::new(i, ms(i));
                r.chunks = (0..50)
                    .map(|j| chunk(i + j * j * 300, 1 + (j % 3) as u32))
                    .collect();
                r
            })
            .collect();
        cases.push(recs);
        for records in &cases {
            for pct in [vec![99.0], vec![0.0, 50.0, 100.0, 200.0]] {
                let opts = options(pct, true);
                if let Err(e) = check(records, &opts) {
                    panic!("{e}");
                }
            }
        }
    }

    #[test]
    fn secs_f64_is_as_secs_f64() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match i % 4 {
                0 => x % 1_000_000_000,
                1 => x % 10_000_000_000,
                2 => x >> (x % 64),
                _ => i,
            };
            let d = Duration::from_nanos(v);
            assert_eq!(secs_f64(v).to_bits(), d.as_secs_f64().to_bits(), "{v}");
        }
    }

    #[test]
    fn histogram_buckets_are_monotone_and_in_range() {
        let mut prev = 0;
        let mut g: u64 = 0;
        while g <= u64::from(u32::MAX) {
            let b = hbucket(g as u32);
            assert!(b >= prev && b < HBUCKETS, "{g}");
            let (lo, width) = bucket_values(b);
            if g < u64::from(ESCAPE) {
                assert!((g as u32).wrapping_sub(lo) <= width, "{g} in bucket {b}");
            }
            if lo > 0 {
                assert_ne!(hbucket(lo - 1), b, "below bucket {b}");
            }
            if let Some(above) = lo.checked_add(width).and_then(|x| x.checked_add(1)) {
                if above != ESCAPE {
                    assert_ne!(hbucket(above), b, "above bucket {b}");
                }
            }
            prev = b;
            g += 1 + g / 4096;
        }
        assert_eq!(hbucket(u32::MAX), HBUCKETS - 1);
    }
}
