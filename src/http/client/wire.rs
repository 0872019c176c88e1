//! The wire format of streamed chunks (choices, deltas, usage) and [`StreamState`], the
//! per-stream interpretation of the SSE `data` payloads.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::failure::{error_message, fail, truncate, Failure};
use crate::record::{ErrorKind, StreamSplit};

#[derive(Deserialize)]
pub(super) struct WireMessage<'a> {
    #[serde(default, borrow)]
    pub(super) choices: Vec<WireChoice<'a>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    pub(super) object: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct WireChoice<'a> {
    #[serde(default, borrow)]
    pub(super) text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) delta: Option<WireDelta<'a>>,
}

#[derive(Deserialize)]
pub(super) struct WireDelta<'a> {
    #[serde(default, borrow)]
    pub(super) content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) tool_calls: Option<Vec<WireToolCall<'a>>>,
}

/// One entry of a streamed `delta.tool_calls`: which call it continues, and a piece of its
/// function's name or arguments.
#[derive(Deserialize)]
pub(super) struct WireToolCall<'a> {
    #[serde(default)]
    pub(super) index: Option<u32>,
    #[serde(default, borrow)]
    pub(super) function: Option<WireFunction<'a>>,
}

#[derive(Deserialize)]
pub(super) struct WireFunction<'a> {
    #[serde(default, borrow)]
    pub(super) name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Clone, Copy)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
}

pub(super) fn non_empty(s: &Option<Cow<'_, str>>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

impl WireChoice<'_> {
    /// Answer text: `text` (completions), `delta.content` or `delta.tool_calls`.
    pub(super) fn carries_answer(&self) -> bool {
        non_empty(&self.text)
            || self.delta.as_ref().is_some_and(|d| {
                non_empty(&d.content) || d.tool_calls.as_ref().is_some_and(|t| !t.is_empty())
            })
    }

    /// Reasoning text: `delta.reasoning` or `delta.reasoning_content`.
    pub(super) fn carries_reasoning(&self) -> bool {
        self.delta
            .as_ref()
            .is_some_and(|d| non_empty(&d.reasoning) || non_empty(&d.reasoning_content))
    }
}

/// Per-stream interpretation of the SSE `data` payloads.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StreamState {
    /// Token chunks seen so far.
    pub token_chunks: u64,
    /// Output tokens attributed to chunks so far.
    pub counted_tokens: u64,
    /// Latest `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// Latest `usage.completion_tokens`.
    pub completion_tokens: Option<u64>,
    /// How the token chunks divided into reasoning and answer so far.
    pub split: StreamSplit,
    /// Which API's events the stream carries.
    pub protocol: Protocol,
    /// The event that ends the stream came (`response.completed`, `message_stop`; the
    /// OpenAI chunk APIs end with `data: [DONE]` instead, which never reaches the state).
    pub done: bool,
    /// The tool calls streamed so far: each one's function name and arguments text, by
    /// the call's `index`.
    pub tool_calls: Vec<(String, String)>,
    /// Index of the first token chunk that carried a tool call.
    pub first_tool_chunk: Option<u32>,
    /// Tokens of the chunks that carried tool calls.
    pub tool_tokens: u64,
    /// Keep the answer's text in `content` (set when a response format must be checked).
    pub keep_content: bool,
    /// The answer's text, when `keep_content`.
    pub content: String,
    /// The stream's index of each tool call in `tool_calls` (the Responses API's
    /// `output_index`, the Messages API's content block `index`).
    pub(super) tool_slots: Vec<u64>,
}

/// The event vocabularies of the streamed APIs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI's chunk objects (`/v1/completions`, `/v1/chat/completions`), ended by
    /// `data: [DONE]`.
    #[default]
    Chunks,
    /// OpenAI's Responses API events (`response.output_text.delta`, …,
    /// `response.completed`).
    Responses,
    /// Anthropic's Messages API events (`message_start`, `content_block_delta`, …,
    /// `message_stop`).
    Messages,
}

impl StreamState {
    /// A fresh state for a stream of `endpoint`'s events.
    pub fn for_endpoint(endpoint: crate::http::Endpoint) -> StreamState {
        let protocol = match endpoint {
            crate::http::Endpoint::Responses => Protocol::Responses,
            crate::http::Endpoint::Messages => Protocol::Messages,
            _ => Protocol::Chunks,
        };
        StreamState {
            protocol,
            ..StreamState::default()
        }
    }

