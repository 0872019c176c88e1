//! The production figures as text: reasoning-aware latency (with what TTFT counts),
//! energy per token, speculative decoding and per-adapter results, as lines under a report
//! block ([`lines`]) or a markdown list ([`markdown`]). Nothing is printed for a result
//! without these figures, so the blocks of other runs stay as they were.
//!
//! ```
//! use servebench::format::production::lines;
//! use servebench::result::{BenchmarkResult, EnergyFigures};
//! let mut r = BenchmarkResult::default();
//! assert!(lines(&r).is_empty());
//! r.energy = Some(EnergyFigures {
//!     source: "h200-sim".into(), gpus: 1, span_s: Some(10.0), energy_j: Some(4000.0),
//!     mean_power_w: Some(400.0), joules_per_output_token: Some(0.5),
//!     output_tokens_per_joule: Some(2.0), ..Default::default()
//! });
//! assert_eq!(lines(&r), [
//!     "Energy (h200-sim, 1 GPU): 4000.0 J over 10.0 s, mean power 400.0 W",
//!     "Energy per output token: 0.5000 J/token (2.000 tokens/J)",
//! ]);
//! ```

use crate::result::{BenchmarkResult, Summary};

/// What a result's TTFT counts, for a run whose streams carried reasoning.
pub const TTFT_COUNTS_EITHER: &str =
    "TTFT counts the first token of either stream (reasoning or answer), as vLLM does; \
     the time to first answer token counts the answer (content) only";

/// `mean X, median Y, P99 Z` of a summary in ms.
fn stats(s: &Summary) -> String {
    let mut parts = Vec::new();
    if let Some(m) = s.mean {
        parts.push(format!("mean {m:.2}"));
    }
    if let Some(m) = s.median {
        parts.push(format!("median {m:.2}"));
    }
    for p in &s.percentiles {
        if let Some(v) = p.value {
            parts.push(format!("P{} {v:.2}", super::pyfmt::percentile_word(p.p)));
        }
    }
    parts.join(", ")
}

/// `Cost at $3.50/GPU-hour x 1 GPU: $0.2000/1M output tokens, $0.0800/1M total tokens;
/// 4861.1 output tok/s per GPU, 12152.8 total tok/s per GPU`.
pub fn cost_line(c: &crate::result::CostFigures) -> String {
    let money = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("${v:.4}"));
    let rate = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
    format!(
        "Cost at ${:.2}/GPU-hour x {} GPU{}: {}/1M output tokens, {}/1M total tokens; {} output tok/s per GPU, {} total tok/s per GPU",
        c.usd_per_gpu_hour,
        c.gpus,
        if c.gpus == 1 { "" } else { "s" },
        money(c.usd_per_million_output_tokens),
        money(c.usd_per_million_total_tokens),
        rate(c.output_tokens_per_s_per_gpu),
        rate(c.total_tokens_per_s_per_gpu),
    )
}

/// The lines about what the traffic was: the endpoint, images, the answers' checks, the
/// prefix cache, sessions (each when the run has it).
fn traffic_lines(r: &BenchmarkResult) -> Vec<String> {
    let mut out: Vec<String> = endpoint_line(r).into_iter().collect();
    out.extend(r.images.as_ref().map(images_line));
    if let Some(c) = &r.checks {
        out.extend(check_lines(c));
    }
    out.extend(r.prefix_cache.as_ref().map(prefix_cache_line));
    out.extend(r.sessions.as_ref().map(session_line));
    out
}

