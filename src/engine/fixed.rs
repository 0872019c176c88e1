//! A deterministic virtual-time engine for tests, benchmarks and examples
//! ([`FixedEngine`]): every request gets its first chunk `ttft` after submission and a
//! chunk every `tpot` after that, carrying `tokens_per_chunk` tokens, until its
//! `max_output_tokens`; unlimited concurrency; prompts longer than `max_prompt` are
//! rejected with a [`EngineEvent::Failed`] at submission.
//!
//! ```
//! use std::time::Duration;
//! use servebench::engine::FixedEngine;
//! use servebench::engine::{Engine, EngineEvent, EngineRequest};
//!
//! let mut e = FixedEngine::new(100, 10, 2);
//! e.submit(EngineRequest {
//!     id: 1,
//!     prompt_tokens: 8,
//!     prompt: None,
//!     max_output_tokens: 3,
//!     ignore_eos: true,
//!     arrival: Duration::ZERO,
//!     shared_prefix_tokens: 0,
//!     image_patches: Vec::new(),
//!     shares_admission: false,
//!     constrained: false,
//! })
//! .unwrap();
//! let mut events = Vec::new();
//! while e.in_flight() > 0 {
//!     e.advance(None, &mut events).unwrap();
//! }
//! let at: Vec<(Duration, u32)> = events
//!     .iter()
//!     .filter_map(|ev| match ev {
//!         EngineEvent::Chunk { at, tokens, .. } => Some((*at, *tokens)),
//!         _ => None,
//!     })
//!     .collect();
//! assert_eq!(at, vec![(Duration::from_millis(100), 2), (Duration::from_millis(110), 1)]);
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use super::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
use crate::record::ErrorKind;

/// The engine of the module docs.
#[derive(Debug, Clone)]
pub struct FixedEngine {
    /// Time from submission to the first chunk.
    pub ttft: Duration,
    /// Time between chunks.
    pub tpot: Duration,
    /// Tokens in each chunk (the last one carries what is left).
    pub tokens_per_chunk: u32,
    /// Prompts longer than this are rejected with a Failed event at submission.
    pub max_prompt: u64,
    now: Duration,
    heap: BinaryHeap<Reverse<(Duration, u64)>>,
    /// id → (produced, max, prompt).
    reqs: HashMap<u64, (u64, u64, u64)>,
    rejected: Vec<(u64, u64)>,
}

impl FixedEngine {
    /// An engine with the given TTFT and TPOT in ms and tokens per chunk, at time zero,
    /// accepting any prompt.
    pub fn new(ttft_ms: u64, tpot_ms: u64, tokens_per_chunk: u32) -> Self {
        FixedEngine {
            ttft: Duration::from_millis(ttft_ms),
            tpot: Duration::from_millis(tpot_ms),
            tokens_per_chunk,
            max_prompt: u64::MAX,
            now: Duration::ZERO,
            heap: BinaryHeap::new(),
            reqs: HashMap::new(),
            rejected: Vec::new(),
        }
    }
}

impl Engine for FixedEngine {
    fn now(&self) -> Duration {
        self.now
    }

    fn submit(&mut self, r: EngineRequest) -> Result<(), EngineError> {
        if r.prompt_tokens > self.max_prompt {
            self.rejected.push((r.id, r.prompt_tokens));
            return Ok(());
        }
        self.reqs
            .insert(r.id, (0, r.max_output_tokens, r.prompt_tokens));
        self.heap.push(Reverse((self.now + self.ttft, r.id)));
        Ok(())
    }

    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        if let Some((id, prompt)) = self.rejected.pop() {
            events.push(EngineEvent::Failed {
                id,
                at: self.now,
                kind: ErrorKind::Rejected,
                message: format!("prompt of {prompt} tokens is too long"),
            });
            return Ok(());
        }
        loop {
            let Some(&Reverse((t, id))) = self.heap.peek() else {
                if let Some(d) = deadline {
                    self.now = self.now.max(d);
                }
                return Ok(());
            };
            if deadline.is_some_and(|d| t > d) {
                self.now = self.now.max(deadline.unwrap_or(t));
                return Ok(());
            }
            self.heap.pop();
            let Some(state) = self.reqs.get_mut(&id) else {
                continue; // cancelled
            };
            self.now = t;
            let tokens = u64::from(self.tokens_per_chunk).min(state.1 - state.0);
            state.0 += tokens;
            events.push(EngineEvent::Chunk {
                id,
                at: t,
                tokens: tokens as u32,
            });
            if state.0 >= state.1 {
                let (produced, _, prompt) = *state;
                self.reqs.remove(&id);
                events.push(EngineEvent::Finished {
                    id,
                    at: t,
                    usage: Usage {
                        prompt_tokens: Some(prompt),
                        completion_tokens: Some(produced),
                    },
                });
                return Ok(());
            }
            self.heap.push(Reverse((t + self.tpot, id)));
        }
    }

    fn in_flight(&self) -> usize {
        self.reqs.len() + self.rejected.len()
    }

    fn cancel(&mut self, id: u64) -> bool {
        self.reqs.remove(&id).is_some()
    }
}
