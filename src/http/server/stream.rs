//! SSE chunk writing: the response body that turns the engine's items into OpenAI's
//! streaming chunks (or one JSON answer with `stream: false`), with injected cuts.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::Frame;
use hyper::StatusCode;
use serde_json::{json, Value};

use super::engine_loop::{End, FirstWrite, Item};
use super::events::TypedEvents;
use super::handoff::ItemRx;
use super::openai::Parsed;
use super::options::{DeltaField, FaultKind};
use super::prometheus::inc;
use super::routes::{error_json, CancelGuard, Ctx};
use crate::http::Endpoint;
use crate::record::ErrorKind;

/// The error type of response bodies (a cut stream).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BodyError(String);

/// Words the server "generates", one per token.
pub(super) const OUT_WORDS: [&str; 8] = [
    " lorem", " ipsum", " dolor", " sit", " amet", " elit", " sed", " magna",
];

pub(super) struct SseBody {
    pub(super) rx: ItemRx,
    pub(super) endpoint: Endpoint,
    pub(super) parsed: Parsed,
    pub(super) fault: Option<FaultKind>,
    /// Tokens sent so far.
    pub(super) completion: u64,
    pub(super) token_chunks: u32,
    pub(super) done: bool,
    pub(super) guard: CancelGuard,
    pub(super) text_index: usize,
    /// The server's own answer to the prompt ([`super::Answerer`]), streamed as the first
    /// token's text.
    pub(super) answer: Option<String>,
    /// A cut to deliver once `cut_timer` fires.
    pub(super) cut: Option<BodyError>,
    pub(super) cut_timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Set when the first frame holding a token chunk goes to hyper.
    pub(super) first_write: FirstWrite,
    /// The Responses and Messages streams' events.
    pub(super) typed: TypedEvents,
    /// A scripted answer (a tool call's arguments, a structured answer) instead of filler
    /// words.
    pub(super) script: Option<Script>,
}

/// A scripted answer: a tool call's arguments or a structured answer's JSON text, written
/// piece by piece as the engine's tokens come (the last piece holds whatever is left).
#[derive(Debug, Clone)]
pub(super) struct Script {
    /// The function called (`None`: the text is the answer's content).
    pub(super) tool: Option<String>,
    pub(super) text: String,
    pos: usize,
    tokens_left: u64,
    started: bool,
}

impl Script {
    /// A script of `text` over `tokens` tokens. A text shorter than its tokens is padded
    /// with trailing spaces (JSON allows them) so that every token carries a piece: a
    /// client counts a chunk without text as no token, and the answer's tokens and chunks
    /// must agree.
    pub(super) fn new(tool: Option<String>, mut text: String, tokens: u64) -> Script {
        let want = usize::try_from(tokens).unwrap_or(usize::MAX).min(1 << 20);
        if text.len() < want {
            text.extend(std::iter::repeat_n(' ', want - text.len()));
        }
        Script {
            tool,
            text,
            pos: 0,
            tokens_left: tokens.max(1),
            started: false,
        }
    }

    /// The next piece for `tokens` tokens (all that is left when `last`).
    fn take(&mut self, tokens: u64, last: bool) -> &str {
        let left = self.text.len() - self.pos;
        let mut n = if last || tokens >= self.tokens_left {
            left
        } else {
            (left as u64 * tokens).div_ceil(self.tokens_left) as usize
        };
        while !self.text.is_char_boundary(self.pos + n) {
            n += 1;
        }
        self.tokens_left = self.tokens_left.saturating_sub(tokens);
        let piece = &self.text[self.pos..self.pos + n];
        self.pos += n;
        piece
    }
}

impl SseBody {
    pub(super) fn ctx(&self) -> &Ctx {
        &self.guard.ctx
    }

    pub(super) fn text(&mut self, tokens: u32) -> String {
        let mut s = String::with_capacity(tokens as usize * 8);
        let mut tokens = tokens;
        if tokens > 0 {
            if let Some(a) = self.answer.take() {
                s.push_str(&a);
                tokens -= 1;
            }
        }
        for _ in 0..tokens {
            s.push_str(OUT_WORDS[self.text_index % OUT_WORDS.len()]);
            self.text_index += 1;
        }
        s
    }

    pub(super) fn usage_json(&self, prompt: u64, completion: u64) -> String {
        format!(
            r#"{{"prompt_tokens":{prompt},"total_tokens":{},"completion_tokens":{completion}}}"#,
            prompt + completion
        )
    }

