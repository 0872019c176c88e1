//! `servebench parse FILE...`: text reports (or any file `servebench` reads) → one JSON
//! array of results on stdout.

use crate::input::{self, InputError};

/// Arguments of `servebench parse`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Text reports (or any result file servebench reads) ; `-` or /dev/stdin reads stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Write the JSON on one line instead of pretty-printed.
    #[arg(long)]
    compact: bool,
}

/// Every run of every file, in order, as one JSON array (each result carries the run
/// metadata found around its block and `meta.source` = the file it came from).
pub fn run(args: &Args) -> Result<String, InputError> {
    let mut results = Vec::new();
    for f in &args.files {
        for mut l in input::load(f)? {
            if l.result.meta.source.is_none() {
                l.result.meta.source = Some(input::display_name(f));
            }
            results.push(l.result);
        }
    }
    let json = if args.compact {
        serde_json::to_string(&results)
    } else {
        serde_json::to_string_pretty(&results)
    };
    json.map(|s| s + "\n")
        .map_err(|e| InputError(format!("cannot write JSON: {e}")))
}
