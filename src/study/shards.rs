//! Sharded studies (`servebench study run FILE --shard K/N --start-at barrier:DIR`): the N
//! shard processes of one study meeting in a shared directory.
//!
//! Every shard runs the whole study and sends only its part of each run, exactly as
//! `bench --shard` partitions one run ([`crate::driver::shard`]). Through the shared
//! directory ([`Exchange`]) the shards
//!
//! * **agree on what is done** when they start ([`Exchange::agree`]): the same study file,
//!   the runs every shard has finished (a run some shard lacks is run again by all) and the
//!   failures any shard recorded — so `--resume` works per shard;
//! * **share the server**: shard 1 launches each configuration's server and publishes its
//!   URL ([`ServerNote`]); the others wait for it and load that server;
//! * **start every run together**: a barrier per run ([`crate::driver::start`]);
//! * **exchange their run files** after each run and merge them ([`merge_shard_runs`]), so
//!   every shard decides the ladder on the whole run's result: all shards take the same
//!   decisions, the ones the merged study (`servebench study merge`) shows;
//! * **fail together**: a configuration that fails on one shard fails on all, a shard that
//!   stops (an error, Ctrl-C) ends the others' waits at once, and a shard that dies
//!   silently is noticed by the others' timeout, which names it.
//!
//! The shared directory, one fresh directory per invocation (like `bench`'s barrier):
//!
//! ```text
//! DIR/start/shard-K-of-N.json               what shard K has finished, its study file
//! DIR/start/shard-K-of-N.ready              the start barrier
//! DIR/001-CONFIG/server.json                shard 1's server: URL, /v1/models answer
//! DIR/001-CONFIG/failed-K                   the configuration failed on shard K: why
//! DIR/001-CONFIG/PROFILE-rN/shard-K-of-N.ready   the run's barrier
//! DIR/001-CONFIG/PROFILE-rN/shard-K-of-N.json    shard K's part of the run
//! DIR/abort-K                               shard K stopped: why
//! ```
//!
//! ```
//! use servebench::study::ShardedError;
//! let e = ShardedError::Simulator { engine: "vLLM".into() };
//! assert!(e.to_string().contains("engine `vLLM` is the embedded simulator"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::file::{EngineKind, StudyFile};
use super::journal::{write_atomic, Failure};
use super::StudyError;
use crate::driver::shard::Shard;
use crate::driver::start::{barrier_file, barrier_until, BarrierOptions, StartError};
use crate::merge::{merge, MergeError, MergeOptions};
use crate::runfile::RunFile;

/// Why a sharded study cannot go on. Each names the shard, directory or run concerned.
#[derive(Debug, thiserror::Error)]
pub enum ShardedError {
    /// A simulator engine in a sharded study.
    #[error("engine `{engine}` is the embedded simulator; the shards of a study must load one server, and a simulator inside each shard process would see only that shard's requests (use `kind = \"command\"` engines: shard 1 launches each server, the others load it)")]
    Simulator {
        /// The engine's name.
        engine: String,
    },
    /// A shard of a study without a barrier directory to meet the others in.
    #[error("a sharded study needs a barrier directory: a study starts many runs and the shards meet in that shared directory before each one (a wall-clock time would align only the first)")]
    NeedsBarrier,
    /// A study directory of another shard (or of an unsharded study).
    #[error("{}: the study there was run as {}, not as {}", dir.display(), show(*journal), show(*given))]
    WrongShard {
        /// The study directory.
        dir: PathBuf,
        /// The shard its journal records.
        journal: Option<Shard>,
        /// The shard asked for.
        given: Option<Shard>,
    },
    /// A shared directory an earlier invocation used.
    #[error("{}: holds shard {shard}'s files of an earlier invocation; give each run of the study, and each resumption, a fresh barrier directory", dir.display())]
    UsedDirectory {
        /// The shared directory.
        dir: PathBuf,
        /// This shard.
        shard: Shard,
    },
    /// Waiting for the other shards failed (timeout naming the missing shards, …).
    #[error("{what}: {source}")]
    Wait {
        /// What was waited for (`run vllm-…/a/r1`).
        what: String,
        /// Why it ended.
        source: StartError,
    },
    /// Another shard stopped (its error or Ctrl-C).
    #[error("shard {shard} stopped: {reason}")]
    Stopped {
        /// The shard (1-based).
        shard: u32,
        /// Its reason.
        reason: String,
    },
    /// Another shard runs another study file.
    #[error("shard {shard} runs another study: its study file differs from this shard's")]
    DifferentStudy {
        /// The other shard.
        shard: Shard,
    },
    /// A run's shard files do not merge.
    #[error("run {run}: {source}")]
    Merge {
        /// The run key.
        run: String,
        /// Why.
        source: Box<MergeError>,
    },
    /// A file in the shared directory that does not parse.
    #[error("{}: {message}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn show(s: Option<Shard>) -> String {
    s.map_or("an unsharded study".into(), |s| format!("shard {s}"))
}

