//! [`HttpEngine`]: an [`Engine`] that sends each request to an OpenAI-compatible server
//! (`/v1/completions` or `/v1/chat/completions`, `stream: true`) and reports the streamed
//! chunks in real time.
//!
//! The engine owns a tokio runtime. [`Engine::submit`] spawns one task per request; the task
//! stamps [`EngineEvent::Sent`] just before it takes a connection and sends (vLLM's `st`),
//! stamps every body read on arrival (an [`Instant`]-based offset from the engine's origin),
//! parses the SSE events in it and sends [`EngineEvent::Chunk`]s through a channel that
//! [`Engine::advance`] drains while it waits on the wall clock.
//!
//! What counts as a token chunk: a `choices` entry with non-empty `text` (completions) or a
//! `delta` with non-empty `content`, `reasoning` (vLLM ≥ 0.11), `reasoning_content` (SGLang,
//! older vLLM) or `tool_calls`. Role-only and empty chunks do not count. The tokens in a chunk
//! are the increase of `usage.completion_tokens` when the server streams usage on every chunk
//! (vLLM's `continuous_usage_stats`), else 1. HTTP errors, connection failures, streams cut
//! before `[DONE]`, in-stream `error` objects and timeouts become [`EngineEvent::Failed`].

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::{json, Value};

use super::sse::{SseEvent, SseParser};
use super::{Endpoint, HttpError, Target};
use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
use crate::merge::skew::ServerClock;
use crate::record::ErrorKind;

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
}

impl HttpConfig {
    /// Defaults for `target`: completions endpoint, no model/key, 6 h request timeout (vLLM's
    /// aiohttp limit), 10 s connect timeout, continuous usage on, 2 worker threads.
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
        }
    }
}

/// Prefix of the `x-request-id` header sent with each request (followed by the request id),
/// so that server logs and timelines can be joined with the client's records.
pub const REQUEST_ID_PREFIX: &str = "servebench-";

/// Most idle keep-alive connections kept for reuse.
const MAX_IDLE: usize = 4096;
/// Most bytes of an error response body read for its message.
const MAX_ERROR_BODY: usize = 64 << 10;

type Sender = SendRequest<Full<Bytes>>;

/// Where the I/O tasks leave their stamped events. Only terminal events wake the thread
/// waiting in [`Engine::advance`]; chunks wait here (their timestamps are already taken), so
/// the driver thread wakes once per request rather than once per token.
#[derive(Default)]
struct Inbox {
    state: Mutex<InboxState>,
    wake: Condvar,
}

#[derive(Default)]
struct InboxState {
    events: Vec<EngineEvent>,
    terminals: usize,
}

impl Inbox {
    fn push(&self, batch: impl IntoIterator<Item = EngineEvent>) {
        if let Ok(mut st) = self.state.lock() {
            let mut wake = false;
            for ev in batch {
                wake |= ev.is_terminal();
                st.terminals += usize::from(ev.is_terminal());
                st.events.push(ev);
            }
            if wake {
                self.wake.notify_one();
            }
        }
    }

    /// Wait until a terminal event is in (or `timeout`, `None`: no limit), then move every
    /// event into `out`. `false` if the lock is poisoned.
    fn take(&self, timeout: Option<Duration>, out: &mut VecDeque<EngineEvent>) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        let start = Instant::now();
        while st.terminals == 0 {
            match timeout {
                None => match self.wake.wait(st) {
                    Ok(g) => st = g,
                    Err(_) => return false,
                },
                Some(t) => {
                    let left = t.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    match self.wake.wait_timeout(st, left) {
                        Ok((g, _)) => st = g,
                        Err(_) => return false,
                    }
                }
            }
        }
        st.terminals = 0;
        out.extend(st.events.drain(..));
        true
    }
}

struct Shared {
    target: Target,
    config: HttpConfig,
    origin: Instant,
    inbox: Inbox,
    idle: Mutex<Vec<Sender>>,
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
        request_body(&self.shared.config, request)
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
        // The body is serialized in the request's task, not here: a long prompt takes a
        // while to encode, and the driver must not fall behind its schedule meanwhile.
        let handle = rt.spawn(run_request(shared, request));
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

/// A word list for synthetic prompts: common English words, about one token each in
/// BPE vocabularies, and exactly one token each for the example server's word tokenizer.
const WORDS: [&str; 32] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their",
];

