//! The [`Engine`] trait: the thin adapter between the load driver and a server that streams
//! tokens — a virtual-time simulator or a real HTTP server.
//!
//! # Contract
//!
//! An engine has its own clock, [`Engine::now`], an offset from the run's start. The driver
//! alternates two calls:
//!
//! * [`Engine::submit`] hands over a request at the engine's current time (the driver has
//!   already advanced the engine to the request's arrival time).
//! * [`Engine::advance`] lets time pass until `deadline` (`None`: until something happens),
//!   appending every [`EngineEvent`] that occurred, in time order, each stamped with the
//!   engine-clock time it happened at. It returns **early** — right after the first event
//!   that ends a request ([`EngineEvent::Finished`] / [`EngineEvent::Failed`]) — so that a
//!   driver with a concurrency cap can send the next request at the moment a slot frees.
//!   When the deadline is reached, `now()` equals the deadline.
//!
//! A virtual-time engine (the H200 simulator) computes its steps inside `advance` and jumps
//! its clock: it is deterministic and runs far faster than real time. A real-time engine (the
//! HTTP adapter) starts the request on `submit` and, in `advance`, waits on the wall clock for
//! events that its I/O tasks timestamped on arrival. The same driver and
//! `Collector` code serve both.

use std::time::Duration;

use crate::record::ErrorKind;

mod fixed;

pub use fixed::FixedEngine;

/// One request handed to an engine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineRequest {
    /// Request id, unique within a run.
    pub id: u64,
    /// Prompt length in tokens.
    pub prompt_tokens: u64,
    /// Prompt text, when the workload has one (HTTP engines send it; simulators ignore it).
    pub prompt: Option<String>,
    /// Maximum output tokens (`max_tokens`).
    pub max_output_tokens: u64,
    /// Keep generating past end-of-sequence until `max_output_tokens`.
    pub ignore_eos: bool,
    /// When the request arrived at the client (scheduled arrival), engine-clock time.
    pub arrival: Duration,
    /// Tokens at the start of the prompt the workload shares with other requests, if known
    /// (informational: the simulator's prefix cache finds shared blocks by hashing
    /// `prompt`, as a server does).
    pub shared_prefix_tokens: u64,
    /// ViT patches of each image the request carries (before the vision encoder's spatial
    /// merge; see [`crate::driver::images`]): a simulator charges the vision encoder's
    /// forward over them before the prefill. Empty for text.
    pub image_patches: Vec<u64>,
    /// A later input of a request that carries several (an embeddings batch, a rerank
    /// query's documents): the API server rendered and tokenized it with the request's first
    /// input, so a simulator charges it no admission work of its own.
    pub shares_admission: bool,
    /// The answer follows a grammar (a structured-output schema): the server computes the
    /// allowed-token mask before each of its sampling steps, which a simulator charges.
    pub constrained: bool,
}

/// Token usage as reported by the server (defined with the records that keep it).
pub use crate::record::Usage;

/// Something that happened to a request, stamped with engine-clock time.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    /// The request was sent to (accepted by) the server.
    Sent {
        /// Request id.
        id: u64,
        /// When.
        at: Duration,
    },
    /// A chunk of output arrived.
    Chunk {
        /// Request id.
        id: u64,
        /// When it arrived.
        at: Duration,
        /// Tokens in the chunk.
        tokens: u32,
    },
    /// What the request carried beyond one text prompt and how its answer comes (sent by
    /// an engine that knows: the HTTP client, right after [`EngineEvent::Sent`]).
    Carried {
        /// Request id.
        id: u64,
        /// When it was known.
        at: Duration,
        /// Response form, inputs, images.
        payload: crate::record::Payload,
    },
    /// What the engine checked in the answer (tool calls, structured output): sent by an
    /// engine that checks them (the HTTP client, with tools or a response format), before
    /// the event that ends the request.
    Checked {
        /// Request id.
        id: u64,
        /// When the checks were done (the stream's end).
        at: Duration,
        /// The checks.
        checks: crate::record::OutputChecks,
    },
    /// How the request's stream divided into reasoning and answer: sent by an engine that
    /// tells the two apart (the HTTP client), before the event that ends the request, only
    /// for a stream that carried reasoning.
    Reasoning {
        /// Request id.
        id: u64,
        /// When the split was known (the stream's end).
        at: Duration,
        /// Which chunks carried which stream.
        split: crate::record::StreamSplit,
    },
    /// The request completed.
    Finished {
        /// Request id.
        id: u64,
        /// When.
        at: Duration,
        /// Usage the server reported.
        usage: Usage,
    },
    /// The request failed.
    Failed {
        /// Request id.
        id: u64,
        /// When.
        at: Duration,
        /// Error category.
        kind: ErrorKind,
        /// Reason.
        message: String,
    },
}

