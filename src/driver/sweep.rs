//! guidellm's rate sweep: a synchronous run (one request at a time), a throughput run (every
//! request at once; its rate is the steady one, between the 25th and 75th percentile of the
//! end times), then `N` constant rates spaced evenly strictly between the two measured
//! rates; each constant run may stop early when over-saturated ([`super::saturation`]).
//! The saturation point is the highest constant rate the server kept up with: its steady
//! completion rate (requests that ended between 25 % and 100 % of the send window, per
//! second) reached [`SweepOptions::keep_up_ratio`] of the offered rate and the detector did
//! not fire.
//!
//! The sweep only decides what to run; `runner` runs it (in-process on a simulator, over
//! HTTP, …) and computes its figures, so the same code sweeps every engine. It returns a
//! [`Sweep`] (data only, defined with the result schema); [`crate::format::sweep`] writes its
//! rate table.
//!
//! ```
//! use servebench::driver::{sweep, SweepOptions};
//! use servebench::driver::{run, workload, RunOptions};
//! use servebench::metrics::{summarize, MetricsOptions};
//! use servebench::sim::{Config, H200Sim};
//! let work = workload::random(200, 256, 32, 0.0, 1, false).unwrap();
//! let s = sweep(
//!     &mut |o: &RunOptions| -> Result<_, servebench::driver::DriverError> {
//!         let out = run(&mut H200Sim::new(Config::named("baseline").unwrap()).warmed_up(), &work, o)?;
//!         let result = summarize(&out.records, None, &MetricsOptions::load_run(), o.max_concurrency);
//!         Ok((out, result))
//!     },
//!     &RunOptions::default(),
//!     &SweepOptions { rates: 3, ..SweepOptions::default() },
//! ).unwrap();
//! assert_eq!(s.runs.len(), 5);
//! let mut out = Vec::new();
//! servebench::format::sweep::write_table(&s, &mut out).unwrap();
//! assert!(String::from_utf8(out).unwrap().contains("saturation"));
//! ```

use super::arrivals::Arrivals;
use super::saturation::OverSaturation;
use super::{DriverError, RunOptions, RunOutput};
use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Strategy, Sweep, SweepRun};

/// Settings of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// Constant rates between the synchronous and the throughput rate (`--sweep N`).
    pub rates: usize,
    /// Over-saturation detector of the constant runs (`None`: run them to the end).
    pub over_saturation: Option<OverSaturation>,
    /// A rate is kept up with when the steady completion rate reaches this share of it.
    pub keep_up_ratio: f64,
}

impl Default for SweepOptions {
    /// 8 rates (guidellm's default sweep of 10 runs), the default detector, 0.9.
    fn default() -> Self {
        SweepOptions {
            rates: 8,
            over_saturation: Some(OverSaturation::default()),
            keep_up_ratio: 0.9,
        }
    }
}

fn span_rate(records: &[RequestRecord]) -> f64 {
    let ok: Vec<&RequestRecord> = records.iter().filter(|r| r.outcome.is_success()).collect();
    let first = ok.iter().map(|r| r.sent_at).min();
    let last = ok.iter().filter_map(|r| r.ended_at).max();
    match (first, last) {
        (Some(a), Some(b)) if b > a => ok.len() as f64 / (b - a).as_secs_f64(),
        _ => 0.0,
    }
}

/// The server's steady throughput with every request sent at once: successes per second
/// between the 25th and the 75th percentile of their end times (the ramp-up of the first
/// batch and the tail of the last are left out, as they would understate it).
fn middle_rate(records: &[RequestRecord]) -> f64 {
    let mut ends: Vec<_> = records
        .iter()
        .filter(|r| r.outcome.is_success())
        .filter_map(|r| r.ended_at)
        .collect();
    ends.sort_unstable();
    let (a, b) = (ends.len() / 4, 3 * ends.len() / 4);
    match (ends.get(a), ends.get(b)) {
        (Some(&ta), Some(&tb)) if tb > ta => (b - a) as f64 / (tb - ta).as_secs_f64(),
        _ => span_rate(records),
    }
}