/// A deterministic prompt of `tokens` space-separated words, different for each `seed`
/// (so prefix caches do not see identical prompts).
///
/// ```
/// use servebench::http::client::synthetic_prompt;
/// let p = synthetic_prompt(7, 5);
/// assert_eq!(p.split_whitespace().count(), 5);
/// assert_ne!(p, synthetic_prompt(8, 5));
/// ```
pub fn synthetic_prompt(seed: u64, tokens: u64) -> String {
    let mut state = seed ^ 0x5851_f42d_4c95_7f2d;
    let mut out = String::with_capacity(tokens as usize * 4);
    for i in 0..tokens {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[(z % WORDS.len() as u64) as usize]);
    }
    out
}

fn request_body(config: &HttpConfig, request: &EngineRequest) -> Value {
    let prompt = request
        .prompt
        .clone()
        .unwrap_or_else(|| synthetic_prompt(request.id, request.prompt_tokens));
    let mut stream_options = json!({"include_usage": true});
    if config.continuous_usage {
        stream_options["continuous_usage_stats"] = Value::Bool(true);
    }
    let mut body = match config.endpoint {
        Endpoint::Completions => json!({
            "prompt": prompt,
            "max_tokens": request.max_output_tokens,
            "stream": true,
            "stream_options": stream_options,
        }),
        Endpoint::Chat => json!({
            "messages": [{"role": "user", "content": prompt}],
            "max_completion_tokens": request.max_output_tokens,
            "stream": true,
            "stream_options": stream_options,
        }),
    };
    if let Value::Object(map) = &mut body {
        if let Some(model) = &config.model {
            map.insert("model".into(), Value::String(model.clone()));
        }
        if request.ignore_eos {
            map.insert("ignore_eos".into(), Value::Bool(true));
        }
        for (k, v) in &config.extra_body {
            map.insert(k.clone(), v.clone());
        }
    }
    body
}

/// Why a request failed.
struct Failure {
    kind: ErrorKind,
    message: String,
}

fn fail(kind: ErrorKind, message: impl Into<String>) -> Failure {
    Failure {
        kind,
        message: message.into(),
    }
}

async fn run_request(shared: Arc<Shared>, request: EngineRequest) {
    let id = request.id;
    let result = match shared.config.request_timeout {
        Some(limit) => match tokio::time::timeout(limit, stream_request(&shared, request)).await {
            Ok(r) => r,
            Err(_) => Err(fail(
                ErrorKind::Timeout,
                format!("no complete response within {:.3} s", limit.as_secs_f64()),
            )),
        },
        None => stream_request(&shared, request).await,
    };
    let event = match result {
        Ok((at, usage)) => EngineEvent::Finished { id, at, usage },
        Err(f) => EngineEvent::Failed {
            id,
            at: shared.now(),
            kind: f.kind,
            message: f.message,
        },
    };
    shared.inbox.push([event]);
}

async fn connect(shared: &Shared) -> Result<Sender, Failure> {
    let t = &shared.target;
    let tcp = tokio::time::timeout(
        shared.config.connect_timeout,
        tokio::net::TcpStream::connect((t.host.as_str(), t.port)),
    )
    .await
    .map_err(|_| {
        fail(
            ErrorKind::Connect,
            format!("connect to {} timed out", t.authority),
        )
    })?
    .map_err(|e| {
        fail(
            ErrorKind::Connect,
            format!("connect to {}: {e}", t.authority),
        )
    })?;
    let _ = tcp.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| fail(ErrorKind::Connect, format!("HTTP handshake: {e}")))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// An idle pooled connection, or `None`.
async fn pooled(shared: &Shared) -> Option<Sender> {
    loop {
        let candidate = shared.idle.lock().ok()?.pop();
        let mut sender = candidate?;
        if sender.is_closed() {
            continue;
        }
        if sender.ready().await.is_ok() {
            return Some(sender);
        }
    }
}

fn give_back(shared: &Shared, sender: Sender) {
    if sender.is_closed() {
        return;
    }
    if let Ok(mut idle) = shared.idle.lock() {
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }
}