/// Refuses a study that cannot be sharded: one with a simulator engine.
pub fn refuse_simulators(study: &StudyFile) -> Result<(), ShardedError> {
    match study
        .engines
        .iter()
        .find(|e| e.kind == EngineKind::Simulator)
    {
        Some(e) => Err(ShardedError::Simulator {
            engine: e.name.clone(),
        }),
        None => Ok(()),
    }
}

/// Merges one run's shard files into the run one client would have recorded
/// ([`crate::merge::merge`]), with the within-run intervals the study's verdicts use.
pub fn merge_shard_runs(runs: &[(String, RunFile)], run: &str) -> Result<RunFile, ShardedError> {
    let merged = merge(runs, &MergeOptions::default()).map_err(|e| ShardedError::Merge {
        run: run.to_string(),
        source: Box::new(e),
    })?;
    let mut file = merged.run;
    // As the runner does for every run: a run too small for intervals keeps none.
    let _ = crate::noise::within::attach_intervals(
        &file.records,
        &mut file.result,
        &crate::noise::within::IntervalOptions::default(),
    );
    Ok(file)
}

/// Shard 1's server for a configuration, as the other shards load it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerNote {
    /// Its base URL (`http://10.0.0.5:8000`).
    pub url: String,
    /// Its `/v1/models` answer.
    #[serde(default)]
    pub models: Option<serde_json::Value>,
}

/// What the shards agreed on when they started.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Agreement {
    /// Runs every shard has finished (the others are run again by all).
    pub runs: BTreeSet<String>,
    /// Failures any shard recorded (the lowest shard's record where several did).
    pub failures: BTreeMap<String, Failure>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Finished {
    study: StudyFile,
    runs: BTreeSet<String>,
    failures: BTreeMap<String, Failure>,
}

/// How a wait for the other shards ended, when not by an error.
#[derive(Debug, Clone, PartialEq)]
pub enum Meet<T> {
    /// Everyone is there.
    Ready(T),
    /// The configuration failed on some shard: why.
    Failed(String),
    /// This shard was cancelled (Ctrl-C).
    Cancelled,
}

/// One shard's side of the shared directory. See the module docs for its layout.
#[derive(Debug, Clone)]
pub struct Exchange {
    root: PathBuf,
    shard: Shard,
    opts: BarrierOptions,
    session: PathBuf,
    sessions: u32,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StudyError + '_ {
    move |e| StudyError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

impl Exchange {
    /// Shard `shard`'s side of the shared directory `root`; a wait for the other shards
    /// gives up after `timeout`.
    pub fn new(root: &Path, shard: Shard, timeout: Duration) -> Exchange {
        Exchange {
            root: root.to_path_buf(),
            shard,
            opts: BarrierOptions {
                timeout,
                ..BarrierOptions::default()
            },
            session: root.join("000-none"),
            sessions: 0,
        }
    }

    /// This shard.
    pub fn shard(&self) -> Shard {
        self.shard
    }

