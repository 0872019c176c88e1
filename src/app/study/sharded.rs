//! The runner's side of a sharded study ([`crate::study::shards`]): agreeing with the other
//! shards when it starts, loading shard 1's server (shards 2…N), meeting the others before
//! each run and deciding on the merge of every run's shard files.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use super::bench_args::bench_args;
use super::{run_key, run_path, Finish, Runner};
use crate::app::bench::{BenchArgs, BenchError, BenchRun};
use crate::driver::shard::Shard;
use crate::driver::stop::StopSignal;
use crate::profile::Profile;
use crate::runfile::RunFile;
use crate::study::file::EngineSpec;
use crate::study::journal::RunEntry;
use crate::study::plan::Session;
use crate::study::shards::{
    merge_shard_runs, refuse_simulators, Exchange, Meet, ServerNote, ShardedError,
};
use crate::study::StudyError;

/// The prefix-cache label of shards 2…N: the reset is shard 1's (its run file tells).
pub const RESET_BY_SHARD_ONE: &str = "left to shard 1";

/// How a run starts.
pub(super) enum Gate {
    /// Unsharded: now.
    Whole,
    /// As this shard, at the instant all shards agreed on.
    Start(Shard, SystemTime),
    /// The configuration failed on another shard.
    Failed(String),
    /// Cancelled while waiting.
    Cancelled,
}

impl Runner {
    /// Makes this runner shard `shard` of a sharded study whose shards meet in `shared` (a
    /// fresh directory per invocation, reachable by every shard); a wait for the others
    /// gives up after `timeout`, naming the shards that did not come. Refused for a study
    /// with a simulator engine, and for a study directory of another shard.
    pub fn set_shard(
        &mut self,
        shard: Shard,
        shared: &Path,
        timeout: Duration,
    ) -> Result<(), StudyError> {
        refuse_simulators(&self.study)?;
        let theirs = self.journal.shard;
        if theirs.is_some_and(|s| s != shard) || (theirs.is_none() && !self.journal.runs.is_empty())
        {
            return Err(ShardedError::WrongShard {
                dir: self.dir.clone().unwrap_or_default(),
                journal: theirs,
                given: Some(shard),
            }
            .into());
        }
        self.journal.shard = Some(shard);
        self.exchange = Some(Exchange::new(shared, shard, timeout));
        self.save()
    }

    /// The shard this study directory holds (a sharded study's), from its journal.
    pub fn shard(&self) -> Option<Shard> {
        self.journal.shard
    }

    /// Whether this runner launches the servers: unsharded, or shard 1.
    pub(super) fn leads(&self) -> bool {
        self.exchange.as_ref().is_none_or(|x| x.shard().index == 1)
    }

