//! What a lint finds ([`Finding`]: its [`Code`], [`Severity`] and [`Evidence`]), the
//! options lints take, and the small helpers every check shares.

use serde::{Deserialize, Serialize};

use crate::result::BenchmarkResult;

/// guidellm's default cap on requests in flight (`settings.max_concurrency`).
pub const GUIDELLM_DEFAULT_MAX_CONCURRENCY: u64 = 512;

/// Relative tolerance of the consistency checks (2 %).
pub const TOLERANCE: f64 = 0.02;

/// A lint's stable identifier (kebab-case in text and JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// Most streams had one counted token iteration: TPOT/ITL invalid.
    SingleIterationStreams,
    /// Mean TPOT equals ΣTTFT/Σoutput.
    TpotFromTtft,
    /// A peak output throughput no window allows.
    ImpossiblePeak,
    /// Concurrency pinned at the client's cap.
    ClientCapped,
    /// All requests in flight at once.
    SingleBurst,
    /// Success rate below 100 %.
    PartialSuccess,
    /// A comparison uses a partially successful run.
    PartialSuccessComparison,
    /// A comparison mixes metric conventions.
    MixedConventions,
    /// Totals, throughputs and duration disagree.
    InconsistentTotals,
    /// Percentiles out of order.
    PercentileOrder,
    /// A zero TTFT or E2E latency.
    ZeroLatency,
    /// A negative or non-finite latency, duration or throughput.
    InvalidValue,
    /// A peak output throughput below the mean output throughput.
    PeakBelowMean,
    /// A record whose times are out of order (a chunk before the send, an end before it).
    ImpossibleTiming,
    /// Requests refused for exceeding the model's context (a rerank query and document,
    /// an embeddings input, a prompt and its output budget).
    ContextExceeded,
    /// Tool calls that never (or seldom) parse and match their tool's schema.
    InvalidToolCalls,
    /// Structured answers that never (or seldom) follow the response format's schema.
    InvalidStructuredOutput,
}

impl Code {
    /// Every code, in documentation order.
    pub const ALL: [Code; 17] = [
        Code::SingleIterationStreams,
        Code::TpotFromTtft,
        Code::ImpossiblePeak,
        Code::ClientCapped,
        Code::SingleBurst,
        Code::PartialSuccess,
        Code::PartialSuccessComparison,
        Code::MixedConventions,
        Code::InconsistentTotals,
        Code::PercentileOrder,
        Code::ZeroLatency,
        Code::InvalidValue,
        Code::PeakBelowMean,
        Code::ImpossibleTiming,
        Code::ContextExceeded,
        Code::InvalidToolCalls,
        Code::InvalidStructuredOutput,
    ];

    /// The stable kebab-case name (`single-iteration-streams`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::SingleIterationStreams => "single-iteration-streams",
            Code::TpotFromTtft => "tpot-from-ttft",
            Code::ImpossiblePeak => "impossible-peak",
            Code::ClientCapped => "client-capped",
            Code::SingleBurst => "single-burst",
            Code::PartialSuccess => "partial-success",
            Code::PartialSuccessComparison => "partial-success-comparison",
            Code::MixedConventions => "mixed-conventions",
            Code::InconsistentTotals => "inconsistent-totals",
            Code::PercentileOrder => "percentile-order",
            Code::ZeroLatency => "zero-latency",
            Code::InvalidValue => "invalid-value",
            Code::PeakBelowMean => "peak-below-mean",
            Code::ImpossibleTiming => "impossible-timing",
            Code::ContextExceeded => "context-exceeded",
            Code::InvalidToolCalls => "invalid-tool-calls",
            Code::InvalidStructuredOutput => "invalid-structured-output",
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Probably misleading.
    Warning,
    /// The number cannot be true or does not measure what its label says.
    Error,
}

/// One number a finding is based on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What the number is, with its unit (`median_itl_ms`, `peak_output_tok_per_s`).
    pub name: String,
    /// The value.
    pub value: f64,
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable code.
    pub code: Code,
    /// Severity.
    pub severity: Severity,
    /// One-sentence explanation.
    pub message: String,
    /// The numbers behind it.
    pub evidence: Vec<Evidence>,
}

/// A number as findings spell it in messages and evidence: integers without decimals,
/// two decimals from 100 up, else four.
pub(crate) fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// Knobs for the lints. `Default` is right for most uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LintOptions {
    /// Requests the run was meant to send (a profile's `total_requests`), when the result
    /// does not say; used by `partial-success`.
    pub expected_requests: Option<u64>,
    /// The client's concurrency cap, when the result does not say; used by
    /// `client-capped`.
    pub client_cap: Option<u64>,
}

pub(crate) fn ev(name: &str, value: f64) -> Evidence {
    Evidence {
        name: name.to_string(),
        value,
    }
}

pub(crate) fn finding(
    code: Code,
    severity: Severity,
    message: String,
    evidence: Vec<Evidence>,
) -> Finding {
    Finding {
        code,
        severity,
        message,
        evidence,
    }
}

pub(crate) fn rel_diff(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// "Prints as 0.00": below half a hundredth of a millisecond.
pub(crate) fn is_zero_ms(v: f64) -> bool {
    v.abs() < 0.005
}

/// Requests the run was meant to send, when known.
pub(crate) fn total_requests(r: &BenchmarkResult, opts: &LintOptions) -> Option<u64> {
    opts.expected_requests
        .or_else(|| r.meta.profile.as_ref().map(|p| p.total_requests))
        .or_else(|| Some(r.successful_requests?.saturating_add(r.failed_requests?)))
}
