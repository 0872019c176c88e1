//! Lints: findings about measurements that cannot be true, or that do not mean what their
//! label says.
//!
//! The seed study is the motivating case: its vLLM runs with `--reasoning-parser=qwen3`
//! streamed reasoning tokens that the client did not count, so guidellm saw one token
//! iteration per request. Its "Median ITL" is 0.00, its "Mean TPOT" is ΣTTFT/Σoutput, its
//! "Peak output token throughput" is 3×10⁷ tok/s, and its "Total TPS" is not
//! tokens/duration. [`lint_result`] finds all of that from the printed block alone;
//! [`lint_records`] finds the cause from per-request records, and [`lint_run`] with records
//! reasons from servebench's exact figures over them (see `client-capped`).
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
//! | `impossible-peak` | error / warning | Peak output token throughput above the run's total output tokens (no 1-second window can hold more tokens than exist: error); above the most tokens any 1-second window of the records holds (guidellm's instantaneous peak: a rate over an instant, never sustained for a second), above what the peak number of concurrent streams (the exact peak in flight when known) can emit at the median ITL (×2 slack), or more than 20× the mean output throughput (warning). |
//! | `client-capped` | warning | Observed peak concurrency (servebench's exact peak in flight when the result has it or the run has records with send times — evidence `peak_in_flight`; else the file's figure, `peak_concurrent_requests`; never vLLM's per-1-second-bucket count) reached the client's concurrency cap while more requests were waiting: the client, not the server, limited the load. The cap is [`LintOptions::client_cap`], else the profile's, else guidellm's default 512 for guidellm results, else a vLLM result's `max_concurrency`. |
//! | `single-burst` | warning | Peak concurrency (as for `client-capped`) equals the number of requests: every request was in flight at once, so the run measures one burst, not a steady state. |
//! | `partial-success` | error below 90 %, else warning | Fewer successful requests than requests sent. |
//! | `partial-success-comparison` | error | A comparison uses a run with partial success (see [`lint_comparison`]). |
//! | `mixed-conventions` | warning | A comparison mixes results computed under different metric conventions. |
//! | `inconsistent-totals` | warning | Token totals, request count, duration and the reported throughputs disagree by more than 2 % (tokens/duration vs output, total-token and request throughput). |
//! | `percentile-order` | error | A summary whose percentiles are not non-decreasing, whose median is outside its neighbouring percentiles or differs from its p50, or whose mean/percentiles fall outside [min, max]. |
//! | `zero-latency` | error | A TTFT or E2E latency mean/median of 0: impossible for requests that succeeded. |
//! | `invalid-value` | error | A latency statistic, the duration or a throughput that is negative or infinite, or NaN although requests succeeded (a text report can print `nan`/`inf`, a Python client writes `NaN`). |
//! | `peak-below-mean` | error | Peak output token throughput below the mean output throughput (beyond what a run shorter than its last whole second allows: peak ≥ mean × d / ⌈d⌉): the peak counted something else than tokens, e.g. stream events carrying several tokens each (speculative decoding). |
//! | `impossible-timing` | error | Records whose times are out of order: a chunk before the request was sent, or an end before the send or before the last chunk. |
//! | `invalid-tool-calls` | error when no tool call is valid, warning below 90 % | Tool calls whose arguments do not parse or do not match their tool's schema: a run whose calls would fail in the agent is not a measurement of agentic serving (a parser, a template or a model without tool support). |
//! | `invalid-structured-output` | error when no answer is valid, warning below 90 % | Answers that do not follow the requested response format's schema (structured decoding off or broken). |
//! | `context-exceeded` | error | Requests the server refused for exceeding the model's context (vLLM's "maximum context length" 400): a rerank or score query with a document, an embeddings input, or a prompt with its output budget is longer than `--max-model-len`. The run measured refusals, not the workload. |
//!
//! [`lint_bytes`](crate::app::lint_bytes) / [`lint_path`](crate::app::lint_path) lint whole files as `servebench lint` does (text reports
//! with the metadata written around each block, servebench JSON results, guidellm, vLLM and
//! SGLang files); [`crate::format::lint`] prints the findings (one per line, or a JSON
//! array); [`exit_code`](crate::app::exit_code) gives the command's status ([`EXIT_CLEAN`](crate::app::EXIT_CLEAN) 0, [`EXIT_FINDINGS`](crate::app::EXIT_FINDINGS) 3;
//! [`EXIT_BAD_INPUT`](crate::app::EXIT_BAD_INPUT) 1 and [`EXIT_USAGE`](crate::app::EXIT_USAGE) 2 are the CLI's).
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

use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;
use crate::result::BenchmarkResult;

mod checks;
mod finding;

pub(crate) use finding::fmt_num;
use finding::{ev, finding, total_requests};
pub use finding::{
    Code, Evidence, Finding, LintOptions, Severity, GUIDELLM_DEFAULT_MAX_CONCURRENCY, TOLERANCE,
};

use checks::{
    concurrency, context_exceeded, impossible_peak, impossible_timing, inconsistent_totals,
    invalid_outputs, invalid_values, partial_success, peak_below_mean, percentile_order,
    single_iteration_from_result, tpot_from_ttft, zero_latency,
};

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

/// Lint one result (a parsed text block, a JSON result, an imported file's aggregates).
pub fn lint_result(r: &BenchmarkResult, opts: &LintOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    single_iteration_from_result(r, &mut out);
    tpot_from_ttft(r, &mut out);
    impossible_peak(r, &mut out);
    peak_below_mean(r, &mut out);
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
    invalid_outputs(r, &mut out);
    out
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
    impossible_timing(records, &mut out);
    context_exceeded(records, &mut out);
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
    // With records that carry send times, the concurrency and peak lints reason from
    // servebench's exact figures over them (the most requests in flight at one instant,
    // the most tokens in any 1-second window), never from a per-second-bucket count.
    let with_exact;
    let r = match records {
        Some(recs)
            if recs.iter().any(|x| !x.sent_at.is_zero())
                && r.exact.as_ref().is_none_or(|e| {
                    e.peak_in_flight.is_none() || e.peak_output_tokens_per_s.is_none()
                }) =>
        {
            let mut copy = r.clone();
            copy.exact = Some(crate::metrics::exact_figures(recs));
            with_exact = copy;
            &with_exact
        }
        _ => r,
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
