//! `bench`'s endpoint flags: which API to call (`--endpoint`) and the shape of its requests
//! (`--batch-size`, `--documents`, `--document-tokens`, `--images`, `--image-size`).

use clap::builder::TypedValueParser as _;
use servebench::driver::images::ImageLoad;
use servebench::http::{Endpoint, HttpConfig};

use crate::input::InputError;

/// The endpoint and its request shape.
#[derive(Debug, Clone, clap::Args)]
pub struct EndpointArgs {
    /// Which API to call: the generation APIs stream (TTFT, TPOT, ITL apply); the pooling
    /// APIs (embeddings, rerank, score, pooling, classify) answer with one JSON body (only
    /// the request latency applies).
    #[arg(long, default_value = "completions",
          value_parser = clap::builder::PossibleValuesParser::new(Endpoint::ALL.map(Endpoint::name))
              .map(|s| s.parse::<Endpoint>().unwrap_or_default()))]
    pub endpoint: Endpoint,
    /// Texts per embeddings, pooling or classify request (each of the workload's input
    /// length).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub batch_size: Option<u32>,
    /// Documents per rerank or score query.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub documents: Option<u32>,
    /// Tokens of each rerank or score document (default: the query's length).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub document_tokens: Option<u64>,
    /// Images per chat request, sent as base64 PNG data URLs (seeded, unique per request).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub images: Option<u32>,
    /// Image sizes: `WxH`, or weighted buckets `WxH:W,WxH:W` (vLLM random-mm's bucket
    /// semantics, frames always 1).
    #[arg(long, value_name = "WxH[:WEIGHT],…", requires = "images")]
    pub image_size: Option<String>,
}

impl EndpointArgs {
    /// Whether the endpoint streams its answers (the generation APIs).
    pub fn streams(&self) -> bool {
        self.endpoint.streams()
    }

    /// Sets `http`'s endpoint and request shape; an error naming the flag that does not
    /// apply to the endpoint.
    pub fn apply(&self, http: &mut HttpConfig) -> Result<(), InputError> {
        let endpoint = self.endpoint;
        http.endpoint = endpoint;
        let batched = matches!(
            endpoint,
            Endpoint::Embeddings | Endpoint::Pooling | Endpoint::Classify
        );
        let paired = matches!(endpoint, Endpoint::Rerank | Endpoint::Score);
        let refuse = |flag: &str, wants: &str| {
            Err(InputError(format!(
                "--{flag} applies to {wants}, not to --endpoint {endpoint}"
            )))
        };
        if self.batch_size.is_some() && !batched {
            return refuse("batch-size", "--endpoint embeddings, pooling or classify");
        }
        if (self.documents.is_some() || self.document_tokens.is_some()) && !paired {
            let flag = if self.documents.is_some() {
                "documents"
            } else {
                "document-tokens"
            };
            return refuse(flag, "--endpoint rerank or score");
        }
        if self.images.is_some() && endpoint != Endpoint::Chat {
            return refuse("images", "--endpoint chat");
        }
        http.inputs_per_request = self.batch_size.or(self.documents).unwrap_or(1);
        http.document_tokens = self.document_tokens;
        if let Some(n) = self.images {
            let spec = self.image_size.as_deref().unwrap_or("512x512");
            http.images = Some(
                ImageLoad::parse(n, spec).map_err(|e| InputError(format!("--image-size: {e}")))?,
            );
        }
        Ok(())
    }
}
