//! The runner: executes the sessions the study's plan asks for until the study is complete —
//! on the embedded simulator, or by launching each configuration's server (its own process
//! group, health and `/v1/models`, warm-up, every profile × repetition through the `bench`
//! machinery, logs kept, the group stopped afterwards, also on error and on cancel). Every
//! finished run is written as a run file and entered in the journal at once; a failed
//! configuration is recorded and the study goes on.

mod bench_args;
mod capacity;
mod launched;
mod quality;
mod sharded;
mod verbs;

pub use verbs::{estimate, merge_studies, run_in_memory, write_document};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::driver::workload::WorkloadOptions;
use crate::profile::Profile;
use crate::result::BenchmarkResult;
use crate::runfile::RunFile;
use crate::sim::run::starts_cold;
use crate::sim::run::Simulated;
use crate::sim::H200Sim;
use crate::study::file::{EngineKind, EngineSpec, StudyFile};
use crate::study::flags::sim_config;
use crate::study::journal::{run_key, Failure, Journal, LiveServer, RunEntry};
use crate::study::plan::{analyse, Analysis, Outcomes, Session};
use crate::study::process::{self, Fill, NotReady, Server};
use crate::study::StudyError;
use bench_args::{bench_args, reset_prefix_cache};
use launched::stop_leftover;

/// How long a failed run waits for a crashed server's exit to show before the failure is put
/// down to the run itself.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A study in progress: the file, its directory (none: in memory only, simulator engines
/// only) and what has happened.
#[derive(Debug)]
pub struct Runner {
    /// The study.
    pub study: StudyFile,
    dir: Option<PathBuf>,
    journal: Journal,
    /// Finished runs and failures.
    pub outcomes: Outcomes,
    /// A sharded study's meeting place with the other shards.
    exchange: Option<crate::study::shards::Exchange>,
    /// The warm-up run of the session in progress (its first request starts the server's).
    warmup_run: Option<RunFile>,
    /// Live metrics of the runs against launched servers (`study run --metrics-listen`).
    live: Option<std::sync::Arc<crate::observe::live::LiveRuns>>,
}

