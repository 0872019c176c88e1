//! From guidellm's raw structures to [`GuidellmBenchmark`]s: each benchmark's aggregates
//! mapped onto the report rows, its requests to records (on several threads for large
//! lists), its measured window and counts.

use std::time::Duration;

use chrono::{DateTime, FixedOffset, TimeZone, Utc};

use super::raw::*;
use super::report::{
    unsupported, Counts, GuidellmBenchmark, GuidellmReport, RequestCounts, Schema,
};
use super::request::{classify_error, offset, reconstruct_chunks, times, Times};
use crate::import::{round_count, ImportError};
use crate::record::{Outcome, RequestRecord, ResponseForm};
use crate::result::{BenchmarkResult, Convention, Percentile, RunMeta, Summary};

/// Convert the parsed report, using up to `threads` threads for large benchmarks.
pub(super) fn convert<L: RequestList>(
    raw: RawReport<L>,
    threads: usize,
) -> Result<GuidellmReport, ImportError> {
    let benchmarks = raw.benchmarks.ok_or_else(|| ImportError::Invalid {
        path: "$".into(),
        message: "no `benchmarks` list: not a guidellm report".into(),
    })?;
    if let Some(b) = benchmarks.first() {
        if b.benchmarks.is_some() {
            return Err(ImportError::UnsupportedSchema {
                format: "guidellm",
                path: "$.benchmarks[0].benchmarks".into(),
                found:
                    "an early guidellm layout: nested benchmark lists, no precomputed statistics"
                        .into(),
            });
        }
    }
    let (schema, guidellm_version) = match &raw.metadata {
        Some(m) => match m.version {
            Some(1) => (Schema::V1, m.guidellm_version.clone()),
            Some(2) => (Schema::V2, m.guidellm_version.clone()),
            Some(v) => return Err(unsupported(v)),
            None => {
                return Err(ImportError::UnsupportedSchema {
                    format: "guidellm",
                    path: "$.metadata".into(),
                    found: "no `version`".into(),
                })
            }
        },
        None if raw.args.is_some() => (Schema::V04, None),
        None if benchmarks.first().is_some_and(|b| b.run_stats.is_some()) => {
            (Schema::Legacy02, None)
        }
        None => (Schema::V04, None),
    };
    if benchmarks.is_empty() {
        return Err(ImportError::Empty {
            path: "$.benchmarks".into(),
        });
    }
    let source = match &guidellm_version {
        Some(v) => format!("guidellm {v}"),
        None => "guidellm".to_string(),
    };
    let benchmarks = benchmarks
        .into_iter()
        .enumerate()
        .map(|(i, b)| convert_benchmark(i, b, &source, threads))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GuidellmReport {
        schema,
        guidellm_version,
        benchmarks,
    })
}

fn strategy_label(s: Option<&RawStrategy>) -> String {
    let Some(s) = s else {
        return "benchmark".into();
    };
    let kind = s.type_.clone().unwrap_or_else(|| "benchmark".into());
    let num = |v: &Option<serde_json::Value>| -> Option<f64> {
        match v {
            Some(serde_json::Value::Number(n)) => n.as_f64(),
            Some(serde_json::Value::Array(a)) => a.first().and_then(|x| x.as_f64()),
            _ => None,
        }
    };
    match kind.as_str() {
        "constant" | "poisson" | "async" => match num(&s.rate) {
            Some(r) => format!("{kind}@{r:.2}"),
            None => kind,
        },
        "concurrent" => match num(&s.streams) {
            Some(n) => format!("{kind}@{n}"),
            None => kind,
        },
        _ => kind,
    }
}

/// A concurrent profile's `streams`: the concurrency guidellm was configured with.
fn strategy_streams(s: Option<&RawStrategy>) -> Option<u64> {
    let s = s?;
    if s.type_.as_deref() != Some("concurrent") {
        return None;
    }
    match &s.streams {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::Array(a)) => a.first().and_then(|x| x.as_f64()),
        _ => None,
    }
    .and_then(round_count)
}

fn strategy_rate(s: Option<&RawStrategy>) -> Option<f64> {
    let s = s?;
    match s.type_.as_deref() {
        Some("constant" | "poisson" | "async") => {}
        _ => return None,
    }
    match &s.rate {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::Array(a)) => a.first().and_then(|x| x.as_f64()),
        _ => None,
    }
    .filter(|r| r.is_finite() && *r > 0.0)
}

