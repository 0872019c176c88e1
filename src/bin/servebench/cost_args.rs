//! `--gpu-price USD_PER_HOUR --gpus N`: what a run's tokens cost on the GPUs that served
//! them, for `bench` and `report` (kept in the result as `cost`); and `bench`'s other
//! companions of a run: `--metrics-listen ADDR`, the live metrics served while it runs.

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

/// `bench`'s companions of a run: its price and its live metrics.
#[derive(Debug, Clone, clap::Args)]
pub struct RunExtras {
    #[command(flatten)]
    pub cost: CostArgs,
    /// Serve the run's live metrics in Prometheus' text format at http://ADDR/metrics
    /// while it runs (requests sent/completed/failed, in flight, output tokens and tok/s,
    /// TTFT and inter-token latency quantiles over the last 60 s); port 0 picks a free
    /// port, printed on stderr.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// The server's prefix-cache block size, tokens, for the prefix-cache hit rate the
    /// workload implies (shown beside the server's measured rate): vLLM's default 16; a
    /// hybrid model's cache uses its unified page (Qwen3.5-35B-A3B on one GPU: 544).
    #[arg(long, value_name = "TOKENS", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub prefix_block_tokens: u64,
    /// Send no W3C `traceparent` header (by default every request carries one: one trace
    /// per run, kept in the run file's `trace_id` label, a span per request).
    #[cfg(feature = "http")]
    #[arg(long)]
    pub no_trace_context: bool,
}

impl RunExtras {
    /// A new trace for the run's requests, unless `--no-trace-context`.
    #[cfg(feature = "http")]
    pub fn trace(&self) -> Option<servebench::http::trace::TraceId> {
        (!self.no_trace_context).then(servebench::http::trace::TraceId::random)
    }

    /// Starts the live-metrics listener when asked, and has the run feed it.
    #[cfg(feature = "http")]
    pub fn listen(
        &self,
        args: &mut servebench::app::bench::BenchArgs,
    ) -> Result<Option<servebench::http::listen::TextListener>, crate::input::InputError> {
        args.prefix_block_tokens = self.prefix_block_tokens;
        let Some(addr) = self.metrics_listen else {
            return Ok(None);
        };
        let live = std::sync::Arc::new(servebench::observe::live::LiveMetrics::default());
        let render = std::sync::Arc::clone(&live);
        let listener = servebench::http::listen::TextListener::start(
            addr,
            std::sync::Arc::new(move || render.render()),
        )
        .map_err(|e| crate::input::InputError(format!("bench: --metrics-listen: {e}")))?;
        eprintln!(
            "servebench: live metrics at http://{}/metrics",
            listener.local_addr()
        );
        args.live = Some(live);
        Ok(Some(listener))
    }
}
