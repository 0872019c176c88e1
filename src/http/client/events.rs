//! The typed event streams of OpenAI's Responses API and Anthropic's Messages API: which
//! events carry tokens (answer, reasoning, tool-call arguments), where usage is, which event
//! ends the stream and which reports an error.
//!
//! * Responses (OpenAI API reference, "Streaming events"): text arrives as
//!   `response.output_text.delta`, reasoning as `response.reasoning_text.delta` (vLLM) or
//!   `response.reasoning_summary_text.delta`, tool-call arguments as
//!   `response.function_call_arguments.delta` (for the `function_call` item
//!   `response.output_item.added` opened with the tool's name, by `output_index`); `response.completed` (or
//!   `response.incomplete`, a length stop) ends the stream with `response.usage`
//!   (`input_tokens`, `output_tokens`); `response.failed` and `error` are failures.
//! * Messages (Anthropic API reference, "Streaming messages"): `message_start` carries
//!   `message.usage.input_tokens`; each `content_block_delta` carries a `text_delta`,
//!   `thinking_delta` (reasoning) or `input_json_delta` (tool arguments, for the
//!   `tool_use` block `content_block_start` opened with the tool's name); `message_delta`
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

/// A tool call opens at stream index `slot` (`name` given), or a piece of arguments comes
/// for the call there; a token chunk of the call when `piece` is some text.
fn tool_piece(state: &mut StreamState, slot: u64, name: Option<&str>, piece: &str) -> bool {
    let at = match state.tool_slots.iter().position(|&s| s == slot) {
        Some(i) => i,
        None => {
            state.tool_slots.push(slot);
            state.tool_calls.push((String::new(), String::new()));
            state.tool_calls.len() - 1
        }
    };
    if let Some(n) = name {
        state.tool_calls[at].0.push_str(n);
    }
    state.tool_calls[at].1.push_str(piece);
    if piece.is_empty() {
        return false;
    }
    state
        .first_tool_chunk
        .get_or_insert(u32::try_from(state.token_chunks).unwrap_or(u32::MAX));
    state.tool_tokens = state.tool_tokens.saturating_add(1);
    state.count_chunk(1, false, true);
    true
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
    let slot = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
    match kind {
        "response.output_item.added"
            if v.pointer("/item/type").and_then(Value::as_str) == Some("function_call") =>
        {
            let name = v
                .pointer("/item/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            tool_piece(state, slot, Some(name), "");
            Ok(None)
        }
        "response.function_call_arguments.delta" => {
            let piece = v.get("delta").and_then(Value::as_str).unwrap_or("");
            Ok(tool_piece(state, slot, None, piece).then_some(1))
        }
        "response.output_text.delta" if non_empty_str(v.get("delta")) => {
            if state.keep_content {
                let text = v.get("delta").and_then(Value::as_str).unwrap_or("");
                state.content.push_str(text);
            }
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
        "content_block_start"
            if v.pointer("/content_block/type").and_then(Value::as_str) == Some("tool_use") =>
        {
            let slot = v.get("index").and_then(Value::as_u64).unwrap_or(0);
            let name = v
                .pointer("/content_block/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            tool_piece(state, slot, Some(name), "");
            Ok(None)
        }
        "content_block_delta" => {
            let delta = v.get("delta").unwrap_or(&Value::Null);
            let kind = delta.get("type").and_then(Value::as_str);
            if kind == Some("input_json_delta") {
                let slot = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                let piece = delta
                    .get("partial_json")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return Ok(tool_piece(state, slot, None, piece).then_some(1));
            }
            let (reasoning, answer) = match kind {
                Some("text_delta") => (false, non_empty_str(delta.get("text"))),
                Some("thinking_delta") => (non_empty_str(delta.get("thinking")), false),
                _ => (false, false),
            };
            if answer && state.keep_content {
                let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                state.content.push_str(text);
            }
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

    /// OpenAI's function-calling guide, "Streaming": a `function_call` output item, its
    /// arguments in `response.function_call_arguments.delta` events.
    const RESPONSES_TOOL: &str =
        include_str!("../../../tests/fixtures/api/responses-tool-call-stream.txt");
    /// Anthropic's "Streaming messages" page, its tool-use example: a text block, then a
    /// `tool_use` block whose input streams as `input_json_delta` pieces.
    const MESSAGES_TOOL: &str =
        include_str!("../../../tests/fixtures/api/messages-tool-use-stream.txt");

    fn weather() -> crate::http::schema::Tools {
        crate::http::schema::Tools::from_json(serde_json::json!([{"type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["location"]}}}]))
        .unwrap()
    }

    #[test]
    fn a_responses_function_call_is_collected_timed_and_checked() {
        let (chunks, s) = replay(Endpoint::Responses, RESPONSES_TOOL);
        // Seven argument pieces, each a token chunk of the call.
        assert_eq!(chunks.len(), 7);
        assert_eq!(
            s.tool_calls,
            vec![(
                "get_weather".into(),
                r#"{"location":"Paris, France"}"#.into()
            )]
        );
        assert_eq!((s.first_tool_chunk, s.tool_tokens), (Some(0), 7));
        let c = crate::http::client::checks::output_checks(Some(&weather()), None, &s).unwrap();
        assert_eq!((c.tool_calls, c.valid_tool_calls), (1, 1));
        assert_eq!((s.prompt_tokens, s.completion_tokens), (Some(61), Some(7)));
    }

    #[test]
    fn a_messages_tool_use_block_is_collected_after_its_text() {
        let (chunks, s) = replay(Endpoint::Messages, MESSAGES_TOOL);
        // Eight text pieces, then nine non-empty input pieces (the first is empty).
        assert_eq!(chunks.len(), 8 + 9);
        assert_eq!(s.tool_calls.len(), 1);
        let (name, args) = &s.tool_calls[0];
        assert_eq!(name, "get_weather");
        assert_eq!(
            args,
            r#"{"location": "San Francisco, CA", "unit": "fahrenheit"}"#
        );
        // The call starts at the ninth token chunk.
        assert_eq!((s.first_tool_chunk, s.tool_tokens), (Some(8), 9));
        let c = crate::http::client::checks::output_checks(Some(&weather()), None, &s).unwrap();
        assert_eq!((c.tool_calls, c.valid_tool_calls), (1, 1));
        // Broken arguments are caught the same way.
        let mut broken = s.clone();
        broken.tool_calls[0].1 = r#"{"unit": "kelvin"}"#.into();
        let c =
            crate::http::client::checks::output_checks(Some(&weather()), None, &broken).unwrap();
        assert_eq!(c.valid_tool_calls, 0);
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
