//! A launched server's life around its runs: the start-up it took, recorded per
//! configuration in the journal ([`crate::study::Startup`]: time to healthy, to the first
//! token, the warm-up window), and the clean-up of a server an interrupted runner left
//! behind.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::Runner;
use crate::runfile::RunFile;
use crate::study::journal::LiveServer;
use crate::study::process::{self, Server};
use crate::study::{Startup, StudyError};

/// A server that has just become healthy: when it was launched, how long that took, and
/// the runs finished before its session.
pub(super) struct Healthy {
    launched_at: SystemTime,
    after: Duration,
    runs_before: BTreeSet<String>,
}

impl Runner {
    /// Notes that `server` is healthy now.
    pub(super) fn healthy(&self, server: &Server) -> Healthy {
        Healthy {
            launched_at: server.launched_at,
            after: server.launched_at.elapsed().unwrap_or_default(),
            runs_before: self.journal.runs.keys().cloned().collect(),
        }
    }

    /// Records the start-up of `key`'s server once its session is over: the first request
    /// is the warm-up's (else the session's first run's), the warm-up window the session's
    /// first run's.
    pub(super) fn record_startup(&mut self, key: &str, h: Healthy) -> Result<(), StudyError> {
        let dir = self.dir.clone().unwrap_or_default();
        let new: Vec<(String, RunFile)> = self
            .journal
            .runs
            .iter()
            .filter(|(k, e)| e.config == key && !h.runs_before.contains(*k))
            .filter_map(|(k, e)| Some((k.clone(), RunFile::read(dir.join(&e.file)).ok()?)))
            .collect();
        let measured = new.iter().min_by_key(|(_, f)| f.started_at);
        let warmup = self.warmup_run.take();
        let first_sent = warmup.as_ref().or(measured.map(|(_, f)| f));
        let launches = self.journal.startups.get(key).map_or(0, Vec::len);
        let startup = Startup::of(
            u32::try_from(launches + 1).unwrap_or(u32::MAX),
            h.launched_at,
            h.after,
            first_sent,
            measured.map(|(k, f)| (k.as_str(), f)),
        );
        self.journal
            .startups
            .entry(key.to_string())
            .or_default()
            .push(startup.clone());
        self.outcomes
            .startups
            .entry(key.to_string())
            .or_default()
            .push(startup);
        self.save()
    }
}

/// Stops a server a killed runner left behind, if its process still runs the recorded
/// program (a reused pid is left alone).
pub(super) fn stop_leftover(live: &LiveServer) {
    let Some(program) = live.argv.first() else {
        return;
    };
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", live.pid)).unwrap_or_default();
    let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    if first == program.as_bytes() || !Path::new("/proc/self").exists() {
        process::signal_group(live.pid, process::Signal::SIGKILL);
    }
}
