//! `servebench simulate`: the embedded simulator with the same flags as
//! `cargo run --example h200_server` ([`servebench::app::simulate::SimArgs`]).

use servebench::app::simulate::{report, SimArgs};

use crate::input::InputError;

/// `servebench simulate` flags: the simulator's own.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    sim: SimArgs,
}

/// Runs the simulation; notices (ignored vLLM flags) go to stderr.
pub fn run(args: &Args) -> Result<String, InputError> {
    report(&args.sim, &mut std::io::stderr()).map_err(|e| InputError(e.to_string()))
}
