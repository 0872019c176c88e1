//! Comparisons of benchmark runs: [`Delta`] (absolute and percent change, always from the
//! unrounded values), the [`Direction`] in which each [`Metric`] improves, a metric-by-metric
//! [`Comparison`], and in [`gpustack`] the figures of GPUStack's performance documents
//! (conclusion rows and tables, the "Summary:" figures, the "Summary of Optimization Options"
//! ladder with its skip rules and the recommended configuration). Numbers and decisions
//! only: [`crate::format::comparison`] and [`crate::format::gpustack`] write them as text.
//!
//! ```
//! use servebench::compare::{Delta, Direction};
//! let d = Delta::new(9632.01, 10570.88);
//! assert_eq!(format!("{:.2}", d.percent().unwrap()), "9.75");
//! assert!(d.is_better(Direction::HigherIsBetter));
//! assert!(!d.is_better(Direction::LowerIsBetter));
//! ```

pub mod gpustack;
mod intervals;
pub mod pareto;
pub(crate) mod workload;

pub use workload::{workload_differences, WorkloadDifference};

use serde::Serialize;

use crate::result::{BenchmarkResult, Convention, Summary};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Throughputs and success counts: more is better.
    HigherIsBetter,
    /// Latencies, durations and failure counts: less is better.
    LowerIsBetter,
}

/// The change from a baseline value to a candidate value, kept unrounded: round only when
/// printing, never before computing (GPUStack's generator does the same, so its
/// `(+9.75%)` is computed from the full-precision throughputs).
///
/// ```
/// use servebench::compare::Delta;
/// let d = Delta::new(25.89, 24.71);
/// assert!((d.absolute() + 1.18).abs() < 1e-9);
/// assert_eq!(Delta::new(0.0, 5.0).percent(), None); // no percent change from zero
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Delta {
    /// The baseline value.
    pub base: f64,
    /// The candidate value.
    pub candidate: f64,
}

impl Delta {
    /// The change from `base` to `candidate`.
    pub fn new(base: f64, candidate: f64) -> Delta {
        Delta { base, candidate }
    }

    /// `candidate - base`, in the metric's unit.
    pub fn absolute(&self) -> f64 {
        self.candidate - self.base
    }

    /// `(candidate - base) / base * 100`; `None` when the base is zero or a value is not finite.
    pub fn percent(&self) -> Option<f64> {
        if self.base == 0.0 || !self.base.is_finite() || !self.candidate.is_finite() {
            return None;
        }
        Some((self.candidate - self.base) / self.base * 100.0)
    }

    /// Whether the candidate is strictly better than the base in `direction`. Equal values are
    /// neither better nor worse.
    pub fn is_better(&self, direction: Direction) -> bool {
        match direction {
            Direction::HigherIsBetter => self.candidate > self.base,
            Direction::LowerIsBetter => self.candidate < self.base,
        }
    }

    /// Whether the candidate is strictly worse than the base in `direction`.
    pub fn is_worse(&self, direction: Direction) -> bool {
        match direction {
            Direction::HigherIsBetter => self.candidate < self.base,
            Direction::LowerIsBetter => self.candidate > self.base,
        }
    }
}

/// Which summary statistic of a latency metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stat {
    Mean,
    Median,
    P99,
}

fn stat(summary: &Option<Summary>, stat: Stat) -> Option<f64> {
    let s = summary.as_ref()?;
    match stat {
        Stat::Mean => s.mean,
        Stat::Median => s.median.or_else(|| s.percentile(50.0)),
        Stat::P99 => s.percentile(99.0),
    }
}

fn count(v: Option<u64>) -> Option<f64> {
    v.map(|n| n as f64)
}

/// A comparable figure of a [`BenchmarkResult`]: its name, unit, and direction. The
/// constants below cover every headline figure; [`METRICS`] lists them in report order.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Stable identifier (`total_token_throughput`, `mean_tpot_ms`, …).
    pub key: &'static str,
    /// Human label as the GPUStack block prints it (`Mean TPOT (ms)`).
    pub label: &'static str,
    /// Which way the metric improves.
    pub direction: Direction,
    get: fn(&BenchmarkResult) -> Option<f64>,
}

