//! `vllm bench serve --save-result` JSON (and the older `benchmarks/benchmark_serving.py`
//! files), one object per file or JSON Lines of several runs (`--append-result`, llm-d's
//! result collections).
//!
//! Variants read (0.8 → 0.34):
//!
//! * the key `"request_goodput:"` (with a stray colon) written up to mid-2025, as well as
//!   `request_goodput`;
//! * `request_rate` as a number or the string `"inf"` (read as "no configured rate");
//! * `failed` (0.12+), `max_output_tokens_per_s` / `max_concurrent_requests` (0.11+),
//!   `input_throughput` (old scripts);
//! * `mean_/median_/std_{metric}_ms` and `p{p}_{metric}_ms` for `ttft`, `tpot`, `itl`,
//!   `e2el` → [`Summary`] rows, percentiles in the file's order (which is the printed
//!   order);
//! * `--save-detailed` lists (`input_lens`, `output_lens`, `ttfts`, `itls`, `errors`, and
//!   `start_times` and `latencies` where saved — 0.33.0's file has both) → [`RequestRecord`]s,
//!   failed requests included, in the lists' order, which is vLLM's request order;
//! * any other string/number key (vLLM's `--metadata KEY=VALUE`, llm-d's `deployment`,
//!   `gpu`, …) → [`VllmRun::metadata`].
//!
//! Records: each streamed chunk is one token (vLLM counts chunks); the first at
//! `sent + ttft`, the next ones at the cumulative `itls`; `usage_output_tokens` is
//! `output_lens[i]`. Without `start_times` every record is sent at offset zero: per-request
//! latencies are right, run-level rates are not recomputable. [`VllmRun::duration_s`] keeps
//! vLLM's `duration` float, which a recomputation under vLLM's definitions divides by.
//!
//! `meta.convention` is [`Convention::Vllm`]; `meta.engine` is `vLLM` when `backend` is
//! `vllm` (the served engine is not otherwise recorded).

use std::time::Duration;

use serde_json::Value;

pub(crate) use super::ctx::Ctx;
use super::json::OrderedObject;
use super::vllm_pooling::{c_backend, is_pooling, pooling_layout, pooling_records};
use super::{read_file, ImportError};
use crate::format::text::{Field, Layout, Row, Section, Stat, Style};
use crate::record::{Chunk, ErrorKind, Outcome, RequestRecord};
use crate::result::{BenchmarkResult, Convention, RunMeta, Summary};

/// One run from a vLLM result file.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmRun {
    /// A short name: the file's `label`, else `backend`, plus the line for JSON Lines.
    pub name: String,
    /// The file's figures.
    pub result: BenchmarkResult,
    /// The block `vllm bench serve` printed for these figures (its rows, in its order).
    pub layout: crate::format::text::Layout,
    /// Per-request records, when the file was saved with `--save-detailed`.
    pub records: Option<Vec<RequestRecord>>,
    /// Keys that are not metrics (`--metadata`, llm-d's deployment keys), as text, in file
    /// order.
    pub metadata: Vec<(String, String)>,
    /// Which metrics have summaries, in file order (`ttft`, `tpot`, `itl`, `e2el`).
    pub metric_order: Vec<String>,
    /// `true` when `request_rate` was `"inf"`.
    pub infinite_rate: bool,
    /// `num_prompts`, when present.
    pub num_prompts: Option<u64>,
    /// `backend` (`vllm`, `openai`, `openai-chat`, …).
    pub backend: Option<String>,
    /// `duration` in seconds, the float as saved (vLLM divides its rates by it).
    pub duration_s: Option<f64>,
}

/// Read a vLLM result file (one JSON object, or JSON Lines).
pub fn from_path(path: &std::path::Path) -> Result<Vec<VllmRun>, ImportError> {
    let bytes = read_file(path)?;
    from_slice(&bytes).map_err(|e| super::in_file(path, e))
}

