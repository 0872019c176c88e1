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

mod figures;
mod peaks;
mod ranks;
mod threads;
mod walk;

use peaks::*;
use ranks::*;
use threads::*;
use walk::*;

pub(super) use figures::vllm_figures;

use super::NANOS_PER_S;
use crate::record::Chunk;

/// Times below 2^34 s (~544 years) fit in u64 nanoseconds with room to spare.
pub(super) const SECS_LIMIT_BITS: u32 = 34;
/// Marks a gap kept in the side list (too long for a u32 of nanoseconds).
pub(super) const ESCAPE: u32 = u32::MAX;
/// Histogram sub-bucket bits: values below 2^SUB are exact, above each power of two is
/// split in 2^SUB buckets.
pub(super) const SUB: u32 = 11;
pub(super) const HBUCKETS: usize = (33 - SUB as usize) << SUB;
/// Fast path only when the cell table is at most this many cells or 8 per chunk.
pub(super) const DENSE_CELLS_MIN: usize = 1 << 20;
/// Coarsen cells until the estimated span needs at most this many.
pub(super) const TARGET_CELLS: u64 = 1 << 22;
/// Gaps collected before they are summed and binned.
pub(super) const BATCH: usize = 1 << 12;
/// Gaps sampled to predict the buckets of the wanted ranks (about; one per stratum).
pub(super) const SAMPLE: usize = 1 << 16;
/// Half-width of a predicted rank window, in standard deviations of the sample rank.
pub(super) const SAMPLE_SIGMAS: f64 = 6.0;
/// Most value ranges the walk keeps (each costs a pass over every batch).
pub(super) const MAX_GROUPS: usize = 8;
/// Most threads one computation uses.
pub(super) const MAX_WORKERS: usize = 8;
/// No gather group for this bucket.
pub(super) const NO_SLOT: u16 = u16::MAX;
/// One chunk in a packed cell (chunks in the high 32 bits, tokens in the low).
pub(super) const CHUNK_ONE: u64 = 1 << 32;
pub(super) const TOKENS_MASK: u64 = (1 << 32) - 1;

/// `d` in nanoseconds; ORs the seconds into `big` (checked against 2^34 at the end).
#[inline]
pub(super) fn ns(d: Duration, big: &mut u64) -> u64 {
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
pub(super) fn hbucket(g: u32) -> usize {
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
pub(super) fn filled<T: Clone>(n: usize, v: T) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    out.resize(n, v);
    out
}

/// Cell size (ns) and cells per second for a span holding `chunks` chunks: 1 ms cells,
/// coarsened tenfold until the span needs at most [`TARGET_CELLS`] cells and (sparse runs:
/// a table many times the chunks costs more than the coarser cells' extra candidates) at
/// most one per 8 chunks, but no fewer than 2^16.
pub(super) fn cell_size(span: u64, chunks: u64) -> (u64, usize) {
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
pub(super) fn cells_exact(cells: &[u64], chunks: u64, tokens: u64) -> bool {
    let (mut c, mut t) = (0u64, 0u64);
    for &x in cells {
        c = c.wrapping_add(x >> 32);
        t = t.wrapping_add(x & TOKENS_MASK);
    }
    c == chunks && t == tokens
}

/// What every worker needs to know.
pub(super) struct Setup {
    /// Earliest send of a successful request: origin of the cells and of vLLM's buckets.
    pub(super) min_ns: u64,
    pub(super) cell_ns: u64,
    pub(super) k: usize,
    pub(super) init_cells: usize,
    pub(super) max_cells: usize,
    /// The value ranges whose gaps the walk keeps (predicted from the sample), ascending.
    pub(super) groups: Vec<Group>,
    /// Goodput SLOs, if counted.
    pub(super) slo: Option<super::Slo>,
}

/// A range of gap values, in ns, both ends included, that the sample predicts holds some of
/// the wanted ranks. The walk counts the gaps below it and keeps the gaps in it, so a rank
/// that falls in it is selected from what was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Group {
    pub(super) lo: u64,
    pub(super) hi: u64,
    /// The sample's share of the gaps in the range, in millionths (to size the buffers).
    pub(super) ppm: u32,
}

impl Group {
    /// The batch value below which gaps are below the group (an escaped gap, [`ESCAPE`] in
    /// the batch, is never below it).
    pub(super) fn below32(&self) -> u32 {
        self.lo.min(u64::from(ESCAPE)) as u32
    }

    /// The batch values kept, `(lowest, width)`, escapes excluded (their values are in the
    /// side lists); `None` when the group holds only escaped values.
    pub(super) fn range32(&self) -> Option<(u32, u32)> {
        if self.lo >= u64::from(ESCAPE) {
            return None;
        }
        let hi = self.hi.clamp(self.lo, u64::from(ESCAPE) - 1);
        Some((self.lo as u32, (hi - self.lo) as u32))
    }

    pub(super) fn contains(&self, g: u64) -> bool {
        (self.lo..=self.hi).contains(&g)
    }
}

/// Append the values of `g` in `lo..=lo + width` to `out`. (Few are: blocks are tested
/// whole, in vector registers, and only blocks with a hit are walked.)
#[inline]
pub(super) fn keep_range(g: &[u32], lo: u32, width: u32, out: &mut Vec<u32>) {
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
pub(super) fn count_below(g: &[u32], lo: u32) -> u64 {
    g.chunks(1 << 16)
        .map(|b| u64::from(b.iter().map(|&x| u32::from(x < lo)).sum::<u32>()))
        .sum()
}

/// Running state of one request's walk over its chunks (kept in registers).
#[derive(Default)]
pub(super) struct Walk {
    pub(super) prev: u64,
    pub(super) tokens: u64,
    pub(super) big: u64,
    /// A chunk's cell was past the table.
    pub(super) missed: bool,
}

impl Walk {
    /// One chunk: its time in ns, its cell (or `missed`), its tokens.
    #[inline(always)]
    pub(super) fn visit<const CELL_NS: u64>(
        &mut self,
        c: &Chunk,
        min_ns: u64,
        cells: &mut [u64],
    ) -> u64 {
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
pub(super) fn min_max(g: &[u32]) -> (u32, u32) {
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
pub(super) fn sums(g: &[u32], max: u32) -> (u128, u128) {
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

#[cfg(test)]
mod tests;