    pub(super) fn head(&self, out: &mut String) {
        use std::fmt::Write as _;
        let ctx = self.ctx();
        let (prefix, object) = match self.endpoint {
            Endpoint::Completions => ("cmpl", "text_completion"),
            _ => ("chatcmpl", "chat.completion.chunk"),
        };
        let _ = write!(
            out,
            r#"data: {{"id":"{prefix}-{}","object":"{object}","created":{},"model":{},"choices":"#,
            self.guard.id, ctx.created, ctx.model_json
        );
    }

    /// One chunk with a single choice; `text: None` for the role-only chat chunk. `text` is
    /// made of [`OUT_WORDS`], which need no JSON escaping.
    pub(super) fn chunk(
        &self,
        out: &mut String,
        text: Option<&str>,
        finish: Option<&str>,
        usage: bool,
    ) {
        self.head(out);
        let push_finish = |out: &mut String| match finish {
            Some(f) => {
                out.push('"');
                out.push_str(f);
                out.push('"');
            }
            None => out.push_str("null"),
        };
        match self.endpoint {
            Endpoint::Completions => {
                out.push_str(r#"[{"index":0,"text":""#);
                out.push_str(text.unwrap_or(""));
                out.push_str(r#"","logprobs":null,"finish_reason":"#);
                push_finish(out);
                out.push_str(r#","stop_reason":null}]"#);
            }
            _ => {
                out.push_str(r#"[{"index":0,"delta":"#);
                match text {
                    None => out.push_str(r#"{"role":"assistant","content":""}"#),
                    Some("") => out.push_str("{}"),
                    Some(t) => {
                        out.push_str("{\"");
                        out.push_str(self.ctx().options.delta_field.key());
                        out.push_str("\":\"");
                        out.push_str(t);
                        out.push_str("\"}");
                    }
                }
                out.push_str(r#","logprobs":null,"finish_reason":"#);
                push_finish(out);
                out.push_str("}]");
            }
        }
        if usage {
            out.push_str(",\"usage\":");
            out.push_str(&self.usage_json(self.parsed.prompt_tokens, self.completion));
        }
        out.push_str("}\n\n");
    }

    /// Reasoning tokens still to stream after `sent` tokens, when the server has a
    /// reasoning phase and this is a chat stream (`None`: every token in the delta field).
    pub(super) fn reasoning_left(&self, sent: u64) -> Option<u64> {
        let phase = self.ctx().options.reasoning?;
        if !matches!(
            self.endpoint,
            Endpoint::Chat | Endpoint::Responses | Endpoint::Messages
        ) {
            return None;
        }
        Some(phase.budget(self.parsed.max_tokens).saturating_sub(sent))
    }

    /// The reasoning field's key while a reasoning phase streams: the delta field when it
    /// is a reasoning field, else `reasoning` (vLLM ≥ 0.11).
    pub(super) fn reasoning_key(&self) -> &'static str {
        match self.ctx().options.delta_field {
            DeltaField::Content => DeltaField::Reasoning.key(),
            other => other.key(),
        }
    }

    /// One chat chunk whose delta carries reasoning and/or answer text (either may be
    /// empty; both are made of [`OUT_WORDS`]).
    pub(super) fn split_chunk(
        &self,
        out: &mut String,
        reasoning: &str,
        answer: &str,
        finish: Option<&str>,
    ) {
        self.head(out);
        out.push_str(r#"[{"index":0,"delta":{"#);
        let mut first = true;
        for (key, text) in [(self.reasoning_key(), reasoning), ("content", answer)] {
            if text.is_empty() {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            out.push('"');
            out.push_str(key);
            out.push_str("\":\"");
            out.push_str(text);
            out.push('"');
        }
        out.push_str(r#"},"logprobs":null,"finish_reason":"#);
        match finish {
            Some(f) => {
                out.push('"');
                out.push_str(f);
                out.push('"');
            }
            None => out.push_str("null"),
        }
        out.push_str("}]");
        if self.parsed.continuous_usage {
            out.push_str(",\"usage\":");
            out.push_str(&self.usage_json(self.parsed.prompt_tokens, self.completion));
        }
        out.push_str("}\n\n");
    }

    pub(super) fn error_chunk(out: &mut String, kind: ErrorKind, message: &str) {
        let status = match kind {
            ErrorKind::Rejected => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        out.push_str("data: ");
        out.push_str(&error_json(status, message));
        out.push_str("\n\ndata: [DONE]\n\n");
    }

    pub(super) fn finish_reason(&self) -> &'static str {
        if self.completion >= self.parsed.max_tokens {
            "length"
        } else {
            "stop"
        }
    }

    /// Format one item; `Err` cuts the connection.
    pub(super) fn render(&mut self, item: Item, out: &mut String) -> Result<(), BodyError> {
        if matches!(self.endpoint, Endpoint::Responses | Endpoint::Messages) {
            return self.render_events(item, out);
        }
        if item.tokens > 0 {
            if let Some(message) = self.injected_fault(out)? {
                Self::error_chunk(out, ErrorKind::Other, &message);
                return Ok(());
            }
            if self.token_chunks == 0 && self.endpoint == Endpoint::Chat {
                self.chunk(out, None, None, self.parsed.continuous_usage);
            }
            self.count_tokens(item.tokens);
            if self.script.is_some() {
                return self.render_script(item, out);
            }
            let finish = match &item.end {
                Some(End::Finished(_)) => Some(self.finish_reason()),
                _ => None,
            };
            let before = self.completion - u64::from(item.tokens);
            match self.reasoning_left(before) {
                Some(left) if left > 0 => {
                    // Tokens up to the phase's budget are reasoning, the rest answer.
                    let r = u32::try_from(left.min(u64::from(item.tokens))).unwrap_or(u32::MAX);
                    let reasoning = self.text(r);
                    let answer = self.text(item.tokens - r);
                    self.split_chunk(out, &reasoning, &answer, finish);
                }
                Some(_) => {
                    let text = self.text(item.tokens);
                    self.split_chunk(out, "", &text, finish);
                }
                None => {
                    let text = self.text(item.tokens);
                    self.chunk(out, Some(&text), finish, self.parsed.continuous_usage);
                }
            }
        }
        if self.script.is_some() && item.tokens == 0 {
            return self.render_script(item, out);
        }
        match item.end {
            None => {}
            Some(End::Finished(usage)) => {
                if item.tokens == 0 {
                    self.chunk(
                        out,
                        Some(""),
                        Some(self.finish_reason()),
                        self.parsed.continuous_usage,
                    );
                }
                self.close_stream(out, usage);
            }
            Some(End::Failed { kind, message }) => {
                Self::error_chunk(out, kind, &message);
                self.ended(false);
            }
        }
        Ok(())
    }

    /// One engine item as Responses or Messages events.
    pub(super) fn render_events(&mut self, item: Item, out: &mut String) -> Result<(), BodyError> {
        let finished = matches!(item.end, Some(End::Finished(_)));
        if item.tokens > 0 {
            if let Some(e) = self.injected_fault(out)? {
                self.typed.error_event(out, &e);
                return Ok(());
            }
            let before = self.completion;
            self.count_tokens(item.tokens);
            if self.script.is_none() {
                let r = self.reasoning_left(before).map_or(0, |left| {
                    u32::try_from(left.min(u64::from(item.tokens))).unwrap_or(0)
                });
                let reasoning = self.text(r);
                let answer = self.text(item.tokens - r);
                self.typed.delta(out, &reasoning, true);
                self.typed.delta(out, &answer, false);
            }
        }
        // A scripted answer: the tool call's arguments or the structured answer, piece by
        // piece (what is left goes with the end).
        if let Some(script) = &mut self.script {
            if item.tokens > 0 || finished {
                let piece = script.take(u64::from(item.tokens), finished).to_string();
                match &script.tool {
                    Some(_) => self.typed.tool_delta(out, &piece),
                    None => self.typed.delta(out, &piece, false),
                }
            }
        }
        match item.end {
            None => {}
            Some(End::Finished(usage)) => {
                let input = usage.prompt_tokens.unwrap_or(self.parsed.prompt_tokens);
                let output = usage.completion_tokens.unwrap_or(self.completion);
                let length = self.finish_reason() == "length";
                self.typed.finish(out, input, output, length);
                self.ended(true);
            }
            Some(End::Failed { message, .. }) => {
                self.typed.error_event(out, &message);
                self.ended(false);
            }
        }
        Ok(())
    }

    /// The stream's end: the usage chunk when asked for, `[DONE]`.
    fn close_stream(&mut self, out: &mut String, usage: crate::record::Usage) {
        if self.parsed.include_usage {
            self.head(out);
            out.push_str("[],\"usage\":");
            out.push_str(&self.usage_json(
                usage.prompt_tokens.unwrap_or(self.parsed.prompt_tokens),
                usage.completion_tokens.unwrap_or(self.completion),
            ));
            out.push_str("}\n\n");
        }
        out.push_str("data: [DONE]\n\n");
        self.ended(true);
    }

    /// One engine item of a scripted answer: the script's next piece as a `tool_calls` or
    /// `content` delta, and the stream's end when the item ends it.
    fn render_script(&mut self, item: Item, out: &mut String) -> Result<(), BodyError> {
        let finished = matches!(item.end, Some(End::Finished(_)));
        let Some(script) = &mut self.script else {
            return Ok(());
        };
        let first = !script.started;
        script.started = true;
        let piece = script.take(u64::from(item.tokens), finished).to_string();
        let tool = script.tool.clone();
        let finish = finished.then(|| match &tool {
            Some(_) => "tool_calls",
            None => self.finish_reason(),
        });
        if item.tokens > 0 || !piece.is_empty() || finished {
            self.head(out);
            out.push_str(r#"[{"index":0,"delta":"#);
            let delta = match (&tool, first) {
                (Some(name), true) => json!({"tool_calls": [{"index": 0,
                    "id": format!("call_{}", self.guard.id), "type": "function",
                    "function": {"name": name, "arguments": piece}}]}),
                (Some(_), false) => {
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                }
                (None, _) => json!({"content": piece}),
            };
            out.push_str(&delta.to_string());
            out.push_str(r#","logprobs":null,"finish_reason":"#);
            out.push_str(&finish.map_or("null".to_string(), |f| format!("\"{f}\"")));
            out.push_str("}]");
            if self.parsed.continuous_usage {
                out.push_str(",\"usage\":");
                out.push_str(&self.usage_json(self.parsed.prompt_tokens, self.completion));
            }
            out.push_str("}\n\n");
        }
        match item.end {
            None => {}
            Some(End::Finished(usage)) => {
                self.close_stream(out, usage);
            }
            Some(End::Failed { kind, message }) => {
                Self::error_chunk(out, kind, &message);
                self.ended(false);
            }
        }
        Ok(())
    }

    /// The fault injected before this token chunk, if one is due: `Err` cuts the stream,
    /// `Ok(Some(message))` ends it with an error the caller writes in its vocabulary.
    pub(super) fn injected_fault(
        &mut self,
        _out: &mut String,
    ) -> Result<Option<String>, BodyError> {
        let counters = Arc::clone(&self.guard.ctx.counters);
        match self.fault {
            Some(FaultKind::CutStream { after_chunks }) if self.token_chunks >= after_chunks => {
                inc(&counters.injected_faults, 1);
                self.done = true;
                Err(BodyError(format!(
                    "injected fault: stream cut after {after_chunks} chunks"
                )))
            }
            Some(FaultKind::StreamError { after_chunks }) if self.token_chunks >= after_chunks => {
                inc(&counters.injected_faults, 1);
                self.done = true;
                Ok(Some(format!(
                    "injected fault: error after {after_chunks} chunks"
                )))
            }
            _ => Ok(None),
        }
    }

    /// Count a token chunk of `tokens` tokens as sent.
    pub(super) fn count_tokens(&mut self, tokens: u32) {
        let counters = &self.guard.ctx.counters;
        self.completion += u64::from(tokens);
        self.token_chunks += 1;
        inc(&counters.token_chunks_sent, 1);
        inc(&counters.tokens_sent, u64::from(tokens));
    }

    /// The stream ended (completed or failed).
    pub(super) fn ended(&mut self, completed: bool) {
        let counters = &self.guard.ctx.counters;
        if completed {
            inc(&counters.completed, 1);
        } else {
            inc(&counters.failed, 1);
        }
        self.guard.armed = false;
        self.done = true;
    }

    pub(super) fn poll_next(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if self.cut.is_some() {
            // Let hyper flush what was written before the cut (it flushes when the body is
            // pending), then break the connection.
            let timer = self
                .cut_timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(20))));
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            return Poll::Ready(self.cut.take().map(Err));
        }
        if self.done {
            return Poll::Ready(None);
        }
        let mut out = String::new();
        // Take everything already waiting, so a slow reader gets one larger write.
        loop {
            let item = match self.rx.poll_recv(cx) {
                Poll::Ready(Some(item)) => item,
                Poll::Ready(None) => {
                    self.done = true;
                    if out.is_empty() {
                        return Poll::Ready(Some(Err(BodyError("engine stopped".into()))));
                    }
                    break;
                }
                Poll::Pending => {
                    if out.is_empty() {
                        return Poll::Pending;
                    }
                    break;
                }
            };
            if let Err(e) = self.render(item, &mut out) {
                self.cut = Some(e);
                if out.is_empty() {
                    return self.poll_next(cx);
                }
                break; // write what came before the cut first
            }
            if self.done {
                break;
            }
        }
        if self.token_chunks > 0 {
            let _ = self.first_write.get_or_init(Instant::now);
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }

    /// `stream: false`: wait for the end and answer one JSON object.
    pub(super) async fn collect_all(&mut self) -> Result<String, String> {
        loop {
            let Some(item) = self.rx.recv().await else {
                return Err("engine stopped".into());
            };
            self.completion += u64::from(item.tokens);
            match item.end {
                None => {}
                Some(End::Failed { message, .. }) => {
                    inc(&self.ctx().counters.failed, 1);
                    self.guard.armed = false;
                    return Err(message);
                }
                Some(End::Finished(usage)) => {
                    self.guard.armed = false;
                    let counters = Arc::clone(&self.ctx().counters);
                    inc(&counters.completed, 1);
                    let mut text = self.text(u32::try_from(self.completion).unwrap_or(u32::MAX));
                    let mut tool_call = None;
                    if let Some(script) = self.script.take() {
                        match script.tool {
                            Some(name) => {
                                tool_call = Some(json!([{"id": format!("call_{}", self.guard.id),
                                    "type": "function", "function": {"name": name,
                                    "arguments": script.text}}]));
                                text = String::new();
                            }
                            None => text = script.text,
                        }
                    }
                    if matches!(self.endpoint, Endpoint::Responses | Endpoint::Messages) {
                        let input = usage.prompt_tokens.unwrap_or(self.parsed.prompt_tokens);
                        let output = usage.completion_tokens.unwrap_or(self.completion);
                        let length = self.finish_reason() == "length";
                        return Ok(self.typed.whole_answer(text, input, output, length));
                    }
                    let prompt = usage.prompt_tokens.unwrap_or(self.parsed.prompt_tokens);
                    let completion = usage.completion_tokens.unwrap_or(self.completion);
                    let usage = json!({"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion});
                    let ctx = self.ctx();
                    let choice = match self.endpoint {
                        Endpoint::Completions => {
                            json!({"index": 0, "text": text, "logprobs": null, "finish_reason": self.finish_reason()})
                        }
                        _ => {
                            let mut message = json!({"role": "assistant", "content": null});
                            match ctx.options.reasoning {
                                Some(phase) => {
                                    let r = usize::try_from(phase.budget(self.parsed.max_tokens))
                                        .unwrap_or(usize::MAX);
                                    // Words are ASCII: a word boundary is a char boundary.
                                    let cut = text
                                        .match_indices(' ')
                                        .nth(r)
                                        .map_or(text.len(), |(i, _)| i);
                                    let (thought, answer) = text.split_at(cut);
                                    message[self.reasoning_key()] = Value::String(thought.into());
                                    message["content"] = Value::String(answer.into());
                                }
                                None => {
                                    message[ctx.options.delta_field.key()] = Value::String(text)
                                }
                            }
                            if let Some(calls) = tool_call {
                                message = json!({"role": "assistant", "content": null, "tool_calls": calls});
                                return Ok(json!({
                                    "id": format!("chatcmpl-{}", self.guard.id),
                                    "object": "chat.completion", "created": ctx.created,
                                    "model": ctx.options.model,
                                    "choices": [{"index": 0, "message": message, "logprobs": null,
                                        "finish_reason": "tool_calls"}],
                                    "usage": usage,
                                })
                                .to_string());
                            }
                            json!({"index": 0, "message": message, "logprobs": null, "finish_reason": self.finish_reason()})
                        }
                    };
                    let (prefix, object) = match self.endpoint {
                        Endpoint::Completions => ("cmpl", "text_completion"),
                        _ => ("chatcmpl", "chat.completion"),
                    };
                    return Ok(json!({
                        "id": format!("{prefix}-{}", self.guard.id),
                        "object": object,
                        "created": ctx.created,
                        "model": ctx.options.model,
                        "choices": [choice],
                        "usage": usage,
                    })
                    .to_string());
                }
            }
        }
    }
}
