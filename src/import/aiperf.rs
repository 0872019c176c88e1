//! NVIDIA aiperf (0.13) exports: `profile_export.jsonl` (one record per request →
//! [`RequestRecord`]s), `profile_export_aiperf.json` and `profile_export_aiperf.csv`
//! (aiperf's aggregates → a [`BenchmarkResult`]).
//!
//! # Definitions
//!
//! aiperf's per-request metrics follow vLLM's: "Inter Token Latency" is (latency − TTFT) /
//! (output tokens − 1), vLLM's TPOT; "Inter Chunk Latency" is the gap between streamed
//! responses, vLLM's ITL; percentiles are request-weighted (numpy's linear interpolation).
//! So the aggregates are read as [`Convention::Vllm`]: TPOT ← `inter_token_latency`, ITL ←
//! `inter_chunk_latency`, TTFT ← `time_to_first_token`, E2E latency ← `request_latency`.
//! The duration is the window aiperf divides its throughputs by (request count / request
//! throughput); aiperf's own `benchmark_duration` (first request to last response) is
//! shorter by the phase's start-up.
//!
//! # Records
//!
//! A record's send time is `request_start_ns`, its first chunk arrives `time_to_first_token`
//! later and each further chunk `inter_chunk_latency[i]` after the previous one; times are
//! offsets from the earliest credit or request start of the file. aiperf does not say how
//! many tokens each response carried: the output tokens (`output_sequence_length`, the
//! server's count with `--use-server-token-count`, else aiperf's own tokenizer's) are spread
//! one per chunk, the remainder on the first chunk. A record with an `error` is a failed
//! request.
//!
//! ```
//! let line = br#"{"metadata": {"x_request_id": "a", "worker_id": "w", "request_start_ns": 1000000000, "request_end_ns": 1030000000, "credit_issued_ns": 1000000000}, "metrics": {"time_to_first_token": {"value": 10.0, "unit": "ms"}, "inter_chunk_latency": {"value": [10.0, 10.0], "unit": "ms"}, "output_sequence_length": {"value": 3, "unit": "tokens"}, "input_sequence_length": {"value": 5, "unit": "tokens"}, "request_latency": {"value": 30.0, "unit": "ms"}}}"#;
//! let run = servebench::import::aiperf::records_from_slice(line).unwrap();
//! let r = &run.records[0];
//! assert_eq!(r.chunks.len(), 3);
//! assert_eq!(r.latency(), Some(std::time::Duration::from_millis(30)));
//! ```

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::json;
use super::{json_lines, ImportError};
use crate::record::{Chunk, ErrorKind, Outcome, RequestRecord, ResponseForm};
use crate::result::{BenchmarkResult, Convention, Percentile, RunMeta, Summary};

