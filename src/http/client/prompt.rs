//! Request bodies: synthetic prompts from a word list and the JSON body each endpoint takes
//! (completions, chat with images, Responses, Messages, embeddings, rerank, score, pooling,
//! classify), with what the request carries ([`Payload`]).

use bytes::Bytes;
use serde_json::{json, Value};

use base64::prelude::{Engine as _, BASE64_STANDARD};

use super::HttpConfig;
use crate::driver::images::png_image;
use crate::engine::EngineRequest;
use crate::http::prepare::Encoded;
use crate::http::Endpoint;
use crate::record::{ImagesSent, Payload, ResponseForm};
use crate::rng::SplitMix64;

/// A word list for synthetic prompts: common English words, about one token each in
/// BPE vocabularies, and exactly one token each for the example server's word tokenizer.
pub(super) const WORDS: [&str; 32] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their",
];

/// A deterministic prompt of `tokens` space-separated words, different for each `seed`
/// (so prefix caches do not see identical prompts).
///
/// ```
/// use servebench::http::client::synthetic_prompt;
/// let p = synthetic_prompt(7, 5);
/// assert_eq!(p.split_whitespace().count(), 5);
/// assert_ne!(p, synthetic_prompt(8, 5));
/// ```
pub fn synthetic_prompt(seed: u64, tokens: u64) -> String {
    let mut words = SplitMix64::new(seed ^ 0x5851_f42d_4c95_7f2d);
    let mut out = String::with_capacity(tokens as usize * 4);
    for i in 0..tokens {
        let z = words.next_u64();
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[(z % WORDS.len() as u64) as usize]);
    }
    out
}

/// The text of input `i` of a request that carries several (an embeddings batch, rerank
/// documents): input 0 is the request's prompt, the others synthetic prompts of `tokens`
/// tokens seeded by the request and the input's place.
fn extra_input(request: &EngineRequest, i: u32, tokens: u64) -> String {
    synthetic_prompt(
        request.id.wrapping_mul(0x0001_0000_0001) ^ (u64::from(i) << 48) ^ 0xd0c5,
        tokens,
    )
}

/// The chat message content: the prompt, then the request's images as base64 PNG data
/// URLs (OpenAI's `image_url` content parts); the images' payload figures.
fn chat_content(
    config: &HttpConfig,
    request: &EngineRequest,
    prompt: String,
) -> (Value, Option<ImagesSent>) {
    let Some(load) = config.images.as_ref().filter(|l| l.per_request > 0) else {
        return (Value::String(prompt), None);
    };
    let mut parts = vec![json!({"type": "text", "text": prompt})];
    let mut sent = ImagesSent::default();
    if !load.sources.is_empty() {
        // A dataset's images, in turn: sent as their URLs.
        let n = load.sources.len() as u64;
        for i in 0..u64::from(load.per_request) {
            let k = request
                .id
                .wrapping_mul(u64::from(load.per_request))
                .wrapping_add(i)
                % n;
            let Some(src) = load.sources.get(k as usize) else {
                continue;
            };
            sent.count += 1;
            match (src.size, src.bytes) {
                (Some(size), Some(bytes)) => {
                    sent.bytes += bytes;
                    sent.vision_tokens += config.vision.prompt_tokens(size);
                }
                _ => sent.of_unknown_size += 1,
            }
            parts.push(json!({"type": "image_url", "image_url": {"url": src.url}}));
        }
        return (Value::Array(parts), Some(sent));
    }
    for (i, size) in load.sizes_of(request.id).enumerate() {
        let png = png_image(
            size,
            request.id.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i as u64,
        );
        sent.count += 1;
        sent.bytes += png.len() as u64;
        sent.vision_tokens += config.vision.prompt_tokens(size);
        let url = format!("data:image/png;base64,{}", BASE64_STANDARD.encode(&png));
        parts.push(json!({"type": "image_url", "image_url": {"url": url}}));
    }
    (Value::Array(parts), Some(sent))
}

/// A chat completions body: the user message, tools and response format when asked for.
fn chat_body(config: &HttpConfig, content: Value, max_tokens: u64, stream_options: Value) -> Value {
    let mut body = json!({
        "messages": [{"role": "user", "content": content}],
        "max_completion_tokens": max_tokens,
        "stream": true,
        "stream_options": stream_options,
    });
    if let Some(tools) = &config.tools {
        body["tools"] = tools.json().clone();
        body["tool_choice"] = config.tool_choice.clone().unwrap_or(json!("auto"));
    }
    if let Some(schema) = &config.response_format {
        // OpenAI's structured outputs (vLLM reads the same field), or vLLM's own fields.
        let (name, value) = config.schema_field.field(schema);
        body[name] = value;
    }
    body
}

