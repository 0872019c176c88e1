//! The simulated server: a discrete-event model of vLLM 0.17 serving a [`Config`] (a
//! Qwen3.5-family model on one H100/H200 under vLLM flags) — a serial API-server frontend (render + tokenize per request), the V1 scheduler
//! (running requests first, then waiting ones FCFS under `max_num_batched_tokens`,
//! `max_num_seqs` and the KV/GDN-state block pool, preempting the newest request when blocks
//! run out, chunked prefill, MTP speculative decoding's verification and acceptance) and the
//! step time of [`super::model`] (operator tables or the calibrated roofline). It implements [`Engine`] in virtual time. With
//! prefix caching on, cached prompt blocks ([`super::prefix_cache`]) share the pool with the
//! running requests: hits skip prefill, unreferenced cached blocks are evicted when the pool
//! needs room, and [`Engine::reset_prefix_cache`] empties the cache.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
use crate::record::ErrorKind;
use crate::rng::{SplitMix64, GOLDEN_GAMMA};

pub use super::config::{Config, Params, CONFIG_NAMES};
use super::frontend::Frontend;
use super::metrics::{Gauges, SimMetrics};
use super::model::GRAMMAR_MASK_S;
use super::power::{EnergyMeter, PowerModel, StepWork};
use super::prefix_cache::{block_hashes, PrefixCache, PrefixCacheCounts};
use super::step_load::StepLoad;

#[derive(Debug, Clone)]
struct Req {
    id: u64,
    /// Prompt tokens including the chat template.
    prompt: u64,
    max_out: u64,
    /// Tokens to (re)compute before decoding: the prompt, plus generated tokens after a
    /// preemption.
    prefill_target: u64,
    computed: u64,
    generated: u64,
    blocks: u64,
    state_blocks: u64,
    /// Chained hashes of the prompt's full blocks (prefix caching on, prompt text known).
    hashes: Vec<u64>,
    /// Cached blocks this request references (hits, and blocks it computed and cached);
    /// they are the cache's, not counted in `blocks`.
    held: Vec<u64>,
    arrival_s: f64,
    /// Arrival at the API server (metrics).
    enter_s: f64,
    /// First scheduled (metrics).
    scheduled_s: Option<f64>,
    /// First token output (metrics).
    first_token_s: f64,
    /// The vision encoder's forward over the request's images, s, charged to the step
    /// that first schedules it (0 once paid, and for text).
    encoder_s: f64,
    /// Its answer follows a grammar: a token mask before each sampling step.
    constrained: bool,
}

/// The simulated server. See the module docs.
#[derive(Debug)]
pub struct H200Sim {
    config: Config,
    params: Params,
    now_s: f64,
    /// When the GPU finishes its current step.
    gpu_s: f64,
    /// The admission frontend.
    frontend: Frontend<Req>,
    /// When the output path has streamed everything so far.
    output_free_s: f64,
    total_blocks: u64,
    free_blocks: u64,
    /// Tokens per block: the model's hybrid page ([`super::spec::ModelSpec::hybrid_layout`]), doubled
    /// with an fp8 KV cache (the same page bytes hold twice the attention tokens; the GDN
    /// state pages are unchanged).
    block_tokens: u64,
    /// Blocks of linear-attention state each running sequence holds.
    state_blocks_per_seq: u64,
    /// Admitted by the frontend, not yet seen by the scheduler (arrival order).
    arriving: VecDeque<Req>,
    waiting: VecDeque<Req>,
    running: Vec<Req>,
    /// Events computed but not yet delivered, in time order.
    pending: VecDeque<EngineEvent>,
    /// `Sent` events to deliver first.
    sent: VecDeque<EngineEvent>,
    in_flight: usize,
    /// Whether the one-time cold-start cost has been paid.
    warm: bool,
    /// Ids submitted and not yet ended or cancelled.
    live: HashSet<u64>,
    scheduled: Vec<(usize, u64)>,
    /// Requests preempted so far (their blocks freed, recomputed later).
    preemptions: u64,
    /// Run-to-run variation, when [`Params::noise`] is set.
    noise: Option<super::noise::NoiseState>,
    /// vLLM's Prometheus counters and histograms ([`super::metrics`]).
    metrics: SimMetrics,
    /// Cached prompt blocks (prefix caching on): they hold pool blocks.
    cache: PrefixCache,
}