/// The percentiles aiperf writes, in its order.
const PERCENTILES: [(&str, f64); 9] = [
    ("p1", 1.0),
    ("p5", 5.0),
    ("p10", 10.0),
    ("p25", 25.0),
    ("p50", 50.0),
    ("p75", 75.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
];

/// aiperf's per-request records as a run: a result summarising them (vLLM's definitions)
/// and the records.
#[derive(Debug, Clone, PartialEq)]
pub struct AiperfRecords {
    /// The records' result under vLLM's definitions (what `servebench report` prints
    /// without `--convention`).
    pub result: BenchmarkResult,
    /// The records (sent at `request_start_ns`, offsets from the file's earliest time).
    pub records: Vec<RequestRecord>,
}

#[derive(Deserialize)]
struct Line {
    metadata: Metadata,
    #[serde(default)]
    metrics: std::collections::HashMap<String, MetricValue>,
    #[serde(default)]
    error: Option<ErrorDetails>,
}

#[derive(Deserialize)]
struct Metadata {
    request_start_ns: Option<u64>,
    request_end_ns: Option<u64>,
    credit_issued_ns: Option<u64>,
    #[serde(default)]
    was_cancelled: bool,
    #[serde(default)]
    benchmark_phase: Option<String>,
}

#[derive(Deserialize)]
struct MetricValue {
    value: Value,
}

#[derive(Deserialize)]
struct ErrorDetails {
    code: Option<i64>,
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: String,
}

/// Read `profile_export.jsonl`.
///
/// # Errors
///
/// [`ImportError::Json`] (line, column, path) for a line that is not an aiperf record,
/// [`ImportError::Invalid`] for impossible values (a negative or non-finite TTFT, a gap
/// list that is not numbers, a response before its request), [`ImportError::Empty`] when no
/// profiling record is there.
pub fn records_from_slice(bytes: &[u8]) -> Result<AiperfRecords, ImportError> {
    let mut lines = Vec::new();
    for (n, l) in json_lines(bytes) {
        let line: Line = json::parse_slice(l, n - 1)?;
        if line
            .metadata
            .benchmark_phase
            .as_deref()
            .is_some_and(|p| p != "profiling")
        {
            continue; // warmup requests are not measured
        }
        lines.push((n, line));
    }
    if lines.is_empty() {
        return Err(ImportError::Empty {
            path: "line 1".into(),
        });
    }
    let origin_ns = lines
        .iter()
        .filter_map(|(_, l)| {
            [l.metadata.credit_issued_ns, l.metadata.request_start_ns]
                .into_iter()
                .flatten()
                .min()
        })
        .min()
        .unwrap_or(0);
    let mut all = Vec::with_capacity(lines.len());
    for (i, (n, l)) in lines.iter().enumerate() {
        all.push(record(i as u64, *n, l, origin_ns)?);
    }
    let mut opts = crate::metrics::MetricsOptions::new(Convention::Vllm);
    opts.percentiles = vec![50.0, 90.0, 95.0, 99.0];
    let mut result = crate::metrics::compute(&all, &opts);
    result.meta.source = Some("aiperf profile_export.jsonl".into());
    Ok(AiperfRecords {
        result,
        records: all,
    })
}

fn ns_offset(ns: u64, origin_ns: u64) -> Duration {
    Duration::from_nanos(ns.saturating_sub(origin_ns))
}

fn ms_duration(path: &str, ms: f64) -> Result<Duration, ImportError> {
    if !ms.is_finite() || ms < 0.0 {
        return Err(ImportError::invalid(
            path,
            format!("{ms} ms: not a time (negative or not finite)"),
        ));
    }
    Duration::try_from_secs_f64(ms / 1000.0)
        .map_err(|e| ImportError::invalid(path, format!("{ms} ms: {e}")))
}

fn number(path: &str, v: &Value) -> Result<f64, ImportError> {
    v.as_f64()
        .ok_or_else(|| ImportError::invalid(path, format!("expected a number, found {v}")))
}

/// The outcome of a line that is not a success: aiperf's error (an HTTP status of 400 or
/// more is one), or a request it cancelled.
fn outcome(l: &Line) -> Option<Outcome> {
    if let Some(e) = &l.error {
        let kind = match e.code {
            Some(c) if c >= 400 => ErrorKind::HttpStatus,
            _ => ErrorKind::Other,
        };
        let message = match &e.kind {
            Some(t) => format!("{t}: {}", e.message),
            None => e.message.clone(),
        };
        return Some(Outcome::Error { kind, message });
    }
    l.metadata.was_cancelled.then(|| Outcome::Incomplete {
        reason: "cancelled by aiperf".into(),
    })
}

fn record(id: u64, line: usize, l: &Line, origin_ns: u64) -> Result<RequestRecord, ImportError> {
    let at = |key: &str| format!("line {line}: $.metrics.{key}.value");
    let start_ns = l.metadata.request_start_ns.ok_or_else(|| {
        ImportError::invalid(
            format!("line {line}: $.metadata.request_start_ns"),
            "missing",
        )
    })?;
    let sent_at = ns_offset(start_ns, origin_ns);
    let mut r = RequestRecord::new(id, sent_at);
    r.scheduled_at = l.metadata.credit_issued_ns.map(|c| ns_offset(c, origin_ns));
    if let Some(end) = l.metadata.request_end_ns {
        if end < start_ns {
            return Err(ImportError::invalid(
                format!("line {line}: $.metadata.request_end_ns"),
                "before request_start_ns",
            ));
        }
        r.ended_at = Some(ns_offset(end, origin_ns));
    }
    let get = |key: &str| l.metrics.get(key).map(|m| &m.value);
    let count = |key: &str| -> Result<Option<u64>, ImportError> {
        match get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => {
                let x = number(&at(key), v)?;
                super::round_count(x)
                    .map(Some)
                    .ok_or_else(|| ImportError::invalid(at(key), format!("{x}: not a count")))
            }
        }
    };
    r.prompt_tokens = count("input_sequence_length")?;
    r.usage_prompt_tokens = count("usage_prompt_tokens")?;
    let osl = count("output_sequence_length")?;
    r.usage_output_tokens = count("usage_completion_tokens")?;
    if let Some(o) = outcome(l) {
        r.outcome = o;
    }
    if let Some(v) = get("time_to_first_token") {
        let ttft = ms_duration(
            &at("time_to_first_token"),
            number(&at("time_to_first_token"), v)?,
        )?;
        let gaps: Vec<Duration> = match get("inter_chunk_latency") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let p = format!("{}[{i}]", at("inter_chunk_latency"));
                    ms_duration(&p, number(&p, g)?)
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(ImportError::invalid(
                    at("inter_chunk_latency"),
                    format!("expected a list, found {other}"),
                ))
            }
        };
        let chunks = gaps.len() + 1;
        let tokens = osl.or(r.usage_output_tokens).unwrap_or(chunks as u64);
        let per = u32::try_from((tokens / chunks as u64).max(1)).unwrap_or(u32::MAX);
        let first_extra =
            u32::try_from(tokens.saturating_sub(per as u64 * chunks as u64)).unwrap_or(u32::MAX);
        let overflow = || {
            ImportError::invalid(
                at("inter_chunk_latency"),
                "the response times run past the clock's range",
            )
        };
        let mut t = sent_at.checked_add(ttft).ok_or_else(overflow)?;
        r.chunks.push(Chunk {
            at: t,
            tokens: per.saturating_add(first_extra),
        });
        for g in gaps {
            t = t.checked_add(g).ok_or_else(overflow)?;
            r.chunks.push(Chunk { at: t, tokens: per });
        }
        if r.ended_at.is_none() {
            r.ended_at = Some(t);
        }
    } else if let Some(v) = get("request_latency").filter(|_| r.outcome.is_success()) {
        whole_answer(&mut r, &at("request_latency"), v)?;
    }
    Ok(r)
}

