//! The production figures computed from records: reasoning-aware latency (time to the
//! first reasoning and the first answer token, [`reasoning_figures`]), tokens per streamed
//! chunk ([`tokens_per_chunk`]) and results per LoRA adapter ([`adapter_figures`]).
//!
//! Every statistic is over vLLM's successes ([`vllm_success`]) and computed as vLLM
//! computes TTFT (numpy on seconds, reported in ms), so the answer-token figure of a run
//! without reasoning equals its TTFT.

use std::collections::BTreeMap;
use std::time::Duration;

use super::request::vllm_success;
use super::summary::vllm_summary_ms;
use crate::record::RequestRecord;
use crate::result::{
    AdapterFigures, CheckFigures, ImageFigures, Rate, ReasoningFigures, SessionFigures, Summary,
};
use crate::stats::numpy_summary;

fn summary_ms(mut seconds: Vec<f64>, percentiles: &[f64]) -> Option<Summary> {
    numpy_summary(&mut seconds, percentiles).map(|s| vllm_summary_ms(Some(s), percentiles))
}

/// Reasoning-aware latency over the successful requests; `None` when no stream carried
/// reasoning.
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::reasoning_figures;
/// use servebench::record::{Chunk, RequestRecord, StreamSplit};
/// let ms = Duration::from_millis;
/// let mut r = RequestRecord::new(0, ms(0));
/// r.chunks = vec![Chunk { at: ms(20), tokens: 1 }, Chunk { at: ms(50), tokens: 1 }];
/// assert!(reasoning_figures(std::slice::from_ref(&r), &[99.0]).is_none());
/// r.reasoning = Some(StreamSplit {
///     first_reasoning_chunk: Some(0), first_answer_chunk: Some(1),
///     reasoning_tokens: 1, answer_tokens: 1,
/// });
/// let f = reasoning_figures(&[r], &[99.0]).unwrap();
/// assert_eq!(f.time_to_first_answer.unwrap().mean, Some(50.0));
/// assert_eq!(f.time_to_first_reasoning.unwrap().mean, Some(20.0));
/// ```
pub fn reasoning_figures(
    records: &[RequestRecord],
    percentiles: &[f64],
) -> Option<ReasoningFigures> {
    if !records.iter().any(|r| r.reasoning.is_some()) {
        return None;
    }
    let mut f = ReasoningFigures::default();
    let (mut to_reasoning, mut to_answer) = (Vec::new(), Vec::new());
    for r in records.iter().filter(|r| vllm_success(r)) {
        match r.reasoning {
            Some(split) => {
                f.requests_with_reasoning += 1;
                f.reasoning_tokens = f.reasoning_tokens.saturating_add(split.reasoning_tokens);
                f.answer_tokens = f.answer_tokens.saturating_add(split.answer_tokens);
                if split.first_answer_chunk.is_none() {
                    f.requests_without_answer += 1;
                }
            }
            None => {
                f.answer_tokens = f.answer_tokens.saturating_add(r.client_output_tokens());
            }
        }
        if let Some(t) = r.time_to_first_reasoning() {
            to_reasoning.push(t.as_secs_f64());
        }
        if let Some(t) = r.time_to_first_answer() {
            to_answer.push(t.as_secs_f64());
        }
    }
    f.time_to_first_reasoning = summary_ms(to_reasoning, percentiles);
    f.time_to_first_answer = summary_ms(to_answer, percentiles);
    Some(f)
}

/// Output tokens per streamed chunk over the successful requests (client-side count:
/// the chunks' tokens ÷ the chunks); `None` without a chunk.
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::tokens_per_chunk;
/// use servebench::record::{Chunk, RequestRecord};
/// let mut r = RequestRecord::new(0, Duration::ZERO);
/// r.chunks = vec![Chunk { at: Duration::from_millis(5), tokens: 1 }, Chunk { at: Duration::from_millis(9), tokens: 3 }];
/// assert_eq!(tokens_per_chunk(&[r]), Some(2.0));
/// ```
pub fn tokens_per_chunk(records: &[RequestRecord]) -> Option<f64> {
    let (mut tokens, mut chunks) = (0u64, 0u64);
    for r in records.iter().filter(|r| vllm_success(r)) {
        tokens = tokens.saturating_add(r.client_output_tokens());
        chunks += r.chunks.len() as u64;
    }
    (chunks > 0).then(|| tokens as f64 / chunks as f64)
}

