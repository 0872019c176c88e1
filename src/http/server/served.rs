//! The timeline plumbing: the virtual-time record of each served request
//! ([`ServedRequest`]) that the engine thread keeps with `record_timeline`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::engine_loop::{EngineLoop, FirstWrite, Slot};
#[cfg(doc)]
use super::ServerHandle;
use crate::engine::Engine;
use crate::record::{Outcome, RequestRecord};

/// One served request as the engine saw it, in virtual time.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedRequest {
    /// The client's `x-request-id` header, if it sent one.
    pub request_id: Option<String>,
    /// The response's `id` (`cmpl-N` / `chatcmpl-N`), which every chunk carries.
    pub response_id: String,
    /// Wall time since [`ServerHandle::origin`] at which the request arrived: when its
    /// first bytes reached the server's socket (the kernel's receive stamp on Linux; the
    /// read's time elsewhere), however long the server then took to parse it.
    pub received_wall: Duration,
    /// Wall time since [`ServerHandle::origin`] at which the engine thread handed the first
    /// token chunk to the request's HTTP task (its virtual time is `record.chunks[0].at`;
    /// the engine thread sleeps until the engine's next event, so this is its wake-up later;
    /// an engine that cannot tell its next event is polled, up to a `tick` later).
    pub first_release_wall: Option<Duration>,
    /// Wall time since [`ServerHandle::origin`] at which the request's HTTP task handed the
    /// first token chunk's bytes to hyper, which writes them to the socket (what remains of
    /// a client's TTFT error after this is the socket, the loopback and the client).
    pub first_write_wall: Option<Duration>,
    /// The engine's timeline: `sent_at` is the submission time, chunks and end as the engine
    /// reported them (virtual time, offsets from the engine's clock at server start).
    pub record: RequestRecord,
}

/// A request as the engine thread filed it when it handed over the request's end. The
/// request's HTTP task may write its first chunk only after that (the chunks wait in the
/// hand-off line), so the first write is read when the timeline is.
#[derive(Debug)]
pub(super) struct Filed {
    served: ServedRequest,
    first_write: FirstWrite,
    origin: Instant,
}

impl Filed {
    fn resolve(&self) -> ServedRequest {
        let mut served = self.served.clone();
        if served.first_write_wall.is_none() {
            served.first_write_wall = self
                .first_write
                .get()
                .map(|t| t.saturating_duration_since(self.origin));
        }
        served
    }
}

/// The filed requests, shared by the engine thread and the readers of the timeline.
pub(super) type Timeline = Arc<Mutex<Vec<Filed>>>;

/// The timeline as it stands.
pub(super) fn snapshot(timeline: &Timeline) -> Vec<ServedRequest> {
    timeline
        .lock()
        .map(|t| t.iter().map(Filed::resolve).collect())
        .unwrap_or_default()
}

impl<E: Engine> EngineLoop<E> {
    /// Keep (with `record_timeline`) a request that left the engine. `delivered`: its end was
    /// handed to the client.
    pub(super) fn finish_record(&mut self, slot: Slot, delivered: bool, reason: &str) {
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
                t.push(Filed {
                    served: ServedRequest {
                        request_id: slot.tag,
                        response_id: slot.response_id,
                        received_wall: slot.received.saturating_duration_since(self.origin),
                        first_release_wall: slot
                            .first_released
                            .map(|t| t.saturating_duration_since(self.origin)),
                        first_write_wall: None,
                        record,
                    },
                    first_write: slot.first_write,
                    origin: self.origin,
                });
            }
        }
    }
}