/// No first token, yet an answer: a non-streamed endpoint (embeddings, rankings), whose
/// latency (`v` ms, at JSON path `path`) is its only timing.
fn whole_answer(r: &mut RequestRecord, path: &str, v: &Value) -> Result<(), ImportError> {
    r.response = ResponseForm::Whole;
    if r.ended_at.is_none() {
        let latency = ms_duration(path, number(path, v)?)?;
        r.ended_at = r.sent_at.checked_add(latency);
    }
    Ok(())
}

fn summary(
    obj: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<Summary>, ImportError> {
    let Some(v) = obj.get(key) else {
        return Ok(None);
    };
    let Value::Object(m) = v else {
        return Err(ImportError::invalid(
            format!("$.{key}"),
            format!("expected an object of statistics, found {v}"),
        ));
    };
    let stat = |s: &str| -> Result<Option<f64>, ImportError> {
        match m.get(s) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => number(&format!("$.{key}.{s}"), x).map(Some),
        }
    };
    Ok(Some(Summary {
        mean: stat("avg")?,
        median: stat("p50")?,
        std: stat("std")?,
        min: stat("min")?,
        max: stat("max")?,
        percentiles: PERCENTILES
            .iter()
            .filter(|(k, _)| m.contains_key(*k))
            .map(|(k, p)| {
                Ok(Percentile {
                    p: *p,
                    value: stat(k)?,
                })
            })
            .collect::<Result<_, ImportError>>()?,
    }))
}

/// The statistics aiperf's aggregate JSON writes, by key: `(key, stat)` → value.
struct Stats<'a>(&'a serde_json::Map<String, Value>);

impl Stats<'_> {
    fn avg(&self, key: &str) -> Result<Option<f64>, ImportError> {
        match self.0.get(key).and_then(|v| v.get("avg")) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => number(&format!("$.{key}.avg"), x).map(Some),
        }
    }
    fn count(&self, key: &str) -> Result<Option<u64>, ImportError> {
        match self.avg(key)? {
            None => Ok(None),
            Some(x) => super::round_count(x).map(Some).ok_or_else(|| {
                ImportError::invalid(format!("$.{key}.avg"), format!("{x}: not a count"))
            }),
        }
    }
}

