//! `servebench lint FILE... [--format text|json]`: findings about numbers that cannot be true
//! (see `servebench::lint` for the codes), for text reports, servebench JSON results and
//! guidellm / vLLM / SGLang files. One finding per line (`FILE: RUN: severity[code]: …`).
//!
//! Exit status: 0 no findings, 3 findings, 1 bad input (the message names the file and
//! line or JSON path), 2 usage errors (clap).

use std::io::Write as _;
use std::process::ExitCode;

use servebench::app::{exit_code, lint_runs, EXIT_BAD_INPUT};
use servebench::format::lint::{render_json, render_text};
use servebench::lint::{LintOptions, RunFindings};

use crate::input;
use crate::output::TextOrJson;

/// Arguments of `servebench lint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files to lint; `-` reads stdin.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<String>,
    /// Output format: `text`, one finding per line; `json`, an array of
    /// `{source, run, findings}` (for tools).
    #[arg(long, value_enum, default_value_t)]
    format: TextOrJson,
    /// Requests each run was meant to send, when the files do not say (for
    /// `partial-success`).
    #[arg(long, value_name = "N")]
    expected_requests: Option<u64>,
    /// The client's concurrency cap, when the files do not say (for `client-capped`).
    #[arg(long, value_name = "N")]
    client_cap: Option<u64>,
}

/// Lints every file, prints the findings and returns the exit status.
pub fn run(args: &Args) -> ExitCode {
    let opts = LintOptions {
        expected_requests: args.expected_requests,
        client_cap: args.client_cap,
    };
    let mut runs: Vec<RunFindings> = Vec::new();
    for file in &args.files {
        match input::load(file) {
            Ok(loaded) => runs.extend(lint_runs(&loaded, &opts)),
            Err(e) => {
                eprintln!("servebench: {e}");
                return ExitCode::from(EXIT_BAD_INPUT as u8);
            }
        }
    }
    let text = match args.format {
        TextOrJson::Text => render_text(&runs),
        TextOrJson::Json => render_json(&runs) + "\n",
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("servebench: cannot write to stdout: {e}");
            return ExitCode::from(EXIT_BAD_INPUT as u8);
        }
    }
    ExitCode::from(exit_code(&runs) as u8)
}
