//! `servebench study`: run a tuning study (`run FILE --out DIR`, `run --resume DIR`), print
//! its plan with the simulator's time estimate (`plan FILE`), or explain the study file
//! (`--explain`). Ctrl-C stops the server in flight, keeps every finished run in the journal
//! and exits 130; `--resume DIR` continues.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use servebench::study::{self, file::EXPLAIN, Finish, Runner, StudyFile};

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
            return ExitCode::from(2);
        }
        Some(Command::Plan { file }) => StudyFile::read(file)
            .and_then(|s| study::estimate(&s))
            .map(|plan| {
                print!("{plan}");
                ExitCode::SUCCESS
            }),
        Some(Command::Run(r)) => run_study(r),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("servebench: {e}");
            ExitCode::from(1)
        }
    }
}

fn run_study(args: &RunArgs) -> Result<ExitCode, study::StudyError> {
    let mut runner = match (&args.resume, &args.file, &args.out) {
        (Some(dir), _, _) => Runner::resume(dir, !args.keep_failures)?,
        (None, Some(file), Some(out)) => {
            let text = std::fs::read_to_string(file).map_err(|e| study::StudyError::Io {
                path: file.clone(),
                message: e.to_string(),
            })?;
            let s = StudyFile::parse(&text, file)?;
            Runner::create(s, &text, out)?
        }
        _ => {
            return Err(study::StudyError::Usage(
                "give FILE --out DIR, or --resume DIR".into(),
            ))
        }
    };
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
                "servebench: study interrupted; every finished run is kept. Continue with `servebench study run --resume {}`",
                dir.display()
            );
            Ok(ExitCode::from(130))
        }
        Finish::Complete => {
            let doc = study::render(&runner.study, &runner.outcomes, &runner.analysis(), true);
            study::write_document(&dir, &doc)?;
            if !quiet {
                eprintln!("wrote {}", dir.join("STUDY.md").display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
