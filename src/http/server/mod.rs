//! An OpenAI-compatible streaming server over hyper that serves any virtual-time
//! [`Engine`] in real time: virtual time = wall time elapsed × `speed`.
//!
//! Routes: `GET /health`, `GET /metrics` (the [`ServeStats`] counters in Prometheus' text
//! format, then the engine's own [`Engine::metrics_text`]: the simulator's are vLLM's), `GET /v1/models`, `POST /v1/completions`,
//! `POST /v1/chat/completions` (streaming SSE in OpenAI's chunk format with
//! `stream_options.include_usage` / `continuous_usage_stats`, or one JSON response with
//! `stream: false`). Malformed requests get a 4xx JSON error
//! `{"error": {"message": …, "type": …, "param": null, "code": …}}`; with
//! [`ServeOptions::api_key`] set, a `/v1/…` request without `Authorization: Bearer KEY`
//! gets a 401 of that shape.
//!
//! The engine runs on its own thread. It wakes every `tick` of wall time while requests are in
//! flight (and sleeps while idle), advances the engine to the virtual "now" and hands each
//! request's chunks to that request's bounded channel; the HTTP tasks format the SSE bytes.
//! When a client reads slower than the engine produces, the engine thread coalesces the
//! waiting tokens into one chunk instead of queueing, so memory per stream is bounded. A
//! client that disconnects drops its response body, which cancels the request in the engine
//! ([`Engine::cancel`]) and frees its slot.
//!
//! The server has no tokenizer: a prompt's length is
//! [`crate::driver::workload::approx_tokens`] of its text (the estimate the
//! workload builder uses, so servebench's own prompts count exactly; one token per common
//! short word) or the length of a token-id array; every generated token is one short word.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::sync::mpsc as tokio_mpsc;

use super::Endpoint;
use crate::driver::workload::approx_tokens;
use crate::engine::{Engine, EngineEvent, EngineRequest, Usage};
use crate::record::{Chunk, ErrorKind, Outcome, RequestRecord};

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
    fn key(self) -> &'static str {
        match self {
            DeltaField::Content => "content",
            DeltaField::Reasoning => "reasoning",
            DeltaField::ReasoningContent => "reasoning_content",
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

/// Server settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeOptions {
    /// The served model name (`/v1/models`, the `model` of every chunk). Requests naming
    /// another model get 404.
    pub model: String,
    /// Chat delta field for the generated text.
    pub delta_field: DeltaField,
    /// Fault injection, for tests.
    pub fault: Option<Fault>,
    /// Wall-clock pacing granularity of the engine thread while requests are in flight.
    pub tick: Duration,
    /// Capacity of each stream's channel (items, not bytes).
    pub stream_buffer: usize,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// `max_tokens` when a request gives none.
    pub default_max_tokens: u64,
    /// Reject requests with prompt + max_tokens above this (vLLM's 400), if set.
    pub max_model_len: Option<u64>,
    /// Keep every finished request's virtual-time record ([`ServerHandle::timeline`]).
    pub record_timeline: bool,
    /// Tokio worker threads for the HTTP side.
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
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            model: "servebench-sim".into(),
            delta_field: DeltaField::Content,
            fault: None,
            tick: Duration::from_micros(500),
            stream_buffer: 32,
            max_body_bytes: 8 << 20,
            default_max_tokens: 16,
            max_model_len: None,
            record_timeline: false,
            worker_threads: 2,
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(30),
            api_key: None,
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

/// Counters of what the server did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Valid generation requests accepted (including fault-injected ones).
    pub requests: u64,
    /// Requests answered with a 4xx error.
    pub rejected: u64,
    /// Faults injected.
    pub injected_faults: u64,
    /// Requests the engine finished (and whose end was handed to the client).
    pub completed: u64,
    /// Requests the engine failed.
    pub failed: u64,
    /// Requests cancelled because the client went away (or a fault cut them).
    pub cancelled: u64,
    /// Token-carrying SSE chunks written (role-only, finish, usage and `[DONE]` not counted).
    pub token_chunks_sent: u64,
    /// Tokens in those chunks.
    pub tokens_sent: u64,
    /// Streams currently open.
    pub open_streams: u64,
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    rejected: AtomicU64,
    injected_faults: AtomicU64,
    completed: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
    token_chunks_sent: AtomicU64,
    tokens_sent: AtomicU64,
    open_streams: AtomicU64,
}

fn inc(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    fn snapshot(&self) -> ServeStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ServeStats {
            requests: g(&self.requests),
            rejected: g(&self.rejected),
            injected_faults: g(&self.injected_faults),
            completed: g(&self.completed),
            failed: g(&self.failed),
            cancelled: g(&self.cancelled),
            token_chunks_sent: g(&self.token_chunks_sent),
            tokens_sent: g(&self.tokens_sent),
            open_streams: g(&self.open_streams),
        }
    }
}

/// One served request as the engine saw it, in virtual time.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedRequest {
    /// The client's `x-request-id` header, if it sent one.
    pub request_id: Option<String>,
    /// The response's `id` (`cmpl-N` / `chatcmpl-N`), which every chunk carries.
    pub response_id: String,
    /// Wall time since [`ServerHandle::origin`] at which the request's head reached the
    /// server's handler (before its body was read and parsed).
    pub received_wall: Duration,
    /// Wall time since [`ServerHandle::origin`] at which the engine thread handed the first
    /// token chunk to the request's HTTP task (its virtual time is `record.chunks[0].at`;
    /// the engine thread wakes every `tick`, so this is up to a tick and its wake-up later).
    pub first_release_wall: Option<Duration>,
    /// The engine's timeline: `sent_at` is the submission time, chunks and end as the engine
    /// reported them (virtual time, offsets from the engine's clock at server start).
    pub record: RequestRecord,
}

/// How a stream ended, as the engine reported it.
#[derive(Debug)]
enum End {
    Finished(Usage),
    Failed { kind: ErrorKind, message: String },
}

/// What the engine thread hands to a request's HTTP task.
#[derive(Debug)]
struct Item {
    tokens: u32,
    end: Option<End>,
}

enum Control {
    Submit {
        request: EngineRequest,
        tx: tokio_mpsc::Sender<Item>,
        tag: Option<String>,
        response_id: String,
        received: Instant,
    },
    Cancel(u64),
    /// `POST /reset_prefix_cache` (vLLM) or `/flush_cache` (SGLang).
    ResetPrefixCache(tokio::sync::oneshot::Sender<Option<bool>>),
    /// `GET /metrics`: the engine's own metrics text, at the current virtual time.
    Metrics(tokio::sync::oneshot::Sender<Option<String>>),
    Shutdown,
}

/// Most undelivered chunks kept per stream; more merge into the last one (bounded memory
/// when a client reads slower than the engine generates).
const MAX_PENDING_CHUNKS: usize = 64;

/// Most tokens one request may ask for (`max_tokens`), whatever `max_model_len` says: a
/// `stream: false` answer holds its whole text in memory, so a larger request gets a 400.
pub const MAX_COMPLETION_TOKENS: u64 = 1 << 20;

