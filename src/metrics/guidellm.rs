//! `Convention::Guidellm`: guidellm 0.8's per-request definitions and its distributions
//! ([`WeightedDistribution`]), broken down by status like guidellm's `StatusDistributionSummary`.
//!
//! # From a [`RequestRecord`] to guidellm's request stats
//!
//! | guidellm | record |
//! |---|---|
//! | `request_start` | `sent_at` |
//! | `first_token_iteration` / `last_token_iteration` | first / last chunk |
//! | `token_iterations` | number of chunks |
//! | `request_end_time` (`request_end`, else `resolve_end`) | `ended_at`, else the last chunk, else `sent_at` |
//! | `request_end` (for `request_latency`) | the same, but **only for successes**: guidellm never sets it for errored or cancelled requests, whose latency is null (→ 0 in distributions) |
//! | `output_tokens` | `usage_output_tokens`, else the chunks' token count (guidellm counts one token per iteration), else null |
//! | `prompt_tokens` | [`RequestRecord::input_tokens`] |
//! | status successful / errored / incomplete | `Success` / `Error` / `Incomplete` |
//!
//! Per request: latency = end − start (s); TTFT = 1000·(first − start); TPOT =
//! 1000·(last − start)/N (includes the TTFT; `last` falls back to the end time); ITL =
//! 1000·(last − first)/(N − 1) for N > 1. Distributions: TTFT, latency and token counts are
//! request-weighted (null → 0); TPOT is weighted by N and ITL by N − 1 (their `count` is a
//! token count); rates place prompt tokens at the first token (or the end), one output
//! token at the first token and the other N − 1 spread evenly over the remaining
//! iterations (`np.linspace`), or all N at the last token/end when there is at most one
//! iteration.
//!
//! # Window
//!
//! Requests count when they overlap the measurement window (`end ≥ window start` and
//! `start ≤ window end`); TTFT uses the interval ending at the first token, ITL the one
//! starting there; rate events outside the window are dropped.
//!
//! # Floating point
//!
//! guidellm computes on epoch seconds (`time.time()` floats, about 0.24 µs apart at today's
//! epoch). Give [`MetricsOptions::time_origin_s`] (the epoch seconds of offset zero) to
//! reproduce its rounding bit for bit — the fixture tests do, and match every aggregate to
//! 1e-9. Without it the offsets themselves are used: more precise than guidellm's own
//! timestamps, so results then differ from guidellm's by that sub-microsecond rounding.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{exact_figures, record_end, MetricsOptions};
use crate::record::{Outcome, RequestRecord};
use crate::result::{BenchmarkResult, Convention, ExactFigures, Percentile, Summary};
use crate::stats::WeightedDistribution;

mod events;
mod fast;

/// One distribution per status group, plus the total (successful, then incomplete, then
/// errored — guidellm's concatenation order).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusDistributions {
    /// Successful requests.
    pub successful: WeightedDistribution,
    /// Errored requests.
    pub errored: WeightedDistribution,
    /// Incomplete (cancelled) requests.
    pub incomplete: WeightedDistribution,
    /// All three together.
    pub total: WeightedDistribution,
}

/// Request counts per status group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    /// Successful requests.
    pub successful: u64,
    /// Errored requests.
    pub errored: u64,
    /// Incomplete requests.
    pub incomplete: u64,
    /// Sum of the three.
    pub total: u64,
}

