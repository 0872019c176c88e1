//! OpenAI-compatible HTTP: the streaming client engine ([`client::HttpEngine`]), a server that
//! serves any virtual-time [`Engine`](crate::engine::Engine) in real time ([`server`]), the
//! SSE parser both rely on ([`SseParser`]). The `servebench bench` verb composed from them is
//! [`crate::app::bench`].
//!
//! Only plain `http://` targets are supported (no TLS in this build).

pub mod client;
pub mod listen;
mod prepare;
pub mod schema;
pub mod server;
pub(crate) mod sse;
mod stamped;
pub mod timeline;
pub mod trace;

pub use client::{HttpConfig, HttpEngine};
pub use server::{serve, spawn, ServeOptions, ServerHandle};
pub use sse::{SseError, SseEvent, SseParser, DEFAULT_MAX_EVENT, DEFAULT_MAX_LINE};

/// Which API to call: the four generation APIs (streamed) and the five pooling APIs vLLM
/// serves (one JSON answer each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Endpoint {
    /// `POST /v1/completions` (`prompt`, `max_tokens`, `choices[].text`).
    #[default]
    Completions,
    /// `POST /v1/chat/completions` (`messages`, `max_completion_tokens`, `choices[].delta`).
    Chat,
    /// `POST /v1/responses`: OpenAI's Responses API (`input`, `max_output_tokens`; streamed
    /// as typed events, `response.output_text.delta` … `response.completed`).
    Responses,
    /// `POST /v1/messages`: Anthropic's Messages API (`messages`, `max_tokens`; streamed as
    /// `message_start`, `content_block_delta` … `message_stop`; `x-api-key` and
    /// `anthropic-version` headers).
    Messages,
    /// `POST /v1/embeddings` (`input`: a batch of texts; `data[].embedding`).
    Embeddings,
    /// `POST /v1/rerank` (Jina/Cohere style: `query`, `documents`; `results[]`).
    Rerank,
    /// `POST /v1/score` (`text_1`, `text_2`: one query against a list; `data[].score`).
    Score,
    /// `POST /pooling` (vLLM's raw pooler output for `input`).
    Pooling,
    /// `POST /classify` (`input`; `data[].probs`).
    Classify,
}

impl Endpoint {
    /// Every endpoint, generation APIs first.
    pub const ALL: [Endpoint; 9] = [
        Endpoint::Completions,
        Endpoint::Chat,
        Endpoint::Responses,
        Endpoint::Messages,
        Endpoint::Embeddings,
        Endpoint::Rerank,
        Endpoint::Score,
        Endpoint::Pooling,
        Endpoint::Classify,
    ];