impl EngineEvent {
    /// The request id the event belongs to.
    pub fn id(&self) -> u64 {
        match self {
            EngineEvent::Sent { id, .. }
            | EngineEvent::Chunk { id, .. }
            | EngineEvent::Reasoning { id, .. }
            | EngineEvent::Carried { id, .. }
            | EngineEvent::Checked { id, .. }
            | EngineEvent::Finished { id, .. }
            | EngineEvent::Failed { id, .. } => *id,
        }
    }

    /// When the event happened.
    pub fn at(&self) -> Duration {
        match self {
            EngineEvent::Sent { at, .. }
            | EngineEvent::Chunk { at, .. }
            | EngineEvent::Reasoning { at, .. }
            | EngineEvent::Carried { at, .. }
            | EngineEvent::Checked { at, .. }
            | EngineEvent::Finished { at, .. }
            | EngineEvent::Failed { at, .. } => *at,
        }
    }

    /// `true` for events that end a request.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            EngineEvent::Finished { .. } | EngineEvent::Failed { .. }
        )
    }
}

/// An engine-level failure (not a single request's: those are [`EngineEvent::Failed`]).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine cannot continue.
    #[error("engine failure: {0}")]
    Fatal(String),
}

/// A server that streams tokens. See the module docs for the contract.
pub trait Engine {
    /// The engine's clock: offset from the run's start.
    fn now(&self) -> Duration;

    /// Hand over a request at the current time.
    fn submit(&mut self, request: EngineRequest) -> Result<(), EngineError>;

    /// Let time pass until `deadline` (or, with `None`, until the next request ends or
    /// nothing is left to do), appending events in time order. Returns early after the
    /// first event that ends a request.
    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError>;

    /// Requests submitted and not yet finished or failed.
    fn in_flight(&self) -> usize;

    /// The engine-clock time of the next thing that will happen without a new submit, if
    /// the engine knows it (a virtual-time engine that has computed its next step does):
    /// a real-time host of a virtual engine (the example server) sleeps until then instead
    /// of polling. `None` (the default): unknown, or nothing left to do.
    fn next_event_at(&self) -> Option<Duration> {
        None
    }

    /// The requests the run will submit first, in the order they are due (the driver calls
    /// this once, before the first submit): an engine that must encode a request before it
    /// can send it (the HTTP client) may do that ahead, so that the send at the due time
    /// is quick. A request that is submitted without having been announced, or differently,
    /// must still work. The default ignores them.
    /// `upcoming` builds each request as it is taken, so an engine that ignores it costs
    /// nothing.
    fn prepare(&mut self, upcoming: &mut dyn Iterator<Item = EngineRequest>) {
        let _ = upcoming;
    }

    /// Drop request `id` (its client went away): the engine frees its slot and reports no
    /// further events for it. Returns `true` if the request was in flight and is now dropped;
    /// the default keeps the request running and returns `false`.
    fn cancel(&mut self, id: u64) -> bool {
        let _ = id;
        false
    }

    /// Empty the engine's prefix cache (vLLM's `POST /reset_prefix_cache`): `Some(true)`
    /// when it is empty afterwards, `Some(false)` when blocks in use kept it from emptying,
    /// `None` when the engine keeps no prefix cache (the default).
    fn reset_prefix_cache(&mut self) -> Option<bool> {
        None
    }

    /// The engine's own metrics in Prometheus' text format (what a real server shows on
    /// `/metrics`), if it keeps any; the simulator shows vLLM's. The default: `None`.
    fn metrics_text(&self) -> Option<String> {
        None
    }
}
