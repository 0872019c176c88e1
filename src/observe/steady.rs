//! A run's steady-state window by MSER-5, the marginal standard error rule (White 1997,
//! "An effective truncation heuristic for bias reduction in simulation output", Simulation
//! 69(6); the batch size of 5 is White, Cobb and Spratt's MSER-5, 2000): the series is
//! averaged in batches of 5 and cut where the standard error of the mean of what remains is
//! least. It is the truncation rule simulation studies use to drop a warm-up, it needs no
//! parameter, and it is cheap (one pass over suffix sums).
//!
//! A benchmark run has two transients: the fill (the server's batch still growing, a queue
//! forming) and, for a run of a fixed count, the drain (the last requests meet an emptying
//! server). MSER-5 is applied from each end: to the series in send order for the fill, and
//! to the reversed series for the drain. The series is each successful request's TTFT (its
//! end-to-end latency when it streamed nothing), in send order: the figure the fill and the
//! drain move first.
//!
//! ```
//! use servebench::observe::mser5;
//! // 20 slow warm-up values, then 200 steady ones.
//! let series: Vec<f64> = (0..220).map(|i| if i < 20 { 50.0 } else { 10.0 + (i % 3) as f64 }).collect();
//! assert_eq!(mser5(&series), Some(20));
//! ```

use std::time::Duration;

use crate::record::RequestRecord;

/// The MSER batch size.
pub const MSER_BATCH: usize = 5;

/// The fewest batches a series needs for a truncation point (fewer: `None`).
pub const MSER_MIN_BATCHES: usize = 4;

/// MSER-5's truncation point of `series`: how many leading observations to drop (a
/// multiple of [`MSER_BATCH`], at most half the series). `None` for a series of fewer than
/// [`MSER_MIN_BATCHES`] batches, or one with a non-finite value.
pub fn mser5(series: &[f64]) -> Option<usize> {
    if series.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let batches: Vec<f64> = series
        .chunks_exact(MSER_BATCH)
        .map(|c| c.iter().sum::<f64>() / MSER_BATCH as f64)
        .collect();
    let n = batches.len();
    if n < MSER_MIN_BATCHES {
        return None;
    }
    // Suffix sums of the batch means and their squares: MSER(d) over the batches from d.
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for i in (0..n).rev() {
        sum[i] = sum[i + 1] + batches[i];
        sq[i] = sq[i + 1] + batches[i] * batches[i];
    }
    let mser: Vec<f64> = (0..=n / 2)
        .map(|d| {
            let k = (n - d) as f64;
            let mean = sum[d] / k;
            (sq[d] - k * mean * mean).max(0.0) / (k * k)
        })
        .collect();
    // The least truncation whose statistic is the minimum up to rounding (the suffix sums'
    // cancellation leaves ~1e-16 of the squares' scale): a flat series is not cut.
    let min = mser.iter().copied().fold(f64::INFINITY, f64::min);
    let tolerance = 1e-9 * sq[0] / (n as f64 * n as f64);
    let d = mser.iter().position(|&m| m <= min + tolerance).unwrap_or(0);
    Some(d * MSER_BATCH)
}

/// A run's steady state (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyWindow {
    /// The first steady request's send time (the records' clock).
    pub start: Duration,
    /// The last steady request's send time.
    pub end: Duration,
    /// Successful requests sent inside the window.
    pub requests: usize,
    /// Successful requests cut as the fill.
    pub fill: usize,
    /// Successful requests cut as the drain.
    pub drain: usize,
}

impl SteadyWindow {
    /// The records sent inside the window (every outcome: a failure there counts too).
    pub fn records<'a>(&self, records: &'a [RequestRecord]) -> Vec<&'a RequestRecord> {
        records
            .iter()
            .filter(|r| r.sent_at >= self.start && r.sent_at <= self.end)
            .collect()
    }
}