    /// Keeps the pieces of tool calls (and, when asked, the answer's text) a chunk carries;
    /// whether it carried a tool call.
    fn collect(&mut self, msg: &WireMessage<'_>) -> bool {
        let mut tool = false;
        for choice in &msg.choices {
            let Some(d) = &choice.delta else {
                if self.keep_content {
                    if let Some(t) = &choice.text {
                        self.content.push_str(t);
                    }
                }
                continue;
            };
            if self.keep_content {
                if let Some(c) = &d.content {
                    self.content.push_str(c);
                }
            }
            for (pos, call) in d.tool_calls.iter().flatten().enumerate() {
                tool = true;
                let i = call.index.map_or(pos, |i| i as usize);
                // A hostile index must not size the list: calls come one after another.
                if i > self.tool_calls.len() {
                    continue;
                }
                if i == self.tool_calls.len() {
                    self.tool_calls.push((String::new(), String::new()));
                }
                if let Some(f) = &call.function {
                    if let Some(n) = &f.name {
                        self.tool_calls[i].0.push_str(n);
                    }
                    if let Some(a) = &f.arguments {
                        self.tool_calls[i].1.push_str(a);
                    }
                }
            }
        }
        tool
    }

    /// Account one token chunk of `tokens` tokens that carried reasoning and/or answer
    /// text; its index among the stream's token chunks.
    pub(super) fn count_chunk(&mut self, tokens: u32, reasoning: bool, answer: bool) {
        let index = u32::try_from(self.token_chunks).unwrap_or(u32::MAX);
        self.token_chunks += 1;
        self.counted_tokens = self.counted_tokens.saturating_add(u64::from(tokens));
        self.split.add_chunk(index, tokens, reasoning, answer);
    }

    /// Interpret one SSE `data` payload of OpenAI's chunk APIs (not `[DONE]`; the Responses
    /// and Messages events go to [`super::events::on_event`]): `Ok(Some(tokens))` for a token chunk,
    /// `Ok(None)` for anything else (role-only, usage-only, empty), `Err` for an in-stream
    /// error object or a payload that is not JSON.
    pub(super) fn on_data(&mut self, data: &str) -> Result<Option<u32>, Failure> {
        let msg: WireMessage = serde_json::from_str(data).map_err(|e| {
            fail(
                ErrorKind::Protocol,
                format!("bad SSE data ({e}): {}", truncate(data)),
            )
        })?;
        if msg.error.is_some() || msg.object.as_deref() == Some("error") {
            // Rare: parse again as a tree to find the message (`error: null` is no error).
            let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
            if let Some(message) = error_message(&v) {
                return Err(fail(ErrorKind::ServerError, message));
            }
        }
        let reasoning = msg.choices.iter().any(WireChoice::carries_reasoning);
        let answer = msg.choices.iter().any(WireChoice::carries_answer);
        let is_token = reasoning || answer;
        let mut tokens = None;
        let tool_chunk = self.collect(&msg);
        if tool_chunk {
            self.first_tool_chunk
                .get_or_insert(u32::try_from(self.token_chunks).unwrap_or(u32::MAX));
        }
        if is_token {
            let index = u32::try_from(self.token_chunks).unwrap_or(u32::MAX);
            self.token_chunks += 1;
            let n = match msg.usage.and_then(|u| u.completion_tokens) {
                Some(cum) => cum.saturating_sub(self.counted_tokens).max(1),
                None => 1,
            };
            // A hostile or broken server may claim any count: a chunk carries at most
            // u32::MAX tokens, and the running count is what the chunks carried.
            let t = u32::try_from(n).unwrap_or(u32::MAX);
            self.counted_tokens = self.counted_tokens.saturating_add(u64::from(t));
            self.split.add_chunk(index, t, reasoning, answer);
            if tool_chunk {
                self.tool_tokens = self.tool_tokens.saturating_add(u64::from(t));
            }
            tokens = Some(t);
        }
        if let Some(u) = msg.usage {
            if u.prompt_tokens.is_some() {
                self.prompt_tokens = u.prompt_tokens;
            }
            if u.completion_tokens.is_some() {
                self.completion_tokens = u.completion_tokens;
            }
        }
        Ok(tokens)
    }

    /// The stream's reasoning split, when any chunk carried reasoning (`None` for a stream
    /// of answer text only).
    ///
    /// ```
    /// use servebench::http::client::StreamState;
    /// let mut s = StreamState::default();
    /// s.interpret(r#"{"choices":[{"index":0,"delta":{"reasoning":"Hmm"}}]}"#).unwrap();
    /// s.interpret(r#"{"choices":[{"index":0,"delta":{"content":"Yes"}}]}"#).unwrap();
    /// let split = s.reasoning_split().unwrap();
    /// assert_eq!((split.first_reasoning_chunk, split.first_answer_chunk), (Some(0), Some(1)));
    /// assert_eq!((split.reasoning_tokens, split.answer_tokens), (1, 1));
    /// ```
    pub fn reasoning_split(&self) -> Option<StreamSplit> {
        self.split.first_reasoning_chunk.map(|_| self.split)
    }
}
