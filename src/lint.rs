//! Lints: findings about measurements that cannot be true, or that do not mean what their
//! label says.
//!
//! The seed study is the motivating case: its vLLM runs with `--reasoning-parser=qwen3`
//! streamed reasoning tokens that the client did not count, so guidellm saw one token
//! iteration per request. Its "Median ITL" is 0.00, its "Mean TPOT" is ΣTTFT/Σoutput, its
//! "Peak output token throughput" is 3×10⁷ tok/s, and its "Total TPS" is not
//! tokens/duration. [`lint_result`] finds all of that from the printed block alone;
//! [`lint_records`] finds the cause from per-request records.
//!
//! Every [`Finding`] has a stable [`Code`], a [`Severity`], a message and the numbers it
//! is based on ([`Evidence`]).
//!
//! # Codes
//!
//! | code | severity | what it means |
//! |---|---|---|
//! | `single-iteration-streams` | error | Most requests streamed a single counted token iteration (first token = last token). Seen from records (≤ 1 chunk for > 50 % of successful multi-token requests) or from a result whose Median ITL is 0: ITL and TPOT then measure nothing but the TTFT. |
//! | `tpot-from-ttft` | error | Mean TPOT equals ΣTTFT/Σoutput (within 2 %): with guidellm's TPOT (which includes the TTFT) this happens exactly when no decode time was observed. |
//! | `impossible-peak` | error / warning | Peak output token throughput above the run's total output tokens (no 1-second window can hold more tokens than exist: error); above what the peak number of concurrent streams can emit at the median ITL (×2 slack), or more than 20× the mean output throughput (warning). |
//! | `client-capped` | warning | Observed peak concurrency (servebench's exact peak in flight when the result has it; never vLLM's per-1-second-bucket count) reached the client's concurrency cap while more requests were waiting: the client, not the server, limited the load. The cap is [`LintOptions::client_cap`], else the profile's, else guidellm's default 512 for guidellm results, else a vLLM result's `max_concurrency`. |
//! | `single-burst` | warning | Peak concurrency (as for `client-capped`) equals the number of requests: every request was in flight at once, so the run measures one burst, not a steady state. |
//! | `partial-success` | error below 90 %, else warning | Fewer successful requests than requests sent. |
//! | `partial-success-comparison` | error | A comparison uses a run with partial success (see [`lint_comparison`]). |
//! | `mixed-conventions` | warning | A comparison mixes results computed under different metric conventions. |
//! | `inconsistent-totals` | warning | Token totals, request count, duration and the reported throughputs disagree by more than 2 % (tokens/duration vs output, total-token and request throughput). |
//! | `percentile-order` | error | A summary whose percentiles are not non-decreasing, whose median is outside its neighbouring percentiles or differs from its p50, or whose mean/percentiles fall outside [min, max]. |
//! | `zero-latency` | error | A TTFT or E2E latency mean/median of 0: impossible for requests that succeeded. |
//! | `invalid-value` | error | A latency statistic, the duration or a throughput that is negative or infinite, or NaN although requests succeeded (a text report can print `nan`/`inf`, a Python client writes `NaN`). |
//!
//! [`lint_bytes`] / [`lint_path`] lint whole files as `servebench lint` does (text reports
//! with the metadata written around each block, servebench JSON results, guidellm, vLLM and
//! SGLang files); [`render_text`] prints one finding per line, [`render_json`] a JSON array;
//! [`exit_code`] gives the command's status ([`EXIT_CLEAN`] 0, [`EXIT_FINDINGS`] 3;
//! [`EXIT_BAD_INPUT`] 1 and [`EXIT_USAGE`] 2 are the CLI's).
//!
//! ```
//! use servebench::lint::{lint_result, Code, LintOptions};
//! use servebench::result::{BenchmarkResult, Summary};
//! let r = BenchmarkResult {
//!     successful_requests: Some(100),
//!     duration_ms: Some(10_000.0),
//!     total_output_tokens: Some(10_000),
//!     output_throughput_per_s: Some(1_000.0),
//!     peak_output_throughput_per_s: Some(3.0e7),
//!     itl: Some(Summary { mean: Some(1.0), median: Some(0.0), ..Default::default() }),
//!     ..Default::default()
//! };
//! let codes: Vec<Code> = lint_result(&r, &LintOptions::default()).iter().map(|f| f.code).collect();
//! assert!(codes.contains(&Code::SingleIterationStreams));
//! assert!(codes.contains(&Code::ImpossiblePeak));
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, Convention, Summary};

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
}

