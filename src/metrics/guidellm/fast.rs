//! `Convention::Guidellm` as `compute` needs it: only the successful group's figures, and
//! the two token-rate distributions (one event per chunk) without a comparison sort of
//! every event. Same numbers as the reference ([`super::guidellm_metrics`]) bit for bit.
//!
//! * The per-request distributions (latency, TTFT, TPOT, ITL, token counts, request rate,
//!   concurrency, goodput) and servebench's exact figures are computed as the reference
//!   computes them, from the same samples, on a second thread for large runs.
//! * The output-token events are sorted by counting them into time cells (a cell's index
//!   is monotone in the time, so cells are in order), placing them, and sorting each
//!   cell's few events. The placement runs one block of cells (~256 K events) at a time
//!   into a reused buffer, reading only the requests whose events reach that block, and
//!   the sorted blocks are streamed to the consumers: no array of every event is made
//!   (on 100 M events that array was 1.6 GB of fresh memory, faulted in on every call).
//!   Where requests span many blocks the blocks grow, so that no event is read more
//!   than about twice.
//! * Both rate distributions read the sorted stream (each thread its own): output
//!   tokens directly, all tokens merged with the sorted prompt events. Sorting by value then weight
//!   ([`pair_order`]) makes the sequence unique, so any sort gives the reference's bits.
//!
//! Inputs this path does not cover (a non-finite time origin, a window that ends before it
//! starts, more than 2^32 events) return `None`, and the caller uses the reference.

use std::cmp::Ordering;
use std::sync::mpsc;

use super::{
    completions, conforming, groups, intervals, itls_ms, latencies_s, output_counts, prepare,
    prompt_counts, tpots_ms, ttfts_ms, Groups, Stats, Successful,
};
use crate::metrics::{exact_figures, MetricsOptions};
use crate::record::RequestRecord;
use crate::result::ExactFigures;
use crate::stats::{pair_order, sort_pairs, WeightedDistribution};

/// Below this many events everything runs on the calling thread.
const PARALLEL_EVENTS: usize = 1 << 18;
/// Events per time cell, on average.
const EVENTS_PER_CELL: usize = 4;
/// Cells sorted by insertion up to this many events.
const INSERTION_MAX: usize = 24;

/// The successful group's figures and the exact figures, or `None` (see the module docs).
pub(super) fn successful(
    records: &[RequestRecord],
    opts: &MetricsOptions,
) -> Option<(Successful, ExactFigures)> {
    if !opts.time_origin_s.unwrap_or(0.0).is_finite() {
        return None;
    }
    let (stats, ws, we) = prepare(records, opts);
    if ws > we {
        return None;
    }
    let Groups {
        main,
        first_token,
        after_first,
    } = groups(&stats, ws, we);
    let ok: &[&Stats] = &main.successful;
    let events: usize = ok.iter().map(|s| s.iterations.max(1)).sum();
    if events >= u32::MAX as usize - 2 {
        return None;
    }
    let parallel = events >= PARALLEL_EVENTS;

    let per_request = || {
        let rate =
            |xs: &[(f64, f64)]| WeightedDistribution::rate_from_timings(xs, Some(ws), Some(we));
        PerRequest {
            concurrency: WeightedDistribution::concurrency_from_intervals(
                &collect(ok, intervals),
                Some(ws),
                Some(we),
            ),
            prompt_count: WeightedDistribution::from_values(&collect(ok, prompt_counts)),
            output_count: WeightedDistribution::from_values(&collect(ok, output_counts)),
            requests_per_second: rate(&collect(ok, completions)),
            goodput: opts.goodput.map(|slo| rate(&conforming(ok, &slo))),
            latency_s: WeightedDistribution::from_values(&collect(ok, latencies_s)),
            ttft_ms: WeightedDistribution::from_values(&collect(&first_token.successful, ttfts_ms)),
            tpot_ms: WeightedDistribution::from_weighted(&collect(ok, tpots_ms), None),
            itl_ms: WeightedDistribution::from_weighted(
                &collect(&after_first.successful, itls_ms),
                None,
            ),
            exact: exact_figures(records),
        }
    };
    let sort_events = || {
        let output = OutputCells::new(ok, events, ws, we);
        let mut prompts: Vec<(f64, f64)> = ok
            .iter()
            .map(|s| s.prompt_timing())
            .filter(|e| e.0 >= ws && e.0 <= we)
            .collect();
        sort_pairs(&mut prompts);
        (output, prompts)
    };
    let ((output, prompts), p) = both(parallel, sort_events, per_request);
    let (output_tokens_per_second, tokens_per_second) = if parallel {
        rates_in_parallel(&output, &prompts)
    } else {
        rates(&output, &prompts)
    };
    let m = Successful {
        window_start_s: ws,
        window_end_s: we,
        totals: super::StatusCounts {
            successful: main.successful.len() as u64,
            incomplete: main.incomplete.len() as u64,
            errored: main.errored.len() as u64,
            total: (main.successful.len() + main.incomplete.len() + main.errored.len()) as u64,
        },
        concurrency: p.concurrency,
        prompt_count: p.prompt_count,
        output_count: p.output_count,
        requests_per_second: p.requests_per_second,
        goodput: p.goodput,
        output_tokens_per_second,
        tokens_per_second,
        latency_s: p.latency_s,
        ttft_ms: p.ttft_ms,
        tpot_ms: p.tpot_ms,
        itl_ms: p.itl_ms,
    };
    Some((m, p.exact))
}