/// The steady state of `records` by MSER-5 from each end; `None` with fewer than
/// [`MSER_MIN_BATCHES`] × [`MSER_BATCH`] successful requests.
pub fn steady_window(records: &[RequestRecord]) -> Option<SteadyWindow> {
    let mut ok: Vec<&RequestRecord> = records.iter().filter(|r| r.outcome.is_success()).collect();
    ok.sort_by_key(|r| r.sent_at);
    let series: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.ttft().or_else(|| r.latency()))
        .map(|d| d.as_secs_f64())
        .collect();
    if series.len() != ok.len() {
        return None;
    }
    let fill = mser5(&series)?;
    let rest: Vec<f64> = series[fill..].iter().rev().copied().collect();
    let drain = mser5(&rest).unwrap_or(0);
    let kept = &ok[fill..ok.len() - drain];
    Some(SteadyWindow {
        start: kept.first()?.sent_at,
        end: kept.last()?.sent_at,
        requests: kept.len(),
        fill,
        drain,
    })
}

/// The steady window of `records` ([`steady_window`]) with vLLM's figures over its records
/// and over every record, for a report to set side by side.
pub fn steady_figures(
    records: &[RequestRecord],
) -> Option<(
    SteadyWindow,
    crate::result::BenchmarkResult,
    crate::result::BenchmarkResult,
)> {
    let w = steady_window(records)?;
    let inside: Vec<RequestRecord> = w.records(records).into_iter().cloned().collect();
    let opts = crate::metrics::MetricsOptions::new(crate::result::Convention::Vllm);
    Some((
        w,
        crate::metrics::compute(&inside, &opts),
        crate::metrics::compute(records, &opts),
    ))
}

/// A run's first requests apart from its steady state (`bench --cold`): the first request
/// sent, the requests sent before the steady window (MSER-5's warm-up) with vLLM's figures
/// over them, and the figures over the window.
#[derive(Debug, Clone, PartialEq)]
pub struct ColdFigures {
    /// The first request's time to first token (its latency where nothing streamed).
    pub first_ttft: Option<Duration>,
    /// The steady window.
    pub window: SteadyWindow,
    /// Seconds from the first send to the window's first send.
    pub warmup_s: f64,
    /// The requests sent before the window.
    pub warmup_requests: usize,
    /// vLLM's figures over the requests sent before the window (`None`: none were).
    pub warmup: Option<crate::result::BenchmarkResult>,
    /// vLLM's figures over the window.
    pub steady: crate::result::BenchmarkResult,
}

/// The first requests of `records` apart from their steady state ([`ColdFigures`]); `None`
/// where no steady window is found ([`steady_window`]).
pub fn cold_figures(records: &[RequestRecord]) -> Option<ColdFigures> {
    let window = steady_window(records)?;
    let first = records.iter().min_by_key(|r| (r.sent_at, r.id))?;
    let before: Vec<RequestRecord> = records
        .iter()
        .filter(|r| r.sent_at < window.start)
        .cloned()
        .collect();
    let inside: Vec<RequestRecord> = window.records(records).into_iter().cloned().collect();
    let opts = crate::metrics::MetricsOptions::new(crate::result::Convention::Vllm);
    Some(ColdFigures {
        first_ttft: first.ttft().or_else(|| first.latency()),
        warmup_s: window.start.saturating_sub(first.sent_at).as_secs_f64(),
        warmup_requests: before.len(),
        warmup: (!before.is_empty()).then(|| crate::metrics::compute(&before, &opts)),
        steady: crate::metrics::compute(&inside, &opts),
        window,
    })
}

/// vLLM's figures over the records sent in each stage ([`super::stage_members`]), with how many were
/// sent: what `report`'s stage lines and the HTML report's stage table show.
pub fn stage_figures(
    stages: &[super::Stage],
    records: &[RequestRecord],
) -> Vec<(usize, crate::result::BenchmarkResult)> {
    let opts = crate::metrics::MetricsOptions::new(crate::result::Convention::Vllm);
    super::stages::members(stages, records)
        .into_iter()
        .map(|inside| {
            let inside: Vec<RequestRecord> = inside.into_iter().cloned().collect();
            (inside.len(), crate::metrics::compute(&inside, &opts))
        })
        .collect()
}

