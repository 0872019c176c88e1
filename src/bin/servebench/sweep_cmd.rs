//! `servebench bench --sweep N`: the rate sweep against a server; prints the rate table and
//! the saturation point, saves every run in one sweep file with `--output`.

use std::path::Path;

use servebench::app::bench::BenchArgs;
use servebench::app::{run_sweep, save_sweep};
use servebench::driver::SweepOptions;

use crate::input::InputError;

/// Runs the sweep; the table is the output (exit status 0).
pub fn run(
    args: &BenchArgs,
    rates: u64,
    out: Option<&Path>,
    quiet: bool,
) -> Result<(String, u8), InputError> {
    let opts = SweepOptions {
        rates: rates as usize,
        ..SweepOptions::default()
    };
    let mut runs_done = 0u64;
    let mut last_done = 0u64;
    let mut report = |p: &servebench::app::bench::Progress| {
        // A new run starts its counters at zero.
        if p.done < last_done {
            runs_done += 1;
            if !quiet {
                eprintln!("servebench: sweep: run {runs_done} done");
            }
        }
        last_done = p.done;
    };
    let sweep = run_sweep(args, &opts, &mut report)
        .map_err(|e| InputError(format!("bench --sweep: {e}")))?;
    if let Some(path) = out {
        save_sweep(path, &sweep).map_err(|e| InputError(e.to_string()))?;
        eprintln!(
            "servebench: {} sweep runs saved to {}",
            sweep.runs.len(),
            path.display()
        );
    }
    let mut table = Vec::new();
    servebench::format::sweep::write_table(&sweep, &mut table)
        .map_err(|e| InputError(e.to_string()))?;
    Ok((String::from_utf8_lossy(&table).into_owned(), 0))
}
