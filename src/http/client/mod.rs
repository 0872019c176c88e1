//! [`HttpEngine`]: an [`Engine`] that sends each request to an OpenAI-compatible server
//! (`/v1/completions` or `/v1/chat/completions`, `stream: true`) and reports the streamed
//! chunks in real time.
//!
//! The engine owns a tokio runtime. [`Engine::submit`] spawns one task per request; the task
//! stamps [`EngineEvent::Sent`] just before it takes a connection and sends (vLLM's `st`;
//! the bodies of the requests announced by [`Engine::prepare`] are encoded ahead by a
//! thread of their own, the others in the task after the stamp),
//! stamps every body read with the time its connection's read returned the bytes (an
//! [`Instant`]-based offset from the engine's origin; not when the task next ran),
//! parses the SSE events in it and sends [`EngineEvent::Chunk`]s through a channel that
//! [`Engine::advance`] drains while it waits on the wall clock.
//!
//! What counts as a token chunk: a `choices` entry with non-empty `text` (completions) or a
//! `delta` with non-empty `content`, `reasoning` (vLLM ≥ 0.11), `reasoning_content` (SGLang,
//! older vLLM) or `tool_calls`. Role-only and empty chunks do not count. The tokens in a chunk
//! are the increase of `usage.completion_tokens` when the server streams usage on every chunk
//! (vLLM's `continuous_usage_stats`), else 1. HTTP errors, connection failures, streams cut
//! before `[DONE]`, in-stream `error` objects and timeouts become [`EngineEvent::Failed`].

mod admin;
mod checks;
mod connection;
mod events;
mod failure;
mod inbox;
mod prompt;
mod stream;
#[cfg(test)]
mod tests;
mod whole;
mod wire;

pub use admin::model_ids;
pub use prompt::synthetic_prompt;
pub use whole::interpret_whole;
pub use wire::{Protocol, StreamState};

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use serde_json::Value;

use super::{Endpoint, HttpError, Target};
use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest};
use crate::record::ServerClock;

use admin::{chat_answer, models_response, post_empty};
use inbox::Inbox;
use prompt::{encode_body, request_body};
use stream::run_request;

/// How to reach the server and what to send.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    /// Base URL, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is accepted). Only `http://`.
    pub target: String,
    /// Which completion endpoint to call.
    pub endpoint: Endpoint,
    /// `model` field; `None` leaves it out (the server picks its default).
    pub model: Option<String>,
    /// Sent as `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// Whole-request limit (connect to `[DONE]`); `None`: no limit.
    pub request_timeout: Option<Duration>,
    /// Limit for opening a TCP connection.
    pub connect_timeout: Duration,
    /// Ask for `stream_options.continuous_usage_stats` (usage on every chunk, vLLM).
    pub continuous_usage: bool,
    /// Extra top-level JSON fields merged into every request body (e.g. `temperature`).
    pub extra_body: serde_json::Map<String, Value>,
    /// Tokio worker threads for the I/O tasks.
    pub worker_threads: usize,
    /// Send each request to a LoRA adapter of this split (`model` = the adapter the
    /// request's id falls on) instead of `model`.
    pub lora: Option<crate::driver::lora::LoraSplit>,
    /// Open the connections of a run's first second before the run starts
    /// ([`HttpEngine::preconnect`], which [`crate::app::bench::run`] calls with the
    /// requests due in that second, at most the concurrency cap), so that the first
    /// wave's TTFT holds no TCP handshake.
    pub preconnect: bool,
    /// Inputs per request for the endpoints that take several: texts per embeddings,
    /// pooling or classify request (`bench --batch-size`), documents per rerank or score
    /// query (`bench --documents`). 1 for the others.
    pub inputs_per_request: u32,
    /// Tokens of each rerank or score document; `None`: the query's length.
    pub document_tokens: Option<u64>,
    /// Images in each chat request (`bench --images N --image-size WxH`), sent as base64
    /// PNG data URLs.
    pub images: Option<crate::driver::images::ImageLoad>,
    /// The preprocessor whose rules count an image's prompt tokens (Qwen3.5's by default).
    pub vision: crate::driver::images::VisionPreprocessor,
    /// The `anthropic-version` header of Messages API requests.
    pub anthropic_version: String,
    /// Tools offered with every chat request (`bench --tools`): each call in an answer is
    /// checked against its tool's parameters schema.
    pub tools: Option<crate::http::schema::Tools>,
    /// `tool_choice` sent with the tools (`"auto"` when `None`).
    pub tool_choice: Option<Value>,
    /// A JSON Schema every chat answer must follow (`bench --response-format`), sent as
    /// `response_format: {"type": "json_schema", …}` and checked on the answer.
    pub response_format: Option<crate::http::schema::JsonSchema>,
    /// Which request field carries `response_format`'s schema on chat requests.
    pub schema_field: crate::http::schema::SchemaField,
    /// The run's trace: every request carries a W3C `traceparent` header in it
    /// ([`crate::http::trace`]); `None`: no header.
    pub trace: Option<crate::http::trace::TraceId>,
}

