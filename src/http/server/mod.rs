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
//! The engine runs on its own thread. While requests are in flight it sleeps until the
//! engine's next event ([`Engine::next_event_at`], scaled to wall time) or at most `tick`
//! (and sleeps while idle), advances the engine to the virtual "now" and hands each
//! request's chunks to that request's bounded channel; the HTTP tasks format the SSE bytes.
//! A decode step's chunks wake at most [`ServeOptions::handoff_window`] HTTP tasks at once;
//! the others wait in line, each task that runs wakes the next, and first tokens go to the
//! front, so a request's TTFT does not include the time to write a whole step's chunks.
//! When a client reads slower than the engine produces, the engine thread coalesces the
//! waiting tokens into one chunk instead of queueing, so memory per stream is bounded. A
//! client that disconnects drops its response body, which cancels the request in the engine
//! ([`Engine::cancel`]) and frees its slot.
//!
//! The server has no tokenizer: a prompt's length is
//! [`crate::driver::workload::approx_tokens`] of its text (the estimate the
//! workload builder uses, so servebench's own prompts count exactly; one token per common
//! short word) or the length of a token-id array; every generated token is one short word.

mod engine_loop;
mod events;
mod handoff;
mod openai;
mod options;
mod pooling;
mod prometheus;
mod routes;
mod served;
mod stream;
#[cfg(test)]
mod tests;

pub use options::{
    default_worker_threads, Answerer, DeltaField, Fault, FaultKind, FaultParseError,
    ReasoningPhase, ServeError, ServeOptions, DEFAULT_HANDOFF_WINDOW, MAX_COMPLETION_TOKENS,
};
pub use prometheus::ServeStats;
pub use served::ServedRequest;
pub use stream::BodyError;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use serde_json::Value;

use crate::engine::Engine;
use engine_loop::{Control, EngineLoop};
use prometheus::Counters;
use routes::{accept_loop, Ctx};

/// A running server. Dropping it (or [`ServerHandle::shutdown`]) stops it.
pub struct ServerHandle {
    addr: SocketAddr,
    origin: Instant,
    speed: f64,
    counters: Arc<Counters>,
    timeline: served::Timeline,
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
        served::snapshot(&self.timeline)
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
    let gate = handoff::Gate::new(options.handoff_window);
    let engine_thread = {
        let counters = Arc::clone(&counters);
        let gate = Arc::clone(&gate);
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
                    gate,
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
        gate,
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
