//! A capacity study's runs (`goal = "capacity"`): each (configuration, profile, repetition)
//! is a capacity search ([`crate::capacity::search()`]) under the study's SLO, whose probes
//! run the profile at the probe's load — on a fresh simulator, or through `bench` against
//! the launched server. Every probe is written as a run file beside the run's
//! (`runs/CONFIG/PROFILE-rN-probes/probe-NNN.json`, its place in `capacity_probe`); the
//! run's own file is the probe at the highest load that held, with the search's answer in
//! `result.capacity`, so the decision rule and the document read the capacity from it.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{prepared, simulate_on, Runner, PREFIX_CACHE_LABEL, SIM_RESTART};
use crate::app::bench::{BenchArgs, BenchError, BenchRun};
use crate::app::capacity::probe_args;
use crate::capacity::{estimate_of, probe_of, search, SearchOutcome, SloTarget};
use crate::profile::Profile;
use crate::result::{CapacityProbe, SearchKind};
use crate::runfile::RunFile;
use crate::sim::H200Sim;
use crate::study::plan::Session;
use crate::study::StudyError;

/// The profile of a probe at `load`, and the client's cap for a concurrency probe.
fn probe_profile(profile: &Profile, kind: SearchKind, load: f64) -> (Profile, Option<usize>) {
    let mut p = profile.clone();
    match kind {
        SearchKind::Rate => {
            // Bounded by time, as `bench`'s probes are ([`crate::app::capacity::probe_args`]).
            p.total_requests =
                crate::capacity::probe_requests(load, crate::capacity::DEFAULT_PROBE_SECONDS);
            p.request_rate = load;
            (p, None)
        }
        SearchKind::Concurrency => {
            let cap = load.round().max(1.0) as usize;
            p.request_rate = f64::INFINITY;
            p.max_concurrency = Some(cap as u64);
            (p, Some(cap))
        }
    }
}

/// The probe that stands for the search: the first at the highest load that held (else the
/// first probe).
fn representative(outcome: &SearchOutcome) -> usize {
    outcome
        .lower
        .and_then(|l| outcome.probes.iter().position(|p| p.load == l))
        .unwrap_or(0)
}

/// Why a search of a launched server stopped early.
enum Stop {
    Bench(BenchError),
    Aborted(Box<BenchRun>),
}

impl Runner {
    fn capacity_setup(&self) -> Option<(SloTarget, SearchKind, crate::capacity::SearchOptions)> {
        let slo = self.study.slo_target()?;
        let (kind, opts) = self.study.search_options()?;
        Some((slo, kind, opts))
    }

    fn probe_labels(&self, session: &Session, rep: u32, run: &mut RunFile) {
        run.labels.insert("study".into(), self.study.title.clone());
        run.labels
            .insert("configuration".into(), session.config.key());
        run.labels
            .insert("engine".into(), session.config.engine.clone());
        run.labels.insert("purpose".into(), session.purpose.clone());
        run.labels.insert("repetition".into(), rep.to_string());
        run.result.meta.backend_parameters = session.config.flags.clone();
    }

    fn write_probe(
        &self,
        session: &Session,
        profile: &str,
        rep: u32,
        probe: &CapacityProbe,
        run: &RunFile,
    ) -> Result<(), StudyError> {
        let rel = format!(
            "runs/{}/{profile}-r{rep}-probes/probe-{:03}.json",
            session.config.key(),
            probe.index
        );
        self.write_run(&rel, run)
    }

