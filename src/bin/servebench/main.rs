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
mod bench_notes;
#[cfg(feature = "http")]
mod capacity_cmd;
mod compare;
mod cost_args;
mod endpoint_args;
mod exit;
mod export;
mod flagged;
mod input;
mod lint;
#[cfg(feature = "http")]
mod load_args;
mod merge;
mod observe;
mod output;
mod pareto;
mod parse;
mod profiles;
#[cfg(feature = "http")]
mod progress;
#[cfg(all(feature = "http", feature = "quality"))]
mod quality;
mod render;
mod report;
#[cfg(feature = "http")]
mod self_test;
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
    /// The throughput-per-GPU / interactivity trade-off of runs: the Pareto front with
    /// intervals, dominated-within-noise points marked (tables, JSON, SVG).
    Pareto(pareto::Args),
    /// Quality beside speed: ask a server an eval set and report its accuracy with an
    /// interval (`quality compare A.json B.json`: a paired test of two runs).
    #[cfg(all(feature = "http", feature = "quality"))]
    Quality(quality::Args),
    /// Draw runs as SVG charts and a self-contained DIR/index.html.
    #[cfg(feature = "plot")]
    Plot(observe::PlotArgs),
    /// The client's own ceiling on this machine: the highest request rate (and streamed
    /// events/s) it sustains with p99 TTFT <= 1 ms against a zero-compute server
    /// (`h200_server --serve ADDR --zero-compute`); saved, and `bench` warns near it.
    #[cfg(feature = "http")]
    SelfTest(self_test::Args),
    /// Write a run file's records in another format: Parquet, one row per request (needs
    /// the `parquet` cargo feature).
    Export(export::Args),
}

fn main() -> ExitCode {
    // `ab` takes its own flags wherever they stand among the bench flags.
    #[cfg(all(feature = "study", unix))]
    let cli = Cli::parse_from(compare::hoist_own_flags(ab::hoist_own_flags(
        std::env::args_os().collect(),
    )));
    #[cfg(not(all(feature = "study", unix)))]
    let cli = Cli::parse_from(compare::hoist_own_flags(std::env::args_os().collect()));
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
        Command::Pareto(a) => pareto::run(&a),
        #[cfg(all(feature = "http", feature = "quality"))]
        Command::Quality(a) => quality::run(&a),
        #[cfg(feature = "plot")]
        Command::Plot(a) => observe::run_plot(&a),
        #[cfg(feature = "http")]
        Command::SelfTest(a) => self_test::run(&a),
        Command::Export(a) => export::run(&a),
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

/// The long flags of the subcommand `sub` as clap defines them: for a flag's name (without
/// `--`), whether it takes a value; `None` for a name that is not one of its flags. The
/// verbs that pass other flags on (`ab`, `compare` after `--`) pick out their own with it.
fn long_flags(sub: &str) -> impl Fn(&str) -> Option<bool> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let flags: Vec<(String, bool)> = cmd
        .find_subcommand(sub)
        .map(|c| {
            c.get_arguments()
                .filter_map(|a| Some((a.get_long()?.to_string(), a.get_action().takes_values())))
                .collect()
        })
        .unwrap_or_default();
    move |name| flags.iter().find(|(f, _)| f == name).map(|(_, v)| *v)
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

#[cfg(test)]
mod docs_commands {
    //! Every `servebench …` command the README and the guide print parses as printed: the
    //! flags exist, their values are accepted, the forms combine (the runs themselves are
    //! tested elsewhere, against the example server).

    use clap::Parser as _;

    /// The `servebench` command lines of one Markdown text's `sh` blocks: continuation
    /// lines joined, a trailing `# comment`, `&`, pipe or redirection cut off.
    fn commands(markdown: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut in_sh = false;
        let mut current: Option<String> = None;
        for line in markdown.lines() {
            let t = line.trim_start();
            if t.starts_with("```") {
                in_sh = t == "```sh";
                continue;
            }
            if !in_sh {
                continue;
            }
            let t = t.strip_prefix("$ ").unwrap_or(t);
            let t = match t.find("  #").or_else(|| t.find(" # ")) {
                Some(i) => t[..i].trim_end(),
                None => t.trim_end(),
            };
            let (body, more) = match t.strip_suffix('\\') {
                Some(b) => (b.trim_end(), true),
                None => (t, false),
            };
            match &mut current {
                Some(c) => {
                    c.push(' ');
                    c.push_str(body);
                }
                None if body.starts_with("servebench ") => current = Some(body.to_string()),
                None => continue,
            }
            if !more {
                out.extend(current.take());
            }
        }
        out
    }

    fn argv(command: &str) -> Vec<String> {
        // A shell loop's variable (`for k in 1 2 3 4; do …`): its first value.
        let command = command.replace("${k}", "1").replace("$k", "1");
        let words = shell_words::split(&command)
            .unwrap_or_else(|e| panic!("{command}: not a shell command line: {e}"));
        words
            .into_iter()
            .take_while(|w| !matches!(w.as_str(), "|" | "&" | "&&" | ">" | ">>" | "2>&1"))
            .collect()
    }

    #[test]
    fn every_command_the_readme_and_guide_print_parses() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut files = vec![std::path::PathBuf::from(root).join("README.md")];
        let mut guide: Vec<_> = std::fs::read_dir(std::path::Path::new(root).join("docs/guide"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        guide.sort();
        files.extend(guide);
        let mut checked = 0;
        let mut failures = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for c in commands(&text) {
                let args = argv(&c);
                #[cfg(all(feature = "study", unix))]
                let args: Vec<String> = super::ab::hoist_own_flags(
                    args.into_iter().map(std::ffi::OsString::from).collect(),
                )
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
                let args: Vec<String> = super::compare::hoist_own_flags(
                    args.into_iter().map(std::ffi::OsString::from).collect(),
                )
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
                checked += 1;
                if let Err(e) = super::Cli::try_parse_from(&args) {
                    if !matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayHelp
                            | clap::error::ErrorKind::DisplayVersion
                    ) {
                        let first = e.to_string();
                        let first = first.lines().next().unwrap_or_default().to_string();
                        failures.push(format!("{}: {c}\n    {first}", f.display()));
                    }
                }
            }
        }
        assert!(checked >= 40, "only {checked} commands found");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn commands_are_read_as_a_shell_would() {
        let md = "text\n```sh\nservebench ab --baseline U \\\n    --out ab/   # the verdict\ncargo run\nservebench report r.json | head\n```\n```text\nservebench not a command\n```\n";
        let c = commands(md);
        assert_eq!(
            c,
            [
                "servebench ab --baseline U --out ab/",
                "servebench report r.json | head"
            ]
        );
        assert_eq!(argv(&c[1]), ["servebench", "report", "r.json"]);
    }
}