/// guidellm's `metrics` block, recomputed from records (the fields GPUStack's report and
/// guidellm's console use). Latencies in the units guidellm uses: `request_latency` in
/// seconds, the `_ms` fields in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuidellmMetrics {
    /// Window start, seconds (epoch seconds when a time origin was given).
    pub window_start_s: f64,
    /// Window end, seconds.
    pub window_end_s: f64,
    /// `request_totals`.
    pub request_totals: StatusCounts,
    /// `requests_per_second`.
    pub requests_per_second: StatusDistributions,
    /// `request_concurrency`.
    pub request_concurrency: StatusDistributions,
    /// `request_latency`, seconds.
    pub request_latency: StatusDistributions,
    /// `prompt_token_count`.
    pub prompt_token_count: StatusDistributions,
    /// `output_token_count`.
    pub output_token_count: StatusDistributions,
    /// `total_token_count`.
    pub total_token_count: StatusDistributions,
    /// `time_to_first_token_ms`.
    pub time_to_first_token_ms: StatusDistributions,
    /// `time_per_output_token_ms` (token-weighted, includes the TTFT).
    pub time_per_output_token_ms: StatusDistributions,
    /// `inter_token_latency_ms` (token-weighted per-request decode mean).
    pub inter_token_latency_ms: StatusDistributions,
    /// `prompt_tokens_per_second`.
    pub prompt_tokens_per_second: StatusDistributions,
    /// `output_tokens_per_second`.
    pub output_tokens_per_second: StatusDistributions,
    /// `tokens_per_second`.
    pub tokens_per_second: StatusDistributions,
    /// `output_tokens_per_iteration`.
    pub output_tokens_per_iteration: StatusDistributions,
    /// `request_goodput` (only with goodput SLOs): rate of conforming successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_goodput: Option<StatusDistributions>,
    /// `request_dispatch_delay`, seconds: send − scheduled arrival, per request with a
    /// schedule ([`RequestRecord::scheduled_at`]); `None` when no request in the window has
    /// one (guidellm reports null for strategies without an arrival schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_dispatch_delay: Option<StatusDistributions>,
    /// `request_scheduled_latency`, seconds: end − scheduled arrival, for requests with a
    /// schedule and an end (successes: guidellm sets no `request_end` for the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_scheduled_latency: Option<StatusDistributions>,
}

/// guidellm's view of one record.
struct Stats {
    status: Status,
    start: f64,
    end_time: f64,
    request_end: Option<f64>,
    first: Option<f64>,
    last: Option<f64>,
    iterations: usize,
    output_tokens: Option<u64>,
    prompt_tokens: Option<u64>,
    scheduled: Option<f64>,
    /// Its output checks passed (or none were asked for).
    checks_ok: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Successful,
    Incomplete,
    Errored,
}

impl Stats {
    fn new(r: &RequestRecord, at: &impl Fn(Duration) -> f64) -> Self {
        let status = match r.outcome {
            Outcome::Success => Status::Successful,
            Outcome::Error { .. } => Status::Errored,
            Outcome::Incomplete { .. } => Status::Incomplete,
        };
        let end_time = at(record_end(r));
        let output_tokens = r
            .usage_output_tokens
            .or_else(|| (!r.chunks.is_empty()).then(|| r.client_output_tokens()));
        Stats {
            status,
            start: at(r.sent_at),
            end_time,
            request_end: (status == Status::Successful).then_some(end_time),
            first: r.chunks.first().map(|c| at(c.at)),
            last: r.chunks.last().map(|c| at(c.at)),
            iterations: r.chunks.len(),
            output_tokens,
            prompt_tokens: r.input_tokens(),
            scheduled: r.scheduled_at.map(at),
            checks_ok: super::slo::checks_pass(r),
        }
    }

    fn dispatch_delay(&self) -> Option<f64> {
        self.scheduled.map(|t| self.start - t)
    }

    fn scheduled_latency(&self) -> Option<f64> {
        Some(self.request_end? - self.scheduled?)
    }

    fn latency(&self) -> Option<f64> {
        self.request_end.map(|e| e - self.start)
    }

    fn total_tokens(&self) -> Option<u64> {
        match (self.prompt_tokens, self.output_tokens) {
            (None, None) => None,
            (p, o) => Some(p.unwrap_or(0).saturating_add(o.unwrap_or(0))),
        }
    }

    fn ttft_ms(&self) -> Option<f64> {
        self.first.map(|f| 1000.0 * (f - self.start))
    }

    fn tpot_ms(&self) -> Option<f64> {
        let n = self.output_tokens.filter(|&n| n > 0)?;
        let last = self.last.unwrap_or(self.end_time);
        Some(1000.0 * (last - self.start) / n as f64)
    }

    fn itl_ms(&self) -> Option<f64> {
        let n = self.output_tokens.filter(|&n| n > 1)?;
        Some(1000.0 * (self.last? - self.first?) / (n - 1) as f64)
    }