/// Which API the run called and which metrics apply to it (`None`: completions).
///
/// ```
/// use servebench::format::production::endpoint_line;
/// use servebench::BenchmarkResult;
/// let mut r = BenchmarkResult::default();
/// assert_eq!(endpoint_line(&r), None);
/// r.meta.endpoint = Some("embeddings".into());
/// r.inputs_per_s = Some(812.5);
/// assert_eq!(
///     endpoint_line(&r).unwrap(),
///     "Endpoint: embeddings. Answers come whole: request latency is their only timing \
///      (no TTFT, TPOT or ITL). Inputs per second: 812.50"
/// );
/// ```
pub fn endpoint_line(r: &BenchmarkResult) -> Option<String> {
    let name = r.meta.endpoint.as_deref();
    let whole =
        r.inputs_per_s.is_some() || (r.ttft.is_none() && r.e2el.is_some() && name.is_some());
    match (name, whole) {
        (None, false) => None,
        (name, true) => {
            let mut line = match name {
                Some(n) => format!("Endpoint: {n}. "),
                None => String::new(),
            };
            line.push_str(
                "Answers come whole: request latency is their only timing (no TTFT, TPOT or ITL).",
            );
            if let Some(x) = r.inputs_per_s {
                line.push_str(&format!(" Inputs per second: {x:.2}"));
            }
            Some(line)
        }
        (Some(n), false) => Some(format!("Endpoint: {n}.")),
    }
}

/// The sessions line: how many finished, failed mid-way (and at which turn), were cut off;
/// the time to finish one; the turn rate.
pub fn session_line(s: &crate::result::SessionFigures) -> String {
    let mut line = format!(
        "Sessions: {} ({} complete, {} failed mid-way, {} cut off; {} turns)",
        s.sessions, s.complete, s.failed, s.cut_off, s.turns
    );
    if let Some((turn, n)) = s.failed_at_turn.first() {
        line.push_str(&format!("; most failures at turn {turn} ({n})"));
    }
    if let Some(d) = &s.duration {
        line.push_str(&format!("; time to finish a session (ms): {}", stats(d)));
    }
    if let Some(t) = s.turns_per_s {
        line.push_str(&format!("; {t:.2} turns/s"));
    }
    if s.subagents > 0 {
        line.push_str(&format!(
            "; {} sub-agents forked ({} sessions failed in one)",
            s.subagents, s.failed_in_subagent
        ));
    }
    if let (Some(limit), Some(n)) = (s.slo_ms, s.within_slo) {
        line.push_str(&format!(
            "; finished within the session SLO ({limit:.0} ms): {n} of {}",
            s.sessions
        ));
        if let Some(g) = s.goodput_per_s {
            line.push_str(&format!(", session goodput {g:.3} sessions/s"));
        }
    }
    line
}

/// The prefix-cache line: the hit rate implied by the workload beside the server's.
///
/// ```
/// use servebench::format::production::prefix_cache_line;
/// use servebench::result::PrefixCacheFigures;
/// let p = PrefixCacheFigures { block_tokens: 544, queried_tokens: 100_000, implied_hit_tokens: 60_000,
///     implied_hit_rate: 0.6, measured_hit_rate: Some(0.2), disagree: true };
/// assert_eq!(prefix_cache_line(&p), "Prefix-cache hit rate: implied by the workload 60.0 % \
///     (in 544-token blocks), measured by the server 20.0 %: they disagree (a cache too small \
///     for the workload's prefixes evicts them, caching is off, or the server's blocks are \
///     another size)");
/// ```
pub fn prefix_cache_line(p: &crate::result::PrefixCacheFigures) -> String {
    let mut line = format!(
        "Prefix-cache hit rate: implied by the workload {:.1} % (in {}-token blocks)",
        p.implied_hit_rate * 100.0,
        p.block_tokens
    );
    if let Some(m) = p.measured_hit_rate {
        line.push_str(&format!(", measured by the server {:.1} %", m * 100.0));
        if p.disagree {
            line.push_str(
                ": they disagree (a cache too small for the workload's prefixes evicts them, \
                 caching is off, or the server's blocks are another size)",
            );
        }
    }
    line
}

/// `91.0 % [84.5, 95.0]`: a rate in percent with its 95 % interval.
fn rate_text(r: &crate::result::Rate) -> String {
    format!(
        "{:.1} % [{:.1}, {:.1}]",
        r.value * 100.0,
        r.lo * 100.0,
        r.hi * 100.0
    )
}