fn build_request(shared: &Shared, id: u64, body: &Bytes) -> Result<Request<Full<Bytes>>, Failure> {
    let t = &shared.target;
    let mut builder = Request::post(format!("{}{}", t.base_path, shared.config.endpoint.path()))
        .header(hyper::header::HOST, t.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "text/event-stream")
        .header("x-request-id", format!("{REQUEST_ID_PREFIX}{id}"));
    if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    builder
        .body(Full::new(body.clone()))
        .map_err(|e| fail(ErrorKind::Other, format!("building the request: {e}")))
}

async fn stream_request(
    shared: &Shared,
    request: EngineRequest,
) -> Result<(Duration, Usage), Failure> {
    let id = request.id;
    // Stamped before the body is encoded, as vLLM takes `st` before aiohttp encodes the
    // payload: the send time is when the client decided to send.
    let sent = shared.now();
    shared.inbox.push([EngineEvent::Sent { id, at: sent }]);
    let body = Bytes::from(request_body(&shared.config, &request).to_string());
    drop(request);
    // A pooled connection may have been closed by the server meanwhile: retry once on a new one.
    let (mut sender, reused) = match pooled(shared).await {
        Some(s) => (s, true),
        None => (connect(shared).await?, false),
    };
    let response = match sender.send_request(build_request(shared, id, &body)?).await {
        Ok(r) => r,
        Err(e) if reused && (e.is_canceled() || e.is_closed() || e.is_incomplete_message()) => {
            sender = connect(shared).await?;
            sender
                .send_request(build_request(shared, id, &body)?)
                .await
                .map_err(|e| fail(ErrorKind::Connect, format!("sending the request: {e}")))?
        }
        Err(e) => {
            return Err(fail(
                ErrorKind::Connect,
                format!("sending the request: {e}"),
            ))
        }
    };
    let head = shared.now();
    if let Some(date) = response.headers().get(hyper::header::DATE) {
        if let (Ok(v), Ok(mut clock)) = (date.to_str(), shared.clock.lock()) {
            clock.observe_header(v, sent, head);
        }
    }
    let status = response.status();
    let mut body = response.into_body();
    if !status.is_success() {
        let message = error_body_message(&mut body).await;
        return Err(fail(
            ErrorKind::HttpStatus,
            status_message(status, &message),
        ));
    }
    let mut parser = SseParser::new();
    let mut events: Vec<SseEvent> = Vec::new();
    let mut state = StreamState::default();
    let mut done_at = None;
    let mut chunks = Vec::new();
    loop {
        match body.frame().await {
            None => break,
            Some(Err(e)) => {
                return Err(fail(
                    ErrorKind::StreamCut,
                    format!("stream cut after {} token chunks: {e}", state.token_chunks),
                ))
            }
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue; // trailers
                };
                let at = shared.now();
                parser
                    .feed(&data, &mut events)
                    .map_err(|e| fail(ErrorKind::Protocol, e.to_string()))?;
                let mut failure = None;
                for ev in events.drain(..) {
                    if done_at.is_some() || failure.is_some() {
                        continue;
                    }
                    if ev.is_done() {
                        done_at = Some(at);
                        continue;
                    }
                    match state.on_data(&ev.data) {
                        Ok(Some(tokens)) => chunks.push(EngineEvent::Chunk { id, at, tokens }),
                        Ok(None) => {}
                        Err(f) => failure = Some(f),
                    }
                }
                if !chunks.is_empty() {
                    shared.inbox.push(chunks.drain(..));
                }
                if let Some(f) = failure {
                    return Err(f);
                }
            }
        }
    }
    let Some(done_at) = done_at else {
        return Err(fail(
            ErrorKind::StreamCut,
            format!(
                "stream ended before [DONE] after {} token chunks",
                state.token_chunks
            ),
        ));
    };
    give_back(shared, sender);
    if state.token_chunks == 0 {
        return Err(fail(
            ErrorKind::Protocol,
            "never received a token chunk (no text, content or reasoning delta)",
        ));
    }
    Ok((
        done_at,
        Usage {
            prompt_tokens: state.prompt_tokens,
            completion_tokens: state.completion_tokens,
        },
    ))
}

