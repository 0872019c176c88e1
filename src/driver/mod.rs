//! The load driver: turns a [`Profile`] into requests ([`workload`]), schedules them
//! ([`arrivals`]), sends them to an [`Engine`] under a client-side concurrency cap, and
//! collects one [`RequestRecord`] per request plus the run's [`BenchmarkResult`].
//!
//! The driver only talks to the engine through the [`Engine`] contract, so the same loop
//! drives a virtual-time simulator (the run takes milliseconds of wall time) and a
//! real-time HTTP engine.
//!
//! ```
//! use std::time::Duration;
//! use servebench::driver::{run, RunOptions, arrivals::Arrivals, workload::WorkItem};
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
//! assert_eq!(out.result.successful_requests, Some(10));
//! ```

pub mod arrivals;
pub mod rng;
pub mod workload;

use std::time::Duration;

use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest};
use crate::record::{Chunk, ErrorKind, Outcome, RequestRecord};
use crate::result::{BenchmarkResult, Convention, ExactFigures, Percentile, RunMeta, Summary};
use crate::Profile;
use arrivals::{Arrivals, ArrivalsError};
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
    /// Stop after this much (engine-clock) time: nothing is sent after it and requests still
    /// in flight are recorded as [`Outcome::Incomplete`].
    pub max_duration: Option<Duration>,
    /// Client-side work per prompt token before a request can be sent, done serially
    /// (guidellm synthesizing random prompts: about 3.4 µs per token). Zero by default.
    pub client_prep_per_prompt_token: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            arrivals: Arrivals::AllAtOnce,
            max_concurrency: None,
            max_requests: None,
            max_duration: None,
            client_prep_per_prompt_token: Duration::ZERO,
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

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// One record per request sent, in request-id order (id = index in the workload).
    pub records: Vec<RequestRecord>,
    /// The run's figures (vLLM convention).
    pub result: BenchmarkResult,
    /// Set when the engine failed fatally and the run stopped early: the engine's message.
    pub aborted: Option<String>,
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
}

/// Builds `profile`'s workload and runs it with [`RunOptions::for_profile`] (adjusted by
/// `adjust`): the one-call path the CLI and the simulator example use.
pub fn run_profile<E: Engine + ?Sized>(
    engine: &mut E,
    profile: &Profile,
    workload_options: &WorkloadOptions,
    adjust: impl FnOnce(&mut RunOptions),
) -> Result<RunOutput, DriverError> {
    let work = workload::build(profile, workload_options)?;
    let mut opts = RunOptions::for_profile(profile);
    adjust(&mut opts);
    let mut out = run(engine, &work, &opts)?;
    out.result.meta.profile = Some(profile.clone());
    Ok(out)
}

