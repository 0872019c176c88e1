//! `vllm bench serve`'s pooling runs (`--backend openai-embeddings` and the other pooling
//! backends): how to tell such a file, the block vLLM prints for it, and its per-request
//! records (whole answers: latencies, no token timings).

use std::time::Duration;

use serde_json::Value;

use super::ctx::Ctx;
use super::json::OrderedObject;
use super::ImportError;
use crate::format::text::{Field, Layout, Row, Section, Stat, Style};
use crate::record::{ErrorKind, Outcome, RequestRecord};
use crate::result::{BenchmarkResult, Summary};

/// The backend a file names (`openai-embeddings`, `openai-chat`, …).
pub(super) fn c_backend(obj: &OrderedObject) -> &str {
    obj.get("backend").and_then(Value::as_str).unwrap_or("")
}

/// Whether the file is a pooling run's (`--backend openai-embeddings` and the other pooling
/// backends): vLLM saves `total_input_sequences` and no token timings for them.
pub(super) fn is_pooling(backend: &str, obj: &OrderedObject) -> bool {
    obj.get("total_input_sequences").is_some()
        || ["embeddings", "rerank", "score", "pooling", "classify"]
            .iter()
            .any(|k| backend.contains(k))
}

/// The block `vllm bench serve` prints for a pooling run (0.33): requests, failures, the
/// concurrency cap and a finite rate when set, duration, input tokens, request throughput,
/// inputs per second, total token throughput, then the E2E latency.
pub(super) fn pooling_layout(r: &BenchmarkResult, summaries: &[(String, Summary)]) -> Layout {
    let mut rows = vec![Row::Field(Field::SuccessfulRequests)];
    let fields = [
        (r.failed_requests.is_some(), Field::FailedRequests),
        (r.max_concurrency.is_some(), Field::MaxConcurrency),
        (
            r.request_rate_configured.is_some(),
            Field::RequestRateConfigured,
        ),
        (true, Field::Duration),
        (true, Field::TotalInputTokens),
        (true, Field::RequestThroughput),
        (r.inputs_per_s.is_some(), Field::InputThroughput),
        (
            r.total_token_throughput_per_s.is_some(),
            Field::TotalTokenThroughput,
        ),
    ];
    rows.extend(
        fields
            .into_iter()
            .filter(|(on, _)| *on)
            .map(|(_, f)| Row::Field(f)),
    );
    for (_, s) in summaries {
        rows.push(Row::Header(Section::E2el));
        if s.mean.is_some() {
            rows.push(Row::Stat(Section::E2el, Stat::Mean));
        }
        if s.median.is_some() {
            rows.push(Row::Stat(Section::E2el, Stat::Median));
        }
        for p in &s.percentiles {
            rows.push(Row::Stat(Section::E2el, Stat::Percentile(p.p)));
        }
    }
    Layout {
        style: Style::Vllm,
        rows,
        ..Layout::default()
    }
}

/// A pooling run's per-request records: its `latencies` (sent at zero without
/// `start_times`), `input_lens` and `errors`, each a whole answer carrying the run's
/// inputs per request (`total_input_sequences` ÷ `completed`, when it divides).
pub(super) fn pooling_records(
    c: &Ctx,
    obj: &OrderedObject,
    completed: Option<u64>,
) -> Result<Option<Vec<RequestRecord>>, ImportError> {
    let Some(latencies) = c.f64_list(obj, "latencies")? else {
        return Ok(None);
    };
    let n = latencies.len();
    let input_lens = c.f64_list(obj, "input_lens")?;
    let start_times = c.f64_list(obj, "start_times")?;
    for (key, len) in [
        ("input_lens", input_lens.as_ref().map(Vec::len)),
        ("start_times", start_times.as_ref().map(Vec::len)),
    ] {
        if let Some(l) = len.filter(|&l| l != n) {
            return Err(ImportError::invalid(
                c.path(key),
                format!("{l} entries but `latencies` has {n}"),
            ));
        }
    }
    let errors = obj.get("errors").and_then(Value::as_array);
    let inputs = match (c.u64(obj, "total_input_sequences")?, completed) {
        (Some(seqs), Some(done)) if done > 0 && seqs % done == 0 => u32::try_from(seqs / done).ok(),
        _ => None,
    };
    let origin = start_times
        .as_ref()
        .and_then(|s| s.iter().copied().filter(|v| v.is_finite()).reduce(f64::min))
        .unwrap_or(0.0);
    let secs = |v: f64, key: String| {
        Duration::try_from_secs_f64(v).map_err(|_| {
            ImportError::invalid(c.path(&key), format!("negative or non-finite time {v}"))
        })
    };
    let mut out = Vec::with_capacity(n);
    for (i, &latency) in latencies.iter().enumerate() {
        let sent_at = match &start_times {
            Some(s) => secs(s[i] - origin, format!("start_times[{i}]"))?,
            None => Duration::ZERO,
        };
        let mut r = RequestRecord::new(i as u64, sent_at);
        r.response = crate::record::ResponseForm::Whole;
        r.inputs = inputs;
        r.prompt_tokens = input_lens.as_ref().and_then(|l| super::round_count(l[i]));
        let error = errors
            .and_then(|e| e.get(i))
            .and_then(Value::as_str)
            .unwrap_or("");
        if error.is_empty() {
            let end = sent_at
                .checked_add(secs(latency, format!("latencies[{i}]"))?)
                .ok_or_else(|| {
                    ImportError::invalid(c.path("latencies"), "a time overflows the run's clock")
                })?;
            r.ended_at = Some(end);
        } else {
            r.outcome = Outcome::Error {
                kind: ErrorKind::Other,
                message: error.to_string(),
            };
        }
        out.push(r);
    }
    Ok(Some(out))
}
