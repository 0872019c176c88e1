//! The typed event streams the example server writes for `/v1/responses` (OpenAI's
//! Responses API: `response.created` … `response.output_text.delta` …
//! `response.completed`) and `/v1/messages` (Anthropic's Messages API: `message_start`,
//! `content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`,
//! `message_stop`), and their one-JSON answers for `stream: false`. A reasoning phase
//! streams as a `reasoning` output item (`response.reasoning_text.delta`, vLLM's event) or
//! a `thinking` content block (`thinking_delta`).

use serde_json::json;

use crate::http::Endpoint;

/// Which part of the answer is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Phase {
    /// Nothing written yet.
    #[default]
    Start,
    /// The response is open, no content part yet.
    Open,
    /// A reasoning item / thinking block is open.
    Reasoning,
    /// The answer's item / text block is open.
    Answer,
    /// A function call item / tool-use block is open.
    Tool,
}

fn event(out: &mut String, name: &str, data: serde_json::Value) {
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// One response's typed event stream: what it is and which part is open.
#[derive(Debug, Clone)]
pub(super) struct TypedEvents {
    pub(super) endpoint: Endpoint,
    /// The engine request's id (the response's and items' ids derive from it).
    pub(super) id: u64,
    pub(super) model: String,
    pub(super) created: u64,
    pub(super) prompt_tokens: u64,
    pub(super) phase: Phase,
    /// A reasoning part came before the answer.
    pub(super) reasoned: bool,
    /// The tool the answer calls, when it calls one.
    pub(super) tool: Option<String>,
    /// The tool call's arguments written so far.
    pub(super) tool_args: String,
}

impl TypedEvents {
    fn response_id(&self) -> String {
        match self.endpoint {
            Endpoint::Messages => format!("msg_{}", self.id),
            _ => format!("resp_{}", self.id),
        }
    }

    fn open(&mut self, out: &mut String) {
        if self.phase != Phase::Start {
            return;
        }
        self.phase = Phase::Open;
        let id = self.response_id();
        let model = self.model.clone();
        let created = self.created;
        match self.endpoint {
            Endpoint::Messages => event(
                out,
                "message_start",
                json!({"type": "message_start", "message": {"id": id, "type": "message",
                    "role": "assistant", "content": [], "model": model, "stop_reason": null,
                    "stop_sequence": null, "usage": {"input_tokens": self.prompt_tokens,
                    "output_tokens": 0}}}),
            ),
            _ => {
                let response = json!({"id": id, "object": "response", "created_at": created,
                    "status": "in_progress", "model": model, "output": [], "usage": null});
                event(
                    out,
                    "response.created",
                    json!({"type": "response.created", "response": response}),
                );
                event(
                    out,
                    "response.in_progress",
                    json!({"type": "response.in_progress", "response": response}),
                );
            }
        }
    }

    /// Index of the open output item (Responses) or content block (Messages).
    fn index(&self) -> u32 {
        u32::from(self.reasoned && matches!(self.phase, Phase::Answer | Phase::Tool))
    }

    fn close_part(&mut self, out: &mut String) {
        let index = self.index();
        match (self.endpoint, self.phase) {
            (Endpoint::Messages, Phase::Reasoning | Phase::Answer | Phase::Tool) => event(
                out,
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ),
            (_, Phase::Reasoning) => event(
                out,
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": index,
                    "item": {"id": format!("rs_{}", self.id), "type": "reasoning"}}),
            ),
            (_, Phase::Tool) => {
                let item = json!({"type": "function_call", "id": format!("fc_{}", self.id),
                    "call_id": format!("call_{}", self.id), "name": self.tool,
                    "arguments": self.tool_args, "status": "completed"});
                event(
                    out,
                    "response.function_call_arguments.done",
                    json!({"type": "response.function_call_arguments.done",
                        "item_id": format!("fc_{}", self.id), "output_index": index,
                        "arguments": self.tool_args}),
                );
                event(
                    out,
                    "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": index,
                        "item": item}),
                );
            }
            (_, Phase::Answer) => {
                let item = format!("msg_{}", self.id);
                event(
                    out,
                    "response.output_text.done",
                    json!({"type": "response.output_text.done", "item_id": item,
                        "output_index": index, "content_index": 0}),
                );
                event(
                    out,
                    "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": index,
                        "item": {"id": item, "type": "message", "status": "completed",
                        "role": "assistant"}}),
                );
            }
            _ => {}
        }
    }

    fn enter(&mut self, out: &mut String, phase: Phase) {
        if self.phase == phase {
            return;
        }
        self.open(out);
        self.close_part(out);
        if phase == Phase::Reasoning {
            self.reasoned = true;
        }
        self.phase = phase;
        let index = self.index();
        match (self.endpoint, phase) {
            (Endpoint::Messages, Phase::Tool) => event(
                out,
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": format!("toolu_{}", self.id),
                    "name": self.tool, "input": {}}}),
            ),
            (_, Phase::Tool) => event(
                out,
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": index,
                    "item": {"type": "function_call", "id": format!("fc_{}", self.id),
                    "call_id": format!("call_{}", self.id), "name": self.tool,
                    "arguments": "", "status": "in_progress"}}),
            ),
            (Endpoint::Messages, Phase::Reasoning) => event(
                out,
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": ""}}),
            ),
            (Endpoint::Messages, _) => event(
                out,
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
            ),
            (_, Phase::Reasoning) => event(
                out,
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": index,
                    "item": {"id": format!("rs_{}", self.id), "type": "reasoning",
                    "summary": []}}),
            ),
            (_, _) => {
                let item = format!("msg_{}", self.id);
                event(
                    out,
                    "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": index,
                        "item": {"id": item, "type": "message", "status": "in_progress",
                        "role": "assistant", "content": []}}),
                );
                event(
                    out,
                    "response.content_part.added",
                    json!({"type": "response.content_part.added", "item_id": item,
                        "output_index": index, "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []}}),
                );
            }
        }
    }

    pub(super) fn delta(&mut self, out: &mut String, text: &str, reasoning: bool) {
        if text.is_empty() {
            return;
        }
        self.enter(
            out,
            if reasoning {
                Phase::Reasoning
            } else {
                Phase::Answer
            },
        );
        let index = self.index();
        match (self.endpoint, reasoning) {
            (Endpoint::Messages, true) => event(
                out,
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "thinking_delta", "thinking": text}}),
            ),
            (Endpoint::Messages, false) => event(
                out,
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": text}}),
            ),
            (_, true) => event(
                out,
                "response.reasoning_text.delta",
                json!({"type": "response.reasoning_text.delta",
                    "item_id": format!("rs_{}", self.id), "output_index": index,
                    "content_index": 0, "delta": text}),
            ),
            (_, false) => event(
                out,
                "response.output_text.delta",
                json!({"type": "response.output_text.delta",
                    "item_id": format!("msg_{}", self.id), "output_index": index,
                    "content_index": 0, "delta": text}),
            ),
        }
    }

    /// A piece of the tool call's arguments (the call opens at its first piece).
    pub(super) fn tool_delta(&mut self, out: &mut String, piece: &str) {
        self.enter(out, Phase::Tool);
        if piece.is_empty() {
            return;
        }
        self.tool_args.push_str(piece);
        let index = self.index();
        match self.endpoint {
            Endpoint::Messages => event(
                out,
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ),
            _ => event(
                out,
                "response.function_call_arguments.delta",
                json!({"type": "response.function_call_arguments.delta",
                    "item_id": format!("fc_{}", self.id), "output_index": index,
                    "delta": piece}),
            ),
        }
    }

    /// The end: `input` and `output` tokens, `length` when the output hit its limit.
    pub(super) fn finish(&mut self, out: &mut String, input: u64, output: u64, length: bool) {
        self.open(out);
        let called = self.phase == Phase::Tool;
        self.close_part(out);
        if called {
            self.phase = Phase::Tool;
        }
        match self.endpoint {
            Endpoint::Messages => {
                let stop = match (length, self.phase == Phase::Tool) {
                    (true, _) => "max_tokens",
                    (false, true) => "tool_use",
                    (false, false) => "end_turn",
                };
                event(
                    out,
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": stop,
                        "stop_sequence": null}, "usage": {"output_tokens": output}}),
                );
                event(out, "message_stop", json!({"type": "message_stop"}));
            }
            _ => {
                let (name, status) = if length {
                    ("response.incomplete", "incomplete")
                } else {
                    ("response.completed", "completed")
                };
                event(
                    out,
                    name,
                    json!({"type": name, "response": {"id": self.response_id(),
                        "object": "response", "created_at": self.created,
                        "status": status, "model": self.model,
                        "usage": {"input_tokens": input, "output_tokens": output,
                            "total_tokens": input + output}}}),
                );
            }
        }
    }

    /// An error event of the endpoint's vocabulary.
    pub(super) fn error_event(&self, out: &mut String, message: &str) {
        match self.endpoint {
            Endpoint::Messages => event(
                out,
                "error",
                json!({"type": "error", "error": {"type": "api_error", "message": message}}),
            ),
            _ => event(
                out,
                "error",
                json!({"type": "error", "code": "server_error", "message": message}),
            ),
        }
    }

    /// `stream: false`: the whole answer in the endpoint's shape.
    pub(super) fn whole_answer(
        &self,
        text: String,
        input: u64,
        output: u64,
        length: bool,
    ) -> String {
        let model = &self.model;
        match self.endpoint {
            Endpoint::Messages => json!({"id": self.response_id(), "type": "message",
                "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": if length { "max_tokens" } else { "end_turn" },
                "stop_sequence": null,
                "usage": {"input_tokens": input, "output_tokens": output}}),
            _ => json!({"id": self.response_id(), "object": "response",
                "created_at": self.created,
                "status": if length { "incomplete" } else { "completed" }, "model": model,
                "output": [{"type": "message", "id": format!("msg_{}", self.id),
                    "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                "usage": {"input_tokens": input, "output_tokens": output,
                    "total_tokens": input + output}}),
        }
        .to_string()
    }
}