/// The output-token and the all-token rate distributions, each from its own stream.
fn rates(
    output: &OutputCells,
    prompts: &[(f64, f64)],
) -> (WeightedDistribution, WeightedDistribution) {
    (
        WeightedDistribution::rate_from_sorted(output.stream()),
        WeightedDistribution::rate_from_sorted(merged(output.stream(), prompts)),
    )
}

/// [`rates`] on two threads from one stream: this thread places and sorts the blocks and
/// sends a copy of each to the second thread, which merges them with the prompt events
/// (used buffers come back for the next copies).
fn rates_in_parallel(
    output: &OutputCells,
    prompts: &[(f64, f64)],
) -> (WeightedDistribution, WeightedDistribution) {
    let (tx, rx) = mpsc::channel();
    let (back_tx, back_rx) = mpsc::channel();
    std::thread::scope(|s| {
        let all = move || {
            let received = Received {
                blocks: rx,
                back: back_tx,
                buf: Vec::new(),
                pos: 0,
            };
            WeightedDistribution::rate_from_sorted(merged(received, prompts))
        };
        match std::thread::Builder::new().spawn_scoped(s, all) {
            Ok(h) => {
                let mut stream = output.stream();
                stream.copies = Some((tx, back_rx));
                let a = WeightedDistribution::rate_from_sorted(stream);
                let b = h
                    .join()
                    .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
                (a, b)
            }
            Err(_) => rates(output, prompts),
        }
    })
}

/// The blocks another thread's [`SortedOutput`] sends, in order, as one sequence.
struct Received {
    blocks: mpsc::Receiver<Vec<(f64, f64)>>,
    back: mpsc::Sender<Vec<(f64, f64)>>,
    buf: Vec<(f64, f64)>,
    pos: usize,
}

impl Iterator for Received {
    type Item = (f64, f64);

    #[inline]
    fn next(&mut self) -> Option<(f64, f64)> {
        loop {
            if let Some(&x) = self.buf.get(self.pos) {
                self.pos += 1;
                return Some(x);
            }
            let next = self.blocks.recv().ok()?;
            // The sender may be gone already; the buffer is then just dropped.
            let _ = self.back.send(std::mem::replace(&mut self.buf, next));
            self.pos = 0;
        }
    }
}

/// The distributions with one sample per request, and the exact figures.
struct PerRequest {
    concurrency: WeightedDistribution,
    prompt_count: WeightedDistribution,
    output_count: WeightedDistribution,
    requests_per_second: WeightedDistribution,
    goodput: Option<WeightedDistribution>,
    latency_s: WeightedDistribution,
    ttft_ms: WeightedDistribution,
    tpot_ms: WeightedDistribution,
    itl_ms: WeightedDistribution,
    exact: ExactFigures,
}

fn collect<T>(g: &[&Stats], f: fn(&[&Stats], &mut Vec<T>)) -> Vec<T> {
    let mut out = Vec::with_capacity(g.len());
    f(g, &mut out);
    out
}

/// `a()` here and `b()` on a second thread when `parallel` (both here when no thread can
/// be started).
fn both<A, B: Send>(parallel: bool, a: impl FnOnce() -> A, b: impl Fn() -> B + Sync) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|s| match std::thread::Builder::new().spawn_scoped(s, &b) {
        Ok(h) => {
            let x = a();
            let y = h
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
            (x, y)
        }
        Err(_) => (a(), b()),
    })
}

