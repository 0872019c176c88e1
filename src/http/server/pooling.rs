//! The pooling endpoints as vLLM serves them (its serving docs: "Pooling API", "Embeddings
//! API", "Classification API", "Score API", "Re-rank API"): `/v1/embeddings`, `/pooling`,
//! `/classify` take `input` (a string, a list of strings or token-id lists); `/v1/score`
//! scores `text_1` against each of `text_2`; `/v1/rerank` (also `/rerank`, `/v2/rerank`)
//! ranks `documents` (strings or `{"text": …}`) for a `query`, best first, the first
//! `top_n`.
//!
//! Each input (each query–document pair for score and rerank: a cross-encoder reads the
//! pair as one sequence) is one prefill-only sequence for the engine: submitted with one
//! output token, which the simulator computes at the end of the prefill — the pooler's
//! read of the last hidden state. The answer goes out when every sequence is done; its
//! `usage.prompt_tokens` is the sum of the sequences' tokens. The vectors and scores are
//! made up (seeded by the text): the server models time, not meaning.

use hyper::StatusCode;
use serde_json::{json, Value};

use crate::driver::workload::approx_tokens;
use crate::http::Endpoint;

/// A 4xx answer: its status and message.
#[derive(Debug)]
pub(super) struct PoolError(pub(super) StatusCode, pub(super) String);

type ApiError = PoolError;

fn bad(message: impl Into<String>) -> PoolError {
    PoolError(StatusCode::BAD_REQUEST, message.into())
}

fn words(s: &str) -> u64 {
    if s.trim().is_empty() {
        0
    } else {
        approx_tokens(s)
    }
}

/// Dimensions of the embeddings the server answers with (Qwen3-Embedding-0.6B's
/// `hidden_size`).
pub(super) const EMBEDDING_DIM: usize = 1024;

/// One sequence to pool: its text and tokens.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sequence {
    pub(super) text: String,
    pub(super) tokens: u64,
    /// The rerank document it scores, returned in the answer.
    pub(super) document: Option<String>,
}

fn text_sequence(v: &Value, what: &str) -> Result<Sequence, ApiError> {
    match v {
        Value::String(s) => Ok(Sequence {
            text: s.clone(),
            tokens: words(s),
            document: None,
        }),
        Value::Array(ids) if ids.iter().all(Value::is_u64) => Ok(Sequence {
            text: String::new(),
            tokens: ids.len() as u64,
            document: None,
        }),
        Value::Object(o) => match o.get("text") {
            Some(Value::String(s)) => text_sequence(&Value::String(s.clone()), what),
            _ => Err(bad(format!("each {what} object needs a string `text`"))),
        },
        _ => Err(bad(format!(
            "each {what} must be a string or a list of token ids"
        ))),
    }
}

fn list(v: Option<&Value>, key: &str) -> Result<Vec<Sequence>, ApiError> {
    let v = v.ok_or_else(|| bad(format!("`{key}` is required")))?;
    let items: Vec<Sequence> = match v {
        // A list of strings, of objects, or of token-id lists; one string or one id list.
        Value::Array(items) if !items.is_empty() && !items.iter().all(Value::is_u64) => items
            .iter()
            .map(|i| text_sequence(i, key))
            .collect::<Result<_, _>>()?,
        other => vec![text_sequence(other, key)?],
    };
    if items.iter().any(|s| s.tokens == 0) {
        return Err(bad(format!("`{key}` holds an empty input")));
    }
    Ok(items)
}

/// A pair read as one sequence (query then document).
fn pair(query: &Sequence, doc: &Sequence) -> Sequence {
    Sequence {
        text: format!("{} {}", query.text, doc.text),
        tokens: query.tokens + doc.tokens,
        document: Some(doc.text.clone()),
    }
}

