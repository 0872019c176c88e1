//! Generation request bodies: validating a completions, chat, Responses or Messages request
//! into a [`Parsed`] request (prompt length with its images' vision tokens, `max_tokens`,
//! stream options), or a 4xx [`ApiError`].

use hyper::StatusCode;
use serde_json::Value;

use base64::prelude::{Engine as _, BASE64_STANDARD};

use super::options::{ServeOptions, MAX_COMPLETION_TOKENS};
use crate::driver::images::{image_size, VisionPreprocessor};
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
    /// ViT patches of each image in the prompt (its vision tokens are in `prompt_tokens`).
    pub(super) image_patches: Vec<u64>,
    /// The tool the answer calls (a chat request with `tools`, unless `tool_choice` is
    /// `"none"`): its name and parameters schema.
    pub(super) tool: Option<(String, Value)>,
    /// The schema a structured answer follows (`response_format` of type `json_schema`).
    pub(super) response_schema: Option<Value>,
}

/// Where each API keeps a tool's name and parameters schema, a named `tool_choice`, and
/// the "call no tool" choice: chat `{"type": "function", "function": {"name", "parameters"}}`
/// and `{"function": {"name"}}`; Responses `{"type": "function", "name", "parameters"}` and
/// `{"type": "function", "name"}`; Messages `{"name", "input_schema"}` and
/// `{"type": "tool", "name"}` (`{"type": "none"}` for none).
fn tool_paths(endpoint: Endpoint) -> (&'static str, &'static str, &'static str) {
    match endpoint {
        Endpoint::Responses => ("/name", "/parameters", "/name"),
        Endpoint::Messages => ("/name", "/input_schema", "/name"),
        _ => ("/function/name", "/function/parameters", "/function/name"),
    }
}

/// The tool a request's answer calls: the one `tool_choice` names, else the first of
/// `tools`; none without tools or when `tool_choice` says none.
fn tool_of(v: &Value, endpoint: Endpoint) -> Result<Option<(String, Value)>, ApiError> {
    let Some(tools) = v.get("tools").filter(|t| !t.is_null()) else {
        return Ok(None);
    };
    let tools = tools
        .as_array()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("`tools` must be a non-empty array"))?;
    let (name_at, params_at, choice_at) = tool_paths(endpoint);
    let named = match v.get("tool_choice") {
        Some(Value::String(c)) if c == "none" => return Ok(None),
        Some(c) if c.get("type").and_then(Value::as_str) == Some("none") => return Ok(None),
        Some(c) => c.pointer(choice_at).and_then(Value::as_str),
        None => None,
    };
    let mut first = None;
    for (i, t) in tools.iter().enumerate() {
        let name = t.pointer(name_at).and_then(Value::as_str).ok_or_else(|| {
            bad(format!(
                "tools[{i}] needs `{}`",
                &name_at[1..].replace('/', ".")
            ))
        })?;
        let params = t
            .pointer(params_at)
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        if named.is_none_or(|n| n == name) && first.is_none() {
            first = Some((name.to_string(), params));
        }
    }
    match (first, named) {
        (None, Some(n)) => Err(bad(format!(
            "`tool_choice` names `{n}`, which is not in `tools`"
        ))),
        (f, _) => Ok(f),
    }
}