/// The checks' lines: the tool-call validity rate, the time to the first tool-call token,
/// the structured-output correct rate, an example failure.
///
/// ```
/// use servebench::format::production::check_lines;
/// use servebench::result::{CheckFigures, Rate};
/// let c = CheckFigures { requests: 100, tool_calls: 100, valid_tool_calls: 90,
///     tool_call_validity: Some(Rate { value: 0.9, lo: 0.8256, hi: 0.9448 }), ..Default::default() };
/// assert_eq!(check_lines(&c)[0], "Tool-call validity rate: 90.0 % [82.6, 94.5] (90 of 100 \
///     tool calls in 100 requests parse and match their tool's schema)");
/// ```
pub fn check_lines(c: &crate::result::CheckFigures) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = &c.tool_call_validity {
        out.push(format!(
            "Tool-call validity rate: {} ({} of {} tool calls in {} requests parse and match their tool's schema)",
            rate_text(v),
            c.valid_tool_calls,
            c.tool_calls,
            c.requests
        ));
    } else if c.structured == 0 {
        out.push(format!(
            "Tool-call validity rate: no tool call in {} requests that offered tools",
            c.requests
        ));
    }
    if c.requests_without_tool_call > 0 && c.tool_calls > 0 {
        out.push(format!(
            "{} requests offered tools answered without calling one",
            c.requests_without_tool_call
        ));
    }
    if let Some(s) = &c.time_to_first_tool_call {
        out.push(format!("Time to first tool-call token (ms): {}", stats(s)));
    }
    if let Some(r) = &c.structured_correct_rate {
        out.push(format!(
            "Structured-output correct rate: {} ({} of {} answers parse and match the response format's schema)",
            rate_text(r),
            c.structured_valid,
            c.structured
        ));
    }
    if let Some(f) = &c.example_failure {
        out.push(format!("First failed check: {f}"));
    }
    out
}

/// The images line: how many, their size, the prompt tokens they became. Images of
/// unknown size (URLs the server fetched) are said apart: their tokens are the server's.
fn images_line(i: &crate::result::ImageFigures) -> String {
    if i.unsized_images > 0 {
        let sized = i.images.saturating_sub(i.unsized_images);
        return format!(
            "Images: {} in {} requests, {} of them by URL of unknown size (fetched by the \
             server: their vision tokens are only in the {} prompt tokens the server \
             counted); the {sized} of known size: {:.1} KB each on average, vision tokens {}",
            i.images,
            i.requests,
            i.unsized_images,
            i.prompt_tokens,
            i.bytes as f64 / sized.max(1) as f64 / 1000.0,
            i.vision_tokens,
        );
    }
    let share = if i.prompt_tokens > 0 {
        format!(
            " ({:.1} % of their {} prompt tokens)",
            i.vision_tokens as f64 / i.prompt_tokens as f64 * 100.0,
            i.prompt_tokens
        )
    } else {
        String::new()
    };
    format!(
        "Images: {} in {} requests, {:.1} KB each on average; vision tokens {}{share}, text tokens {}",
        i.images,
        i.requests,
        i.bytes as f64 / i.images.max(1) as f64 / 1000.0,
        i.vision_tokens,
        i.prompt_tokens.saturating_sub(i.vision_tokens),
    )
}