    fn prompt_timing(&self) -> (f64, f64) {
        (
            self.first.unwrap_or(self.end_time),
            self.prompt_tokens.unwrap_or(0) as f64,
        )
    }

    fn output_timings(&self, out: &mut Vec<(f64, f64)>) {
        self.for_each_output_timing(|t, w| out.push((t, w)));
    }

    /// Each `(time, tokens)` of [`Stats::output_timings`], in order.
    #[inline]
    fn for_each_output_timing(&self, mut out: impl FnMut(f64, f64)) {
        let lane = events::Lane::new(self);
        for i in 0..lane.len() {
            out(lane.time(i), lane.weight(i));
        }
    }
}

/// Something per status group; guidellm concatenates them in this order (successful,
/// incomplete, errored) for its `total`.
#[derive(Debug, Default)]
struct ByStatus<T> {
    successful: T,
    incomplete: T,
    errored: T,
}

impl<T> ByStatus<T> {
    /// The group of `status`.
    fn get_mut(&mut self, status: Status) -> &mut T {
        match status {
            Status::Successful => &mut self.successful,
            Status::Incomplete => &mut self.incomplete,
            Status::Errored => &mut self.errored,
        }
    }

    /// `f` of every group.
    fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> ByStatus<U> {
        ByStatus {
            successful: f(&self.successful),
            incomplete: f(&self.incomplete),
            errored: f(&self.errored),
        }
    }
}

/// Build one [`StatusDistributions`] from per-status samples.
fn by_status<T>(
    groups: &ByStatus<Vec<&Stats>>,
    f: impl Fn(&[&Stats], &mut Vec<T>),
    summarize: impl Fn(&[T]) -> WeightedDistribution,
) -> StatusDistributions
where
    T: Clone,
{
    let parts = groups.map(|g| {
        let mut out = Vec::new();
        f(g, &mut out);
        out
    });
    let successful = summarize(&parts.successful);
    // Usually only successes: the total is then the same distribution.
    let total = if parts.incomplete.is_empty() && parts.errored.is_empty() {
        successful.clone()
    } else {
        let mut all = parts.successful.clone();
        all.extend(parts.incomplete.iter().cloned());
        all.extend(parts.errored.iter().cloned());
        summarize(&all)
    };
    StatusDistributions {
        successful,
        incomplete: summarize(&parts.incomplete),
        errored: summarize(&parts.errored),
        total,
    }
}

/// Every record's [`Stats`] and the window (`opts.window`, else first send to last end).
fn prepare(records: &[RequestRecord], opts: &MetricsOptions) -> (Vec<Stats>, f64, f64) {
    let origin = opts.time_origin_s.unwrap_or(0.0);
    let at = |d: Duration| origin + d.as_secs_f64();
    let stats: Vec<Stats> = records.iter().map(|r| Stats::new(r, &at)).collect();
    let (ws, we) = match opts.window {
        Some((s, e)) => (at(s), at(e)),
        None => (
            stats.iter().map(|s| s.start).fold(f64::INFINITY, f64::min),
            stats
                .iter()
                .map(|s| s.end_time)
                .fold(f64::NEG_INFINITY, f64::max),
        ),
    };
    if ws.is_finite() && we.is_finite() {
        (stats, ws, we)
    } else {
        (stats, origin, origin)
    }
}

/// The requests each distribution counts, by status.
struct Groups<'a> {
    /// Overlapping the window.
    main: ByStatus<Vec<&'a Stats>>,
    /// TTFT's: the interval ending at the first token overlaps the window.
    first_token: ByStatus<Vec<&'a Stats>>,
    /// ITL's: the interval starting at the first token overlaps the window.
    after_first: ByStatus<Vec<&'a Stats>>,
}

fn groups(stats: &[Stats], ws: f64, we: f64) -> Groups<'_> {
    let group = |keep: &dyn Fn(&Stats) -> bool| -> ByStatus<Vec<&Stats>> {
        let mut g: ByStatus<Vec<&Stats>> = ByStatus::default();
        for s in stats.iter().filter(|s| keep(s)) {
            g.get_mut(s.status).push(s);
        }
        g
    };
    Groups {
        main: group(&|s| s.end_time >= ws && s.start <= we),
        first_token: group(&|s| s.first.is_some_and(|f| f >= ws) && s.start <= we),
        after_first: group(&|s| s.end_time >= ws && s.first.unwrap_or(s.end_time) <= we),
    }
}

