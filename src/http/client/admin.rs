//! Calls besides streamed generation: `POST` of an empty body (cache resets), `GET
//! /v1/models`, a health check's `GET`, and one non-streamed chat answer (an eval item's).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use serde_json::Value;

use super::connection::connect;
use super::Shared;
use crate::http::HttpError;

/// Sends `method path` with an empty body (the target's host, the API key) on a fresh
/// connection; the response.
async fn send_empty(
    shared: &Shared,
    method: hyper::Method,
    path: &str,
) -> Result<hyper::Response<hyper::body::Incoming>, HttpError> {
    let mut sender = connect(shared)
        .await
        .map_err(|f| HttpError::Request(f.message))?
        .sender;
    let t = &shared.target;
    let mut builder = Request::builder()
        .method(method.clone())
        .uri(format!("{}{path}", t.base_path))
        .header(hyper::header::HOST, t.authority.as_str());
    if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    let req = builder
        .body(Full::new(Bytes::new()))
        .map_err(|e| HttpError::Request(e.to_string()))?;
    sender
        .send_request(req)
        .await
        .map_err(|e| HttpError::Request(format!("{method} {path}: {e}")))
}

/// `POST path` with an empty body; the status.
pub(super) async fn post_empty(shared: &Shared, path: &str) -> Result<u16, HttpError> {
    let resp = send_empty(shared, hyper::Method::POST, path).await?;
    let status = resp.status().as_u16();
    // Drain the (small) body so the connection closes cleanly.
    let _ = http_body_util::Limited::new(resp.into_body(), 1 << 20)
        .collect()
        .await;
    Ok(status)
}

/// `GET path`; the status (the body drained).
pub(super) async fn get_status(shared: &Shared, path: &str) -> Result<u16, HttpError> {
    let resp = send_empty(shared, hyper::Method::GET, path).await?;
    let status = resp.status().as_u16();
    let _ = http_body_util::Limited::new(resp.into_body(), 1 << 20)
        .collect()
        .await;
    Ok(status)
}

/// The model ids of a `/v1/models` answer (`data[].id`), in order.
///
/// ```
/// use servebench::http::client::model_ids;
/// let v = serde_json::json!({"object": "list", "data": [{"id": "a"}, {"id": "b"}]});
/// assert_eq!(model_ids(&v), ["a", "b"]);
/// ```
pub fn model_ids(v: &Value) -> Vec<String> {
    v.get("data")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) async fn models_response(shared: &Shared) -> Result<Value, HttpError> {
    let resp = send_empty(shared, hyper::Method::GET, "/v1/models").await?;
    let status = resp.status();
    let bytes = http_body_util::Limited::new(resp.into_body(), 4 << 20)
        .collect()
        .await
        .map_err(|e| HttpError::Request(format!("GET /v1/models: {e}")))?
        .to_bytes();
    if !status.is_success() {
        return Err(HttpError::Request(format!(
            "GET /v1/models: HTTP {}",
            status.as_u16()
        )));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| HttpError::Request(format!("GET /v1/models: bad JSON: {e}")))
}

/// `POST /v1/chat/completions` of one user message, not streamed, greedy (`temperature`
/// 0): the answer's text (`choices[0].message.content`, else a reasoning field's when the
/// server put everything there).
pub(super) async fn chat_answer(
    shared: &Shared,
    prompt: &str,
    max_tokens: u64,
) -> Result<String, HttpError> {
    let mut sender = connect(shared)
        .await
        .map_err(|f| HttpError::Request(f.message))?
        .sender;
    let t = &shared.target;
    let mut body = serde_json::json!({
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": false,
    });
    if let Some(m) = &shared.config.model {
        body["model"] = Value::String(m.clone());
    }
    let path = "/v1/chat/completions";
    let mut builder = Request::builder()
        .method(hyper::Method::POST)
        .uri(format!("{}{path}", t.base_path))
        .header(hyper::header::HOST, t.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json");
    if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    let req = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| HttpError::Request(e.to_string()))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| HttpError::Request(format!("POST {path}: {e}")))?;
    let status = resp.status().as_u16();
    let bytes = http_body_util::Limited::new(resp.into_body(), 16 << 20)
        .collect()
        .await
        .map_err(|e| HttpError::Request(format!("POST {path}: {e}")))?
        .to_bytes();
    if !(200..300).contains(&status) {
        return Err(HttpError::Request(format!(
            "POST {path}: HTTP {status}: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        )));
    }
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| HttpError::Request(format!("POST {path}: not JSON: {e}")))?;
    // The answer's content; a server that put the whole text in a reasoning field (a
    // reasoning parser that never saw the end of the thinking) answers there.
    let message = v.pointer("/choices/0/message");
    ["content", "reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| {
            message?
                .get(*k)?
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        })
        .ok_or_else(|| {
            HttpError::Request(format!(
                "POST {path}: no text in choices[0].message (content, reasoning_content, reasoning)"
            ))
        })
}