/// A running server. Dropping it (or [`ServerHandle::shutdown`]) stops it.
pub struct ServerHandle {
    addr: SocketAddr,
    origin: Instant,
    speed: f64,
    counters: Arc<Counters>,
    timeline: Arc<Mutex<Vec<ServedRequest>>>,
    ctrl: std_mpsc::Sender<Control>,
    runtime: Option<tokio::runtime::Runtime>,
    engine_thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("addr", &self.addr)
            .field("speed", &self.speed)
            .finish()
    }
}

impl ServerHandle {
    /// The address the server listens on (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The wall-clock instant that virtual time counts from (virtual time 0 = the engine's
    /// clock at start).
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// The speed factor (virtual seconds per wall second).
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Counters so far.
    pub fn stats(&self) -> ServeStats {
        self.counters.snapshot()
    }

    /// Finished requests' virtual-time records (empty unless
    /// [`ServeOptions::record_timeline`]).
    pub fn timeline(&self) -> Vec<ServedRequest> {
        self.timeline.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Block until the server stops (it runs until the process ends or the handle is shut
    /// down from another thread).
    pub fn wait(mut self) {
        if let Some(t) = self.engine_thread.take() {
            let _ = t.join();
        }
    }

    /// Stop accepting, drop open streams and stop the engine thread.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let _ = self.ctrl.send(Control::Shutdown);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
        if let Some(t) = self.engine_thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serve `engine` on `addr` at `speed` and block forever (see [`spawn`]).
pub fn serve<E: Engine + Send + 'static>(
    engine: E,
    addr: SocketAddr,
    speed: f64,
    options: ServeOptions,
) -> Result<(), ServeError> {
    spawn(engine, addr, speed, options)?.wait();
    Ok(())
}

/// Start serving `engine` on `addr` (port 0 picks a free port) at `speed` virtual seconds per
/// wall second, in background threads; returns once the socket is bound.
pub fn spawn<E: Engine + Send + 'static>(
    engine: E,
    addr: SocketAddr,
    speed: f64,
    options: ServeOptions,
) -> Result<ServerHandle, ServeError> {
    if !(speed.is_finite() && speed > 0.0) {
        return Err(ServeError::BadSpeed(speed));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.worker_threads.max(1))
        .thread_name("servebench-serve")
        .enable_all()
        .build()
        .map_err(ServeError::Setup)?;
    let listener = {
        let _guard = runtime.enter();
        listen(addr, options.max_connections)?
    };
    let local = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let counters = Arc::new(Counters::default());
    let timeline = Arc::new(Mutex::new(Vec::new()));
    let (ctrl_tx, ctrl_rx) = std_mpsc::channel();
    let origin = Instant::now();
    let engine_thread = {
        let counters = Arc::clone(&counters);
        let timeline = options.record_timeline.then(|| Arc::clone(&timeline));
        let tick = options.tick;
        std::thread::Builder::new()
            .name("servebench-engine".into())
            .spawn(move || {
                EngineLoop {
                    engine,
                    origin,
                    speed,
                    slots: HashMap::new(),
                    dirty: Vec::new(),
                    counters,
                    timeline,
                    dead: None,
                }
                .run(ctrl_rx, tick)
            })
            .map_err(ServeError::Setup)?
    };
    let created = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let ctx_timeline = options.record_timeline.then(|| Arc::clone(&timeline));
    let ctx = Arc::new(Ctx {
        model_json: Value::String(options.model.clone()).to_string(),
        options,
        ctrl: ctrl_tx.clone(),
        next_id: AtomicU64::new(0),
        counter: AtomicU64::new(0),
        counters: Arc::clone(&counters),
        created,
        timeline: ctx_timeline,
        origin,
        speed,
    });
    runtime.spawn(accept_loop(listener, ctx));
    Ok(ServerHandle {
        addr: local,
        origin,
        speed,
        counters,
        timeline,
        ctrl: ctrl_tx,
        runtime: Some(runtime),
        engine_thread: Some(engine_thread),
    })
}

/// Bind `addr` with a listen backlog of `max_connections` (the kernel caps it at
/// `net.core.somaxconn`, 4096 by default on Linux ≥ 5.4). With the usual backlog of 128, a
/// burst of more connections than that overflows the SYN/accept queue and the surplus
/// clients wait for a SYN retransmit (~1 s): a delay of the server, not of the engine.
fn listen(addr: SocketAddr, max_connections: usize) -> Result<tokio::net::TcpListener, ServeError> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(ServeError::Setup)?;
    #[cfg(unix)]
    socket.set_reuseaddr(true).map_err(ServeError::Setup)?;
    socket
        .bind(addr)
        .map_err(|source| ServeError::Bind { addr, source })?;
    let backlog = u32::try_from(max_connections.max(128)).unwrap_or(u32::MAX);
    socket
        .listen(backlog)
        .map_err(|source| ServeError::Bind { addr, source })
}

// ---------------------------------------------------------------------------------------------
// The engine thread.

struct Slot {
    tx: tokio_mpsc::Sender<Item>,
    /// Chunks not yet handed over (bounded: beyond [`MAX_PENDING_CHUNKS`] they merge).
    pending: std::collections::VecDeque<u32>,
    end: Option<End>,
    dirty: bool,
    tag: Option<String>,
    response_id: String,
    received: Instant,
    /// When the engine thread handed the first token chunk to the HTTP task.
    first_released: Option<Instant>,
    record: Option<RequestRecord>,
}

struct EngineLoop<E> {
    engine: E,
    origin: Instant,
    speed: f64,
    slots: HashMap<u64, Slot>,
    dirty: Vec<u64>,
    counters: Arc<Counters>,
    timeline: Option<Arc<Mutex<Vec<ServedRequest>>>>,
    dead: Option<String>,
}

impl<E: Engine> EngineLoop<E> {
    fn virtual_now(&self) -> Duration {
        let secs = self.origin.elapsed().as_secs_f64() * self.speed;
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
    }

