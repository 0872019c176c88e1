//! The server's settings ([`ServeOptions`], the chat delta field, injected faults) and
//! why it could not start ([`ServeError`]).

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

#[cfg(doc)]
use super::ServerHandle;

/// Which chat delta field carries the generated text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeltaField {
    /// `delta.content` (a non-reasoning model).
    #[default]
    Content,
    /// `delta.reasoning` (vLLM ≥ 0.11 with a reasoning parser: the model is thinking).
    Reasoning,
    /// `delta.reasoning_content` (SGLang, vLLM before the rename).
    ReasoningContent,
}

impl DeltaField {
    pub(super) fn key(self) -> &'static str {
        match self {
            DeltaField::Content => "content",
            DeltaField::Reasoning => "reasoning",
            DeltaField::ReasoningContent => "reasoning_content",
        }
    }
}

/// A reasoning phase before the answer (a reasoning model behind vLLM's
/// `--reasoning-parser`): the first tokens of every chat answer stream in the reasoning
/// delta field, the rest in `delta.content`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReasoningPhase {
    /// The first N output tokens of each request are reasoning.
    Tokens(u64),
    /// This share (0–1) of each request's `max_tokens`, rounded down, is reasoning.
    Share(f64),
}

impl ReasoningPhase {
    /// Reasoning tokens of a request allowed `max_tokens` output tokens.
    ///
    /// ```
    /// use servebench::http::server::ReasoningPhase;
    /// assert_eq!(ReasoningPhase::Tokens(20).budget(100), 20);
    /// assert_eq!(ReasoningPhase::Tokens(200).budget(100), 100);
    /// assert_eq!(ReasoningPhase::Share(0.25).budget(10), 2);
    /// ```
    pub fn budget(self, max_tokens: u64) -> u64 {
        match self {
            ReasoningPhase::Tokens(n) => n.min(max_tokens),
            // A share in [0, 1] of a u64 fits a u64 (`as` saturates and maps NaN to 0).
            ReasoningPhase::Share(f) => ((max_tokens as f64) * f.clamp(0.0, 1.0)).floor() as u64,
        }
    }
}

/// What an injected fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer `500 Internal Server Error` with a JSON error body, without running the request.
    Status500,
    /// Cut the connection (no `[DONE]`, no chunked-encoding terminator) after this many
    /// token chunks.
    CutStream {
        /// Token chunks sent before the cut.
        after_chunks: u32,
    },
    /// Send an in-stream `{"error": …}` object and `[DONE]` after this many token chunks.
    StreamError {
        /// Token chunks sent before the error.
        after_chunks: u32,
    },
}

/// Fault injection: every `every`-th valid generation request (1-based count) gets `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Period (≥ 1).
    pub every: u64,
    /// What happens to the chosen requests.
    pub kind: FaultKind,
}

/// A malformed `--fault` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad fault `{0}` (expected 500:N, cut:N:K or error:N:K with N >= 1)")]
pub struct FaultParseError(String);

impl FromStr for Fault {
    type Err = FaultParseError;

    /// `500:N` (every Nth request gets HTTP 500), `cut:N:K` (every Nth stream is cut after K
    /// token chunks), `error:N:K` (an in-stream error after K token chunks).
    ///
    /// ```
    /// use servebench::http::server::{Fault, FaultKind};
    /// let f: Fault = "cut:5:3".parse().unwrap();
    /// assert_eq!(f, Fault { every: 5, kind: FaultKind::CutStream { after_chunks: 3 } });
    /// assert!("cut:0:3".parse::<Fault>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, FaultParseError> {
        let bad = || FaultParseError(s.to_string());
        let parts: Vec<&str> = s.split(':').collect();
        let every: u64 = parts
            .get(1)
            .and_then(|n| n.parse().ok())
            .filter(|&n| n >= 1)
            .ok_or_else(bad)?;
        let after = || -> Result<u32, FaultParseError> {
            parts.get(2).and_then(|k| k.parse().ok()).ok_or_else(bad)
        };
        let kind = match (parts.first().copied(), parts.len()) {
            (Some("500"), 2) => FaultKind::Status500,
            (Some("cut"), 3) => FaultKind::CutStream {
                after_chunks: after()?,
            },
            (Some("error"), 3) => FaultKind::StreamError {
                after_chunks: after()?,
            },
            _ => return Err(bad()),
        };
        Ok(Fault { every, kind })
    }
}

/// Default [`ServeOptions::handoff_window`]: on a 2-core machine at 256 streams, windows of
/// 8 to 32 gave the same TTFT error (`benches/HISTORY.md`, "The server's hand-off window").
pub const DEFAULT_HANDOFF_WINDOW: usize = 16;

/// The default [`ServeOptions::worker_threads`]: the cores besides the one the engine thread
/// keeps busy, at least 1 and at most 8. On a 2-core machine that is 1: with two workers
/// beside the engine thread and a client, the threads waited for a core often enough to
/// add 0.1 ms to the median TTFT error at 256 streams (`benches/HISTORY.md`).
pub fn default_worker_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get().saturating_sub(1))
        .clamp(1, 8)
}

