//! Which stored interval belongs to which comparison [`Metric`]
//! ([`RunIntervals::for_metric`]): the result holds the intervals, the comparison names
//! the metrics.

use super::Metric;
use crate::result::intervals::{Interval, RunIntervals, SummaryIntervals};

impl RunIntervals {
    /// The interval of a comparison [`Metric`] (by its key), when this run has one.
    ///
    /// ```
    /// use servebench::compare::{OUTPUT_THROUGHPUT, MEAN_TTFT};
    /// use servebench::noise::{Interval, IntervalMethod, RunIntervals};
    /// let mut ri = RunIntervals::empty(0.95, 1000, 0);
    /// ri.output_throughput_per_s = Some(Interval { lo: 9.0, hi: 11.0, se: 0.5 });
    /// assert_eq!(ri.for_metric(&OUTPUT_THROUGHPUT).unwrap().hi, 11.0);
    /// assert!(ri.for_metric(&MEAN_TTFT).is_none());
    /// ```
    pub fn for_metric(&self, metric: &Metric) -> Option<Interval> {
        let mean = |s: &Option<SummaryIntervals>| s.as_ref().and_then(|s| s.mean);
        let median = |s: &Option<SummaryIntervals>| {
            s.as_ref()
                .and_then(|s| s.median.or_else(|| s.percentile(50.0)))
        };
        let p99 = |s: &Option<SummaryIntervals>| s.as_ref().and_then(|s| s.percentile(99.0));
        match metric.key {
            "request_throughput" => self.request_throughput_per_s,
            "request_goodput" => self.request_goodput_per_s,
            "output_throughput" => self.output_throughput_per_s,
            "total_token_throughput" => self.total_token_throughput_per_s,
            "mean_e2el_ms" => mean(&self.e2el),
            "p99_e2el_ms" => p99(&self.e2el),
            "mean_ttft_ms" => mean(&self.ttft),
            "median_ttft_ms" => median(&self.ttft),
            "p99_ttft_ms" => p99(&self.ttft),
            "mean_tpot_ms" => mean(&self.tpot),
            "median_tpot_ms" => median(&self.tpot),
            "p99_tpot_ms" => p99(&self.tpot),
            "mean_itl_ms" => mean(&self.itl),
            "p99_itl_ms" => p99(&self.itl),
            _ => None,
        }
    }
}