fn summary(d: Option<&RawStatusDist>, scale: f64) -> Option<Summary> {
    let d = d?.successful.as_ref()?;
    let s = |v: Option<f64>| v.map(|x| x * scale);
    let mut percentiles = Vec::new();
    if let Some(p) = &d.percentiles {
        let p50 = p.p50.or(d.median);
        for (rank, v) in [
            (0.1, p.p001),
            (1.0, p.p01),
            (5.0, p.p05),
            (10.0, p.p10),
            (25.0, p.p25),
            (50.0, p50),
            (75.0, p.p75),
            (90.0, p.p90),
            (95.0, p.p95),
            (99.0, p.p99),
            (99.9, p.p999),
        ] {
            percentiles.push(Percentile {
                p: rank,
                value: s(v),
            });
        }
    }
    Some(Summary {
        mean: s(d.mean),
        median: s(d
            .median
            .or_else(|| d.percentiles.as_ref().and_then(|p| p.p50))),
        std: s(d.std_dev),
        min: s(d.min),
        max: s(d.max),
        percentiles,
    })
}

fn dist(d: Option<&RawStatusDist>) -> Option<&RawDist> {
    d?.successful.as_ref()
}

fn finite_non_negative(v: Option<f64>, path: &str, what: &str) -> Result<Option<f64>, ImportError> {
    match v {
        Some(x) if !x.is_finite() => {
            Err(ImportError::invalid(path, format!("{what} is not finite")))
        }
        Some(x) if x < 0.0 => Err(ImportError::invalid(
            path,
            format!("{what} is negative ({x})"),
        )),
        other => Ok(other),
    }
}

struct Listed<'a> {
    status: Status,
    index: usize,
    raw: &'a RawRequest,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Successful,
    Errored,
    Incomplete,
}

impl Status {
    fn key(self) -> &'static str {
        match self {
            Status::Successful => "successful",
            Status::Errored => "errored",
            Status::Incomplete => "incomplete",
        }
    }
}

/// Benchmarks with at least this many listed requests convert on several threads (when
/// the caller offers them).
const PARALLEL_RECORDS: usize = 2048;

/// Requests per part of a parallel conversion.
const PART_RECORDS: usize = 256;

