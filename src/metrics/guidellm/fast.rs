//! `Convention::Guidellm` as `compute` needs it: only the successful group's figures, and
//! of the two token-rate distributions only their mean and max, from one pass over the
//! output-token events in order ([`sorted_blocks`]) without a sort or an array of every
//! event. Same numbers as the reference ([`super::guidellm_metrics`]) bit for bit.
//!
//! * The per-request distributions (latency, TTFT, TPOT, ITL, token counts, request rate,
//!   concurrency, goodput) and servebench's exact figures are computed as the reference
//!   computes them, from the same samples.
//! * Both rate distributions merge their events (guidellm's 0.1 ms merge, [`TimeMerger`])
//!   as the ordered events go by: the output tokens directly, all tokens with the sorted
//!   prompt events merged in. Sorting by value then weight ([`pair_order`]) makes the
//!   sequence unique, so any sort gives the reference's bits.
//! * For large runs the per-request work and the all-token rate's final sort run on a
//!   second thread while this one streams the events and finishes the output-token rate.
//!
//! Inputs this path does not cover (a non-finite time origin, a window that ends before it
//! starts, more than 2^32 events, a request whose token times do not increase) return
//! `None`, and the caller uses the reference.

use std::cmp::Ordering;
use std::sync::mpsc;

use super::events::sorted_blocks;
use super::{
    completions, conforming, groups, intervals, itls_ms, latencies_s, output_counts, prepare,
    prompt_counts, tpots_ms, ttfts_ms, Groups, RateFigures, Stats, Successful,
};
use crate::metrics::{exact_figures, MetricsOptions};
use crate::record::RequestRecord;
use crate::result::ExactFigures;
use crate::stats::{
    pair_order, rate_mean_max, sort_pairs, TimeMerger, WeightedDistribution,
    GUIDELLM_MERGE_THRESHOLD_S,
};

/// Below this many events everything runs on the calling thread.
const PARALLEL_EVENTS: usize = 1 << 18;

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
            goodput: opts
                .goodput
                .filter(crate::metrics::slo::Slo::judges_requests)
                .map(|slo| rate(&conforming(ok, &slo))),
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
    let merge = || merged_events(ok, events, ws, we);
    let (p, (output_rate, total_rate)) = if events >= PARALLEL_EVENTS {
        in_parallel(merge, per_request)
    } else {
        on_this_thread(merge, per_request)
    }?;
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
        output_rate,
        total_rate,
        latency_s: p.latency_s,
        ttft_ms: p.ttft_ms,
        tpot_ms: p.tpot_ms,
        itl_ms: p.itl_ms,
    };
    Some((m, p.exact))
}

/// The merged events (guidellm's groups) of the output-token rate and of the all-token
/// rate.
type Merged = (Vec<(f64, f64)>, Vec<(f64, f64)>);

/// [`Merged`] from one pass over the events (see the module docs), or `None` where
/// [`sorted_blocks`] gives up.
fn merged_events(ok: &[&Stats], events: usize, ws: f64, we: f64) -> Option<Merged> {
    let mut prompts: Vec<(f64, f64)> = ok
        .iter()
        .map(|s| s.prompt_timing())
        .filter(|e| e.0 >= ws && e.0 <= we)
        .collect();
    sort_pairs(&mut prompts);
    // Groups start more than the threshold apart (one more for the last).
    let groups = ((we - ws) / GUIDELLM_MERGE_THRESHOLD_S).min(events as f64) as usize + 2;
    let mut out = TimeMerger::new(GUIDELLM_MERGE_THRESHOLD_S, groups);
    let mut all = TimeMerger::new(GUIDELLM_MERGE_THRESHOLD_S, groups);
    let mut j = 0;
    sorted_blocks(ok, events, ws, we, |block| {
        for &e in block {
            out.push(e.0, e.1);
            while let Some(p) = prompts.get(j) {
                if pair_order(p, &e) != Ordering::Less {
                    break;
                }
                all.push(p.0, p.1);
                j += 1;
            }
            all.push(e.0, e.1);
        }
    })?;
    for p in prompts.get(j..).unwrap_or_default() {
        all.push(p.0, p.1);
    }
    Some((out.finish(), all.finish()))
}

/// The figures the report reads from a rate distribution, from its merged events.
fn rate_figures(merged: Vec<(f64, f64)>) -> RateFigures {
    let (mean_per_s, max_per_s) = rate_mean_max(merged);
    RateFigures {
        mean_per_s,
        max_per_s,
    }
}

/// `merge()` here, then the output-token rate's figures; on a second thread
/// `per_request()`, then the all-token rate's figures from the events this thread sends
/// (everything here when no thread can be started).
fn in_parallel(
    merge: impl FnOnce() -> Option<Merged>,
    per_request: impl Fn() -> PerRequest + Sync,
) -> Option<(PerRequest, (RateFigures, RateFigures))> {
    let (tx, rx) = mpsc::channel::<Vec<(f64, f64)>>();
    let per_request = &per_request;
    std::thread::scope(|s| {
        let second = move || {
            let p = per_request();
            (p, rx.recv().ok().map(rate_figures))
        };
        match std::thread::Builder::new().spawn_scoped(s, second) {
            Ok(h) => {
                let output = merge().map(|(out, all)| {
                    // The receiver is gone only if its thread panicked; the join reports that.
                    let _ = tx.send(all);
                    rate_figures(out)
                });
                drop(tx);
                let (p, total) = h
                    .join()
                    .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
                Some((p, (output?, total?)))
            }
            Err(_) => on_this_thread(merge, per_request),
        }
    })
}

/// What [`in_parallel`] computes, all on this thread.
fn on_this_thread(
    merge: impl FnOnce() -> Option<Merged>,
    per_request: impl FnOnce() -> PerRequest,
) -> Option<(PerRequest, (RateFigures, RateFigures))> {
    let (out, all) = merge()?;
    Some((per_request(), (rate_figures(out), rate_figures(all))))
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
                opts.goodput = Some(Slo { ttft_ms: Some(250.0), tpot_ms: Some(40.0), ..Slo::default() });
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
