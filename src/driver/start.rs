//! A common start instant for the shards of a run (`servebench bench --start-at`): either a
//! wall-clock time given to every shard (RFC 3339), or a barrier in a directory every shard
//! can reach (the shared volume of a Kubernetes Job, an NFS path, a local directory for
//! processes on one host).
//!
//! The barrier: shard K of N writes `shard-K-of-N.ready` (its wall-clock time, atomically:
//! temp file + rename) into the directory, then polls until N such files are there; every
//! shard then starts at the same instant, the latest ready time plus a lead
//! ([`BarrierOptions::lead`]) long enough for every shard to have seen the last file. Each
//! shard computes that instant from the same files, so they agree to within their clocks'
//! skew (see [`crate::record::ServerClock`] for measuring it). Use a fresh directory per run (in
//! Kubernetes, one per Job: `…/$(JOB_UID)`); files of another shard count are an error.
//!
//! ```
//! use servebench::driver::StartAt;
//! let t: StartAt = "2026-12-03T19:00:00Z".parse().unwrap();
//! assert!(matches!(t, StartAt::Time(_)));
//! let b: StartAt = "barrier:/runs/job-1".parse().unwrap();
//! assert!(matches!(b, StartAt::Barrier(ref p) if p.ends_with("job-1")));
//! assert!("19:00".parse::<StartAt>().is_err());
//! ```

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};

use super::shard::Shard;

/// When the shards start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartAt {
    /// At this wall-clock time.
    Time(SystemTime),
    /// When every shard has reached the barrier in this directory.
    Barrier(PathBuf),
}

/// Why there is no start instant.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Neither an RFC 3339 time nor `barrier:DIR`.
    #[error("start `{0}` is neither an RFC 3339 time (2026-12-03T19:00:00Z) nor barrier:DIR")]
    Syntax(String),
    /// The barrier directory or a file in it could not be written or read.
    #[error("barrier {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A barrier file that is not an RFC 3339 time.
    #[error("barrier file {path}: not an RFC 3339 time: `{content}`")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// Its first line.
        content: String,
    },
    /// Files of a run with another shard count in the same directory.
    #[error("barrier {dir}: holds {found} for a run of {other} shards, this one has {count} (use a fresh directory per run)")]
    Mixed {
        /// The directory.
        dir: PathBuf,
        /// One offending file name.
        found: String,
        /// Its shard count.
        other: u32,
        /// This run's.
        count: u32,
    },
    /// Not every shard arrived in time.
    #[error("barrier {dir}: shards {missing:?} of {count} did not arrive within {waited_s:.0} s")]
    Timeout {
        /// The directory.
        dir: PathBuf,
        /// The shards (1-based) still missing.
        missing: Vec<u32>,
        /// The run's shard count.
        count: u32,
        /// How long this shard waited.
        waited_s: f64,
    },
    /// The wait was given up before every shard arrived ([`barrier_until`]'s `give_up`).
    #[error("barrier {dir}: {reason}")]
    GaveUp {
        /// The directory.
        dir: PathBuf,
        /// Why (another shard stopped, …).
        reason: String,
    },
}

impl FromStr for StartAt {
    type Err = StartError;

    fn from_str(s: &str) -> Result<StartAt, StartError> {
        if let Some(dir) = s.strip_prefix("barrier:") {
            if dir.is_empty() {
                return Err(StartError::Syntax(s.to_string()));
            }
            return Ok(StartAt::Barrier(PathBuf::from(dir)));
        }
        let t = DateTime::parse_from_rfc3339(s.trim())
            .map_err(|_| StartError::Syntax(s.to_string()))?;
        Ok(StartAt::Time(SystemTime::from(t.with_timezone(&Utc))))
    }
}

/// How the barrier waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierOptions {
    /// Time from the last shard's arrival to the start: at least a few polls, so that every
    /// shard sees the last file before the start (default 1 s).
    pub lead: Duration,
    /// How often the directory is listed (default 20 ms).
    pub poll: Duration,
    /// Give up after this long (default 10 minutes: pods can take that long to schedule).
    pub timeout: Duration,
}

impl Default for BarrierOptions {
    fn default() -> Self {
        BarrierOptions {
            lead: Duration::from_secs(1),
            poll: Duration::from_millis(20),
            timeout: Duration::from_secs(600),
        }
    }
}

