//! Merging the run files of a sharded run (`servebench merge RUN… --out RUN`) into the one
//! run a single client would have recorded.
//!
//! * **Refuses** shards of different runs: every file must be a shard of the same count,
//!   with the same profile, seed, study and step labels and metric options; each shard once,
//!   and all of them unless [`MergeOptions::allow_missing`] (the merged run is then marked
//!   interrupted, naming the missing shards).
//! * **One timeline**: each shard's record times are offsets from its own start
//!   ([`RunFile::started_at`], its host's wall clock); they are moved onto the earliest
//!   start. With [`Align::ServerDate`] the starts are first corrected by each shard's clock
//!   offset against the server measured from `Date` headers ([`crate::record::ServerClock`]).
//! * **Records** concatenated in id order (a sharded run keeps the single run's ids, so a
//!   repeated id is an error), **statistics** recomputed over the union with the shards'
//!   metric options: the duration runs from the earliest send to the last end.
//! * **Clock offsets** it can measure are reported ([`ShardClock`]): each shard's start on
//!   its own clock, and its clock's offset from the first shard's through the server's
//!   `Date` headers, with the uncertainty of that measurement.
//!
//! ```
//! use std::time::Duration;
//! use servebench::driver::Shard;
//! use servebench::merge::{merge, MergeOptions};
//! use servebench::metrics::{compute, MetricsOptions};
//! use servebench::profile::Profile;
//! use servebench::record::{Chunk, RequestRecord};
//! use servebench::runfile::RunFile;
//! use servebench::Convention;
//!
//! let shard = |k: u32, start: &str| {
//!     let mut r = RequestRecord::new(u64::from(k) - 1, Duration::ZERO);
//!     r.chunks.push(Chunk { at: Duration::from_millis(40), tokens: 1 });
//!     r.ended_at = Some(Duration::from_millis(40));
//!     let records = vec![r];
//!     let result = compute(&records, MetricsOptions::new(Convention::Vllm));
//!     let t = chrono::DateTime::parse_from_rfc3339(start).unwrap();
//!     let mut run = RunFile::new(result, records, Profile::preset("latency").unwrap(), t);
//!     run.shard = Some(Shard::new(k, 2).unwrap());
//!     (format!("run-{k}.json"), run)
//! };
//! let merged = merge(
//!     &[shard(1, "2026-12-03T19:00:00Z"), shard(2, "2026-12-03T19:00:00.010Z")],
//!     &MergeOptions::default(),
//! )
//! .unwrap();
//! assert_eq!(merged.run.records.len(), 2);
//! assert_eq!(merged.run.records[1].sent_at, Duration::from_millis(10));
//! assert_eq!(merged.run.result.duration_ms, Some(50.0));
//! assert_eq!(merged.clocks[1].start_offset_s, 0.010);
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::driver::shard::Shard;
use crate::metrics::{compute, MetricsOptions};
use crate::record::RequestRecord;
use crate::result::Convention;
use crate::runfile::{RunFile, RunStatus};

/// How the shards' timelines are put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    /// By each shard's own wall clock (`started_at`): right when the hosts' clocks agree
    /// (NTP keeps them within a millisecond or so; processes on one host share a clock).
    #[default]
    Wall,
    /// By the server's clock: each shard's start corrected by its measured offset from the
    /// server (the middle of the `Date`-header bounds). Needs those bounds in every file.
    ServerDate,
}

/// Options of [`merge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MergeOptions {
    /// How to align the shards.
    pub align: Align,
    /// Merge even when some shards are missing (the result is marked interrupted).
    pub allow_missing: bool,
}

/// What was measured about one shard's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardClock {
    /// The shard.
    pub shard: Shard,
    /// The file (or name) it came from.
    pub name: String,
    /// Its start after the earliest shard's, on its own clock, seconds.
    pub start_offset_s: f64,
    /// How far its records were moved (the start offset, or with [`Align::ServerDate`] the
    /// corrected one), seconds.
    pub shift_s: f64,
    /// Its clock minus the reference shard's clock (the first with `Date` bounds), bounds
    /// in seconds, from the server's `Date` headers; `None` when not measurable.
    pub skew_vs_reference_s: Option<(f64, f64)>,
    /// `Date` headers behind the bounds.
    pub date_samples: u64,
}

