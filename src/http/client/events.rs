//! The typed event streams of OpenAI's Responses API and Anthropic's Messages API: which
//! events carry tokens (answer, reasoning, tool-call arguments), where usage is, which event
//! ends the stream and which reports an error.
//!
//! * Responses (OpenAI API reference, "Streaming events"): text arrives as
//!   `response.output_text.delta`, reasoning as `response.reasoning_text.delta` (vLLM) or
//!   `response.reasoning_summary_text.delta`, tool-call arguments as
//!   `response.function_call_arguments.delta`; `response.completed` (or
//!   `response.incomplete`, a length stop) ends the stream with `response.usage`
//!   (`input_tokens`, `output_tokens`); `response.failed` and `error` are failures.
//! * Messages (Anthropic API reference, "Streaming messages"): `message_start` carries
//!   `message.usage.input_tokens`; each `content_block_delta` carries a `text_delta`,
//!   `thinking_delta` (reasoning) or `input_json_delta` (tool arguments); `message_delta`
//!   carries the cumulative `usage.output_tokens`; `message_stop` ends the stream; an
//!   `error` event is a failure. `ping` and `signature_delta` carry no tokens.
//!
//! Each token event counts as one chunk of one token: neither API streams a running token
//! count per event. These streams are parsed as JSON trees: they are not the text hot path
//! (`/v1/completions` and chat), whose chunks [`super::wire`] parses without allocating.

use serde_json::Value;

use super::failure::{fail, truncate, Failure};
use super::wire::{Protocol, StreamState};
use crate::record::ErrorKind;

/// One SSE `data` payload of any streamed API, by the state's [`Protocol`].
pub(super) fn on_event(state: &mut StreamState, data: &str) -> Result<Option<u32>, Failure> {
    match state.protocol {
        Protocol::Chunks => state.on_data(data),
        Protocol::Responses => on_responses_event(state, data),
        Protocol::Messages => on_messages_event(state, data),
    }
}

impl StreamState {
    /// Like the private parser the engine uses, with the failure as `(kind, message)`:
    /// exposed for tests and for tools that replay captured streams.
    ///
    /// ```
    /// use servebench::http::client::StreamState;
    /// let mut s = StreamState::default();
    /// // vLLM >= 0.11 streams a reasoning model's thinking as `delta.reasoning`.
    /// let role = r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#;
    /// let think = r#"{"choices":[{"index":0,"delta":{"reasoning":"Hmm"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#;
    /// assert_eq!(s.interpret(role).unwrap(), None);
    /// assert_eq!(s.interpret(think).unwrap(), Some(2));
    /// assert_eq!(s.completion_tokens, Some(2));
    /// ```
    pub fn interpret(&mut self, data: &str) -> Result<Option<u32>, (ErrorKind, String)> {
        on_event(self, data).map_err(|f| (f.kind, f.message))
    }
}

fn parse(data: &str) -> Result<Value, Failure> {
    serde_json::from_str(data).map_err(|e| {
        fail(
            ErrorKind::Protocol,
            format!("bad SSE data ({e}): {}", truncate(data)),
        )
    })
}

fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

fn message_of(v: &Value) -> String {
    v.get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| truncate(&v.to_string()))
}

/// One Responses API event.
fn on_responses_event(state: &mut StreamState, data: &str) -> Result<Option<u32>, Failure> {
    let v = parse(data)?;
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "response.output_text.delta" | "response.function_call_arguments.delta"
            if non_empty_str(v.get("delta")) =>
        {
            state.count_chunk(1, false, true);
            Ok(Some(1))
        }
        "response.reasoning_text.delta" | "response.reasoning_summary_text.delta"
            if non_empty_str(v.get("delta")) =>
        {
            state.count_chunk(1, true, false);
            Ok(Some(1))
        }
        "response.completed" | "response.incomplete" => {
            if let Some(usage) = v.pointer("/response/usage") {
                state.prompt_tokens = usage.get("input_tokens").and_then(Value::as_u64);
                state.completion_tokens = usage.get("output_tokens").and_then(Value::as_u64);
            }
            state.done = true;
            Ok(None)
        }
        "response.failed" => {
            let message = v
                .pointer("/response/error")
                .map_or_else(|| "response.failed".to_string(), message_of);
            Err(fail(ErrorKind::ServerError, message))
        }
        "error" => Err(fail(ErrorKind::ServerError, message_of(&v))),
        _ => Ok(None),
    }
}