/// The schema of a structured answer: chat's `response_format: {"type": "json_schema",
/// "json_schema": {"schema": …}}`, the Responses API's `text.format: {"type":
/// "json_schema", "schema": …}`.
fn response_schema_of(v: &Value, endpoint: Endpoint) -> Result<Option<Value>, ApiError> {
    // vLLM's own structured-output fields on chat (`structured_outputs.json`, the older
    // `guided_json`) carry the schema itself.
    if endpoint == Endpoint::Chat {
        for at in ["/structured_outputs/json", "/guided_json"] {
            if let Some(schema) = v.pointer(at).filter(|s| !s.is_null()) {
                return Ok(Some(schema.clone()));
            }
        }
    }
    let (at, schema_at, field) = match endpoint {
        Endpoint::Responses => ("/text/format", "/schema", "text.format"),
        _ => ("/response_format", "/json_schema/schema", "response_format"),
    };
    let Some(f) = v.pointer(at).filter(|f| !f.is_null()) else {
        return Ok(None);
    };
    match f.get("type").and_then(Value::as_str) {
        Some("json_schema") => f.pointer(schema_at).cloned().map(Some).ok_or_else(|| {
            bad(format!(
                "`{field}{}` is required",
                schema_at.replace('/', ".")
            ))
        }),
        Some("json_object") => Ok(Some(serde_json::json!({"type": "object"}))),
        Some("text") | None => Ok(None),
        Some(other) => Err(bad(format!("unknown `{field}.type` `{other}`"))),
    }
}

/// A 4xx answer.
#[derive(Debug)]
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

/// What a prompt holds: its texts (for engines that hash prompt blocks), its tokens (the
/// texts' words and the images' vision tokens), the images' ViT patches.
#[derive(Debug, Default)]
pub(super) struct Prompt {
    pub(super) texts: Vec<String>,
    pub(super) tokens: u64,
    pub(super) image_patches: Vec<u64>,
}

impl Prompt {
    pub(super) fn text(&mut self, s: &str) {
        self.tokens += words(s);
        self.texts.push(s.to_string());
    }

    /// An image given as bytes: its vision tokens by Qwen3.5's preprocessor rules.
    fn image(&mut self, bytes: &[u8]) -> Result<(), ApiError> {
        let size = image_size(bytes)
            .ok_or_else(|| bad("the image is neither a PNG nor a JPEG this server can size"))?;
        let q = VisionPreprocessor::QWEN3_5;
        self.tokens += q.prompt_tokens(size);
        self.image_patches.push(q.patches(size));
        Ok(())
    }

    fn base64_image(&mut self, data: &str) -> Result<(), ApiError> {
        let bytes = BASE64_STANDARD
            .decode(data.trim())
            .map_err(|e| bad(format!("the image's base64 data is invalid: {e}")))?;
        self.image(&bytes)
    }

    /// An image given as a URL: only `data:` URLs (the example server fetches nothing).
    fn image_url(&mut self, url: &str) -> Result<(), ApiError> {
        let data = url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
            .map(|(_, data)| data)
            .ok_or_else(|| bad("image URLs must be base64 `data:` URLs on this server"))?;
        self.base64_image(data)
    }

    /// One message's `content`: a string, or parts of chat (`text`, `image_url`),
    /// Responses (`input_text`, `input_image`) or Messages (`text`, `image`) shape.
    pub(super) fn content(&mut self, content: &Value) -> Result<(), ApiError> {
        match content {
            Value::String(s) => self.text(s),
            Value::Null => {}
            Value::Array(parts) => {
                for p in parts {
                    self.part(p)?;
                }
            }
            _ => {
                return Err(bad(
                    "message `content` must be a string or an array of parts",
                ))
            }
        }
        Ok(())
    }

    fn part(&mut self, p: &Value) -> Result<(), ApiError> {
        match p.get("text") {
            Some(Value::String(s)) => {
                self.text(s);
                return Ok(());
            }
            Some(_) => return Err(bad("message content part `text` must be a string")),
            None => {}
        }
        match p.get("type").and_then(Value::as_str) {
            // Chat: {"type": "image_url", "image_url": {"url": …}}; Responses:
            // {"type": "input_image", "image_url": "…"}.
            Some("image_url" | "input_image") => {
                let url = match p.get("image_url") {
                    Some(Value::String(u)) => Some(u.as_str()),
                    Some(v) => v.get("url").and_then(Value::as_str),
                    None => None,
                };
                self.image_url(url.ok_or_else(|| bad("an image part needs its `image_url`"))?)
            }
            // Messages: {"type": "image", "source": {"type": "base64", "data": …}}.
            Some("image") => {
                let data = p
                    .pointer("/source/data")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("an image block needs `source.data` (base64)"))?;
                self.base64_image(data)
            }
            _ => Ok(()), // audio, files, …: no tokens counted
        }
    }

    /// A list of messages, each with a string `role`.
    fn messages(&mut self, messages: Option<&Value>) -> Result<(), ApiError> {
        let messages = messages
            .and_then(Value::as_array)
            .filter(|m| !m.is_empty())
            .ok_or_else(|| bad("`messages` must be a non-empty array"))?;
        for m in messages {
            if !m.is_object() || m.get("role").and_then(Value::as_str).is_none() {
                return Err(bad("each message needs a string `role`"));
            }
            self.content(m.get("content").unwrap_or(&Value::Null))?;
        }
        Ok(())
    }
}