// What each distribution is built from, per group (shared by the reference and the fast
// computation, so both summarize the same samples).

fn completions(g: &[&Stats], out: &mut Vec<(f64, f64)>) {
    out.extend(g.iter().map(|s| (s.end_time, 1.0)));
}

fn intervals(g: &[&Stats], out: &mut Vec<(f64, f64, f64)>) {
    out.extend(g.iter().map(|s| (s.start, s.end_time, 1.0)));
}

fn latencies_s(g: &[&Stats], out: &mut Vec<f64>) {
    out.extend(g.iter().map(|s| s.latency().unwrap_or(0.0)));
}

fn prompt_counts(g: &[&Stats], out: &mut Vec<f64>) {
    out.extend(g.iter().map(|s| s.prompt_tokens.unwrap_or(0) as f64));
}

fn output_counts(g: &[&Stats], out: &mut Vec<f64>) {
    out.extend(g.iter().map(|s| s.output_tokens.unwrap_or(0) as f64));
}

fn total_counts(g: &[&Stats], out: &mut Vec<f64>) {
    out.extend(g.iter().map(|s| s.total_tokens().unwrap_or(0) as f64));
}

fn ttfts_ms(g: &[&Stats], out: &mut Vec<f64>) {
    out.extend(g.iter().map(|s| s.ttft_ms().unwrap_or(0.0)));
}

fn tpots_ms(g: &[&Stats], out: &mut Vec<(f64, f64)>) {
    out.extend(g.iter().map(|s| {
        (
            s.tpot_ms().unwrap_or(0.0),
            s.output_tokens.unwrap_or(0) as f64,
        )
    }));
}

fn itls_ms(g: &[&Stats], out: &mut Vec<(f64, f64)>) {
    out.extend(g.iter().map(|s| {
        let w = match s.output_tokens {
            Some(n) if n > 0 => n as f64 - 1.0,
            _ => 0.0,
        };
        (s.itl_ms().unwrap_or(0.0), w)
    }));
}

/// guidellm's goodput over the window `[ws, we]`: the rate of the successful requests
/// meeting every SLO, when an SLO judges requests.
fn goodput(
    successful: &[&Stats],
    slo: Option<super::Slo>,
    ws: f64,
    we: f64,
) -> Option<StatusDistributions> {
    let slo = slo.filter(crate::metrics::slo::Slo::judges_requests)?;
    let rate = |xs: &[(f64, f64)]| WeightedDistribution::rate_from_timings(xs, Some(ws), Some(we));
    let conforming = conforming(successful, &slo);
    Some(StatusDistributions {
        successful: rate(&conforming),
        errored: rate(&[]),
        incomplete: rate(&[]),
        total: rate(&conforming),
    })
}

/// `(end, 1)` of each successful request meeting every SLO (guidellm's goodput).
fn conforming(successful: &[&Stats], slo: &super::Slo) -> Vec<(f64, f64)> {
    let ok = |limit: Option<f64>, v: Option<f64>| match (limit, v) {
        (None, _) => Some(true),
        (Some(_), None) => None,
        (Some(l), Some(v)) => Some(v <= l),
    };
    successful
        .iter()
        .filter(|s| {
            let verdicts = [
                ok(slo.ttft_ms, s.ttft_ms()),
                ok(slo.tpot_ms, s.itl_ms()),
                ok(slo.e2el_ms, s.latency().map(|l| l * 1000.0)),
            ];
            !verdicts.contains(&None)
                && verdicts.iter().all(|v| *v == Some(true))
                && (!slo.valid || s.checks_ok)
        })
        .map(|s| (s.end_time, 1.0))
        .collect()
}