/// Read vLLM results from bytes: one JSON object, or JSON Lines of several.
///
/// ```
/// let bytes = std::fs::read("tests/fixtures/vllm/vllm_benchmark_serving_2025-05_llmd_results.jsonl").unwrap();
/// let runs = servebench::import::vllm::from_slice(&bytes).unwrap();
/// assert_eq!(runs.len(), 9);
/// assert!(runs[0].metadata.contains(&("gpu".to_string(), "4xNVIDIA_L40S".to_string())));
/// assert!(runs.iter().any(|r| r.infinite_rate && r.result.request_rate_configured.is_none()));
/// ```
pub fn from_slice(bytes: &[u8]) -> Result<Vec<VllmRun>, ImportError> {
    super::object_or_lines(bytes, |obj, line, l| {
        convert(obj, Ctx::with_non_finite(line, l))
    })
}

/// The metrics vLLM summarises, with their key names.
pub const METRICS: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];

/// vLLM's `date` (`%Y%m%d-%H%M%S`, the benchmarking machine's local time, no zone): kept
/// as +00:00 since the zone is unknown; an unreadable date is left out, not an error.
fn parse_date(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let naive = chrono::NaiveDateTime::parse_from_str(s, "%Y%m%d-%H%M%S").ok()?;
    Some(naive.and_utc().fixed_offset())
}

const KNOWN: [&str; 40] = [
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "request_goodput",
    "request_goodput:",
    "output_throughput",
    "total_token_throughput",
    "input_throughput",
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "latencies",
    "start_times",
    "queue_times",
    "generated_texts",
    "errors",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "rtfx",
    "best_of",
    "use_beam_search",
    "server_queue_times",
    "server_ttfts",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
];

fn convert(obj: &OrderedObject, c: Ctx) -> Result<VllmRun, ImportError> {
    let completed = c.u64(obj, "completed")?;
    let pooled = is_pooling(c_backend(obj), obj);
    let failed = match c.u64(obj, "failed")? {
        // A pooling run's file has no `failed`; its `errors` list one entry per request.
        None if pooled => obj.get("errors").and_then(Value::as_array).map(|e| {
            e.iter()
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                .count() as u64
        }),
        f => f,
    };
    if completed.is_none() && obj.get("duration").is_none() {
        return Err(ImportError::UnknownFormat(format!(
            "{}: no `completed` or `duration`: not a vLLM result",
            c.path("")
        )));
    }
    if completed.unwrap_or(0) == 0 && failed.unwrap_or(0) == 0 {
        return Err(ImportError::Empty {
            path: c.path("completed"),
        });
    }
    let duration_s = c.non_negative(obj, "duration")?;
    let (rate, infinite_rate) = match obj.get("request_rate") {
        Some(Value::String(s)) if s == "inf" || s == "Infinity" => (None, true),
        Some(Value::String(s)) => match s.parse::<f64>() {
            Ok(v) if v.is_finite() => (Some(v), false),
            _ => {
                return Err(ImportError::invalid(
                    c.path("request_rate"),
                    format!("not a rate: {s:?}"),
                ))
            }
        },
        Some(Value::Null) => (None, true),
        _ => (c.non_negative(obj, "request_rate")?, false),
    };
    let goodput = match c.f64(obj, "request_goodput")? {
        Some(v) => Some(v),
        None => c.f64(obj, "request_goodput:")?,
    };
    let backend = c.string(obj, "backend")?;
    let label = c.string(obj, "label")?;
    let summaries = c.summaries(
        obj,
        &[
            ("ttft", "ttft"),
            ("tpot", "tpot"),
            ("itl", "itl"),
            ("e2el", "e2el"),
        ],
    )?;
    let mut metadata = Vec::new();
    for (k, v) in &obj.0 {
        if KNOWN.contains(&k.as_str())
            || k.ends_with("_ms")
            || k.starts_with("spec_decode")
            || k.starts_with("probe")
        {
            continue;
        }
        match v {
            Value::String(s) => metadata.push((k.clone(), s.clone())),
            Value::Number(n) => metadata.push((k.clone(), n.to_string())),
            Value::Bool(b) => metadata.push((k.clone(), b.to_string())),
            _ => {}
        }
    }

    let result = BenchmarkResult {
        meta: RunMeta {
            label: label.clone(),
            date: c.string(obj, "date")?.as_deref().and_then(parse_date),
            engine: backend
                .as_deref()
                .filter(|b| *b == "vllm")
                .map(|_| "vLLM".to_string()),
            model: c.string(obj, "model_id")?,
            convention: Some(Convention::Vllm),
            source: Some("vllm bench serve".into()),
            ..RunMeta::default()
        },
        successful_requests: completed,
        failed_requests: failed,
        request_rate_configured: rate,
        duration_ms: duration_s.map(|d| d * 1000.0),
        request_goodput_per_s: goodput,
        inputs_per_s: c.non_negative(obj, "input_sequence_throughput")?,
        ..bench_serve_figures(&c, obj, &summaries, "total_token_throughput")?
    };
    let (layout, records) = if pooled {
        (
            pooling_layout(&result, &summaries),
            pooling_records(&c, obj, completed)?,
        )
    } else {
        (
            vllm_layout(obj, &result, &summaries),
            detailed_records(&c, obj)?,
        )
    };
    let base = label
        .clone()
        .or_else(|| backend.clone())
        .unwrap_or_else(|| "vllm".into());
    Ok(VllmRun {
        name: match c.line {
            Some(n) => format!("{base} (line {n})"),
            None => base,
        },
        result,
        layout,
        records,
        metadata,
        metric_order: summaries.into_iter().map(|(m, _)| m).collect(),
        infinite_rate,
        num_prompts: c.u64(obj, "num_prompts")?,
        backend,
        duration_s,
    })
}

