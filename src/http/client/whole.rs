//! Answers that come whole: the pooling endpoints' JSON bodies (vLLM's `/v1/embeddings`,
//! `/pooling`, `/classify`, `/v1/score` with a `data` array; `/v1/rerank` with `results`),
//! checked against what was asked — one result per input — and read for `usage`.
//!
//! A body with fewer or more results than inputs is a protocol failure, not a success: a
//! server that silently drops inputs must not look fast.

use serde_json::Value;

use super::failure::{error_message, fail, truncate, Failure};
use crate::engine::Usage;
use crate::http::Endpoint;
use crate::record::ErrorKind;

/// Most bytes of a whole answer read (an embeddings batch of 256 × 4096 floats as JSON text
/// is about 20 MB).
pub(super) const MAX_WHOLE_BODY: usize = 256 << 20;

/// Checks one whole answer to a request of `inputs` inputs; the usage it reports.
///
/// ```
/// use servebench::http::client::interpret_whole;
/// use servebench::http::Endpoint;
/// let body = br#"{"object":"list","data":[{"index":0,"object":"embedding","embedding":[0.1]},
///   {"index":1,"object":"embedding","embedding":[0.2]}],"usage":{"prompt_tokens":12,"total_tokens":12}}"#;
/// let usage = interpret_whole(Endpoint::Embeddings, 2, body).unwrap();
/// assert_eq!(usage.prompt_tokens, Some(12));
/// // One embedding for two inputs is a failure, not a fast answer.
/// assert!(interpret_whole(Endpoint::Embeddings, 3, body).is_err());
/// ```
pub fn interpret_whole(
    endpoint: Endpoint,
    inputs: u32,
    body: &[u8],
) -> Result<Usage, (ErrorKind, String)> {
    check(endpoint, inputs, body).map_err(|f| (f.kind, f.message))
}

pub(super) fn check(endpoint: Endpoint, inputs: u32, body: &[u8]) -> Result<Usage, Failure> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        fail(
            ErrorKind::Protocol,
            format!(
                "the answer is not JSON ({e}): {}",
                truncate(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    if let Some(message) = error_message(&v) {
        return Err(fail(ErrorKind::ServerError, message));
    }
    let key = match endpoint {
        Endpoint::Rerank => "results",
        _ => "data",
    };
    let results = v.get(key).and_then(Value::as_array).ok_or_else(|| {
        fail(
            ErrorKind::Protocol,
            format!(
                "the {endpoint} answer has no `{key}` array: {}",
                truncate(&v.to_string())
            ),
        )
    })?;
    if results.len() != inputs as usize {
        return Err(fail(
            ErrorKind::Protocol,
            format!(
                "the {endpoint} answer has {} results for {inputs} inputs",
                results.len()
            ),
        ));
    }
    let usage = v.get("usage");
    let field = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64);
    Ok(Usage {
        // Rerank answers (Jina/Cohere style) report only `total_tokens`: all of it input.
        prompt_tokens: field("prompt_tokens").or_else(|| field("total_tokens")),
        completion_tokens: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vLLM's answers as its OpenAI-compatible server documents them (the "Pooling API",
    /// "Score API" and "Re-rank API" sections of vLLM's serving docs).
    #[test]
    fn pooling_answers_are_counted_and_checked() {
        for (endpoint, inputs, body, prompt) in [
            (
                Endpoint::Embeddings,
                2,
                include_str!("../../../tests/fixtures/api/embeddings.json"),
                Some(16),
            ),
            (
                Endpoint::Rerank,
                3,
                include_str!("../../../tests/fixtures/api/rerank.json"),
                Some(56),
            ),
            (
                Endpoint::Score,
                2,
                include_str!("../../../tests/fixtures/api/score.json"),
                Some(30),
            ),
        ] {
            let usage = check(endpoint, inputs, body.as_bytes())
                .unwrap_or_else(|f| panic!("{endpoint}: {}", f.message));
            assert_eq!(usage.prompt_tokens, prompt, "{endpoint}");
            let short = check(endpoint, inputs + 1, body.as_bytes()).err().unwrap();
            assert_eq!(short.kind, ErrorKind::Protocol, "{endpoint}");
            assert!(
                short
                    .message
                    .contains(&format!("for {} inputs", inputs + 1)),
                "{}",
                short.message
            );
        }
        let e = check(
            Endpoint::Rerank,
            1,
            br#"{"object":"error","message":"too long"}"#,
        )
        .err()
        .unwrap();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::ServerError, "too long")
        );
        assert_eq!(
            check(Endpoint::Score, 1, b"<html>").err().unwrap().kind,
            ErrorKind::Protocol
        );
    }
}
