//! OpenAI-compatible HTTP: the streaming client engine ([`client::HttpEngine`]), a server that
//! serves any virtual-time [`Engine`](crate::engine::Engine) in real time ([`server`]), the
//! SSE parser both rely on ([`SseParser`]). The `servebench bench` verb composed from them is
//! [`crate::app::bench`].
//!
//! Only plain `http://` targets are supported (no TLS in this build).

pub mod client;
pub mod listen;
mod prepare;
pub mod server;
pub(crate) mod sse;
mod stamped;
pub mod timeline;

pub use client::{HttpConfig, HttpEngine};
pub use server::{serve, spawn, ServeOptions, ServerHandle};
pub use sse::{SseError, SseEvent, SseParser, DEFAULT_MAX_EVENT, DEFAULT_MAX_LINE};

/// Which OpenAI completion API to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Endpoint {
    /// `POST /v1/completions` (`prompt`, `max_tokens`, `choices[].text`).
    #[default]
    Completions,
    /// `POST /v1/chat/completions` (`messages`, `max_completion_tokens`, `choices[].delta`).
    Chat,
}

impl Endpoint {
    /// The request path, e.g. `/v1/completions`.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Completions => "/v1/completions",
            Endpoint::Chat => "/v1/chat/completions",
        }
    }
}

impl std::str::FromStr for Endpoint {
    type Err = HttpError;

    /// `completions` / `chat` (or the paths `/v1/completions`, `/v1/chat/completions`).
    fn from_str(s: &str) -> Result<Self, HttpError> {
        match s {
            "completions" | "completion" | "/v1/completions" => Ok(Endpoint::Completions),
            "chat" | "chat-completions" | "/v1/chat/completions" => Ok(Endpoint::Chat),
            other => Err(HttpError::BadEndpoint(other.to_string())),
        }
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
    #[error("unknown endpoint `{0}` (expected completions or chat)")]
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
        assert!("embeddings".parse::<Endpoint>().is_err());
    }
}
