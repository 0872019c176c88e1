//! SGLang `bench_serving` results: JSON Lines, one object per run, appended to
//! `{backend}_{MMDD}_{num_prompts}_{input}_{output}.jsonl`.
//!
//! Keys read: `backend`, `dataset_name`, `request_rate` (a float, or bare `Infinity` —
//! Python's `json.dumps(float("inf"))` — read as "no configured rate"),
//! `max_concurrency`, `duration`, `completed`, `total_input_tokens`, `total_output_tokens`,
//! `total_output_tokens_retokenized`, `request_throughput`, `input_throughput`,
//! `output_throughput`, `total_throughput`, `{mean,median,std,p90,p95,p99,max}_{e2e_latency,ttft,tpot,itl}_ms`,
//! `concurrency`, `accept_length`, `max_output_tokens_per_s`, `max_concurrent_requests`,
//! and with `--output-details` the lists `input_lens`, `output_lens`, `ttfts`, `itls`,
//! `errors` (→ [`RequestRecord`]s, as for vLLM; SGLang saves no start times, so every
//! record is sent at offset zero).
//!
//! SGLang's definitions follow vLLM's (TPOT excludes the first token, one ITL per chunk,
//! request-weighted percentiles), so `meta.convention` is [`Convention::Vllm`]; the
//! differences (output length falls back to the requested length, latency runs to
//! `[DONE]`) are documented in `shared/reference/vllm-sglang-bench.md` §5.

use super::json::OrderedObject;
use super::vllm::{bench_serve_figures, detailed_records, Ctx};
use super::{json_lines, read_file, ImportError};
use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention, RunMeta};

/// One run from an SGLang result file.
#[derive(Debug, Clone, PartialEq)]
pub struct SglangRun {
    /// `backend` plus the line number.
    pub name: String,
    /// The run's figures.
    pub result: BenchmarkResult,
    /// Per-request records (`--output-details`).
    pub records: Option<Vec<RequestRecord>>,
    /// `dataset_name`.
    pub dataset_name: Option<String>,
    /// SGLang's `Concurrency:` row: sum of E2E latencies / duration.
    pub concurrency: Option<f64>,
    /// `accept_length` (speculative decoding), when reported.
    pub accept_length: Option<f64>,
    /// `total_output_tokens_retokenized`.
    pub total_output_tokens_retokenized: Option<u64>,
    /// `duration` in seconds, the float as saved (SGLang divides its rates by it).
    pub duration_s: Option<f64>,
}

/// Read an SGLang JSON Lines file.
pub fn from_path(path: &std::path::Path) -> Result<Vec<SglangRun>, ImportError> {
    let bytes = read_file(path)?;
    from_slice(&bytes).map_err(|e| super::in_file(path, e))
}

/// Read SGLang runs from JSON Lines bytes (a single object also works).
///
/// ```
/// let line = br#"{"backend": "sglang-oai", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": 16, "duration": 10.0, "completed": 100, "total_input_tokens": 1000, "total_output_tokens": 5000, "output_throughput": 500.0, "mean_ttft_ms": 20.0, "median_ttft_ms": 19.0, "p99_ttft_ms": 40.0}"#;
/// let runs = servebench::import::sglang::from_slice(line).unwrap();
/// assert_eq!(runs[0].result.successful_requests, Some(100));
/// assert_eq!(runs[0].result.request_rate_configured, None);
/// assert_eq!(runs[0].result.ttft.as_ref().unwrap().percentile(99.0), Some(40.0));
/// ```
pub fn from_slice(bytes: &[u8]) -> Result<Vec<SglangRun>, ImportError> {
    let Some((first_line, _)) = json_lines(bytes).next() else {
        return Err(ImportError::Empty {
            path: "line 1".into(),
        });
    };
    // A truncated or broken single document gives its own error, at its own line.
    super::object_or_lines(bytes, |obj, line, l| {
        convert(obj, line.unwrap_or(first_line), l)
    })
}

fn convert(obj: &OrderedObject, line: usize, text: &[u8]) -> Result<SglangRun, ImportError> {
    let c = Ctx::with_non_finite(Some(line), text);
    let completed = c.u64(obj, "completed")?;
    if completed.is_none() && obj.get("duration").is_none() {
        return Err(ImportError::UnknownFormat(format!(
            "{}: no `completed` or `duration`: not an SGLang result",
            c.path("")
        )));
    }
    if completed.unwrap_or(0) == 0 {
        return Err(ImportError::Empty {
            path: c.path("completed"),
        });
    }
    let rate = match obj.get("request_rate") {
        Some(serde_json::Value::String(s)) if s == "inf" => None,
        _ => c.non_negative(obj, "request_rate")?,
    };
    let summaries = c.summaries(
        obj,
        &[
            ("e2el", "e2e_latency"),
            ("ttft", "ttft"),
            ("tpot", "tpot"),
            ("itl", "itl"),
        ],
    )?;
    let backend = c.string(obj, "backend")?;
    let duration_s = c.non_negative(obj, "duration")?;
    let records = detailed_records(&c, obj)?;
    let failed = records
        .as_ref()
        .map(|r| r.iter().filter(|x| !x.outcome.is_success()).count() as u64);
    let result = BenchmarkResult {
        meta: RunMeta {
            label: c.string(obj, "tag")?,
            engine: Some("SGLang".into()),
            convention: Some(Convention::Vllm),
            source: Some("sglang bench_serving".into()),
            ..RunMeta::default()
        },
        successful_requests: completed,
        failed_requests: failed,
        request_rate_configured: rate,
        duration_ms: duration_s.map(|d| d * 1000.0),
        ..bench_serve_figures(&c, obj, &summaries, "total_throughput")?
    };
    Ok(SglangRun {
        name: format!("{} (line {line})", backend.as_deref().unwrap_or("sglang")),
        result,
        records,
        dataset_name: c.string(obj, "dataset_name")?,
        concurrency: c.non_negative(obj, "concurrency")?,
        accept_length: c.f64(obj, "accept_length")?,
        total_output_tokens_retokenized: c.u64(obj, "total_output_tokens_retokenized")?,
        duration_s,
    })
}
