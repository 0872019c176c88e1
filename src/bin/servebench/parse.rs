//! `servebench parse FILE...`: text reports (or any file `servebench` reads) → one JSON
//! document on stdout, a [`BlocksFile`]: every run's result with its layout beside it.

use servebench::format::text::{BlockEntry, BlocksFile};

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

/// Every run of every file, in order, as one [`BlocksFile`] (each result carries the run
/// metadata found around its block and `meta.source` = the file it came from; its layout
/// and origin stand beside it).
pub fn run(args: &Args) -> Result<String, InputError> {
    let mut blocks = Vec::new();
    for f in &args.files {
        for mut l in input::load(f)? {
            if l.result.meta.source.is_none() {
                l.result.meta.source = Some(input::display_name(f));
            }
            blocks.push(BlockEntry {
                origin: Some(l.provenance.origin()),
                result: l.result,
                layout: l.layout,
            });
        }
    }
    let file = BlocksFile::new(blocks);
    let json = if args.compact {
        serde_json::to_string(&file)
    } else {
        serde_json::to_string_pretty(&file)
    };
    json.map(|s| s + "\n")
        .map_err(|e| InputError(format!("cannot write JSON: {e}")))
}
