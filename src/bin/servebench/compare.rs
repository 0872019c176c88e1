//! `servebench compare BASE CANDIDATE [--format text|markdown] [--profile NAME]`: the
//! candidate against the baseline, metric by metric, then the noise verdicts (from the runs'
//! records or stored intervals, or from repetitions with `--repetitions`), then GPUStack's
//! conclusion row (with the noise verdict when known).

use servebench::compare::gpustack::{conclusion_row, ConclusionTable};
use servebench::compare::{compare, MEAN_TPOT};
use servebench::format::gpustack::noise::{noisy_row_markdown, noisy_row_text};
use servebench::noise::verdict::{
    compare_repetitions, compare_runs, NoiseSource, NoisyComparison, VerdictOptions,
};
use servebench::noise::within::{attach_intervals, IntervalOptions};
use servebench::profile::{Profile, PRESET_NAMES};
use servebench::result::BenchmarkResult;

use servebench::load::{Format as LoadFormat, Run};

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
    /// Every result in BASE is a repetition of the baseline configuration, every result in
    /// CANDIDATE one of the candidate: compare means with t-intervals.
    #[arg(long, conflicts_with_all = ["base_block", "candidate_block"])]
    repetitions: bool,
    /// With --repetitions: the runs were interleaved (A B A B …), pair them in order.
    #[arg(long, requires = "repetitions")]
    paired: bool,
    /// Confidence level of the intervals and verdicts.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95, value_parser = confidence)]
    confidence: f64,
    /// The effect (percent of the baseline) to plan repetitions for.
    #[arg(long, value_name = "PERCENT", default_value_t = 2.0, value_parser = effect)]
    effect: f64,
}

fn confidence(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(c) if c > 0.0 && c < 1.0 => Ok(c),
        _ => Err(format!(
            "`{s}` is not a confidence level between 0 and 1 (e.g. 0.95)"
        )),
    }
}

fn effect(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(e) if e > 0.0 && e.is_finite() => Ok(e),
        _ => Err(format!("`{s}` is not a positive percentage (e.g. 2)")),
    }
}

/// One side of a single-run comparison: the result, with intervals computed from its
/// records when it is a servebench run file (`bench --output`) with records and no
/// intervals yet. The second value says why intervals could not be computed, if they could
/// not.
fn single(
    path: &str,
    block: Option<u64>,
    confidence: f64,
) -> Result<(BenchmarkResult, Option<String>), InputError> {
    let run = pick(path, block)?;
    let mut result = run.result;
    let mut why = None;
    let records = run
        .records
        .filter(|_| run.provenance.format == LoadFormat::ServebenchRun)
        .map(|r| r.measured())
        .unwrap_or_default();
    if result.intervals.is_none() && !records.is_empty() {
        let opts = IntervalOptions {
            confidence,
            ..IntervalOptions::default()
        };
        if let Err(e) = attach_intervals(&records, &mut result, &opts) {
            why = Some(format!("{}: {e}", input::display_name(path)));
        }
    }
    Ok((result, why))
}

/// Every result of `path`, for --repetitions.
fn all_runs(path: &str) -> Result<Vec<BenchmarkResult>, InputError> {
    Ok(input::load(path)?.into_iter().map(|l| l.result).collect())
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

/// The comparison table, the noise verdicts and the conclusion table, in the chosen format.
pub fn run(args: &Args) -> Result<String, InputError> {
    let vopts = VerdictOptions {
        confidence: args.confidence,
        effect_percent: args.effect,
        ..VerdictOptions::default()
    };
    let mut notes: Vec<String> = Vec::new();
    let (mut base, mut cand, noise) = if args.repetitions {
        let bs = all_runs(&args.base)?;
        let cs = all_runs(&args.candidate)?;
        for (path, runs) in [(&args.base, &bs), (&args.candidate, &cs)] {
            if runs.len() < 2 {
                return Err(InputError(format!(
                    "{}: --repetitions needs at least 2 results, the input holds {}",
                    input::display_name(path),
                    runs.len()
                )));
            }
        }
        if args.paired && bs.len() != cs.len() {
            notes.push(format!(
                "Note: --paired needs as many baseline as candidate runs ({} and {}); compared unpaired.",
                bs.len(),
                cs.len()
            ));
        }
        let noise = compare_repetitions(&bs, &cs, args.paired, &vopts);
        // The tables show the first run of each side; the noise table shows the means.
        (bs[0].clone(), cs[0].clone(), noise)
    } else {
        let (b, why_b) = single(&args.base, args.base_block, args.confidence)?;
        let (c, why_c) = single(&args.candidate, args.candidate_block, args.confidence)?;
        notes.extend(why_b.into_iter().chain(why_c).map(|w| format!("Note: {w}")));
        let noise = compare_runs(&b, &c, &vopts);
        (b, c, noise)
    };
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
    let row = conclusion_row(&case_name(&cand), &base, &cand);
    let mut table = ConclusionTable::new(vec![row.clone()]);
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
    let known = noise.source != NoiseSource::Unknown;
    let notes: String = notes.iter().map(|n| format!("{n}\n")).collect();
    let markdown = matches!(args.format, Format::Markdown);
    let (comparison, mut conclusion) = if markdown {
        (cmp.to_markdown(), table.markdown())
    } else {
        (cmp.to_text(), table.text())
    };
    if known {
        let noisy = if markdown {
            noisy_row_markdown(&row, &noise)
        } else {
            noisy_row_text(&row, &noise)
        };
        conclusion = replace_last_line(&conclusion, &noisy);
    }
    Ok(format!(
        "{comparison}\n{}{notes}\n{conclusion}{tpot_note}",
        noise_block(&noise, markdown)
    ))
}

fn noise_block(noise: &NoisyComparison, markdown: bool) -> String {
    if markdown {
        noise.to_markdown()
    } else {
        noise.to_text()
    }
}

/// `text` with its last line (before the final newline) replaced by `line`.
fn replace_last_line(text: &str, line: &str) -> String {
    let body = text.strip_suffix('\n').unwrap_or(text);
    match body.rfind('\n') {
        Some(i) => format!("{}\n{line}\n", &body[..i]),
        None => format!("{line}\n"),
    }
}