/// The output-token events of `ok` inside `[ws, we]` plus `(ws, 0)` and `(we, 0)`,
/// counted into time cells; [`OutputCells::stream`] yields them sorted by [`pair_order`],
/// placing and sorting one block of cells at a time in a reused buffer, so that no array
/// of every event is made.
struct OutputCells<'a> {
    ok: &'a [&'a Stats],
    ws: f64,
    we: f64,
    scale: f64,
    last: usize,
    /// Each cell's first position in the sorted sequence; one more entry: the total.
    starts: Vec<u32>,
    /// Per request of `ok`: the first and last cell of its events inside the window
    /// (`(u32::MAX, 0)` when none).
    spans: Vec<(u32, u32)>,
    /// Cells per block.
    block_cells: usize,
    /// The requests whose first block is `b`: `firsts[offsets[b]..offsets[b + 1]]`.
    offsets: Vec<u32>,
    firsts: Vec<u32>,
}

impl<'a> OutputCells<'a> {
    /// Count the events into cells. `events` bounds the number of events (at least one
    /// per request).
    fn new(ok: &'a [&'a Stats], events: usize, ws: f64, we: f64) -> Self {
        let ncells = (events / EVENTS_PER_CELL).clamp(1, 1 << 26);
        let mut c = OutputCells {
            ok,
            ws,
            we,
            scale: ncells as f64 / (we - ws),
            last: ncells - 1,
            starts: vec![0u32; ncells + 1],
            spans: Vec::with_capacity(ok.len()),
            block_cells: ncells,
            offsets: Vec::new(),
            firsts: Vec::new(),
        };
        let (scale, last) = (c.scale, c.last);
        let cell = |t: f64| (((t - ws) * scale) as usize).min(last);
        let starts = &mut c.starts;
        starts[cell(ws)] += 1;
        starts[cell(we)] += 1;
        for s in ok {
            let (mut lo, mut hi) = (u32::MAX, 0u32);
            s.for_each_output_timing(|t, _| {
                if t >= ws && t <= we {
                    let k = cell(t);
                    starts[k] += 1;
                    lo = lo.min(k as u32);
                    hi = hi.max(k as u32);
                }
            });
            c.spans.push((lo, hi));
        }
        let mut total = 0u32;
        for x in starts.iter_mut() {
            let k = *x;
            *x = total;
            total += k;
        }
        c.plan_blocks(events);
        c
    }

    /// The cell of `t` (as in [`OutputCells::new`]). Monotone in t: a subtraction, a
    /// product by a positive constant, a truncation.
    #[inline]
    fn cell(&self, t: f64) -> usize {
        (((t - self.ws) * self.scale) as usize).min(self.last)
    }

    #[inline]
    fn inside(&self, t: f64) -> bool {
        t >= self.ws && t <= self.we
    }

    /// Choose the block size: the smallest (from [`BLOCK_CELLS`], doubling) for which
    /// reading each request's events once per block it spans costs at most twice one
    /// reading of every event; then list the requests by first block.
    fn plan_blocks(&mut self, events: usize) {
        let ncells = self.last + 1;
        let mut bc = BLOCK_CELLS.min(ncells);
        while bc < ncells {
            let cost: usize = self
                .ok
                .iter()
                .zip(&self.spans)
                .filter(|(_, sp)| sp.0 <= sp.1)
                .map(|(s, sp)| s.iterations.max(1) * (sp.1 as usize / bc - sp.0 as usize / bc + 1))
                .sum();
            if cost <= 2 * events {
                break;
            }
            bc = (bc * 2).min(ncells);
        }
        self.block_cells = bc;
        let nblocks = ncells.div_ceil(bc);
        let mut offsets = vec![0u32; nblocks + 1];
        for sp in self.spans.iter().filter(|sp| sp.0 <= sp.1) {
            offsets[sp.0 as usize / bc + 1] += 1;
        }
        for b in 0..nblocks {
            offsets[b + 1] += offsets[b];
        }
        let mut next = offsets.clone();
        let mut firsts = vec![0u32; offsets[nblocks] as usize];
        for (r, sp) in self.spans.iter().enumerate() {
            if sp.0 <= sp.1 {
                let b = sp.0 as usize / bc;
                firsts[next[b] as usize] = r as u32;
                next[b] += 1;
            }
        }
        self.offsets = offsets;
        self.firsts = firsts;
    }

    /// The events in [`pair_order`].
    fn stream(&self) -> SortedOutput<'_, 'a> {
        SortedOutput {
            cells: self,
            buf: Vec::new(),
            cursor: Vec::new(),
            active: Vec::new(),
            pos: 0,
            block: 0,
            copies: None,
        }
    }
}

