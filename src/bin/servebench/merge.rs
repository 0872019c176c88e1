//! `servebench merge RUN… --out RUN`: the run files of a sharded run (`bench --shard K/N`)
//! joined into one run file ([`servebench::merge`]); prints the merged report block on
//! stdout and what it measured of the shards' clocks on stderr.

use std::path::PathBuf;

use servebench::format::text::{self, Style};
use servebench::merge::{merge, Align, MergeOptions};
use servebench::runfile::RunFile;
use servebench::Convention;

use crate::input::InputError;

/// How to line the shards up, as typed.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum AlignArg {
    /// By each shard's own wall clock.
    Wall,
    /// By the server's clock, measured through `Date` headers.
    ServerDate,
}

/// Arguments of `servebench merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shards' run files (one per shard).
    #[arg(value_name = "RUN", required = true)]
    runs: Vec<PathBuf>,
    /// The merged run file to write (`.jsonl`: the JSON Lines form).
    #[arg(long, value_name = "RUN")]
    out: PathBuf,
    /// How to put the shards' timelines together.
    #[arg(long, value_enum, default_value = "wall")]
    align: AlignArg,
    /// Merge even when shards are missing (the merged run is marked interrupted).
    #[arg(long)]
    allow_missing: bool,
}

/// Merge, write `--out`, and return the merged report block.
pub fn run(args: &Args) -> Result<String, InputError> {
    let mut runs = Vec::with_capacity(args.runs.len());
    for path in &args.runs {
        let run = RunFile::read(path).map_err(|e| InputError(e.to_string()))?;
        // The check every loader makes.
        if let Some(why) = servebench::load::implausible(&run.result, &run.records, None) {
            return Err(InputError(format!("{}: {why}", path.display())));
        }
        runs.push((path.display().to_string(), run));
    }
    let opts = MergeOptions {
        align: match args.align {
            AlignArg::Wall => Align::Wall,
            AlignArg::ServerDate => Align::ServerDate,
        },
        allow_missing: args.allow_missing,
    };
    let mut merged = merge(&runs, &opts).map_err(crate::flagged::merge)?;
    merged.run.command_line =
        servebench::secret::redact_argv(&std::env::args().collect::<Vec<_>>());
    for c in &merged.clocks {
        eprintln!("servebench: {}", c.describe(merged.reference));
    }
    merged
        .run
        .write_atomic(&args.out)
        .map_err(|e| InputError(e.to_string()))?;
    eprintln!(
        "servebench: {} shards, {} request records merged into {}",
        merged.clocks.len(),
        merged.run.records.len(),
        args.out.display()
    );
    let style = match merged.run.result.meta.convention {
        Some(Convention::Guidellm) => Style::Gpustack,
        _ => Style::Vllm,
    };
    Ok(text::render(&merged.run.result, style) + "\n")
}
