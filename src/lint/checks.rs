//! The checks of one result: each rule of the module's table that reads a
//! `BenchmarkResult`, pushing its findings.

use super::finding::{
    ev, finding, fmt_num, is_zero_ms, rel_diff, total_requests, Code, Evidence, Finding,
    LintOptions, Severity, GUIDELLM_DEFAULT_MAX_CONCURRENCY, TOLERANCE,
};
use crate::record::{Outcome, RequestRecord};
use crate::result::{BenchmarkResult, Convention, Summary};

/// Negative or non-finite figures ([`Code::InvalidValue`]); NaN only where some request
/// succeeded (vLLM prints `nan` for the latencies of a run without any).
pub(super) fn invalid_values(r: &BenchmarkResult, out: &mut Vec<Finding>) {
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

pub(super) fn single_iteration_from_result(r: &BenchmarkResult, out: &mut Vec<Finding>) {
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

pub(super) fn tpot_from_ttft(r: &BenchmarkResult, out: &mut Vec<Finding>) {
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

/// `peak-below-mean`: the most output tokens of any second cannot be fewer than the mean
/// per second, except that a run's last partial second spreads the mean over fewer whole
/// seconds: peak ≥ mean × d / ⌈d⌉ for a run of d seconds.
pub(super) fn peak_below_mean(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let (Some(peak), Some(mean)) = (r.peak_output_throughput_per_s, r.output_throughput_per_s)
    else {
        return;
    };
    if !(peak.is_finite() && mean.is_finite() && peak >= 0.0 && mean > 0.0) {
        return;
    }
    let floor = match r.duration_ms.map(|ms| ms / 1000.0) {
        Some(d) if d.is_finite() && d > 0.0 => mean * d / d.ceil(),
        _ => return,
    };
    if peak < floor * (1.0 - TOLERANCE) {
        out.push(finding(
            Code::PeakBelowMean,
            Severity::Error,
            format!(
                "peak output token throughput ({}) is below the mean output throughput ({}): \
                 no run's busiest second holds fewer tokens than its average second, so the \
                 peak counted something else (stream events carrying several tokens each, as \
                 with speculative decoding)",
                fmt_num(peak),
                fmt_num(mean)
            ),
            vec![
                ev("peak_output_tok_per_s", peak),
                ev("mean_output_tok_per_s", mean),
            ],
        ));
    }
}

/// `impossible-timing`: records whose times are out of order.
pub(super) fn impossible_timing(records: &[RequestRecord], out: &mut Vec<Finding>) {
    let mut chunk_before_send = 0u64;
    let mut end_before_send = 0u64;
    let mut end_before_chunk = 0u64;
    let mut first: Option<u64> = None;
    for rec in records {
        let mut bad = false;
        if rec.chunks.iter().any(|c| c.at < rec.sent_at) {
            chunk_before_send += 1;
            bad = true;
        }
        if let Some(end) = rec.ended_at {
            if end < rec.sent_at {
                end_before_send += 1;
                bad = true;
            } else if rec.chunks.iter().any(|c| c.at > end) {
                end_before_chunk += 1;
                bad = true;
            }
        }
        if bad && first.is_none() {
            first = Some(rec.id);
        }
    }
    let Some(first) = first else {
        return;
    };
    out.push(finding(
        Code::ImpossibleTiming,
        Severity::Error,
        format!(
            "records with times out of order (first: request {first}): {chunk_before_send} \
             with a chunk before the send, {end_before_send} ending before the send, \
             {end_before_chunk} ending before their last chunk"
        ),
        vec![
            ev("chunk_before_send", chunk_before_send as f64),
            ev("end_before_send", end_before_send as f64),
            ev("end_before_last_chunk", end_before_chunk as f64),
            ev("first_request_id", first as f64),
        ],
    ));
}

pub(super) fn impossible_peak(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let Some(peak) = r.peak_output_throughput_per_s else {
        return;
    };
    let whose = match r.meta.convention {
        Some(Convention::Guidellm) => "guidellm's instantaneous peak output rate",
        _ => "peak output token throughput",
    };
    if let Some(total) = r.total_output_tokens {
        if peak > total as f64 {
            out.push(finding(
                Code::ImpossiblePeak,
                Severity::Error,
                format!(
                    "{whose} exceeds the run's total output tokens: no 1-second window can \
                     hold more tokens than were generated"
                ),
                vec![
                    ev("peak_output_tok_per_s", peak),
                    ev("total_output_tokens", total as f64),
                ],
            ));
            return;
        }
    }
    // servebench's exact figures, when computed from records: the most tokens any
    // 1-second window holds, the most requests in flight at one instant.
    let exact = r.exact.as_ref();
    let window = exact.and_then(|e| e.peak_output_tokens_per_s);
    if let Some(window) = window.filter(|w| *w > 0.0) {
        if peak > window * (1.0 + TOLERANCE) + 1.0 {
            out.push(finding(
                Code::ImpossiblePeak,
                Severity::Warning,
                format!(
                    "{whose} is above the most output tokens any 1-second window of the \
                     records holds: a rate over an instant, never sustained for a second"
                ),
                vec![
                    ev("peak_output_tok_per_s", peak),
                    ev("max_tokens_in_1s_window", window),
                ],
            ));
            return;
        }
    }
    let itl_median = r.itl.as_ref().and_then(|s| s.median).filter(|m| *m > 0.5);
    // Never vLLM's per-1-second-bucket count when the exact peak is known.
    let streams = exact
        .and_then(|e| e.peak_in_flight)
        .map(|p| p as f64)
        .or(r.peak_concurrent_requests)
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

pub(super) fn concurrency(r: &BenchmarkResult, opts: &LintOptions, out: &mut Vec<Finding>) {
    // servebench's exact sweep when computed from records. Without it, vLLM's figure
    // counts the requests active in any part of a 1-second bucket: above the number in
    // flight at any instant (every request of a sub-second run), so it shows neither.
    let exact = r
        .exact
        .as_ref()
        .and_then(|e| e.peak_in_flight)
        .map(|p| p as f64);
    let file_peak = || match r.meta.convention {
        Some(Convention::Vllm) => None,
        _ => r.peak_concurrent_requests.or_else(|| {
            // GPUStack blocks print the observed peak as "Maximum request concurrency".
            (r.meta.convention == Some(Convention::Guidellm))
                .then_some(r.max_concurrency.map(|c| c as f64))
                .flatten()
        }),
    };
    // The evidence names which figure it is: the exact peak in flight, or the file's.
    let (observed, name) = match exact {
        Some(p) => (p, "peak_in_flight"),
        None => match file_peak() {
            Some(p) => (p, "peak_concurrent_requests"),
            None => return,
        },
    };
    let total = total_requests(r, opts).or(r.successful_requests);
    if let Some(total) = total {
        if total > 1 && observed >= total as f64 {
            out.push(finding(
                Code::SingleBurst,
                Severity::Warning,
                "every request was in flight at once: the run measures one burst, not a \
                 steady state"
                    .into(),
                vec![ev(name, observed), ev("requests", total as f64)],
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
        let mut evidence = vec![ev(name, observed), ev("client_cap", cap as f64)];
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

pub(super) fn partial_success(r: &BenchmarkResult, opts: &LintOptions, out: &mut Vec<Finding>) {
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

pub(super) fn inconsistent_totals(r: &BenchmarkResult, out: &mut Vec<Finding>) {
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

pub(super) fn percentile_order(name: &str, s: &Summary, out: &mut Vec<Finding>) {
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

pub(super) fn zero_latency(r: &BenchmarkResult, out: &mut Vec<Finding>) {
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

/// `context-exceeded`: requests refused because they do not fit the model's context.
pub(super) fn context_exceeded(records: &[RequestRecord], out: &mut Vec<Finding>) {
    let refused = records
        .iter()
        .filter(|r| match &r.outcome {
            Outcome::Error { message, .. } => message
                .to_ascii_lowercase()
                .contains("maximum context length"),
            _ => false,
        })
        .count();
    if refused == 0 {
        return;
    }
    let share = refused as f64 / records.len().max(1) as f64;
    let whole = records.iter().any(|r| !r.response.is_streamed());
    let what = if whole {
        "an input (a rerank or score query with its document, an embeddings text)"
    } else {
        "a prompt with its output budget"
    };
    out.push(finding(
        Code::ContextExceeded,
        Severity::Error,
        format!(
            "{refused} requests ({:.1}%) were refused for exceeding the model's context: {what} \
             is longer than the server's max-model-len; the run measured refusals, not the workload",
            share * 100.0
        ),
        vec![ev("refused_requests", refused as f64), ev("share", share)],
    ));
}

/// `invalid-tool-calls` and `invalid-structured-output`: answers that fail their checks.
pub(super) fn invalid_outputs(r: &BenchmarkResult, out: &mut Vec<Finding>) {
    let Some(c) = &r.checks else {
        return;
    };
    for (code, what, valid, total) in [
        (
            Code::InvalidToolCalls,
            "tool calls parse and match their tool's schema",
            c.valid_tool_calls,
            c.tool_calls,
        ),
        (
            Code::InvalidStructuredOutput,
            "structured answers parse and match the response format's schema",
            c.structured_valid,
            c.structured,
        ),
    ] {
        if total == 0 {
            continue;
        }
        let share = valid as f64 / total as f64;
        let severity = if valid == 0 {
            Severity::Error
        } else if share < 0.9 {
            Severity::Warning
        } else {
            continue;
        };
        let example = c
            .example_failure
            .as_deref()
            .map(|f| format!(" (first failure: {f})"))
            .unwrap_or_default();
        out.push(finding(
            code,
            severity,
            format!("only {valid} of {total} {what}{example}"),
            vec![
                ev("valid", valid as f64),
                ev("checked", total as f64),
                ev("share", share),
            ],
        ));
    }
}