/// One Messages API event.
fn on_messages_event(state: &mut StreamState, data: &str) -> Result<Option<u32>, Failure> {
    let v = parse(data)?;
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "message_start" => {
            if let Some(usage) = v.pointer("/message/usage") {
                state.prompt_tokens = usage.get("input_tokens").and_then(Value::as_u64);
            }
            Ok(None)
        }
        "content_block_delta" => {
            let delta = v.get("delta").unwrap_or(&Value::Null);
            let (reasoning, answer) = match delta.get("type").and_then(Value::as_str) {
                Some("text_delta") => (false, non_empty_str(delta.get("text"))),
                Some("input_json_delta") => (false, non_empty_str(delta.get("partial_json"))),
                Some("thinking_delta") => (non_empty_str(delta.get("thinking")), false),
                _ => (false, false),
            };
            if reasoning || answer {
                state.count_chunk(1, reasoning, answer);
                Ok(Some(1))
            } else {
                Ok(None)
            }
        }
        "message_delta" => {
            if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                state.completion_tokens = Some(n);
            }
            Ok(None)
        }
        "message_stop" => {
            state.done = true;
            Ok(None)
        }
        "error" => {
            let message = v.get("error").map_or_else(|| message_of(&v), message_of);
            Err(fail(ErrorKind::ServerError, message))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::http::client::StreamState;
    use crate::http::sse::SseParser;
    use crate::http::Endpoint;

    /// Feeds a captured stream; the token chunks (reasoning?, answer?) and the state.
    fn replay(endpoint: Endpoint, text: &str) -> (Vec<u32>, StreamState) {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        parser.feed(text.as_bytes(), &mut events).unwrap();
        let mut state = StreamState::for_endpoint(endpoint);
        let mut chunks = Vec::new();
        for ev in events {
            if let Some(t) = state.interpret(&ev.data).unwrap() {
                chunks.push(t);
            }
        }
        (chunks, state)
    }

    /// The event sequence of OpenAI's API reference, "Streaming events" (Responses), for a
    /// short answer, with vLLM's reasoning event before it.
    const RESPONSES: &str = include_str!("../../../tests/fixtures/api/responses-stream.txt");
    /// The example of Anthropic's "Streaming messages" page (a text answer), with a
    /// thinking block before it as its extended-thinking example shows.
    const MESSAGES: &str = include_str!("../../../tests/fixtures/api/messages-stream.txt");

    #[test]
    fn responses_events_time_reasoning_answer_and_usage() {
        let (chunks, s) = replay(Endpoint::Responses, RESPONSES);
        assert_eq!(chunks, vec![1, 1, 1, 1]);
        assert!(s.done);
        let split = s.reasoning_split().unwrap();
        assert_eq!(
            (split.first_reasoning_chunk, split.first_answer_chunk),
            (Some(0), Some(1))
        );
        assert_eq!((s.prompt_tokens, s.completion_tokens), (Some(37), Some(11)));
    }

    #[test]
    fn messages_events_time_thinking_text_and_usage() {
        let (chunks, s) = replay(Endpoint::Messages, MESSAGES);
        assert_eq!(chunks.len(), 4);
        assert!(s.done);
        let split = s.reasoning_split().unwrap();
        assert_eq!((split.reasoning_tokens, split.answer_tokens), (2, 2));
        assert_eq!((s.prompt_tokens, s.completion_tokens), (Some(25), Some(15)));
    }

    #[test]
    fn errors_in_either_stream_are_failures() {
        let mut s = StreamState::for_endpoint(Endpoint::Messages);
        let e = s
            .interpret(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )
            .unwrap_err();
        assert_eq!(e.1, "Overloaded");
        let mut s = StreamState::for_endpoint(Endpoint::Responses);
        let e = s
            .interpret(r#"{"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}"#)
            .unwrap_err();
        assert_eq!(e.1, "boom");
        assert!(s.interpret("not json").is_err());
    }
}