/// The prompt of a generation request of `endpoint`.
pub(super) fn prompt_of(v: &Value, endpoint: Endpoint) -> Result<Prompt, ApiError> {
    let mut p = Prompt::default();
    match endpoint {
        Endpoint::Completions => {
            let prompt = v.get("prompt").ok_or_else(|| bad("`prompt` is required"))?;
            p.tokens = prompt_tokens_of(prompt)?;
            match prompt {
                Value::Array(items) if items.len() == 1 => {
                    if let Value::String(s) = &items[0] {
                        p.texts.push(s.clone());
                    }
                }
                Value::String(s) => p.texts.push(s.clone()),
                _ => {}
            }
        }
        Endpoint::Chat => p.messages(v.get("messages"))?,
        Endpoint::Messages => {
            if let Some(system) = v.get("system") {
                p.content(system)?;
            }
            p.messages(v.get("messages"))?;
        }
        Endpoint::Responses => {
            if let Some(Value::String(s)) = v.get("instructions") {
                p.text(s);
            }
            match v.get("input") {
                Some(Value::String(s)) => p.text(s),
                Some(Value::Array(items)) => {
                    for item in items {
                        match item.get("content") {
                            Some(c) => p.content(c)?,
                            None => p.part(item)?,
                        }
                    }
                }
                _ => return Err(bad("`input` must be a string or an array of items")),
            }
        }
        other => return Err(bad(format!("{other} is not a generation endpoint"))),
    }
    Ok(p)
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
    let v = super::pooling::request_object(body, |m| {
        m == opts.model || opts.lora_modules.iter().any(|l| l == m)
    })
    .map_err(|super::pooling::PoolError(status, message)| ApiError(status, message))?;
    if let Some(n) = opt_count(&v, "n")? {
        if n != 1 {
            return Err(bad("only n = 1 is supported"));
        }
    }
    let prompt = prompt_of(&v, endpoint)?;
    let prompt_tokens = prompt.tokens;
    let prompt_text = (!prompt.texts.is_empty()).then(|| prompt.texts.join(" "));
    if prompt_tokens == 0 {
        return Err(bad("the prompt is empty"));
    }
    let max_tokens = match endpoint {
        Endpoint::Chat => match opt_count(&v, "max_completion_tokens")? {
            Some(n) => Some(n),
            None => opt_count(&v, "max_tokens")?,
        },
        Endpoint::Responses => opt_count(&v, "max_output_tokens")?,
        // Anthropic's API requires it.
        Endpoint::Messages => {
            Some(opt_count(&v, "max_tokens")?.ok_or_else(|| bad("`max_tokens` is required"))?)
        }
        _ => opt_count(&v, "max_tokens")?,
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
        image_patches: prompt.image_patches,
        tool: match endpoint {
            Endpoint::Chat | Endpoint::Responses | Endpoint::Messages => tool_of(&v, endpoint)?,
            _ => None,
        },
        response_schema: match endpoint {
            Endpoint::Chat | Endpoint::Responses => response_schema_of(&v, endpoint)?,
            _ => None,
        },
    })
}