/// A request body as a JSON object naming a model the server serves (`served`), if it
/// names one: 400 for a body that is not a JSON object, 404 for another model.
pub(super) fn request_object(
    body: &[u8],
    served: impl Fn(&str) -> bool,
) -> Result<Value, PoolError> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("invalid JSON body: {e}")))?;
    if !v.is_object() {
        return Err(bad("request body must be a JSON object"));
    }
    match v.get("model") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if served(m) => {}
        Some(Value::String(m)) => {
            return Err(PoolError(
                StatusCode::NOT_FOUND,
                format!("The model `{m}` does not exist."),
            ))
        }
        Some(_) => return Err(bad("`model` must be a string")),
    }
    Ok(v)
}

/// The sequences a pooling request asks for, and rerank's `top_n`.
pub(super) fn sequences(
    body: &[u8],
    endpoint: Endpoint,
    model: &str,
) -> Result<(Vec<Sequence>, Option<usize>), ApiError> {
    let v = request_object(body, |m| m == model)?;
    match endpoint {
        Endpoint::Rerank => {
            let query = text_sequence(
                v.get("query").ok_or_else(|| bad("`query` is required"))?,
                "query",
            )?;
            let docs = list(v.get("documents"), "documents")?;
            let top_n = match v.get("top_n") {
                None | Some(Value::Null) => None,
                Some(n) => Some(
                    n.as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| bad("`top_n` must be a non-negative integer"))?,
                ),
            };
            Ok((docs.iter().map(|d| pair(&query, d)).collect(), top_n))
        }
        Endpoint::Score => {
            let left = list(v.get("text_1"), "text_1")?;
            let right = list(v.get("text_2"), "text_2")?;
            let pairs = match (left.len(), right.len()) {
                (1, _) => right.iter().map(|r| pair(&left[0], r)).collect(),
                (n, m) if n == m => left.iter().zip(&right).map(|(l, r)| pair(l, r)).collect(),
                (n, m) => {
                    return Err(bad(format!(
                        "`text_1` has {n} items and `text_2` {m}: give one `text_1` or as many as `text_2`"
                    )))
                }
            };
            Ok((pairs, None))
        }
        _ => Ok((list(v.get("input"), "input")?, None)),
    }
}