/// guidellm's metrics over `records` (see the module docs). The window is
/// [`MetricsOptions::window`], else from the first send to the last end.
///
/// This is the straightforward computation of every distribution and status group;
/// [`compute`](super::compute) takes the successful group's figures from a faster
/// computation of the same numbers (tested equal to this one bit for bit).
pub fn guidellm_metrics(records: &[RequestRecord], opts: &MetricsOptions) -> GuidellmMetrics {
    let (stats, ws, we) = prepare(records, opts);
    let Groups {
        main,
        first_token,
        after_first,
    } = groups(&stats, ws, we);

    let values = |xs: &[f64]| WeightedDistribution::from_values(xs);
    let weighted = |xs: &[(f64, f64)]| WeightedDistribution::from_weighted(xs, None);
    let rate = |xs: &[(f64, f64)]| WeightedDistribution::rate_from_timings(xs, Some(ws), Some(we));
    // guidellm's `from_values_function`: requests whose value is None are left out.
    let scheduled = [&main.successful, &main.incomplete, &main.errored]
        .into_iter()
        .flatten()
        .any(|s| s.scheduled.is_some());
    let per_scheduled = |f: &dyn Fn(&Stats) -> Option<f64>| {
        scheduled.then(|| {
            by_status(
                &main,
                |g, out| out.extend(g.iter().filter_map(|s| f(s))),
                values,
            )
        })
    };

    let n = main.map(|g| g.len() as u64);
    let request_totals = StatusCounts {
        successful: n.successful,
        incomplete: n.incomplete,
        errored: n.errored,
        total: n.successful + n.incomplete + n.errored,
    };

    let goodput = goodput(&main.successful, opts.goodput, ws, we);

    GuidellmMetrics {
        window_start_s: ws,
        window_end_s: we,
        request_totals,
        requests_per_second: by_status(&main, completions, rate),
        request_concurrency: by_status(&main, intervals, |xs: &[(f64, f64, f64)]| {
            WeightedDistribution::concurrency_from_intervals(xs, Some(ws), Some(we))
        }),
        request_latency: by_status(&main, latencies_s, values),
        prompt_token_count: by_status(&main, prompt_counts, values),
        output_token_count: by_status(&main, output_counts, values),
        total_token_count: by_status(&main, total_counts, values),
        time_to_first_token_ms: by_status(&first_token, ttfts_ms, values),
        time_per_output_token_ms: by_status(&main, tpots_ms, weighted),
        inter_token_latency_ms: by_status(&after_first, itls_ms, weighted),
        prompt_tokens_per_second: by_status(
            &main,
            |g, out| out.extend(g.iter().map(|s| s.prompt_timing())),
            rate,
        ),
        output_tokens_per_second: by_status(
            &main,
            |g, out| {
                for s in g {
                    s.output_timings(out);
                }
            },
            rate,
        ),
        tokens_per_second: by_status(
            &main,
            |g, out| {
                for s in g {
                    out.push(s.prompt_timing());
                    s.output_timings(out);
                }
            },
            rate,
        ),
        output_tokens_per_iteration: by_status(
            &main,
            |g, out| {
                let mut timings = Vec::new();
                for s in g {
                    timings.clear();
                    s.output_timings(&mut timings);
                    out.extend(timings.iter().map(|t| t.1));
                }
            },
            values,
        ),
        request_goodput: goodput,
        request_dispatch_delay: per_scheduled(&|s| s.dispatch_delay()),
        request_scheduled_latency: per_scheduled(&|s| s.scheduled_latency()),
    }
}

/// The figures of the successful group that the GPUStack block reads.
#[derive(Debug)]
struct Successful {
    window_start_s: f64,
    window_end_s: f64,
    totals: StatusCounts,
    concurrency: WeightedDistribution,
    prompt_count: WeightedDistribution,
    output_count: WeightedDistribution,
    requests_per_second: WeightedDistribution,
    goodput: Option<WeightedDistribution>,
    output_rate: RateFigures,
    total_rate: RateFigures,
    latency_s: WeightedDistribution,
    ttft_ms: WeightedDistribution,
    tpot_ms: WeightedDistribution,
    itl_ms: WeightedDistribution,
}