/// Cells per block of [`OutputCells::stream`] (about a quarter of a million events; a
/// few in tests, so that the tests' small runs span many blocks).
const BLOCK_CELLS: usize = if cfg!(test) { 8 } else { 1 << 16 };

/// The iterator of [`OutputCells::stream`].
struct SortedOutput<'c, 'a> {
    cells: &'c OutputCells<'a>,
    /// The current block's events, sorted.
    buf: Vec<(f64, f64)>,
    /// Each cell's next free position in `buf` while placing.
    cursor: Vec<u32>,
    /// The requests with events in the current block or a later one.
    active: Vec<u32>,
    pos: usize,
    block: usize,
    /// Where to send a copy of each sorted block, and where used buffers come back.
    copies: Option<Copies>,
}

/// See [`SortedOutput::copies`].
type Copies = (
    mpsc::Sender<Vec<(f64, f64)>>,
    mpsc::Receiver<Vec<(f64, f64)>>,
);

impl SortedOutput<'_, '_> {
    /// Place and sort the events of block `self.block` into `buf`.
    fn fill(&mut self) {
        let c = self.cells;
        let b = self.block;
        let c0 = b * c.block_cells;
        let c1 = (c0 + c.block_cells).min(c.last + 1);
        let base = c.starts[c0];
        self.cursor.clear();
        self.cursor
            .extend(c.starts[c0..c1].iter().map(|&x| x - base));
        self.buf.clear();
        self.buf.resize((c.starts[c1] - base) as usize, (0.0, 0.0));
        self.active
            .retain(|&r| c.spans[r as usize].1 as usize >= c0);
        self.active
            .extend_from_slice(&c.firsts[c.offsets[b] as usize..c.offsets[b + 1] as usize]);
        let (buf, cursor) = (&mut self.buf, &mut self.cursor);
        let mut place = |t: f64, w: f64| {
            let k = c.cell(t);
            if (c0..c1).contains(&k) {
                let p = &mut cursor[k - c0];
                buf[*p as usize] = (t, w);
                *p += 1;
            }
        };
        place(c.ws, 0.0);
        place(c.we, 0.0);
        for &r in &self.active {
            c.ok[r as usize].for_each_output_timing(|t, w| {
                if c.inside(t) {
                    place(t, w);
                }
            });
        }
        let mut lo = 0;
        for &end in &c.starts[c0 + 1..=c1] {
            let end = (end - base) as usize;
            sort_cell(&mut self.buf[lo..end]);
            lo = end;
        }
        if let (Some((tx, back)), false) = (&self.copies, self.buf.is_empty()) {
            let mut copy = back.try_recv().unwrap_or_default();
            copy.clear();
            copy.extend_from_slice(&self.buf);
            // The receiver is gone only if its thread panicked; the join reports that.
            let _ = tx.send(copy);
        }
        self.pos = 0;
    }
}

impl Iterator for SortedOutput<'_, '_> {
    type Item = (f64, f64);

    #[inline]
    fn next(&mut self) -> Option<(f64, f64)> {
        loop {
            if let Some(&x) = self.buf.get(self.pos) {
                self.pos += 1;
                return Some(x);
            }
            if self.block >= self.cells.offsets.len() - 1 {
                return None;
            }
            self.fill();
            self.block += 1;
        }
    }
}

/// Sort a cell's events by [`pair_order`] (insertion sort for the usual few).
fn sort_cell(xs: &mut [(f64, f64)]) {
    if xs.len() > INSERTION_MAX {
        xs.sort_unstable_by(pair_order);
        return;
    }
    for i in 1..xs.len() {
        let x = xs[i];
        let mut j = i;
        while j > 0 && pair_order(&xs[j - 1], &x) == Ordering::Greater {
            xs[j] = xs[j - 1];
            j -= 1;
        }
        xs[j] = x;
    }
}

