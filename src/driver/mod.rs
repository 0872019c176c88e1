//! The load driver: turns a [`Profile`] into requests ([`workload`]), schedules them
//! ([`Arrivals`]), sends them to an [`Engine`] under a client-side concurrency cap, and
//! collects one [`RequestRecord`] per request: records only (callers compute the figures
//! once, with `servebench::metrics::summarize`).
//!
//! The driver only talks to the engine through the [`Engine`] contract, so the same loop
//! drives a virtual-time simulator (the run takes milliseconds of wall time) and a
//! real-time HTTP engine.
//!
//! ```
//! use std::time::Duration;
//! use servebench::driver::{run, RunOptions, Arrivals, workload::WorkItem};
//! use servebench::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
//!
//! /// Answers every request with one chunk, 10 ms after it was sent.
//! struct Echo { now: Duration, queue: Vec<(Duration, u64, u64)> }
//! impl Engine for Echo {
//!     fn now(&self) -> Duration { self.now }
//!     fn submit(&mut self, r: EngineRequest) -> Result<(), EngineError> {
//!         self.queue.push((self.now + Duration::from_millis(10), r.id, r.max_output_tokens));
//!         Ok(())
//!     }
//!     fn advance(&mut self, deadline: Option<Duration>, ev: &mut Vec<EngineEvent>) -> Result<(), EngineError> {
//!         self.queue.sort();
//!         match self.queue.first().copied() {
//!             Some((at, id, n)) if deadline.map_or(true, |d| at <= d) => {
//!                 self.queue.remove(0);
//!                 self.now = at;
//!                 ev.push(EngineEvent::Chunk { id, at, tokens: n as u32 });
//!                 ev.push(EngineEvent::Finished { id, at, usage: Usage::default() });
//!             }
//!             _ => { if let Some(d) = deadline { self.now = self.now.max(d) } }
//!         }
//!         Ok(())
//!     }
//!     fn in_flight(&self) -> usize { self.queue.len() }
//! }
//!
//! let work = vec![WorkItem { prompt_tokens: 8, output_tokens: 4, prompt: None, shared_prefix_tokens: 0 }; 10];
//! let opts = RunOptions { arrivals: Arrivals::Constant { rate: 100.0 }, max_concurrency: Some(2), ..RunOptions::default() };
//! let out = run(&mut Echo { now: Duration::ZERO, queue: vec![] }, &work, &opts).unwrap();
//! assert_eq!(out.records.len(), 10);
//! assert!(out.records.iter().all(|r| r.outcome.is_success() && r.client_output_tokens() == 4));
//! // Records only: the caller computes the figures once, in its convention.
//! use servebench::metrics::{summarize, MetricsOptions};
//! let result = summarize(&out.records, None, &MetricsOptions::load_run(), out.max_concurrency);
//! assert_eq!(result.successful_requests, Some(10));
//! ```

pub(crate) mod agentic;
pub(crate) mod arrivals;
pub(crate) mod conversations;
pub(crate) mod datasets;
pub(crate) mod gone;
pub(crate) mod image_file;
pub mod images;
pub(crate) mod lora;
pub(crate) mod phases;
// Only `noise::verdict`'s tests still reach `crate::rng::Rng` by this older path.
#[cfg(test)]
pub(crate) mod rng;
pub(crate) mod saturation;
pub(crate) mod shard;
pub(crate) mod stages;
pub(crate) mod start;
pub(crate) mod stop;
pub(crate) mod sweep;
pub mod tokenized;
pub(crate) mod turns;
pub mod workload;

