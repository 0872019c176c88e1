//! `servebench bench`: drive an OpenAI-compatible server with a load profile through
//! [`HttpEngine`], collecting one [`RequestRecord`] per request.
//!
//! [`drive`] is a small engine-agnostic load loop (arrivals, concurrency cap, time limit,
//! progress callback) that works for real-time and virtual-time engines alike; [`run`] builds
//! the requests from a [`Profile`], discovers the model and drives an [`HttpEngine`].

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::client::{HttpConfig, HttpEngine};
use super::HttpError;
use crate::engine::{Engine, EngineError, EngineEvent, EngineRequest};
use crate::profile::{Dataset, Profile};
use crate::record::{Outcome, RequestRecord};

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchArgs {
    /// Server, endpoint, model, key, timeouts.
    pub http: HttpConfig,
    /// The load profile (dataset, rate, request count, concurrency cap).
    pub profile: Profile,
    /// Send at most this many requests (overrides the profile's count when smaller).
    pub max_requests: Option<u64>,
    /// Stop after this much wall time; requests still in flight are cancelled and recorded as
    /// incomplete.
    pub max_duration: Option<Duration>,
    /// Ask `/v1/models` for the model name when `http.model` is `None`.
    pub discover_model: bool,
}

/// Live counters for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Requests ended (finished or failed).
    pub done: u64,
    /// Of which failed.
    pub failed: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Requests in total.
    pub total: u64,
    /// Output tokens received so far.
    pub output_tokens: u64,
    /// Time since the start (engine clock).
    pub elapsed: Duration,
}

impl Progress {
    /// Output tokens per second so far.
    pub fn tokens_per_s(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.output_tokens as f64 / s
        } else {
            0.0
        }
    }
}

/// Errors of a bench run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Setting up the HTTP engine or reaching the server failed.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The engine failed as a whole.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The profile cannot be run here.
    #[error("profile: {0}")]
    Profile(String),
    /// Writing the records failed.
    #[error("writing {path}: {source}")]
    Write {
        /// The output path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRun {
    /// The model the requests named, if any.
    pub model: Option<String>,
    /// One record per request sent, in id order.
    pub records: Vec<RequestRecord>,
    /// From the first scheduled arrival to the last request's end (engine clock).
    pub duration: Duration,
}

/// The requests a profile sends: ids from 0, `arrival` spaced `1/request_rate` apart (all at
/// 0 for an infinite rate). Random datasets only: ShareGPT needs the dataset loader of the
/// load driver.
pub fn requests_for(
    profile: &Profile,
    max_requests: Option<u64>,
) -> Result<Vec<EngineRequest>, BenchError> {
    let Dataset::Random {
        input_tokens,
        output_tokens,
        ..
    } = &profile.dataset
    else {
        return Err(BenchError::Profile(
            "ShareGPT profiles are not supported by `bench` yet; use --input-tokens/--output-tokens".into(),
        ));
    };
    let n = max_requests.map_or(profile.total_requests, |m| m.min(profile.total_requests));
    let gap = if profile.request_rate.is_finite() && profile.request_rate > 0.0 {
        Duration::try_from_secs_f64(1.0 / profile.request_rate).unwrap_or(Duration::ZERO)
    } else {
        Duration::ZERO
    };
    Ok((0..n)
        .map(|i| EngineRequest {
            id: i,
            prompt_tokens: *input_tokens,
            prompt: None,
            max_output_tokens: *output_tokens,
            ignore_eos: true,
            arrival: gap.saturating_mul(u32::try_from(i).unwrap_or(u32::MAX)),
            shared_prefix_tokens: 0,
        })
        .collect())
}