impl HttpConfig {
    /// Defaults for `target`: completions endpoint, no model/key, 6 h request timeout (vLLM's
    /// aiohttp limit), 10 s connect timeout, continuous usage on, 2 worker threads, the first
    /// burst's connections opened ahead.
    pub fn new(target: impl Into<String>) -> Self {
        HttpConfig {
            target: target.into(),
            endpoint: Endpoint::Completions,
            model: None,
            api_key: None,
            request_timeout: Some(Duration::from_secs(6 * 3600)),
            connect_timeout: Duration::from_secs(10),
            continuous_usage: true,
            extra_body: serde_json::Map::new(),
            worker_threads: 2,
            lora: None,
            preconnect: true,
            inputs_per_request: 1,
            document_tokens: None,
            images: None,
            vision: crate::driver::images::VisionPreprocessor::QWEN3_5,
            anthropic_version: ANTHROPIC_VERSION.to_string(),
            tools: None,
            tool_choice: None,
            response_format: None,
            schema_field: crate::http::schema::SchemaField::default(),
            trace: None,
        }
    }
}

/// The `anthropic-version` header sent by default: the Messages API's current version
/// (Anthropic's API reference, "Versions").
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Prefix of the `x-request-id` header sent with each request (followed by the request id),
/// so that server logs and timelines can be joined with the client's records.
pub const REQUEST_ID_PREFIX: &str = "servebench-";

/// Most idle keep-alive connections kept for reuse.
const MAX_IDLE: usize = 4096;
/// Most bytes of an error response body read for its message.
const MAX_ERROR_BODY: usize = 64 << 10;

type Sender = SendRequest<Full<Bytes>>;

struct Shared {
    target: Target,
    config: HttpConfig,
    origin: Instant,
    inbox: Inbox,
    idle: Mutex<Vec<connection::Conn>>,
    /// The server's clock from the responses' `Date` headers.
    clock: Mutex<ServerClock>,
}

impl Shared {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A real-time [`Engine`] over an OpenAI-compatible HTTP server. See the module docs.
pub struct HttpEngine {
    runtime: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    pending: VecDeque<EngineEvent>,
    tasks: HashMap<u64, tokio::task::AbortHandle>,
    /// Bodies of announced requests, encoded ahead ([`Engine::prepare`]).
    prepared: Option<super::prepare::Preparer>,
}

impl std::fmt::Debug for HttpEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEngine")
            .field("target", &self.shared.config.target)
            .field("in_flight", &self.tasks.len())
            .finish()
    }
}

