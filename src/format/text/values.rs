//! Between rows and the result schema: a row's value in its printed unit (seconds rows
//! converted at the edge), writing a parsed value into the result, and the value text.

use super::vocabulary::*;
use crate::format::pyfmt;
use crate::result::{BenchmarkResult, Percentile};

/// A row's value in the unit it is printed in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Value {
    Missing,
    Int(u64),
    Float(f64),
}

pub(super) fn value_of(r: &BenchmarkResult, row: &Row) -> Value {
    let int = |v: Option<u64>| v.map_or(Value::Missing, Value::Int);
    let float = |v: Option<f64>| v.map_or(Value::Missing, Value::Float);
    match *row {
        Row::Header(_) => Value::Missing,
        Row::Field(f) => match f {
            Field::SuccessfulRequests => int(r.successful_requests),
            Field::FailedRequests => int(r.failed_requests),
            Field::MaxConcurrency => int(r.max_concurrency),
            Field::RequestRateConfigured => float(r.request_rate_configured),
            Field::Duration => float(r.duration_ms.map(ms_to_s)),
            Field::TotalInputTokens => int(r.total_input_tokens),
            Field::TotalGeneratedTokens => int(r.total_output_tokens),
            Field::RequestThroughput => float(r.request_throughput_per_s),
            Field::RequestGoodput => float(r.request_goodput_per_s),
            Field::InputThroughput => float(r.inputs_per_s),
            Field::InputTokenThroughput => float(r.input_throughput_per_s),
            Field::OutputTokenThroughput => float(r.output_throughput_per_s),
            Field::PeakOutputThroughput => float(r.peak_output_throughput_per_s),
            Field::PeakConcurrentRequests => float(r.peak_concurrent_requests),
            Field::TotalTokenThroughput | Field::TotalTokenThroughputCapital => {
                float(r.total_token_throughput_per_s)
            }
        },
        Row::Stat(s, st) => {
            let Some(summary) = s.metric().get(r) else {
                return Value::Missing;
            };
            let v = match st {
                Stat::Mean => summary.mean,
                Stat::Median => summary.median,
                Stat::Percentile(p) => summary.percentile(p),
            };
            float(if s.in_seconds() { v.map(ms_to_s) } else { v })
        }
    }
}

pub(super) fn ms_to_s(ms: f64) -> f64 {
    ms / 1000.0
}

/// Writes `v` (in the row's printed unit, ms for the seconds rows already converted) into
/// the result.
pub(super) fn set_value(r: &mut BenchmarkResult, row: &Row, v: Value) {
    let int = match v {
        Value::Int(i) => Some(i),
        _ => None,
    };
    let float = match v {
        Value::Float(x) => Some(x),
        _ => None,
    };
    match *row {
        Row::Header(s) => {
            s.metric().slot(r);
        }
        Row::Field(f) => match f {
            Field::SuccessfulRequests => r.successful_requests = int,
            Field::FailedRequests => r.failed_requests = int,
            Field::MaxConcurrency => r.max_concurrency = int,
            Field::RequestRateConfigured => r.request_rate_configured = float,
            Field::Duration => r.duration_ms = float,
            Field::TotalInputTokens => r.total_input_tokens = int,
            Field::TotalGeneratedTokens => r.total_output_tokens = int,
            Field::RequestThroughput => r.request_throughput_per_s = float,
            Field::RequestGoodput => r.request_goodput_per_s = float,
            Field::InputThroughput => r.inputs_per_s = float,
            Field::InputTokenThroughput => r.input_throughput_per_s = float,
            Field::OutputTokenThroughput => r.output_throughput_per_s = float,
            Field::PeakOutputThroughput => r.peak_output_throughput_per_s = float,
            Field::PeakConcurrentRequests => r.peak_concurrent_requests = float,
            Field::TotalTokenThroughput | Field::TotalTokenThroughputCapital => {
                r.total_token_throughput_per_s = float
            }
        },
        Row::Stat(s, st) => {
            let summary = s.metric().slot(r);
            match st {
                Stat::Mean => summary.mean = float,
                Stat::Median => summary.median = float,
                Stat::Percentile(p) => summary.percentiles.push(Percentile { p, value: float }),
            }
        }
    }
}

/// The value text of a row: `N/A`, an integer, or `.2f` (Python `int` form when
/// `int_valued` and the value is still integral).
pub(super) fn format_value(v: Value, int_valued: bool) -> String {
    match v {
        Value::Missing => "N/A".to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => {
            if int_valued && x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
                // Python's str(int): no sign on zero.
                format!("{}", if x == 0.0 { 0 } else { x as i64 })
            } else {
                pyfmt::fixed(x, 2)
            }
        }
    }
}
