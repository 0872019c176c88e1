//! The figures of runs whose answers come whole — the pooling endpoints (embeddings,
//! rerank, score, pooling, classify) — as vLLM computes them for pooling benchmarks
//! (`calculate_metrics_for_embeddings` in `vllm bench serve`): completed and failed
//! requests, total input tokens, request throughput, total token throughput (all input),
//! end-to-end latency; and servebench's inputs per second. No TTFT, TPOT, ITL or output figures: such a
//! response does not stream, and servebench does not invent them.

use super::slo::{meets_slo, Slo};
use super::summary::vllm_summary_ms;
use crate::record::{RequestRecord, ResponseForm};
use crate::result::BenchmarkResult;
use crate::stats::numpy_summary;

/// `true` when the run's records answered whole (every record that ended is
/// [`ResponseForm::Whole`], and some did): its figures come from
/// [`compute`](super::compute) as vLLM computes a pooling run's (request latency only).
pub fn answered_whole(records: &[RequestRecord]) -> bool {
    let mut any = false;
    for r in records {
        match r.response {
            ResponseForm::Whole => any = true,
            ResponseForm::Streamed if r.outcome.is_success() => return false,
            ResponseForm::Streamed => {}
        }
    }
    any
}

/// The figures of a run of whole answers over `duration_s` seconds (`crate::metrics::compute`
/// calls it for such runs, with the run's duration). See the module docs.
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::{compute, MetricsOptions};
/// use servebench::record::{RequestRecord, ResponseForm};
/// let ms = Duration::from_millis;
/// let records: Vec<RequestRecord> = (0..4)
///     .map(|i| RequestRecord {
///         ended_at: Some(ms(100 * i + 40)),
///         usage_prompt_tokens: Some(256),
///         response: ResponseForm::Whole,
///         inputs: Some(8),
///         ..RequestRecord::new(i, ms(100 * i))
///     })
///     .collect();
/// let r = compute(&records, MetricsOptions::load_run());
/// assert_eq!(r.successful_requests, Some(4));
/// assert_eq!(r.e2el.unwrap().median, Some(40.0));
/// assert_eq!(r.total_input_tokens, Some(1024));
/// // 32 inputs over the run's 340 ms.
/// assert!((r.inputs_per_s.unwrap() - 32.0 / 0.34).abs() < 1e-9);
/// // Nothing streamed: no time to first token, no output figures.
/// assert!(r.ttft.is_none() && r.tpot.is_none() && r.itl.is_none() && r.total_output_tokens.is_none());
/// ```
pub(crate) fn compute_whole(
    records: &[RequestRecord],
    dur_s: f64,
    percentiles: &[f64],
    goodput: Option<Slo>,
) -> BenchmarkResult {
    let ok: Vec<&RequestRecord> = records.iter().filter(|r| r.outcome.is_success()).collect();
    let failed = records.len() - ok.len();
    let per_s = |x: f64| (dur_s > 0.0).then(|| x / dur_s);
    let input: u64 = ok.iter().filter_map(|r| r.input_tokens()).sum();
    let inputs: u64 = ok.iter().map(|r| u64::from(r.inputs.unwrap_or(1))).sum();
    let mut e2els: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.latency())
        .map(|d| d.as_secs_f64())
        .collect();
    let good = goodput.map(|slo| {
        e2els
            .iter()
            .filter(|&&e| meets_slo(&slo, 0.0, 0.0, e))
            .count() as f64
    });
    let e2el = vllm_summary_ms(numpy_summary(&mut e2els, percentiles), percentiles);
    BenchmarkResult {
        successful_requests: Some(ok.len() as u64),
        failed_requests: Some(failed as u64),
        duration_ms: Some(dur_s * 1000.0),
        total_input_tokens: Some(input),
        request_throughput_per_s: per_s(ok.len() as f64),
        request_goodput_per_s: good.and_then(per_s),
        inputs_per_s: per_s(inputs as f64),
        total_token_throughput_per_s: per_s(input as f64),
        e2el: Some(e2el),
        ..BenchmarkResult::default()
    }
}