/// A seed from `text` (FNV-1a), hashed once per sequence.
fn seed_of(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A number in [0, 1) seeded by `text` and `salt`.
fn unit(text: &str, salt: u64) -> f64 {
    crate::rng::SplitMix64::new(seed_of(text) ^ salt).next_u64() as f64 / 2f64.powi(64)
}

/// The answer to a pooling request whose sequences all finished.
pub(super) fn answer(
    endpoint: Endpoint,
    id: u64,
    created: u64,
    model: &str,
    seqs: &[Sequence],
    top_n: Option<usize>,
) -> String {
    let tokens: u64 = seqs.iter().map(|s| s.tokens).sum();
    let usage = json!({"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0});
    let vector = |s: &Sequence, dim: usize| -> Vec<f64> {
        let mut rng = crate::rng::SplitMix64::new(seed_of(&s.text));
        let raw: Vec<f64> = (0..dim)
            .map(|_| rng.next_u64() as f64 / 2f64.powi(64) - 0.5)
            .collect();
        let norm = raw
            .iter()
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt()
            .max(f64::MIN_POSITIVE);
        raw.iter().map(|x| (x / norm * 1e6).round() / 1e6).collect()
    };
    let v = match endpoint {
        Endpoint::Rerank => {
            let mut results: Vec<Value> = seqs
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    json!({"index": i, "document": {"text": s.document.clone().unwrap_or_default()},
                        "relevance_score": unit(&s.text, 1)})
                })
                .collect();
            results.sort_by(|a, b| {
                let score = |v: &Value| v["relevance_score"].as_f64().unwrap_or(0.0);
                score(b).total_cmp(&score(a))
            });
            results.truncate(top_n.unwrap_or(results.len()));
            json!({"id": format!("rerank-{id}"), "model": model,
                "usage": {"total_tokens": tokens}, "results": results})
        }
        _ => {
            let (prefix, data): (&str, Vec<Value>) = match endpoint {
                Endpoint::Score => (
                    "score",
                    seqs.iter()
                        .enumerate()
                        .map(|(i, s)| json!({"index": i, "object": "score", "score": unit(&s.text, 1)}))
                        .collect(),
                ),
                Endpoint::Classify => (
                    "classify",
                    seqs.iter()
                        .enumerate()
                        .map(|(i, s)| {
                            let p = unit(&s.text, 2);
                            json!({"index": i, "label": if p >= 0.5 { "LABEL_0" } else { "LABEL_1" },
                                "probs": [p, 1.0 - p], "num_classes": 2})
                        })
                        .collect(),
                ),
                Endpoint::Pooling => (
                    "pool",
                    seqs.iter()
                        .enumerate()
                        .map(|(i, s)| json!({"index": i, "object": "pooling", "data": vector(s, EMBEDDING_DIM)}))
                        .collect(),
                ),
                _ => (
                    "embd",
                    seqs.iter()
                        .enumerate()
                        .map(|(i, s)| json!({"index": i, "object": "embedding", "embedding": vector(s, EMBEDDING_DIM)}))
                        .collect(),
                ),
            };
            json!({"id": format!("{prefix}-{id}"), "object": "list", "created": created,
                "model": model, "data": data, "usage": usage})
        }
    };
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_become_sequences_as_vllm_reads_them() {
        let (s, _) =
            sequences(br#"{"input": ["a b c", "d e"]}"#, Endpoint::Embeddings, "m").unwrap();
        assert_eq!(s.iter().map(|s| s.tokens).collect::<Vec<_>>(), vec![3, 2]);
        let (s, _) = sequences(br#"{"input": [1, 2, 3, 4]}"#, Endpoint::Embeddings, "m").unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].tokens, 4);
        let (s, top) = sequences(
            br#"{"query": "q r", "documents": ["a b c", {"text": "d"}], "top_n": 1}"#,
            Endpoint::Rerank,
            "m",
        )
        .unwrap();
        assert_eq!((s[0].tokens, s[1].tokens, top), (5, 3, Some(1)));
        let (s, _) = sequences(
            br#"{"text_1": "q", "text_2": ["a", "b c"]}"#,
            Endpoint::Score,
            "m",
        )
        .unwrap();
        assert_eq!(s.iter().map(|s| s.tokens).collect::<Vec<_>>(), vec![2, 3]);
        for (body, endpoint) in [
            (&br#"{"input": ""}"#[..], Endpoint::Embeddings),
            (br#"{"documents": ["a"]}"#, Endpoint::Rerank),
            (
                br#"{"text_1": ["a", "b"], "text_2": ["c", "d", "e"]}"#,
                Endpoint::Score,
            ),
            (br#"{"input": "a", "model": "other"}"#, Endpoint::Classify),
        ] {
            assert!(
                sequences(body, endpoint, "m").is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn answers_have_one_result_per_input_and_the_client_accepts_them() {
        let seqs = vec![
            Sequence {
                text: "a".into(),
                tokens: 4,
                document: Some("a".into()),
            },
            Sequence {
                text: "b".into(),
                tokens: 6,
                document: Some("b".into()),
            },
        ];
        for e in [
            Endpoint::Embeddings,
            Endpoint::Rerank,
            Endpoint::Score,
            Endpoint::Pooling,
            Endpoint::Classify,
        ] {
            let body = answer(e, 1, 0, "m", &seqs, None);
            let usage = crate::http::client::interpret_whole(e, 2, body.as_bytes()).unwrap();
            assert_eq!(usage.prompt_tokens, Some(10), "{e}");
        }
        let v: Value =
            serde_json::from_str(&answer(Endpoint::Embeddings, 1, 0, "m", &seqs, None)).unwrap();
        let e = v["data"][0]["embedding"].as_array().unwrap();
        assert_eq!(e.len(), EMBEDDING_DIM);
        let norm: f64 = e.iter().map(|x| x.as_f64().unwrap().powi(2)).sum();
        assert!((norm - 1.0).abs() < 1e-3, "{norm}");
        let v: Value =
            serde_json::from_str(&answer(Endpoint::Rerank, 1, 0, "m", &seqs, Some(1))).unwrap();
        assert_eq!(v["results"].as_array().unwrap().len(), 1);
    }
}