/// Requests per second that ended successfully between 25 % and 100 % of the send window.
fn steady_rate(records: &[RequestRecord]) -> f64 {
    let sched = |r: &RequestRecord| r.scheduled_at.unwrap_or(r.sent_at);
    let (Some(first), Some(last)) = (
        records.iter().map(sched).min(),
        records.iter().map(sched).max(),
    ) else {
        return 0.0;
    };
    let lo = first + (last - first) / 4;
    let span = (last - lo).as_secs_f64();
    if span <= 0.0 {
        return span_rate(records);
    }
    let n = records
        .iter()
        .filter(|r| r.outcome.is_success())
        .filter_map(|r| r.ended_at)
        .filter(|&e| e >= lo && e <= last)
        .count();
    n as f64 / span
}

/// What a sweep's runner returns for one run: the driver's records and the figures the
/// runner computed from them.
pub type SweepStep = (RunOutput, BenchmarkResult);

/// Runs a sweep: `runner` runs one set of options (built from `base`: arrivals, client cap
/// and the detector are set per run). See the module docs.
pub fn sweep<Err: From<DriverError>>(
    runner: &mut dyn FnMut(&RunOptions) -> Result<SweepStep, Err>,
    base: &RunOptions,
    opts: &SweepOptions,
) -> Result<Sweep, Err> {
    let mut runs = Vec::new();
    let record = |strategy: Strategy,
                  (out, result): (RunOutput, BenchmarkResult),
                  runs: &mut Vec<SweepRun>|
     -> f64 {
        let achieved = match strategy {
            Strategy::Constant { .. } => steady_rate(&out.records),
            Strategy::Throughput => middle_rate(&out.records),
            Strategy::Synchronous => span_rate(&out.records),
        };
        let kept_up = match strategy {
            Strategy::Constant { rate } => Some(
                out.stopped.is_none()
                    && out.aborted.is_none()
                    && achieved >= opts.keep_up_ratio * rate,
            ),
            _ => None,
        };
        runs.push(SweepRun {
            strategy,
            achieved_rate_per_s: achieved,
            kept_up,
            stopped_early: out.stopped,
            result,
            records: out.records,
        });
        achieved
    };
    let sync_opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        max_concurrency: Some(1),
        over_saturation: None,
        ..base.clone()
    };
    let sync = record(Strategy::Synchronous, runner(&sync_opts)?, &mut runs);
    let thr_opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        over_saturation: None,
        ..base.clone()
    };
    let thr = record(Strategy::Throughput, runner(&thr_opts)?, &mut runs);
    let mut saturation = None;
    if thr > 0.0 && sync > 0.0 {
        let (lo, hi) = (sync.min(thr), sync.max(thr));
        for k in 1..=opts.rates {
            let rate = lo + (hi - lo) * k as f64 / (opts.rates + 1) as f64;
            let o = RunOptions {
                arrivals: Arrivals::Constant { rate },
                over_saturation: opts.over_saturation,
                ..base.clone()
            };
            let out = runner(&o)?;
            record(Strategy::Constant { rate }, out, &mut runs);
            if runs.last().and_then(|r| r.kept_up) == Some(true) {
                saturation = Some(rate);
            }
        }
    }
    Ok(Sweep {
        runs,
        saturation_rate_per_s: saturation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{run, workload};
    use crate::sim::{Config, H200Sim};

    fn at_rate(rate: f64) -> RunOutput {
        let work = workload::random(400, 4000, 20, 0.0, 2, false).unwrap();
        let opts = RunOptions {
            arrivals: Arrivals::Constant { rate },
            ..RunOptions::default()
        };
        let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
        run(&mut sim, &work, &opts).unwrap()
    }

    #[test]
    fn the_steady_rate_tells_a_rate_kept_up_with_from_one_that_is_not() {
        // The simulator serves about 13 of these requests a second.
        let under = at_rate(8.0);
        let over = at_rate(26.0);
        let (u, o) = (steady_rate(&under.records), steady_rate(&over.records));
        assert!((u - 8.0).abs() < 0.5, "{u}");
        assert!(o < 0.9 * 26.0 && o > 8.0, "{o}");
    }
}