/// `records` split by send time, from the first send: those within `warmup` of it, the
/// rest, and those within `cooldown` of the last send (each `None`: nothing cut). Returns
/// (kept, warm-up, cool-down).
///
/// ```
/// use std::time::Duration;
/// use servebench::observe::cut_by_time;
/// use servebench::record::RequestRecord;
/// let rs: Vec<RequestRecord> = (0..10).map(|i| RequestRecord::new(i, Duration::from_secs(i))).collect();
/// let (kept, warm, cool) = cut_by_time(rs, Some(Duration::from_secs(2)), Some(Duration::from_secs(3)));
/// assert_eq!((kept.len(), warm.len(), cool.len()), (5, 2, 3)); // sent at 2–6 s kept
/// ```
pub fn cut_by_time(
    records: Vec<RequestRecord>,
    warmup: Option<Duration>,
    cooldown: Option<Duration>,
) -> (Vec<RequestRecord>, Vec<RequestRecord>, Vec<RequestRecord>) {
    let first = records.iter().map(|r| r.sent_at).min().unwrap_or_default();
    let last = records.iter().map(|r| r.sent_at).max().unwrap_or_default();
    let warm_end = warmup.map(|w| first.saturating_add(w));
    let cool_start = cooldown.map(|c| last.saturating_sub(c));
    let (mut kept, mut warm, mut cool) = (Vec::new(), Vec::new(), Vec::new());
    for r in records {
        if warm_end.is_some_and(|w| r.sent_at < w) {
            warm.push(r);
        } else if cool_start.is_some_and(|c| r.sent_at > c) {
            cool.push(r);
        } else {
            kept.push(r);
        }
    }
    (kept, warm, cool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_series_is_not_cut_and_short_ones_have_no_window() {
        let flat: Vec<f64> = (0..100).map(|i| 10.0 + (i % 5) as f64 * 0.1).collect();
        assert_eq!(mser5(&flat), Some(0));
        assert_eq!(mser5(&flat[..19]), None);
        assert_eq!(mser5(&[1.0, f64::NAN, 2.0, 3.0, 4.0]), None);
    }

    /// A fill whose TTFT falls from 2 s to 0.1 s over the first 30 requests, a steady 200,
    /// and a drain of 20 fast ones: the window holds the steady requests.
    #[test]
    fn the_fill_and_the_drain_are_cut() {
        let ms = Duration::from_millis;
        let records: Vec<RequestRecord> = (0..250u64)
            .map(|i| {
                let ttft = match i {
                    0..30 => 2000 - i * 60,
                    230.. => 10,
                    _ => 100 + i % 7,
                };
                let mut r = RequestRecord::new(i, ms(100 * i));
                r.chunks.push(crate::record::Chunk {
                    at: ms(100 * i + ttft),
                    tokens: 1,
                });
                r.ended_at = Some(ms(100 * i + ttft + 50));
                r
            })
            .collect();
        let w = steady_window(&records).unwrap();
        assert!((25..=35).contains(&w.fill), "{w:?}");
        assert!((15..=25).contains(&w.drain), "{w:?}");
        assert_eq!(w.requests, 250 - w.fill - w.drain);
        assert_eq!(w.records(&records).len(), w.requests);
        let cold = cold_figures(&records).unwrap();
        assert_eq!(cold.first_ttft, Some(ms(2000)));
        assert_eq!(cold.warmup_s, w.start.as_secs_f64());
        let warm = cold.warmup.unwrap();
        assert_eq!(warm.successful_requests, Some(w.fill as u64));
        assert_eq!(cold.warmup_requests, w.fill);
        let mean = |r: &crate::result::BenchmarkResult| r.ttft.as_ref().unwrap().mean.unwrap();
        assert!(mean(&warm) > 5.0 * mean(&cold.steady));
    }
}
