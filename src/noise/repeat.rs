//! Several runs of one configuration: per metric the mean, the spread (sample standard
//! deviation), Student's t-interval of the mean and the coefficient of variation.
//!
//! Repetitions see what one run cannot: run-to-run variation of the server (cache state,
//! clocks, neighbours, the dataset sample). The t-interval assumes the runs are independent
//! draws of one configuration; with two runs it is honest but wide (t₀.₉₇₅,₁ = 12.7).
//!
//! ```
//! use servebench::compare::OUTPUT_THROUGHPUT;
//! use servebench::noise::summarize;
//! use servebench::BenchmarkResult;
//! let runs: Vec<BenchmarkResult> = [1000.0, 1020.0, 990.0, 1010.0]
//!     .iter()
//!     .map(|&t| BenchmarkResult { output_throughput_per_s: Some(t), ..Default::default() })
//!     .collect();
//! let s = summarize(&runs, 0.95);
//! let m = s.iter().find(|m| m.metric.key == OUTPUT_THROUGHPUT.key).unwrap();
//! assert_eq!(m.runs, 4);
//! assert!((m.mean - 1005.0).abs() < 1e-9);
//! let ci = m.interval.unwrap();
//! assert!(ci.lo < 1005.0 && ci.hi > 1005.0);
//! assert!((m.cv_percent.unwrap() - 1.28).abs() < 0.01);
//! ```

use crate::compare::{Metric, METRICS};
use crate::noise::bootstrap::mean_sd;
use crate::noise::dist::t_quantile;
use crate::result::intervals::Interval;
use crate::result::BenchmarkResult;

/// One metric over repetitions.
#[derive(Debug, Clone)]
pub struct RepeatedMetric {
    /// The metric.
    pub metric: Metric,
    /// Runs that report it.
    pub runs: usize,
    /// Mean over the runs.
    pub mean: f64,
    /// Sample standard deviation over the runs (NaN for one run).
    pub sd: f64,
    /// Coefficient of variation `sd / |mean|`, in percent; `None` for one run or a zero mean.
    pub cv_percent: Option<f64>,
    /// Student's t-interval of the mean (two runs or more).
    pub interval: Option<Interval>,
    /// The values, in run order.
    pub values: Vec<f64>,
}

/// The t-interval of the mean of `xs` at `confidence`: `(mean, interval)`; `None` for fewer
/// than two finite values.
///
/// ```
/// use servebench::noise::t_interval;
/// let (m, ci) = t_interval(&[1.0, 2.0, 3.0], 0.95).unwrap();
/// assert_eq!(m, 2.0);
/// assert!((ci.hi - 4.484137711843752).abs() < 1e-9); // 2 + t(0.975, 2) · 1/√3
/// ```
pub fn t_interval(xs: &[f64], confidence: f64) -> Option<(f64, Interval)> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (mean, sd) = mean_sd(xs);
    let se = sd / (xs.len() as f64).sqrt();
    let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, (xs.len() - 1) as f64);
    Some((
        mean,
        Interval {
            lo: mean - t * se,
            hi: mean + t * se,
            se,
        },
    ))
}

/// Every metric of [`METRICS`] that all `runs` report, summarized.
pub fn summarize(runs: &[BenchmarkResult], confidence: f64) -> Vec<RepeatedMetric> {
    METRICS
        .iter()
        .filter_map(|m| {
            let values: Option<Vec<f64>> = runs.iter().map(|r| m.value(r)).collect();
            let values = values.filter(|v| !v.is_empty())?;
            let (mean, sd) = mean_sd(&values);
            let cv_percent = (values.len() > 1 && mean != 0.0 && sd.is_finite())
                .then(|| 100.0 * sd / mean.abs());
            Some(RepeatedMetric {
                metric: *m,
                runs: values.len(),
                mean,
                sd,
                cv_percent,
                interval: t_interval(&values, confidence).map(|x| x.1),
                values,
            })
        })
        .collect()
}