/// A result from aiperf's aggregates, given a way to read each metric's average, summary
/// and count; shared by the JSON and CSV readers.
fn aggregate(
    avg: &dyn Fn(&str) -> Result<Option<f64>, ImportError>,
    summary_of: &dyn Fn(&str) -> Result<Option<Summary>, ImportError>,
    count: &dyn Fn(&str) -> Result<Option<u64>, ImportError>,
) -> Result<BenchmarkResult, ImportError> {
    let ok = count("request_count")?;
    let req_tput = avg("request_throughput")?;
    let duration_ms = match (ok, req_tput) {
        (Some(n), Some(t)) if t > 0.0 => Some(n as f64 / t * 1000.0),
        _ => avg("benchmark_duration")?.map(|s| s * 1000.0),
    };
    Ok(BenchmarkResult {
        meta: RunMeta {
            convention: Some(Convention::Vllm),
            source: Some("aiperf".into()),
            ..RunMeta::default()
        },
        successful_requests: ok,
        failed_requests: count("error_request_count")?.or(ok.map(|_| 0)),
        duration_ms,
        total_input_tokens: count("total_isl")?,
        total_output_tokens: count("total_osl")?.or(count("total_output_tokens")?),
        request_throughput_per_s: req_tput,
        input_throughput_per_s: avg("input_token_throughput")?,
        output_throughput_per_s: avg("output_token_throughput")?,
        total_token_throughput_per_s: avg("total_token_throughput")?,
        e2el: summary_of("request_latency")?,
        ttft: summary_of("time_to_first_token")?,
        tpot: summary_of("inter_token_latency")?,
        itl: summary_of("inter_chunk_latency")?,
        ..BenchmarkResult::default()
    })
}

