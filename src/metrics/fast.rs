//! `Convention::Vllm` in one walk over the chunks, on several threads for large runs, with
//! the same figures as the straightforward computation ([`super::compute_vllm_reference`]).
//!
//! * Times are handled as u64 nanoseconds. Each worker walks a contiguous range of records
//!   once: per-request figures; per chunk, a 1/K-second cell of chunk and token counts
//!   (vLLM's 1-second buckets are K cells each; the exact sliding-window peak is computed
//!   from the token cells); per gap, a u32 in a small batch buffer. The chunk loop only
//!   ORs the gaps together: a request whose gaps were out of order or 2^32 − 1 ns or more
//!   is walked again carefully (long gaps to a side list, [`ESCAPE`] in the batch).
//! * Per batch of gaps: the exact integer moments (Σx, Σx², so the ITL mean and standard
//!   deviation need no second walk — see [`Moments`]), the extremes, and for each group
//!   (below) the number of gaps below it and the gaps in it.
//! * The ITL order statistics: a small sample of the gaps, taken while sizing the run,
//!   predicts value ranges ("groups") that hold the wanted ranks. A rank whose value lies
//!   in a group is selected among that group's gaps, offset by the gaps below it.
//!   `Duration::as_secs_f64` is monotone in the nanoseconds, so ranks are selected on
//!   integers and only the selected gaps are converted. Should a rank fall outside every
//!   group, two more walks find it: a log-linear histogram of the gaps, then the gaps of
//!   the buckets holding the ranks (correct either way; the sample only saves the walks).
//!
//! Inputs this path does not cover (a time of 2^34 s or more, a chunk of a successful request
//! before every successful send, a last chunk before its send, a span much longer than the
//! run has chunks, moments past u128) return `None`, and the caller uses the reference
//! computation.

use std::time::Duration;

use super::{
    aligned_peak_and_candidates, cell_index, default_duration_from, record_end, vllm_success,
    CandidateGroups, MetricsOptions, VllmFigures, NANOS_PER_S,
};
use crate::record::{Chunk, RequestRecord};
use crate::stats::{numpy_summary, Moments, SummaryRanks};

/// Times below 2^34 s (~544 years) fit in u64 nanoseconds with room to spare.
const SECS_LIMIT_BITS: u32 = 34;
/// Marks a gap kept in the side list (too long for a u32 of nanoseconds).
const ESCAPE: u32 = u32::MAX;
/// Histogram sub-bucket bits: values below 2^SUB are exact, above each power of two is
/// split in 2^SUB buckets.
const SUB: u32 = 11;
const HBUCKETS: usize = (33 - SUB as usize) << SUB;
/// Fast path only when the cell table is at most this many cells or 8 per chunk.
const DENSE_CELLS_MIN: usize = 1 << 20;
/// Coarsen cells until the estimated span needs at most this many.
const TARGET_CELLS: u64 = 1 << 22;
/// Gaps collected before they are summed and binned.
const BATCH: usize = 1 << 12;
/// Gaps sampled to predict the buckets of the wanted ranks (about; one per stratum).
const SAMPLE: usize = 1 << 16;
/// Half-width of a predicted rank window, in standard deviations of the sample rank.
const SAMPLE_SIGMAS: f64 = 6.0;
/// Most value ranges the walk keeps (each costs a pass over every batch).
const MAX_GROUPS: usize = 8;
/// Most threads one computation uses.
const MAX_WORKERS: usize = 8;
/// No gather group for this bucket.
const NO_SLOT: u16 = u16::MAX;
/// One chunk in a packed cell (chunks in the high 32 bits, tokens in the low).
const CHUNK_ONE: u64 = 1 << 32;
const TOKENS_MASK: u64 = (1 << 32) - 1;

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

/// Cell size (ns) and cells per second for a span holding `chunks` chunks: 1 ms cells,
/// coarsened tenfold until the span needs at most [`TARGET_CELLS`] cells and (sparse runs:
/// a table many times the chunks costs more than the coarser cells' extra candidates) at
/// most one per 8 chunks, but no fewer than 2^16.
fn cell_size(span: u64, chunks: u64) -> (u64, usize) {
    let mut k: u64 = 1000;
    let target = TARGET_CELLS.min((chunks / 8).max(1 << 16));
    while k > 1 && span / (NANOS_PER_S / k) > target {
        k /= 10;
    }
    (NANOS_PER_S / k, k as usize)
}

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

