//! Calls besides generation: `POST` of an empty body (cache resets), `GET /v1/models` and
//! a health check's `GET`.

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