pub use arrivals::{rate_schedule, Arrivals, ArrivalsError, RampStrategy};
pub use conversations::{agent_sessions, agentic_trace, multi_turn, sharegpt_multi_turn};
pub use datasets::{
    mooncake_block_text, DatasetError, DatasetSpec, SessionSpec, ThinkTime, MOONCAKE_BLOCK_TOKENS,
};
pub use gone::{GoneWatch, DEFAULT_SERVER_GONE, GONE_MIN_FAILURES};
pub use lora::{LoraError, LoraSplit};
pub use phases::{Phase, PhaseArrivals, Phases, PhasesError};
pub use saturation::{OverSaturation, SaturationWatch};
pub use shard::{Shard, ShardError};
pub use start::{
    barrier, barrier_file, barrier_until, rfc3339, BarrierOptions, StartAt, StartError,
};
pub use stop::StopSignal;
pub use sweep::{sweep, SweepOptions, SweepStep};
pub use turns::TurnPlan;
// The sweep's data (defined with the result schema), beside `sweep` that returns it.
pub use crate::result::{sweep_to_file_bytes, Strategy, Sweep, SweepRun, SWEEP_FORMAT};

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use crate::collector::{Collector, ManualClock, RequestHandle};
use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest};
use crate::profile::Profile;
use crate::record::{ErrorKind, RequestRecord, TurnRef};
use turns::Sessions;
use workload::{WorkItem, WorkloadError, WorkloadOptions};

/// guidellm's default cap on requests in flight (`settings.max_concurrency`); the seed's
/// runs (`--rate 1000`) hit it.
pub const GUIDELLM_MAX_CONCURRENCY: usize = 512;

/// How the driver sends a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// When requests are scheduled to arrive.
    pub arrivals: Arrivals,
    /// Client-side cap on requests in flight (`None`: no cap). A request whose arrival time
    /// has come waits for a free slot; its [`RequestRecord::scheduled_at`] keeps the
    /// scheduled time and `sent_at` the time it was actually sent.
    pub max_concurrency: Option<usize>,
    /// Send at most this many requests (`None`: the whole workload).
    pub max_requests: Option<u64>,
    /// A staged fill: the concurrency cap is reached over this time from the start, not
    /// at once (the cap at `t` is `⌈cap × t / fill⌉`, at least 1), so that a run that
    /// opens with a burst does not send all of it at t = 0 (MLCommons' "feathered
    /// starts"). `None`: the whole cap from the start.
    pub fill: Option<Duration>,
    /// Caps that change during the run (a phased run, [`Phases::caps`]): from each offset
    /// (from the start) the cap in force, `None` for the run's own. Empty: the run's cap
    /// throughout.
    pub caps: Vec<(Duration, Option<usize>)>,
    /// Stop after this much (engine-clock) time: nothing is sent after it and requests still
    /// in flight are recorded as [`Outcome::Incomplete`](crate::record::Outcome::Incomplete).
    pub max_duration: Option<Duration>,
    /// Client-side work per prompt token before a request can be sent, done serially
    /// (guidellm synthesizing random prompts: about 3.4 µs per token). Zero by default.
    pub client_prep_per_prompt_token: Duration,
    /// Send only this shard's part of the workload ([`Shard`]): the whole workload and
    /// schedule are built, request `i` is sent by shard `i mod N + 1` at its original offset
    /// with its original id, and `max_concurrency` is split over the shards
    /// ([`Shard::cap_share`]). `None`: the whole run. (Multi-turn runs cannot be sharded.)
    pub shard: Option<Shard>,
    /// The engine-clock instant the schedule counts from (a start agreed between shards):
    /// the driver waits for it; request `i` is scheduled at `start_at + offset_i` (the
    /// records keep the engine's clock). `None`: now.
    pub start_at: Option<Duration>,
    /// Fixed send offsets, one per request (trace replay): they replace `arrivals`.
    pub send_at: Option<Vec<Duration>>,
    /// Conversation structure, one per request (multi-turn): turn `k > 1` is sent when turn
    /// `k − 1` of its conversation ended plus its think time, and `max_concurrency` counts
    /// conversations (a conversation holds its slot from its first turn's send to its last
    /// turn's end). First turns arrive by `arrivals`, one arrival per conversation.
    pub turns: Option<Vec<TurnPlan>>,
    /// Stop the run early when the server falls behind for good (see
    /// [`OverSaturation`]); requests in flight are then recorded as incomplete.
    pub over_saturation: Option<OverSaturation>,
    /// Polled while the run goes on: once raised nothing more is sent, and the requests in
    /// flight get [`drain`](Self::drain) to finish before they are cut off (at once for
    /// [`StopSignal::stop_now`]). `None`: the run cannot be stopped from outside.
    pub stop: Option<StopSignal>,
    /// How long requests in flight may still run after `stop` is raised (engine clock).
    pub drain: Duration,
    /// Stop early, setting [`RunOutput::aborted`], once requests have failed to connect one
    /// after another for this long ([`gone::GoneWatch`]): the server is gone. `None`: never.
    pub server_gone: Option<Duration>,
    /// Hand each finished record to this sink, keeping what it returns
    /// ([`crate::collector::RecordSink`]: a soak streams whole records to disk and keeps a
    /// slim copy). `None`: keep every record.
    pub sink: Option<crate::collector::RecordSink>,
}

