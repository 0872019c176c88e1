//! Noise-aware statistics: how sure is a figure, and is B really better than A?
//!
//! | question | where |
//! |---|---|
//! | the interval types stored in a result (schema version 2) | [`RunIntervals`], [`Interval`] |
//! | 95 % intervals of one run's figures, from its records | [`run_intervals`], [`attach_intervals`] |
//! | several runs of one configuration: mean, spread, t-interval, CV | [`summarize`], [`RepeatedMetric`] |
//! | A versus B: delta with its interval, verdict, detectable effect, runs needed | [`compare_runs`], [`compare_repetitions`] |
//! | A versus B with a minimum effect, and the sequential design of `repetitions = "auto"` | [`Design`], [`classify_interval`] |
//! | the outcome of a decision with a minimum effect (better, below the minimum effect, within noise, …) | [`EffectOutcome`] |
//! | the resampling engine (Poisson-weighted block bootstrap) | `bootstrap` |
//! | normal and Student's t distributions | [`normal_quantile`], [`t_quantile`] |
//!
//! The seed study's conclusions ("+3.23 %" for FP8) are single runs compared by their point
//! values; this module says which of such deltas are real. Within one run the intervals
//! come from the records (a block bootstrap over time windows, so that throughput and
//! latency noise from bursts and queueing is counted); across repetitions from the spread
//! of the runs (which also captures run-to-run variation a single run cannot see: server
//! state, caches, neighbours).
//!
//! ```
//! use servebench::compare::OUTPUT_THROUGHPUT;
//! use servebench::noise::{compare_runs, NoiseVerdict, VerdictOptions};
//! use servebench::noise::{Interval, RunIntervals};
//! use servebench::BenchmarkResult;
//!
//! let run = |tput: f64, se: f64| {
//!     let mut ri = RunIntervals::empty(0.95, 1000, 0);
//!     ri.output_throughput_per_s = Some(Interval { lo: tput - 1.96 * se, hi: tput + 1.96 * se, se });
//!     BenchmarkResult { output_throughput_per_s: Some(tput), intervals: Some(ri), ..Default::default() }
//! };
//! let opts = VerdictOptions::default();
//! let c = compare_runs(&run(1000.0, 10.0), &run(1100.0, 10.0), &opts);
//! assert_eq!(c.metric(&OUTPUT_THROUGHPUT).unwrap().verdict, NoiseVerdict::Better);
//! let c = compare_runs(&run(1000.0, 10.0), &run(1010.0, 10.0), &opts);
//! assert_eq!(c.metric(&OUTPUT_THROUGHPUT).unwrap().verdict, NoiseVerdict::WithinNoise);
//! ```

mod bootstrap;
pub(crate) mod dist;
pub(crate) mod drift;
pub(crate) mod outcome;
pub(crate) mod repeat;
pub(crate) mod sequential;
pub(crate) mod verdict;
pub(crate) mod within;

pub use crate::result::intervals::{
    Interval, IntervalMethod, PercentileInterval, RunIntervals, SummaryIntervals,
};
pub use dist::{normal_cdf, normal_quantile, t_cdf, t_quantile};
pub use drift::{
    mann_kendall, sen_slope, ttft_drift, Drift, DRIFT_ALPHA, MIN_DRIFT_WINDOWS, MIN_WINDOW_REQUESTS,
};
pub use outcome::{EffectOutcome, Question};
pub use repeat::{summarize, t_interval, RepeatedMetric};
pub use sequential::{
    classify_exact, classify_interval, Design, DesignError, Look, OperatingCharacteristics,
    Spending, DEFAULT_MIN_EFFECT_PERCENT,
};
pub use verdict::{
    compare_repetitions, compare_runs, NoiseSource, NoiseVerdict, NoisyComparison, NoisyDelta,
    VerdictOptions,
};
pub use within::{
    attach_intervals, run_intervals, IntervalError, IntervalOptions, MIN_BLOCKS,
    MIN_EFFECTIVE_BLOCKS, MIN_REQUESTS, MIN_RESAMPLES, MIN_TAIL_INDEX, MIN_TAIL_OBSERVATIONS,
};