impl Code {
    /// Every code, in documentation order.
    pub const ALL: [Code; 12] = [
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
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
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

impl fmt::Display for Finding {
    /// `error[impossible-peak]: message (name=value, …)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)?;
        if !self.evidence.is_empty() {
            f.write_str(" (")?;
            for (i, e) in self.evidence.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}={}", e.name, fmt_num(e.value))?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

fn fmt_num(v: f64) -> String {
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

fn ev(name: &str, value: f64) -> Evidence {
    Evidence {
        name: name.to_string(),
        value,
    }
}

fn finding(code: Code, severity: Severity, message: String, evidence: Vec<Evidence>) -> Finding {
    Finding {
        code,
        severity,
        message,
        evidence,
    }
}

fn rel_diff(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// "Prints as 0.00": below half a hundredth of a millisecond.
fn is_zero_ms(v: f64) -> bool {
    v.abs() < 0.005
}

/// Requests the run was meant to send, when known.
fn total_requests(r: &BenchmarkResult, opts: &LintOptions) -> Option<u64> {
    opts.expected_requests
        .or_else(|| r.meta.profile.as_ref().map(|p| p.total_requests))
        .or_else(|| Some(r.successful_requests?.saturating_add(r.failed_requests?)))
}

/// Lint one result (a parsed text block, a JSON result, an imported file's aggregates).
pub fn lint_result(r: &BenchmarkResult, opts: &LintOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    single_iteration_from_result(r, &mut out);
    tpot_from_ttft(r, &mut out);
    impossible_peak(r, &mut out);
    concurrency(r, opts, &mut out);
    partial_success(r, opts, &mut out);
    inconsistent_totals(r, &mut out);
    for (name, s) in [
        ("E2EL", &r.e2el),
        ("TTFT", &r.ttft),
        ("TPOT", &r.tpot),
        ("ITL", &r.itl),
    ] {
        if let Some(s) = s {
            percentile_order(name, s, &mut out);
        }
    }
    zero_latency(r, &mut out);
    invalid_values(r, &mut out);
    out
}

/// Negative or non-finite figures ([`Code::InvalidValue`]); NaN only where some request
/// succeeded (vLLM prints `nan` for the latencies of a run without any).
fn invalid_values(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let none_succeeded = r.successful_requests == Some(0);
    let mut check = |what: String, v: Option<f64>| {
        let Some(v) = v else { return };
        let why = if v.is_nan() {
            if none_succeeded {
                return;
            }
            "is NaN although requests succeeded"
        } else if v.is_infinite() {
            "is infinite"
        } else if v < 0.0 {
            "is negative"
        } else {
            return;
        };
        out.push(finding(
            Code::InvalidValue,
            Severity::Error,
            format!("{what} {why}: no measurement gives that"),
            vec![ev(&what, v)],
        ));
    };
    check("duration_ms".into(), r.duration_ms);
    for (name, v) in [
        ("request_throughput_per_s", r.request_throughput_per_s),
        ("output_throughput_per_s", r.output_throughput_per_s),
        (
            "total_token_throughput_per_s",
            r.total_token_throughput_per_s,
        ),
        (
            "peak_output_throughput_per_s",
            r.peak_output_throughput_per_s,
        ),
    ] {
        check(name.into(), v);
    }
    for (name, s) in [
        ("E2EL", &r.e2el),
        ("TTFT", &r.ttft),
        ("TPOT", &r.tpot),
        ("ITL", &r.itl),
    ] {
        let Some(s) = s else { continue };
        for (stat, v) in [
            ("mean", s.mean),
            ("median", s.median),
            ("std", s.std),
            ("min", s.min),
            ("max", s.max),
        ] {
            check(format!("{stat} {name} (ms)"), v);
        }
        for p in &s.percentiles {
            check(format!("P{} {name} (ms)", p.p), p.value);
        }
    }
}

fn single_iteration_from_result(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let Some(itl) = &r.itl else { return };
    let Some(median) = itl.median else { return };
    if !is_zero_ms(median) {
        return;
    }
    // One-token requests legitimately have no ITL; require multi-token outputs.
    if let (Some(n), Some(tok)) = (r.successful_requests, r.total_output_tokens) {
        if n == 0 || tok <= n {
            return;
        }
    }
    let mut evidence = vec![ev("median_itl_ms", median)];
    if let Some(m) = itl.mean {
        evidence.push(ev("mean_itl_ms", m));
    }
    if let Some(m) = r.tpot.as_ref().and_then(|t| t.mean) {
        evidence.push(ev("mean_tpot_ms", m));
    }
    out.push(finding(
        Code::SingleIterationStreams,
        Severity::Error,
        "Median ITL is 0: most output tokens come from streams with a single counted token \
         iteration (first token = last token), so ITL and TPOT do not measure decoding"
            .into(),
        evidence,
    ));
}

fn tpot_from_ttft(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    if r.meta.convention == Some(Convention::Vllm) {
        return; // vLLM's TPOT excludes the TTFT by definition.
    }
    let (Some(tpot), Some(ttft), Some(n), Some(tok)) = (
        r.tpot.as_ref().and_then(|s| s.mean),
        r.ttft.as_ref().and_then(|s| s.mean),
        r.successful_requests,
        r.total_output_tokens,
    ) else {
        return;
    };
    if tok == 0 || tpot <= 0.0 {
        return;
    }
    let share = ttft * n as f64 / tok as f64;
    if rel_diff(share, tpot) <= TOLERANCE {
        out.push(finding(
            Code::TpotFromTtft,
            Severity::Error,
            "Mean TPOT equals ΣTTFT/Σoutput tokens: no decode time was observed, the TPOT is \
             the TTFT spread over the output tokens"
                .into(),
            vec![
                ev("mean_tpot_ms", tpot),
                ev("sum_ttft_over_output_tokens_ms", share),
                ev("mean_ttft_ms", ttft),
                ev("successful_requests", n as f64),
                ev("total_output_tokens", tok as f64),
            ],
        ));
    }
}

fn impossible_peak(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let Some(peak) = r.peak_output_throughput_per_s else {
        return;
    };
    if let Some(total) = r.total_output_tokens {
        if peak > total as f64 {
            out.push(finding(
                Code::ImpossiblePeak,
                Severity::Error,
                "peak output token throughput exceeds the run's total output tokens: no \
                 1-second window can hold more tokens than were generated"
                    .into(),
                vec![
                    ev("peak_output_tok_per_s", peak),
                    ev("total_output_tokens", total as f64),
                ],
            ));
            return;
        }
    }
    let itl_median = r.itl.as_ref().and_then(|s| s.median).filter(|m| *m > 0.5);
    let streams = r
        .peak_concurrent_requests
        .or(r.max_concurrency.map(|c| c as f64));
    if let (Some(itl), Some(streams)) = (itl_median, streams) {
        let bound = 2.0 * streams * 1000.0 / itl;
        if peak > bound {
            out.push(finding(
                Code::ImpossiblePeak,
                Severity::Warning,
                "peak output token throughput is more than twice what the peak number of \
                 concurrent streams can emit at the median ITL"
                    .into(),
                vec![
                    ev("peak_output_tok_per_s", peak),
                    ev("peak_concurrent_requests", streams),
                    ev("median_itl_ms", itl),
                    ev("bound_tok_per_s", bound),
                ],
            ));
            return;
        }
    }
    if let Some(mean) = r.output_throughput_per_s.filter(|m| *m > 0.0) {
        if peak > 20.0 * mean {
            out.push(finding(
                Code::ImpossiblePeak,
                Severity::Warning,
                "peak output token throughput is more than 20× the mean: an instantaneous \
                 artifact rather than a sustained rate"
                    .into(),
                vec![
                    ev("peak_output_tok_per_s", peak),
                    ev("mean_output_tok_per_s", mean),
                ],
            ));
        }
    }
}

fn concurrency(r: &BenchmarkResult, opts: &LintOptions, out: &mut Vec<Finding>) {
    // servebench's exact sweep when computed from records. Without it, vLLM's figure
    // counts the requests active in any part of a 1-second bucket: above the number in
    // flight at any instant (every request of a sub-second run), so it shows neither.
    let exact = r
        .exact
        .as_ref()
        .and_then(|e| e.peak_in_flight)
        .map(|p| p as f64);
    let observed = exact.or_else(|| match r.meta.convention {
        Some(Convention::Vllm) => None,
        _ => r.peak_concurrent_requests.or_else(|| {
            // GPUStack blocks print the observed peak as "Maximum request concurrency".
            (r.meta.convention == Some(Convention::Guidellm))
                .then_some(r.max_concurrency.map(|c| c as f64))
                .flatten()
        }),
    });
    let Some(observed) = observed else { return };
    let total = total_requests(r, opts).or(r.successful_requests);
    if let Some(total) = total {
        if total > 1 && observed >= total as f64 {
            out.push(finding(
                Code::SingleBurst,
                Severity::Warning,
                "every request was in flight at once: the run measures one burst, not a \
                 steady state"
                    .into(),
                vec![
                    ev("peak_concurrent_requests", observed),
                    ev("requests", total as f64),
                ],
            ));
            return;
        }
    }
    let cap = opts
        .client_cap
        .or_else(|| r.meta.profile.as_ref().and_then(|p| p.max_concurrency))
        .or(match r.meta.convention {
            Some(Convention::Guidellm) => Some(GUIDELLM_DEFAULT_MAX_CONCURRENCY),
            _ => r.max_concurrency,
        });
    let Some(cap) = cap else { return };
    if cap > 0 && observed >= cap as f64 && total.is_none_or(|t| t > cap) {
        let mut evidence = vec![
            ev("peak_concurrent_requests", observed),
            ev("client_cap", cap as f64),
        ];
        if let Some(t) = total {
            evidence.push(ev("requests", t as f64));
        }
        out.push(finding(
            Code::ClientCapped,
            Severity::Warning,
            "observed concurrency reached the client's cap: the client, not the server, \
             limited the load, so latencies include no server-side queueing beyond the cap"
                .into(),
            evidence,
        ));
    }
}

fn partial_success(r: &BenchmarkResult, opts: &LintOptions, out: &mut Vec<Finding>) {
    let (Some(ok), Some(total)) = (r.successful_requests, total_requests(r, opts)) else {
        return;
    };
    if total == 0 || ok >= total {
        return;
    }
    let rate = ok as f64 / total as f64;
    out.push(finding(
        Code::PartialSuccess,
        if rate < 0.9 {
            Severity::Error
        } else {
            Severity::Warning
        },
        format!("only {:.1}% of the requests succeeded", rate * 100.0),
        vec![
            ev("successful_requests", ok as f64),
            ev("requests", total as f64),
            ev("success_rate", rate),
        ],
    ));
}

fn inconsistent_totals(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let Some(d) = r.duration_s().filter(|d| *d > 0.0) else {
        return;
    };
    let mut check = |row: &str, numerator: Option<f64>, reported: Option<f64>, unit: &str| {
        let (Some(num), Some(rep)) = (numerator, reported) else {
            return;
        };
        let expected = num / d;
        // Reports print 2 decimals: allow that rounding on small values.
        if rel_diff(expected, rep) > TOLERANCE && (expected - rep).abs() > 0.01 {
            out.push(finding(
                Code::InconsistentTotals,
                Severity::Warning,
                format!(
                    "{row} is not totals / duration: {} vs reported {} {unit}",
                    fmt_num(expected),
                    fmt_num(rep)
                ),
                vec![
                    ev("from_totals", expected),
                    ev("reported", rep),
                    ev("duration_s", d),
                    ev("relative_difference", rel_diff(expected, rep)),
                ],
            ));
        }
    };
    let out_tok = r.total_output_tokens.map(|t| t as f64);
    let in_tok = r.total_input_tokens.map(|t| t as f64);
    check(
        "output token throughput",
        out_tok,
        r.output_throughput_per_s,
        "tok/s",
    );
    check(
        "total token throughput",
        in_tok.zip(out_tok).map(|(a, b)| a + b),
        r.total_token_throughput_per_s,
        "tok/s",
    );
    check(
        "request throughput",
        r.successful_requests.map(|n| n as f64),
        r.request_throughput_per_s,
        "req/s",
    );
}

fn percentile_order(name: &str, s: &Summary, out: &mut Vec<Finding>) {
    let mut problems: Vec<(String, Vec<Evidence>)> = Vec::new();
    let mut ps: Vec<(f64, f64)> = s
        .percentiles
        .iter()
        .filter_map(|p| Some((p.p, p.value?)))
        .collect();
    ps.sort_by(|a, b| a.0.total_cmp(&b.0));
    for w in ps.windows(2) {
        // Allow the rounding of printed values.
        if w[1].1 + 0.005 < w[0].1 {
            problems.push((
                format!("P{} {name} is below P{}", w[1].0, w[0].0),
                vec![
                    ev(&format!("p{}", w[0].0), w[0].1),
                    ev(&format!("p{}", w[1].0), w[1].1),
                ],
            ));
        }
    }
    if let Some(m) = s.median {
        if let Some(p50) = ps.iter().find(|(p, _)| *p == 50.0).map(|(_, v)| *v) {
            if (p50 - m).abs() > 0.005 + 1e-9 * m.abs() {
                problems.push((
                    format!("median {name} differs from its P50"),
                    vec![ev("median", m), ev("p50", p50)],
                ));
            }
        }
        let below = ps.iter().rev().find(|(p, _)| *p < 50.0);
        let above = ps.iter().find(|(p, _)| *p > 50.0);
        if let Some((p, v)) = below {
            if m + 0.005 < *v {
                problems.push((
                    format!("median {name} is below P{p}"),
                    vec![ev("median", m), ev(&format!("p{p}"), *v)],
                ));
            }
        }
        if let Some((p, v)) = above {
            if m > v + 0.005 {
                problems.push((
                    format!("median {name} is above P{p}"),
                    vec![ev("median", m), ev(&format!("p{p}"), *v)],
                ));
            }
        }
    }
    let values = ps.iter().map(|(_, v)| *v).chain(s.mean).chain(s.median);
    for v in values {
        if let Some(min) = s.min {
            if v + 0.005 < min {
                problems.push((
                    format!("a {name} statistic is below the minimum"),
                    vec![ev("value", v), ev("min", min)],
                ));
                break;
            }
        }
        if let Some(max) = s.max {
            if v > max + 0.005 {
                problems.push((
                    format!("a {name} statistic is above the maximum"),
                    vec![ev("value", v), ev("max", max)],
                ));
                break;
            }
        }
    }
    for (message, evidence) in problems {
        out.push(finding(
            Code::PercentileOrder,
            Severity::Error,
            message,
            evidence,
        ));
    }
}

fn zero_latency(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    if r.successful_requests == Some(0) {
        return;
    }
    for (name, s) in [("TTFT", &r.ttft), ("E2E latency", &r.e2el)] {
        let Some(s) = s else { continue };
        for (stat, v) in [("mean", s.mean), ("median", s.median)] {
            if let Some(v) = v.filter(|v| is_zero_ms(*v)) {
                out.push(finding(
                    Code::ZeroLatency,
                    Severity::Error,
                    format!(
                        "{stat} {name} is 0: impossible for successful requests (failed or \
                         untimed requests were counted as 0)"
                    ),
                    vec![ev(&format!("{stat}_ms"), v)],
                ));
            }
        }
    }
}

/// Lint per-request records (the cause behind the result-level symptoms).
pub fn lint_records(records: &[RequestRecord]) -> Vec<Finding> {
    let mut out = Vec::new();
    let multi: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| r.outcome.is_success() && r.output_tokens() > 1)
        .collect();
    if !multi.is_empty() {
        let single = multi.iter().filter(|r| r.chunks.len() <= 1).count();
        let share = single as f64 / multi.len() as f64;
        if share > 0.5 {
            out.push(finding(
                Code::SingleIterationStreams,
                Severity::Error,
                format!(
                    "{:.1}% of successful multi-token requests streamed a single counted \
                     token iteration (first token = last token): TPOT and ITL are invalid",
                    share * 100.0
                ),
                vec![
                    ev("single_iteration_requests", single as f64),
                    ev("multi_token_requests", multi.len() as f64),
                    ev("share", share),
                ],
            ));
        }
    }
    out
}

/// Lint a run from both its result and (when available) its records, without repeating
/// a code found both ways; with records, `single-iteration-streams` comes from them alone.
pub fn lint_run(
    r: &BenchmarkResult,
    records: Option<&[RequestRecord]>,
    opts: &LintOptions,
) -> Vec<Finding> {
    let mut out = match records {
        Some(recs) => lint_records(recs),
        None => Vec::new(),
    };
    for f in lint_result(r, opts) {
        // The records say how many token iterations each stream had; the result's "Median
        // ITL 0" only suggests it (a client that reads several events at once also sees 0).
        if f.code == Code::SingleIterationStreams && records.is_some() {
            continue;
        }
        out.push(f);
    }
    out
}

/// Lint a comparison of `baseline` and `candidate`: flags a run with partial success
/// (whose throughput is not comparable) and mixed conventions.
///
/// ```
/// use servebench::lint::{lint_comparison, Code, LintOptions};
/// use servebench::result::BenchmarkResult;
/// let base = BenchmarkResult { successful_requests: Some(1000), failed_requests: Some(0), ..Default::default() };
/// let cand = BenchmarkResult { successful_requests: Some(516), failed_requests: Some(484), ..Default::default() };
/// let f = lint_comparison(&base, &cand, &LintOptions::default());
/// assert_eq!(f[0].code, Code::PartialSuccessComparison);
/// ```
pub fn lint_comparison(
    baseline: &BenchmarkResult,
    candidate: &BenchmarkResult,
    opts: &LintOptions,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (which, r) in [("baseline", baseline), ("candidate", candidate)] {
        let (Some(ok), Some(total)) = (r.successful_requests, total_requests(r, opts)) else {
            continue;
        };
        if total > 0 && ok < total {
            let rate = ok as f64 / total as f64;
            out.push(finding(
                Code::PartialSuccessComparison,
                Severity::Error,
                format!(
                    "the comparison uses the {which} run, in which only {:.1}% of the requests \
                     succeeded: its throughput and latencies cover a different workload",
                    rate * 100.0
                ),
                vec![
                    ev("successful_requests", ok as f64),
                    ev("requests", total as f64),
                    ev("success_rate", rate),
                ],
            ));
        }
    }
    if let (Some(a), Some(b)) = (baseline.meta.convention, candidate.meta.convention) {
        if a != b {
            out.push(finding(
                Code::MixedConventions,
                Severity::Warning,
                format!("the runs use different metric conventions ({a:?} vs {b:?}): TPOT and ITL are not comparable"),
                Vec::new(),
            ));
        }
    }
    out
}

/// The worst severity among `findings`, if any.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}

// ---------------------------------------------------------------------------------------
// Files: what `servebench lint FILE...` runs.

/// `servebench lint` exit status with no findings.
pub const EXIT_CLEAN: i32 = 0;
/// Exit status for unreadable or malformed input.
pub const EXIT_BAD_INPUT: i32 = 1;
/// Exit status for a usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit status when there are findings.
pub const EXIT_FINDINGS: i32 = 3;

/// The findings of one run (one block of a text report, one benchmark of a file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFindings {
    /// The file (or `-`).
    pub source: String,
    /// The run within it: `line 131` for a text block, the benchmark's name otherwise.
    pub run: String,
    /// What was found.
    pub findings: Vec<Finding>,
}

/// Why a file could not be linted: the loader's error (see [`crate::load`]).
pub type LintInputError = crate::load::LoadError;

/// Lint every run in `bytes`, a file called `source_name`: everything [`crate::load`]
/// reads (text reports with the profile and parameters written around each block,
/// servebench results and run files, guidellm, vLLM, SGLang and aiperf files, with their
/// records when they have them).
///
/// ```
/// let bytes = std::fs::read("tests/fixtures/seed.txt").unwrap();
/// let runs = servebench::lint::lint_bytes("seed.txt", &bytes, &Default::default()).unwrap();
/// assert_eq!(runs.len(), 15);
/// assert_eq!(runs[0].run, "line 131");
/// assert!(runs[0].findings.iter().any(|f| f.code.as_str() == "single-iteration-streams"));
/// ```
///
/// # Errors
///
/// The loader's [`crate::load::LoadError`]: the file, what it was read as, and why it did
/// not fit.
pub fn lint_bytes(
    source_name: &str,
    bytes: &[u8],
    opts: &LintOptions,
) -> Result<Vec<RunFindings>, LintInputError> {
    let runs = crate::load::load(source_name, bytes)?;
    Ok(lint_runs(&runs, opts))
}

/// Lint runs already loaded.
pub fn lint_runs(runs: &[crate::load::Run], opts: &LintOptions) -> Vec<RunFindings> {
    runs.iter()
        .map(|run| RunFindings {
            source: run.provenance.file.clone(),
            findings: match &run.records {
                Some(recs) if recs.interrupted.is_some() && opts.expected_requests.is_none() => {
                    // An interrupted run is judged on the requests it sent.
                    let sent = LintOptions {
                        expected_requests: Some(recs.all.len() as u64),
                        ..opts.clone()
                    };
                    lint_run(&run.result, Some(&recs.measured()), &sent)
                }
                Some(recs) => lint_run(&run.result, Some(&recs.measured()), opts),
                None => lint_run(&run.result, None, opts),
            },
            run: run.name.clone(),
        })
        .collect()
}

/// [`lint_bytes`] on a file.
///
/// # Errors
///
/// As [`lint_bytes`], or the file cannot be read.
pub fn lint_path(
    path: &std::path::Path,
    opts: &LintOptions,
) -> Result<Vec<RunFindings>, LintInputError> {
    let runs = crate::load::load_path(path)?;
    Ok(lint_runs(&runs, opts))
}

/// One finding per line: `source: run: severity[code]: message (evidence)`.
pub fn render_text(runs: &[RunFindings]) -> String {
    let mut out = String::new();
    for r in runs {
        for f in &r.findings {
            out.push_str(&format!("{}: {}: {f}\n", r.source, r.run));
        }
    }
    out
}

/// The findings as a JSON array of [`RunFindings`] (for tools).
pub fn render_json(runs: &[RunFindings]) -> String {
    serde_json::to_string_pretty(runs).unwrap_or_else(|_| "[]".to_string())
}

/// [`EXIT_FINDINGS`] when any run has a finding, else [`EXIT_CLEAN`].
pub fn exit_code(runs: &[RunFindings]) -> i32 {
    if runs.iter().any(|r| !r.findings.is_empty()) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}