/// The merge of two sorted sequences, in [`pair_order`].
fn merged<'a>(
    a: impl Iterator<Item = (f64, f64)> + 'a,
    b: &'a [(f64, f64)],
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let mut a = a.peekable();
    let mut j = 0;
    std::iter::from_fn(move || {
        let take_a = match (a.peek(), b.get(j)) {
            (Some(x), Some(y)) => pair_order(x, y) != Ordering::Greater,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if take_a {
            a.next()
        } else {
            j += 1;
            b.get(j - 1).copied()
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;

    use super::super::{compute_guidellm, compute_guidellm_reference};
    use crate::metrics::{MetricsOptions, Slo};
    use crate::record::{synthetic, Outcome};
    use crate::result::Convention;

    /// A synthetic run, varied: times rounded to `quantum_ns` (ties and merged events),
    /// every `k`-th request cut short, failed, without usage or with zero tokens.
    fn run(n: usize, chunks: usize, seed: u64, quantum_ns: u64, k: usize) -> Vec<RequestRecord> {
        let q = |d: Duration| {
            let ns = d.as_nanos() as u64;
            Duration::from_nanos(ns - ns % quantum_ns)
        };
        let mut records = synthetic::generate(n, chunks, 50.0, seed);
        for (i, r) in records.iter_mut().enumerate() {
            r.sent_at = q(r.sent_at);
            for c in &mut r.chunks {
                c.at = q(c.at).max(r.sent_at);
            }
            r.ended_at = r.chunks.last().map(|c| c.at);
            match i % k.max(1) {
                1 => r.chunks.truncate(1),
                2 => r.chunks.clear(),
                3 => {
                    r.outcome = Outcome::Incomplete {
                        reason: "cut".into(),
                    }
                }
                4 => r.usage_output_tokens = Some(0),
                5 => r.usage_output_tokens = None,
                6 => r.scheduled_at = Some(r.sent_at.saturating_sub(Duration::from_millis(3))),
                _ => {}
            }
        }
        records
    }

    fn same(records: &[RequestRecord], opts: &MetricsOptions) -> Result<(), TestCaseError> {
        let fast = compute_guidellm(records, opts);
        let reference = compute_guidellm_reference(records, opts);
        // Debug prints each f64 so that it reads back to the same bits.
        prop_assert_eq!(format!("{fast:?}"), format!("{reference:?}"));
        Ok(())
    }

    use crate::record::RequestRecord;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn fast_equals_reference(
            n in 0usize..120,
            chunks in 0usize..40,
            seed in 0u64..1000,
            quantum_ns in prop_oneof![Just(1u64), Just(1_000), Just(1_000_000), Just(50_000_000)],
            k in 1usize..12,
            origin in prop_oneof![Just(None), Just(Some(1.764e9)), Just(Some(1_764_000_123.456))],
            window in prop_oneof![Just(None), Just(Some((500u64, 1500u64))), Just(Some((0, 3000)))],
            goodput in any::<bool>(),
        ) {
            let records = run(n, chunks, seed, quantum_ns, k);
            let mut opts = MetricsOptions::new(Convention::Guidellm);
            opts.time_origin_s = origin;
            opts.window = window.map(|(a, b)| (Duration::from_millis(a), Duration::from_millis(b)));
            opts.percentiles = vec![0.1, 50.0, 95.0, 99.0, 99.9];
            if goodput {
                opts.goodput = Some(Slo { ttft_ms: Some(250.0), tpot_ms: Some(40.0), e2el_ms: None });
            }
            same(&records, &opts)?;
        }
    }

    /// Large enough for two threads and many events per cell, with ties.
    #[test]
    fn fast_equals_reference_on_a_large_run() {
        for (quantum_ns, origin) in [(1, None), (1_000_000, Some(1.764e9))] {
            let records = run(4000, 80, 7, quantum_ns, 50);
            let mut opts = MetricsOptions::new(Convention::Guidellm);
            opts.time_origin_s = origin;
            same(&records, &opts).unwrap();
        }
    }

    #[test]
    fn a_window_ending_before_it_starts_falls_back() {
        let records = run(50, 10, 3, 1, 5);
        let mut opts = MetricsOptions::new(Convention::Guidellm);
        opts.window = Some((Duration::from_secs(2), Duration::from_secs(1)));
        assert!(super::successful(&records, &opts).is_none());
        same(&records, &opts).unwrap();
    }
}
