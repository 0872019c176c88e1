//! One worker's walk over its range of records: per-request figures, per-chunk cells and
//! per-gap batches, and the careful re-walk of requests with out-of-order or long gaps.

use super::super::request::vllm_tpot_s;
use super::super::{record_end, vllm_success, NANOS_PER_S};
use super::*;
use crate::record::{Chunk, RequestRecord};
use crate::stats::Moments;

/// Per-worker state and results of the walk.
pub(super) struct Worker<'a> {
    pub(super) records: &'a [RequestRecord],
    pub(super) setup: &'a Setup,
    /// Gaps produced but not yet summed and binned.
    pub(super) gaps: Vec<u32>,
    /// The worker's gaps of 2^32 − 1 ns or more ([`ESCAPE`] in `gaps`).
    pub(super) side: Vec<u64>,
    /// Per group: the batch values below it.
    pub(super) below: Vec<u64>,
    /// Moments of the batch values (an escaped gap counted as [`ESCAPE`]).
    pub(super) moments: Moments,
    /// Extremes of the batch values (escapes as [`ESCAPE`]).
    pub(super) gap_lo: u32,
    pub(super) gap_hi: u32,
    /// Per group: the batch values in it (escapes excluded).
    pub(super) gathered: Vec<Vec<u32>>,
    /// TPOTs written to the worker's [`Out`] (the successes with output_len > 1).
    pub(super) n_tpots: usize,
    /// Successes meeting the goodput SLOs.
    pub(super) good: u64,
    /// (first chunk, last chunk, index in `records`) of each success.
    pub(super) first_last: Vec<(u64, u64, usize)>,
    /// Index in `records` of the record being walked.
    pub(super) at: usize,
    /// Per cell: chunks << 32 | tokens of successful requests, wrapping (an overflow shows
    /// in the totals: see [`cells_exact`]).
    pub(super) cells: Vec<u64>,
    /// Chunks and tokens added to `cells`.
    pub(super) cell_chunks: u64,
    pub(super) cell_tokens: u64,
    /// vLLM concurrency difference array over 1-second buckets.
    pub(super) conc: Vec<i64>,
    pub(super) max_last: u64,
    pub(super) successes: u64,
    pub(super) starts: Vec<u64>,
    pub(super) ends: Vec<u64>,
    pub(super) min_sent: u64,
    pub(super) max_end: u64,
    pub(super) total_input: u64,
    pub(super) total_output: u64,
    pub(super) big: u64,
    pub(super) bad: bool,
    pub(super) chunks_sorted: bool,
}

/// A worker's share of the per-success lists (record order), one slot per success; the
/// TPOTs fill a prefix of theirs.
pub(super) struct Out<'b> {
    pub(super) ttfts: &'b mut [f64],
    pub(super) e2els: &'b mut [f64],
    pub(super) tpots: &'b mut [f64],
}