/// Default of [`RunOptions::drain`].
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(10);

/// How often the driver looks at [`RunOptions::stop`] while it waits (engine clock).
const STOP_POLL: Duration = Duration::from_millis(50);

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            arrivals: Arrivals::AllAtOnce,
            max_concurrency: None,
            max_requests: None,
            fill: None,
            caps: Vec::new(),
            max_duration: None,
            client_prep_per_prompt_token: Duration::ZERO,
            shard: None,
            start_at: None,
            send_at: None,
            turns: None,
            over_saturation: None,
            stop: None,
            drain: DEFAULT_DRAIN,
            server_gone: None,
            sink: None,
        }
    }
}

impl RunOptions {
    /// The options guidellm uses for `profile`: constant rate, in-flight cap =
    /// `profile.max_concurrency` or [`GUIDELLM_MAX_CONCURRENCY`], `total_requests` requests.
    pub fn for_profile(profile: &Profile) -> RunOptions {
        let cap = profile
            .max_concurrency
            .and_then(|c| usize::try_from(c).ok())
            .unwrap_or(GUIDELLM_MAX_CONCURRENCY);
        RunOptions {
            arrivals: Arrivals::for_profile(profile),
            max_concurrency: Some(cap),
            max_requests: Some(profile.total_requests),
            ..RunOptions::default()
        }
    }
}

/// What a run produced: records only (they come through a [`Collector`]). Callers compute
/// the figures once, in the convention they report (`servebench::metrics::summarize`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// One record per request sent, in request-id order (id = index in the workload).
    pub records: Vec<RequestRecord>,
    /// The client cap on requests in flight the run was sent with (`vllm bench serve`
    /// reports it as "Maximum request concurrency").
    pub max_concurrency: Option<usize>,
    /// The profile the workload was built from ([`run_profile`]); `None` for [`run`].
    pub profile: Option<Profile>,
    /// Set when the engine failed fatally and the run stopped early: the engine's message.
    pub aborted: Option<String>,
    /// Set when [`RunOptions::stop`] or the over-saturation detector
    /// ([`RunOptions::over_saturation`]) stopped the run: the reason.
    pub stopped: Option<String>,
    /// The workload that was sent ([`run_profile`]; empty for [`run`], whose caller holds
    /// it): request `id`'s item is `work[id]`.
    pub work: Vec<WorkItem>,
}

/// The driver could not run.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The arrival process is invalid.
    #[error(transparent)]
    Arrivals(#[from] ArrivalsError),
    /// The workload could not be built.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// The engine reported an event for a request the driver does not have in flight.
    #[error("engine reported an event for request {0}, which is not in flight")]
    UnknownRequest(u64),
    /// A concurrency cap of zero.
    #[error("max_concurrency must be at least 1")]
    ZeroConcurrency,
    /// The shard cannot take its part of the run.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A structured dataset could not be built.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// `send_at` or `turns` does not have one entry per request, or a conversation's turns
    /// are out of order.
    #[error("bad run plan: {0}")]
    BadPlan(String),
}

