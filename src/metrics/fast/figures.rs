//! The entry point: sizing the run, splitting it over workers, and assembling vLLM's
//! figures from the workers' results.

use super::super::{default_duration_from, vllm_success, MetricsOptions, VllmFigures, NANOS_PER_S};
use super::*;
use crate::record::RequestRecord;
use crate::stats::{numpy_summary, Moments, SummaryRanks};

/// The vLLM figures by the one-walk method, or `None` for inputs it does not cover.
/// Runs on several threads when the records hold at least `parallel_chunks` chunks.
pub(crate) fn vllm_figures(
    records: &[RequestRecord],
    opts: &MetricsOptions,
    parallel_chunks: usize,
) -> Option<VllmFigures> {
    vllm_figures_with(records, opts, parallel_chunks, usize::MAX)
}

/// [`vllm_figures`], predicting the buckets of at most `predict` ranks (tests use 0 and 1
/// to exercise the second walk).
pub(super) fn vllm_figures_with(
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
        slo: opts
            .goodput
            .filter(crate::metrics::slo::Slo::judges_requests),
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
        .filter(crate::metrics::slo::Slo::judges_requests)
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