impl<'a> Worker<'a> {
    /// A worker for `records`, which hold about `gaps` gaps.
    pub(super) fn new(records: &'a [RequestRecord], setup: &'a Setup, gaps: u64) -> Self {
        let recs = records.len();
        Worker {
            records,
            setup,
            gaps: Vec::with_capacity(2 * BATCH),
            side: Vec::new(),
            below: vec![0; setup.groups.len()],
            moments: Moments::default(),
            gap_lo: u32::MAX,
            gap_hi: 0,
            // Room for the sample's share and a margin, so that the lists rarely grow.
            gathered: setup
                .groups
                .iter()
                .map(|g| {
                    let want = gaps.saturating_mul(u64::from(g.ppm)) / 1_000_000;
                    Vec::with_capacity(usize::try_from(want + want / 16 + 1024).unwrap_or(0))
                })
                .collect(),
            n_tpots: 0,
            good: 0,
            first_last: Vec::with_capacity(recs),
            at: 0,
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

    /// The walk: everything but the order statistics the sample did not predict.
    pub(super) fn run(mut self, out: &mut Out) -> Self {
        for (i, r) in self.records.iter().enumerate() {
            self.at = i;
            self.record(r, out);
            if self.bad {
                return self;
            }
            if self.gaps.len() >= BATCH {
                self.flush();
            }
        }
        self.flush();
        self.ends.sort_unstable();
        self
    }

    /// Moments, extremes, and the counts and values of the groups, of the buffered gaps.
    pub(super) fn flush(&mut self) {
        let g = &self.gaps[..];
        if g.is_empty() {
            return;
        }
        let (lo, hi) = min_max(g);
        self.gap_lo = self.gap_lo.min(lo);
        self.gap_hi = self.gap_hi.max(hi);
        let (sum, sum_sq) = sums(g, hi);
        self.moments.add_sums(g.len() as u64, sum, sum_sq);
        let groups = self.setup.groups.iter().zip(&mut self.below);
        for ((group, below), kept) in groups.zip(&mut self.gathered) {
            *below += count_below(g, group.below32());
            if let Some((lo, width)) = group.range32() {
                keep_range(g, lo, width, kept);
            }
        }
        self.gaps.clear();
    }

    pub(super) fn grow_cells(&mut self, cell: usize) -> bool {
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

    pub(super) fn record(&mut self, r: &RequestRecord, out: &mut Out) {
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
            1_000_000 => self.chunks::<1_000_000>(&r.chunks),
            10_000_000 => self.chunks::<10_000_000>(&r.chunks),
            100_000_000 => self.chunks::<100_000_000>(&r.chunks),
            _ => self.chunks::<NANOS_PER_S>(&r.chunks),
        };
        let Some(tokens) = tokens else {
            self.bad = true;
            return;
        };
        let output_len = r.output_tokens_or(|| tokens);
        self.total_output = self.total_output.saturating_add(output_len);
        self.total_input = self
            .total_input
            .saturating_add(r.input_tokens().unwrap_or(0));
        let ttft = secs_f64(first_ns.saturating_sub(sent));
        let latency = secs_f64(last_ns - sent);
        let tpot = vllm_tpot_s(ttft, latency, output_len);
        if let Some(tpot) = tpot {
            match out.tpots.get_mut(self.n_tpots) {
                Some(t) => *t = tpot,
                None => self.bad = true,
            }
            self.n_tpots += 1;
        }
        if let Some(slo) = &self.setup.slo {
            let tpot = tpot.unwrap_or(0.0);
            let valid = !slo.valid || super::super::slo::checks_pass(r);
            self.good += u64::from(valid && super::super::meets_slo(slo, ttft, tpot, latency));
        }
        let i = self.successes as usize;
        match (out.ttfts.get_mut(i), out.e2els.get_mut(i)) {
            (Some(a), Some(b)) => (*a, *b) = (ttft, latency),
            _ => self.bad = true,
        }
        self.first_last.push((first_ns, last_ns, self.at));
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

    /// The chunks of one successful request: cells and gaps; returns the request's token
    /// count, `None` for a chunk before the origin or past the cell cap.
    #[inline]
    pub(super) fn chunks<const CELL_NS: u64>(&mut self, chunks: &[Chunk]) -> Option<u64> {
        let min_ns = self.setup.min_ns;
        let (first, rest) = chunks.split_first()?;
        // Chunks usually arrive in order: size the table for the last one up front.
        let t = ns(rest.last().unwrap_or(first).at, &mut self.big);
        let cell = (t.wrapping_sub(min_ns) / CELL_NS) as usize;
        if t >= min_ns && cell >= self.cells.len() && !self.grow_cells(cell) {
            return None;
        }
        let start = self.gaps.len();
        self.gaps.resize(start + rest.len(), 0);
        let out = self.gaps.get_mut(start..).unwrap_or(&mut []);
        let table = self.cells.len();
        let mut walk = Walk::default();
        let cells = &mut self.cells[..];
        walk.prev = walk.visit::<CELL_NS>(first, min_ns, cells);
        // Every gap's bits ORed: below 2^32 − 1 only if every chunk came after the one
        // before, less than 2^32 − 1 ns after (a chunk before the one before wraps the
        // difference past 2^32 ns, as no time reaches 2^64 − 2^32 ns).
        let mut bits = 0u64;
        for (o, c) in out.iter_mut().zip(rest) {
            let t = walk.visit::<CELL_NS>(c, min_ns, cells);
            let g = t.wrapping_sub(walk.prev);
            walk.prev = t;
            bits |= g;
            *o = g as u32;
        }
        if bits >= u64::from(ESCAPE) {
            // Out of order or long gaps: these gaps again, carefully.
            self.gaps.truncate(start);
            push_gaps(chunks, &mut self.gaps, &mut self.side);
            self.chunks_sorted &= chunks.windows(2).all(|w| w[0].at <= w[1].at);
        }
        self.big |= walk.big;
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
    pub(super) fn add_missed<const CELL_NS: u64>(
        &mut self,
        chunks: &[Chunk],
        table: usize,
    ) -> bool {
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

    /// Another walk over this worker's gaps: `f` on each batch of them (as in the walk:
    /// u32 ns, [`ESCAPE`] for the long ones).
    pub(super) fn gap_batches(&self, mut f: impl FnMut(&[u32])) {
        let mut gaps: Vec<u32> = Vec::with_capacity(2 * BATCH);
        let mut side = Vec::new();
        for r in self.records.iter().filter(|r| vllm_success(r)) {
            push_gaps(&r.chunks, &mut gaps, &mut side);
            side.clear();
            if gaps.len() >= BATCH {
                f(&gaps);
                gaps.clear();
            }
        }
        f(&gaps);
    }

    /// The log-linear histogram of this worker's gaps (escapes in the top bucket).
    pub(super) fn histogram(&self) -> Vec<u64> {
        let mut hist = filled(HBUCKETS, 0u64);
        self.gap_batches(|gaps| {
            for &x in gaps {
                if let Some(h) = hist.get_mut(hbucket(x)) {
                    *h += 1;
                }
            }
        });
        hist
    }

    /// This worker's gaps of the `wanted` buckets, per group (escapes excluded: their
    /// values are in the side list).
    pub(super) fn gather(&self, wanted: &Wanted, groups: usize) -> Vec<Vec<u32>> {
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); groups];
        self.gap_batches(|gaps| match wanted {
            Wanted::Ranges(ranges) => {
                for (o, &(lo, width)) in out.iter_mut().zip(ranges) {
                    keep_range(gaps, lo, width, o);
                }
            }
            Wanted::Slots(slots) => {
                for &x in gaps {
                    let s = slots.get(hbucket(x)).copied().unwrap_or(NO_SLOT);
                    if s != NO_SLOT && x != ESCAPE {
                        if let Some(o) = out.get_mut(usize::from(s)) {
                            o.push(x);
                        }
                    }
                }
            }
        });
        out
    }
}

/// Push the gaps of `chunks` (as u32 ns, [`ESCAPE`] for long ones, whose values go to
/// `side`).
#[inline]
pub(super) fn push_gaps(chunks: &[Chunk], out: &mut Vec<u32>, side: &mut Vec<u64>) {
    let Some((first, rest)) = chunks.split_first() else {
        return;
    };
    let start = out.len();
    out.resize(start + rest.len(), 0);
    let dst = out.get_mut(start..).unwrap_or(&mut []);
    let (mut big, mut longest) = (0u64, 0u64);
    let mut prev = ns(first.at, &mut big);
    for (o, c) in dst.iter_mut().zip(rest) {
        let t = ns(c.at, &mut big);
        let g = t.saturating_sub(prev);
        prev = t;
        longest = longest.max(g);
        *o = g.min(u64::from(ESCAPE)) as u32;
    }
    if longest >= u64::from(ESCAPE) {
        push_side(chunks, side);
    }
}

/// The gaps of 2^32 − 1 ns or more between consecutive `chunks`, in order.
#[cold]
pub(super) fn push_side(chunks: &[Chunk], side: &mut Vec<u64>) {
    let mut big = 0u64;
    for w in chunks.windows(2) {
        let g = ns(w[1].at, &mut big).saturating_sub(ns(w[0].at, &mut big));
        if g >= u64::from(ESCAPE) {
            side.push(g);
        }
    }
}
