//! `servebench profiles [NAME...] [--guidellm TARGET MODEL [--syntax benchmark|run]
//! [--max-concurrency N]]`: the
//! load-profile presets as the seed lists them, or the guidellm command of each.

use servebench::profile::{Profile, PRESET_NAMES};

use crate::input::InputError;

/// Which guidellm command line to print.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum Syntax {
    /// `guidellm benchmark …` (guidellm ≤ 0.7), as the seed's "Open-Source Replacement".
    #[default]
    Benchmark,
    /// `guidellm run …` (guidellm 0.8, `kind=…` arguments).
    Run,
}

/// Arguments of `servebench profiles`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Presets to show (default: all).
    #[arg(value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(PRESET_NAMES))]
    names: Vec<String>,
    /// Print each preset's guidellm command against TARGET (server URL) with MODEL (the
    /// tokenizer/processor path).
    #[arg(long, num_args = 2, value_names = ["TARGET", "MODEL"])]
    guidellm: Option<Vec<String>>,
    /// guidellm command syntax (with --guidellm).
    #[arg(long, value_enum, default_value_t = Syntax::Benchmark, requires = "guidellm")]
    syntax: Syntax,
    /// A client-side cap on requests in flight for the printed commands (with --guidellm).
    #[arg(long, value_name = "N", requires = "guidellm", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_concurrency: Option<u64>,
}

/// Each preset: its title, a blank line, then its listing (or command); presets separated
/// by a blank line.
pub fn run(args: &Args) -> Result<String, InputError> {
    let names: Vec<&str> = if args.names.is_empty() {
        PRESET_NAMES.to_vec()
    } else {
        args.names.iter().map(String::as_str).collect()
    };
    let mut sections = Vec::with_capacity(names.len());
    for name in names {
        let mut p = Profile::preset(name).map_err(|e| InputError(e.to_string()))?;
        if args.max_concurrency.is_some() {
            p.max_concurrency = args.max_concurrency;
        }
        let body = match args.guidellm.as_deref() {
            Some([target, model]) => match args.syntax {
                Syntax::Benchmark => p.guidellm_command(target, model),
                Syntax::Run => p.guidellm_run_command(target, model),
            },
            _ => p.to_string(),
        };
        sections.push(format!("{}\n\n{body}\n", p.title()));
    }
    Ok(sections.join("\n"))
}
