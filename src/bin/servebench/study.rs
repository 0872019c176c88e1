//! `servebench study`: run a tuning study (`run FILE --out DIR`, `run --resume DIR`), as
//! one shard of N (`run … --shard K/N --start-at barrier:DIR`), merge the shards' study
//! directories (`merge DIR… --out DIR`), print its plan with the simulator's time estimate
//! (`plan FILE`), or explain the study file (`--explain`). Ctrl-C stops the server in
//! flight, keeps every finished run in the journal and exits 130; `--resume DIR` continues.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use servebench::app::study::{Finish, Runner};
use servebench::driver::Shard;
use servebench::driver::StartAt;
use servebench::study::{self, StudyFile, EXPLAIN};
use servebench::study::{refuse_simulators, ShardedError};

/// Arguments of `servebench study`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Print every field of a study file and exit.
    #[arg(long)]
    explain: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Run a study (or continue one with --resume) and write DIR/STUDY.md and DIR/study.json.
    Run(RunArgs),
    /// Print every run of a study in order and the simulator's estimate of its wall time.
    Plan {
        /// The study file (TOML).
        file: PathBuf,
    },
    /// Merge the study directories of a sharded study's shards (`run --shard K/N`) into one
    /// study directory with its document, as an unsharded study would have written it.
    Merge {
        /// The shards' study directories (one per shard, any order).
        #[arg(value_name = "DIR", required = true)]
        dirs: Vec<PathBuf>,
        /// The merged study directory to write.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The study file (TOML).
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    file: Option<PathBuf>,
    /// The study directory to create (run files, logs, journal, document).
    #[arg(long, value_name = "DIR", required_unless_present = "resume")]
    out: Option<PathBuf>,
    /// Continue the study in DIR: nothing finished is run again.
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// With --resume: do not retry configurations whose server failed.
    #[arg(long, requires = "resume")]
    keep_failures: bool,
    /// Run shard K of N (1-based): every run sends only its shard's part of the workload
    /// and schedule; shard 1 launches the servers, the others load them. Needs
    /// --start-at barrier:DIR. A resumed shard keeps its K/N (from its journal).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// barrier:DIR — the directory every shard reaches (fresh for each invocation, also
    /// for --resume), where they meet before each run and exchange their run files.
    #[arg(long, value_name = "barrier:DIR")]
    start_at: Option<StartAt>,
    /// Seconds a shard waits for the others (at a barrier, for a run's parts, for shard 1's
    /// server on top of its start_timeout_s) before giving up, naming the missing shards.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    shard_timeout_s: f64,
    /// Serve the run in progress's live metrics in Prometheus' text format at
    /// http://ADDR/metrics (as `bench --metrics-listen`, plus the runs started so far);
    /// runs against launched servers only (simulated runs take no wall time).
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// Print no progress lines.
    #[arg(long, short)]
    quiet: bool,
}

/// Runs `servebench study`.
pub fn run(args: &Args) -> ExitCode {
    if args.explain {
        print!("{EXPLAIN}");
        return ExitCode::SUCCESS;
    }
    let result = match &args.command {
        None => {
            eprintln!("servebench study: give `run`, `plan` or --explain (see --help)");
            return ExitCode::from(crate::exit::USAGE);
        }
        Some(Command::Plan { file }) => StudyFile::read(file)
            .and_then(|s| servebench::app::study::estimate(&s))
            .map(|plan| {
                print!("{plan}");
                ExitCode::SUCCESS
            }),
        Some(Command::Run(r)) => run_study(r),
        Some(Command::Merge { dirs, out }) => {
            servebench::app::study::merge_studies(dirs, out).map(|m| {
                eprintln!(
                    "servebench: {} runs of {} shards merged; wrote {}",
                    m.runs,
                    m.shards,
                    out.join("STUDY.md").display()
                );
                ExitCode::SUCCESS
            })
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("servebench: {}", crate::flagged::study(&e));
            ExitCode::from(crate::exit::BAD_INPUT)
        }
    }
}

/// The shared directory of a shard: `--start-at barrier:DIR` (required with `--shard`).
fn shared_dir(args: &RunArgs) -> Result<Option<PathBuf>, study::StudyError> {
    match (&args.start_at, args.shard) {
        (Some(StartAt::Barrier(dir)), _) => Ok(Some(dir.clone())),
        (Some(StartAt::Time(_)), _) | (None, Some(_)) => Err(ShardedError::NeedsBarrier.into()),
        (None, None) => Ok(None),
    }
}

/// `--start-at` in a study is for its shards (a resumed shard's K/N is in its journal).
fn start_needs_shard() -> study::StudyError {
    study::StudyError::Usage("--start-at in a study is for its shards: give --shard K/N".into())
}