    fn run(mut self, ctrl: std_mpsc::Receiver<Control>, tick: Duration) {
        let mut msgs = Vec::new();
        let mut events = Vec::new();
        loop {
            // Open streams keep the clock ticking even when the engine reports nothing in
            // flight (a virtual engine may have computed events it has not delivered yet).
            let busy = self.engine.in_flight() > 0 || !self.slots.is_empty();
            let first = if busy {
                match ctrl.recv_timeout(tick) {
                    Ok(m) => Some(m),
                    Err(std_mpsc::RecvTimeoutError::Timeout) => None,
                    Err(std_mpsc::RecvTimeoutError::Disconnected) => return,
                }
            } else {
                match ctrl.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return,
                }
            };
            msgs.extend(first);
            while let Ok(m) = ctrl.try_recv() {
                msgs.push(m);
            }
            let target = self.virtual_now();
            self.step_to(target, &mut events);
            for m in msgs.drain(..) {
                match m {
                    Control::Shutdown => return,
                    Control::ResetPrefixCache(tx) => {
                        let _ = tx.send(self.engine.reset_prefix_cache());
                    }
                    Control::Metrics(tx) => {
                        let _ = tx.send(self.engine.metrics_text());
                    }
                    Control::Submit {
                        mut request,
                        tx,
                        tag,
                        response_id,
                        received,
                    } => {
                        if let Some(reason) = &self.dead {
                            let _ = tx.try_send(Item {
                                tokens: 0,
                                end: Some(End::Failed {
                                    kind: ErrorKind::Other,
                                    message: reason.clone(),
                                }),
                            });
                            continue;
                        }
                        request.arrival = self.engine.now();
                        let id = request.id;
                        let record = self.timeline.as_ref().map(|_| {
                            let mut r = RequestRecord::new(id, request.arrival);
                            r.prompt_tokens = Some(request.prompt_tokens);
                            r
                        });
                        match self.engine.submit(request) {
                            Ok(()) => {
                                self.slots.insert(
                                    id,
                                    Slot {
                                        tx,
                                        pending: std::collections::VecDeque::new(),
                                        end: None,
                                        dirty: false,
                                        tag,
                                        response_id,
                                        received,
                                        first_released: None,
                                        record,
                                    },
                                );
                            }
                            Err(e) => self.die(e.to_string(), Some(tx)),
                        }
                    }
                    Control::Cancel(id) => {
                        if let Some(slot) = self.slots.remove(&id) {
                            self.engine.cancel(id);
                            inc(&self.counters.cancelled, 1);
                            self.finish_record(slot, false, "client disconnected");
                        }
                    }
                }
            }
            self.flush();
        }
    }

    /// The engine failed: fail every open stream and every later request.
    fn die(&mut self, reason: String, extra: Option<tokio_mpsc::Sender<Item>>) {
        let reason = format!("engine failure: {reason}");
        for (_, slot) in self.slots.drain() {
            let _ = slot.tx.try_send(Item {
                tokens: 0,
                end: Some(End::Failed {
                    kind: ErrorKind::Other,
                    message: reason.clone(),
                }),
            });
        }
        if let Some(tx) = extra {
            let _ = tx.try_send(Item {
                tokens: 0,
                end: Some(End::Failed {
                    kind: ErrorKind::Other,
                    message: reason.clone(),
                }),
            });
        }
        self.dirty.clear();
        self.dead = Some(reason);
    }

    fn step_to(&mut self, target: Duration, events: &mut Vec<EngineEvent>) {
        if self.dead.is_some() {
            return;
        }
        while self.engine.now() < target {
            let before = self.engine.now();
            events.clear();
            if let Err(e) = self.engine.advance(Some(target), events) {
                self.die(e.to_string(), None);
                return;
            }
            let progressed = !events.is_empty() || self.engine.now() > before;
            for ev in events.drain(..) {
                self.dispatch(ev);
            }
            if !progressed {
                break; // an engine that cannot move its clock: try again next tick
            }
        }
    }

    fn dispatch(&mut self, ev: EngineEvent) {
        let id = ev.id();
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        match ev {
            EngineEvent::Sent { .. } => return,
            EngineEvent::Chunk { at, tokens, .. } => {
                if slot.pending.len() < MAX_PENDING_CHUNKS {
                    slot.pending.push_back(tokens);
                } else if let Some(last) = slot.pending.back_mut() {
                    *last = last.saturating_add(tokens);
                }
                if let Some(r) = &mut slot.record {
                    r.chunks.push(Chunk { at, tokens });
                }
            }
            EngineEvent::Finished { at, usage, .. } => {
                slot.end = Some(End::Finished(usage));
                if let Some(r) = &mut slot.record {
                    r.ended_at = Some(at);
                    r.usage_prompt_tokens = usage.prompt_tokens;
                    r.usage_output_tokens = usage.completion_tokens;
                }
            }
            EngineEvent::Failed {
                at, kind, message, ..
            } => {
                if let Some(r) = &mut slot.record {
                    r.ended_at = Some(at);
                    r.outcome = Outcome::Error {
                        kind,
                        message: message.clone(),
                    };
                }
                slot.end = Some(End::Failed { kind, message });
            }
        }
        if !slot.dirty {
            slot.dirty = true;
            self.dirty.push(id);
        }
    }

    /// Hand pending chunks/ends to the HTTP tasks, one item per engine chunk (the end rides
    /// on the last one); what does not fit in the channel waits for the next tick.
    fn flush(&mut self) {
        let ids = std::mem::take(&mut self.dirty);
        for id in ids {
            let Some(slot) = self.slots.get_mut(&id) else {
                continue;
            };
            let mut outcome = Ok(false);
            while !slot.pending.is_empty() || slot.end.is_some() {
                let tokens = slot.pending.front().copied().unwrap_or(0);
                let end = if slot.pending.len() <= 1 {
                    slot.end.take()
                } else {
                    None
                };
                let ended = end.is_some();
                match slot.tx.try_send(Item { tokens, end }) {
                    Ok(()) => {
                        if tokens > 0 && slot.first_released.is_none() {
                            slot.first_released = Some(Instant::now());
                        }
                        slot.pending.pop_front();
                        if ended {
                            outcome = Ok(true);
                            break;
                        }
                    }
                    Err(tokio_mpsc::error::TrySendError::Full(item)) => {
                        if item.end.is_some() {
                            slot.end = item.end;
                        }
                        outcome = Err(true);
                        break;
                    }
                    Err(tokio_mpsc::error::TrySendError::Closed(_)) => {
                        outcome = Err(false);
                        break;
                    }
                }
            }
            match outcome {
                Ok(false) => slot.dirty = false,
                Ok(true) => {
                    if let Some(slot) = self.slots.remove(&id) {
                        self.finish_record(slot, true, "");
                    }
                }
                Err(true) => self.dirty.push(id), // channel full: retry next tick
                Err(false) => {
                    // The HTTP task is gone: the client disconnected.
                    if let Some(slot) = self.slots.remove(&id) {
                        self.engine.cancel(id);
                        inc(&self.counters.cancelled, 1);
                        self.finish_record(slot, false, "client disconnected");
                    }
                }
            }
        }
    }

    /// Keep (with `record_timeline`) a request that left the engine. `delivered`: its end was
    /// handed to the client.
    fn finish_record(&mut self, slot: Slot, delivered: bool, reason: &str) {
        let mut record = slot.record;
        if let Some(r) = &mut record {
            if !delivered {
                r.outcome = Outcome::Incomplete {
                    reason: reason.to_string(),
                };
            }
        }
        if let (Some(timeline), Some(record)) = (&self.timeline, record) {
            if let Ok(mut t) = timeline.lock() {
                t.push(ServedRequest {
                    request_id: slot.tag,
                    response_id: slot.response_id,
                    received_wall: slot.received.saturating_duration_since(self.origin),
                    first_release_wall: slot
                        .first_released
                        .map(|t| t.saturating_duration_since(self.origin)),
                    record,
                });
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The HTTP side.

struct Ctx {
    options: ServeOptions,
    model_json: String,
    ctrl: std_mpsc::Sender<Control>,
    next_id: AtomicU64,
    counter: AtomicU64,
    counters: Arc<Counters>,
    created: u64,
    /// The finished requests, for `GET /timeline` (with `record_timeline`).
    timeline: Option<Arc<Mutex<Vec<ServedRequest>>>>,
    origin: Instant,
    speed: f64,
}

impl Ctx {
    fn send(&self, c: Control) -> bool {
        self.ctrl.send(c).is_ok()
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, ctx: Arc<Ctx>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(
        ctx.options
            .max_connections
            .clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
    ));
    loop {
        // Take a connection slot before accepting: at the cap, clients wait in the backlog.
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(_) => {
                // Usually out of file descriptors: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let ctx = Arc::clone(&ctx);
        let header_timeout = ctx.options.header_read_timeout;
        tokio::spawn(async move {
            let _slot = slot;
            let svc = hyper::service::service_fn(move |req| {
                let ctx = Arc::clone(&ctx);
                async move { Ok::<_, Infallible>(handle(req, ctx).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

/// The error type of response bodies (a cut stream).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BodyError(String);

/// A response body: a complete buffer or an SSE stream.
enum ServerBody {
    Full(Option<Bytes>),
    Sse(Box<SseBody>),
}

impl Body for ServerBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            ServerBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ServerBody::Sse(s) => s.poll_next(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ServerBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ServerBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            ServerBody::Full(None) => SizeHint::with_exact(0),
            ServerBody::Sse(_) => SizeHint::default(),
        }
    }
}

fn full(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<ServerBody> {
    let mut resp = Response::new(ServerBody::Full(Some(body.into())));
    *resp.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    resp
}

fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "BadRequestError",
        401 => "AuthenticationError",
        404 => "NotFoundError",
        405 => "MethodNotAllowed",
        413 => "RequestTooLarge",
        503 => "ServiceUnavailable",
        _ => "InternalServerError",
    }
}

fn error_json(status: StatusCode, message: &str) -> String {
    json!({"error": {
        "message": message,
        "type": error_type(status),
        "param": null,
        "code": status.as_u16(),
    }})
    .to_string()
}

fn error_response(ctx: &Ctx, status: StatusCode, message: &str) -> Response<ServerBody> {
    if status.is_client_error() {
        inc(&ctx.counters.rejected, 1);
    }
    full(status, "application/json", error_json(status, message))
}

/// Whether `req` carries `Authorization: Bearer KEY` for the configured key (always true
/// without one). The scheme is matched case-insensitively, the key exactly.
fn authorized(headers: &hyper::HeaderMap, key: Option<&str>) -> bool {
    let Some(key) = key else {
        return true;
    };
    headers
        .get_all(hyper::header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split_once(' '))
        .any(|(scheme, k)| scheme.eq_ignore_ascii_case("bearer") && k.trim() == key)
}

/// `GET /metrics`: the server's counters in Prometheus' text format.
fn metrics_text(stats: &ServeStats) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (name, help, kind, value) in [
        (
            "requests",
            "Valid generation requests accepted",
            "counter",
            stats.requests,
        ),
        (
            "rejected",
            "Requests answered with a 4xx error",
            "counter",
            stats.rejected,
        ),
        (
            "injected_faults",
            "Faults injected",
            "counter",
            stats.injected_faults,
        ),
        (
            "completed",
            "Requests finished and delivered",
            "counter",
            stats.completed,
        ),
        (
            "failed",
            "Requests the engine failed",
            "counter",
            stats.failed,
        ),
        (
            "cancelled",
            "Requests cancelled by a client disconnect",
            "counter",
            stats.cancelled,
        ),
        (
            "token_chunks_sent",
            "Token-carrying SSE chunks written",
            "counter",
            stats.token_chunks_sent,
        ),
        (
            "tokens_sent",
            "Tokens in those chunks",
            "counter",
            stats.tokens_sent,
        ),
        (
            "open_streams",
            "Generation responses currently open",
            "gauge",
            stats.open_streams,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP servebench_{name} {help}.\n# TYPE servebench_{name} {kind}\nservebench_{name} {value}"
        );
    }
    out
}

async fn handle(req: Request<Incoming>, ctx: Arc<Ctx>) -> Response<ServerBody> {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    if path.starts_with("/v1/") && !authorized(req.headers(), ctx.options.api_key.as_deref()) {
        return error_response(
            &ctx,
            StatusCode::UNAUTHORIZED,
            "missing or wrong API key: send `Authorization: Bearer KEY`",
        );
    }
    match (method, path.as_str()) {
        (Method::GET, "/health") => full(StatusCode::OK, "text/plain", Bytes::new()),
        (Method::GET, "/metrics") => {
            let mut text = metrics_text(&ctx.counters.snapshot());
            // The engine's own metrics (the simulator's are vLLM's), asked of the engine
            // thread so they are current.
            let (tx, rx) = tokio::sync::oneshot::channel();
            if ctx.send(Control::Metrics(tx)) {
                if let Ok(Some(engine)) = rx.await {
                    text.push_str(&engine);
                }
            }
            full(StatusCode::OK, "text/plain; version=0.0.4", text)
        }
        (Method::GET, "/v1/models") => {
            let mut model = json!({
                "id": ctx.options.model,
                "object": "model",
                "created": ctx.created,
                "owned_by": "servebench",
                "root": ctx.options.model,
            });
            if let Some(len) = ctx.options.max_model_len {
                model["max_model_len"] = json!(len);
            }
            let body = json!({"object": "list", "data": [model]}).to_string();
            full(StatusCode::OK, "application/json", body)
        }
        (Method::GET, "/timeline") if ctx.timeline.is_some() => {
            let served = ctx
                .timeline
                .as_ref()
                .and_then(|t| t.lock().ok().map(|t| t.clone()))
                .unwrap_or_default();
            let entries = super::timeline::entries(&served, ctx.origin, ctx.speed);
            full(
                StatusCode::OK,
                "application/jsonl",
                super::timeline::to_jsonl(&entries),
            )
        }
        (Method::POST, "/reset_prefix_cache" | "/flush_cache") => reset_prefix_cache(&ctx).await,
        (Method::POST, "/v1/completions") => generate(req, ctx, Endpoint::Completions).await,
        (Method::POST, "/v1/chat/completions") => generate(req, ctx, Endpoint::Chat).await,
        (
            _,
            "/health"
            | "/metrics"
            | "/v1/models"
            | "/v1/completions"
            | "/v1/chat/completions"
            | "/reset_prefix_cache"
            | "/flush_cache",
        ) => error_response(&ctx, StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        (_, other) => error_response(&ctx, StatusCode::NOT_FOUND, &format!("no route {other}")),
    }
}

/// `POST /reset_prefix_cache` / `POST /flush_cache`: empties the engine's prefix cache.
/// 200 when it is empty afterwards (or the engine keeps none), 503 when blocks in use kept
/// it from emptying (vLLM refuses a reset while requests hold cached blocks).
async fn reset_prefix_cache(ctx: &Ctx) -> Response<ServerBody> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !ctx.send(Control::ResetPrefixCache(tx)) {
        return error_response(ctx, StatusCode::SERVICE_UNAVAILABLE, "engine stopped");
    }
    match rx.await {
        Ok(Some(true)) | Ok(None) => full(StatusCode::OK, "text/plain", Bytes::new()),
        Ok(Some(false)) => error_response(
            ctx,
            StatusCode::SERVICE_UNAVAILABLE,
            "the prefix cache was not fully reset: running requests hold cached blocks",
        ),
        Err(_) => error_response(ctx, StatusCode::SERVICE_UNAVAILABLE, "engine stopped"),
    }
}

/// A validated generation request.
#[derive(Debug, Clone, PartialEq)]
struct Parsed {
    /// The prompt's text (a chat's message texts joined by spaces), for engines that hash
    /// prompt blocks; `None` for token-id prompts.
    prompt_text: Option<String>,
    prompt_tokens: u64,
    max_tokens: u64,
    stream: bool,
    include_usage: bool,
    continuous_usage: bool,
    ignore_eos: bool,
}

/// A 4xx answer.
struct ApiError(StatusCode, String);

fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into())
}

fn words(s: &str) -> u64 {
    if s.trim().is_empty() {
        0
    } else {
        approx_tokens(s)
    }
}

fn prompt_tokens_of(prompt: &Value) -> Result<u64, ApiError> {
    match prompt {
        Value::String(s) => Ok(words(s)),
        Value::Array(items) if items.iter().all(Value::is_u64) => Ok(items.len() as u64),
        Value::Array(items) if items.len() == 1 => prompt_tokens_of(&items[0]),
        Value::Array(_) => Err(bad("batched prompts are not supported: send one prompt")),
        _ => Err(bad("`prompt` must be a string or an array of token ids")),
    }
}

fn content_tokens(content: &Value) -> Result<u64, ApiError> {
    match content {
        Value::String(s) => Ok(words(s)),
        Value::Null => Ok(0),
        Value::Array(parts) => {
            let mut n = 0;
            for p in parts {
                match p.get("text") {
                    Some(Value::String(s)) => n += words(s),
                    Some(_) => return Err(bad("message content part `text` must be a string")),
                    None => {} // images etc.: no text tokens
                }
            }
            Ok(n)
        }
        _ => Err(bad(
            "message `content` must be a string or an array of parts",
        )),
    }
}

/// The prompt's text: a completion's `prompt` string, or a chat's message texts joined by
/// spaces (validated by the token counts computed next to it).
fn prompt_text_of(v: &Value, endpoint: Endpoint) -> Option<String> {
    fn text_of(content: &Value, out: &mut Vec<String>) {
        match content {
            Value::String(s) => out.push(s.clone()),
            Value::Array(parts) => {
                for p in parts {
                    if let Some(Value::String(s)) = p.get("text") {
                        out.push(s.clone());
                    }
                }
            }
            _ => {}
        }
    }
    let mut parts = Vec::new();
    match endpoint {
        Endpoint::Completions => match v.get("prompt")? {
            Value::Array(items) if items.len() == 1 => text_of(&items[0], &mut parts),
            p => text_of(p, &mut parts),
        },
        Endpoint::Chat => {
            for m in v.get("messages")?.as_array()? {
                text_of(m.get("content").unwrap_or(&Value::Null), &mut parts);
            }
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn opt_bool(v: &Value, key: &str) -> Result<Option<bool>, ApiError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad(format!("`{key}` must be a boolean"))),
    }
}

fn opt_count(v: &Value, key: &str) -> Result<Option<u64>, ApiError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(bad(format!("`{key}` must be a positive integer, got {x}"))),
        },
    }
}

fn parse_request(body: &[u8], endpoint: Endpoint, opts: &ServeOptions) -> Result<Parsed, ApiError> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("invalid JSON body: {e}")))?;
    if !v.is_object() {
        return Err(bad("request body must be a JSON object"));
    }
    match v.get("model") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if *m == opts.model => {}
        Some(Value::String(m)) => {
            return Err(ApiError(
                StatusCode::NOT_FOUND,
                format!("The model `{m}` does not exist."),
            ))
        }
        Some(_) => return Err(bad("`model` must be a string")),
    }
    if let Some(n) = opt_count(&v, "n")? {
        if n != 1 {
            return Err(bad("only n = 1 is supported"));
        }
    }
    let prompt_text = prompt_text_of(&v, endpoint);
    let prompt_tokens = match endpoint {
        Endpoint::Completions => {
            prompt_tokens_of(v.get("prompt").ok_or_else(|| bad("`prompt` is required"))?)?
        }
        Endpoint::Chat => {
            let messages = v
                .get("messages")
                .and_then(Value::as_array)
                .filter(|m| !m.is_empty())
                .ok_or_else(|| bad("`messages` must be a non-empty array"))?;
            let mut n = 0;
            for m in messages {
                if !m.is_object() || m.get("role").and_then(Value::as_str).is_none() {
                    return Err(bad("each message needs a string `role`"));
                }
                n += content_tokens(m.get("content").unwrap_or(&Value::Null))?;
            }
            n
        }
    };
    if prompt_tokens == 0 {
        return Err(bad("the prompt is empty"));
    }
    let max_tokens = match endpoint {
        Endpoint::Completions => opt_count(&v, "max_tokens")?,
        Endpoint::Chat => match opt_count(&v, "max_completion_tokens")? {
            Some(n) => Some(n),
            None => opt_count(&v, "max_tokens")?,
        },
    }
    .unwrap_or(opts.default_max_tokens);
    if let Some(limit) = opts.max_model_len {
        let total = prompt_tokens.saturating_add(max_tokens);
        if total > limit {
            return Err(bad(format!(
                "This model's maximum context length is {limit} tokens. However, you requested \
                 {total} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion)."
            )));
        }
    }
    if max_tokens > MAX_COMPLETION_TOKENS {
        return Err(bad(format!(
            "max_tokens {max_tokens} is over this server's limit of {MAX_COMPLETION_TOKENS}"
        )));
    }
    let stream = opt_bool(&v, "stream")?.unwrap_or(false);
    let so = v.get("stream_options").cloned().unwrap_or(Value::Null);
    if !so.is_null() && !so.is_object() {
        return Err(bad("`stream_options` must be an object"));
    }
    Ok(Parsed {
        prompt_text,
        prompt_tokens,
        max_tokens,
        stream,
        include_usage: opt_bool(&so, "include_usage")?.unwrap_or(false),
        continuous_usage: opt_bool(&so, "continuous_usage_stats")?.unwrap_or(false),
        ignore_eos: opt_bool(&v, "ignore_eos")?.unwrap_or(false),
    })
}

