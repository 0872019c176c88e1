//! A study's `[endpoint]`: the API every run calls and the shape of its requests (an
//! embeddings tier's batch size, a rerank tier's documents), checked when the study file is
//! read. The names are `servebench bench --endpoint`'s.

use serde::{Deserialize, Serialize};

/// The endpoints a study can call, by name (`bench --endpoint`'s).
pub const ENDPOINT_NAMES: [&str; 9] = [
    "completions",
    "chat",
    "responses",
    "messages",
    "embeddings",
    "rerank",
    "score",
    "pooling",
    "classify",
];

/// `[endpoint]`: which API every run of the study calls.
///
/// ```
/// use servebench::study::EndpointSpec;
/// let e: EndpointSpec = toml::from_str("name = \"embeddings\"\nbatch_size = 8").unwrap();
/// assert!(e.check().is_ok());
/// let bad: EndpointSpec = toml::from_str("name = \"embeddings\"\ndocuments = 4").unwrap();
/// assert!(bad.check().unwrap_err().contains("documents"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointSpec {
    /// One of [`ENDPOINT_NAMES`].
    pub name: String,
    /// Texts per embeddings, pooling or classify request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    /// Documents per rerank or score query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<u32>,
    /// Tokens of each rerank or score document (default: the query's length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_tokens: Option<u64>,
}

impl EndpointSpec {
    /// Whether its answers stream (the generation APIs).
    pub fn streams(&self) -> bool {
        matches!(
            self.name.as_str(),
            "completions" | "chat" | "responses" | "messages"
        )
    }

    /// `Err` naming the field that is wrong: an unknown name, a batch size for an endpoint
    /// that takes one input, documents for one that takes none, a zero count.
    pub fn check(&self) -> Result<(), String> {
        if !ENDPOINT_NAMES.contains(&self.name.as_str()) {
            return Err(format!(
                "`endpoint.name`: unknown endpoint `{}` (known: {})",
                self.name,
                ENDPOINT_NAMES.join(", ")
            ));
        }
        let batched = matches!(self.name.as_str(), "embeddings" | "pooling" | "classify");
        let paired = matches!(self.name.as_str(), "rerank" | "score");
        if self.batch_size.is_some() && !batched {
            return Err(format!(
                "`endpoint.batch_size` applies to embeddings, pooling and classify, not {}",
                self.name
            ));
        }
        if (self.documents.is_some() || self.document_tokens.is_some()) && !paired {
            return Err(format!(
                "`endpoint.documents` and `endpoint.document_tokens` apply to rerank and score, not {}",
                self.name
            ));
        }
        for (key, v) in [
            ("batch_size", self.batch_size.map(u64::from)),
            ("documents", self.documents.map(u64::from)),
            ("document_tokens", self.document_tokens),
        ] {
            if v == Some(0) {
                return Err(format!("`endpoint.{key}` must be at least 1"));
            }
        }
        Ok(())
    }
}