    /// The request path, e.g. `/v1/completions`.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Completions => "/v1/completions",
            Endpoint::Chat => "/v1/chat/completions",
            Endpoint::Responses => "/v1/responses",
            Endpoint::Messages => "/v1/messages",
            Endpoint::Embeddings => "/v1/embeddings",
            Endpoint::Rerank => "/v1/rerank",
            Endpoint::Score => "/v1/score",
            Endpoint::Pooling => "/pooling",
            Endpoint::Classify => "/classify",
        }
    }

    /// The endpoint's name on the command line (`completions`, `chat`, `embeddings`, …).
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Completions => "completions",
            Endpoint::Chat => "chat",
            Endpoint::Responses => "responses",
            Endpoint::Messages => "messages",
            Endpoint::Embeddings => "embeddings",
            Endpoint::Rerank => "rerank",
            Endpoint::Score => "score",
            Endpoint::Pooling => "pooling",
            Endpoint::Classify => "classify",
        }
    }

    /// `true` for the generation APIs, whose answers stream token by token (so TTFT, TPOT
    /// and ITL apply); `false` for the pooling APIs, answered with one JSON body (only the
    /// request latency applies).
    ///
    /// ```
    /// use servebench::http::Endpoint;
    /// assert!(Endpoint::Messages.streams());
    /// assert!(!Endpoint::Rerank.streams());
    /// ```
    pub fn streams(self) -> bool {
        matches!(
            self,
            Endpoint::Completions | Endpoint::Chat | Endpoint::Responses | Endpoint::Messages
        )
    }

    /// The endpoint a request path names (the paths vLLM serves, with and without `/v1`).
    pub fn for_path(path: &str) -> Option<Endpoint> {
        Some(match path {
            "/v1/completions" => Endpoint::Completions,
            "/v1/chat/completions" => Endpoint::Chat,
            "/v1/responses" => Endpoint::Responses,
            "/v1/messages" => Endpoint::Messages,
            "/v1/embeddings" => Endpoint::Embeddings,
            "/v1/rerank" | "/rerank" | "/v2/rerank" => Endpoint::Rerank,
            "/v1/score" | "/score" => Endpoint::Score,
            "/pooling" => Endpoint::Pooling,
            "/classify" => Endpoint::Classify,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Endpoint {
    type Err = HttpError;

    /// An endpoint's [name](Endpoint::name) or path (`chat`, `/v1/chat/completions`,
    /// `rerank`, …).
    fn from_str(s: &str) -> Result<Self, HttpError> {
        match s {
            "completion" => return Ok(Endpoint::Completions),
            "chat-completions" => return Ok(Endpoint::Chat),
            "embedding" => return Ok(Endpoint::Embeddings),
            _ => {}
        }
        Endpoint::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .or_else(|| Endpoint::for_path(s))
            .ok_or_else(|| HttpError::BadEndpoint(s.to_string()))
    }
}

/// Errors of the HTTP layer (not of single requests: those are
/// [`EngineEvent::Failed`](crate::engine::EngineEvent::Failed)).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The target URL is not `http://host[:port][/path]`.
    #[error("bad target URL `{url}`: {reason}")]
    BadTarget {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Unknown endpoint name.
    #[error("unknown endpoint `{0}` (expected completions, chat, responses, messages, embeddings, rerank, score, pooling or classify)")]
    BadEndpoint(String),
    /// The tokio runtime or a socket could not be set up.
    #[error("I/O: {0}")]
    Runtime(#[from] std::io::Error),
    /// A control request (`/v1/models`) failed.
    #[error("{0}")]
    Request(String),
}

/// A parsed `http://host:port/prefix` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub host: String,
    pub port: u16,
    /// `host:port` for the Host header.
    pub authority: String,
    /// Path prefix without a trailing `/` and without a trailing `/v1` (often `""`).
    pub base_path: String,
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Target, HttpError> {
        let bad = |reason: &str| HttpError::BadTarget {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let uri: hyper::Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => return Err(bad("https is not supported (no TLS in this build)")),
            _ => return Err(bad("expected http://host:port")),
        }
        let host = uri.host().ok_or_else(|| bad("no host"))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        // `Uri::port` is `None` for `:99999` too: read the authority's port text, so that
        // an out-of-range port is an error, not a silent port 80.
        let port_text = uri
            .authority()
            .map(|a| a.as_str())
            .and_then(|a| a.rsplit_once(':'))
            .map(|(_, p)| p)
            .filter(|p| !p.contains(']'));
        let port = match port_text {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| bad(&format!("port {p} is not in 1..=65535")))?,
            None => 80,
        };
        let authority = uri
            .authority()
            .map(|a| a.as_str().to_string())
            .unwrap_or_else(|| format!("{host}:{port}"));
        let mut base_path = uri.path().trim_end_matches('/').to_string();
        if let Some(stripped) = base_path.strip_suffix("/v1") {
            base_path = stripped.to_string();
        }
        Ok(Target {
            host,
            port,
            authority,
            base_path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("http://127.0.0.1:8000").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.base_path.as_str()),
            ("127.0.0.1", 8000, "")
        );
        assert_eq!(t.authority, "127.0.0.1:8000");
        let t = Target::parse("http://localhost:9/v1/").unwrap();
        assert_eq!(t.base_path, "");
        let t = Target::parse("http://localhost/proxy/v1").unwrap();
        assert_eq!((t.port, t.base_path.as_str()), (80, "/proxy"));
        let t = Target::parse("http://[::1]:8000").unwrap();
        assert_eq!(t.host, "::1");
        assert!(Target::parse("https://x").is_err());
        assert!(Target::parse("127.0.0.1:8000").is_err());
        assert!(Target::parse("http:// bad").is_err());
        // An out-of-range port is an error, not a silent port 80.
        for url in [
            "http://127.0.0.1:99999",
            "http://127.0.0.1:0",
            "http://[::1]:65536/v1",
        ] {
            let e = Target::parse(url).unwrap_err().to_string();
            assert!(e.contains("not in 1..=65535"), "{url}: {e}");
        }
    }

    #[test]
    fn endpoints() {
        assert_eq!("chat".parse::<Endpoint>().unwrap(), Endpoint::Chat);
        assert_eq!(
            "/v1/completions".parse::<Endpoint>().unwrap().path(),
            "/v1/completions"
        );
        assert!("embed".parse::<Endpoint>().is_err());
        for e in Endpoint::ALL {
            assert_eq!(e.name().parse::<Endpoint>().unwrap(), e);
            assert_eq!(Endpoint::for_path(e.path()), Some(e));
        }
        assert_eq!(Endpoint::for_path("/rerank"), Some(Endpoint::Rerank));
    }
}