/// Builds `profile`'s workload and runs it with [`RunOptions::for_profile`] (adjusted by
/// `adjust`): the one-call path the CLI and the simulator example use.
pub fn run_profile<E: Engine + ?Sized>(
    engine: &mut E,
    profile: &Profile,
    workload_options: &WorkloadOptions,
    adjust: impl FnOnce(&mut RunOptions),
) -> Result<RunOutput, DriverError> {
    let mut opts = RunOptions::for_profile(profile);
    let work = match &profile.dataset {
        crate::profile::Dataset::Structured(spec) => {
            let plan = spec.build(Some(profile.total_requests))?;
            plan.apply(&mut opts);
            plan.items
        }
        _ => workload::build(profile, workload_options)?,
    };
    adjust(&mut opts);
    let mut out = run(engine, &work, &opts)?;
    out.profile = Some(profile.clone());
    out.work = work;
    Ok(out)
}

/// Runs `work` against `engine`. See the module docs.
///
/// Per-request failures ([`EngineEvent::Failed`], or `submit` returning an error) become
/// records with [`Outcome::Error`](crate::record::Outcome::Error); a failing `advance` ends the run, records the requests
/// in flight as errors and sets [`RunOutput::aborted`].
pub fn run<E: Engine + ?Sized>(
    engine: &mut E,
    work: &[WorkItem],
    opts: &RunOptions,
) -> Result<RunOutput, DriverError> {
    let mut cap = opts.max_concurrency.unwrap_or(usize::MAX);
    if cap == 0 {
        return Err(DriverError::ZeroConcurrency);
    }
    let shard = opts.shard.unwrap_or(Shard::WHOLE);
    if opts.max_concurrency.is_some() {
        cap = shard.cap_share(cap)?;
    }
    if opts.turns.is_some() && shard != Shard::WHOLE {
        return Err(DriverError::BadPlan(
            "multi-turn runs cannot be sharded (a conversation's turns would be split)".into(),
        ));
    }
    let n = opts
        .max_requests
        .and_then(|m| usize::try_from(m).ok())
        .map_or(work.len(), |m| m.min(work.len()));
    let mut conv = Sessions::new(n, opts.turns.as_deref()).map_err(DriverError::BadPlan)?;
    // First turns (every request without sessions) arrive by the schedule.
    let all_roots: Vec<usize> = (0..n).filter(|&i| conv.is_root(i)).collect();
    // The whole run's schedule; this shard sends its own part of it.
    let all_at = match &opts.send_at {
        Some(s) if s.len() < n => {
            return Err(DriverError::BadPlan(format!(
                "{} send times for {n} requests",
                s.len()
            )))
        }
        Some(s) => all_roots.iter().map(|&i| s[i]).collect(),
        None => opts.arrivals.schedule(all_roots.len())?,
    };
    let (roots, mut root_at): (Vec<usize>, Vec<Duration>) = all_roots
        .iter()
        .zip(all_at)
        .filter(|(&i, _)| shard.owns(i))
        .map(|(&i, t)| (i, t))
        .unzip();
    if !opts.client_prep_per_prompt_token.is_zero() {
        let mut ready = Duration::ZERO;
        for (t, &i) in root_at.iter_mut().zip(&roots) {
            ready = ready.saturating_add(
                opts.client_prep_per_prompt_token
                    .saturating_mul(u32::try_from(work[i].prompt_tokens).unwrap_or(u32::MAX)),
            );
            *t = (*t).max(ready);
        }
    }
    // Announce the first requests in the order they are due (prompts up to 256 MiB), so
    // that an engine that encodes requests may do it ahead of their send times.
    {
        let mut order: Vec<(Duration, usize)> =
            root_at.iter().copied().zip(roots.iter().copied()).collect();
        order.sort_unstable();
        let mut bytes = 0usize;
        let mut upcoming = order
            .into_iter()
            .take_while(|&(_, i)| {
                bytes += work[i].prompt.as_ref().map_or(0, String::len);
                bytes <= PREPARE_BYTES
            })
            .map(|(t, i)| request_of(i, &work[i], t));
        engine.prepare(&mut upcoming);
    }
    let origin = opts.start_at.unwrap_or_else(|| engine.now());
    // Absolute times; a limit past the clock's range is no limit.
    for t in &mut root_at {
        *t = origin.saturating_add(*t);
    }
    let mut due_roots: Vec<Duration> = root_at.clone();
    due_roots.sort_unstable();
    let mut scheduled = vec![Duration::ZERO; n];
    let mut roots_queue: BinaryHeap<Reverse<(Duration, usize)>> = BinaryHeap::new();
    for (&i, &t) in roots.iter().zip(&root_at) {
        scheduled[i] = t;
        roots_queue.push(Reverse((t, i)));
    }
    let end = opts.max_duration.and_then(|d| origin.checked_add(d));
    // The cap at `now` (the staged fill), and when it next grows.
    let fill = opts.fill.filter(|f| !f.is_zero() && cap < usize::MAX);
    let cap_at = |now: Duration| -> usize {
        // A phase's own cap, else the run's.
        let since = now.saturating_sub(origin);
        let cap = opts
            .caps
            .iter()
            .rev()
            .find(|(at, _)| *at <= since)
            .and_then(|(_, c)| *c)
            .map_or(cap, |c| c.max(1));
        match fill {
            Some(f) if now < origin.saturating_add(f) => {
                let share = since.as_secs_f64() / f.as_secs_f64();
                // Saturating float-to-int conversion of a value in [0, cap].
                ((cap as f64 * share).ceil() as usize).clamp(1, cap)
            }
            _ => cap,
        }
    };
    // When the cap next changes by a phase (a held run wakes then).
    let next_phase_cap = |now: Duration| -> Option<Duration> {
        let since = now.saturating_sub(origin);
        opts.caps
            .iter()
            .find(|(at, _)| *at > since)
            .map(|(at, _)| origin.saturating_add(*at))
    };
    let cap_grows = |used: usize| -> Option<Duration> {
        let f = fill?;
        // Just past the time the cap reaches `used` (it grows when the share exceeds it).
        (used < cap).then(|| {
            origin
                .saturating_add(f.mul_f64((used as f64 / cap as f64).min(1.0)))
                .saturating_add(Duration::from_micros(1))
        })
    };
    let mut collector = Collector::with_clock(ManualClock::at(origin));
    if let Some(sink) = &opts.sink {
        collector = collector.with_sink(sink.clone());
    }
    // Handles of the requests in flight, by id (= index in the workload).
    let mut open: HashMap<u64, RequestHandle<'_, ManualClock>> = HashMap::new();
    let mut roots_sent = 0usize;
    conv.scheduled = scheduled;
    let mut stop_sending = false;
    let mut events = Vec::new();
    let mut aborted = None;
    let mut stopped: Option<String> = None;
    let mut drain_end: Option<Duration> = None;
    let mut watch = opts
        .over_saturation
        .map(|o| SaturationWatch::new(o, origin));
    let mut gone = opts.server_gone.map(gone::GoneWatch::new);
    let cut_off = |open: &mut HashMap<u64, RequestHandle<'_, ManualClock>>,
                   engine: &mut E,
                   at: Duration,
                   reason: &str| {
        let mut ids: Vec<u64> = open.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(h) = open.remove(&id) {
                engine.cancel(id);
                h.cancel_at(at, reason);
            }
        }
    };
    loop {
        let now = engine.now();
        let out_of_time = end.is_some_and(|e| now >= e);
        if out_of_time {
            stop_sending = true;
        }
        if let Some(stop) = opts.stop.as_ref().filter(|s| s.is_stopping()) {
            stop_sending = true;
            if stopped.is_none() {
                stopped = stop.reason();
                drain_end = Some(now.saturating_add(opts.drain));
            }
            let reason = stopped.as_deref().unwrap_or("stopped");
            if stop.is_urgent() || drain_end.is_some_and(|d| now >= d) {
                let why = format!("interrupted ({reason}) while in flight");
                cut_off(&mut open, engine, now, &why);
                break;
            }
            if open.is_empty() {
                break;
            }
        }
        // Due follow-up turns first (ends of requests, released below, free conversation
        // slots and release later turns), then new roots while the cap allows.
        let mut ended: Vec<(usize, Duration)> = Vec::new();
        loop {
            let id = if stop_sending {
                break;
            } else if conv.follow.peek().is_some_and(|Reverse((t, _))| *t <= now) {
                let Some(Reverse((_, id))) = conv.follow.pop() else {
                    break;
                };
                id
            } else if conv.in_use(open.len()) < cap_at(now)
                && roots_queue.peek().is_some_and(|Reverse((t, _))| *t <= now)
            {
                let Some(Reverse((_, id))) = roots_queue.pop() else {
                    break;
                };
                roots_sent += 1;
                conv.active += 1;
                id
            } else {
                break;
            };
            let turn = opts.turns.as_ref().and_then(|t| t.get(id));
            if !send_one(
                id,
                now,
                &work[id],
                turn,
                conv.scheduled[id],
                engine,
                &mut open,
                &collector,
            ) {
                ended.push((id, now));
                if let Some(g) = &mut gone {
                    g.connect_failed(now, "the engine refused the request");
                }
            }
        }
        conv.release_ended(&mut ended);
        let nothing_left = roots_queue.is_empty() && conv.follow.is_empty();
        if open.is_empty() && (nothing_left || stop_sending) {
            break;
        }
        if out_of_time {
            cut_off(&mut open, engine, now, "cut off at the run's max duration");
            break;
        }
        if let Some(w) = &mut watch {
            let due = due_roots.partition_point(|&t| t <= now);
            let backlog = open.len() + due.saturating_sub(roots_sent);
            if let Some(why) = w.observe(now, backlog) {
                cut_off(
                    &mut open,
                    engine,
                    now,
                    "stopped early: the server is over-saturated",
                );
                stopped = Some(why);
                break;
            }
        }
        let used = conv.in_use(open.len());
        // (Nothing more is sent once stopping: no wake-up for what is due.)
        let mut deadline = conv
            .follow
            .peek()
            .map(|Reverse((t, _))| *t)
            .filter(|_| !stop_sending);
        if used < cap_at(now) && !stop_sending {
            if let Some(Reverse((t, _))) = roots_queue.peek() {
                deadline = Some(deadline.map_or(*t, |d| d.min(*t)));
            }
        } else if !stop_sending && !roots_queue.is_empty() {
            // Held by the staged fill or a phase's cap: wake when the cap next changes.
            for t in [cap_grows(used), next_phase_cap(now)]
                .into_iter()
                .flatten()
                .filter(|&t| t > now)
            {
                deadline = Some(deadline.map_or(t, |d| d.min(t)));
            }
        }
        if let Some(e) = end {
            deadline = Some(deadline.map_or(e, |x| x.min(e)));
        }
        let open_ended = deadline.is_none();
        if opts.stop.is_some() {
            // Wake up now and then to look at the stop signal.
            let mut poll = now.saturating_add(STOP_POLL);
            if let Some(d) = drain_end {
                poll = poll.min(d);
            }
            deadline = Some(deadline.map_or(poll, |x| x.min(poll)));
        }
        events.clear();
        let res = engine.advance(deadline, &mut events);
        let progressed = !events.is_empty();
        for ev in events.drain(..) {
            let id = ev.id();
            let Some(h) = open.get_mut(&id) else {
                return Err(DriverError::UnknownRequest(id));
            };
            match ev {
                EngineEvent::Sent { at, .. } => h.set_sent_at(at),
                EngineEvent::Chunk { at, tokens, .. } => h.chunk_at(at, tokens),
                EngineEvent::Reasoning { split, .. } => h.set_reasoning(split),
                EngineEvent::Carried { payload, .. } => h.set_payload(payload),
                EngineEvent::Checked { checks, .. } => h.set_checks(checks),
                EngineEvent::Finished { at, usage, .. } => {
                    if let Some(g) = &mut gone {
                        g.answered();
                    }
                    if let Some(h) = open.remove(&id) {
                        h.finish_at(at, usage);
                        ended.push((id as usize, at));
                    }
                }
                EngineEvent::Failed {
                    at, kind, message, ..
                } => {
                    if let Some(g) = &mut gone {
                        match kind {
                            ErrorKind::Connect => g.connect_failed(at, &message),
                            // A cut stream or a timeout says nothing of whether the
                            // server still listens.
                            ErrorKind::StreamCut | ErrorKind::Timeout => {}
                            _ => g.answered(),
                        }
                    }
                    if let Some(h) = open.remove(&id) {
                        h.fail_at(at, kind, message);
                        ended.push((id as usize, at));
                    }
                }
            }
        }
        conv.release_ended(&mut ended);
        if let Some(why) = gone.as_ref().and_then(|g| g.verdict(engine.now())) {
            let at = engine.now();
            cut_off(&mut open, engine, at, "stopped: the server is gone");
            aborted = Some(why);
            break;
        }
        if let Err(EngineError::Fatal(message)) = res {
            let at = engine.now();
            let mut ids: Vec<u64> = open.keys().copied().collect();
            ids.sort_unstable();
            for id in ids {
                if let Some(h) = open.remove(&id) {
                    h.fail_at(at, ErrorKind::Other, message.clone());
                }
            }
            aborted = Some(message);
            break;
        }
        // (With a stop signal the wait ends at the poll deadline, so the clock moves.)
        if open_ended
            && !progressed
            && (engine.now() == now || opts.stop.is_some())
            && !open.is_empty()
            && engine.in_flight() == 0
        {
            // The engine says it has nothing left, yet requests never ended: stop rather
            // than spin.
            cut_off(&mut open, engine, now, "the engine dropped the request");
            aborted = Some("engine stalled with requests in flight".into());
            break;
        }
    }
    drop(open);
    Ok(RunOutput {
        records: collector.into_records(),
        max_concurrency: opts.max_concurrency,
        profile: None,
        aborted,
        stopped,
        work: Vec::new(),
    })
}

