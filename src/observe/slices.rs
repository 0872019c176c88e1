//! A run cut into time windows ([`slices`]: requests completed, output tokens per second,
//! mean TTFT and TPOT of the requests completed, mean requests in flight, per window) and
//! where its steady state lies ([`steady_state`]: the ramp-up while the server fills, the
//! plateau, and the drain after the last arrivals).
//!
//! Times are the records' (seconds from the run's start). TPOT is vLLM's
//! ([`crate::metrics::vllm_tpot`]: (E2EL − TTFT) ÷ (output tokens − 1)), for
//! requests with more than one token.
//!
//! ```
//! use std::time::Duration;
//! use servebench::observe::{slices, steady_state};
//! use servebench::record::{Chunk, RequestRecord};
//!
//! // One request per second for 20 s, each streaming 10 tokens over 2 s.
//! let records: Vec<RequestRecord> = (0..20)
//!     .map(|i| {
//!         let sent = Duration::from_secs(i);
//!         let mut r = RequestRecord::new(i, sent);
//!         for k in 1..=10 {
//!             r.chunks.push(Chunk { at: sent + Duration::from_millis(200 * k), tokens: 1 });
//!         }
//!         r.ended_at = r.chunks.last().map(|c| c.at);
//!         r
//!     })
//!     .collect();
//! let s = slices(&records, Duration::from_secs(5)).unwrap();
//! assert_eq!(s.len(), 5); // 0–5, 5–10, 10–15, 15–20, 20–21 s
//! assert_eq!(s[1].requests_completed, 5);
//! assert_eq!(s[1].output_tokens_per_s, 10.0);
//! // The first window fills (8.6 tok/s), the last drains (7 tok/s).
//! assert_eq!(s[0].output_tokens_per_s, 8.6);
//! let st = steady_state(&s).unwrap();
//! assert_eq!((st.ramp_up_end_s, st.drain_start_s, st.end_s), (5.0, 20.0, 21.0));
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metrics::request::vllm_tpot;
use crate::record::RequestRecord;

/// One time window of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    /// Window start, seconds from the run's start.
    pub start_s: f64,
    /// Window end (the last window ends at the last event).
    pub end_s: f64,
    /// Requests that ended successfully in the window.
    pub requests_completed: u64,
    /// Output tokens received in the window.
    pub output_tokens: u64,
    /// Those per second of the window.
    pub output_tokens_per_s: f64,
    /// Mean TTFT of the requests completed in the window, ms.
    pub ttft_mean_ms: Option<f64>,
    /// Mean TPOT (vLLM's) of the requests completed in the window, ms.
    pub tpot_mean_ms: Option<f64>,
    /// Time-weighted mean of requests in flight (sent, not yet ended).
    pub in_flight_mean: f64,
}

/// Bad slicing parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SliceError {
    /// The window width is zero.
    #[error("a slice width of zero: the window must be longer than zero")]
    ZeroWidth,
    /// The run would be cut into more than [`MAX_SLICES`] windows.
    #[error("{width_s} s windows cut this {span_s:.1} s run into more than {MAX_SLICES} slices")]
    TooMany {
        /// The window asked for, seconds.
        width_s: f64,
        /// The run's length, seconds.
        span_s: f64,
    },
}

/// The most windows [`slices`] makes.
pub const MAX_SLICES: usize = 100_000;

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The run's end: its last chunk or end time.
fn run_end(records: &[RequestRecord]) -> f64 {
    records
        .iter()
        .flat_map(|r| r.ended_at.into_iter().chain(r.chunks.last().map(|c| c.at)))
        .map(secs)
        .fold(0.0, f64::max)
}