fn status_message(status: StatusCode, message: &str) -> String {
    let reason = status.canonical_reason().unwrap_or("");
    if message.is_empty() {
        format!("HTTP {} {reason}", status.as_u16())
    } else {
        format!("HTTP {} {reason}: {message}", status.as_u16())
    }
}

async fn error_body_message(body: &mut hyper::body::Incoming) -> String {
    let mut buf = Vec::new();
    while buf.len() < MAX_ERROR_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(d) = frame.into_data() {
                    buf.extend_from_slice(&d);
                }
            }
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&buf);
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => error_message(&v).unwrap_or_else(|| truncate(&text)),
        Err(_) => truncate(text.trim()),
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(300).collect()
}

/// The message of an OpenAI-style error object (`{"error": {"message": …}}`, or vLLM's
/// older flat `{"object": "error", "message": …}`), or `None` if `v` is not an error.
fn error_message(v: &Value) -> Option<String> {
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

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(default, borrow)]
    choices: Vec<WireChoice<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
    #[serde(default, borrow)]
    object: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireChoice<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    delta: Option<WireDelta<'a>>,
}

#[derive(Deserialize)]
struct WireDelta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

fn non_empty(s: &Option<Cow<'_, str>>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

impl WireChoice<'_> {
    fn carries_output(&self) -> bool {
        non_empty(&self.text)
            || self.delta.as_ref().is_some_and(|d| {
                non_empty(&d.content)
                    || non_empty(&d.reasoning)
                    || non_empty(&d.reasoning_content)
                    || d.tool_calls.as_ref().is_some_and(|t| !t.is_empty())
            })
    }
}

/// Per-stream interpretation of the SSE `data` payloads.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StreamState {
    /// Token chunks seen so far.
    pub token_chunks: u64,
    /// Output tokens attributed to chunks so far.
    pub counted_tokens: u64,
    /// Latest `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// Latest `usage.completion_tokens`.
    pub completion_tokens: Option<u64>,
}

impl StreamState {
    /// Interpret one SSE `data` payload (not `[DONE]`): `Ok(Some(tokens))` for a token chunk,
    /// `Ok(None)` for anything else (role-only, usage-only, empty), `Err` for an in-stream
    /// error object or a payload that is not JSON.
    fn on_data(&mut self, data: &str) -> Result<Option<u32>, Failure> {
        let msg: WireMessage = serde_json::from_str(data).map_err(|e| {
            fail(
                ErrorKind::Protocol,
                format!("bad SSE data ({e}): {}", truncate(data)),
            )
        })?;
        if msg.error.is_some() || msg.object.as_deref() == Some("error") {
            // Rare: parse again as a tree to find the message (`error: null` is no error).
            let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
            if let Some(message) = error_message(&v) {
                return Err(fail(ErrorKind::ServerError, message));
            }
        }
        let is_token = msg.choices.iter().any(WireChoice::carries_output);
        let mut tokens = None;
        if is_token {
            self.token_chunks += 1;
            let n = match msg.usage.and_then(|u| u.completion_tokens) {
                Some(cum) => cum.saturating_sub(self.counted_tokens).max(1),
                None => 1,
            };
            // A hostile or broken server may claim any count: a chunk carries at most
            // u32::MAX tokens, and the running count is what the chunks carried.
            let t = u32::try_from(n).unwrap_or(u32::MAX);
            self.counted_tokens = self.counted_tokens.saturating_add(u64::from(t));
            tokens = Some(t);
        }
        if let Some(u) = msg.usage {
            if u.prompt_tokens.is_some() {
                self.prompt_tokens = u.prompt_tokens;
            }
            if u.completion_tokens.is_some() {
                self.completion_tokens = u.completion_tokens;
            }
        }
        Ok(tokens)
    }