/// Results per LoRA adapter (records with [`RequestRecord::adapter`] set), in name order;
/// throughputs over `duration`. Empty when no record names an adapter.
pub fn adapter_figures(
    records: &[RequestRecord],
    duration: Duration,
    percentiles: &[f64],
) -> Vec<AdapterFigures> {
    let mut by: BTreeMap<&str, Vec<&RequestRecord>> = BTreeMap::new();
    for r in records {
        if let Some(a) = r.adapter.as_deref() {
            by.entry(a).or_default().push(r);
        }
    }
    let secs = duration.as_secs_f64();
    by.into_iter()
        .map(|(name, recs)| {
            let ok: Vec<&RequestRecord> =
                recs.iter().copied().filter(|r| vllm_success(r)).collect();
            let output_tokens = ok
                .iter()
                .map(|r| r.output_tokens())
                .fold(0u64, u64::saturating_add);
            let ttft = ok
                .iter()
                .filter_map(|r| r.ttft())
                .map(|d| d.as_secs_f64())
                .collect();
            let e2el = ok
                .iter()
                .filter_map(|r| r.latency())
                .map(|d| d.as_secs_f64())
                .collect();
            AdapterFigures {
                adapter: name.to_string(),
                requests: recs.len() as u64,
                successful_requests: ok.len() as u64,
                output_tokens,
                output_throughput_per_s: (secs > 0.0).then(|| output_tokens as f64 / secs),
                ttft: summary_ms(ttft, percentiles),
                e2el: summary_ms(e2el, percentiles),
            }
        })
        .collect()
}

/// The measured window of a run on the records' clock, seconds: the first send to the last
/// end over all records; `None` without records.
pub fn measured_window_s(records: &[RequestRecord]) -> Option<(f64, f64)> {
    let start = records.iter().map(|r| r.sent_at).min()?;
    let end = records.iter().map(super::record_end).max()?;
    Some((start.as_secs_f64(), end.as_secs_f64()))
}

/// The images the successful requests carried, when any did (see [`ImageFigures`]).
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::image_figures;
/// use servebench::record::{ImagesSent, RequestRecord};
/// let mut r = RequestRecord::new(0, Duration::ZERO);
/// r.usage_prompt_tokens = Some(300);
/// r.images = Some(ImagesSent { count: 1, bytes: 90_000, vision_tokens: 258, of_unknown_size: 0 });
/// let f = image_figures(&[r]).unwrap();
/// assert_eq!((f.images, f.vision_tokens, f.prompt_tokens), (1, 258, 300));
/// assert!(image_figures(&[RequestRecord::new(1, Duration::ZERO)]).is_none());
/// ```
pub fn image_figures(records: &[RequestRecord]) -> Option<ImageFigures> {
    let mut f = ImageFigures::default();
    for r in records.iter().filter(|r| r.outcome.is_success()) {
        let Some(i) = r.images.filter(|i| i.count > 0) else {
            continue;
        };
        f.requests += 1;
        f.images += u64::from(i.count);
        f.bytes += i.bytes;
        f.vision_tokens += i.vision_tokens;
        f.unsized_images += u64::from(i.of_unknown_size);
        f.prompt_tokens += r.input_tokens().unwrap_or(0);
    }
    (f.requests > 0).then_some(f)
}

/// What the answers' checks found, when any was checked (see [`CheckFigures`]).
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::check_figures;
/// use servebench::record::{Chunk, OutputChecks, RequestRecord};
/// let rec = |valid: u32| {
///     let mut r = RequestRecord::new(0, Duration::ZERO);
///     r.chunks.push(Chunk { at: Duration::from_millis(30), tokens: 1 });
///     r.checks = Some(OutputChecks { tool_calls: 1, valid_tool_calls: valid,
///         first_tool_chunk: Some(0), ..Default::default() });
///     r
/// };
/// let records: Vec<_> = (0..10).map(|i| rec(u32::from(i != 0))).collect();
/// let f = check_figures(&records, &[99.0]).unwrap();
/// assert_eq!((f.tool_calls, f.valid_tool_calls), (10, 9));
/// let v = f.tool_call_validity.unwrap();
/// assert!(v.value == 0.9 && v.lo < 0.9 && v.hi > 0.9);
/// assert_eq!(f.time_to_first_tool_call.unwrap().median, Some(30.0));
/// ```
pub fn check_figures(records: &[RequestRecord], percentiles: &[f64]) -> Option<CheckFigures> {
    let mut f = CheckFigures::default();
    let mut ttft_tool = Vec::new();
    for r in records.iter().filter(|r| r.outcome.is_success()) {
        let Some(c) = &r.checks else {
            continue;
        };
        f.requests += 1;
        f.tool_calls += u64::from(c.tool_calls);
        f.valid_tool_calls += u64::from(c.valid_tool_calls);
        if let Some(v) = c.structured_valid {
            f.structured += 1;
            f.structured_valid += u64::from(v);
        } else if c.tool_calls == 0 {
            f.requests_without_tool_call += 1;
        }
        if let Some(chunk) = c.first_tool_chunk.and_then(|i| r.chunks.get(i as usize)) {
            ttft_tool.push(chunk.at.saturating_sub(r.sent_at).as_secs_f64());
        }
        if f.example_failure.is_none() {
            f.example_failure = c.failure.clone();
        }
    }
    if f.requests == 0 {
        return None;
    }
    let rate = |k: u64, n: u64| {
        (n > 0).then(|| {
            let (lo, hi) = crate::stats::wilson_interval(k, n, crate::stats::Z_95);
            Rate {
                value: k as f64 / n as f64,
                lo,
                hi,
            }
        })
    };
    f.tool_call_validity = rate(f.valid_tool_calls, f.tool_calls);
    f.structured_correct_rate = rate(f.structured_valid, f.structured);
    f.time_to_first_tool_call = summary_ms(ttft_tool, percentiles);
    Some(f)
}