/// Cuts the run into windows of `width` from time 0 to its last event.
pub fn slices(records: &[RequestRecord], width: Duration) -> Result<Vec<Slice>, SliceError> {
    let w = secs(width);
    if w <= 0.0 {
        return Err(SliceError::ZeroWidth);
    }
    let end = run_end(records);
    let n = ((end / w).ceil() as usize).max(1);
    if n > MAX_SLICES {
        return Err(SliceError::TooMany {
            width_s: w,
            span_s: end,
        });
    }
    let mut out: Vec<Slice> = (0..n)
        .map(|i| {
            let start_s = i as f64 * w;
            Slice {
                start_s,
                end_s: ((i + 1) as f64 * w).min(end.max(start_s)),
                requests_completed: 0,
                output_tokens: 0,
                output_tokens_per_s: 0.0,
                ttft_mean_ms: None,
                tpot_mean_ms: None,
                in_flight_mean: 0.0,
            }
        })
        .collect();
    let index = |t: f64| ((t / w) as usize).min(n - 1);
    let mut ttft = vec![(0.0, 0u64); n];
    let mut tpot = vec![(0.0, 0u64); n];
    let mut busy = vec![0.0; n];
    for r in records {
        for c in &r.chunks {
            out[index(secs(c.at))].output_tokens += u64::from(c.tokens);
        }
        let sent = secs(r.sent_at);
        let ended = r
            .ended_at
            .or(r.chunks.last().map(|c| c.at))
            .map_or(end, secs);
        // In flight from sent to ended: spread over the windows it overlaps.
        let (a, b) = (index(sent), index(ended));
        for (i, slot) in busy.iter_mut().enumerate().take(b + 1).skip(a) {
            let lo = sent.max(i as f64 * w);
            let hi = ended.min((i + 1) as f64 * w);
            *slot += (hi - lo).max(0.0);
        }
        if !r.outcome.is_success() {
            continue;
        }
        let Some(last) = r.chunks.last() else {
            continue;
        };
        let i = index(secs(r.ended_at.unwrap_or(last.at)));
        out[i].requests_completed += 1;
        if let Some(t) = r.ttft() {
            ttft[i].0 += secs(t) * 1e3;
            ttft[i].1 += 1;
        }
        if let Some(t) = vllm_tpot(r) {
            tpot[i].0 += secs(t) * 1e3;
            tpot[i].1 += 1;
        }
    }
    for (i, s) in out.iter_mut().enumerate() {
        let len = s.end_s - s.start_s;
        if len > 0.0 {
            s.output_tokens_per_s = s.output_tokens as f64 / len;
            s.in_flight_mean = busy[i] / len;
        }
        s.ttft_mean_ms = (ttft[i].1 > 0).then(|| ttft[i].0 / ttft[i].1 as f64);
        s.tpot_mean_ms = (tpot[i].1 > 0).then(|| tpot[i].0 / tpot[i].1 as f64);
    }
    Ok(out)
}

/// Where a run's steady state lies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The plateau's output rate, tokens/s: the median of the windows running at least half
    /// the peak rate.
    pub level_tokens_per_s: f64,
    /// Ramp-up: from 0 to here, windows ran below 90 % of the level.
    pub ramp_up_end_s: f64,
    /// Drain: from here to the end, windows run below 90 % of the level.
    pub drain_start_s: f64,
    /// The run's end.
    pub end_s: f64,
}

impl SteadyState {
    /// Seconds of steady state.
    pub fn steady_s(&self) -> f64 {
        (self.drain_start_s - self.ramp_up_end_s).max(0.0)
    }
}

/// The fraction of the level a window must reach to count as steady.
pub const STEADY_FRACTION: f64 = 0.9;