/// A small mixing function (SplitMix64's finaliser), to place samples.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// What every worker needs to know.
struct Setup {
    /// Earliest send of a successful request: origin of the cells and of vLLM's buckets.
    min_ns: u64,
    cell_ns: u64,
    k: usize,
    init_cells: usize,
    max_cells: usize,
    /// The value ranges whose gaps the walk keeps (predicted from the sample), ascending.
    groups: Vec<Group>,
    /// Goodput SLOs, if counted.
    slo: Option<super::Slo>,
}

/// A range of gap values, in ns, both ends included, that the sample predicts holds some of
/// the wanted ranks. The walk counts the gaps below it and keeps the gaps in it, so a rank
/// that falls in it is selected from what was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    lo: u64,
    hi: u64,
    /// The sample's share of the gaps in the range, in millionths (to size the buffers).
    ppm: u32,
}

impl Group {
    /// The batch value below which gaps are below the group (an escaped gap, [`ESCAPE`] in
    /// the batch, is never below it).
    fn below32(&self) -> u32 {
        self.lo.min(u64::from(ESCAPE)) as u32
    }

    /// The batch values kept, `(lowest, width)`, escapes excluded (their values are in the
    /// side lists); `None` when the group holds only escaped values.
    fn range32(&self) -> Option<(u32, u32)> {
        if self.lo >= u64::from(ESCAPE) {
            return None;
        }
        let hi = self.hi.clamp(self.lo, u64::from(ESCAPE) - 1);
        Some((self.lo as u32, (hi - self.lo) as u32))
    }

    fn contains(&self, g: u64) -> bool {
        (self.lo..=self.hi).contains(&g)
    }
}

/// Append the values of `g` in `lo..=lo + width` to `out`. (Few are: blocks are tested
/// whole, in vector registers, and only blocks with a hit are walked.)
#[inline]
fn keep_range(g: &[u32], lo: u32, width: u32, out: &mut Vec<u32>) {
    let inside = |x: u32| x.wrapping_sub(lo) <= width;
    let mut blocks = g.chunks_exact(16);
    for b in &mut blocks {
        if b.iter().fold(false, |a, &x| a | inside(x)) {
            out.extend(b.iter().filter(|&&x| inside(x)));
        }
    }
    out.extend(blocks.remainder().iter().filter(|&&x| inside(x)));
}

/// How many of `g` are below `lo`.
#[inline]
fn count_below(g: &[u32], lo: u32) -> u64 {
    g.chunks(1 << 16)
        .map(|b| u64::from(b.iter().map(|&x| u32::from(x < lo)).sum::<u32>()))
        .sum()
}

/// Running state of one request's walk over its chunks (kept in registers).
#[derive(Default)]
struct Walk {
    prev: u64,
    tokens: u64,
    big: u64,
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

/// Σx and Σx² of u32 values whose largest is `max`, exactly: added in u64 blocks short
/// enough not to overflow.
#[inline]
fn sums(g: &[u32], max: u32) -> (u128, u128) {
    let bits = 32 - max.leading_zeros();
    // Each square is below 2^(2·bits): 2^(64 − 2·bits) of them fit in a u64 (and 2^16
    // values below 2^32 always do).
    let block = 1usize << (64 - 2 * bits).min(16);
    let (mut sum, mut sq) = (0u128, 0u128);
    for b in g.chunks(block) {
        let s: u64 = b.iter().map(|&x| u64::from(x)).sum();
        let q: u64 = b.iter().map(|&x| u64::from(x) * u64::from(x)).sum();
        sum += u128::from(s);
        sq += u128::from(q);
    }
    (sum, sq)
}

/// Per-worker state and results of the walk.
struct Worker<'a> {
    records: &'a [RequestRecord],
    setup: &'a Setup,
    /// Gaps produced but not yet summed and binned.
    gaps: Vec<u32>,
    /// The worker's gaps of 2^32 − 1 ns or more ([`ESCAPE`] in `gaps`).
    side: Vec<u64>,
    /// Per group: the batch values below it.
    below: Vec<u64>,
    /// Moments of the batch values (an escaped gap counted as [`ESCAPE`]).
    moments: Moments,
    /// Extremes of the batch values (escapes as [`ESCAPE`]).
    gap_lo: u32,
    gap_hi: u32,
    /// Per group: the batch values in it (escapes excluded).
    gathered: Vec<Vec<u32>>,
    /// TPOTs written to the worker's [`Out`] (the successes with output_len > 1).
    n_tpots: usize,
    /// Successes meeting the goodput SLOs.
    good: u64,
    /// (first chunk, last chunk, index in `records`) of each success.
    first_last: Vec<(u64, u64, usize)>,
    /// Index in `records` of the record being walked.
    at: usize,
    /// Per cell: chunks << 32 | tokens of successful requests, wrapping (an overflow shows
    /// in the totals: see [`cells_exact`]).
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

/// A worker's share of the per-success lists (record order), one slot per success; the
/// TPOTs fill a prefix of theirs.
struct Out<'b> {
    ttfts: &'b mut [f64],
    e2els: &'b mut [f64],
    tpots: &'b mut [f64],
}