impl Metric {
    /// The metric's value in `result` (ms for times, per second for rates), if present.
    ///
    /// ```
    /// use servebench::compare::TOTAL_TOKEN_THROUGHPUT;
    /// use servebench::BenchmarkResult;
    /// let r = BenchmarkResult { total_token_throughput_per_s: Some(9632.01), ..Default::default() };
    /// assert_eq!(TOTAL_TOKEN_THROUGHPUT.value(&r), Some(9632.01));
    /// ```
    pub fn value(&self, result: &BenchmarkResult) -> Option<f64> {
        (self.get)(result)
    }
}

macro_rules! metric {
    ($(#[$doc:meta])* $name:ident, $key:expr, $label:expr, $dir:ident, $get:expr) => {
        $(#[$doc])*
        pub const $name: Metric = Metric {
            key: $key,
            label: $label,
            direction: Direction::$dir,
            get: $get,
        };
    };
}

metric!(
    /// Successful requests (higher is better).
    SUCCESSFUL_REQUESTS, "successful_requests", "Successful requests", HigherIsBetter,
    |r| count(r.successful_requests)
);
metric!(
    /// Failed requests (lower is better).
    FAILED_REQUESTS, "failed_requests", "Failed requests", LowerIsBetter,
    |r| count(r.failed_requests)
);
metric!(
    /// Benchmark duration, ms (lower is better).
    DURATION, "duration_ms", "Benchmark duration (ms)", LowerIsBetter,
    |r| r.duration_ms
);
metric!(
    /// Request throughput, req/s.
    REQUEST_THROUGHPUT, "request_throughput", "Request throughput (req/s)", HigherIsBetter,
    |r| r.request_throughput_per_s
);
metric!(
    /// Request goodput, req/s.
    REQUEST_GOODPUT, "request_goodput", "Request goodput (req/s)", HigherIsBetter,
    |r| r.request_goodput_per_s
);
metric!(
    /// Output token throughput, tok/s.
    OUTPUT_THROUGHPUT, "output_throughput", "Output token throughput (tok/s)", HigherIsBetter,
    |r| r.output_throughput_per_s
);
metric!(
    /// Total token throughput, tok/s: GPUStack's "Total TPS".
    TOTAL_TOKEN_THROUGHPUT, "total_token_throughput", "Total Token throughput (tok/s)", HigherIsBetter,
    |r| r.total_token_throughput_per_s
);
metric!(
    /// Mean end-to-end latency, ms.
    MEAN_E2EL, "mean_e2el_ms", "Mean E2EL (ms)", LowerIsBetter,
    |r| stat(&r.e2el, Stat::Mean)
);
metric!(
    /// P99 end-to-end latency, ms.
    P99_E2EL, "p99_e2el_ms", "P99 E2EL (ms)", LowerIsBetter,
    |r| stat(&r.e2el, Stat::P99)
);
metric!(
    /// Mean time to first token, ms.
    MEAN_TTFT, "mean_ttft_ms", "Mean TTFT (ms)", LowerIsBetter,
    |r| stat(&r.ttft, Stat::Mean)
);
metric!(
    /// Median time to first token, ms.
    MEDIAN_TTFT, "median_ttft_ms", "Median TTFT (ms)", LowerIsBetter,
    |r| stat(&r.ttft, Stat::Median)
);
metric!(
    /// P99 time to first token, ms.
    P99_TTFT, "p99_ttft_ms", "P99 TTFT (ms)", LowerIsBetter,
    |r| stat(&r.ttft, Stat::P99)
);
metric!(
    /// Mean time per output token, ms: GPUStack's "Mean TPOT(ms)".
    MEAN_TPOT, "mean_tpot_ms", "Mean TPOT (ms)", LowerIsBetter,
    |r| stat(&r.tpot, Stat::Mean)
);
metric!(
    /// Median time per output token, ms.
    MEDIAN_TPOT, "median_tpot_ms", "Median TPOT (ms)", LowerIsBetter,
    |r| stat(&r.tpot, Stat::Median)
);
metric!(
    /// P99 time per output token, ms.
    P99_TPOT, "p99_tpot_ms", "P99 TPOT (ms)", LowerIsBetter,
    |r| stat(&r.tpot, Stat::P99)
);
metric!(
    /// Mean inter-token latency, ms.
    MEAN_ITL, "mean_itl_ms", "Mean ITL (ms)", LowerIsBetter,
    |r| stat(&r.itl, Stat::Mean)
);
metric!(
    /// P99 inter-token latency, ms.
    P99_ITL, "p99_itl_ms", "P99 ITL (ms)", LowerIsBetter,
    |r| stat(&r.itl, Stat::P99)
);

metric!(
    /// The capacity under an SLO of a capacity search ([`crate::result::CapacityEstimate`]'s
    /// estimate: requests/s for a rate search, requests in flight for a concurrency search;
    /// higher is better). Not in [`METRICS`]: only a capacity study's runs have it.
    CAPACITY, "capacity", "Capacity under the SLO", HigherIsBetter,
    |r| r.capacity.as_ref().and_then(|c| c.estimate)
);

/// Every [`Metric`], in the order reports list them.
pub const METRICS: [Metric; 17] = [
    SUCCESSFUL_REQUESTS,
    FAILED_REQUESTS,
    DURATION,
    REQUEST_THROUGHPUT,
    REQUEST_GOODPUT,
    OUTPUT_THROUGHPUT,
    TOTAL_TOKEN_THROUGHPUT,
    MEAN_E2EL,
    P99_E2EL,
    MEAN_TTFT,
    MEDIAN_TTFT,
    P99_TTFT,
    MEAN_TPOT,
    MEDIAN_TPOT,
    P99_TPOT,
    MEAN_ITL,
    P99_ITL,
];

fn reasoning_stat(r: &BenchmarkResult, s: Stat) -> Option<f64> {
    stat(&r.reasoning.as_ref()?.time_to_first_answer, s)
}

metric!(
    /// Mean time to the first answer (content) token, ms: a reasoning model's TTFT of its
    /// answer.
    MEAN_TTFA, "mean_time_to_first_answer_ms", "Mean TTFT of the answer (ms)", LowerIsBetter,
    |r| reasoning_stat(r, Stat::Mean)
);
metric!(
    /// P99 time to the first answer (content) token, ms.
    P99_TTFA, "p99_time_to_first_answer_ms", "P99 TTFT of the answer (ms)", LowerIsBetter,
    |r| reasoning_stat(r, Stat::P99)
);
metric!(
    /// Energy per output token, J.
    JOULES_PER_OUTPUT_TOKEN, "joules_per_output_token", "Energy per output token (J)", LowerIsBetter,
    |r| r.energy.as_ref()?.joules_per_output_token
);
metric!(
    /// USD per million output tokens at the run's GPU price.
    USD_PER_MILLION_OUTPUT_TOKENS, "usd_per_million_output_tokens", "$/1M output tokens", LowerIsBetter,
    |r| r.cost.as_ref()?.usd_per_million_output_tokens
);
metric!(
    /// Output tokens per second per GPU.
    OUTPUT_TOKENS_PER_S_PER_GPU, "output_tokens_per_s_per_gpu", "Output tok/s per GPU", HigherIsBetter,
    |r| r.cost.as_ref()?.output_tokens_per_s_per_gpu
);
metric!(
    /// Output tokens per joule.
    TOKENS_PER_JOULE, "output_tokens_per_joule", "Output tokens per joule", HigherIsBetter,
    |r| r.energy.as_ref()?.output_tokens_per_joule
);
metric!(
    /// Inputs per second (embeddings texts, rerank and score documents).
    INPUTS_PER_S, "inputs_per_s", "Inputs per second", HigherIsBetter,
    |r| r.inputs_per_s
);
metric!(
    /// Speculative-decoding acceptance rate, 0–1.
    SPEC_ACCEPTANCE_RATE, "spec_decode_acceptance_rate", "Spec-decode acceptance rate", HigherIsBetter,
    |r| r.spec_decode.as_ref()?.acceptance_rate
);
metric!(
    /// Speculative decoding's mean accepted length (tokens per verification step).
    SPEC_MEAN_ACCEPTED_LENGTH, "spec_decode_mean_accepted_length", "Spec-decode mean accepted len", HigherIsBetter,
    |r| r.spec_decode.as_ref()?.mean_accepted_length
);

/// The production figures a comparison adds after [`METRICS`] when both results have them:
/// time to first answer token, energy per token, cost per token and per GPU,
/// speculative-decoding acceptance, inputs per second of pooling runs.
pub const PRODUCTION_METRICS: [Metric; 9] = [
    MEAN_TTFA,
    P99_TTFA,
    JOULES_PER_OUTPUT_TOKEN,
    TOKENS_PER_JOULE,
    USD_PER_MILLION_OUTPUT_TOKENS,
    OUTPUT_TOKENS_PER_S_PER_GPU,
    SPEC_ACCEPTANCE_RATE,
    SPEC_MEAN_ACCEPTED_LENGTH,
    INPUTS_PER_S,
];

/// One metric of a [`Comparison`]: both values and their [`Delta`].
#[derive(Debug, Clone, Copy)]
pub struct MetricDelta {
    /// The metric.
    pub metric: Metric,
    /// Baseline and candidate values.
    pub delta: Delta,
}

impl MetricDelta {
    /// `better`, `worse` or `same`, by the metric's direction; `N/A` when a value is NaN
    /// (vLLM prints `nan` for a statistic of nothing).
    pub fn verdict(&self) -> &'static str {
        if self.delta.base.is_nan() || self.delta.candidate.is_nan() {
            "N/A"
        } else if self.delta.is_better(self.metric.direction) {
            "better"
        } else if self.delta.is_worse(self.metric.direction) {
            "worse"
        } else {
            "same"
        }
    }
}

/// A metric-by-metric comparison of two results: every metric of [`METRICS`] and
/// [`PRODUCTION_METRICS`] that both have.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The metrics present in both results, in [`METRICS`] then [`PRODUCTION_METRICS`]
    /// order.
    pub metrics: Vec<MetricDelta>,
    /// The metric convention of the baseline's numbers, when known.
    pub base_convention: Option<Convention>,
    /// The metric convention of the candidate's numbers, when known.
    pub candidate_convention: Option<Convention>,
    /// Whether the baseline's and the candidate's streams carried reasoning: then their
    /// TTFT counts the first reasoning token, not the first answer token.
    pub reasoning: (bool, bool),
}