impl ShardClock {
    /// One line: `shard 2/4 (run-2.json): started +0.4 ms; clock −0.3 ± 1.1 ms vs shard 1
    /// (212 Date headers)`.
    pub fn describe(&self, reference: Option<Shard>) -> String {
        let mut s = format!(
            "shard {} ({}): started {:+.3} ms after the first",
            self.shard,
            self.name,
            self.start_offset_s * 1e3
        );
        match (self.skew_vs_reference_s, reference) {
            (Some((lo, hi)), Some(r)) if r != self.shard => s.push_str(&format!(
                "; clock {:+.3} ± {:.3} ms against shard {r}'s (from {} Date headers)",
                (lo + hi) / 2.0 * 1e3,
                (hi - lo) / 2.0 * 1e3,
                self.date_samples
            )),
            (Some(_), _) => s.push_str(&format!(
                "; the reference clock ({} Date headers)",
                self.date_samples
            )),
            (None, _) => s.push_str("; clock offset not measurable (no consistent Date headers)"),
        }
        s
    }
}

/// A merged run and what was measured on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The run, as one client would have written it (no `shard`).
    pub run: RunFile,
    /// One entry per shard, in shard order.
    pub clocks: Vec<ShardClock>,
    /// The shard whose clock the skews are measured against, if any could be.
    pub reference: Option<Shard>,
}

/// Why shards cannot be merged. Each names the file (as given to [`merge`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no run files to merge")]
    Empty,
    /// A file that is not a shard of a sharded run.
    #[error("{name}: not a shard (its run file records no shard)")]
    NotAShard {
        /// The file.
        name: String,
    },
    /// A file of another run: `what` differs from the first file's.
    #[error(
        "{name}: {what} differs from {first}'s ({theirs} vs {ours}): shards of different runs"
    )]
    Different {
        /// The file.
        name: String,
        /// The first file.
        first: String,
        /// What differs: `shard count`, `profile`, `seed`, `study`, …
        what: String,
        /// The first file's value.
        ours: String,
        /// This file's value.
        theirs: String,
    },
    /// The same shard twice.
    #[error("{name}: shard {shard} is also in {other}")]
    DuplicateShard {
        /// The file.
        name: String,
        /// The earlier file with the same shard.
        other: String,
        /// The shard.
        shard: Shard,
    },
    /// Shards missing (without [`MergeOptions::allow_missing`]).
    #[error(
        "shards {missing:?} of {count} are missing (allow missing shards to merge what there is)"
    )]
    Missing {
        /// The missing shards (1-based).
        missing: Vec<u32>,
        /// The shard count.
        count: u32,
    },
    /// Two records with the same id.
    #[error("{name}: request id {id} is also in {other}")]
    DuplicateId {
        /// The file.
        name: String,
        /// The file with the same id.
        other: String,
        /// The id.
        id: u64,
    },
    /// [`Align::ServerDate`] without usable `Date` bounds in a file.
    #[error("{name}: no consistent Date-header bounds to align by the server's clock (align by the wall clock instead)")]
    NoServerClock {
        /// The file.
        name: String,
    },
}

fn to_system(t: &chrono::DateTime<chrono::FixedOffset>) -> SystemTime {
    SystemTime::from(t.with_timezone(&chrono::Utc))
}