    fn name(&self, k: u32) -> String {
        format!("shard-{k}-of-{}", self.shard.count)
    }

    /// The first other shard that stopped, with its reason.
    fn stopped(&self) -> Option<(u32, String)> {
        let entries = std::fs::read_dir(&self.root).ok()?;
        let mut found: Vec<(u32, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let k: u32 = name.strip_prefix("abort-")?.parse().ok()?;
                (k != self.shard.index).then(|| (k, e.path()))
            })
            .collect();
        found.sort();
        let (k, path) = found.into_iter().next()?;
        let reason = std::fs::read_to_string(path).unwrap_or_default();
        Some((k, reason.trim().to_string()))
    }

    /// The configuration's failure on the lowest shard that recorded one.
    fn failed(&self) -> Option<String> {
        (1..=self.shard.count).find_map(|k| {
            std::fs::read_to_string(self.session.join(format!("failed-{k}")))
                .ok()
                .map(|r| r.trim().to_string())
        })
    }

    /// An error for another shard's stop, if any.
    fn check_stopped(&self) -> Result<(), ShardedError> {
        match self.stopped() {
            Some((shard, reason)) => Err(ShardedError::Stopped { shard, reason }),
            None => Ok(()),
        }
    }

    /// Meets the other shards before the first session: checks that they run the same
    /// study and agrees on the finished runs and the failures (see [`Agreement`]).
    pub fn agree(
        &self,
        study: &StudyFile,
        runs: &BTreeSet<String>,
        failures: &BTreeMap<String, Failure>,
    ) -> Result<Agreement, StudyError> {
        let dir = self.root.join("start");
        if barrier_file(&dir, self.shard).exists() {
            return Err(ShardedError::UsedDirectory {
                dir: self.root.clone(),
                shard: self.shard,
            }
            .into());
        }
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let mine = dir.join(format!("{}.json", self.name(self.shard.index)));
        let body = Finished {
            study: study.clone(),
            runs: runs.clone(),
            failures: failures.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&body).map_err(|e| io_err(&mine)(e.into()))?;
        write_atomic(&mine, &bytes).map_err(io_err(&mine))?;
        let mut why = None;
        barrier_until(&dir, self.shard, &self.opts, &mut || {
            why = self.stopped();
            why.as_ref().map(|(k, r)| format!("shard {k} stopped: {r}"))
        })
        .map_err(|source| self.wait_error("the shards' start", source, why.take()))?;
        let mut agreed = Agreement {
            runs: runs.clone(),
            failures: BTreeMap::new(),
        };
        for k in 1..=self.shard.count {
            let path = dir.join(format!("{}.json", self.name(k)));
            let bytes = std::fs::read(&path).map_err(io_err(&path))?;
            let theirs: Finished =
                serde_json::from_slice(&bytes).map_err(|e| ShardedError::BadFile {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
            if theirs.study != *study {
                return Err(ShardedError::DifferentStudy {
                    shard: Shard::new(k, self.shard.count).unwrap_or(self.shard),
                }
                .into());
            }
            agreed.runs.retain(|r| theirs.runs.contains(r));
            for (key, f) in theirs.failures {
                agreed.failures.entry(key).or_insert(f);
            }
        }
        Ok(agreed)
    }

    fn wait_error(
        &self,
        what: &str,
        source: StartError,
        stopped: Option<(u32, String)>,
    ) -> StudyError {
        match stopped {
            Some((shard, reason)) => ShardedError::Stopped { shard, reason }.into(),
            None => ShardedError::Wait {
                what: what.to_string(),
                source,
            }
            .into(),
        }
    }

    /// Enters the next server session (configuration `config`): every shard numbers the
    /// sessions alike, as they take the same decisions.
    pub fn begin_session(&mut self, config: &str) {
        self.sessions += 1;
        self.session = self.root.join(format!("{:03}-{config}", self.sessions));
    }

    /// Shard 1: publishes the session's server.
    pub fn publish_server(&self, note: &ServerNote) -> Result<(), StudyError> {
        std::fs::create_dir_all(&self.session).map_err(io_err(&self.session))?;
        let path = self.session.join("server.json");
        let bytes = serde_json::to_vec_pretty(note).map_err(|e| io_err(&path)(e.into()))?;
        write_atomic(&path, &bytes).map_err(io_err(&path))
    }

    /// Records that the session's configuration failed on this shard.
    pub fn publish_failure(&self, reason: &str) -> Result<(), StudyError> {
        std::fs::create_dir_all(&self.session).map_err(io_err(&self.session))?;
        let path = self.session.join(format!("failed-{}", self.shard.index));
        write_atomic(&path, reason.as_bytes()).map_err(io_err(&path))
    }

    /// Tells the other shards that this one stopped (best effort: the others' waits end).
    pub fn abort(&self, reason: &str) {
        let path = self.root.join(format!("abort-{}", self.shard.index));
        let _ = std::fs::create_dir_all(&self.root);
        let _ = write_atomic(&path, reason.as_bytes());
    }

    /// Polls `ready` until it gives a value, the configuration fails, another shard stops,
    /// this one is cancelled or `limit` passes (then `missing` names who is late).
    fn poll<T>(
        &self,
        what: &str,
        dir: &Path,
        limit: Duration,
        cancel: &AtomicBool,
        mut ready: impl FnMut() -> Result<Result<T, Vec<u32>>, StudyError>,
    ) -> Result<Meet<T>, StudyError> {
        let t0 = Instant::now();
        loop {
            let missing = match ready()? {
                Ok(v) => return Ok(Meet::Ready(v)),
                Err(missing) => missing,
            };
            if let Some(reason) = self.failed() {
                return Ok(Meet::Failed(reason));
            }
            self.check_stopped()?;
            if cancel.load(Ordering::SeqCst) {
                return Ok(Meet::Cancelled);
            }
            if t0.elapsed() >= limit {
                return Err(ShardedError::Wait {
                    what: what.to_string(),
                    source: StartError::Timeout {
                        dir: dir.to_path_buf(),
                        missing,
                        count: self.shard.count,
                        waited_s: t0.elapsed().as_secs_f64(),
                    },
                }
                .into());
            }
            std::thread::sleep(self.opts.poll);
        }
    }

    /// Shards 2…N: waits for shard 1's server (allowing `launch` on top of the timeout for
    /// its start).
    pub fn wait_server(
        &self,
        launch: Duration,
        cancel: &AtomicBool,
    ) -> Result<Meet<ServerNote>, StudyError> {
        let path = self.session.join("server.json");
        self.poll(
            "shard 1's server",
            &self.session,
            self.opts.timeout + launch,
            cancel,
            || match std::fs::read(&path) {
                Ok(bytes) => serde_json::from_slice(&bytes).map(Ok).map_err(|e| {
                    ShardedError::BadFile {
                        path: path.clone(),
                        message: e.to_string(),
                    }
                    .into()
                }),
                Err(_) => Ok(Err(vec![1])),
            },
        )
    }

    /// Meets the other shards at run `run`'s barrier: the instant the run starts.
    pub fn start_run(
        &self,
        run: &str,
        cancel: &AtomicBool,
    ) -> Result<Meet<SystemTime>, StudyError> {
        let dir = self.session.join(run);
        let mut ended: Option<Meet<SystemTime>> = None;
        let mut stopped = None;
        let t = barrier_until(&dir, self.shard, &self.opts, &mut || {
            if let Some(r) = self.failed() {
                ended = Some(Meet::Failed(r));
            } else if cancel.load(Ordering::SeqCst) {
                ended = Some(Meet::Cancelled);
            } else {
                stopped = self.stopped();
                return stopped
                    .as_ref()
                    .map(|(k, r)| format!("shard {k} stopped: {r}"));
            }
            Some("the session ended".into())
        });
        match (t, ended) {
            (Ok(t), _) => Ok(Meet::Ready(t)),
            (Err(StartError::GaveUp { .. }), Some(m)) => Ok(m),
            (Err(source), _) => Err(self.wait_error(&format!("run {run}"), source, stopped)),
        }
    }

    /// Publishes this shard's part of run `run`.
    pub fn publish_run(&self, run: &str, file: &RunFile) -> Result<(), StudyError> {
        let dir = self.session.join(run);
        let path = dir.join(format!("{}.json", self.name(self.shard.index)));
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        file.write_atomic(&path)
            .map_err(|e| io_err(&path)(std::io::Error::other(e)))
    }

    /// Waits for every shard's part of run `run` and reads them, in shard order.
    pub fn gather(
        &self,
        run: &str,
        cancel: &AtomicBool,
    ) -> Result<Meet<Vec<(String, RunFile)>>, StudyError> {
        let dir = self.session.join(run);
        let paths: Vec<PathBuf> = (1..=self.shard.count)
            .map(|k| dir.join(format!("{}.json", self.name(k))))
            .collect();
        let got = self.poll(
            &format!("the shards' parts of run {run}"),
            &dir,
            self.opts.timeout,
            cancel,
            || {
                let missing: Vec<u32> = (1..=self.shard.count)
                    .filter(|k| !paths[(*k - 1) as usize].exists())
                    .collect();
                Ok(if missing.is_empty() {
                    Ok(())
                } else {
                    Err(missing)
                })
            },
        )?;
        match got {
            Meet::Ready(()) => {}
            Meet::Failed(r) => return Ok(Meet::Failed(r)),
            Meet::Cancelled => return Ok(Meet::Cancelled),
        }
        let mut runs = Vec::with_capacity(paths.len());
        for path in paths {
            let file = RunFile::read(&path).map_err(|e| ShardedError::BadFile {
                path: path.clone(),
                message: e.to_string(),
            })?;
            runs.push((path.display().to_string(), file));
        }
        Ok(Meet::Ready(runs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study(title: &str) -> StudyFile {
        let text = format!(
            r#"format = "servebench-study"
version = 1
title = "{title}"
model = "M"
hardware = "H"
[profiles.a]
dataset_name = "Random"
dataset_input_tokens = 8
dataset_output_tokens = 8
request_rate = 10
total_requests = 4
[[engines]]
name = "e"
kind = "command"
command = ["server", "{{port}}"]
[ladder]
profiles = ["a"]
[final]
profiles = ["a"]
"#
        );
        StudyFile::parse(&text, Path::new("s.toml")).unwrap()
    }

    fn root(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "servebench-shards-unit-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn ex(root: &Path, k: u32, timeout_ms: u64) -> Exchange {
        let mut x = Exchange::new(
            root,
            Shard::new(k, 2).unwrap(),
            Duration::from_millis(timeout_ms),
        );
        x.opts.lead = Duration::from_millis(10);
        x.opts.poll = Duration::from_millis(5);
        x
    }

    fn failure(reason: &str) -> Failure {
        Failure {
            reason: reason.into(),
            log: None,
            retryable: true,
        }
    }

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn shards_agree_on_the_runs_all_finished_and_on_every_failure() {
        let dir = root("agree");
        let s = study("T");
        let mine = [
            (
                set(&["a", "b"]),
                BTreeMap::from([("x".into(), failure("one"))]),
            ),
            (
                set(&["b", "c"]),
                BTreeMap::from([("x".into(), failure("two")), ("y".into(), failure("two"))]),
            ),
        ];
        let agreed: Vec<Agreement> = std::thread::scope(|sc| {
            let hs: Vec<_> = (1..=2)
                .map(|k| {
                    let (dir, s, mine) = (&dir, &s, &mine);
                    sc.spawn(move || {
                        let (runs, failures) = &mine[k as usize - 1];
                        ex(dir, k, 10_000).agree(s, runs, failures).unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for a in &agreed {
            assert_eq!(a.runs, set(&["b"]));
            assert_eq!(a.failures["x"].reason, "one", "the lowest shard's record");
            assert_eq!(a.failures["y"].reason, "two");
        }
        // The directory is one invocation's: a second start there is refused.
        let e = ex(&dir, 1, 100)
            .agree(&s, &set(&[]), &BTreeMap::new())
            .unwrap_err();
        assert!(e.to_string().contains("fresh barrier directory"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_shard_of_another_study_is_named() {
        let dir = root("other");
        let errs: Vec<String> = std::thread::scope(|sc| {
            let hs: Vec<_> = [(1, "T"), (2, "U")]
                .into_iter()
                .map(|(k, title)| {
                    let dir = &dir;
                    sc.spawn(move || {
                        let e = ex(dir, k, 10_000)
                            .agree(&study(title), &set(&[]), &BTreeMap::new())
                            .unwrap_err();
                        e.to_string()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(errs[0].contains("shard 2/2 runs another study"), "{errs:?}");
        assert!(errs[1].contains("shard 1/2 runs another study"), "{errs:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failure_on_one_shard_ends_the_others_waits_with_its_reason() {
        let dir = root("failed");
        let never = AtomicBool::new(false);
        let (mut one, mut two) = (ex(&dir, 1, 10_000), ex(&dir, 2, 10_000));
        one.begin_session("cfg");
        two.begin_session("cfg");
        one.publish_failure("the server exited (signal 9)").unwrap();
        let why = "the server exited (signal 9)".to_string();
        assert_eq!(
            two.wait_server(Duration::ZERO, &never).unwrap(),
            Meet::Failed(why.clone())
        );
        assert_eq!(two.start_run("a-r1", &never).unwrap(), Meet::Failed(why));
        assert!(matches!(
            two.gather("a-r1", &never).unwrap(),
            Meet::Failed(_)
        ));
        // The next session starts clean.
        one.begin_session("cfg2");
        two.begin_session("cfg2");
        let note = ServerNote {
            url: "http://127.0.0.1:9".into(),
            models: None,
        };
        one.publish_server(&note).unwrap();
        assert_eq!(
            two.wait_server(Duration::ZERO, &never).unwrap(),
            Meet::Ready(note)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_stopped_shard_ends_the_waits_and_a_silent_one_times_out_by_name() {
        let dir = root("stopped");
        let never = AtomicBool::new(false);
        let (mut one, mut two) = (ex(&dir, 1, 150), ex(&dir, 2, 150));
        one.begin_session("cfg");
        two.begin_session("cfg");
        // Shard 2 never comes: shard 1's wait names it.
        let result = crate::metrics::compute(
            &[],
            crate::metrics::MetricsOptions::new(crate::result::Convention::Vllm),
        );
        let profile = crate::profile::Profile::preset("latency").unwrap();
        let part = RunFile::new(
            result,
            Vec::new(),
            profile,
            chrono::Utc::now().fixed_offset(),
        );
        one.publish_run("a-r1", &part).unwrap();
        let e = one.gather("a-r1", &never).unwrap_err().to_string();
        assert!(e.contains("shards [2] of 2 did not arrive"), "{e}");
        let e = one.start_run("a-r1", &never).unwrap_err().to_string();
        assert!(e.contains("run a-r1") && e.contains("[2] of 2"), "{e}");
        // Shard 2 stops and says so: shard 1's waits end at once with its reason.
        two.abort("cancelled (Ctrl-C)");
        let e = one.start_run("b-r1", &never).unwrap_err().to_string();
        assert_eq!(e, "shard 2 stopped: cancelled (Ctrl-C)");
        let e = one.wait_server(Duration::ZERO, &never).unwrap_err();
        assert!(e.to_string().starts_with("shard 2 stopped"), "{e}");
        // A cancelled shard stops waiting.
        let mut three = ex(&root("cancel"), 1, 10_000);
        three.begin_session("cfg");
        let cancel = AtomicBool::new(true);
        assert_eq!(three.start_run("a-r1", &cancel).unwrap(), Meet::Cancelled);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(root("cancel"));
    }
}