/// A Responses API body: tools in its shape, a structured answer as `text.format`.
fn responses_body(config: &HttpConfig, prompt: String, max_tokens: u64) -> Value {
    let mut body = json!({
        "input": prompt,
        "max_output_tokens": max_tokens,
        "stream": true,
    });
    if let Some(tools) = &config.tools {
        body["tools"] = tools.responses_json();
        body["tool_choice"] = responses_tool_choice(config.tool_choice.as_ref());
    }
    if let Some(schema) = &config.response_format {
        body["text"] = json!({"format": {"type": "json_schema", "name": "answer",
            "schema": schema.source(), "strict": true}});
    }
    body
}

/// A Messages API body: tools in Anthropic's shape.
fn messages_body(config: &HttpConfig, prompt: String, max_tokens: u64) -> Value {
    let mut body = json!({
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "stream": true,
    });
    if let Some(tools) = &config.tools {
        body["tools"] = tools.messages_json();
        body["tool_choice"] = messages_tool_choice(config.tool_choice.as_ref());
    }
    body
}

/// `tool_choice` (as chat takes it: `"auto"`, `"required"`, `"none"` or `{"type":
/// "function", "function": {"name"}}`) in the Responses API's shape: the same strings,
/// `{"type": "function", "name"}`.
fn responses_tool_choice(choice: Option<&Value>) -> Value {
    match choice {
        None => json!("auto"),
        Some(c) => match c.pointer("/function/name") {
            Some(name) => json!({"type": "function", "name": name}),
            None => c.clone(),
        },
    }
}

/// `tool_choice` in Anthropic's shape: `{"type": "auto" | "any" | "none"}` or `{"type":
/// "tool", "name"}` ("required" is "any").
fn messages_tool_choice(choice: Option<&Value>) -> Value {
    match choice.map(|c| (c.as_str(), c.pointer("/function/name"))) {
        Some((_, Some(name))) => json!({"type": "tool", "name": name}),
        Some((Some("required"), _)) => json!({"type": "any"}),
        Some((Some("none"), _)) => json!({"type": "none"}),
        _ => json!({"type": "auto"}),
    }
}

pub(super) fn request_body(config: &HttpConfig, request: &EngineRequest) -> (Value, Payload) {
    let prompt = request
        .prompt
        .clone()
        .unwrap_or_else(|| synthetic_prompt(request.id, request.prompt_tokens));
    let mut stream_options = json!({"include_usage": true});
    if config.continuous_usage {
        stream_options["continuous_usage_stats"] = Value::Bool(true);
    }
    let mut payload = Payload::default();
    let inputs = config.inputs_per_request.max(1);
    let texts = |tokens: u64| -> Vec<Value> {
        (1..inputs)
            .map(|i| Value::String(extra_input(request, i, tokens)))
            .collect()
    };
    if !config.endpoint.streams() {
        payload.response = ResponseForm::Whole;
        payload.inputs = Some(inputs);
    }
    let document_tokens = config.document_tokens.unwrap_or(request.prompt_tokens);
    let mut body = match config.endpoint {
        Endpoint::Completions => json!({
            "prompt": prompt,
            "max_tokens": request.max_output_tokens,
            "stream": true,
            "stream_options": stream_options,
        }),
        Endpoint::Chat => {
            let (content, images) = chat_content(config, request, prompt);
            payload.images = images;
            chat_body(config, content, request.max_output_tokens, stream_options)
        }
        Endpoint::Responses => responses_body(config, prompt, request.max_output_tokens),
        Endpoint::Messages => messages_body(config, prompt, request.max_output_tokens),
        Endpoint::Embeddings | Endpoint::Pooling | Endpoint::Classify => {
            let mut input = vec![Value::String(prompt)];
            input.extend(texts(request.prompt_tokens));
            json!({"input": input})
        }
        Endpoint::Rerank => {
            // Every document is new text: the query is the request's prompt.
            let documents: Vec<Value> = (0..inputs)
                .map(|i| Value::String(extra_input(request, i + 1, document_tokens)))
                .collect();
            json!({"query": prompt, "documents": documents})
        }
        Endpoint::Score => {
            let documents: Vec<Value> = (0..inputs)
                .map(|i| Value::String(extra_input(request, i + 1, document_tokens)))
                .collect();
            json!({"text_1": prompt, "text_2": documents})
        }
    };
    if let Value::Object(map) = &mut body {
        match (&config.lora, &config.model) {
            (Some(split), _) => {
                map.insert("model".into(), Value::String(split.pick(request.id).into()));
            }
            (None, Some(model)) => {
                map.insert("model".into(), Value::String(model.clone()));
            }
            (None, None) => {}
        }
        if request.ignore_eos && config.endpoint.streams() {
            map.insert("ignore_eos".into(), Value::Bool(true));
        }
        for (k, v) in &config.extra_body {
            map.insert(k.clone(), v.clone());
        }
    }
    (body, payload)
}

/// The bytes of the JSON body sent for `request`, and what the request carries.
pub(crate) fn encode_body(config: &HttpConfig, request: &EngineRequest) -> Encoded {
    let (body, payload) = request_body(config, request);
    Encoded {
        body: Bytes::from(body.to_string()),
        payload,
    }
}