/// Most prompt bytes announced to [`Engine::prepare`] before a run.
const PREPARE_BYTES: usize = 256 << 20;

/// The engine's request for work item `id`, due at `scheduled`.
fn request_of(id: usize, w: &WorkItem, scheduled: Duration) -> EngineRequest {
    EngineRequest {
        id: id as u64,
        prompt_tokens: w.prompt_tokens,
        prompt: w.prompt.clone(),
        max_output_tokens: w.output_tokens,
        ignore_eos: true,
        arrival: scheduled,
        shared_prefix_tokens: w.shared_prefix_tokens,
        image_patches: Vec::new(),
        shares_admission: false,
        constrained: false,
    }
}

/// Sends request `id` now; `false` when the engine refused it (recorded as an error).
#[allow(clippy::too_many_arguments)]
fn send_one<'c, E: Engine + ?Sized>(
    id: usize,
    now: Duration,
    w: &WorkItem,
    turn: Option<&TurnPlan>,
    scheduled: Duration,
    engine: &mut E,
    open: &mut HashMap<u64, RequestHandle<'c, ManualClock>>,
    collector: &'c Collector<ManualClock>,
) -> bool {
    let mut h = collector.begin_with_id(id as u64, now);
    h.set_scheduled_at(scheduled);
    h.set_prompt_tokens(w.prompt_tokens);
    if let Some(t) = turn {
        h.set_turn(TurnRef {
            conversation: t.conversation,
            turn: t.turn,
            agent: t.agent,
        });
    }
    h.reserve_chunks(usize::try_from(w.output_tokens).unwrap_or(0).min(1 << 16));
    match engine.submit(request_of(id, w, scheduled)) {
        Ok(()) => {
            open.insert(id as u64, h);
            true
        }
        Err(EngineError::Fatal(message)) => {
            h.fail_at(now, ErrorKind::Connect, message);
            false
        }
    }
}