/// Finds the plateau of output throughput in `slices`; `None` when nothing was generated.
/// The level is the median rate of the windows at or above half the peak; the steady state
/// runs from the first to the end of the last window reaching [`STEADY_FRACTION`] of it.
pub fn steady_state(slices: &[Slice]) -> Option<SteadyState> {
    let peak = slices
        .iter()
        .map(|s| s.output_tokens_per_s)
        .fold(0.0, f64::max);
    if peak <= 0.0 {
        return None;
    }
    let mut high: Vec<f64> = slices
        .iter()
        .map(|s| s.output_tokens_per_s)
        .filter(|&r| r >= peak / 2.0)
        .collect();
    high.sort_by(f64::total_cmp);
    let level = high[high.len() / 2];
    let steady = |s: &&Slice| s.output_tokens_per_s >= STEADY_FRACTION * level;
    let first = slices.iter().find(steady)?;
    let last = slices.iter().rev().find(steady)?;
    Some(SteadyState {
        level_tokens_per_s: level,
        ramp_up_end_s: first.start_s,
        drain_start_s: last.end_s,
        end_s: slices.last().map_or(0.0, |s| s.end_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Chunk, ErrorKind, Outcome};

    fn req(id: u64, sent_s: f64, first_s: f64, every_s: f64, n: u32) -> RequestRecord {
        let sent = Duration::from_secs_f64(sent_s);
        let mut r = RequestRecord::new(id, sent);
        for k in 0..n {
            r.chunks.push(Chunk {
                at: Duration::from_secs_f64(first_s + every_s * f64::from(k)),
                tokens: 1,
            });
        }
        r.ended_at = r.chunks.last().map(|c| c.at);
        r
    }

    #[test]
    fn windows_count_tokens_latencies_and_concurrency() {
        let mut failed = req(2, 0.0, 1.0, 1.0, 1);
        failed.outcome = Outcome::Error {
            kind: ErrorKind::Other,
            message: "x".into(),
        };
        let records = vec![req(0, 0.0, 1.0, 0.5, 5), req(1, 2.0, 2.5, 0.25, 9), failed];
        let s = slices(&records, Duration::from_secs(2)).unwrap();
        // Ends at 4.5 s: windows 0–2, 2–4, 4–4.5.
        assert_eq!(s.len(), 3);
        assert_eq!(s[2].end_s, 4.5);
        // Tokens: r0 at 1, 1.5 | 2, 2.5, 3; r1 at 2.5..4.5 by 0.25 (9); failed at 1.
        assert_eq!(
            s.iter().map(|x| x.output_tokens).collect::<Vec<_>>(),
            vec![3, 3 + 6, 3]
        );
        assert_eq!(s[2].output_tokens_per_s, 6.0);
        // r0 completes at 3 s (TTFT 1000 ms, TPOT 500 ms); r1 at 4.5 s (500 ms, 250 ms).
        assert_eq!(s[1].requests_completed, 1);
        assert_eq!(
            (s[1].ttft_mean_ms, s[1].tpot_mean_ms),
            (Some(1000.0), Some(500.0))
        );
        assert_eq!(
            (s[2].ttft_mean_ms, s[2].tpot_mean_ms),
            (Some(500.0), Some(250.0))
        );
        assert_eq!(s[0].requests_completed, 0);
        // In flight in 0–2: r0 (2 s) + failed (1 s) over 2 s.
        assert_eq!(s[0].in_flight_mean, 1.5);
        assert_eq!(slices(&records, Duration::ZERO), Err(SliceError::ZeroWidth));
    }

    #[test]
    fn a_burst_ramps_up_then_drains() {
        // 100 requests sent at once; the server starts 5 per second, each streams 10
        // tok/s for 10 s: throughput climbs 50 tok/s per second to 500 (window 9), holds
        // to window 19, then falls as the last ones finish (window 28 is the last).
        let records: Vec<_> = (0..100)
            .map(|i| req(i, 0.0, (i / 5) as f64 + 0.05, 0.1, 100))
            .collect();
        let s = slices(&records, Duration::from_secs(1)).unwrap();
        assert_eq!(s.len(), 29);
        assert_eq!(s[3].output_tokens_per_s, 200.0);
        assert_eq!(s[15].output_tokens_per_s, 500.0);
        let st = steady_state(&s).unwrap();
        assert_eq!(st.level_tokens_per_s, 500.0);
        // 90 % of 500: windows 8 (450) to 20 (450).
        assert_eq!(st.ramp_up_end_s, 8.0);
        assert_eq!(st.drain_start_s, 21.0);
        assert!(
            crate::format::observe::render_slices(&s).contains("steady state: 8.0–21.0 s"),
            "{}",
            crate::format::observe::render_slices(&s)
        );
    }
}