/// What [`Runner::run`] ended with.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    /// The study is complete.
    Complete,
    /// Cancelled (Ctrl-C): the journal holds everything finished; resume to continue.
    Cancelled,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> StudyError {
    StudyError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

impl Runner {
    /// A study kept in memory only (the main job): simulator engines only.
    pub fn in_memory(study: StudyFile) -> Runner {
        Runner {
            journal: Journal::new(study.clone()),
            study,
            dir: None,
            outcomes: Outcomes::default(),
            exchange: None,
            warmup_run: None,
            live: None,
        }
    }

    /// A new study in `dir` (created; it must not hold a journal already). `source` is the
    /// study file's text, kept as `DIR/study.toml`.
    pub fn create(study: StudyFile, source: &str, dir: &Path) -> Result<Runner, StudyError> {
        if dir.join(crate::study::journal::FILE).exists() {
            return Err(StudyError::Usage(format!(
                "{} already holds a study; continue it with `{}`",
                dir.display(),
                crate::format::shell::resume_hint(dir)
            )));
        }
        std::fs::create_dir_all(dir.join("runs")).map_err(|e| io_err(dir, e))?;
        std::fs::create_dir_all(dir.join("logs")).map_err(|e| io_err(dir, e))?;
        let copy = dir.join("study.toml");
        crate::study::journal::write_atomic(&copy, source.as_bytes())
            .map_err(|e| io_err(&copy, e))?;
        let journal = Journal::new(study.clone());
        journal.write(dir)?;
        Ok(Runner {
            study,
            dir: Some(dir.to_path_buf()),
            journal,
            outcomes: Outcomes::default(),
            exchange: None,
            warmup_run: None,
            live: None,
        })
    }

    /// Continues the study in `dir`: loads every finished run, stops a server a killed
    /// runner left behind, and (with `retry_failures`) forgets server failures so that
    /// those configurations are tried again.
    pub fn resume(dir: &Path, retry_failures: bool) -> Result<Runner, StudyError> {
        let mut journal = Journal::read(dir)?;
        if let Some(live) = journal.server.take() {
            stop_leftover(&live);
            journal.events.push(format!(
                "resume: stopped the server left by an interrupted runner (pid {})",
                live.pid
            ));
        }
        let mut outcomes = Outcomes::default();
        for (key, entry) in &journal.runs {
            // A shard's decisions were taken on the merged run.
            let path = dir.join(entry.merged.as_ref().unwrap_or(&entry.file));
            let run = RunFile::read(&path).map_err(|e| StudyError::File {
                path: path.clone(),
                message: e.to_string(),
            })?;
            outcomes
                .observed
                .insert(key.clone(), crate::study::observe::Observed::of(&run));
            outcomes.results.insert(key.clone(), run.result);
        }
        if retry_failures {
            journal.failures.retain(|_, f| !f.retryable);
        }
        outcomes.failures = journal.failures.clone();
        (outcomes.startups, outcomes.quality) = (journal.startups.clone(), journal.quality.clone());
        journal.events.push("resume".into());
        journal.write(dir)?;
        Ok(Runner {
            study: journal.study.clone(),
            dir: Some(dir.to_path_buf()),
            journal,
            outcomes,
            exchange: None,
            warmup_run: None,
            live: None,
        })
    }

    /// The study directory, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Runs sessions until the study is complete or `cancel` is set. `log` gets one line
    /// per event (for a terminal). A shard ([`Runner::set_shard`]) first agrees with the
    /// other shards on what is done.
    pub fn run(
        &mut self,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<Finish, StudyError> {
        if self.exchange.is_some() {
            return self.run_sharded(cancel, log);
        }
        self.run_loop(cancel, log)
    }

    /// Feeds the live metrics of every run against a launched server to `live` (`study run
    /// --metrics-listen`).
    pub fn set_live(&mut self, live: std::sync::Arc<crate::observe::live::LiveRuns>) {
        self.live = Some(live);
    }

    fn run_loop(
        &mut self,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<Finish, StudyError> {
        loop {
            if cancel.load(Ordering::SeqCst) {
                return Ok(Finish::Cancelled);
            }
            let a = analyse(&self.study, &self.outcomes);
            let Some(session) = a.pending else {
                return Ok(Finish::Complete);
            };
            let key = session.config.key();
            self.journal
                .configs
                .insert(key.clone(), session.config.clone());
            log(&format!(
                "{}: {} [{}]",
                session.purpose,
                session.config.flags.join(" "),
                key
            ));
            let spec = self
                .study
                .engines
                .iter()
                .find(|e| e.name == session.config.engine)
                .cloned()
                .ok_or_else(|| {
                    StudyError::Usage(format!("no engine `{}`", session.config.engine))
                })?;
            let before = self.outcomes.results.len();
            if let Some(x) = &mut self.exchange {
                x.begin_session(&key);
            }
            match spec.kind {
                EngineKind::Simulator => self.simulate(&session, log)?,
                EngineKind::Command if !self.leads() => {
                    self.follow(&spec, &session, cancel, log)?
                }
                EngineKind::Command => self.launch(&spec, &session, cancel, log)?,
            }
            if cancel.load(Ordering::SeqCst) {
                self.save()?;
                return Ok(Finish::Cancelled);
            }
            let again = analyse(&self.study, &self.outcomes);
            if again.pending.as_ref().map(|s| s.config.key()) == Some(key.clone())
                && self.outcomes.results.len() == before
            {
                self.fail(
                    &key,
                    "the session ended with runs left and no recorded cause".into(),
                    None,
                    true,
                )?;
            }
        }
    }

    /// The analysis of what has finished.
    pub fn analysis(&self) -> Analysis {
        analyse(&self.study, &self.outcomes)
    }

    fn save(&self) -> Result<(), StudyError> {
        match &self.dir {
            Some(d) => self.journal.write(d),
            None => Ok(()),
        }
    }

    fn fail(
        &mut self,
        key: &str,
        reason: String,
        log: Option<String>,
        retryable: bool,
    ) -> Result<(), StudyError> {
        if let Some(x) = &self.exchange {
            // The other shards fail this configuration too.
            x.publish_failure(&reason)?;
        }
        self.journal.events.push(format!("{key}: failed: {reason}"));
        let f = Failure {
            reason,
            log,
            retryable,
        };
        self.journal.failures.insert(key.to_string(), f.clone());
        self.outcomes.failures.insert(key.to_string(), f);
        self.save()
    }

    /// Stores a finished run: run file (atomic), then the journal.
    fn finish(
        &mut self,
        session: &Session,
        profile: &Profile,
        rep: u32,
        mut run: RunFile,
    ) -> Result<(), StudyError> {
        let key = session.config.key();
        let name = profile.name.clone().unwrap_or_default();
        self.label(session, rep, &mut run);
        let rel = run_path(&key, &name, rep);
        self.write_run(&rel, &run)?;
        let entry = RunEntry {
            config: key.clone(),
            profile: name.clone(),
            rep,
            file: rel,
            merged: None,
        };
        self.record(run_key(&key, &name, rep), entry, &run)
    }

    /// The study's labels and the within-run intervals of a finished run.
    fn label(&self, session: &Session, rep: u32, run: &mut RunFile) {
        let key = session.config.key();
        run.labels.insert("study".into(), self.study.title.clone());
        run.labels.insert("configuration".into(), key);
        run.labels
            .insert("engine".into(), session.config.engine.clone());
        run.labels.insert("purpose".into(), session.purpose.clone());
        run.labels.insert("repetition".into(), rep.to_string());
        run.result.meta.backend_parameters = session.config.flags.clone();
        // Within-run 95% intervals (block bootstrap over the records), for the verdicts. A
        // run too small or too short for them keeps none; the verdict then says so.
        let _ = crate::noise::within::attach_intervals(
            &run.records,
            &mut run.result,
            &crate::noise::within::IntervalOptions::default(),
        );
        run.result.meta.label = Some(session.purpose.clone());
    }

    /// Writes a run file into the study directory (if any), atomically.
    fn write_run(&self, rel: &str, run: &RunFile) -> Result<(), StudyError> {
        if let Some(dir) = &self.dir {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
            }
            run.write_atomic(&path).map_err(|e| io_err(&path, e))?;
        }
        Ok(())
    }

    /// Enters a finished run (`run`: what the decisions see) in the journal and outcomes.
    fn record(&mut self, rkey: String, entry: RunEntry, run: &RunFile) -> Result<(), StudyError> {
        // What a reader of the run file gets back, bit for bit.
        let result: BenchmarkResult = serde_json::to_vec(&run.result)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| run.result.clone());
        if let Some(dir) = &self.dir {
            self.journal.runs.insert(rkey.clone(), entry);
            self.journal.write(dir)?;
        }
        self.outcomes
            .observed
            .insert(rkey.clone(), crate::study::observe::Observed::of(run));
        self.outcomes.results.insert(rkey, result);
        Ok(())
    }

    fn seed(&self, rep: u32) -> u64 {
        if self.study.vary_seed {
            self.study.seed + u64::from(rep) - 1
        } else {
            self.study.seed
        }
    }

    fn simulate(&mut self, session: &Session, log: &mut dyn FnMut(&str)) -> Result<(), StudyError> {
        let key = session.config.key();
        let (config, params) = match sim_config(&session.config.model, &session.config.flags) {
            Ok(c) => c,
            Err(e) => return self.fail(&key, format!("not run: {e}"), None, false),
        };
        if self.study.goal == crate::study::file::Goal::Capacity {
            return self.simulate_capacity(session, &config, &params, log);
        }
        for (i, (pname, rep)) in session.runs.iter().enumerate() {
            if self
                .outcomes
                .results
                .contains_key(&run_key(&key, pname, *rep))
            {
                continue;
            }
            let profile = self.study.profile(pname).map_err(StudyError::Usage)?;
            let seed = self.seed(*rep);
            let mut params = params.clone();
            params.noise = self.study.sim_noise(&run_key(&key, pname, *rep));
            let noise = params.noise;
            let observed = simulate_run_observed(&profile, config.clone(), params, seed, i > 0);
            let (mut out, series) = match observed {
                Ok(o) => o,
                Err(e) => return self.fail(&key, format!("{pname}: {e}"), None, false),
            };
            // Energy (the simulator's power model, in DCGM's names) and speculative
            // decoding from the sampled metrics, as `bench` adds them from a scrape.
            crate::observe::gpu::add_server_figures(
                &mut out.result,
                crate::metrics::production::measured_window_s(&out.records),
                Some(&series),
                None,
                crate::metrics::production::tokens_per_chunk(&out.records),
            );
            log(&format!("  {pname} r{rep}: done"));
            let mut run = RunFile::new(
                out.result,
                out.records,
                profile.clone(),
                chrono::Utc::now().fixed_offset(),
            );
            run.target = Some("sim:h200".into());
            run.model = Some(session.config.model.clone());
            run.seed = Some(seed);
            run.server_metrics = Some(series);
            // Whether repetitions of this configuration can differ at all.
            run.labels.insert(
                SIM_NOISE_LABEL.into(),
                match noise {
                    Some(n) => format!(
                        "on (run_sigma {}, step_sigma {}, arrival jitter {} ms, seed {})",
                        n.run_sigma,
                        n.step_sigma,
                        n.arrival_jitter_s * 1e3,
                        n.seed
                    ),
                    None => "off (deterministic simulation)".into(),
                },
            );
            if noise.is_some() {
                run.result.meta.engine = Some("h200-sim (vLLM 0.17.1 model, noise on)".into());
            }
            // Every run gets a fresh simulator: nothing cached survives a repetition.
            run.labels
                .insert(PREFIX_CACHE_LABEL.into(), SIM_RESTART.into());
            self.finish(session, &profile, *rep, run)?;
        }
        self.measure_quality(session, None, log)
    }

    fn launch(
        &mut self,
        spec: &EngineSpec,
        session: &Session,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), StudyError> {
        let key = session.config.key();
        let Some(dir) = self.dir.clone() else {
            return Err(StudyError::Usage(
                "a study with a command engine needs a directory (--out DIR)".into(),
            ));
        };
        let api_key = spec.api_key()?.unwrap_or_default();
        let port = if spec.port == 0 {
            process::free_port(&spec.host).map_err(|e| io_err(Path::new(&spec.host), e))?
        } else {
            spec.port
        };
        let fill = Fill {
            model: &session.config.model,
            host: &spec.host,
            port,
            api_key: &api_key,
            flags: &session.config.flags,
        };
        let argv = process::fill_command(&spec.command, &fill, false);
        // What the journal and the run files keep: `{api_key}` unfilled, any other key's
        // value redacted by its flag.
        let shown = crate::secret::redact_argv(&process::fill_command(&spec.command, &fill, true));
        let log_rel = format!("logs/{key}.log");
        let log_path = dir.join(&log_rel);
        let signal = process::signal_number(&spec.stop_signal).unwrap_or(process::Signal::SIGTERM);
        let stop_timeout = Duration::from_secs_f64(spec.stop_timeout_s);
        let mut server =
            match Server::launch(&argv, &spec.env, &log_path, &api_key, signal, stop_timeout) {
                Ok(s) => s,
                Err(e) => {
                    let reason = format!(
                        "cannot start `{}`: {e}",
                        shown.first().map(String::as_str).unwrap_or("")
                    );
                    return self.fail(&key, reason, Some(log_rel), true);
                }
            };
        self.journal.server = Some(LiveServer {
            config: key.clone(),
            pid: server.pid,
            argv: shown.clone(),
        });
        self.journal
            .events
            .push(format!("{key}: launched pid {}", server.pid));
        self.save()?;
        let bearer = (!api_key.is_empty()).then_some(api_key.as_str());
        let outcome = self.serve_session(spec, session, &mut server, port, bearer, cancel, log);
        server.stop();
        self.journal.server = None;
        match outcome {
            Ok(None) => self.save(),
            Ok(Some(reason)) => self.fail(&key, reason, Some(log_rel), true),
            Err(e) => {
                self.save()?;
                Err(e)
            }
        }
    }

    /// Runs a launched server's session; `Ok(Some(reason))` for a failure of the server.
    #[allow(clippy::too_many_arguments)]
    fn serve_session(
        &mut self,
        spec: &EngineSpec,
        session: &Session,
        server: &mut Server,
        port: u16,
        bearer: Option<&str>,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<Option<String>, StudyError> {
        let key = session.config.key();
        let timeout = Duration::from_secs_f64(spec.start_timeout_s);
        let models = match process::wait_ready(
            server,
            &spec.host,
            port,
            &spec.health_path,
            bearer,
            timeout,
            cancel,
        ) {
            Ok(body) => body,
            Err(NotReady::Exited(how)) => {
                return Ok(Some(format!(
                    "the server exited ({how}) before it became healthy"
                )))
            }
            Err(NotReady::Timeout) => {
                return Ok(Some(format!(
                    "the server did not become healthy within {} s",
                    spec.start_timeout_s
                )))
            }
            Err(NotReady::Cancelled) => return Ok(None),
        };
        let healthy = self.healthy(server);
        let models_json: Option<serde_json::Value> = serde_json::from_str(&models).ok();
        let target = format!("http://{}:{port}", spec.host);
        self.publish_server(&target, &models_json)?;
        let gpu_metrics = self.study.gpu_metrics.clone();
        let endpoint = self.study.endpoint.clone();
        let http = |profile: Profile| {
            let mut args = bench_args(spec, endpoint.as_ref(), &target, bearer, profile);
            args.gpu_metrics = gpu_metrics.clone();
            args
        };
        // A watcher stops the server's group as soon as the runner is cancelled, so that a
        // run in flight ends at once.
        let pid = server.pid;
        let signal = process::signal_number(&spec.stop_signal).unwrap_or(process::Signal::SIGTERM);
        let done = AtomicBool::new(false);
        let outcome = std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if cancel.load(Ordering::SeqCst) {
                        process::signal_group(pid, signal);
                        std::thread::sleep(Duration::from_secs_f64(spec.stop_timeout_s.min(5.0)));
                        process::signal_group(pid, process::Signal::SIGKILL);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let r = self.session_runs(
                session,
                Some(&mut *server),
                &key,
                &models_json,
                &target,
                &http,
                cancel,
                log,
            );
            done.store(true, Ordering::SeqCst);
            r
        });
        if matches!(outcome, Ok(None)) {
            self.measure_quality(session, Some((&target, bearer)), log)?;
        }
        self.record_startup(&key, healthy)?;
        outcome.map(|r| {
            r.or_else(|| {
                server
                    .exited()
                    .map(|how| format!("the server exited ({how})"))
            })
            .filter(|_| !cancel.load(Ordering::SeqCst))
        })
    }

    /// The session's warm-up run (`warmup_requests` of its first profile), by shard 1 only.
    fn warm_up(
        &mut self,
        session: &Session,
        http: &dyn Fn(Profile) -> crate::app::bench::BenchArgs,
    ) -> Result<(), StudyError> {
        if self.study.warmup_requests == 0 || !self.leads() {
            return Ok(());
        }
        if let Some((pname, _)) = session.runs.first() {
            let mut p = self.study.profile(pname).map_err(StudyError::Usage)?;
            p.total_requests = self.study.warmup_requests;
            self.warmup_run = crate::app::bench::run(&http(p), &mut |_| {})
                .ok()
                .map(|r| r.file);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn session_runs(
        &mut self,
        session: &Session,
        mut server: Option<&mut Server>,
        key: &str,
        models_json: &Option<serde_json::Value>,
        target: &str,
        http: &dyn Fn(Profile) -> crate::app::bench::BenchArgs,
        cancel: &AtomicBool,
        log: &mut dyn FnMut(&str),
    ) -> Result<Option<String>, StudyError> {
        self.warm_up(session, http)?;
        for (pname, rep) in &session.runs {
            if cancel.load(Ordering::SeqCst) {
                return Ok(None);
            }
            if self
                .outcomes
                .results
                .contains_key(&run_key(key, pname, *rep))
            {
                continue;
            }
            if let Some(how) = server.as_mut().and_then(|s| s.exited()) {
                return Ok(Some(format!(
                    "the server exited ({how}) before {pname} repetition {rep}"
                )));
            }
            let profile = self.study.profile(pname).map_err(StudyError::Usage)?;
            // One server serves every repetition: its prefix cache is emptied before each
            // run (vLLM `POST /reset_prefix_cache`, SGLang `POST /flush_cache`), else the
            // warm cache of the previous run inflates the next one. A server without
            // either route is run as it is, and the run file says so.
            let reset = if self.leads() {
                reset_prefix_cache(&http(profile.clone()))
            } else {
                sharded::RESET_BY_SHARD_ONE.to_string()
            };
            log(&format!("  {pname} r{rep}: prefix cache {reset}"));
            let mut args = http(profile.clone());
            args.live = self.live.as_ref().map(|l| l.next_run());
            match self.gate(pname, *rep, cancel)? {
                sharded::Gate::Whole => {}
                sharded::Gate::Start(shard, at) => {
                    args.shard = Some(shard);
                    args.start_at = Some(at);
                }
                sharded::Gate::Failed(reason) => return Ok(Some(reason)),
                sharded::Gate::Cancelled => return Ok(None),
            }
            let res = if self.study.goal == crate::study::file::Goal::Capacity {
                self.bench_capacity(session, pname, *rep, args, cancel)
            } else {
                self.bench(args, cancel)
            };
            if cancel.load(Ordering::SeqCst) {
                return Ok(None);
            }
            // A killed server resets its connections before its parent can reap it: when the
            // run failed, give the exit a moment to show so the reason names the crash.
            let failed = res.as_ref().map_or(true, |r| r.aborted.is_some());
            let grace = if failed { EXIT_GRACE } else { Duration::ZERO };
            if let Some(how) = server.as_mut().and_then(|s| s.exited_within(grace)) {
                return Ok(Some(format!(
                    "the server exited ({how}) during {pname} repetition {rep}"
                )));
            }
            let run = match res {
                Ok(r) => r,
                Err(e) => return Ok(Some(format!("{pname} repetition {rep}: {e}"))),
            };
            if let Some(why) = run.aborted {
                return Ok(Some(format!("{pname} repetition {rep} stopped: {why}")));
            }
            log(&format!("  {pname} r{rep}: done"));
            let mut file = run.file;
            if file.finished_at.is_none() {
                file.finished_at = Some(chrono::Utc::now().fixed_offset());
            }
            file.target = Some(target.to_string());
            if file.model.is_none() {
                file.model = file.result.meta.model.clone();
            }
            if file.models_response.is_none() {
                file.models_response = models_json.clone();
            }
            file.seed = Some(self.seed(*rep));
            file.labels.insert(PREFIX_CACHE_LABEL.into(), reset);
            if let Some(live) = &self.journal.server {
                file.command_line = live.argv.clone();
            }
            if let Some(reason) = self.finish_run(session, &profile, *rep, file, cancel)? {
                return Ok(Some(reason));
            }
        }
        Ok(None)
    }
}

/// A run file's path in the study directory (a shard's part of the run, in a sharded study).
fn run_path(config: &str, profile: &str, rep: u32) -> String {
    format!("runs/{config}/{profile}-r{rep}.json")
}

/// The run-file label saying whether and how the prefix cache was emptied before the run
/// (as `bench --reset-prefix-cache` records it).
pub const PREFIX_CACHE_LABEL: &str = "prefix_cache_reset";

/// The run-file label of simulator runs saying whether the run-to-run noise model was on
/// ([`crate::sim::NoiseModel`]) and with which parameters, or `off (deterministic simulation)`.
pub const SIM_NOISE_LABEL: &str = "simulator_noise";

/// [`PREFIX_CACHE_LABEL`] of simulator runs: each runs on a fresh simulator.
pub const SIM_RESTART: &str = "restart (a fresh simulator per run)";

/// Runs `profile` on the simulator as the seed's runs were made (see
/// [`crate::sim::run::simulate`]), with explicit parameters.
pub fn simulate_run(
    profile: &Profile,
    config: crate::sim::Config,
    params: crate::sim::Params,
    seed: u64,
    warm: bool,
) -> Result<Simulated, crate::driver::DriverError> {
    let mut engine = prepared(H200Sim::with_params(config.clone(), params), profile, warm);
    simulate_on(&mut engine, profile, &config, seed, None)
}

/// [`simulate_run`] that also samples the simulator's vLLM metrics every
/// `SCRAPE_INTERVAL` (1 s) of virtual time, as a scraper would have seen them.
pub fn simulate_run_observed(
    profile: &Profile,
    config: crate::sim::Config,
    params: crate::sim::Params,
    seed: u64,
    warm: bool,
) -> Result<(Simulated, crate::observe::ServerSeries), crate::driver::DriverError> {
    let interval = crate::study::observe::SCRAPE_INTERVAL;
    let engine = H200Sim::with_params(config.clone(), params).sample_metrics_every(interval);
    let mut engine = prepared(engine, profile, warm);
    let out = simulate_on(&mut engine, profile, &config, seed, None)?;
    let series = engine
        .metrics_series()
        .unwrap_or_else(|| crate::observe::ServerSeries::new("h200-sim", interval.as_secs_f64()));
    Ok((out, series))
}

/// The simulator as the run starts: cold or warm (see [`starts_cold`]).
fn prepared(engine: H200Sim, profile: &Profile, warm: bool) -> H200Sim {
    if starts_cold(profile, warm) {
        engine
    } else {
        engine.warmed_up()
    }
}

/// Runs `profile` on `engine`; the client's cap is the request count (at most guidellm's
/// 512) unless `cap` is given (a concurrency probe).
fn simulate_on(
    engine: &mut H200Sim,
    profile: &Profile,
    config: &crate::sim::Config,
    seed: u64,
    cap: Option<usize>,
) -> Result<Simulated, crate::driver::DriverError> {
    let opts = WorkloadOptions {
        sharegpt_seed: seed,
        ..WorkloadOptions::default()
    };
    let synthetic = matches!(profile.dataset, crate::profile::Dataset::Random { .. });
    let cap = cap.unwrap_or(
        usize::try_from(profile.total_requests)
            .unwrap_or(usize::MAX)
            .min(crate::driver::GUIDELLM_MAX_CONCURRENCY),
    );
    let mut out = Simulated::of(crate::driver::run_profile(engine, profile, &opts, |o| {
        o.max_concurrency = Some(cap);
        if synthetic {
            o.client_prep_per_prompt_token = crate::sim::run::PROMPT_SYNTHESIS;
        }
    })?);
    let meta = &mut out.result.meta;
    meta.engine = Some("h200-sim (vLLM 0.17.1 model)".into());
    meta.engine_version = Some("0.17.1".into());
    meta.model = Some(config.model().into());
    meta.source = Some("h200-sim".into());
    Ok(out)
}
