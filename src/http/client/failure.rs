//! Why a request failed ([`Failure`]) and the messages of error objects and bodies: the
//! leaf every part of the client reports failures through.

use serde_json::Value;

use crate::record::ErrorKind;

/// Why a request failed.
pub(super) struct Failure {
    pub(super) kind: ErrorKind,
    pub(super) message: String,
}

pub(super) fn fail(kind: ErrorKind, message: impl Into<String>) -> Failure {
    Failure {
        kind,
        message: message.into(),
    }
}

pub(super) fn truncate(s: &str) -> String {
    s.chars().take(300).collect()
}

/// The message of an OpenAI-style error object (`{"error": {"message": …}}`, or vLLM's
/// older flat `{"object": "error", "message": …}`), or `None` if `v` is not an error.
pub(super) fn error_message(v: &Value) -> Option<String> {
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Some(match err.get("message").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None => match err.as_str() {
                Some(s) => s.to_string(),
                None => err.to_string(),
            },
        });
    }
    if v.get("object").and_then(Value::as_str) == Some("error") {
        return Some(
            v.get("message")
                .and_then(Value::as_str)
                .unwrap_or("server error")
                .to_string(),
        );
    }
    None
}
