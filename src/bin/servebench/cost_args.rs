//! `--gpu-price USD_PER_HOUR --gpus N`: what a run's tokens cost on the GPUs that served
//! them, for `bench` and `report` (kept in the result as `cost`).

use servebench::BenchmarkResult;

/// The price of the GPUs that served a run.
#[derive(Debug, Clone, clap::Args)]
pub struct CostArgs {
    /// Price of one GPU for an hour, USD: adds $/1M output and total tokens and tokens/s per
    /// GPU to the report (and the run file's result, as `cost`).
    #[arg(long, value_name = "USD_PER_HOUR", value_parser = crate::values::positive_f64("--gpu-price"))]
    pub gpu_price: Option<f64>,
    /// GPUs serving the run (with --gpu-price).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "gpu_price",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus: u32,
}

impl CostArgs {
    /// Adds the cost figures to `r` when a price was given.
    pub fn apply(&self, r: &mut BenchmarkResult) {
        if let Some(price) = self.gpu_price {
            r.cost = Some(servebench::metrics::cost_figures(r, self.gpus, price));
        }
    }
}