/// The lines of every production figure `r` carries (none: an empty list).
pub fn lines(r: &BenchmarkResult) -> Vec<String> {
    let mut out = traffic_lines(r);
    if let Some(f) = &r.reasoning {
        out.push(format!(
            "{TTFT_COUNTS_EITHER}; {} requests streamed reasoning{}.",
            f.requests_with_reasoning,
            if f.requests_without_answer > 0 {
                format!(", {} never reached an answer", f.requests_without_answer)
            } else {
                String::new()
            }
        ));
        if let Some(s) = &f.time_to_first_reasoning {
            out.push(format!("Time to first reasoning token (ms): {}", stats(s)));
        }
        if let Some(s) = &f.time_to_first_answer {
            out.push(format!("Time to first answer token (ms): {}", stats(s)));
        }
        let total = f.reasoning_tokens.saturating_add(f.answer_tokens);
        let share = if total > 0 {
            format!(
                " ({:.1} % reasoning)",
                f.reasoning_tokens as f64 / total as f64 * 100.0
            )
        } else {
            String::new()
        };
        out.push(format!(
            "Reasoning / answer tokens: {} / {}{share}",
            f.reasoning_tokens, f.answer_tokens
        ));
    }
    if let Some(e) = &r.energy {
        let mut head = format!(
            "Energy ({}, {} GPU{})",
            e.source,
            e.gpus,
            if e.gpus == 1 { "" } else { "s" }
        );
        let mut parts = Vec::new();
        match (e.energy_j, e.span_s, e.server_speed) {
            (Some(j), Some(s), Some(x)) => parts.push(format!(
                "{j:.1} J over {s:.1} s ({:.1} s of server time at {x}×)",
                s * x
            )),
            (Some(j), Some(s), None) => parts.push(format!("{j:.1} J over {s:.1} s")),
            _ => {}
        }
        if let Some(p) = e.mean_power_w {
            parts.push(format!("mean power {p:.1} W"));
        }
        if let Some(p) = e.peak_power_w {
            parts.push(format!("peak {p:.1} W"));
        }
        if let Some(u) = e.gpu_util_mean_pct {
            parts.push(format!("GPU utilization {u:.1} %"));
        }
        if let Some(m) = e.fb_used_peak_mib {
            parts.push(format!("memory used up to {m:.0} MiB"));
        }
        if let Some(c) = e.sm_clock_mean_mhz {
            parts.push(format!("SM clock {c:.0} MHz"));
        }
        head.push_str(": ");
        if parts.is_empty() {
            head.push_str("no figures");
        }
        head.push_str(&parts.join(", "));
        out.push(head);
        for n in &e.notes {
            out.push(format!("Energy note: {n}"));
        }
        if let (Some(j), Some(t)) = (e.joules_per_output_token, e.output_tokens_per_joule) {
            out.push(format!(
                "Energy per output token: {j:.4} J/token ({t:.3} tokens/J)"
            ));
        }
    }
    if let Some(c) = &r.cost {
        out.push(cost_line(c));
    }
    if let Some(s) = &r.spec_decode {
        let mut parts = Vec::new();
        if let Some(a) = s.acceptance_rate {
            parts.push(format!("acceptance rate {:.1} %", a * 100.0));
        }
        if let Some(l) = s.mean_accepted_length {
            parts.push(format!("mean accepted length {l:.2}"));
        }
        if !s.acceptance_per_position.is_empty() {
            let per: Vec<String> = s
                .acceptance_per_position
                .iter()
                .map(|a| format!("{:.1} %", a * 100.0))
                .collect();
            parts.push(format!("per position {}", per.join(" / ")));
        }
        if let Some(d) = s.drafts {
            parts.push(format!("{d:.0} drafts"));
        }
        if let Some(t) = s.tokens_per_chunk {
            parts.push(format!("{t:.2} tokens per streamed chunk (client)"));
        }
        if !parts.is_empty() {
            out.push(format!("Speculative decoding: {}", parts.join(", ")));
        }
    }
    for a in &r.adapters {
        let mut line = format!(
            "LoRA adapter {}: {} requests ({} successful), {} output tokens",
            a.adapter, a.requests, a.successful_requests, a.output_tokens
        );
        if let Some(t) = a.output_throughput_per_s {
            line.push_str(&format!(", {t:.2} tok/s"));
        }
        if let Some(s) = &a.ttft {
            line.push_str(&format!("; TTFT (ms) {}", stats(s)));
        }
        out.push(line);
    }
    out
}

/// [`lines`] as a markdown list (empty string when there is none).
pub fn markdown(r: &BenchmarkResult) -> String {
    lines(r).iter().map(|l| format!("- {l}\n")).collect()
}