/// Runs `work` against `engine`. See the module docs.
///
/// Per-request failures ([`EngineEvent::Failed`], or `submit` returning an error) become
/// records with [`Outcome::Error`]; a failing `advance` ends the run, records the requests
/// in flight as errors and sets [`RunOutput::aborted`].
pub fn run<E: Engine + ?Sized>(
    engine: &mut E,
    work: &[WorkItem],
    opts: &RunOptions,
) -> Result<RunOutput, DriverError> {
    let cap = opts.max_concurrency.unwrap_or(usize::MAX);
    if cap == 0 {
        return Err(DriverError::ZeroConcurrency);
    }
    let n = opts
        .max_requests
        .and_then(|m| usize::try_from(m).ok())
        .map_or(work.len(), |m| m.min(work.len()));
    let mut sched = opts.arrivals.schedule(n)?;
    if !opts.client_prep_per_prompt_token.is_zero() {
        let mut ready = Duration::ZERO;
        for (t, w) in sched.iter_mut().zip(work) {
            ready += opts
                .client_prep_per_prompt_token
                .saturating_mul(u32::try_from(w.prompt_tokens).unwrap_or(u32::MAX));
            *t = (*t).max(ready);
        }
    }
    let origin = engine.now();
    let mut records: Vec<RequestRecord> = Vec::with_capacity(n);
    // Per record: still in flight?
    let mut live: Vec<bool> = Vec::with_capacity(n);
    let mut in_flight = 0usize;
    let mut limit = n;
    let mut events = Vec::new();
    let mut aborted = None;
    loop {
        let now = engine.now();
        let out_of_time = opts.max_duration.is_some_and(|d| now >= origin + d);
        if out_of_time {
            limit = records.len();
        }
        while records.len() < limit && in_flight < cap && origin + sched[records.len()] <= now {
            let id = records.len();
            let w = &work[id];
            let mut rec = RequestRecord::new(id as u64, now);
            rec.scheduled_at = Some(sched[id]);
            rec.prompt_tokens = Some(w.prompt_tokens);
            let req = EngineRequest {
                id: id as u64,
                prompt_tokens: w.prompt_tokens,
                prompt: w.prompt.clone(),
                max_output_tokens: w.output_tokens,
                ignore_eos: true,
                arrival: origin + sched[id],
                shared_prefix_tokens: w.shared_prefix_tokens,
            };
            match engine.submit(req) {
                Ok(()) => {
                    in_flight += 1;
                    live.push(true);
                }
                Err(EngineError::Fatal(message)) => {
                    rec.ended_at = Some(now);
                    rec.outcome = Outcome::Error {
                        kind: ErrorKind::Connect,
                        message,
                    };
                    live.push(false);
                }
            }
            records.push(rec);
        }
        if in_flight == 0 && (records.len() >= limit || out_of_time) {
            break;
        }
        if out_of_time {
            for (rec, l) in records.iter_mut().zip(live.iter_mut()) {
                if *l {
                    *l = false;
                    rec.outcome = Outcome::Incomplete {
                        reason: "cut off at the run's max duration".into(),
                    };
                }
            }
            break;
        }
        let mut deadline =
            (records.len() < limit && in_flight < cap).then(|| origin + sched[records.len()]);
        if let Some(d) = opts.max_duration {
            deadline = Some(deadline.map_or(origin + d, |x| x.min(origin + d)));
        }
        events.clear();
        let res = engine.advance(deadline, &mut events);
        let progressed = !events.is_empty();
        for ev in events.drain(..) {
            let id = ev.id();
            let idx = usize::try_from(id).unwrap_or(usize::MAX);
            let (Some(rec), Some(l)) = (records.get_mut(idx), live.get_mut(idx)) else {
                return Err(DriverError::UnknownRequest(id));
            };
            if !*l {
                return Err(DriverError::UnknownRequest(id));
            }
            match ev {
                EngineEvent::Sent { at, .. } => rec.sent_at = at,
                EngineEvent::Chunk { at, tokens, .. } => rec.chunks.push(Chunk { at, tokens }),
                EngineEvent::Finished { at, usage, .. } => {
                    rec.ended_at = Some(at);
                    rec.usage_prompt_tokens = usage.prompt_tokens;
                    rec.usage_output_tokens = usage.completion_tokens;
                    *l = false;
                    in_flight -= 1;
                }
                EngineEvent::Failed {
                    at, kind, message, ..
                } => {
                    rec.ended_at = Some(at);
                    rec.outcome = Outcome::Error { kind, message };
                    *l = false;
                    in_flight -= 1;
                }
            }
        }
        if let Err(EngineError::Fatal(message)) = res {
            let at = engine.now();
            for (rec, l) in records.iter_mut().zip(live.iter_mut()) {
                if *l {
                    *l = false;
                    rec.ended_at = Some(at);
                    rec.outcome = Outcome::Error {
                        kind: ErrorKind::Other,
                        message: message.clone(),
                    };
                }
            }
            aborted = Some(message);
            break;
        }
        if deadline.is_none()
            && !progressed
            && engine.now() == now
            && in_flight > 0
            && engine.in_flight() == 0
        {
            // The engine says it has nothing left, yet requests never ended: stop rather
            // than spin.
            for (rec, l) in records.iter_mut().zip(live.iter_mut()) {
                if *l {
                    *l = false;
                    rec.outcome = Outcome::Incomplete {
                        reason: "the engine dropped the request".into(),
                    };
                }
            }
            aborted = Some("engine stalled with requests in flight".into());
            break;
        }
    }
    let result = provisional_result(&records, origin, opts.max_concurrency);
    Ok(RunOutput {
        records,
        result,
        aborted,
    })
}