/// The report `vllm bench serve` printed for this file, as a [`Layout`]: which rows, in
/// which order, spelled as that version spelled them.
///
/// * `Failed requests:` when the file has `failed` (0.12+);
/// * `Maximum request concurrency:` when `max_concurrency` is set, and `Request rate
///   configured (RPS):` when the rate is finite — both only in files of 0.11+ (which have
///   `max_output_tokens_per_s`); older reports did not print them;
/// * `Request goodput (req/s):` when goodput was measured; `Input token throughput` for the
///   2024-era script's `input_throughput`;
/// * the peak rows when the file has them;
/// * `Total token throughput` spelled with a lower-case `token` when the file has `rtfx`
///   (0.13+), else `Total Token`;
/// * one section per summarised metric in the file's key order, with Mean, Median and a
///   `P{p}` row per `p{p}_{metric}_ms` key in key order (std is saved but never printed).
pub fn vllm_layout(
    obj: &OrderedObject,
    r: &BenchmarkResult,
    summaries: &[(String, Summary)],
) -> Layout {
    let has = |k: &str| obj.get(k).is_some();
    let modern = has("max_output_tokens_per_s");
    let mut rows = vec![Row::Field(Field::SuccessfulRequests)];
    let mut push = |cond: bool, f: Field| {
        if cond {
            rows.push(Row::Field(f));
        }
    };
    push(has("failed"), Field::FailedRequests);
    push(modern && r.max_concurrency.is_some(), Field::MaxConcurrency);
    push(
        modern && r.request_rate_configured.is_some(),
        Field::RequestRateConfigured,
    );
    push(true, Field::Duration);
    push(true, Field::TotalInputTokens);
    push(r.total_output_tokens.is_some(), Field::TotalGeneratedTokens);
    push(true, Field::RequestThroughput);
    push(r.request_goodput_per_s.is_some(), Field::RequestGoodput);
    push(
        r.input_throughput_per_s.is_some(),
        Field::InputTokenThroughput,
    );
    push(
        r.output_throughput_per_s.is_some(),
        Field::OutputTokenThroughput,
    );
    push(
        r.peak_output_throughput_per_s.is_some(),
        Field::PeakOutputThroughput,
    );
    push(
        r.peak_concurrent_requests.is_some(),
        Field::PeakConcurrentRequests,
    );
    let total = if has("rtfx") {
        Field::TotalTokenThroughput
    } else {
        Field::TotalTokenThroughputCapital
    };
    push(r.total_token_throughput_per_s.is_some(), total);
    for (metric, s) in summaries {
        let section = match metric.as_str() {
            "ttft" => Section::Ttft,
            "tpot" => Section::Tpot,
            "itl" => Section::Itl,
            _ => Section::E2el,
        };
        rows.push(Row::Header(section));
        if s.mean.is_some() {
            rows.push(Row::Stat(section, Stat::Mean));
        }
        if s.median.is_some() {
            rows.push(Row::Stat(section, Stat::Median));
        }
        for p in &s.percentiles {
            rows.push(Row::Stat(section, Stat::Percentile(p.p)));
        }
    }
    Layout {
        style: Style::Vllm,
        rows,
        ..Layout::default()
    }
}

