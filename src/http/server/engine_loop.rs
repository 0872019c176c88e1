//! The engine thread: [`Control`] messages from the HTTP tasks, and the loop that advances
//! the engine to the virtual "now" and hands each request's chunks to its bounded channel
//! (coalescing when a client reads slowly).

use std::collections::HashMap;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::handoff::{Gate, ItemTx, SendError, STALE};
use super::prometheus::{inc, Counters};
use super::served::Timeline;
use crate::engine::{Engine, EngineEvent, EngineRequest, Usage};
use crate::record::{Chunk, ErrorKind, Outcome, RequestRecord};

/// How a stream ended, as the engine reported it.
#[derive(Debug)]
pub(super) enum End {
    Finished(Usage),
    Failed { kind: ErrorKind, message: String },
}

/// The instant a request's first token chunk went to hyper, shared by its HTTP task (which
/// sets it) and the engine thread (which keeps it in the timeline).
pub(super) type FirstWrite = std::sync::Arc<std::sync::OnceLock<Instant>>;

/// What the engine thread hands to a request's HTTP task.
#[derive(Debug)]
pub(super) struct Item {
    pub(super) tokens: u32,
    pub(super) end: Option<End>,
}

pub(super) enum Control {
    Submit {
        request: EngineRequest,
        tx: ItemTx,
        tag: Option<String>,
        response_id: String,
        received: Instant,
        /// Set by the request's HTTP task when it hands the first token chunk's bytes to
        /// hyper.
        first_write: FirstWrite,
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
pub(super) const MAX_PENDING_CHUNKS: usize = 64;

pub(super) struct Slot {
    pub(super) tx: ItemTx,
    /// Chunks not yet handed over (bounded: beyond [`MAX_PENDING_CHUNKS`] they merge).
    pub(super) pending: std::collections::VecDeque<u32>,
    pub(super) end: Option<End>,
    pub(super) dirty: bool,
    pub(super) tag: Option<String>,
    pub(super) response_id: String,
    pub(super) received: Instant,
    /// When the engine thread handed the first token chunk to the HTTP task.
    pub(super) first_released: Option<Instant>,
    /// When the HTTP task handed the first token chunk's bytes to hyper.
    pub(super) first_write: FirstWrite,
    pub(super) record: Option<RequestRecord>,
}

pub(super) struct EngineLoop<E> {
    pub(super) engine: E,
    pub(super) origin: Instant,
    pub(super) speed: f64,
    pub(super) slots: HashMap<u64, Slot>,
    pub(super) dirty: Vec<u64>,
    /// Wakes the HTTP tasks a window at a time ([`super::handoff`]).
    pub(super) gate: Arc<Gate>,
    pub(super) counters: Arc<Counters>,
    pub(super) timeline: Option<Timeline>,
    pub(super) dead: Option<String>,
}

impl<E: Engine> EngineLoop<E> {
    pub(super) fn virtual_now(&self) -> Duration {
        let secs = self.origin.elapsed().as_secs_f64() * self.speed;
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
    }

    pub(super) fn run(mut self, ctrl: std_mpsc::Receiver<Control>, tick: Duration) {
        let mut msgs = Vec::new();
        let mut events = Vec::new();
        loop {
            // Open streams keep the clock ticking even when the engine reports nothing in
            // flight (a virtual engine may have computed events it has not delivered yet);
            // streams waiting in the gate's line keep it pumping (their tasks may be stuck
            // behind stalled ones).
            let busy =
                self.engine.in_flight() > 0 || !self.slots.is_empty() || self.gate.has_queued();
            let first = if busy {
                match ctrl.recv_timeout(self.wait(tick)) {
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
                        first_write,
                    } => {
                        if let Some(reason) = &self.dead {
                            tx.fail(reason.clone());
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
                                        first_write,
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

    /// How long the engine thread may sleep while busy: until the engine's next event in
    /// wall time, at most `tick` (an engine that cannot tell is polled every `tick`).
    fn wait(&self, tick: Duration) -> Duration {
        let tick = if self.gate.has_queued() {
            tick.min(STALE)
        } else {
            tick
        };
        let Some(next) = self.engine.next_event_at() else {
            return tick;
        };
        let ahead = next.saturating_sub(self.virtual_now());
        Duration::try_from_secs_f64(ahead.as_secs_f64() / self.speed).map_or(tick, |d| d.min(tick))
    }

    /// The engine failed (`reason`: its error, which names itself an engine failure): hand
    /// over what it produced before, then fail every open stream and every later request.
    pub(super) fn die(&mut self, reason: String, extra: Option<ItemTx>) {
        self.flush();
        for (_, slot) in self.slots.drain() {
            slot.tx.fail(reason.clone());
        }
        if let Some(tx) = extra {
            tx.fail(reason.clone());
        }
        self.dirty.clear();
        self.dead = Some(reason);
    }

    pub(super) fn step_to(&mut self, target: Duration, events: &mut Vec<EngineEvent>) {
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

    pub(super) fn dispatch(&mut self, ev: EngineEvent) {
        let id = ev.id();
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        match ev {
            EngineEvent::Sent { .. }
            | EngineEvent::Carried { .. }
            | EngineEvent::Checked { .. } => return,
            EngineEvent::Reasoning { split, .. } => {
                if let Some(r) = &mut slot.record {
                    r.reasoning = Some(split);
                }
            }
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
    ///
    /// Streams still waiting for their first token go first and are woken at once; the
    /// others queue in the [`Gate`], which wakes a window of them at a time, so a request's
    /// TTFT does not hold the time the server takes to write a whole decode step's chunks.
    pub(super) fn flush(&mut self) {
        let mut ids = std::mem::take(&mut self.dirty);
        ids.sort_by_key(|id| {
            self.slots
                .get(id)
                .is_none_or(|slot| slot.first_released.is_some())
        });
        for id in ids {
            self.hand_over(id);
        }
        self.pump();
    }

    /// Wake streams whose turn has come although no task ran to wake them.
    fn pump(&self) {
        if self.gate.has_queued() {
            // Streams woken long ago whose tasks could not run no longer hold the queue up.
            self.gate.pump(Instant::now());
        }
    }

    /// Hand over what stream `id` has pending.
    fn hand_over(&mut self, id: u64) {
        let Some(slot) = self.slots.get_mut(&id) else {
            return;
        };
        let first = slot.first_released.is_none();
        let mut outcome = Ok(false);
        while !slot.pending.is_empty() || slot.end.is_some() {
            let tokens = slot.pending.front().copied().unwrap_or(0);
            let end = if slot.pending.len() <= 1 {
                slot.end.take()
            } else {
                None
            };
            let ended = end.is_some();
            match slot.tx.send(Item { tokens, end }, first) {
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
                Err(SendError::Full(item)) => {
                    if item.end.is_some() {
                        slot.end = item.end;
                    }
                    outcome = Err(true);
                    break;
                }
                Err(SendError::Closed) => {
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