async fn generate(
    req: Request<Incoming>,
    ctx: Arc<Ctx>,
    endpoint: Endpoint,
) -> Response<ServerBody> {
    let received = Instant::now();
    let tag = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = match http_body_util::Limited::new(req.into_body(), ctx.options.max_body_bytes)
        .collect()
        .await
    {
        Ok(c) => c.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return error_response(
                &ctx,
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("request body over {} bytes", ctx.options.max_body_bytes),
            )
        }
        Err(e) => {
            return error_response(&ctx, StatusCode::BAD_REQUEST, &format!("reading body: {e}"))
        }
    };
    let mut parsed = match parse_request(&body, endpoint, &ctx.options) {
        Ok(p) => p,
        Err(ApiError(status, message)) => return error_response(&ctx, status, &message),
    };
    inc(&ctx.counters.requests, 1);
    let n = ctx.counter.fetch_add(1, Ordering::Relaxed) + 1;
    let fault = ctx
        .options
        .fault
        .filter(|f| n.is_multiple_of(f.every))
        .map(|f| f.kind);
    if fault == Some(FaultKind::Status500) {
        inc(&ctx.counters.injected_faults, 1);
        return full(
            StatusCode::INTERNAL_SERVER_ERROR,
            "application/json",
            error_json(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("injected fault: request {n} fails with 500"),
            ),
        );
    }
    let id = ctx.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = tokio_mpsc::channel(ctx.options.stream_buffer.max(1));
    let request = EngineRequest {
        id,
        prompt_tokens: parsed.prompt_tokens,
        prompt: parsed.prompt_text.take(),
        max_output_tokens: parsed.max_tokens,
        ignore_eos: parsed.ignore_eos,
        arrival: Duration::ZERO,
        shared_prefix_tokens: 0,
    };
    let response_id = match endpoint {
        Endpoint::Completions => format!("cmpl-{id}"),
        Endpoint::Chat => format!("chatcmpl-{id}"),
    };
    if !ctx.send(Control::Submit {
        request,
        tx,
        tag: tag.clone(),
        response_id,
        received,
    }) {
        return full(
            StatusCode::SERVICE_UNAVAILABLE,
            "application/json",
            error_json(StatusCode::SERVICE_UNAVAILABLE, "engine stopped"),
        );
    }
    let guard = CancelGuard {
        id,
        ctx: Arc::clone(&ctx),
        armed: true,
    };
    let mut sse = SseBody {
        rx,
        endpoint,
        parsed: parsed.clone(),
        fault,
        completion: 0,
        token_chunks: 0,
        done: false,
        guard,
        text_index: 0,
        cut: None,
        cut_timer: None,
    };
    inc(&ctx.counters.open_streams, 1);
    let mut resp = if parsed.stream {
        let mut r = Response::new(ServerBody::Sse(Box::new(sse)));
        let h = r.headers_mut();
        h.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream; charset=utf-8"),
        );
        h.insert(
            hyper::header::CACHE_CONTROL,
            hyper::header::HeaderValue::from_static("no-cache"),
        );
        r
    } else {
        match sse.collect_all().await {
            Ok(body) => full(StatusCode::OK, "application/json", body),
            Err(message) => full(
                StatusCode::INTERNAL_SERVER_ERROR,
                "application/json",
                error_json(StatusCode::INTERNAL_SERVER_ERROR, &message),
            ),
        }
    };
    if let Some(tag) = tag.and_then(|t| hyper::header::HeaderValue::from_str(&t).ok()) {
        resp.headers_mut().insert("x-request-id", tag);
    }
    resp
}