impl Successful {
    fn of(m: GuidellmMetrics) -> Self {
        Successful {
            window_start_s: m.window_start_s,
            window_end_s: m.window_end_s,
            totals: m.request_totals,
            concurrency: m.request_concurrency.successful,
            prompt_count: m.prompt_token_count.successful,
            output_count: m.output_token_count.successful,
            requests_per_second: m.requests_per_second.successful,
            goodput: m.request_goodput.map(|g| g.successful),
            output_rate: RateFigures::of(&m.output_tokens_per_second.successful),
            total_rate: RateFigures::of(&m.tokens_per_second.successful),
            latency_s: m.request_latency.successful,
            ttft_ms: m.time_to_first_token_ms.successful,
            tpot_ms: m.time_per_output_token_ms.successful,
            itl_ms: m.inter_token_latency_ms.successful,
        }
    }
}

/// The two figures the block reads from a token-rate distribution.
#[derive(Debug)]
struct RateFigures {
    mean_per_s: f64,
    max_per_s: f64,
}

impl RateFigures {
    fn of(d: &WeightedDistribution) -> Self {
        RateFigures {
            mean_per_s: d.mean,
            max_per_s: d.max,
        }
    }
}

fn summary(d: &WeightedDistribution, scale: f64, percentiles: &[f64]) -> Summary {
    Summary {
        mean: Some(d.mean * scale),
        median: Some(d.median * scale),
        std: Some(d.std_dev * scale),
        min: Some(d.min * scale),
        max: Some(d.max * scale),
        percentiles: percentiles
            .iter()
            .map(|&p| Percentile {
                p,
                value: if d.count == 0 && (0.0..=100.0).contains(&p) {
                    Some(0.0)
                } else {
                    d.percentile(p).map(|v| v * scale)
                },
            })
            .collect(),
    }
}

/// The GPUStack "Serving Benchmark Result" figures from guidellm's metrics (see
/// `gpustack-report-format` in the reference notes): successful-group distributions,
/// latency converted to ms. Computed by `fast` where it applies, else by the reference.
pub(crate) fn compute_guidellm(
    records: &[RequestRecord],
    opts: &MetricsOptions,
) -> BenchmarkResult {
    match fast::successful(records, opts) {
        Some((m, exact)) => block(m, exact, opts),
        None => compute_guidellm_reference(records, opts),
    }
}

/// [`compute_guidellm`] from the straightforward [`guidellm_metrics`].
pub(crate) fn compute_guidellm_reference(
    records: &[RequestRecord],
    opts: &MetricsOptions,
) -> BenchmarkResult {
    let m = Successful::of(guidellm_metrics(records, opts));
    block(m, exact_figures(records), opts)
}

fn block(m: Successful, exact: ExactFigures, opts: &MetricsOptions) -> BenchmarkResult {
    let ok = m.totals.successful;
    let pct = &opts.percentiles;
    let mut res = BenchmarkResult {
        successful_requests: Some(ok),
        failed_requests: Some(m.totals.errored + m.totals.incomplete),
        max_concurrency: Some(m.concurrency.max.round() as u64),
        duration_ms: Some((m.window_end_s - m.window_start_s) * 1000.0),
        total_input_tokens: Some((m.prompt_count.mean * ok as f64).round_ties_even() as u64),
        total_output_tokens: Some((m.output_count.mean * ok as f64).round_ties_even() as u64),
        request_throughput_per_s: Some(m.requests_per_second.mean),
        request_goodput_per_s: m.goodput.as_ref().map(|g| g.mean),
        output_throughput_per_s: Some(m.output_rate.mean_per_s),
        peak_output_throughput_per_s: Some(m.output_rate.max_per_s),
        peak_concurrent_requests: Some(m.concurrency.max),
        total_token_throughput_per_s: Some(m.total_rate.mean_per_s),
        e2el: Some(summary(&m.latency_s, 1000.0, pct)),
        ttft: Some(summary(&m.ttft_ms, 1.0, pct)),
        tpot: Some(summary(&m.tpot_ms, 1.0, pct)),
        itl: Some(summary(&m.itl_ms, 1.0, pct)),
        exact: Some(exact),
        ..BenchmarkResult::default()
    };
    res.meta.convention = Some(Convention::Guidellm);
    res
}
