//! `bench`'s endpoint flags: which API to call (`--endpoint`) and the shape of its requests
//! (`--batch-size`, `--documents`, `--document-tokens`, `--images`, `--image-size`).

use clap::builder::TypedValueParser as _;
use servebench::driver::images::ImageLoad;
use servebench::http::schema::{JsonSchema, SchemaField, Tools};
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
    /// Images from a dataset file instead of generated ones: JSON Lines in aiperf's
    /// single-turn format (`image` or `images` URLs per line) or one URL per line; http(s)
    /// URLs are sent for the server to fetch, base64 data URLs are sized from their header.
    #[arg(
        long,
        value_name = "FILE",
        requires = "images",
        conflicts_with = "image_size"
    )]
    pub image_file: Option<std::path::PathBuf>,
    /// An OpenAI `tools` array (JSON file) offered with every chat request; each tool call
    /// in an answer is checked against its tool's parameters schema.
    #[arg(long, value_name = "TOOLS.json")]
    pub tools: Option<std::path::PathBuf>,
    /// `tool_choice` with --tools: auto, required, none, or a tool's name.
    #[arg(long, value_name = "CHOICE", requires = "tools")]
    pub tool_choice: Option<String>,
    /// A JSON Schema (file) every chat answer must follow, sent as `response_format`
    /// (`json_schema`) and checked on each answer.
    #[arg(long, value_name = "SCHEMA.json")]
    pub response_format: Option<std::path::PathBuf>,
    /// The chat request field the schema goes in: OpenAI's `response_format`, or vLLM's
    /// `structured_outputs` (`{"json": SCHEMA}`, vLLM 0.12 and later) or `guided_json`
    /// (earlier vLLM).
    #[arg(
        long,
        value_enum,
        value_name = "FIELD",
        default_value = "response-format",
        requires = "response_format"
    )]
    pub schema_field: SchemaFieldArg,
}

/// `--schema-field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFieldArg {
    /// OpenAI's `response_format` (json_schema).
    ResponseFormat,
    /// vLLM's `structured_outputs: {"json": SCHEMA}`.
    StructuredOutputs,
    /// vLLM's `guided_json: SCHEMA`.
    GuidedJson,
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
        let generates = matches!(
            endpoint,
            Endpoint::Chat | Endpoint::Responses | Endpoint::Messages
        );
        if self.tools.is_some() && !generates {
            return refuse("tools", "--endpoint chat, responses or messages");
        }
        if self.response_format.is_some()
            && !matches!(endpoint, Endpoint::Chat | Endpoint::Responses)
        {
            return refuse("response-format", "--endpoint chat or responses");
        }
        let read_json =
            |flag: &str, path: &std::path::Path| -> Result<serde_json::Value, InputError> {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| InputError(format!("--{flag} {}: {e}", path.display())))?;
                serde_json::from_str(&text)
                    .map_err(|e| InputError(format!("--{flag} {}: not JSON: {e}", path.display())))
            };
        if let Some(path) = &self.tools {
            let tools = Tools::from_json(read_json("tools", path)?)
                .map_err(|e| InputError(format!("--tools {}: {e}", path.display())))?;
            http.tool_choice = match self.tool_choice.as_deref() {
                None => None,
                Some(c @ ("auto" | "required" | "none")) => Some(serde_json::json!(c)),
                Some(name) if tools.functions().iter().any(|(n, _)| n == name) => {
                    Some(serde_json::json!({"type": "function", "function": {"name": name}}))
                }
                Some(other) => {
                    return Err(InputError(format!(
                        "--tool-choice {other}: not auto, required, none or a tool in --tools"
                    )))
                }
            };
            http.tools = Some(tools);
        }
        if self.schema_field != SchemaFieldArg::ResponseFormat && endpoint != Endpoint::Chat {
            return refuse("schema-field", "--endpoint chat");
        }
        http.schema_field = match self.schema_field {
            SchemaFieldArg::ResponseFormat => SchemaField::ResponseFormat,
            SchemaFieldArg::StructuredOutputs => SchemaField::StructuredOutputs,
            SchemaFieldArg::GuidedJson => SchemaField::GuidedJson,
        };
        if let Some(path) = &self.response_format {
            http.response_format = Some(
                JsonSchema::new(read_json("response-format", path)?).map_err(|e| {
                    InputError(format!(
                        "--response-format {}: not a JSON Schema: {e}",
                        path.display()
                    ))
                })?,
            );
        }
        http.inputs_per_request = self.batch_size.or(self.documents).unwrap_or(1);
        http.document_tokens = self.document_tokens;
        if let (Some(n), Some(path)) = (self.images, &self.image_file) {
            http.images = Some(
                ImageLoad::from_file(n, path)
                    .map_err(|e| InputError(format!("--image-file: {e}")))?,
            );
        } else if let Some(n) = self.images {
            let spec = self.image_size.as_deref().unwrap_or("512x512");
            http.images = Some(
                ImageLoad::parse(n, spec).map_err(|e| InputError(format!("--image-size: {e}")))?,
            );
        }
        Ok(())
    }
}
