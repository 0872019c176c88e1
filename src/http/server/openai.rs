//! OpenAI request bodies: validating a completions or chat request into a [`Parsed`]
//! request (prompt length, `max_tokens`, stream options), or a 4xx [`ApiError`].

use hyper::StatusCode;
use serde_json::Value;

use super::options::{ServeOptions, MAX_COMPLETION_TOKENS};
use crate::driver::workload::approx_tokens;
use crate::http::Endpoint;

/// A validated generation request.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Parsed {
    /// The prompt's text (a chat's message texts joined by spaces), for engines that hash
    /// prompt blocks; `None` for token-id prompts.
    pub(super) prompt_text: Option<String>,
    pub(super) prompt_tokens: u64,
    pub(super) max_tokens: u64,
    pub(super) stream: bool,
    pub(super) include_usage: bool,
    pub(super) continuous_usage: bool,
    pub(super) ignore_eos: bool,
}

/// A 4xx answer.
pub(super) struct ApiError(pub(super) StatusCode, pub(super) String);

pub(super) fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into())
}

pub(super) fn words(s: &str) -> u64 {
    if s.trim().is_empty() {
        0
    } else {
        approx_tokens(s)
    }
}

pub(super) fn prompt_tokens_of(prompt: &Value) -> Result<u64, ApiError> {
    match prompt {
        Value::String(s) => Ok(words(s)),
        Value::Array(items) if items.iter().all(Value::is_u64) => Ok(items.len() as u64),
        Value::Array(items) if items.len() == 1 => prompt_tokens_of(&items[0]),
        Value::Array(_) => Err(bad("batched prompts are not supported: send one prompt")),
        _ => Err(bad("`prompt` must be a string or an array of token ids")),
    }
}

pub(super) fn content_tokens(content: &Value) -> Result<u64, ApiError> {
    match content {
        Value::String(s) => Ok(words(s)),
        Value::Null => Ok(0),
        Value::Array(parts) => {
            let mut n = 0;
            for p in parts {
                match p.get("text") {
                    Some(Value::String(s)) => n += words(s),
                    Some(_) => return Err(bad("message content part `text` must be a string")),
                    None => {} // images etc.: no text tokens
                }
            }
            Ok(n)
        }
        _ => Err(bad(
            "message `content` must be a string or an array of parts",
        )),
    }
}

/// The prompt's text: a completion's `prompt` string, or a chat's message texts joined by
/// spaces (validated by the token counts computed next to it).
pub(super) fn prompt_text_of(v: &Value, endpoint: Endpoint) -> Option<String> {
    fn text_of(content: &Value, out: &mut Vec<String>) {
        match content {
            Value::String(s) => out.push(s.clone()),
            Value::Array(parts) => {
                for p in parts {
                    if let Some(Value::String(s)) = p.get("text") {
                        out.push(s.clone());
                    }
                }
            }
            _ => {}
        }
    }
    let mut parts = Vec::new();
    match endpoint {
        Endpoint::Completions => match v.get("prompt")? {
            Value::Array(items) if items.len() == 1 => text_of(&items[0], &mut parts),
            p => text_of(p, &mut parts),
        },
        Endpoint::Chat => {
            for m in v.get("messages")?.as_array()? {
                text_of(m.get("content").unwrap_or(&Value::Null), &mut parts);
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

pub(super) fn opt_bool(v: &Value, key: &str) -> Result<Option<bool>, ApiError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad(format!("`{key}` must be a boolean"))),
    }
}

pub(super) fn opt_count(v: &Value, key: &str) -> Result<Option<u64>, ApiError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(bad(format!("`{key}` must be a positive integer, got {x}"))),
        },
    }
}

pub(super) fn parse_request(
    body: &[u8],
    endpoint: Endpoint,
    opts: &ServeOptions,
) -> Result<Parsed, ApiError> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("invalid JSON body: {e}")))?;
    if !v.is_object() {
        return Err(bad("request body must be a JSON object"));
    }
    match v.get("model") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if *m == opts.model || opts.lora_modules.contains(m) => {}
        Some(Value::String(m)) => {
            return Err(ApiError(
                StatusCode::NOT_FOUND,
                format!("The model `{m}` does not exist."),
            ))
        }
        Some(_) => return Err(bad("`model` must be a string")),
    }
    if let Some(n) = opt_count(&v, "n")? {
        if n != 1 {
            return Err(bad("only n = 1 is supported"));
        }
    }
    let prompt_text = prompt_text_of(&v, endpoint);
    let prompt_tokens = match endpoint {
        Endpoint::Completions => {
            prompt_tokens_of(v.get("prompt").ok_or_else(|| bad("`prompt` is required"))?)?
        }
        Endpoint::Chat => {
            let messages = v
                .get("messages")
                .and_then(Value::as_array)
                .filter(|m| !m.is_empty())
                .ok_or_else(|| bad("`messages` must be a non-empty array"))?;
            let mut n = 0;
            for m in messages {
                if !m.is_object() || m.get("role").and_then(Value::as_str).is_none() {
                    return Err(bad("each message needs a string `role`"));
                }
                n += content_tokens(m.get("content").unwrap_or(&Value::Null))?;
            }
            n
        }
    };
    if prompt_tokens == 0 {
        return Err(bad("the prompt is empty"));
    }
    let max_tokens = match endpoint {
        Endpoint::Completions => opt_count(&v, "max_tokens")?,
        Endpoint::Chat => match opt_count(&v, "max_completion_tokens")? {
            Some(n) => Some(n),
            None => opt_count(&v, "max_tokens")?,
        },
    }
    .unwrap_or(opts.default_max_tokens);
    if let Some(limit) = opts.max_model_len {
        let total = prompt_tokens.saturating_add(max_tokens);
        if total > limit {
            return Err(bad(format!(
                "This model's maximum context length is {limit} tokens. However, you requested \
                 {total} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion)."
            )));
        }
    }
    if max_tokens > MAX_COMPLETION_TOKENS {
        return Err(bad(format!(
            "max_tokens {max_tokens} is over this server's limit of {MAX_COMPLETION_TOKENS}"
        )));
    }
    let stream = opt_bool(&v, "stream")?.unwrap_or(false);
    let so = v.get("stream_options").cloned().unwrap_or(Value::Null);
    if !so.is_null() && !so.is_object() {
        return Err(bad("`stream_options` must be an object"));
    }
    Ok(Parsed {
        prompt_text,
        prompt_tokens,
        max_tokens,
        stream,
        include_usage: opt_bool(&so, "include_usage")?.unwrap_or(false),
        continuous_usage: opt_bool(&so, "continuous_usage_stats")?.unwrap_or(false),
        ignore_eos: opt_bool(&v, "ignore_eos")?.unwrap_or(false),
    })
}
