//! The interval types stored in a result ([`RunIntervals`], schema version 2) and shared by
//! the repetition and comparison statistics ([`Interval`]).
//!
//! Every interval is in the unit of the figure it belongs to (ms for latencies, per second
//! for throughputs) and carries its standard error, so that two runs' intervals can be
//! combined into the interval of their difference without the records.

use serde::{Deserialize, Serialize};

/// A two-sided confidence interval `[lo, hi]` with the standard error of the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Standard error of the estimate (bootstrap standard deviation, or `s/√n`).
    pub se: f64,
}

impl Interval {
    /// Whether `x` lies in `[lo, hi]`.
    ///
    /// ```
    /// use servebench::noise::Interval;
    /// let i = Interval { lo: 1.0, hi: 2.0, se: 0.25 };
    /// assert!(i.contains(1.5) && !i.contains(2.5));
    /// ```
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// `hi − lo`.
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    /// The half-width relative to `point`, in percent (`±2.4 %`); `None` for a zero point.
    pub fn half_width_percent(&self, point: f64) -> Option<f64> {
        (point != 0.0 && point.is_finite()).then(|| 50.0 * self.width() / point.abs())
    }
}

/// The interval of one percentile of a latency summary.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileInterval {
    /// The percentile rank, in percent (as in [`crate::result::Percentile`]).
    pub p: f64,
    /// Its interval, ms.
    pub interval: Interval,
}

/// Intervals of one latency [`Summary`](crate::result::Summary)'s statistics. Minimum and
/// maximum get none: no resampling method gives a valid interval for an extreme.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryIntervals {
    /// Interval of the mean, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<Interval>,
    /// Interval of the median, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<Interval>,
    /// Interval of the standard deviation, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std: Option<Interval>,
    /// Intervals of the summary's percentiles, in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<PercentileInterval>,
}

impl SummaryIntervals {
    /// The interval of percentile `p`, if computed.
    pub fn percentile(&self, p: f64) -> Option<Interval> {
        self.percentiles
            .iter()
            .find(|q| q.p == p)
            .map(|q| q.interval)
    }
}

/// How a run's intervals were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMethod {
    /// Poisson-weighted block bootstrap over time windows of the run (see
    /// [`crate::noise::run_intervals`]).
    BlockBootstrap,
}

/// The confidence intervals of one run's figures, computed from its records
/// ([`crate::noise::within::run_intervals`]) and stored in
/// [`BenchmarkResult::intervals`](crate::result::BenchmarkResult::intervals).
///
/// Counts, totals, the duration and the peaks have no interval: the first three are what
/// was observed, the peaks are extremes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIntervals {
    /// Confidence level, e.g. `0.95`.
    pub confidence: f64,
    /// The method.
    pub method: IntervalMethod,
    /// Bootstrap resamples.
    pub resamples: u32,
    /// Time windows (blocks) the run was cut into.
    pub blocks: u32,
    /// The seed of the resampling (the intervals are deterministic given it).
    pub seed: u64,
    /// Request throughput, req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_throughput_per_s: Option<Interval>,
    /// Request goodput, req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_goodput_per_s: Option<Interval>,
    /// Input token throughput, tokens/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_throughput_per_s: Option<Interval>,
    /// Output token throughput, tokens/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_throughput_per_s: Option<Interval>,
    /// Total token throughput, tokens/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_token_throughput_per_s: Option<Interval>,
    /// End-to-end latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el: Option<SummaryIntervals>,
    /// Time to first token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<SummaryIntervals>,
    /// Time per output token, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot: Option<SummaryIntervals>,
    /// Inter-token latency, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl: Option<SummaryIntervals>,
}

impl RunIntervals {
    /// Intervals with nothing computed yet.
    pub fn empty(confidence: f64, resamples: u32, seed: u64) -> RunIntervals {
        RunIntervals {
            confidence,
            method: IntervalMethod::BlockBootstrap,
            resamples,
            blocks: 0,
            seed,
            request_throughput_per_s: None,
            request_goodput_per_s: None,
            input_throughput_per_s: None,
            output_throughput_per_s: None,
            total_token_throughput_per_s: None,
            e2el: None,
            ttft: None,
            tpot: None,
            itl: None,
        }
    }
}