/// Records from `--save-detailed` / `--output-details` lists (times in seconds); `None`
/// without `ttfts`.
/// The figures `vllm bench serve` and SGLang's `bench_serving` (which follows it) save
/// under the same keys, read in this order: `max_concurrency`, the token totals, the
/// request, input and output throughputs, the peaks, the total token throughput (under
/// `total_key`: `total_token_throughput` for vLLM, `total_throughput` for SGLang) and the
/// four latency `summaries` ([`Ctx::summaries`]). The caller adds the metadata, counts,
/// rate, duration and what only its tool saves.
pub(crate) fn bench_serve_figures(
    c: &Ctx,
    obj: &OrderedObject,
    summaries: &[(String, Summary)],
    total_key: &str,
) -> Result<BenchmarkResult, ImportError> {
    let take = |m: &str| {
        summaries
            .iter()
            .find(|(k, _)| k == m)
            .map(|(_, s)| s.clone())
    };
    Ok(BenchmarkResult {
        max_concurrency: c.u64(obj, "max_concurrency")?,
        total_input_tokens: c.u64(obj, "total_input_tokens")?,
        total_output_tokens: c.u64(obj, "total_output_tokens")?,
        request_throughput_per_s: c.non_negative(obj, "request_throughput")?,
        input_throughput_per_s: c.non_negative(obj, "input_throughput")?,
        output_throughput_per_s: c.non_negative(obj, "output_throughput")?,
        peak_output_throughput_per_s: c.non_negative(obj, "max_output_tokens_per_s")?,
        peak_concurrent_requests: c.non_negative(obj, "max_concurrent_requests")?,
        total_token_throughput_per_s: c.non_negative(obj, total_key)?,
        e2el: take("e2el"),
        ttft: take("ttft"),
        tpot: take("tpot"),
        itl: take("itl"),
        ..BenchmarkResult::default()
    })
}

