//! A deterministic virtual-time engine for HTTP tests and the load check: every request gets
//! its first chunk `ttft` after submission and a chunk every `tpot` after that, carrying
//! `tokens_per_chunk` tokens, until `max_output_tokens`; unlimited concurrency.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use servebench::driver::arrivals::Arrivals;
use servebench::driver::workload::WorkItem;
use servebench::driver::RunOptions;
use servebench::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
use servebench::record::ErrorKind;

pub struct TestEngine {
    pub ttft: Duration,
    pub tpot: Duration,
    pub tokens_per_chunk: u32,
    /// Prompts longer than this are rejected with a Failed event at submission.
    pub max_prompt: u64,
    now: Duration,
    heap: BinaryHeap<Reverse<(Duration, u64)>>,
    reqs: HashMap<u64, (u64, u64, u64)>, // id -> (produced, max, prompt)
    rejected: Vec<(u64, u64)>,
}

impl TestEngine {
    pub fn new(ttft_ms: u64, tpot_ms: u64, tokens_per_chunk: u32) -> Self {
        TestEngine {
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

impl Engine for TestEngine {
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

/// `n` Random-dataset work items (no prompt text: the HTTP client synthesizes it).
pub fn work(n: usize, input: u64, output: u64) -> Vec<WorkItem> {
    vec![
        WorkItem {
            prompt_tokens: input,
            output_tokens: output,
            prompt: None,
            shared_prefix_tokens: 0,
        };
        n
    ]
}

/// Run `work` through the load driver: arrivals `gap_ms` apart (all at once for 0), at most
/// `cap` in flight, a 60 s limit.
pub fn run(
    engine: &mut impl Engine,
    work: &[WorkItem],
    gap_ms: u64,
    cap: usize,
) -> Vec<servebench::record::RequestRecord> {
    let opts = RunOptions {
        arrivals: if gap_ms == 0 {
            Arrivals::AllAtOnce
        } else {
            Arrivals::Constant {
                rate: 1000.0 / gap_ms as f64,
            }
        },
        max_concurrency: Some(cap),
        max_duration: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let out = servebench::driver::run(engine, work, &opts).expect("driver");
    assert!(out.aborted.is_none(), "{:?}", out.aborted);
    out.records
}