/// Read `profile_export_aiperf.json` (aiperf's aggregates).
///
/// ```
/// let json = br#"{"schema_version": "1.4", "aiperf_version": "0.13.0", "request_count": {"unit": "requests", "avg": 4.0}, "request_throughput": {"unit": "requests/sec", "avg": 2.0}, "time_to_first_token": {"unit": "ms", "avg": 12.5, "p50": 12.0, "p99": 20.0}}"#;
/// let r = servebench::import::aiperf::aggregate_from_slice(json).unwrap();
/// assert_eq!(r.duration_ms, Some(2000.0));
/// assert_eq!(r.ttft.unwrap().percentile(99.0), Some(20.0));
/// ```
///
/// # Errors
///
/// [`ImportError::Json`] for bytes that are not a JSON object, [`ImportError::Invalid`]
/// (with the JSON path) for a statistic that is not a number,
/// [`ImportError::UnsupportedSchema`] for another major `schema_version`.
pub fn aggregate_from_slice(bytes: &[u8]) -> Result<BenchmarkResult, ImportError> {
    let obj: serde_json::Map<String, Value> = json::parse_slice(bytes, 0)?;
    if let Some(v) = obj.get("schema_version") {
        let s = v.as_str().unwrap_or_default();
        if !s.starts_with("1.") {
            return Err(ImportError::UnsupportedSchema {
                format: "aiperf",
                path: "$.schema_version".into(),
                found: v.to_string(),
            });
        }
    }
    let stats = Stats(&obj);
    let mut r = aggregate(&|k| stats.avg(k), &|k| summary(&obj, k), &|k| {
        stats.count(k)
    })?;
    if r.successful_requests.is_none() {
        return Err(ImportError::invalid(
            "$.request_count",
            "missing: not an aiperf aggregate export",
        ));
    }
    if let Some(v) = obj.get("aiperf_version").and_then(Value::as_str) {
        r.meta.source = Some(format!("aiperf {v}"));
    }
    r.meta.model = obj
        .get("input_config")
        .and_then(|c| c.pointer("/models/items/0/name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    // The concurrency aiperf was configured with: its profiling phase's `concurrency`.
    r.meta.configured_concurrency = obj
        .get("input_config")
        .and_then(|c| c.get("phases"))
        .and_then(Value::as_array)
        .and_then(|phases| {
            phases
                .iter()
                .find(|p| p.get("kind").and_then(Value::as_str) == Some("profiling"))
        })
        .and_then(|p| p.get("concurrency"))
        .and_then(Value::as_u64);
    Ok(r)
}

/// aiperf's CSV headers (`Time to First Token (ms)`) → the JSON keys it writes them from.
const CSV_NAMES: [(&str, &str); 16] = [
    ("Request Latency (ms)", "request_latency"),
    ("Time to First Token (ms)", "time_to_first_token"),
    ("Inter Token Latency (ms)", "inter_token_latency"),
    ("Inter Chunk Latency (ms)", "inter_chunk_latency"),
    ("Request Throughput (requests/sec)", "request_throughput"),
    ("Request Count", "request_count"),
    ("Request Count (requests)", "request_count"),
    ("Error Request Count", "error_request_count"),
    (
        "Output Token Throughput (tokens/sec)",
        "output_token_throughput",
    ),
    (
        "Input Token Throughput (tokens/sec)",
        "input_token_throughput",
    ),
    (
        "Total Token Throughput (tokens/sec)",
        "total_token_throughput",
    ),
    ("Total Input Sequence Length (tokens)", "total_isl"),
    ("Total Output Sequence Length (tokens)", "total_osl"),
    ("Total Output Tokens (tokens)", "total_output_tokens"),
    ("Benchmark Duration (sec)", "benchmark_duration"),
    ("Error Request Count (requests)", "error_request_count"),
];

/// Read `profile_export_aiperf.csv`: a table of per-request statistics (`Metric,avg,min,
/// max,sum,p1,…,std`), a blank line, then `Metric,Value` rows of run-level figures.
///
/// # Errors
///
/// [`ImportError::Csv`] (line and column) for a row that is not CSV or a cell that is not
/// a number; [`ImportError::Invalid`] when the request count is missing.
pub fn csv_from_slice(bytes: &[u8]) -> Result<BenchmarkResult, ImportError> {
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut header: Vec<String> = Vec::new();
    // key → (stat → value)
    let mut table: std::collections::HashMap<&'static str, Vec<(String, f64)>> =
        std::collections::HashMap::new();
    let mut row = ::csv::StringRecord::new();
    while rdr.read_record(&mut row).map_err(|e| csv_error(&e))? {
        let line = row
            .position()
            .map_or(0, |p| crate::import::line_at(bytes, p.byte()));
        let first = row.get(0).unwrap_or_default();
        if first == "Metric" {
            header = row.iter().map(str::to_string).collect();
            continue;
        }
        let Some(&(_, key)) = CSV_NAMES.iter().find(|(h, _)| *h == first) else {
            continue; // a metric servebench does not use
        };
        let mut stats = Vec::new();
        for (i, cell) in row.iter().enumerate().skip(1) {
            if cell.is_empty() {
                continue;
            }
            let col = header
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("#{}", i + 1));
            let col = if col == "Value" {
                "avg".to_string()
            } else {
                col
            };
            let x: f64 = cell.parse().map_err(|_| ImportError::Csv {
                line,
                column: Some(col.clone()),
                message: format!("`{cell}` in row `{first}` is not a number"),
            })?;
            stats.push((col, x));
        }
        table.insert(key, stats);
    }
    let get = |key: &str, stat: &str| -> Option<f64> {
        table
            .get(key)?
            .iter()
            .find(|(s, _)| s == stat)
            .map(|(_, v)| *v)
    };
    let avg = |k: &str| Ok(get(k, "avg"));
    let count = |k: &str| Ok(get(k, "avg").and_then(super::round_count));
    let summary_of = |k: &str| -> Result<Option<Summary>, ImportError> {
        if !table.contains_key(k) {
            return Ok(None);
        }
        Ok(Some(Summary {
            mean: get(k, "avg"),
            median: get(k, "p50"),
            std: get(k, "std"),
            min: get(k, "min"),
            max: get(k, "max"),
            percentiles: PERCENTILES
                .iter()
                .filter_map(|(s, p)| {
                    get(k, s).map(|v| Percentile {
                        p: *p,
                        value: Some(v),
                    })
                })
                .collect(),
        }))
    };
    if !table.contains_key("request_count") {
        return Err(ImportError::Csv {
            line: 1,
            column: None,
            message: "no `Request Count` row: not an aiperf aggregate export".into(),
        });
    }
    aggregate(&avg, &summary_of, &count)
}

fn csv_error(e: &::csv::Error) -> ImportError {
    ImportError::Csv {
        line: e.position().map_or(0, |p| p.line() as usize),
        column: None,
        message: e.to_string(),
    }
}