fn convert_benchmark<L: RequestList>(
    i: usize,
    b: RawBenchmark<L>,
    source: &str,
    threads: usize,
) -> Result<GuidellmBenchmark, ImportError> {
    let bp = format!("$.benchmarks[{i}]");
    let strategy = b
        .config
        .as_ref()
        .and_then(|c| c.strategy.as_ref())
        .or_else(|| b.args.as_ref().and_then(|a| a.strategy.as_ref()));
    let name = strategy_label(strategy);

    // Window.
    let sm = b.scheduler_metrics.as_ref();
    let w_start = b.start_time.or(sm.and_then(|s| s.measure_start_time));
    let w_end = b.end_time.or(sm.and_then(|s| s.measure_end_time));
    let w_start = finite_non_negative(w_start, &format!("{bp}.start_time"), "the window start")?;
    let w_end = finite_non_negative(w_end, &format!("{bp}.end_time"), "the window end")?;
    if let (Some(s), Some(e)) = (w_start, w_end) {
        if e < s {
            return Err(ImportError::invalid(
                format!("{bp}.end_time"),
                format!("the measured window ends {:.6} s before it starts", s - e),
            ));
        }
    }
    let duration_s = match b.duration {
        Some(d) => Some(d),
        None => match (w_start, w_end) {
            (Some(s), Some(e)) => Some(e - s),
            _ => None,
        },
    };
    let duration_s = finite_non_negative(
        duration_s,
        &format!("{bp}.duration"),
        "the benchmark duration",
    )?
    .ok_or_else(|| ImportError::invalid(format!("{bp}.duration"), "missing or not finite"))?;

    // Requests.
    let mut listed: Vec<Listed> = Vec::new();
    if let Some(reqs) = &b.requests {
        for (status, list) in [
            (Status::Successful, &reqs.successful),
            (Status::Errored, &reqs.errored),
            (Status::Incomplete, &reqs.incomplete),
        ] {
            for (index, raw) in list.iter().flat_map(L::requests).enumerate() {
                listed.push(Listed { status, index, raw });
            }
        }
    }

    let reported = b
        .metrics
        .as_ref()
        .and_then(|m| m.request_totals)
        .or(b.request_totals)
        .map(|t| RequestCounts {
            successful: t.successful.unwrap_or(0),
            errored: t.errored.unwrap_or(0),
            incomplete: t.incomplete.unwrap_or(0),
        });
    if reported.is_none_or(|r| r.total() == 0) && listed.is_empty() {
        return Err(ImportError::Empty { path: bp });
    }

    // Origin: the earliest timestamp we convert.
    // (The times are resolved again for each record below: cheaper than keeping them.)
    let mut origin = f64::INFINITY;
    for t in listed.iter().map(|l| times(l.raw)) {
        for v in [
            t.scheduled,
            t.start,
            t.first,
            t.last,
            t.end,
            t.end_for_window,
        ]
        .into_iter()
        .flatten()
        {
            if v.is_finite() && v < origin {
                origin = v;
            }
        }
    }
    for v in [w_start, w_end].into_iter().flatten() {
        if v < origin {
            origin = v;
        }
    }
    if !origin.is_finite() {
        origin = 0.0;
    }
    // Paths are only formatted on the error path: this runs once per chunk.
    let at = |v: f64, path: &dyn Fn() -> String| -> Result<Duration, ImportError> {
        offset(v - origin).ok_or_else(|| {
            ImportError::invalid(
                path(),
                format!("timestamp {v} is not a finite time after {origin}"),
            )
        })
    };

    // One record; `n` is its index in `listed`.
    let one = |n: usize, l: &Listed<'_>, t: &Times| -> Result<(RequestRecord, bool), ImportError> {
        let tp = |field: &str| {
            format!(
                "{bp}.requests.{}[{}].info.timings.{field}",
                l.status.key(),
                l.index
            )
        };
        let start = t
            .start
            .ok_or_else(|| ImportError::invalid(tp("request_start"), "missing or not finite"))?;
        let sent_at = at(start, &|| tp("request_start"))?;
        let ended_at = match t.end {
            Some(e) => {
                if e < start {
                    return Err(ImportError::invalid(
                        tp("request_end"),
                        format!("the request ends {:.6} s before it starts", start - e),
                    ));
                }
                Some(at(e, &|| tp("request_end"))?)
            }
            None => None,
        };
        let output_tokens = l.raw.output_tokens;
        // A completed request with no token iteration at all: an answer that came whole
        // (guidellm's `/v1/embeddings` requests, `stream: false`); its latency is its only
        // timing, and no chunk is made up for it.
        let whole = matches!(l.status, Status::Successful)
            && t.iterations == Some(0)
            && t.first.is_none()
            && ended_at.is_some();
        let chunks = if whole {
            Vec::new()
        } else {
            reconstruct_chunks(t, output_tokens, at, &tp)?
        };
        let message = l
            .raw
            .info
            .as_ref()
            .and_then(|i| i.error.clone())
            .or_else(|| l.raw.error.clone());
        let outcome = match l.status {
            Status::Successful => Outcome::Success,
            Status::Errored => {
                let message = message.unwrap_or_else(|| "errored".into());
                Outcome::Error {
                    kind: classify_error(&message),
                    message,
                }
            }
            Status::Incomplete => Outcome::Incomplete {
                reason: message
                    .or_else(|| l.raw.info.as_ref().and_then(|i| i.status.clone()))
                    .unwrap_or_else(|| "cancelled".into()),
            },
        };
        let record = RequestRecord {
            id: n as u64,
            scheduled_at: match t.scheduled {
                Some(s) => Some(at(s, &|| tp("targeted_start"))?),
                None => None,
            },
            sent_at,
            ended_at,
            chunks,
            prompt_tokens: l.raw.prompt_tokens,
            usage_prompt_tokens: None,
            usage_output_tokens: output_tokens,
            outcome,
            turn: None,
            reasoning: None,
            adapter: None,
            response: if whole {
                ResponseForm::Whole
            } else {
                ResponseForm::Streamed
            },
            inputs: None,
            images: None,
            checks: None,
        };
        // guidellm's get_within_range.
        let inside = match (w_start, w_end, t.end_for_window) {
            (Some(ws), Some(we), Some(end)) => end >= ws && start <= we,
            _ => true,
        };
        Ok((record, inside))
    };
    // The records of `listed[from..to]`, appended to `out` (and whether each is in the
    // window, to `inside`).
    let convert_range = |from: usize,
                         to: usize,
                         out: &mut Vec<RequestRecord>,
                         inside: &mut Vec<bool>|
     -> Result<(), ImportError> {
        for (k, l) in listed[from..to].iter().enumerate() {
            let (record, is_inside) = one(from + k, l, &times(l.raw))?;
            out.push(record);
            inside.push(is_inside);
        }
        Ok(())
    };
    // Requests convert independently: a large benchmark in consecutive parts that
    // `threads` threads take in turn (a thread that is slower, or whose fresh memory
    // costs more, takes fewer), appended in order; errors are taken in order (the first
    // is the sequential one).
    let mut records = Vec::with_capacity(listed.len());
    let mut in_window = Vec::with_capacity(listed.len());
    if threads > 1 && listed.len() >= PARALLEL_RECORDS {
        let nparts = listed.len().div_ceil(PART_RECORDS);
        let parts = super::parallel::run_all(nparts, threads, &|i| {
            let (from, to) = (i * PART_RECORDS, ((i + 1) * PART_RECORDS).min(listed.len()));
            let mut out = Vec::with_capacity(to - from);
            let mut inside = Vec::with_capacity(to - from);
            convert_range(from, to, &mut out, &mut inside).map(|()| (out, inside))
        })
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
        for part in parts {
            let (mut out, mut inside) = part?;
            records.append(&mut out);
            in_window.append(&mut inside);
        }
    } else {
        convert_range(0, listed.len(), &mut records, &mut in_window)?;
    }
    let mut counts = Counts {
        reported,
        ..Counts::default()
    };
    for (l, &inside) in listed.iter().zip(&in_window) {
        let bump = |c: &mut RequestCounts| match l.status {
            Status::Successful => c.successful += 1,
            Status::Errored => c.errored += 1,
            Status::Incomplete => c.incomplete += 1,
        };
        bump(&mut counts.listed);
        if inside {
            bump(&mut counts.in_window);
        }
    }

    // Aggregates, GPUStack's mapping.
    let m = b.metrics.as_ref();
    let successful = reported
        .map(|r| r.successful)
        .unwrap_or(counts.in_window.successful);
    let failed = reported
        .map(|r| r.errored.saturating_add(r.incomplete))
        .unwrap_or(counts.in_window.errored + counts.in_window.incomplete);
    let mean_times = |d: Option<&RawStatusDist>| -> Option<u64> {
        dist(d)
            .and_then(|d| d.mean)
            .and_then(|mean| round_count(mean * successful as f64))
    };
    let concurrency_max = dist(m.and_then(|m| m.request_concurrency.as_ref())).and_then(|d| d.max);
    let model = b
        .config
        .as_ref()
        .and_then(|c| c.backend.as_ref())
        .and_then(|bk| bk.model.clone())
        .or_else(|| b.worker.as_ref().and_then(|w| w.backend_model.clone()))
        .filter(|s| !s.is_empty());
    let result = BenchmarkResult {
        meta: RunMeta {
            label: Some(name.clone()),
            date: w_start.and_then(epoch_to_date),
            model,
            convention: Some(Convention::Guidellm),
            source: Some(source.to_string()),
            configured_concurrency: strategy_streams(strategy),
            ..RunMeta::default()
        },
        successful_requests: Some(successful),
        failed_requests: Some(failed),
        max_concurrency: concurrency_max.and_then(round_count),
        request_rate_configured: strategy_rate(strategy),
        duration_ms: Some(duration_s * 1000.0),
        total_input_tokens: mean_times(m.and_then(|m| m.prompt_token_count.as_ref())),
        total_output_tokens: mean_times(m.and_then(|m| m.output_token_count.as_ref())),
        request_throughput_per_s: dist(m.and_then(|m| m.requests_per_second.as_ref()))
            .and_then(|d| d.mean),
        output_throughput_per_s: dist(m.and_then(|m| m.output_tokens_per_second.as_ref()))
            .and_then(|d| d.mean),
        peak_output_throughput_per_s: dist(m.and_then(|m| m.output_tokens_per_second.as_ref()))
            .and_then(|d| d.max),
        peak_concurrent_requests: concurrency_max,
        total_token_throughput_per_s: dist(m.and_then(|m| m.tokens_per_second.as_ref()))
            .and_then(|d| d.mean),
        e2el: summary(m.and_then(|m| m.request_latency.as_ref()), 1000.0),
        ttft: summary(m.and_then(|m| m.time_to_first_token_ms.as_ref()), 1.0),
        tpot: summary(m.and_then(|m| m.time_per_output_token_ms.as_ref()), 1.0),
        itl: summary(m.and_then(|m| m.inter_token_latency_ms.as_ref()), 1.0),
        ..BenchmarkResult::default()
    };

    let window_start = match w_start {
        Some(s) => at(s, &|| format!("{bp}.start_time"))?,
        None => Duration::ZERO,
    };
    let window_end = match w_end {
        Some(e) => at(e, &|| format!("{bp}.end_time"))?,
        None => Duration::try_from_secs_f64(duration_s)
            .ok()
            .and_then(|d| window_start.checked_add(d))
            .ok_or_else(|| {
                ImportError::invalid(
                    format!("{bp}.duration"),
                    format!("the window ends past the clock's range ({duration_s} s)"),
                )
            })?,
    };
    Ok(GuidellmBenchmark {
        name,
        result,
        records,
        in_window,
        window_start,
        window_end,
        origin_unix_s: origin,
        counts,
    })
}

fn epoch_to_date(t: f64) -> Option<DateTime<FixedOffset>> {
    if !t.is_finite() {
        return None;
    }
    let secs = t.floor();
    let nanos = ((t - secs) * 1e9) as u32;
    Utc.timestamp_opt(secs as i64, nanos.min(999_999_999))
        .single()
        .map(|d| d.fixed_offset())
}