impl<'a> Worker<'a> {
    /// A worker for `records`, which hold about `gaps` gaps.
    fn new(records: &'a [RequestRecord], setup: &'a Setup, gaps: u64) -> Self {
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
    fn run(mut self, out: &mut Out) -> Self {
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
    fn flush(&mut self) {
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

    fn record(&mut self, r: &RequestRecord, out: &mut Out) {
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
            match out.tpots.get_mut(self.n_tpots) {
                Some(t) => *t = tpot,
                None => self.bad = true,
            }
            self.n_tpots += 1;
        }
        if let Some(slo) = &self.setup.slo {
            self.good += u64::from(super::meets_slo(slo, ttft, tpot, latency));
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
    fn chunks<const CELL_NS: u64>(&mut self, chunks: &[Chunk]) -> Option<u64> {
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

    /// Another walk over this worker's gaps: `f` on each batch of them (as in the walk:
    /// u32 ns, [`ESCAPE`] for the long ones).
    fn gap_batches(&self, mut f: impl FnMut(&[u32])) {
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
    fn histogram(&self) -> Vec<u64> {
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
    fn gather(&self, wanted: &Wanted, groups: usize) -> Vec<Vec<u32>> {
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
fn push_gaps(chunks: &[Chunk], out: &mut Vec<u32>, side: &mut Vec<u64>) {
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
fn push_side(chunks: &[Chunk], side: &mut Vec<u64>) {
    let mut big = 0u64;
    for w in chunks.windows(2) {
        let g = ns(w[1].at, &mut big).saturating_sub(ns(w[0].at, &mut big));
        if g >= u64::from(ESCAPE) {
            side.push(g);
        }
    }
}

/// The gaps a second walk keeps: those in the histogram buckets of the wanted ranks, as
/// value ranges (few buckets) or a bucket → group table. Escaped gaps are never kept here
/// (their values come from the side lists).
enum Wanted {
    /// `(lowest value, width)` of each group's bucket, escapes excluded.
    Ranges(Vec<(u32, u32)>),
    /// Group of each bucket, or [`NO_SLOT`].
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

/// Run `f` on every item, the first here and each other on a thread of its own (here too,
/// after the first, when a thread cannot be started); results in item order.
fn run_all<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let f = &f;
    std::thread::scope(|s| {
        let mut items = items.into_iter();
        let first = items.next();
        // Items whose thread could not be started come back here.
        let mut handles = Vec::new();
        for item in items {
            let cell = std::sync::Mutex::new(Some(item));
            let cell = std::sync::Arc::new(cell);
            let theirs = std::sync::Arc::clone(&cell);
            let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                let item = theirs.lock().ok().and_then(|mut g| g.take());
                item.map(f)
            });
            handles.push((spawned.ok(), cell));
        }
        let mut out: Vec<R> = first.into_iter().map(f).collect();
        for (h, cell) in handles {
            let done = match h {
                Some(h) => h
                    .join()
                    .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
                None => None,
            };
            let r = match done {
                Some(r) => r,
                None => match cell.lock().ok().and_then(|mut g| g.take()) {
                    Some(item) => f(item),
                    None => unreachable!("every item runs exactly once"),
                },
            };
            out.push(r);
        }
        out
    })
}

/// `f` of each worker, on a thread each when `parallel`.
fn per_worker<R: Send>(
    workers: &[&Worker],
    parallel: bool,
    f: impl Fn(&Worker) -> R + Sync,
) -> Vec<R> {
    if parallel {
        run_all(workers.to_vec(), &f)
    } else {
        workers.iter().map(|w| f(w)).collect()
    }
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

/// 0 if `r` is not a success, else 1 + its gaps (at most u32::MAX: only the sample and the
/// split read these, not the figures).
fn gap_mark(r: &RequestRecord) -> u32 {
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
fn predict_groups(
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

/// The vLLM figures by the one-walk method, or `None` for inputs it does not cover.
/// Runs on several threads when the records hold at least `parallel_chunks` chunks.
pub(super) fn vllm_figures(
    records: &[RequestRecord],
    opts: &MetricsOptions,
    parallel_chunks: usize,
) -> Option<VllmFigures> {
    vllm_figures_with(records, opts, parallel_chunks, usize::MAX)
}

/// [`vllm_figures`], predicting the buckets of at most `predict` ranks (tests use 0 and 1
/// to exercise the second walk).
fn vllm_figures_with(
    records: &[RequestRecord],
    opts: &MetricsOptions,
    parallel_chunks: usize,
    predict: usize,
) -> Option<VllmFigures> {
    // Sizes, the origin and an estimate of the span, from the records alone.
    let mut big = 0u64;
    let (mut n_gaps, mut total_chunks) = (0usize, 0usize);
    let (mut min_ns, mut est_hi) = (u64::MAX, 0u64);
    // Per record, its [`gap_mark`].
    let mut gaps_of: Vec<u32> = Vec::with_capacity(records.len());
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
        gaps_of.push(gap_mark(r));
    }
    if big >> SECS_LIMIT_BITS != 0 {
        return None;
    }
    if min_ns == u64::MAX {
        min_ns = 0;
    }
    let span = est_hi.saturating_sub(min_ns);
    let (cell_ns, k) = cell_size(span, total_chunks as u64);
    let dense_limit = DENSE_CELLS_MIN.max(total_chunks.saturating_mul(8));
    let init_cells = usize::try_from(span / cell_ns).ok()?.checked_add(2)?;
    if init_cells > dense_limit {
        return None;
    }
    let pct = &opts.percentiles;
    let ranks = SummaryRanks::new(n_gaps.max(1), pct);
    let groups = predict_groups(records, &gaps_of, n_gaps, &ranks.ranks, predict);
    let setup = Setup {
        min_ns,
        cell_ns,
        k,
        init_cells,
        max_cells: dense_limit.max(init_cells.saturating_mul(2)),
        groups,
        slo: opts.goodput,
    };

    // Contiguous record ranges of about equal work (a record, and its gaps), one per worker.
    let parallel = total_chunks >= parallel_chunks && total_chunks > 0;
    let n_workers = if parallel {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, MAX_WORKERS)
    } else {
        1
    };
    // (records, their successes, their gaps) of each part.
    let mut parts: Vec<(&[RequestRecord], usize, u64)> = Vec::with_capacity(n_workers);
    let (mut rest, mut done, mut from, mut succ) = (records, 0u64, 0usize, 0usize);
    let mut gaps = 0u64;
    let work = |g: u32| u64::from(g) + 1;
    let total: u64 = gaps_of.iter().map(|&g| work(g)).sum();
    let n = n_workers as u64;
    for (i, &g) in gaps_of.iter().enumerate() {
        done += work(g);
        succ += usize::from(g > 0);
        gaps += u64::from(g.saturating_sub(1));
        if parts.len() + 1 < n_workers && done * n >= total * (parts.len() as u64 + 1) {
            let (a, b) = rest.split_at(i + 1 - from);
            parts.push((a, succ, gaps));
            rest = b;
            from = i + 1;
            (succ, gaps) = (0, 0);
        }
    }
    parts.push((rest, succ, gaps));

    // The per-success lists, written in place by the workers.
    let n_succ: usize = parts.iter().map(|p| p.1).sum();
    let mut ttfts = filled(n_succ, 0.0f64);
    let mut e2els = filled(n_succ, 0.0f64);
    let mut tpots = filled(n_succ, 0.0f64);
    let mut jobs = Vec::with_capacity(parts.len());
    let (mut a, mut b, mut c) = (&mut ttfts[..], &mut e2els[..], &mut tpots[..]);
    for &(p, k, gaps) in &parts {
        let (a1, a2) = std::mem::take(&mut a).split_at_mut(k);
        let (b1, b2) = std::mem::take(&mut b).split_at_mut(k);
        let (c1, c2) = std::mem::take(&mut c).split_at_mut(k);
        let out = Out {
            ttfts: a1,
            e2els: b1,
            tpots: c1,
        };
        jobs.push((p, out, gaps));
        (a, b, c) = (a2, b2, c2);
    }

    // The walk.
    let setup = &setup;
    let mut workers = run_all(jobs, |(p, mut out, gaps)| {
        Worker::new(p, setup, gaps).run(&mut out)
    });
    if workers
        .iter()
        .any(|w| w.bad || w.big >> SECS_LIMIT_BITS != 0)
    {
        return None;
    }
    let (w1, others) = workers.split_first_mut()?;
    let mut cells = std::mem::take(&mut w1.cells);
    let mut conc = std::mem::take(&mut w1.conc);
    for w in others.iter() {
        if w.cells.len() > cells.len() {
            cells.resize(w.cells.len(), 0);
        }
        for (c, o) in cells.iter_mut().zip(&w.cells) {
            *c = c.wrapping_add(*o);
        }
        if w.conc.len() > conc.len() {
            conc.resize(w.conc.len(), 0);
        }
        for (c, o) in conc.iter_mut().zip(&w.conc) {
            *c += o;
        }
    }
    // A merged table's memory, for the token prefix sums.
    let spare = others
        .first_mut()
        .map(|w| std::mem::take(&mut w.cells))
        .unwrap_or_default();
    let workers: Vec<&Worker> = workers.iter().collect();
    let successes: u64 = workers.iter().map(|w| w.successes).sum();
    let chunks: u64 = workers.iter().map(|w| w.cell_chunks).sum();
    let tokens: u64 = workers.iter().map(|w| w.cell_tokens).sum();
    if !cells_exact(&cells, chunks, tokens) {
        return None;
    }

    // ITL: exact moments (escaped gaps were counted as ESCAPE), extremes, order statistics.
    let mut moments = Moments::default();
    let mut escapes = Moments::default();
    for w in &workers {
        moments.merge(&w.moments);
        for &g in &w.side {
            escapes.add(g);
        }
    }
    let n_side = u128::from(escapes.n);
    let esc = u128::from(ESCAPE);
    moments.sum = moments
        .sum
        .checked_sub(n_side * esc)?
        .checked_add(escapes.sum)?;
    moments.sum_sq = moments
        .sum_sq
        .checked_sub(n_side * esc * esc)?
        .checked_add(escapes.sum_sq)?;
    moments.overflow |= escapes.overflow;
    if moments.n != n_gaps as u64 {
        return None;
    }
    let itl = if n_gaps == 0 {
        None
    } else {
        // Extremes: an escaped extreme is the side lists' extreme.
        let side = || workers.iter().flat_map(|w| w.side.iter().copied());
        let lo = workers.iter().map(|w| w.gap_lo).min().unwrap_or(u32::MAX);
        let hi = workers.iter().map(|w| w.gap_hi).max().unwrap_or(0);
        let gap_lo = if lo == ESCAPE {
            side().min()?
        } else {
            u64::from(lo)
        };
        let gap_hi = if hi == ESCAPE {
            side().max()?
        } else {
            u64::from(hi)
        };
        let (mean, std) = moments.mean_std(NANOS_PER_S)?;
        let vals = itl_order_statistics(&workers, setup, &ranks.ranks, parallel)?;
        let vals: Vec<f64> = vals.into_iter().map(secs_f64).collect();
        Some(ranks.summary(mean, std, secs_f64(gap_lo), secs_f64(gap_hi), &vals))
    };

    // The TPOTs together (each worker wrote a prefix of its share).
    let (mut from, mut to) = (0usize, 0usize);
    for (w, &(_, k, _)) in workers.iter().zip(&parts) {
        let len = w.n_tpots.min(k);
        tpots.copy_within(from..from + len, to);
        from += k;
        to += len;
    }
    tpots.truncate(to);
    let good = opts
        .goodput
        .map(|_| workers.iter().map(|w| w.good).sum::<u64>());

    let ((ttft, e2el, exact_tokens), (tpot, peak_in_flight)) = join(
        parallel,
        || {
            let ttft = numpy_summary(&mut ttfts, pct);
            let e2el = numpy_summary(&mut e2els, pct);
            let exact = exact_peak_tokens(&workers, &cells, setup, spare);
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

/// The ITL gaps (ns) at `ranks`: from the walk's groups when every rank falls in one,
/// else by a histogram walk and a gather walk ([`itl_by_histogram`]).
fn itl_order_statistics(
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
fn itl_from_groups(workers: &[&Worker], groups: &[Group], ranks: &[usize]) -> Option<Vec<u64>> {
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
fn select_ascending<T: Ord + Copy>(vals: &mut [T], locals: &[usize]) -> Vec<T> {
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
fn itl_by_histogram(workers: &[&Worker], ranks: &[usize], parallel: bool) -> Option<Vec<u64>> {
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

/// The exact sliding-window token peak from the merged token cells (cells from the
/// earliest successful send): aligned windows, then the candidate cells' chunks.
fn exact_peak_tokens(workers: &[&Worker], cells: &[u64], setup: &Setup, spare: Vec<u64>) -> u64 {
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
        // Both thread counts; the sample's prediction on, off, and for the first rank only
        // (so ranks are found by the walk, by the second walk, and by both).
        for (parallel, predict) in [
            (usize::MAX, usize::MAX),
            (0, usize::MAX),
            (0, 0),
            (usize::MAX, 1),
        ] {
            match vllm_figures_with(records, opts, parallel, predict) {
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
            for predict in [usize::MAX, 0, 2] {
                let got = vllm_figures_with(&records, &opts, 0, predict);
                prop_assert!(got.is_some(), "declined an ordinary run");
                if let Some(got) = got {
                    same(&got, &want)?;
                }
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

    /// On a run of ordinary size, the sample's ranges hold every wanted rank (so the walk
    /// finds them all, without the second walks) and only a small share of the gaps.
    #[test]
    fn the_sample_predicts_the_ranks_of_a_large_run() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let records: Vec<RequestRecord> = (0..3000u64)
            .map(|i| {
                let mut r = RequestRecord::new(i, Duration::from_millis(i * 7));
                let mut t = r.sent_at.as_nanos() as u64 + 50_000_000 + next() % 200_000_000;
                r.chunks = (0..100)
                    .map(|_| {
                        // Mostly 20–40 ms, a tail to 400 ms.
                        let g = 20_000_000 + next() % 20_000_000;
                        t += if next() % 50 == 0 { g * 10 } else { g };
                        Chunk {
                            at: Duration::from_nanos(t),
                            tokens: 1 + (next() % 3) as u32,
                        }
                    })
                    .collect();
                r
            })
            .collect();
        let opts = options(vec![50.0, 90.0, 99.0, 99.9], false);
        let mut gaps: Vec<u64> = records
            .iter()
            .flat_map(|r| r.chunks.windows(2))
            .map(|w| (w[1].at - w[0].at).as_nanos() as u64)
            .collect();
        gaps.sort_unstable();
        let ranks = SummaryRanks::new(gaps.len(), &opts.percentiles);
        let gaps_of: Vec<u32> = records.iter().map(gap_mark).collect();
        let groups = predict_groups(&records, &gaps_of, gaps.len(), &ranks.ranks, usize::MAX);
        assert!(
            !groups.is_empty() && groups.len() <= MAX_GROUPS,
            "{groups:?}"
        );
        for &r in &ranks.ranks {
            assert!(
                groups.iter().any(|g| g.contains(gaps[r])),
                "rank {r} missed"
            );
        }
        let inside = gaps
            .iter()
            .filter(|&&g| groups.iter().any(|x| x.contains(g)))
            .count();
        assert!(inside * 10 < gaps.len(), "{inside} of {} kept", gaps.len());
        if let Err(e) = check(&records, &opts) {
            panic!("{e}");
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
