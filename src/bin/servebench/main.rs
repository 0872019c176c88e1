//! The `servebench` command-line tool: clap parsing and dispatch only. Each subcommand lives
//! in its own module beside this file; [`input`] reads reports and results for all of them.
//!
//! Exit codes: see [`exit`] (0 success, 1 bad input, 2 usage, 3 lint findings, 4 the
//! measurement failed, 130/143 interrupted).

// Printing never panics: a closed or broken stderr (or stdout) loses the text, and the
// exit status still says what happened. These shadow std's macros in every module below.
macro_rules! eprintln {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

#[cfg(all(feature = "study", unix))]
mod ab;
#[cfg(feature = "http")]
mod accuracy;
#[cfg(feature = "http")]
mod bench;
#[cfg(feature = "http")]
mod capacity_cmd;
mod compare;
mod exit;
mod input;
mod lint;
mod merge;
mod observe;
mod output;
mod parse;
mod profiles;
#[cfg(feature = "http")]
mod progress;
mod render;
mod report;
#[cfg(feature = "http")]
mod shard;
#[cfg(feature = "http")]
mod signals;
#[cfg(feature = "sim")]
mod simulate;
#[cfg(all(feature = "study", unix))]
mod study;
mod sweep_cmd;
mod values;
mod workload_args;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// LLM-serving benchmarks: read, write and compare "Serving Benchmark Result" reports.
#[derive(Debug, Parser)]
#[command(name = "servebench", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse text reports into JSON results (one JSON array on stdout).
    Parse(parse::Args),
    /// Render JSON results (or text reports) as "Serving Benchmark Result" blocks.
    Render(render::Args),
    /// Compare a candidate run against a baseline run.
    Compare(compare::Args),
    /// List the load-profile presets, or their guidellm commands.
    Profiles(profiles::Args),
    /// Print a guidellm, vLLM or SGLang result file as report blocks (optionally
    /// recomputed under a convention).
    Report(report::Args),
    /// Flag measurements that cannot be true (exit 3 when there are findings).
    Lint(lint::Args),
    /// Benchmark an OpenAI-compatible server (vLLM, SGLang, the h200_server example).
    #[cfg(feature = "http")]
    Bench(Box<bench::Args>),
    /// A/B test two servers: interleaved bench runs (a number, or `auto` until decided),
    /// every run file saved, then the verdict table (the same URL twice: an A/A test).
    #[cfg(all(feature = "study", unix))]
    Ab(ab::Args),
    /// How far clients' figures are from the server's own: join client files to the
    /// example server's timeline (`h200_server --timeline`) and report each one's errors.
    #[cfg(feature = "http")]
    Accuracy(accuracy::Args),
    /// Merge the run files of a sharded run (`bench --shard K/N`) into one run file.
    Merge(merge::Args),
    /// Run a tuning study (launching servers or on the simulator) and write its document.
    #[cfg(all(feature = "study", unix))]
    Study(study::Args),
    /// Simulate vLLM serving a Qwen3.5 model on an H100/H200 (the h200_server example's
    /// flags): any model, GPU, vLLM flags and load.
    #[cfg(feature = "sim")]
    Simulate(simulate::Args),

    /// Explain a change of mean TTFT and TPOT between two runs from their server metrics.
    Explain(observe::ExplainArgs),
    /// A run's metrics per time window and its steady state.
    Slices(observe::SlicesArgs),
    /// Draw runs as SVG charts and a self-contained DIR/index.html.
    #[cfg(feature = "plot")]
    Plot(observe::PlotArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let output = match cli.command {
        Command::Parse(a) => parse::run(&a),
        Command::Render(a) => render::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Profiles(a) => profiles::run(&a),
        Command::Report(a) => report::run(&a),
        // `lint` prints its own findings and has its own exit statuses (0, 1, 3).
        Command::Lint(a) => return lint::run(&a),
        // `study` has its own exit statuses (0, 1, 2, 130 when interrupted).
        #[cfg(all(feature = "study", unix))]
        Command::Study(a) => return study::run(&a),
        // `bench` has its own exit statuses (130/143 when interrupted) and usage errors.
        #[cfg(feature = "http")]
        Command::Bench(a) => return bench::main(&a),
        #[cfg(feature = "http")]
        Command::Accuracy(a) => accuracy::run(&a),
        #[cfg(all(feature = "study", unix))]
        Command::Ab(a) => ab::run(&a),
        Command::Merge(a) => merge::run(&a),
        #[cfg(feature = "sim")]
        Command::Simulate(a) => simulate::run(&a),

        Command::Explain(a) => observe::run_explain(&a),
        Command::Slices(a) => observe::run_slices(&a),
        #[cfg(feature = "plot")]
        Command::Plot(a) => observe::run_plot(&a),
    };
    match output {
        Ok(text) => match print_stdout(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(()) => ExitCode::from(exit::BAD_INPUT),
        },
        Err(e) => {
            eprintln!("servebench: {e}");
            ExitCode::from(exit::BAD_INPUT)
        }
    }
}

/// Writes `text` to stdout. A closed pipe (`servebench parse … | head`) is not an error;
/// any other failure is reported on stderr and gives `Err`.
fn print_stdout(text: &str) -> Result<(), ()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            eprintln!("servebench: cannot write to stdout: {e}");
            Err(())
        }
    }
}