/// Compares `candidate` against `base` on every metric both results carry.
///
/// ```
/// use servebench::compare::compare;
/// use servebench::BenchmarkResult;
/// let base = BenchmarkResult { total_token_throughput_per_s: Some(100.0), ..Default::default() };
/// let cand = BenchmarkResult { total_token_throughput_per_s: Some(110.0), ..Default::default() };
/// let c = compare(&base, &cand);
/// assert_eq!(c.metrics.len(), 1);
/// assert_eq!(c.metrics[0].verdict(), "better");
/// ```
pub fn compare(base: &BenchmarkResult, candidate: &BenchmarkResult) -> Comparison {
    let metrics = METRICS
        .iter()
        .chain(PRODUCTION_METRICS.iter())
        .filter_map(|m| {
            Some(MetricDelta {
                metric: *m,
                delta: Delta::new(m.value(base)?, m.value(candidate)?),
            })
        })
        .collect();
    Comparison {
        metrics,
        base_convention: base.meta.convention,
        candidate_convention: candidate.meta.convention,
        reasoning: (base.reasoning.is_some(), candidate.reasoning.is_some()),
    }
}

impl Comparison {
    /// Whether both conventions are known and differ: then TPOT and ITL are defined
    /// differently on the two sides (see [`Convention`]) and their deltas mislead.
    ///
    /// ```
    /// use servebench::compare::compare;
    /// use servebench::result::{BenchmarkResult, Convention};
    /// let mut a = BenchmarkResult::default();
    /// let mut b = BenchmarkResult::default();
    /// a.meta.convention = Some(Convention::Vllm);
    /// assert!(!compare(&a, &b).conventions_differ());
    /// b.meta.convention = Some(Convention::Guidellm);
    /// assert!(compare(&a, &b).conventions_differ());
    /// assert!(compare(&a, &b).to_text().contains("Note: the baseline follows the vllm convention"));
    /// ```
    pub fn conventions_differ(&self) -> bool {
        matches!((self.base_convention, self.candidate_convention), (Some(a), Some(b)) if a != b)
    }
}