/// RFC 3339 with nanoseconds, UTC (`2026-12-03T19:00:00.123456789Z`).
pub fn rfc3339(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// The barrier file of `shard`.
pub fn barrier_file(dir: &Path, shard: Shard) -> PathBuf {
    dir.join(format!("shard-{}-of-{}.ready", shard.index, shard.count))
}

/// Parses `shard-K-of-N.ready`.
fn parse_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("shard-")?.strip_suffix(".ready")?;
    let (k, n) = rest.split_once("-of-")?;
    Some((k.parse().ok()?, n.parse().ok()?))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StartError + '_ {
    move |source| StartError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Arrive at the barrier in `dir` as `shard`, wait for the others, and return the common
/// start instant (which may lie up to [`BarrierOptions::lead`] in the future).
pub fn barrier(dir: &Path, shard: Shard, opts: &BarrierOptions) -> Result<SystemTime, StartError> {
    barrier_until(dir, shard, opts, &mut || None)
}

/// [`barrier`] that asks `give_up` at every poll whether to stop waiting (`Some(reason)`:
/// [`StartError::GaveUp`]), e.g. because another shard has stopped for good.
pub fn barrier_until(
    dir: &Path,
    shard: Shard,
    opts: &BarrierOptions,
    give_up: &mut dyn FnMut() -> Option<String>,
) -> Result<SystemTime, StartError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let file = barrier_file(dir, shard);
    let arrived = SystemTime::now();
    crate::atomic::write(&file, (rfc3339(arrived) + "\n").as_bytes()).map_err(io(&file))?;
    let waited = std::time::Instant::now();
    loop {
        let mut ready: Vec<Option<SystemTime>> = vec![None; shard.count as usize];
        for entry in std::fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((k, n)) = parse_name(&name) else {
                continue;
            };
            if n != shard.count {
                return Err(StartError::Mixed {
                    dir: dir.to_path_buf(),
                    found: name,
                    other: n,
                    count: shard.count,
                });
            }
            let Some(slot) = k.checked_sub(1).and_then(|i| ready.get_mut(i as usize)) else {
                continue;
            };
            let path = entry.path();
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let line = text.lines().next().unwrap_or("").trim().to_string();
            match line.parse::<StartAt>() {
                Ok(StartAt::Time(t)) => *slot = Some(t),
                _ => {
                    return Err(StartError::BadFile {
                        path,
                        content: line,
                    })
                }
            }
        }
        if ready.iter().all(Option::is_some) {
            let last = ready.iter().flatten().max().copied().unwrap_or(arrived);
            return Ok(last + opts.lead);
        }
        if waited.elapsed() >= opts.timeout {
            let missing = (1..=shard.count)
                .filter(|k| ready[(*k - 1) as usize].is_none())
                .collect();
            return Err(StartError::Timeout {
                dir: dir.to_path_buf(),
                missing,
                count: shard.count,
                waited_s: waited.elapsed().as_secs_f64(),
            });
        }
        if let Some(reason) = give_up() {
            return Err(StartError::GaveUp {
                dir: dir.to_path_buf(),
                reason,
            });
        }
        std::thread::sleep(opts.poll);
    }
}

impl StartAt {
    /// The start instant: the given time, or the barrier's (waiting for the other shards).
    pub fn resolve(&self, shard: Shard, opts: &BarrierOptions) -> Result<SystemTime, StartError> {
        match self {
            StartAt::Time(t) => Ok(*t),
            StartAt::Barrier(dir) => barrier(dir, shard, opts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "servebench-start-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn shards_meeting_at_a_barrier_agree_on_the_start() {
        let dir = temp_dir("agree");
        let opts = BarrierOptions {
            lead: Duration::from_millis(200),
            poll: Duration::from_millis(5),
            timeout: Duration::from_secs(20),
        };
        let starts: Vec<SystemTime> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..=3)
                .map(|k| {
                    let dir = &dir;
                    s.spawn(move || {
                        std::thread::sleep(Duration::from_millis(30 * u64::from(k)));
                        barrier(dir, Shard::new(k, 3).unwrap(), &opts).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(starts.iter().all(|t| *t == starts[0]), "{starts:?}");
        // The start is the last arrival plus the lead: in the future when they all return.
        assert!(starts[0] > SystemTime::now());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_shard_times_out_naming_it() {
        let dir = temp_dir("timeout");
        let opts = BarrierOptions {
            timeout: Duration::from_millis(60),
            ..BarrierOptions::default()
        };
        let e = barrier(&dir, Shard::new(2, 3).unwrap(), &opts).unwrap_err();
        match e {
            StartError::Timeout { missing, count, .. } => {
                assert_eq!((missing, count), (vec![1, 3], 3))
            }
            other => panic!("{other}"),
        }
        // Another run's files (2 shards) in the same directory are refused.
        let e = barrier(&dir, Shard::new(1, 2).unwrap(), &opts).unwrap_err();
        assert!(
            matches!(
                e,
                StartError::Mixed {
                    other: 3,
                    count: 2,
                    ..
                }
            ),
            "{e}"
        );
        std::fs::remove_file(barrier_file(&dir, Shard::new(1, 2).unwrap())).unwrap();
        std::fs::write(barrier_file(&dir, Shard::new(3, 3).unwrap()), "soon\n").unwrap();
        let e = barrier(&dir, Shard::new(1, 3).unwrap(), &opts).unwrap_err();
        assert!(
            matches!(e, StartError::BadFile { ref content, .. } if content == "soon"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn times_parse_with_offsets_and_fractions() {
        let a: StartAt = "2026-12-03T20:00:00.5+01:00".parse().unwrap();
        let b: StartAt = "2026-12-03T19:00:00.500Z".parse().unwrap();
        assert_eq!(a, b);
        let StartAt::Time(t) = b else { panic!() };
        assert_eq!(rfc3339(t), "2026-12-03T19:00:00.500000000Z");
        assert!(matches!(
            "barrier:".parse::<StartAt>(),
            Err(StartError::Syntax(_))
        ));
    }
}