pub(crate) fn detailed_records(
    c: &Ctx,
    obj: &OrderedObject,
) -> Result<Option<Vec<RequestRecord>>, ImportError> {
    let Some(ttfts) = c.f64_list(obj, "ttfts")? else {
        return Ok(None);
    };
    let n = ttfts.len();
    let itls: Vec<Vec<f64>> = match obj.get("itls") {
        None | Some(Value::Null) => vec![Vec::new(); n],
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Array(x) => x
                    .iter()
                    .enumerate()
                    .map(|(j, g)| {
                        g.as_f64()
                            .ok_or_else(|| c.type_error(&format!("itls[{i}][{j}]"), "a number", g))
                    })
                    .collect::<Result<Vec<f64>, _>>(),
                Value::Null => Ok(Vec::new()),
                other => Err(c.type_error(&format!("itls[{i}]"), "a list", other)),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(c.type_error("itls", "a list of lists", v)),
    };
    let input_lens = c.f64_list(obj, "input_lens")?;
    let output_lens = c.f64_list(obj, "output_lens")?;
    let latencies = c.f64_list(obj, "latencies")?;
    let start_times = c.f64_list(obj, "start_times")?;
    let errors: Option<Vec<String>> = match obj.get("errors") {
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                })
                .collect(),
        ),
        _ => None,
    };
    let check_len = |key: &str, len: Option<usize>| -> Result<(), ImportError> {
        match len {
            Some(l) if l != n => Err(ImportError::invalid(
                c.path(key),
                format!("{l} entries but `ttfts` has {n}"),
            )),
            _ => Ok(()),
        }
    };
    check_len("itls", Some(itls.len()))?;
    check_len("input_lens", input_lens.as_ref().map(Vec::len))?;
    check_len("output_lens", output_lens.as_ref().map(Vec::len))?;
    check_len("latencies", latencies.as_ref().map(Vec::len))?;
    check_len("start_times", start_times.as_ref().map(Vec::len))?;
    check_len("errors", errors.as_ref().map(Vec::len))?;
    let origin = start_times
        .as_ref()
        .and_then(|s| s.iter().copied().filter(|v| v.is_finite()).reduce(f64::min))
        .unwrap_or(0.0);
    let secs = |v: f64, key: &str| -> Result<Duration, ImportError> {
        Duration::try_from_secs_f64(v).map_err(|_| {
            ImportError::invalid(c.path(key), format!("negative or non-finite time {v}"))
        })
    };
    // `base` plus `v` seconds; a sum past `Duration::MAX` is corrupt input, not a panic.
    let after = |base: Duration, v: f64, key: &str| -> Result<Duration, ImportError> {
        base.checked_add(secs(v, key)?).ok_or_else(|| {
            ImportError::invalid(c.path(key), format!("time {v} s overflows the run's clock"))
        })
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let sent_at = match &start_times {
            Some(s) => secs(s[i] - origin, &format!("start_times[{i}]"))?,
            None => Duration::ZERO,
        };
        let ttft = ttfts[i];
        let out_len = output_lens.as_ref().map(|o| o[i]);
        let error = errors.as_ref().map(|e| e[i].clone()).unwrap_or_default();
        let failed = !error.is_empty()
            || (ttft == 0.0 && itls[i].is_empty() && out_len.unwrap_or(0.0) == 0.0);
        let mut chunks = Vec::new();
        if !failed {
            let mut t = after(sent_at, ttft, &format!("ttfts[{i}]"))?;
            chunks.push(Chunk { at: t, tokens: 1 });
            for (j, g) in itls[i].iter().enumerate() {
                t = after(t, *g, &format!("itls[{i}][{j}]"))?;
                chunks.push(Chunk { at: t, tokens: 1 });
            }
        }
        let ended_at = match &latencies {
            Some(l) if !failed => Some(after(sent_at, l[i], &format!("latencies[{i}]"))?),
            _ => chunks.last().map(|c| c.at),
        };
        let count = |v: f64| -> Option<u64> { super::round_count(v) };
        out.push(RequestRecord {
            id: i as u64,
            scheduled_at: None,
            sent_at,
            ended_at,
            chunks,
            prompt_tokens: input_lens.as_ref().and_then(|l| count(l[i])),
            usage_prompt_tokens: None,
            usage_output_tokens: out_len.and_then(count).filter(|_| !failed),
            outcome: if failed {
                Outcome::Error {
                    kind: ErrorKind::Other,
                    message: if error.is_empty() {
                        "failed".into()
                    } else {
                        error
                    },
                }
            } else {
                Outcome::Success
            },
            turn: None,
            reasoning: None,
            adapter: None,
            response: Default::default(),
            inputs: None,
            images: None,
            checks: None,
        });
    }
    Ok(Some(out))
}