/// The study's exit status: 0, or 4 when a configuration could not be measured — each one
/// named on the console with its reason and log (also with `-q`), besides the document.
fn unmeasured(runner: &Runner, dir: &std::path::Path) -> ExitCode {
    let failures = &runner.outcomes.failures;
    for (key, f) in failures {
        let log = f
            .log
            .as_ref()
            .map(|l| format!(" (log: {})", dir.join(l).display()))
            .unwrap_or_default();
        eprintln!(
            "servebench: configuration {key} could not be measured: {}{log}",
            f.reason
        );
    }
    if failures.is_empty() {
        return ExitCode::from(crate::exit::SUCCESS);
    }
    eprintln!(
        "servebench: the study finished with {} configuration(s) not measured (exit {}); retry them with `{}`",
        failures.len(),
        crate::exit::MEASUREMENT_FAILED,
        servebench::format::shell::resume_hint(dir)
    );
    ExitCode::from(crate::exit::MEASUREMENT_FAILED)
}

/// Every command engine's `api_key_env` is set, before anything is launched.
fn check_api_keys(s: &StudyFile) -> Result<(), study::StudyError> {
    for e in &s.engines {
        if e.kind == study::EngineKind::Command {
            e.api_key()?;
        }
    }
    Ok(())
}

/// Serves the runs' live metrics at `addr` (`--metrics-listen`) and has the runner feed
/// them; the listener, which serves while it lives.
fn live_metrics(
    addr: std::net::SocketAddr,
    runner: &mut Runner,
) -> Result<servebench::http::listen::TextListener, study::StudyError> {
    let live = Arc::new(servebench::observe::live::LiveRuns::default());
    let render = Arc::clone(&live);
    let l = servebench::http::listen::TextListener::start(addr, Arc::new(move || render.render()))
        .map_err(|e| study::StudyError::Usage(format!("--metrics-listen: {e}")))?;
    eprintln!(
        "servebench: live metrics at http://{}/metrics",
        l.local_addr()
    );
    runner.set_live(live);
    Ok(l)
}

fn run_study(args: &RunArgs) -> Result<ExitCode, study::StudyError> {
    let shared = shared_dir(args)?;
    if shared.is_some() && args.shard.is_none() && args.resume.is_none() {
        return Err(start_needs_shard());
    }
    if !args.shard_timeout_s.is_finite() || args.shard_timeout_s <= 0.0 {
        return Err(study::StudyError::Usage(format!(
            "--shard-timeout-s {}: give a positive number of seconds",
            args.shard_timeout_s
        )));
    }
    let mut runner = match (&args.resume, &args.file, &args.out) {
        (Some(dir), _, _) => {
            let r = Runner::resume(dir, !args.keep_failures)?;
            check_api_keys(&r.study)?;
            r
        }
        (None, Some(file), Some(out)) => {
            let text = std::fs::read_to_string(file).map_err(|e| study::StudyError::Io {
                path: file.clone(),
                message: e.to_string(),
            })?;
            let s = StudyFile::parse(&text, file)?;
            // Refused before the directory is made, so that a corrected command can reuse it.
            if args.shard.is_some() {
                refuse_simulators(&s)?;
            }
            check_api_keys(&s)?;
            Runner::create(s, &text, out)?
        }
        _ => {
            return Err(study::StudyError::Usage(
                "give FILE --out DIR, or --resume DIR".into(),
            ))
        }
    };
    // A shard's resume keeps its K/N; `--shard` there must agree with the journal.
    match (args.shard.or(runner.shard()), shared) {
        (Some(shard), Some(dir)) => {
            let timeout = Duration::from_secs_f64(args.shard_timeout_s);
            runner.set_shard(shard, &dir, timeout)?;
            eprintln!(
                "servebench: shard {shard}, meeting the others in {}",
                dir.display()
            );
        }
        (Some(_), None) => return Err(ShardedError::NeedsBarrier.into()),
        (None, Some(_)) => return Err(start_needs_shard()),
        (None, None) => {}
    }
    let _listener = args
        .metrics_listen
        .map(|addr| live_metrics(addr, &mut runner))
        .transpose()?;
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    // A second Ctrl-C while stopping is ignored: the runner is already stopping the server.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let quiet = args.quiet;
    let finish = runner.run(&cancel, &mut |line| {
        if !quiet {
            eprintln!("{line}");
        }
    })?;
    let dir = runner.dir().map(PathBuf::from).unwrap_or_default();
    match finish {
        Finish::Cancelled => {
            eprintln!(
                "servebench: study interrupted; every finished run is kept. Continue with `{}`",
                servebench::format::shell::resume_hint(&dir)
            );
            Ok(ExitCode::from(crate::exit::INTERRUPTED))
        }
        Finish::Complete if runner.shard().is_some() => {
            if !quiet {
                eprintln!(
                    "servebench: shard {} done; merge every shard's directory with `servebench study merge DIR… --out DIR`",
                    runner.shard().unwrap_or(Shard::WHOLE)
                );
            }
            Ok(unmeasured(&runner, &dir))
        }
        Finish::Complete => {
            let doc = servebench::format::study::render(
                &runner.study,
                &runner.outcomes,
                &runner.analysis(),
                true,
            );
            servebench::app::study::write_document(&dir, &doc)?;
            if !quiet {
                eprintln!("wrote {}", dir.join("STUDY.md").display());
            }
            Ok(unmeasured(&runner, &dir))
        }
    }
}