impl HttpEngine {
    /// An engine for `config`; its clock starts now.
    pub fn new(config: HttpConfig) -> Result<Self, HttpError> {
        let target = Target::parse(&config.target)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.worker_threads.max(1))
            .thread_name("servebench-http")
            .enable_all()
            .build()
            .map_err(HttpError::Runtime)?;
        Ok(HttpEngine {
            runtime: Some(runtime),
            shared: Arc::new(Shared {
                target,
                config,
                origin: Instant::now(),
                inbox: Inbox::default(),
                idle: Mutex::new(Vec::new()),
                clock: Mutex::new(ServerClock::default()),
            }),
            pending: VecDeque::new(),
            tasks: HashMap::new(),
            prepared: None,
        })
    }

    /// The wall-clock instant the engine's clock counts from.
    pub fn origin(&self) -> Instant {
        self.shared.origin
    }

    /// Bounds on the server's clock at this engine's zero, from the `Date` headers of the
    /// responses so far ([`ServerClock`]).
    pub fn server_clock(&self) -> ServerClock {
        self.shared.clock.lock().map(|c| *c).unwrap_or_default()
    }

    /// Opens `count` keep-alive connections now, all at once, and keeps them for the
    /// requests to come; returns how many opened (a failure here is not an error: the
    /// request that would have used the connection reports it). At most 4096.
    pub fn preconnect(&self, count: usize) -> usize {
        let Ok(rt) = self.runtime() else {
            return 0;
        };
        let shared = Arc::clone(&self.shared);
        rt.block_on(connection::preconnect(&shared, count.min(MAX_IDLE)))
    }

    /// Waits for a starting server: `GET path` every 50 ms until it answers 200 (a refused
    /// connection or another status is a server still starting); the time it took. An
    /// error names the last answer once `timeout` has passed.
    pub fn wait_healthy(&self, path: &str, timeout: Duration) -> Result<Duration, HttpError> {
        let shared = Arc::clone(&self.shared);
        let rt = self.runtime()?;
        let started = Instant::now();
        rt.block_on(async move {
            loop {
                let last = match admin::get_status(&shared, path).await {
                    Ok(200) => return Ok(started.elapsed()),
                    Ok(status) => format!("HTTP {status}"),
                    Err(e) => e.to_string(),
                };
                if started.elapsed() >= timeout {
                    return Err(HttpError::Request(format!(
                        "GET {path} did not answer 200 within {:.0} s (last: {last})",
                        timeout.as_secs_f64()
                    )));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    }

    /// One eval item's answer: `prompt` as a user message, not streamed, greedy
    /// (`temperature` 0), at most `max_tokens`; the answer's text. Safe to call from
    /// several threads at once.
    pub fn chat_answer(&self, prompt: &str, max_tokens: u64) -> Result<String, HttpError> {
        let shared = Arc::clone(&self.shared);
        let rt = self.runtime()?;
        let limit = shared
            .config
            .request_timeout
            .unwrap_or(Duration::from_secs(600));
        rt.block_on(async move {
            tokio::time::timeout(limit, chat_answer(&shared, prompt, max_tokens))
                .await
                .map_err(|_| HttpError::Request("POST /v1/chat/completions timed out".into()))?
        })
    }

    /// `GET /v1/models`: the ids the server serves (the first is vLLM's default model).
    pub fn list_models(&self) -> Result<Vec<String>, HttpError> {
        self.models_response().map(|v| model_ids(&v))
    }

    /// `GET /v1/models`: the server's answer as received (JSON).
    pub fn models_response(&self) -> Result<Value, HttpError> {
        let shared = Arc::clone(&self.shared);
        let rt = self.runtime()?;
        rt.block_on(async move {
            let fut = models_response(&shared);
            tokio::time::timeout(shared.config.connect_timeout * 3, fut)
                .await
                .map_err(|_| HttpError::Request("GET /v1/models timed out".into()))?
        })
    }

    /// Empties the server's prefix cache: `POST /reset_prefix_cache` (vLLM), then, when the
    /// server has no such route (404/405), `POST /flush_cache` (SGLang). Returns the path
    /// that answered 2xx; any other answer is an error naming both attempts.
    pub fn reset_prefix_cache(&self) -> Result<&'static str, HttpError> {
        let shared = Arc::clone(&self.shared);
        let rt = self.runtime()?;
        rt.block_on(async move {
            let mut tried = Vec::new();
            for path in ["/reset_prefix_cache", "/flush_cache"] {
                let fut = post_empty(&shared, path);
                let status = tokio::time::timeout(shared.config.connect_timeout * 3, fut)
                    .await
                    .map_err(|_| HttpError::Request(format!("POST {path} timed out")))??;
                if (200..300).contains(&status) {
                    return Ok(path);
                }
                tried.push(format!("POST {path}: HTTP {status}"));
                if status != 404 && status != 405 {
                    break;
                }
            }
            Err(HttpError::Request(format!(
                "cannot reset the prefix cache ({})",
                tried.join("; ")
            )))
        })
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime, HttpError> {
        self.runtime
            .as_ref()
            .ok_or_else(|| HttpError::Request("engine shut down".into()))
    }

    /// The JSON body sent for `request` (public so that its shape can be checked).
    pub fn request_body(&self, request: &EngineRequest) -> Value {
        request_body(&self.shared.config, request).0
    }
}

impl Drop for HttpEngine {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Engine for HttpEngine {
    fn now(&self) -> Duration {
        self.shared.now()
    }

    fn submit(&mut self, request: EngineRequest) -> Result<(), EngineError> {
        let id = request.id;
        let shared = Arc::clone(&self.shared);
        let rt = self
            .runtime
            .as_ref()
            .ok_or_else(|| EngineError::Fatal("HTTP engine shut down".into()))?;
        // A body encoded ahead (`prepare`), else the request's task encodes it: a long
        // prompt takes a while to encode, and the driver must not fall behind meanwhile.
        let body = self.prepared.as_ref().and_then(|p| p.take(&request));
        let handle = rt.spawn(run_request(shared, request, body));
        self.tasks.insert(id, handle.abort_handle());
        Ok(())
    }

    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        loop {
            while let Some(ev) = self.pending.pop_front() {
                if let Some(d) = deadline {
                    if ev.at() > d {
                        self.pending.push_front(ev);
                        return Ok(());
                    }
                }
                if !self.tasks.contains_key(&ev.id()) {
                    continue; // cancelled
                }
                let terminal = ev.is_terminal();
                if terminal {
                    self.tasks.remove(&ev.id());
                }
                events.push(ev);
                if terminal {
                    return Ok(());
                }
            }
            // Wait for a request to end (only those wake this thread: chunks wait in the
            // inbox, stamped) or for the deadline; then take everything that arrived.
            let waited = match deadline {
                Some(d) => {
                    let now = self.now();
                    let timeout = d.saturating_sub(now);
                    self.shared.inbox.take(Some(timeout), &mut self.pending)
                }
                None if self.tasks.is_empty() => self
                    .shared
                    .inbox
                    .take(Some(Duration::ZERO), &mut self.pending),
                None => self.shared.inbox.take(None, &mut self.pending),
            };
            if self.pending.is_empty() {
                let reached = deadline.is_some_and(|d| self.now() >= d);
                if reached || deadline.is_none() && self.tasks.is_empty() {
                    return Ok(());
                }
                if !waited {
                    return Err(EngineError::Fatal("event inbox poisoned".into()));
                }
                continue;
            }
            // Tasks push independently: put what has arrived so far in time order.
            self.pending.make_contiguous().sort_by_key(EngineEvent::at);
        }
    }

    fn in_flight(&self) -> usize {
        self.tasks.len()
    }

    /// Encodes the announced requests' bodies on a thread of their own, in the order they
    /// are due and at most 64 MiB ahead of the sends, so that a send at its due time only
    /// takes a connection and writes.
    fn prepare(&mut self, upcoming: &mut dyn Iterator<Item = EngineRequest>) {
        // A previous run's bodies are dropped first (their thread stops).
        self.prepared = None;
        self.prepared = Some(super::prepare::Preparer::start(
            self.shared.config.clone(),
            upcoming.collect(),
            encode_body,
        ));
    }

    fn cancel(&mut self, id: u64) -> bool {
        match self.tasks.remove(&id) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }
}