/// How many of `k` draft tokens are accepted for request `id` at output position
/// `generated`: draft `i` with probability [`super::config::mtp_position_acceptance`]`(p, i)`
/// given the previous one was, drawn from a hash of (id, position) so a run is
/// deterministic whatever the batch order.
fn accepted_drafts(id: u64, generated: u64, k: u64, p: f64) -> u64 {
    let mut draws = SplitMix64::new(
        id.wrapping_mul(GOLDEN_GAMMA)
            .wrapping_add(generated.wrapping_mul(0xD1B5_4A32_D192_ED03)),
    );
    let mut accepted = 0;
    for position in 1..=k {
        let u = (draws.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if u >= super::config::mtp_position_acceptance(p, position) {
            break;
        }
        accepted += 1;
    }
    accepted
}

fn dur(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

impl H200Sim {
    /// A freshly deployed server running `config` with its calibrated parameters (its first
    /// step pays [`Params::cold_start_s`]; see [`H200Sim::warmed_up`]).
    pub fn new(config: Config) -> H200Sim {
        let params = Params::for_config(&config);
        H200Sim::with_params(config, params)
    }

    /// A fresh server with explicit parameters.
    pub fn with_params(config: Config, params: Params) -> H200Sim {
        let layout = config.model.hybrid_layout();
        let total_blocks = (params.kv_pool_bytes / layout.block_bytes) as u64;
        let k = params.admission_concurrency;
        let params_noise = params.noise;
        // With speculative decoding vLLM gives each request 1 + k state slots per
        // linear-attention group (`MambaSpec::num_speculative_blocks`): the verification
        // writes the state after every draft token, so a rejected one can be rolled back.
        let state_blocks_per_seq = layout
            .state_blocks_per_seq
            .saturating_mul(1 + params.spec_tokens);
        let block_tokens = if config.kv_fp8 {
            2 * layout.block_tokens
        } else {
            layout.block_tokens
        };
        let mut metrics = SimMetrics::new(config.model());
        // vLLM exports a per-position counter for every draft position from the start.
        metrics.spec_accepted_per_pos = vec![0; usize::try_from(params.spec_tokens).unwrap_or(0)];
        // The GPU holds the weights and the KV pool (what `--gpu-memory-utilization` takes).
        let held_mib =
            config.gpu_memory_utilization() * config.gpu.memory_bytes / (1024.0 * 1024.0);
        metrics.power = Some(EnergyMeter::new(PowerModel::for_gpu(&config.gpu), held_mib));
        H200Sim {
            metrics,
            config,
            params,
            now_s: 0.0,
            gpu_s: 0.0,
            frontend: Frontend::new(k),
            output_free_s: 0.0,
            total_blocks,
            free_blocks: total_blocks,
            block_tokens,
            state_blocks_per_seq,
            arriving: VecDeque::new(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            pending: VecDeque::new(),
            sent: VecDeque::new(),
            in_flight: 0,
            warm: false,
            live: HashSet::new(),
            scheduled: Vec::new(),
            preemptions: 0,
            cache: PrefixCache::default(),
            noise: params_noise.map(super::noise::NoiseState::new),
        }
    }

    /// The prefix cache's counters so far (those behind `vllm:prefix_cache_queries_total`
    /// and `vllm:prefix_cache_hits_total`).
    pub fn prefix_cache_counts(&self) -> PrefixCacheCounts {
        PrefixCacheCounts {
            queries_tokens: self.metrics.prefix_cache_queries,
            hits_tokens: self.metrics.prefix_cache_hits,
        }
    }

    /// Blocks the prefix cache holds (referenced by running requests or evictable).
    pub fn cached_blocks(&self) -> usize {
        self.cache.len()
    }

    /// Frees `need` pool blocks if the free ones and the evictable cached ones allow it;
    /// `false` (nothing evicted) otherwise.
    fn make_room(&mut self, need: u64) -> bool {
        if need <= self.free_blocks {
            return true;
        }
        let short = need - self.free_blocks;
        if short > self.cache.evictable() as u64 {
            return false;
        }
        self.free_blocks += self.cache.evict(short as usize) as u64;
        true
    }

    /// Drops a request's claim on the pool: its own blocks return, its cached ones stay
    /// cached (evictable once nobody references them).
    fn free_req(&mut self, r: &mut Req) {
        self.free_blocks += r.blocks + r.state_blocks;
        r.blocks = 0;
        r.state_blocks = 0;
        self.cache.release(&r.held);
        r.held.clear();
    }

    /// A server that has already served traffic: no cold-start cost.
    pub fn warmed_up(mut self) -> H200Sim {
        self.warm = !self.params.cold_start_when_warm;
        self
    }

    /// The configuration served.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Samples the metrics every `interval` of virtual time from 0 (see
    /// [`H200Sim::metrics_series`]).
    pub fn sample_metrics_every(mut self, interval: Duration) -> H200Sim {
        self.metrics.sample_every(interval.as_secs_f64());
        self
    }

    /// The metrics sampled so far, plus a sample now; `None` without
    /// [`H200Sim::sample_metrics_every`].
    pub fn metrics_series(&self) -> Option<crate::observe::ServerSeries> {
        self.metrics.series(self.now_s, &self.gauges())
    }

    /// The counters and histograms behind `/metrics`.
    pub fn metrics(&self) -> &SimMetrics {
        &self.metrics
    }

    /// What the scheduler gauges show now (as vLLM's block pool counts usage, evictable
    /// cached blocks are free).
    pub fn gauges(&self) -> Gauges {
        let free = self.free_blocks + self.cache.evictable() as u64;
        Gauges {
            running: self.running.len(),
            waiting: self.waiting.len(),
            kv_cache_usage: 1.0 - free as f64 / self.total_blocks.max(1) as f64,
            preemptions: self.preemptions,
        }
    }

    fn blocks_for(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.block_tokens)
    }

    /// Moves requests that reached the engine by `t` into the waiting queue, rejecting those
    /// that can never run.
    fn take_arrivals(&mut self, t: f64) {
        let arriving = &mut self.arriving;
        self.frontend.advance_to(t, |at, mut r| {
            r.arrival_s = at;
            arriving.push_back(r);
        });
        while self.arriving.front().is_some_and(|r| r.arrival_s <= t) {
            let Some(r) = self.arriving.pop_front() else {
                break;
            };
            // Counts come from the request: saturate (a huge one is rejected below).
            let total = r.prompt.saturating_add(r.max_out);
            let need = self
                .blocks_for(total)
                .saturating_add(self.state_blocks_per_seq);
            let reason = if total > self.params.max_model_len {
                Some(format!(
                    "This model's maximum context length is {} tokens. However, you requested {} tokens ({} in the messages, {} in the completion).",
                    self.params.max_model_len,
                    total,
                    r.prompt,
                    r.max_out
                ))
            } else if need > self.total_blocks {
                Some(format!(
                    "request needs {need} KV blocks, the pool has {}",
                    self.total_blocks
                ))
            } else {
                None
            };
            match reason {
                Some(message) => {
                    self.pending.push_back(EngineEvent::Failed {
                        id: r.id,
                        at: dur(r.arrival_s + self.params.net_out_s),
                        kind: ErrorKind::Rejected,
                        message,
                    });
                }
                None => self.waiting.push_back(r),
            }
        }
    }

    fn preempt_last(&mut self) -> Option<Req> {
        let mut v = self.running.pop()?;
        self.preemptions += 1;
        self.free_req(&mut v);
        v.prefill_target = v.prompt + v.generated;
        v.computed = 0;
        Some(v)
    }

    /// Runs one engine step starting at `start`; returns false when there was nothing to
    /// schedule.
    fn step(&mut self, start: f64) -> bool {
        let g = self.gauges();
        self.metrics.sample_to(start, &g);
        let budget_total = self.params.max_batched_tokens;
        let mut budget = budget_total;
        let mut load = StepLoad::default();
        // The vision encoder's work for the images of requests scheduled this step.
        let mut encoder_s = 0.0;
        self.scheduled.clear();
        let mut preempted = false;
        let mut i = 0;
        while i < self.running.len() && budget > 0 {
            let r = &self.running[i];
            let n = if r.computed < r.prefill_target {
                (r.prefill_target - r.computed).min(budget)
            } else {
                // A decode step verifies the draft tokens too (none past the output budget).
                let left = r.max_out.saturating_sub(r.generated + 1);
                (1 + self.params.spec_tokens.min(left)).min(budget)
            };
            let need = self
                .blocks_for(r.computed + n)
                .saturating_sub(r.blocks + r.held.len() as u64);
            let mut gone = false;
            while !self.make_room(need) {
                preempted = true;
                let victim_is_me = self.running.len() == i + 1;
                if let Some(v) = self.preempt_last() {
                    self.scheduled.retain(|&(idx, _)| idx < self.running.len());
                    self.waiting.push_front(v);
                }
                if victim_is_me {
                    gone = true;
                    break;
                }
            }
            if gone {
                break;
            }
            let r = &mut self.running[i];
            self.free_blocks -= need;
            r.blocks += need;
            self.scheduled.push((i, n));
            budget -= n;
            i += 1;
        }
        if !preempted {
            while budget > 0 && self.running.len() < self.params.max_seqs {
                let Some(r) = self.waiting.front() else {
                    break;
                };
                // Whole cached blocks, leaving at least one prompt token to compute (a
                // preempted request finds its own prompt blocks again if they stayed cached).
                let hit_blocks = self
                    .cache
                    .lookup(&r.hashes)
                    .min((r.prompt.saturating_sub(1) / self.block_tokens) as usize);
                let cached = hit_blocks as u64 * self.block_tokens;
                let n = (r.prefill_target - cached).min(budget);
                let extra_state = if self.config.prefix_caching {
                    r.prompt / self.block_tokens
                } else {
                    0
                };
                let own = self.blocks_for(cached + n) - hit_blocks as u64;
                let need = own + self.state_blocks_per_seq + extra_state;
                // Pin the hit first so that making room cannot evict it.
                let hit: Vec<u64> = r.hashes[..hit_blocks].to_vec();
                self.cache.acquire(&hit);
                if !self.make_room(need) {
                    self.cache.release(&hit);
                    break;
                }
                let Some(mut r) = self.waiting.pop_front() else {
                    self.cache.release(&hit);
                    break;
                };
                self.free_blocks -= need;
                r.blocks = own;
                r.held = hit;
                r.state_blocks = self.state_blocks_per_seq + extra_state;
                r.computed = cached;
                encoder_s += std::mem::take(&mut r.encoder_s);
                if r.scheduled_s.is_none() {
                    r.scheduled_s = Some(start);
                    let queried = if self.config.prefix_caching {
                        r.prompt
                    } else {
                        0
                    };
                    self.metrics.admitted(start - r.arrival_s, queried, cached);
                }
                self.running.push(r);
                self.scheduled.push((self.running.len() - 1, n));
                budget -= n;
            }
        }
        if self.scheduled.is_empty() {
            return false;
        }
        let mut emitting = 0u64;
        // Sampled positions of constrained requests: each needs its grammar's token mask.
        let mut masked = 0u64;
        for &(idx, n) in &self.scheduled {
            let r = &self.running[idx];
            let prefill = r.computed < r.prefill_target;
            let rows = if prefill { 1 } else { n };
            let samples = !prefill || r.computed + n >= r.prefill_target;
            emitting += u64::from(samples);
            if r.constrained && samples {
                masked += rows;
            }
            load.add_sampled(n, r.computed, prefill, rows);
        }
        let step = &self.params.step;
        let mut step_s = step.step_seconds(&load)
            + encoder_s
            + masked as f64 * GRAMMAR_MASK_S
            + step.draft_seconds(
                self.params.spec_tokens,
                load.tokens,
                emitting,
                load.kv_tokens,
            );
        if let Some(n) = &mut self.noise {
            step_s = n.step_seconds(step_s);
        }
        if self.params.leak_per_hour > 0.0 {
            step_s *= 1.0 + self.params.leak_per_hour * start / 3600.0;
        }
        if let Some(meter) = &mut self.metrics.power {
            // The step's power spreads the target forward's work over the whole step, draft
            // passes included (the MTP layer's own work, one layer in 40, is left out).
            meter.step(start, step_s, &StepWork::of(step, &load));
        }
        let mut end = start + step_s;
        if !self.warm {
            // A fresh deployment's first batch pays the one-time kernel JIT/autotuning.
            end += self.params.cold_start_s;
            self.warm = true;
        }
        self.gpu_s = end;
        // The API server streams the step's chunks one after another, in batch order.
        let mut out_s = self.output_free_s.max(end);
        let mut finished = 0usize;
        for k in 0..self.scheduled.len() {
            let (idx, n) = self.scheduled[k];
            let r = &mut self.running[idx];
            let emitted = if r.computed < r.prefill_target {
                let before = r.computed;
                r.computed += n;
                if before < r.prompt && r.computed >= r.prompt && !r.hashes.is_empty() {
                    // The prompt's blocks are computed: cache those not cached yet.
                    let new = self
                        .cache
                        .insert_new(&r.hashes[r.held.len().min(r.hashes.len())..]);
                    r.blocks -= new.len() as u64;
                    r.held.extend(new);
                }
                u64::from(r.computed >= r.prefill_target)
            } else {
                // The verified token plus the accepted prefix of the n − 1 draft tokens.
                let accepted =
                    accepted_drafts(r.id, r.generated, n - 1, self.params.spec_acceptance);
                if n > 1 {
                    self.metrics.spec_drafts += 1;
                    self.metrics.spec_draft_tokens += n - 1;
                    self.metrics.spec_accepted_tokens += accepted;
                    self.metrics.accepted_at_positions(n - 1, accepted);
                }
                r.computed += 1 + accepted;
                1 + accepted
            };
            if emitted > 0 {
                out_s += self.params.chunk_s;
                let at = dur(out_s + self.params.net_out_s);
                if r.generated == 0 {
                    let prefill_s = end - r.scheduled_s.unwrap_or(start);
                    self.metrics
                        .first_token(r.prompt, out_s - r.enter_s, prefill_s);
                    r.first_token_s = out_s;
                }
                r.generated += emitted;
                self.metrics.generation_tokens += emitted;
                self.pending.push_back(EngineEvent::Chunk {
                    id: r.id,
                    at,
                    tokens: u32::try_from(emitted).unwrap_or(u32::MAX),
                });
                if r.generated >= r.max_out {
                    finished += 1;
                    let decode_s = out_s - r.first_token_s;
                    self.metrics
                        .finished(out_s - r.enter_s, decode_s, r.generated);
                    self.pending.push_back(EngineEvent::Finished {
                        id: r.id,
                        at,
                        usage: Usage {
                            prompt_tokens: Some(r.prompt),
                            completion_tokens: Some(r.generated),
                        },
                    });
                }
            }
        }
        self.output_free_s = out_s;
        if finished > 0 {
            let (mut done, running): (Vec<Req>, Vec<Req>) = std::mem::take(&mut self.running)
                .into_iter()
                .partition(|r| r.generated >= r.max_out);
            self.running = running;
            for r in &mut done {
                self.free_req(r);
            }
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
        true
    }

    /// Requests preempted so far (read by the tests; the example's report does not show it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn preemptions(&self) -> u64 {
        self.preemptions
    }

    /// The scheduler's invariants after a step (debug builds: every test run checks them on
    /// every step): the step's tokens fit `max_num_batched_tokens`, at most `max_num_seqs`
    /// run, every block is free, held by exactly one running request or cached (a cached
    /// block in use is referenced by a running request), and each running request holds the
    /// blocks its computed tokens need.
    #[cfg(debug_assertions)]
    fn check_invariants(&self) {
        let tokens: u64 = self.scheduled.iter().map(|&(_, n)| n).sum();
        assert!(
            tokens <= self.params.max_batched_tokens,
            "step scheduled {tokens} tokens, budget {}",
            self.params.max_batched_tokens
        );
        assert!(self.running.len() <= self.params.max_seqs);
        let held: u64 = self.running.iter().map(|r| r.blocks + r.state_blocks).sum();
        assert_eq!(
            held + self.free_blocks + self.cache.len() as u64,
            self.total_blocks,
            "blocks leaked or double-counted"
        );
        let referenced: usize = self.running.iter().map(|r| r.held.len()).sum();
        assert!(
            referenced >= self.cache.in_use(),
            "a cached block in use by nobody"
        );
        for r in &self.running {
            assert!(
                r.blocks + r.held.len() as u64 >= self.blocks_for(r.computed),
                "request {} under-allocated",
                r.id
            );
            assert!(r.generated <= r.max_out);
        }
        assert!(self
            .waiting
            .iter()
            .all(|r| r.blocks == 0 && r.state_blocks == 0 && r.held.is_empty()));
    }
}

impl Engine for H200Sim {
    fn now(&self) -> Duration {
        dur(self.now_s)
    }

    fn submit(&mut self, request: EngineRequest) -> Result<(), EngineError> {
        let p = &self.params;
        let prompt = request.prompt_tokens + p.chat_template_tokens;
        let in_engine = (self.running.len() + self.waiting.len()) as f64;
        let work = if request.shares_admission {
            0.0
        } else {
            p.admission_s * (1.0 + p.admission_load * in_engine)
        };
        let mut enter = self.now_s + p.net_in_s;
        if let Some(n) = &mut self.noise {
            enter = n.enter_s(enter);
        }
        // The cache finds shared blocks by hashing the prompt, as a server does
        // (`shared_prefix_tokens` is informational).
        let hashes = match (&request.prompt, self.config.prefix_caching) {
            (Some(text), true) => {
                let mut h = block_hashes(p.chat_template_tokens, text, self.block_tokens);
                h.truncate((prompt / self.block_tokens) as usize);
                h
            }
            _ => Vec::new(),
        };
        self.frontend.push(
            enter,
            work,
            Req {
                id: request.id,
                prompt,
                max_out: request.max_output_tokens.max(1),
                prefill_target: prompt,
                computed: 0,
                generated: 0,
                blocks: 0,
                state_blocks: 0,
                hashes,
                held: Vec::new(),
                arrival_s: 0.0,
                enter_s: enter,
                scheduled_s: None,
                first_token_s: 0.0,
                encoder_s: p.step.vision_encoder_seconds(&request.image_patches),
                constrained: request.constrained,
            },
        );
        self.in_flight += 1;
        self.live.insert(request.id);
        self.sent.push_back(EngineEvent::Sent {
            id: request.id,
            at: dur(self.now_s),
        });
        Ok(())
    }

    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        events.extend(self.sent.drain(..));
        let deadline_s = deadline.map(|d| d.as_secs_f64());
        loop {
            while let Some(ev) = self.pending.front() {
                let at = ev.at().as_secs_f64();
                if deadline_s.is_some_and(|d| at > d) {
                    self.now_s = self.now_s.max(deadline_s.unwrap_or(at));
                    return Ok(());
                }
                let Some(ev) = self.pending.pop_front() else {
                    break;
                };
                self.now_s = self.now_s.max(at);
                let terminal = ev.is_terminal();
                let id = ev.id();
                events.push(ev);
                if terminal {
                    self.in_flight -= 1;
                    self.live.remove(&id);
                    return Ok(());
                }
            }
            // Nothing pending: run the next step.
            let busy = !self.running.is_empty() || !self.waiting.is_empty();
            let start = if busy {
                self.gpu_s
            } else if let Some(a) = self
                .arriving
                .front()
                .map(|r| r.arrival_s)
                .or_else(|| self.frontend.next_completion())
            {
                self.gpu_s.max(a)
            } else {
                if let Some(d) = deadline_s {
                    self.now_s = self.now_s.max(d);
                }
                return Ok(());
            };
            if deadline_s.is_some_and(|d| start > d) {
                self.now_s = self.now_s.max(deadline_s.unwrap_or(start));
                return Ok(());
            }
            self.take_arrivals(start);
            if !self.step(start) {
                // Nothing fit: wait for the next arrival.
                match self
                    .arriving
                    .front()
                    .map(|r| r.arrival_s)
                    .or_else(|| self.frontend.next_completion())
                {
                    Some(a) => self.gpu_s = self.gpu_s.max(a),
                    None if self.pending.is_empty() => {
                        return Err(EngineError::Fatal(format!(
                            "simulator deadlock: {} waiting requests cannot be scheduled",
                            self.waiting.len()
                        )))
                    }
                    None => {}
                }
            }
        }
    }

    /// The first event already computed; else the next step's start while requests are
    /// running or waiting; else the next arrival or admission.
    fn next_event_at(&self) -> Option<Duration> {
        if !self.sent.is_empty() {
            return Some(dur(self.now_s));
        }
        if let Some(ev) = self.pending.front() {
            return Some(ev.at());
        }
        if !self.running.is_empty() || !self.waiting.is_empty() {
            return Some(dur(self.gpu_s.max(self.now_s)));
        }
        self.arriving
            .front()
            .map(|r| r.arrival_s)
            .or_else(|| self.frontend.next_completion())
            .map(dur)
    }

    /// Drops request `id` wherever it is (frontend, waiting, running): its blocks are freed
    /// and no further events are reported for it.
    fn cancel(&mut self, id: u64) -> bool {
        if !self.live.remove(&id) {
            return false;
        }
        self.in_flight -= 1;
        self.pending.retain(|e| e.id() != id);
        self.sent.retain(|e| e.id() != id);
        if let Some(i) = self.running.iter().position(|r| r.id == id) {
            let mut r = self.running.remove(i);
            self.free_req(&mut r);
        } else if let Some(i) = self.waiting.iter().position(|r| r.id == id) {
            self.waiting.remove(i);
        } else if let Some(i) = self.arriving.iter().position(|r| r.id == id) {
            self.arriving.remove(i);
        } else {
            // Still in the admission frontend, or already finished with its events (dropped
            // above) undelivered: either way nothing else holds it.
            self.frontend.remove(|r| r.id == id);
        }
        true
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn metrics_text(&self) -> Option<String> {
        Some(self.metrics.render_at(&self.gauges(), self.now_s))
    }

    /// Evicts every cached block no running request uses; `Some(true)` when the cache is
    /// then empty (vLLM refuses a reset while blocks are in use: `Some(false)`). `None`
    /// with prefix caching off.
    fn reset_prefix_cache(&mut self) -> Option<bool> {
        if !self.config.prefix_caching {
            return None;
        }
        let n = self.cache.evictable();
        self.free_blocks += self.cache.evict(n) as u64;
        Some(self.cache.is_empty())
    }
}

#[cfg(test)]
mod tests;
