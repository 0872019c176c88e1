//! `servebench compare BASE CANDIDATE [--format text|markdown] [--profile NAME]`: the
//! candidate against the baseline, metric by metric, then GPUStack's conclusion row.

use servebench::compare::gpustack::{conclusion_row, ConclusionTable};
use servebench::compare::{compare, MEAN_TPOT};
use servebench::profile::{Profile, PRESET_NAMES};
use servebench::result::BenchmarkResult;

use servebench::load::Run;

use crate::input::{self, InputError};

/// Output formats.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum Format {
    /// Plain text: an aligned table, then the tab-separated conclusion row.
    #[default]
    Text,
    /// Markdown tables (GPUStack's `<br>` and coloured-span cells).
    Markdown,
}

/// Arguments of `servebench compare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The baseline: any file servebench reads (`-` reads stdin).
    #[arg(value_name = "BASE")]
    base: String,
    /// The candidate: any file servebench reads.
    #[arg(value_name = "CANDIDATE")]
    candidate: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The load profile both runs used (sets the request total for the success rate,
    /// overriding a profile stored in the inputs).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(PRESET_NAMES))]
    profile: Option<String>,
    /// Which block of BASE to use when it holds several (1-based).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    base_block: Option<u64>,
    /// Which block of CANDIDATE to use when it holds several (1-based).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    candidate_block: Option<u64>,
}

/// The one result of `path`, or its `block`-th.
fn pick(path: &str, block: Option<u64>) -> Result<Run, InputError> {
    let name = input::display_name(path);
    let mut all = input::load(path)?;
    let n = all.len();
    match block {
        Some(b) => {
            let i = usize::try_from(b - 1).unwrap_or(usize::MAX);
            if i >= n {
                return Err(InputError(format!(
                    "{name}: block {b} requested, the input holds {n}"
                )));
            }
            Ok(all.swap_remove(i))
        }
        None if n == 1 => Ok(all.swap_remove(0)),
        None => {
            let at: Vec<String> = all
                .iter()
                .map(|l| {
                    let origin = l.provenance.origin();
                    origin
                        .strip_prefix(name.as_str())
                        .unwrap_or(&origin)
                        .trim()
                        .to_string()
                })
                .collect();
            Err(InputError(format!(
                "{name}: holds {n} results (at {}); choose one with --base-block/--candidate-block N",
                at.join(" ")
            )))
        }
    }
}

/// The case name of the conclusion row: the profile's title (`ShareGPT Profile`), else the
/// candidate's label, else `Candidate`.
fn case_name(candidate: &BenchmarkResult) -> String {
    match (&candidate.meta.profile, &candidate.meta.label) {
        (Some(p), _) => format!("{} Profile", p.title()),
        (None, Some(l)) => l.clone(),
        (None, None) => "Candidate".to_string(),
    }
}

/// The comparison table and the conclusion table, in the chosen format.
pub fn run(args: &Args) -> Result<String, InputError> {
    let mut base = pick(&args.base, args.base_block)?.result;
    let mut cand = pick(&args.candidate, args.candidate_block)?.result;
    if let Some(name) = &args.profile {
        let p = Profile::preset(name).map_err(|e| InputError(e.to_string()))?;
        base.meta.profile = Some(p.clone());
        cand.meta.profile = Some(p);
    }
    let cmp = compare(&base, &cand);
    if cmp.metrics.is_empty() {
        return Err(InputError(format!(
            "{} and {}: no metric present in both results",
            input::display_name(&args.base),
            input::display_name(&args.candidate)
        )));
    }
    let mut table = ConclusionTable::new(vec![conclusion_row(&case_name(&cand), &base, &cand)]);
    table.baseline_header = base
        .meta
        .label
        .clone()
        .unwrap_or_else(|| "Baseline".to_string());
    let tpot_note = if MEAN_TPOT.value(&base).is_none() {
        "\nNote: the baseline has no Mean TPOT.\n"
    } else {
        ""
    };
    Ok(match args.format {
        Format::Text => format!("{}\n{}{tpot_note}", cmp.to_text(), table.text()),
        Format::Markdown => format!("{}\n{}{tpot_note}", cmp.to_markdown(), table.markdown()),
    })
}