    /// Like the private parser the engine uses, with the failure as `(kind, message)`:
    /// exposed for tests and for tools that replay captured streams.
    ///
    /// ```
    /// use servebench::http::client::StreamState;
    /// let mut s = StreamState::default();
    /// // vLLM >= 0.11 streams a reasoning model's thinking as `delta.reasoning`.
    /// let role = r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#;
    /// let think = r#"{"choices":[{"index":0,"delta":{"reasoning":"Hmm"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#;
    /// assert_eq!(s.interpret(role).unwrap(), None);
    /// assert_eq!(s.interpret(think).unwrap(), Some(2));
    /// assert_eq!(s.completion_tokens, Some(2));
    /// ```
    pub fn interpret(&mut self, data: &str) -> Result<Option<u32>, (ErrorKind, String)> {
        self.on_data(data).map_err(|f| (f.kind, f.message))
    }
}

/// `POST path` with an empty body; the status.
async fn post_empty(shared: &Shared, path: &str) -> Result<u16, HttpError> {
    let mut sender = connect(shared)
        .await
        .map_err(|f| HttpError::Request(f.message))?;
    let t = &shared.target;
    let mut builder = Request::post(format!("{}{path}", t.base_path))
        .header(hyper::header::HOST, t.authority.as_str());
    if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    let req = builder
        .body(Full::new(Bytes::new()))
        .map_err(|e| HttpError::Request(e.to_string()))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| HttpError::Request(format!("POST {path}: {e}")))?;
    let status = resp.status().as_u16();
    // Drain the (small) body so the connection closes cleanly.
    let _ = http_body_util::Limited::new(resp.into_body(), 1 << 20)
        .collect()
        .await;
    Ok(status)
}