/// numpy's default (linear) percentile of sorted `v`.
fn percentile(v: &[f64], p: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let rank = p / 100.0 * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (v.get(lo)?, v.get(hi)?);
    Some(a + (b - a) * (rank - lo as f64))
}

fn summary(mut v: Vec<f64>) -> Option<Summary> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / v.len() as f64;
    Some(Summary {
        mean: Some(mean),
        median: percentile(&v, 50.0),
        std: Some(var.sqrt()),
        min: v.first().copied(),
        max: v.last().copied(),
        percentiles: [50.0, 95.0, 99.0]
            .iter()
            .map(|&p| Percentile {
                p,
                value: percentile(&v, p),
            })
            .collect(),
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The vLLM-convention figures of a run, computed here until `metrics::compute` is
/// available to the driver.
fn provisional_result(
    records: &[RequestRecord],
    origin: Duration,
    cap: Option<usize>,
) -> BenchmarkResult {
    let ok: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| r.outcome.is_success() && !r.chunks.is_empty())
        .collect();
    let end = records
        .iter()
        .filter_map(|r| r.ended_at.or(r.chunks.last().map(|c| c.at)))
        .max()
        .unwrap_or(origin);
    let dur_s = end.saturating_sub(origin).as_secs_f64();
    let out: u64 = ok.iter().map(|r| r.output_tokens()).sum();
    let inp: u64 = ok.iter().filter_map(|r| r.input_tokens()).sum();
    let per_s = |x: f64| (dur_s > 0.0).then(|| x / dur_s);
    let mut tpot = Vec::new();
    let mut itl = Vec::new();
    for r in &ok {
        let n = r.output_tokens();
        if let (Some(l), Some(t)) = (r.latency(), r.ttft()) {
            if n > 1 {
                tpot.push(ms(l.saturating_sub(t)) / (n - 1) as f64);
            }
        }
        itl.extend(
            r.chunks
                .windows(2)
                .map(|w| ms(w[1].at.saturating_sub(w[0].at))),
        );
    }
    // vLLM's peak output throughput: the fullest 1-second bucket of output tokens.
    let mut buckets: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for r in &ok {
        for c in &r.chunks {
            *buckets
                .entry(c.at.saturating_sub(origin).as_secs())
                .or_default() += u64::from(c.tokens);
        }
    }
    let peak_out = buckets.values().max().map(|&v| v as f64);
    // Peak in flight: sweep over [sent, end).
    let mut edges: Vec<(Duration, i64)> = Vec::new();
    for r in records {
        edges.push((r.sent_at, 1));
        edges.push((r.ended_at.unwrap_or(end), -1));
    }
    edges.sort();
    let (mut cur, mut peak) = (0i64, 0i64);
    for (_, d) in edges {
        cur += d;
        peak = peak.max(cur);
    }
    BenchmarkResult {
        meta: RunMeta {
            convention: Some(Convention::Vllm),
            ..RunMeta::default()
        },
        successful_requests: Some(ok.len() as u64),
        failed_requests: Some((records.len() - ok.len()) as u64),
        max_concurrency: cap.map(|c| c as u64),
        duration_ms: Some(dur_s * 1000.0),
        total_input_tokens: Some(inp),
        total_output_tokens: Some(out),
        request_throughput_per_s: per_s(ok.len() as f64),
        output_throughput_per_s: per_s(out as f64),
        total_token_throughput_per_s: per_s((inp + out) as f64),
        peak_output_throughput_per_s: peak_out,
        peak_concurrent_requests: Some(peak as f64),
        e2el: summary(ok.iter().filter_map(|r| r.latency()).map(ms).collect()),
        ttft: summary(ok.iter().filter_map(|r| r.ttft()).map(ms).collect()),
        tpot: summary(tpot),
        itl: summary(itl),
        exact: Some(ExactFigures {
            peak_output_tokens_per_s: None,
            peak_in_flight: Some(peak as u64),
        }),
        ..BenchmarkResult::default()
    }
}