    /// [`Runner::run`] of a shard: agree, run, and tell the others when stopping early.
    pub(super) fn run_sharded(
        &mut self,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<Finish, StudyError> {
        let r = self.agree().and_then(|()| self.run_loop(cancel, log));
        if let Some(x) = &self.exchange {
            match &r {
                Err(e) => x.abort(&e.to_string()),
                Ok(Finish::Cancelled) => x.abort("cancelled (Ctrl-C)"),
                Ok(Finish::Complete) => {}
            }
        }
        r
    }

    /// Agrees with the other shards on the finished runs and the failures.
    fn agree(&mut self) -> Result<(), StudyError> {
        let Some(x) = &self.exchange else {
            return Ok(());
        };
        let mine: BTreeSet<String> = self.journal.runs.keys().cloned().collect();
        let agreed = x.agree(&self.study, &mine, &self.journal.failures)?;
        for key in mine.difference(&agreed.runs) {
            self.journal.runs.remove(key);
            self.outcomes.results.remove(key);
            self.outcomes.observed.remove(key);
            self.journal
                .events
                .push(format!("{key}: run again (not finished on every shard)"));
        }
        for (key, f) in agreed.failures {
            self.outcomes
                .failures
                .entry(key.clone())
                .or_insert_with(|| f.clone());
            self.journal.failures.entry(key).or_insert(f);
        }
        self.save()
    }

    /// Shard 1: tells the others where the session's server is.
    pub(super) fn publish_server(
        &self,
        url: &str,
        models: &Option<serde_json::Value>,
    ) -> Result<(), StudyError> {
        match &self.exchange {
            Some(x) => x.publish_server(&ServerNote {
                url: url.to_string(),
                models: models.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Shards 2…N: the session on shard 1's server.
    pub(super) fn follow(
        &mut self,
        spec: &EngineSpec,
        session: &Session,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), StudyError> {
        let key = session.config.key();
        // Failures point at shard 1's log of the server.
        let log_rel = format!("logs/{key}.log");
        let Some(x) = &self.exchange else {
            return Err(StudyError::Usage("not a shard".into()));
        };
        let launch = Duration::from_secs_f64(spec.start_timeout_s.max(0.0));
        let note = match x.wait_server(launch, cancel)? {
            Meet::Ready(n) => n,
            Meet::Failed(reason) => return self.fail(&key, reason, Some(log_rel), true),
            Meet::Cancelled => return Ok(()),
        };
        log(&format!("  loading shard 1's server {}", note.url));
        let api_key = spec.api_key()?.unwrap_or_default();
        let bearer = (!api_key.is_empty()).then_some(api_key.as_str());
        let endpoint = self.study.endpoint.clone();
        let http =
            |profile: Profile| bench_args(spec, endpoint.as_ref(), &note.url, bearer, profile);
        let outcome = self.session_runs(
            session,
            None,
            &key,
            &note.models,
            &note.url,
            &http,
            cancel,
            log,
        )?;
        match outcome {
            None => self.save(),
            Some(reason) => self.fail(&key, reason, Some(log_rel), true),
        }
    }

    /// Runs one run's `bench`. Shard 1 (or an unsharded runner) ends a run in flight on
    /// Ctrl-C by stopping its server; shards 2…N stop their own requests, and leave the
    /// scraping of the server's metrics to shard 1.
    pub(super) fn bench(
        &self,
        mut args: BenchArgs,
        cancel: &AtomicBool,
    ) -> Result<BenchRun, BenchError> {
        if self.leads() {
            return crate::app::bench::run(&args, &mut |_| {});
        }
        let stop = StopSignal::new();
        args.stop = Some(stop.clone());
        // The server's metrics are scraped once, by shard 1 (the merged run keeps its).
        args.scrape_interval = None;
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if cancel.load(Ordering::SeqCst) {
                        stop.stop_now("cancelled (Ctrl-C)");
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let r = crate::app::bench::run(&args, &mut |_| {});
            done.store(true, Ordering::SeqCst);
            r
        })
    }

    /// Meets the other shards before a run (unsharded: [`Gate::Whole`]).
    pub(super) fn gate(
        &self,
        profile: &str,
        rep: u32,
        cancel: &AtomicBool,
    ) -> Result<Gate, StudyError> {
        let Some(x) = &self.exchange else {
            return Ok(Gate::Whole);
        };
        Ok(match x.start_run(&format!("{profile}-r{rep}"), cancel)? {
            Meet::Ready(at) => Gate::Start(x.shard(), at),
            Meet::Failed(reason) => Gate::Failed(reason),
            Meet::Cancelled => Gate::Cancelled,
        })
    }

    /// Stores a finished run; a shard first exchanges its part with the others and decides
    /// on the merged run. `Some(reason)`: the configuration failed on another shard.
    pub(super) fn finish_run(
        &mut self,
        session: &Session,
        profile: &Profile,
        rep: u32,
        mut run: RunFile,
        cancel: &AtomicBool,
    ) -> Result<Option<String>, StudyError> {
        let Some(x) = self.exchange.clone() else {
            self.finish(session, profile, rep, run)?;
            return Ok(None);
        };
        let key = session.config.key();
        let name = profile.name.clone().unwrap_or_default();
        let rkey = run_key(&key, &name, rep);
        self.label(session, rep, &mut run);
        let rel = run_path(&key, &name, rep);
        self.write_run(&rel, &run)?;
        let tag = format!("{name}-r{rep}");
        x.publish_run(&tag, &run)?;
        let parts = match x.gather(&tag, cancel)? {
            Meet::Ready(parts) => parts,
            Meet::Failed(reason) => return Ok(Some(reason)),
            Meet::Cancelled => return Ok(None),
        };
        let merged = merge_shard_runs(&parts, &rkey)?;
        let merged_rel = format!("runs/{key}/{name}-r{rep}.merged.json");
        self.write_run(&merged_rel, &merged)?;
        let entry = RunEntry {
            config: key,
            profile: name,
            rep,
            file: rel,
            merged: Some(merged_rel),
        };
        self.record(rkey, entry, &merged)?;
        Ok(None)
    }
}