/// How often [`drive`] reports progress (engine clock).
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Run `requests` (sorted by `arrival`) through `engine`: submit each at its arrival time, or
/// when a slot frees under `max_concurrency`; stop sending at `stop_at` and cancel what is
/// still in flight (recorded as [`Outcome::Incomplete`]). Returns one record per request sent,
/// in id order.
pub fn drive<E: Engine>(
    engine: &mut E,
    requests: Vec<EngineRequest>,
    max_concurrency: Option<usize>,
    stop_at: Option<Duration>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Vec<RequestRecord>, EngineError> {
    let total = requests.len() as u64;
    let cap = max_concurrency.unwrap_or(usize::MAX).max(1);
    let mut future: VecDeque<EngineRequest> = requests.into();
    let mut waiting: VecDeque<EngineRequest> = VecDeque::new();
    let mut records: HashMap<u64, RequestRecord> = HashMap::new();
    let mut open: HashMap<u64, ()> = HashMap::new();
    let mut events = Vec::new();
    let mut p = Progress {
        total,
        ..Progress::default()
    };
    let mut next_report = Duration::ZERO;
    loop {
        let now = engine.now();
        if stop_at.is_some_and(|s| now >= s) {
            for id in open.keys() {
                engine.cancel(*id);
                if let Some(r) = records.get_mut(id) {
                    r.outcome = Outcome::Incomplete {
                        reason: "stopped at --max-seconds".into(),
                    };
                }
            }
            break;
        }
        while future.front().is_some_and(|r| r.arrival <= now) {
            waiting.extend(future.pop_front());
        }
        while open.len() < cap {
            let Some(mut req) = waiting.pop_front() else {
                break;
            };
            let mut rec = RequestRecord::new(req.id, now);
            rec.scheduled_at = Some(req.arrival);
            rec.prompt_tokens = Some(req.prompt_tokens);
            records.insert(req.id, rec);
            open.insert(req.id, ());
            req.arrival = now.max(req.arrival);
            engine.submit(req)?;
        }
        p.in_flight = open.len() as u64;
        p.elapsed = now;
        if now >= next_report {
            progress(&p);
            next_report = now + PROGRESS_EVERY;
        }
        if future.is_empty() && waiting.is_empty() && open.is_empty() {
            break;
        }
        let mut deadline = now + PROGRESS_EVERY;
        if let Some(r) = future.front() {
            deadline = deadline.min(r.arrival.max(now));
        }
        if let Some(s) = stop_at {
            deadline = deadline.min(s);
        }
        events.clear();
        engine.advance(Some(deadline), &mut events)?;
        for ev in events.drain(..) {
            let id = ev.id();
            let Some(rec) = records.get_mut(&id) else {
                continue;
            };
            match ev {
                EngineEvent::Sent { at, .. } => rec.sent_at = at,
                EngineEvent::Chunk { at, tokens, .. } => {
                    rec.chunks.push(crate::record::Chunk { at, tokens });
                    p.output_tokens += u64::from(tokens);
                }
                EngineEvent::Finished { at, usage, .. } => {
                    rec.ended_at = Some(at);
                    rec.usage_prompt_tokens = usage.prompt_tokens;
                    rec.usage_output_tokens = usage.completion_tokens;
                    open.remove(&id);
                    p.done += 1;
                }
                EngineEvent::Failed {
                    at, kind, message, ..
                } => {
                    rec.ended_at = Some(at);
                    rec.outcome = Outcome::Error { kind, message };
                    open.remove(&id);
                    p.done += 1;
                    p.failed += 1;
                }
            }
        }
    }
    p.in_flight = 0;
    p.elapsed = engine.now();
    progress(&p);
    let mut out: Vec<RequestRecord> = records.into_values().collect();
    out.sort_by_key(|r| r.id);
    Ok(out)
}

/// Run a benchmark against `args.http.target`.
pub fn run(args: &BenchArgs, progress: &mut dyn FnMut(&Progress)) -> Result<BenchRun, BenchError> {
    let requests = requests_for(&args.profile, args.max_requests)?;
    let mut http = args.http.clone();
    if http.model.is_none() && args.discover_model {
        let probe = HttpEngine::new(http.clone())?;
        http.model = probe.list_models()?.into_iter().next();
    }
    let model = http.model.clone();
    let mut engine = HttpEngine::new(http)?;
    let cap = args
        .profile
        .max_concurrency
        .map(|c| usize::try_from(c).unwrap_or(usize::MAX));
    let records = drive(&mut engine, requests, cap, args.max_duration, progress)?;
    let duration = records
        .iter()
        .filter_map(|r| r.ended_at)
        .max()
        .unwrap_or_else(|| engine.now());
    Ok(BenchRun {
        model,
        records,
        duration,
    })
}

/// Write records as JSON Lines (one [`RequestRecord`] per line).
pub fn write_records(path: &Path, records: &[RequestRecord]) -> Result<(), BenchError> {
    let err = |source| BenchError::Write {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::create(path).map_err(err)?;
    let mut w = std::io::BufWriter::new(file);
    for r in records {
        serde_json::to_writer(&mut w, r).map_err(|e| err(e.into()))?;
        w.write_all(b"\n").map_err(err)?;
    }
    w.flush().map_err(err)
}

/// Read records written by [`write_records`]; errors name the line.
pub fn read_records(text: &str) -> Result<Vec<RequestRecord>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_profile_requests() {
        let mut p = Profile::preset("latency").unwrap();
        p.request_rate = 4.0;
        let r = requests_for(&p, Some(3)).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[2].arrival, Duration::from_millis(500));
        assert_eq!(
            (r[1].prompt_tokens, r[1].max_output_tokens, r[1].ignore_eos),
            (128, 128, true)
        );
        assert!(requests_for(&Profile::preset("sharegpt").unwrap(), None).is_err());
    }

    #[test]
    fn records_round_trip_as_json_lines() {
        let mut r = RequestRecord::new(1, Duration::from_millis(3));
        r.chunks.push(crate::record::Chunk {
            at: Duration::from_millis(9),
            tokens: 2,
        });
        let dir = std::env::temp_dir().join(format!("servebench-rec-{}.jsonl", std::process::id()));
        write_records(&dir, &[r.clone(), r.clone()]).unwrap();
        let text = std::fs::read_to_string(&dir).unwrap();
        let _ = std::fs::remove_file(&dir);
        assert_eq!(read_records(&text).unwrap(), vec![r.clone(), r]);
        assert!(read_records("{}\n").unwrap_err().starts_with("line 1"));
    }
}