fn secs_between(later: SystemTime, earlier: SystemTime) -> f64 {
    match later.duration_since(earlier) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// `r`'s times moved later by `by`.
pub fn shift_record(r: &mut RequestRecord, by: Duration) {
    let fwd = |t: Duration| t.saturating_add(by);
    r.scheduled_at = r.scheduled_at.map(fwd);
    r.sent_at = fwd(r.sent_at);
    r.ended_at = r.ended_at.map(fwd);
    for c in &mut r.chunks {
        c.at = fwd(c.at);
    }
}

/// The values that must agree between the shards of one run, as (what, rendering).
fn identity(run: &RunFile) -> Vec<(&'static str, String)> {
    vec![
        (
            "shard count",
            run.shard.map_or("-".into(), |s| s.count.to_string()),
        ),
        ("profile", json(&run.profile)),
        ("seed", json(&run.seed)),
        ("study label", json(&run.labels.get("study"))),
        ("step label", json(&run.labels.get("step"))),
        ("metric options", json(&run.metrics_options)),
    ]
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// Merge the shards `runs` (name, run file) into one run. See the module docs.
pub fn merge(runs: &[(String, RunFile)], opts: &MergeOptions) -> Result<Merged, MergeError> {
    let Some((first_name, first)) = runs.first() else {
        return Err(MergeError::Empty);
    };
    let first_id = identity(first);
    let mut by_shard: BTreeMap<u32, usize> = BTreeMap::new();
    let mut count = 0;
    for (i, (name, run)) in runs.iter().enumerate() {
        let Some(shard) = run.shard else {
            return Err(MergeError::NotAShard { name: name.clone() });
        };
        count = shard.count;
        for ((what, ours), (_, theirs)) in first_id.iter().zip(identity(run)) {
            if *ours != theirs {
                return Err(MergeError::Different {
                    name: name.clone(),
                    first: first_name.clone(),
                    what: (*what).to_string(),
                    ours: ours.clone(),
                    theirs,
                });
            }
        }
        if let Some(&j) = by_shard.get(&shard.index) {
            return Err(MergeError::DuplicateShard {
                name: name.clone(),
                other: runs[j].0.clone(),
                shard,
            });
        }
        by_shard.insert(shard.index, i);
    }
    let missing: Vec<u32> = (1..=count).filter(|k| !by_shard.contains_key(k)).collect();
    if !missing.is_empty() && !opts.allow_missing {
        return Err(MergeError::Missing { missing, count });
    }
    let order: Vec<usize> = by_shard.values().copied().collect();

    // Each shard's start on its own clock, and its clock's offset from the server's.
    let starts: Vec<SystemTime> = order
        .iter()
        .map(|&i| to_system(&runs[i].1.started_at))
        .collect();
    let vs_server: Vec<Option<(f64, f64)>> = order
        .iter()
        .zip(&starts)
        .map(|(&i, &w)| {
            runs[i]
                .1
                .server_clock
                .and_then(|c| c.client_minus_server_s(w))
        })
        .collect();
    // Where each shard's schedule starts on its own timeline.
    let origins: Vec<Duration> = order
        .iter()
        .map(|&i| runs[i].1.schedule_origin.unwrap_or(Duration::ZERO))
        .collect();
    // Schedule starts on each shard's own wall clock, seconds after the earliest.
    let sched_wall: Vec<SystemTime> = starts.iter().zip(&origins).map(|(&w, &o)| w + o).collect();
    let earliest = sched_wall
        .iter()
        .min()
        .copied()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let on_own_clock: Vec<f64> = sched_wall
        .iter()
        .map(|&w| secs_between(w, earliest))
        .collect();
    // Shards that agreed on one start (`--start-at`) and know where their schedule began
    // are lined up on it exactly: every request keeps its offset to the nanosecond.
    let agreed = match runs[order[0]].1.start_at {
        Some(t)
            if opts.align == Align::Wall
                && order.iter().all(|&i| {
                    runs[i].1.start_at == Some(t) && runs[i].1.schedule_origin.is_some()
                }) =>
        {
            Some(t)
        }
        _ => None,
    };
    // How far each shard's records move, and the merged run's start and schedule origin.
    let (shifts, started_at, schedule_origin): (Vec<Duration>, _, _) = match agreed {
        Some(t) => {
            let lead = origins.iter().max().copied().unwrap_or(Duration::ZERO);
            let back = chrono::Duration::from_std(lead).unwrap_or_default();
            (origins.iter().map(|&o| lead - o).collect(), t - back, lead)
        }
        None => {
            let corrected: Vec<f64> = match opts.align {
                Align::Wall => on_own_clock.clone(),
                Align::ServerDate => {
                    let mut v = Vec::with_capacity(order.len());
                    for (k, &i) in order.iter().enumerate() {
                        let Some((lo, hi)) = vs_server[k] else {
                            return Err(MergeError::NoServerClock {
                                name: runs[i].0.clone(),
                            });
                        };
                        v.push(on_own_clock[k] - (lo + hi) / 2.0);
                    }
                    v
                }
            };
            // Timeline zero: the earliest shard zero after the corrections.
            let zeros: Vec<f64> = corrected
                .iter()
                .zip(&origins)
                .map(|(&c, &o)| c - o.as_secs_f64())
                .collect();
            let base = zeros.iter().copied().fold(f64::INFINITY, f64::min);
            let k0 = zeros.iter().position(|&z| z == base).unwrap_or_default();
            let shifts: Vec<Duration> = zeros
                .iter()
                .map(|&z| Duration::try_from_secs_f64((z - base).max(0.0)).unwrap_or_default())
                .collect();
            let origin = shifts
                .iter()
                .zip(&origins)
                .map(|(&s, &o)| s + o)
                .min()
                .unwrap_or_default();
            (shifts, runs[order[k0]].1.started_at, origin)
        }
    };
    let reference = vs_server.iter().position(Option::is_some);

    let mut records = Vec::new();
    let mut warmup = Vec::new();
    let mut clocks = Vec::new();
    let mut reasons = Vec::new();
    let mut finished_at = None;
    for (k, &i) in order.iter().enumerate() {
        let (name, run) = &runs[i];
        let shift = shifts[k];
        for r in &run.records {
            let mut r = r.clone();
            shift_record(&mut r, shift);
            records.push((r, k));
        }
        for r in &run.warmup_records {
            let mut r = r.clone();
            shift_record(&mut r, shift);
            warmup.push(r);
        }
        if let RunStatus::Interrupted { reason } = &run.status {
            reasons.push(format!(
                "shard {}: {reason}",
                run.shard.unwrap_or(Shard::WHOLE)
            ));
        }
        finished_at = finished_at.max(run.finished_at);
        let skew = match (reference, vs_server[k]) {
            (Some(r), Some((lo, hi))) => vs_server[r].map(|(rlo, rhi)| (lo - rhi, hi - rlo)),
            _ => None,
        };
        clocks.push(ShardClock {
            shard: run.shard.unwrap_or(Shard::WHOLE),
            name: name.clone(),
            start_offset_s: on_own_clock[k],
            shift_s: shift.as_secs_f64(),
            skew_vs_reference_s: skew,
            date_samples: run.server_clock.map_or(0, |c| c.samples),
        });
    }
    records.sort_by_key(|(r, _)| r.id);
    for w in records.windows(2) {
        if w[0].0.id == w[1].0.id {
            return Err(MergeError::DuplicateId {
                name: runs[order[w[1].1]].0.clone(),
                other: runs[order[w[0].1]].0.clone(),
                id: w[0].0.id,
            });
        }
    }
    let records: Vec<RequestRecord> = records.into_iter().map(|(r, _)| r).collect();
    warmup.sort_by_key(|r| r.id);

    let mut metrics_options = first.metrics_options.clone().unwrap_or_else(|| {
        MetricsOptions::new(first.result.meta.convention.unwrap_or(Convention::Vllm))
    });
    // The union's own duration and window: from the earliest send to the last end.
    metrics_options.duration = None;
    metrics_options.window = None;
    metrics_options.time_origin_s = None;
    let mut result = compute(&records, metrics_options.clone());
    result.meta = first.result.meta.clone();
    result.meta.convention = Some(metrics_options.convention);
    // guidellm's figure is observed in the records; vLLM's is the client's cap.
    if result.max_concurrency.is_none() {
        result.max_concurrency = first.result.max_concurrency;
    }

    if !missing.is_empty() {
        reasons.push(format!("shards {missing:?} of {count} missing"));
    }
    let mut run = first.clone();
    run.started_at = started_at;
    run.finished_at = finished_at;
    run.status = if reasons.is_empty() {
        RunStatus::Complete
    } else {
        RunStatus::Interrupted {
            reason: reasons.join("; "),
        }
    };
    run.shard = None;
    // Each shard sent its requests in a trace of its own: the merged run names them all,
    // in shard order.
    let traces: Vec<&str> = order
        .iter()
        .filter_map(|&i| runs[i].1.labels.get("trace_id").map(String::as_str))
        .collect();
    if !traces.is_empty() {
        run.labels.insert("trace_id".into(), traces.join(","));
    }
    run.server_clock = None;
    run.schedule_origin = Some(schedule_origin);
    run.start_at = agreed;
    run.metrics_options = Some(metrics_options);
    run.result = result;
    run.records = records;
    run.warmup_records = warmup;
    Ok(Merged {
        run,
        clocks,
        reference: reference.map(|r| runs[order[r]].1.shard.unwrap_or(Shard::WHOLE)),
    })
}