/// Cancels the engine request when the response is dropped before its end was delivered.
struct CancelGuard {
    id: u64,
    ctx: Arc<Ctx>,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        self.ctx
            .counters
            .open_streams
            .fetch_sub(1, Ordering::Relaxed);
        if self.armed {
            self.ctx.send(Control::Cancel(self.id));
        }
    }
}

/// Words the server "generates", one per token.
const OUT_WORDS: [&str; 8] = [
    " lorem", " ipsum", " dolor", " sit", " amet", " elit", " sed", " magna",
];

struct SseBody {
    rx: tokio_mpsc::Receiver<Item>,
    endpoint: Endpoint,
    parsed: Parsed,
    fault: Option<FaultKind>,
    /// Tokens sent so far.
    completion: u64,
    token_chunks: u32,
    done: bool,
    guard: CancelGuard,
    text_index: usize,
    /// A cut to deliver once `cut_timer` fires.
    cut: Option<BodyError>,
    cut_timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl SseBody {
    fn ctx(&self) -> &Ctx {
        &self.guard.ctx
    }

    fn text(&mut self, tokens: u32) -> String {
        let mut s = String::with_capacity(tokens as usize * 8);
        for _ in 0..tokens {
            s.push_str(OUT_WORDS[self.text_index % OUT_WORDS.len()]);
            self.text_index += 1;
        }
        s
    }

    fn usage_json(&self, prompt: u64, completion: u64) -> String {
        format!(
            r#"{{"prompt_tokens":{prompt},"total_tokens":{},"completion_tokens":{completion}}}"#,
            prompt + completion
        )
    }

    fn head(&self, out: &mut String) {
        use std::fmt::Write as _;
        let ctx = self.ctx();
        let (prefix, object) = match self.endpoint {
            Endpoint::Completions => ("cmpl", "text_completion"),
            Endpoint::Chat => ("chatcmpl", "chat.completion.chunk"),
        };
        let _ = write!(
            out,
            r#"data: {{"id":"{prefix}-{}","object":"{object}","created":{},"model":{},"choices":"#,
            self.guard.id, ctx.created, ctx.model_json
        );
    }

    /// One chunk with a single choice; `text: None` for the role-only chat chunk. `text` is
    /// made of [`OUT_WORDS`], which need no JSON escaping.
    fn chunk(&self, out: &mut String, text: Option<&str>, finish: Option<&str>, usage: bool) {
        self.head(out);
        let push_finish = |out: &mut String| match finish {
            Some(f) => {
                out.push('"');
                out.push_str(f);
                out.push('"');
            }
            None => out.push_str("null"),
        };
        match self.endpoint {
            Endpoint::Completions => {
                out.push_str(r#"[{"index":0,"text":""#);
                out.push_str(text.unwrap_or(""));
                out.push_str(r#"","logprobs":null,"finish_reason":"#);
                push_finish(out);
                out.push_str(r#","stop_reason":null}]"#);
            }
            Endpoint::Chat => {
                out.push_str(r#"[{"index":0,"delta":"#);
                match text {
                    None => out.push_str(r#"{"role":"assistant","content":""}"#),
                    Some("") => out.push_str("{}"),
                    Some(t) => {
                        out.push_str("{\"");
                        out.push_str(self.ctx().options.delta_field.key());
                        out.push_str("\":\"");
                        out.push_str(t);
                        out.push_str("\"}");
                    }
                }
                out.push_str(r#","logprobs":null,"finish_reason":"#);
                push_finish(out);
                out.push_str("}]");
            }
        }
        if usage {
            out.push_str(",\"usage\":");
            out.push_str(&self.usage_json(self.parsed.prompt_tokens, self.completion));
        }
        out.push_str("}\n\n");
    }

    fn error_chunk(out: &mut String, kind: ErrorKind, message: &str) {
        let status = match kind {
            ErrorKind::Rejected => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        out.push_str("data: ");
        out.push_str(&error_json(status, message));
        out.push_str("\n\ndata: [DONE]\n\n");
    }

    fn finish_reason(&self) -> &'static str {
        if self.completion >= self.parsed.max_tokens {
            "length"
        } else {
            "stop"
        }
    }

    /// Format one item; `Err` cuts the connection.
    fn render(&mut self, item: Item, out: &mut String) -> Result<(), BodyError> {
        let counters = Arc::clone(&self.guard.ctx.counters);
        if item.tokens > 0 {
            match self.fault {
                Some(FaultKind::CutStream { after_chunks })
                    if self.token_chunks >= after_chunks =>
                {
                    inc(&counters.injected_faults, 1);
                    self.done = true;
                    return Err(BodyError(format!(
                        "injected fault: stream cut after {after_chunks} chunks"
                    )));
                }
                Some(FaultKind::StreamError { after_chunks })
                    if self.token_chunks >= after_chunks =>
                {
                    inc(&counters.injected_faults, 1);
                    self.done = true;
                    Self::error_chunk(
                        out,
                        ErrorKind::Other,
                        &format!("injected fault: error after {after_chunks} chunks"),
                    );
                    return Ok(());
                }
                _ => {}
            }
            if self.token_chunks == 0 && self.endpoint == Endpoint::Chat {
                self.chunk(out, None, None, self.parsed.continuous_usage);
            }
            self.completion += u64::from(item.tokens);
            self.token_chunks += 1;
            inc(&counters.token_chunks_sent, 1);
            inc(&counters.tokens_sent, u64::from(item.tokens));
            let text = self.text(item.tokens);
            let finish = match &item.end {
                Some(End::Finished(_)) => Some(self.finish_reason()),
                _ => None,
            };
            self.chunk(out, Some(&text), finish, self.parsed.continuous_usage);
        }
        match item.end {
            None => {}
            Some(End::Finished(usage)) => {
                if item.tokens == 0 {
                    self.chunk(
                        out,
                        Some(""),
                        Some(self.finish_reason()),
                        self.parsed.continuous_usage,
                    );
                }
                if self.parsed.include_usage {
                    self.head(out);
                    out.push_str("[],\"usage\":");
                    out.push_str(&self.usage_json(
                        usage.prompt_tokens.unwrap_or(self.parsed.prompt_tokens),
                        usage.completion_tokens.unwrap_or(self.completion),
                    ));
                    out.push_str("}\n\n");
                }
                out.push_str("data: [DONE]\n\n");
                inc(&counters.completed, 1);
                self.guard.armed = false;
                self.done = true;
            }
            Some(End::Failed { kind, message }) => {
                Self::error_chunk(out, kind, &message);
                inc(&counters.failed, 1);
                self.guard.armed = false;
                self.done = true;
            }
        }
        Ok(())
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if self.cut.is_some() {
            // Let hyper flush what was written before the cut (it flushes when the body is
            // pending), then break the connection.
            let timer = self
                .cut_timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(20))));
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            return Poll::Ready(self.cut.take().map(Err));
        }
        if self.done {
            return Poll::Ready(None);
        }
        let mut out = String::new();
        // Take everything already waiting, so a slow reader gets one larger write.
        loop {
            let item = match self.rx.poll_recv(cx) {
                Poll::Ready(Some(item)) => item,
                Poll::Ready(None) => {
                    self.done = true;
                    if out.is_empty() {
                        return Poll::Ready(Some(Err(BodyError("engine stopped".into()))));
                    }
                    break;
                }
                Poll::Pending => {
                    if out.is_empty() {
                        return Poll::Pending;
                    }
                    break;
                }
            };
            if let Err(e) = self.render(item, &mut out) {
                self.cut = Some(e);
                if out.is_empty() {
                    return self.poll_next(cx);
                }
                break; // write what came before the cut first
            }
            if self.done {
                break;
            }
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }

    /// `stream: false`: wait for the end and answer one JSON object.
    async fn collect_all(&mut self) -> Result<String, String> {
        loop {
            let Some(item) = self.rx.recv().await else {
                return Err("engine stopped".into());
            };
            self.completion += u64::from(item.tokens);
            match item.end {
                None => {}
                Some(End::Failed { message, .. }) => {
                    inc(&self.ctx().counters.failed, 1);
                    self.guard.armed = false;
                    return Err(message);
                }
                Some(End::Finished(usage)) => {
                    self.guard.armed = false;
                    let counters = Arc::clone(&self.ctx().counters);
                    inc(&counters.completed, 1);
                    let text = self.text(u32::try_from(self.completion).unwrap_or(u32::MAX));
                    let prompt = usage.prompt_tokens.unwrap_or(self.parsed.prompt_tokens);
                    let completion = usage.completion_tokens.unwrap_or(self.completion);
                    let usage = json!({"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion});
                    let ctx = self.ctx();
                    let choice = match self.endpoint {
                        Endpoint::Completions => {
                            json!({"index": 0, "text": text, "logprobs": null, "finish_reason": self.finish_reason()})
                        }
                        Endpoint::Chat => {
                            let mut message = json!({"role": "assistant", "content": null});
                            message[ctx.options.delta_field.key()] = Value::String(text);
                            json!({"index": 0, "message": message, "logprobs": null, "finish_reason": self.finish_reason()})
                        }
                    };
                    let (prefix, object) = match self.endpoint {
                        Endpoint::Completions => ("cmpl", "text_completion"),
                        Endpoint::Chat => ("chatcmpl", "chat.completion"),
                    };
                    return Ok(json!({
                        "id": format!("{prefix}-{}", self.guard.id),
                        "object": object,
                        "created": ctx.created,
                        "model": ctx.options.model,
                        "choices": [choice],
                        "usage": usage,
                    })
                    .to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ServeOptions {
        ServeOptions {
            max_model_len: Some(100),
            ..ServeOptions::default()
        }
    }

    fn parse(body: &str, ep: Endpoint) -> Result<Parsed, (u16, String)> {
        parse_request(body.as_bytes(), ep, &opts()).map_err(|ApiError(s, m)| (s.as_u16(), m))
    }

    #[test]
    fn valid_requests() {
        let p = parse(
            r#"{"model":"servebench-sim","prompt":"one two three","max_tokens":5,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"ignore_eos":true}"#,
            Endpoint::Completions,
        )
        .unwrap();
        assert_eq!(
            p,
            Parsed {
                prompt_text: Some("one two three".into()),
                prompt_tokens: 3,
                max_tokens: 5,
                stream: true,
                include_usage: true,
                continuous_usage: true,
                ignore_eos: true
            }
        );
        let p = parse(r#"{"prompt":[1,2,3,4]}"#, Endpoint::Completions).unwrap();
        assert_eq!((p.prompt_tokens, p.max_tokens, p.stream), (4, 16, false));
        let p = parse(
            r#"{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi there"},{"type":"image_url","image_url":{"url":"x"}}]}],"max_completion_tokens":9,"max_tokens":3}"#,
            Endpoint::Chat,
        )
        .unwrap();
        assert_eq!((p.prompt_tokens, p.max_tokens), (4, 9));
        assert_eq!(p.prompt_text.as_deref(), Some("be brief hi there"));
    }

    #[test]
    fn malformed_requests_are_4xx() {
        let cases = [
            ("not json", Endpoint::Completions, 400, "invalid JSON"),
            ("[1]", Endpoint::Completions, 400, "JSON object"),
            (
                r#"{"max_tokens":3}"#,
                Endpoint::Completions,
                400,
                "`prompt` is required",
            ),
            (
                r#"{"prompt":"a","max_tokens":0}"#,
                Endpoint::Completions,
                400,
                "positive integer",
            ),
            (
                r#"{"prompt":"a","max_tokens":"3"}"#,
                Endpoint::Completions,
                400,
                "positive integer",
            ),
            (
                r#"{"prompt":"a","stream":"yes"}"#,
                Endpoint::Completions,
                400,
                "boolean",
            ),
            (r#"{"prompt":"  "}"#, Endpoint::Completions, 400, "empty"),
            (
                r#"{"prompt":["a","b"]}"#,
                Endpoint::Completions,
                400,
                "batched",
            ),
            (
                r#"{"prompt":"a","n":2}"#,
                Endpoint::Completions,
                400,
                "n = 1",
            ),
            (
                r#"{"prompt":"a","model":"gpt-9"}"#,
                Endpoint::Completions,
                404,
                "does not exist",
            ),
            (
                r#"{"prompt":"a","max_tokens":100}"#,
                Endpoint::Completions,
                400,
                "maximum context length is 100",
            ),
            (r#"{"messages":[]}"#, Endpoint::Chat, 400, "non-empty array"),
            (
                r#"{"messages":[{"content":"x"}]}"#,
                Endpoint::Chat,
                400,
                "role",
            ),
            (
                r#"{"messages":[{"role":"user","content":5}]}"#,
                Endpoint::Chat,
                400,
                "content",
            ),
        ];
        for (body, ep, status, needle) in cases {
            let (s, m) = parse(body, ep).unwrap_err();
            assert_eq!(s, status, "{body}");
            assert!(m.contains(needle), "{body}: {m}");
        }
    }

    #[test]
    fn hostile_token_counts_are_4xx_not_overflow() {
        // prompt + max_tokens past u64::MAX must not wrap under the context-length check.
        let max = u64::MAX;
        let (s, m) = parse(
            &format!(r#"{{"prompt":"a b","max_tokens":{max}}}"#),
            Endpoint::Completions,
        )
        .unwrap_err();
        assert_eq!(s, 400);
        assert!(m.contains("maximum context length is 100"), "{m}");
        // Without a context length, a completion beyond MAX_COMPLETION_TOKENS is refused
        // (the server would hold its whole text for `stream: false`).
        let open = ServeOptions::default();
        let ok = format!(r#"{{"prompt":"a","max_tokens":{MAX_COMPLETION_TOKENS}}}"#);
        let p = parse_request(ok.as_bytes(), Endpoint::Completions, &open)
            .map_err(|e| e.1)
            .unwrap();
        assert_eq!(p.max_tokens, MAX_COMPLETION_TOKENS);
        for big in [MAX_COMPLETION_TOKENS + 1, 1_000_000_000_000_000] {
            let body = format!(r#"{{"prompt":"a","max_tokens":{big}}}"#);
            let ApiError(s, m) =
                parse_request(body.as_bytes(), Endpoint::Completions, &open).unwrap_err();
            assert_eq!(s, StatusCode::BAD_REQUEST);
            assert!(m.contains(&big.to_string()), "{m}");
        }
        // Wrong types and signs, and bytes that are not UTF-8.
        for body in [
            r#"{"prompt":"a","max_tokens":-5}"#,
            r#"{"prompt":"a","max_tokens":2.5}"#,
            r#"{"prompt":"a","max_tokens":1e30}"#,
            r#"{"messages":[{"role":"user","content":"a"}],"max_completion_tokens":[1]}"#,
            r#"{"prompt":"a","max_tokens":18446744073709551616}"#,
        ] {
            let ep = if body.contains("completion_tokens") {
                Endpoint::Chat
            } else {
                Endpoint::Completions
            };
            assert_eq!(parse(body, ep).map(|_| ()).unwrap_err().0, 400, "{body}");
        }
        let ApiError(s, m) =
            parse_request(b"{\"prompt\":\"\xff\xfe\"}", Endpoint::Completions, &open).unwrap_err();
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert!(m.contains("invalid JSON"), "{m}");
    }

    #[test]
    fn api_key_check() {
        let mut h = hyper::HeaderMap::new();
        assert!(authorized(&h, None));
        assert!(!authorized(&h, Some("k1")));
        h.insert(
            hyper::header::AUTHORIZATION,
            hyper::header::HeaderValue::from_static("Bearer k2"),
        );
        assert!(!authorized(&h, Some("k1")));
        assert!(authorized(&h, Some("k2")));
        h.insert(
            hyper::header::AUTHORIZATION,
            hyper::header::HeaderValue::from_static("bearer k1"),
        );
        assert!(authorized(&h, Some("k1")));
        h.insert(
            hyper::header::AUTHORIZATION,
            hyper::header::HeaderValue::from_static("Basic k1"),
        );
        assert!(!authorized(&h, Some("k1")));
    }

    #[test]
    fn metrics_are_prometheus_text() {
        let text = metrics_text(&ServeStats {
            open_streams: 7,
            requests: 3,
            ..ServeStats::default()
        });
        assert!(text.contains("# TYPE servebench_open_streams gauge\nservebench_open_streams 7\n"));
        assert!(text.contains("servebench_requests 3\n"));
    }

    #[test]
    fn fault_syntax() {
        assert_eq!(
            "500:7".parse::<Fault>().unwrap(),
            Fault {
                every: 7,
                kind: FaultKind::Status500
            }
        );
        assert_eq!(
            "error:2:0".parse::<Fault>().unwrap().kind,
            FaultKind::StreamError { after_chunks: 0 }
        );
        for bad in ["", "500", "500:x", "cut:3", "cut:3:x", "boom:1", "500:1:2"] {
            assert!(bad.parse::<Fault>().is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_speed_is_refused() {
        struct Idle;
        impl Engine for Idle {
            fn now(&self) -> Duration {
                Duration::ZERO
            }
            fn submit(&mut self, _: EngineRequest) -> Result<(), crate::engine::EngineError> {
                Ok(())
            }
            fn advance(
                &mut self,
                _: Option<Duration>,
                _: &mut Vec<EngineEvent>,
            ) -> Result<(), crate::engine::EngineError> {
                Ok(())
            }
            fn in_flight(&self) -> usize {
                0
            }
        }
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                spawn(Idle, addr, s, ServeOptions::default()),
                Err(ServeError::BadSpeed(_))
            ));
        }
    }
}