/// The model ids of a `/v1/models` answer (`data[].id`), in order.
///
/// ```
/// use servebench::http::client::model_ids;
/// let v = serde_json::json!({"object": "list", "data": [{"id": "a"}, {"id": "b"}]});
/// assert_eq!(model_ids(&v), ["a", "b"]);
/// ```
pub fn model_ids(v: &Value) -> Vec<String> {
    v.get("data")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn models_response(shared: &Shared) -> Result<Value, HttpError> {
    let mut sender = connect(shared)
        .await
        .map_err(|f| HttpError::Request(f.message))?;
    let t = &shared.target;
    let mut builder = Request::get(format!("{}/v1/models", t.base_path))
        .header(hyper::header::HOST, t.authority.as_str());
    if let Some(key) = &shared.config.api_key {
        builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    let req = builder
        .body(Full::new(Bytes::new()))
        .map_err(|e| HttpError::Request(e.to_string()))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| HttpError::Request(format!("GET /v1/models: {e}")))?;
    let status = resp.status();
    let bytes = http_body_util::Limited::new(resp.into_body(), 4 << 20)
        .collect()
        .await
        .map_err(|e| HttpError::Request(format!("GET /v1/models: {e}")))?
        .to_bytes();
    if !status.is_success() {
        return Err(HttpError::Request(format!(
            "GET /v1/models: HTTP {}",
            status.as_u16()
        )));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| HttpError::Request(format!("GET /v1/models: bad JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interpret_all(lines: &[&str]) -> (StreamState, Vec<Option<u32>>) {
        let mut s = StreamState::default();
        let out = lines.iter().map(|l| s.interpret(l).unwrap()).collect();
        (s, out)
    }

    #[test]
    fn every_delta_kind_counts_and_role_only_does_not() {
        let (s, out) = interpret_all(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":"a"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"b"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"c","reasoning":null}}]}"#,
            r#"{"choices":[{"index":0,"text":" d"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
            r#"{"choices":[{"index":0,"text":"","finish_reason":"length"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":5}}"#,
        ]);
        assert_eq!(
            out,
            [
                None,
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                Some(1),
                None,
                None,
                None
            ]
        );
        assert_eq!(s.token_chunks, 5);
        assert_eq!(s.prompt_tokens, Some(9));
        assert_eq!(s.completion_tokens, Some(5));
    }

    #[test]
    fn continuous_usage_gives_tokens_per_chunk() {
        // A speculative-decoding server: 1, then 3, then 2 tokens per chunk.
        let (s, out) = interpret_all(&[
            r#"{"choices":[{"text":"a"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}"#,
            r#"{"choices":[{"text":"bcd"}],"usage":{"prompt_tokens":4,"completion_tokens":4,"total_tokens":8}}"#,
            r#"{"choices":[{"text":"ef"}],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}"#,
        ]);
        assert_eq!(out, [Some(1), Some(3), Some(2), None]);
        assert_eq!(s.counted_tokens, 6);
    }

    #[test]
    fn hostile_usage_counts_are_bounded_not_a_panic() {
        let max = u64::MAX;
        let lines = [
            r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":5}}"#.to_string(),
            // Decreasing usage: the chunk still counts one token.
            r#"{"choices":[{"text":"b"}],"usage":{"completion_tokens":3}}"#.to_string(),
            // A jump to 10^15, then to u64::MAX, then a chunk without usage.
            r#"{"choices":[{"text":"c"}],"usage":{"completion_tokens":1000000000000000}}"#
                .to_string(),
            format!(r#"{{"choices":[{{"text":"d"}}],"usage":{{"completion_tokens":{max}}}}}"#),
            r#"{"choices":[{"text":"e"}]}"#.to_string(),
            format!(r#"{{"choices":[{{"text":"f"}}],"usage":{{"completion_tokens":{max}}}}}"#),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (s, out) = interpret_all(&refs);
        let m = Some(u32::MAX);
        assert_eq!(out, [Some(5), Some(1), m, m, Some(1), m]);
        let sum: u64 = out.iter().flatten().map(|&t| u64::from(t)).sum();
        assert_eq!(s.counted_tokens, sum);
        assert_eq!(s.completion_tokens, Some(max));
        assert_eq!(s.token_chunks, 6);
    }

    #[test]
    fn tokens_without_text_are_carried_into_the_next_chunk() {
        // A token whose text is still being detokenized arrives as an empty chunk.
        let (_, out) = interpret_all(&[
            r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}"#,
            r#"{"choices":[{"text":""}],"usage":{"completion_tokens":2}}"#,
            r#"{"choices":[{"text":"é"}],"usage":{"completion_tokens":3}}"#,
        ]);
        assert_eq!(out, [Some(1), None, Some(2)]);
    }

    #[test]
    fn in_stream_errors_and_garbage_fail() {
        let mut s = StreamState::default();
        let e = s
            .interpret(r#"{"error":{"message":"boom","type":"InternalServerError","code":500}}"#)
            .unwrap_err();
        assert_eq!(e, (ErrorKind::ServerError, "boom".to_string()));
        let e = s
            .interpret(r#"{"object":"error","message":"too long","type":"BadRequestError"}"#)
            .unwrap_err();
        assert_eq!(e, (ErrorKind::ServerError, "too long".to_string()));
        let e = s.interpret("not json").unwrap_err();
        assert_eq!(e.0, ErrorKind::Protocol);
        // `error: null` is not an error
        assert_eq!(
            s.interpret(r#"{"choices":[{"text":"x"}],"error":null}"#)
                .unwrap(),
            Some(1)
        );
    }

    #[test]
    fn request_bodies_match_the_openai_shapes() {
        let mut cfg = HttpConfig::new("http://127.0.0.1:1");
        cfg.model = Some("m".into());
        let req = EngineRequest {
            id: 3,
            prompt_tokens: 4,
            prompt: None,
            max_output_tokens: 7,
            ignore_eos: true,
            arrival: Duration::ZERO,
            shared_prefix_tokens: 0,
        };
        let b = request_body(&cfg, &req);
        assert_eq!(b["model"], "m");
        assert_eq!(b["max_tokens"], 7);
        assert_eq!(b["stream"], true);
        assert_eq!(b["ignore_eos"], true);
        assert_eq!(b["stream_options"]["include_usage"], true);
        assert_eq!(b["stream_options"]["continuous_usage_stats"], true);
        assert_eq!(b["prompt"].as_str().unwrap().split(' ').count(), 4);
        cfg.endpoint = Endpoint::Chat;
        cfg.continuous_usage = false;
        let b = request_body(
            &cfg,
            &EngineRequest {
                ignore_eos: false,
                prompt: Some("hi there".into()),
                ..req
            },
        );
        assert_eq!(b["max_completion_tokens"], 7);
        assert_eq!(b["messages"][0]["content"], "hi there");
        assert_eq!(b["messages"][0]["role"], "user");
        assert!(b.get("ignore_eos").is_none());
        assert!(b["stream_options"].get("continuous_usage_stats").is_none());
    }
}