    /// [`Runner::simulate`] of a capacity study: a search per run, each probe on a fresh
    /// simulator.
    pub(super) fn simulate_capacity(
        &mut self,
        session: &Session,
        config: &crate::sim::Config,
        params: &crate::sim::Params,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), StudyError> {
        let key = session.config.key();
        let Some((slo, kind, opts)) = self.capacity_setup() else {
            return Err(StudyError::Usage(
                "a capacity study needs `slo` and `[capacity]`".into(),
            ));
        };
        for (i, (pname, rep)) in session.runs.iter().enumerate() {
            if self
                .outcomes
                .results
                .contains_key(&crate::study::journal::run_key(&key, pname, *rep))
            {
                continue;
            }
            let profile = self.study.profile(pname).map_err(StudyError::Usage)?;
            let seed = self.seed(*rep);
            let mut probes: Vec<RunFile> = Vec::new();
            let found = search(&opts, &mut |at| {
                let (p, cap) = probe_profile(&profile, kind, at.load);
                let interval = crate::study::observe::SCRAPE_INTERVAL;
                let engine = H200Sim::with_params(config.clone(), params.clone())
                    .sample_metrics_every(interval);
                let mut engine = prepared(engine, &p, i > 0);
                let out = simulate_on(&mut engine, &p, config, seed, cap)?;
                let check = slo.check_probe(&out.records, kind, Some(p.total_requests));
                let mut run = RunFile::new(
                    out.result,
                    out.records,
                    p,
                    chrono::Utc::now().fixed_offset(),
                );
                run.target = Some("sim:h200".into());
                run.model = Some(session.config.model.clone());
                run.seed = Some(seed);
                run.server_metrics = engine.metrics_series();
                run.labels
                    .insert(PREFIX_CACHE_LABEL.into(), SIM_RESTART.into());
                run.capacity_probe = Some(probe_of(kind, &slo, at, &check));
                probes.push(run);
                Ok::<_, crate::driver::DriverError>(check.worst_ratio)
            });
            let outcome = match found {
                Ok(o) => o,
                Err(e) => return self.fail(&key, format!("{pname}: {e}"), None, false),
            };
            for run in &mut probes {
                self.probe_labels(session, *rep, run);
                if let Some(p) = run.capacity_probe.clone() {
                    self.write_probe(session, pname, *rep, &p, run)?;
                }
            }
            let estimate = estimate_of(kind, &slo, &outcome);
            log(&format!(
                "  {pname} r{rep}: {}",
                crate::format::capacity::capacity_cell(&estimate)
            ));
            let at = representative(&outcome);
            if at >= probes.len() {
                return self.fail(
                    &key,
                    format!("{pname}: the search ran no probe"),
                    None,
                    false,
                );
            }
            let mut run = probes.swap_remove(at);
            run.result.capacity = Some(estimate);
            self.finish(session, &profile, *rep, run)?;
        }
        Ok(())
    }

    /// [`Runner::bench`] of a capacity study: a search whose probes run through `bench`
    /// against the launched server; the representative probe, with the answer in
    /// `result.capacity`, is returned as the run. A probe the engine aborted ends the search
    /// and is returned as it is (the caller records the failure).
    pub(super) fn bench_capacity(
        &self,
        session: &Session,
        pname: &str,
        rep: u32,
        args: BenchArgs,
        cancel: &AtomicBool,
    ) -> Result<BenchRun, BenchError> {
        let write_err = |message: String| BenchError::Write {
            path: format!("runs/{}/{pname}-r{rep}-probes", session.config.key()),
            message,
        };
        let Some((slo, kind, opts)) = self.capacity_setup() else {
            return Err(write_err(
                "a capacity study needs `slo` and `[capacity]`".into(),
            ));
        };
        if args.shard.is_some() {
            return Err(write_err("a capacity study cannot be sharded".into()));
        }
        let mut probes: Vec<BenchRun> = Vec::new();
        let found = search(&opts, &mut |at| {
            if cancel.load(Ordering::SeqCst) {
                return Err(Stop::Bench(write_err("cancelled".into())));
            }
            let mut run = self
                .bench(
                    probe_args(&args, kind, at.load, crate::capacity::DEFAULT_PROBE_SECONDS),
                    cancel,
                )
                .map_err(Stop::Bench)?;
            if run.aborted.is_some() {
                return Err(Stop::Aborted(Box::new(run)));
            }
            let planned = Some(run.file.profile.total_requests);
            let check = slo.check_probe(&run.file.records, kind, planned);
            let probe = probe_of(kind, &slo, at, &check);
            run.file.capacity_probe = Some(probe.clone());
            self.probe_labels(session, rep, &mut run.file);
            self.write_probe(session, pname, rep, &probe, &run.file)
                .map_err(|e| Stop::Bench(write_err(e.to_string())))?;
            probes.push(run);
            Ok(check.worst_ratio)
        });
        let outcome = match found {
            Ok(o) => o,
            Err(Stop::Bench(e)) => return Err(e),
            Err(Stop::Aborted(run)) => return Ok(*run),
        };
        let estimate = estimate_of(kind, &slo, &outcome);
        let at = representative(&outcome);
        if at >= probes.len() {
            return Err(write_err("the search ran no probe".into()));
        }
        let mut run = probes.swap_remove(at);
        run.file.result.capacity = Some(estimate);
        Ok(run)
    }
}