/// The sessions the records' turns belong to (see [`SessionFigures`]); `None` when no
/// record is a turn of a session. `duration` is the run's, for the turn rate;
/// `session_slo_ms`, a time to finish a session, adds the sessions within it and their
/// rate (session goodput). A session's sub-agents belong to it: it is complete when every
/// agent's turns succeeded, and it lasts from its first send to its last agent's end.
///
/// ```
/// use std::time::Duration;
/// use servebench::metrics::session_figures;
/// use servebench::record::{Chunk, ErrorKind, Outcome, RequestRecord, TurnRef};
/// let ms = Duration::from_millis;
/// let turn = |id: u64, conversation: u64, turn: u32, ok: bool| {
///     let mut r = RequestRecord::new(id, ms(1000 * id));
///     r.turn = Some(TurnRef { conversation, turn, agent: 0 });
///     r.chunks.push(Chunk { at: ms(1000 * id + 500), tokens: 1 });
///     r.ended_at = Some(ms(1000 * id + 500));
///     if !ok {
///         r.outcome = Outcome::Error { kind: ErrorKind::HttpStatus, message: "500".into() };
///     }
///     r
/// };
/// let records = [turn(0, 0, 1, true), turn(1, 0, 2, true), turn(2, 1, 1, true), turn(3, 1, 2, false)];
/// let f = session_figures(&records, Duration::from_secs(4), &[99.0], Some(1200.0)).unwrap();
/// assert_eq!((f.sessions, f.complete, f.failed, f.turns), (2, 1, 1, 4));
/// assert_eq!(f.failed_at_turn, vec![(2, 1)]);
/// // Session 0: sent at 0 s, its last turn ended at 1.5 s — over a 1.2 s SLO.
/// assert_eq!(f.duration.unwrap().median, Some(1500.0));
/// assert_eq!((f.within_slo, f.goodput_per_s), (Some(0), Some(0.0)));
/// ```
pub fn session_figures(
    records: &[RequestRecord],
    duration: Duration,
    percentiles: &[f64],
    session_slo_ms: Option<f64>,
) -> Option<SessionFigures> {
    use std::collections::{BTreeMap, BTreeSet};
    /// One session: first send, last end, the first failed (sub-agent, turn) — sub-agent
    /// 0 is the main agent, so its failures sort first —, any turn cut off.
    struct Seen {
        first: Duration,
        last: Duration,
        failed: Option<(bool, u32)>,
        cut: bool,
    }
    let mut by: BTreeMap<u64, Seen> = BTreeMap::new();
    let mut agents = BTreeSet::new();
    let mut f = SessionFigures::default();
    let mut ok_turns = 0u64;
    for r in records {
        let Some(t) = r.turn else {
            continue;
        };
        f.turns += 1;
        if t.agent > 0 {
            agents.insert((t.conversation, t.agent));
        }
        let end = r.ended_at.unwrap_or(r.sent_at);
        let e = by.entry(t.conversation).or_insert(Seen {
            first: r.sent_at,
            last: end,
            failed: None,
            cut: false,
        });
        e.first = e.first.min(r.sent_at);
        e.last = e.last.max(end);
        match &r.outcome {
            crate::record::Outcome::Success => ok_turns += 1,
            crate::record::Outcome::Error { .. } => {
                let this = (t.agent > 0, t.turn);
                e.failed = Some(e.failed.map_or(this, |x| x.min(this)));
            }
            crate::record::Outcome::Incomplete { .. } => e.cut = true,
        }
    }
    if by.is_empty() {
        return None;
    }
    f.subagents = agents.len() as u64;
    let mut failed_at: BTreeMap<u32, u64> = BTreeMap::new();
    let mut durations = Vec::new();
    for s in by.values() {
        f.sessions += 1;
        match (s.failed, s.cut) {
            (Some((true, _)), _) => {
                f.failed += 1;
                f.failed_in_subagent += 1;
            }
            (Some((false, t)), _) => {
                f.failed += 1;
                *failed_at.entry(t).or_default() += 1;
            }
            (None, true) => f.cut_off += 1,
            (None, false) => {
                f.complete += 1;
                durations.push(s.last.saturating_sub(s.first).as_secs_f64());
            }
        }
    }
    let secs = duration.as_secs_f64();
    if let Some(limit) = session_slo_ms {
        // Inclusive, as vLLM's goodput compares: `limit / 1000 >= seconds`.
        let within = durations.iter().filter(|&&d| limit / 1000.0 >= d).count() as u64;
        f.slo_ms = Some(limit);
        f.within_slo = Some(within);
        f.goodput_per_s = (secs > 0.0).then(|| within as f64 / secs);
    }
    f.failed_at_turn = failed_at.into_iter().collect();
    f.failed_at_turn
        .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    f.duration = summary_ms(durations, percentiles);
    f.turns_per_s = (secs > 0.0).then(|| ok_turns as f64 / secs);
    Some(f)
}