/// Server settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeOptions {
    /// The served model name (`/v1/models`, the `model` of every chunk). Requests naming
    /// another model get 404.
    pub model: String,
    /// Chat delta field for the generated text.
    pub delta_field: DeltaField,
    /// A reasoning phase before the answer: its tokens stream in the reasoning field
    /// (`delta_field` when that is a reasoning field, else `delta.reasoning`), the rest in
    /// `delta.content`. `None`: every token in `delta_field`.
    pub reasoning: Option<ReasoningPhase>,
    /// LoRA adapter names (vLLM's `--lora-modules`): requests may name one of them as
    /// their `model` besides [`model`](Self::model).
    pub lora_modules: Vec<String>,
    /// Fault injection, for tests.
    pub fault: Option<Fault>,
    /// Longest sleep of the engine thread while requests are in flight: it wakes at the
    /// engine's next event when the engine knows it ([`crate::engine::Engine::next_event_at`];
    /// the simulator does), else polls at this interval.
    pub tick: Duration,
    /// Capacity of each stream's channel (items, not bytes).
    pub stream_buffer: usize,
    /// Most streams woken to write and not yet run. When a decode step hands a chunk to
    /// more streams than this, the others wait in line and each task that runs wakes the
    /// next; a stream's first token goes to the front of the line, so it waits behind at
    /// most this many writes instead of a whole step's. 0: wake every stream at once.
    pub handoff_window: usize,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// `max_tokens` when a request gives none.
    pub default_max_tokens: u64,
    /// Reject requests with prompt + max_tokens above this (vLLM's 400), if set.
    pub max_model_len: Option<u64>,
    /// Keep every finished request's virtual-time record ([`ServerHandle::timeline`]).
    pub record_timeline: bool,
    /// Tokio worker threads for the HTTP side. Default: one per core besides the engine
    /// thread's ([`default_worker_threads`]).
    pub worker_threads: usize,
    /// Most connections open at once; further clients wait in the listen backlog until one
    /// closes (bounded memory under a flood of connections).
    pub max_connections: usize,
    /// A connection that does not send a complete request head within this time is
    /// closed (idle or slow clients cannot hold a connection slot forever).
    pub header_read_timeout: Duration,
    /// Required API key (vLLM's `--api-key`): every `/v1/…` request must send
    /// `Authorization: Bearer KEY`, else it gets a 401 JSON error. `/health` and
    /// `/metrics` stay open. `None`: no key required.
    pub api_key: Option<String>,
    /// A server still starting (a model loading): for this long after the server starts,
    /// every route but `/metrics` answers 503, as a vLLM server does until its engine is
    /// up. Zero: ready at once.
    pub ready_after: Duration,
    /// Answers to prompts it recognizes (the example server's eval items at
    /// `--accuracy P`): the text it returns for a prompt streams first, the filler words
    /// after it. `None`: filler words only.
    pub answerer: Option<Answerer>,
    /// Share of tool calls (requests that offer `tools`) whose arguments break their tool's
    /// schema (the example server's `--invalid-tool-calls`), drawn per request, seeded.
    pub invalid_tool_calls: f64,
    /// Share of structured answers (requests with a `json_schema` response format) that
    /// break the schema (`--invalid-json`), drawn per request, seeded.
    pub invalid_json: f64,
    /// Seed of those draws.
    pub checks_seed: u64,
}

/// A function from a request's prompt text to the answer the server gives it (`None`: no
/// answer of its own, only filler words). Compared by identity.
#[derive(Clone)]
pub struct Answerer(pub std::sync::Arc<AnswerFn>);

/// The function an [`Answerer`] holds.
pub type AnswerFn = dyn Fn(&str) -> Option<String> + Send + Sync;

impl std::fmt::Debug for Answerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Answerer(..)")
    }
}

impl PartialEq for Answerer {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            model: "servebench-sim".into(),
            delta_field: DeltaField::Content,
            reasoning: None,
            lora_modules: Vec::new(),
            fault: None,
            tick: Duration::from_micros(500),
            stream_buffer: 32,
            handoff_window: DEFAULT_HANDOFF_WINDOW,
            max_body_bytes: 64 << 20,
            default_max_tokens: 16,
            max_model_len: None,
            record_timeline: false,
            worker_threads: default_worker_threads(),
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(30),
            api_key: None,
            ready_after: Duration::ZERO,
            answerer: None,
            invalid_tool_calls: 0.0,
            invalid_json: 0.0,
            checks_seed: 0,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// `speed` must be positive and finite.
    #[error("speed must be a positive finite number, got {0}")]
    BadSpeed(f64),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// Runtime or thread setup failed.
    #[error("server setup: {0}")]
    Setup(std::io::Error),
}

/// Most tokens one request may ask for (`max_tokens`), whatever `max_model_len` says: a
/// `stream: false` answer holds its whole text in memory, so a larger request gets a 400.
pub const MAX_COMPLETION_TOKENS: u64 = 1 << 20;
