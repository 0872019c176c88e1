//! What a run's tokens cost: a price per GPU-hour over the run's throughput. The one
//! place these formulas live; `result::CostFigures` holds their values.

use crate::result::{BenchmarkResult, CostFigures};

/// The cost figures of `r` served by `gpus` GPUs at `usd_per_gpu_hour` each:
/// `usd_per_gpu_hour × gpus / 3600 / throughput × 10⁶` dollars per million tokens, and the
/// throughput over `gpus`. A figure whose throughput the result lacks (or is zero) is
/// `None`.
///
/// ```
/// use servebench::metrics::cost_figures;
/// use servebench::BenchmarkResult;
/// let r = BenchmarkResult {
///     output_throughput_per_s: Some(1000.0),
///     total_token_throughput_per_s: Some(4000.0),
///     ..Default::default()
/// };
/// let c = cost_figures(&r, 2, 3.6);
/// // Two GPUs at $3.60/h cost $0.002 a second; 1000 output tokens a second: $2 per million.
/// assert!((c.usd_per_million_output_tokens.unwrap() - 2.0).abs() < 1e-12);
/// assert!((c.usd_per_million_total_tokens.unwrap() - 0.5).abs() < 1e-12);
/// assert_eq!(c.output_tokens_per_s_per_gpu, Some(500.0));
/// ```
pub fn cost_figures(r: &BenchmarkResult, gpus: u32, usd_per_gpu_hour: f64) -> CostFigures {
    let usd_per_s = usd_per_gpu_hour * f64::from(gpus) / 3600.0;
    let per_million = |tps: Option<f64>| {
        tps.filter(|t| *t > 0.0 && t.is_finite())
            .map(|t| usd_per_s / t * 1e6)
    };
    let per_gpu = |tps: Option<f64>| tps.filter(|_| gpus > 0).map(|t| t / f64::from(gpus));
    CostFigures {
        gpus,
        usd_per_gpu_hour,
        usd_per_million_output_tokens: per_million(r.output_throughput_per_s),
        usd_per_million_total_tokens: per_million(r.total_token_throughput_per_s),
        output_tokens_per_s_per_gpu: per_gpu(r.output_throughput_per_s),
        total_tokens_per_s_per_gpu: per_gpu(r.total_token_throughput_per_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result without throughput costs nothing it can state; a zero throughput is no
    /// price per token (not infinity).
    #[test]
    fn missing_or_zero_throughput_states_no_price() {
        let none = cost_figures(&BenchmarkResult::default(), 1, 2.0);
        assert_eq!(none.usd_per_million_output_tokens, None);
        assert_eq!(none.output_tokens_per_s_per_gpu, None);
        let zero = BenchmarkResult {
            output_throughput_per_s: Some(0.0),
            ..Default::default()
        };
        assert_eq!(
            cost_figures(&zero, 1, 2.0).usd_per_million_output_tokens,
            None
        );
    }
}
