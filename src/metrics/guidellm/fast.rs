//! `Convention::Guidellm` as `compute` needs it: only the successful group's figures, and
//! the two token-rate distributions (one event per chunk) without a comparison sort of
//! every event. Same numbers as the reference ([`super::guidellm_metrics`]) bit for bit.
//!
//! * The per-request distributions (latency, TTFT, TPOT, ITL, token counts, request rate,
//!   concurrency, goodput) and servebench's exact figures are computed as the reference
//!   computes them, from the same samples, on a second thread for large runs.
//! * The output-token events are sorted by counting them into time cells (a cell's index
//!   is monotone in the time, so cells are in order), placing them, and sorting each
//!   cell's few events. Events lie within a few seconds of their request, so on runs whose
//!   records come roughly in time order the placement stays within the cache.
//! * Both rate distributions read the one sorted list: output tokens directly, all tokens
//!   merged with the sorted prompt events. Sorting by value then weight
//!   ([`pair_order`]) makes the sequence unique, so any sort gives the reference's bits.
//!
//! Inputs this path does not cover (a non-finite time origin, a window that ends before it
//! starts, more than 2^32 events) return `None`, and the caller uses the reference.

use std::cmp::Ordering;

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
        let output = sorted_output_events(ok, events, ws, we);
        let mut prompts: Vec<(f64, f64)> = ok
            .iter()
            .map(|s| s.prompt_timing())
            .filter(|e| e.0 >= ws && e.0 <= we)
            .collect();
        sort_pairs(&mut prompts);
        (output, prompts)
    };
    let ((output, prompts), p) = both(parallel, sort_events, per_request);
    let (output_tokens_per_second, tokens_per_second) = both(
        parallel,
        || WeightedDistribution::rate_from_sorted(output.iter().copied()),
        || WeightedDistribution::rate_from_sorted(merged(&output, &prompts)),
    );
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

/// The output-token events of `ok` inside `[ws, we]` plus `(ws, 0)` and `(we, 0)`, sorted
/// by [`pair_order`]: counted into time cells, placed, each cell sorted. `events` bounds
/// the number of events (at least one per request).
fn sorted_output_events(ok: &[&Stats], events: usize, ws: f64, we: f64) -> Vec<(f64, f64)> {
    let ncells = (events / EVENTS_PER_CELL).clamp(1, 1 << 26);
    let last = ncells - 1;
    let scale = ncells as f64 / (we - ws);
    // Monotone in t: a subtraction, a product by a positive constant, a truncation.
    let cell = |t: f64| (((t - ws) * scale) as usize).min(last);
    let inside = |t: f64| t >= ws && t <= we;
    let mut ends = vec![0u32; ncells];
    ends[cell(ws)] += 1;
    ends[cell(we)] += 1;
    for s in ok {
        s.for_each_output_timing(|t, _| {
            if inside(t) {
                ends[cell(t)] += 1;
            }
        });
    }
    // Each cell's start, then advanced past every event placed: each cell's end.
    let mut total = 0u32;
    for c in ends.iter_mut() {
        let k = *c;
        *c = total;
        total += k;
    }
    let mut out = vec![(0.0, 0.0); total as usize];
    let mut place = |t: f64, w: f64| {
        let c = &mut ends[cell(t)];
        out[*c as usize] = (t, w);
        *c += 1;
    };
    place(ws, 0.0);
    place(we, 0.0);
    for s in ok {
        s.for_each_output_timing(|t, w| {
            if inside(t) {
                place(t, w);
            }
        });
    }
    let mut lo = 0;
    for &end in &ends {
        sort_cell(&mut out[lo..end as usize]);
        lo = end as usize;
    }
    out
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

/// The merge of two sorted lists, in [`pair_order`].
fn merged<'a>(a: &'a [(f64, f64)], b: &'a [(f64, f64)]) -> impl Iterator<Item = (f64, f64)> + 'a {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let take_a = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => pair_order(x, y) != Ordering::Greater,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if take_a {
            i += 1;
            a.get(i - 1).copied()
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
