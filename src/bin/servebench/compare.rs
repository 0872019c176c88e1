//! `servebench compare BASE CANDIDATE [--format text|markdown] [--profile NAME]`, or with
//! several runs per side `compare A1 A2 A3 -- B1 B2 B3` (or two directories): the candidate
//! against the baseline, metric by metric, then the noise verdicts (from the runs' records
//! or stored intervals, or between runs when a side has several), then GPUStack's
//! conclusion row (with the noise verdict when known). A warning first when the two sides
//! ran different workloads or conventions.

use servebench::compare::gpustack::{conclusion_row, ConclusionTable};
use servebench::compare::workload_differences;
use servebench::compare::{compare, MEAN_TPOT, METRICS};
use servebench::format::comparison::workload_warning;
use servebench::format::gpustack::{noisy_row_markdown, noisy_row_text};
use servebench::noise::{attach_intervals, IntervalOptions};
use servebench::noise::{
    compare_repetitions, compare_runs, NoiseSource, NoisyComparison, VerdictOptions,
};
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
    /// `BASE CANDIDATE`: any files servebench reads (`-` reads stdin), or directories of
    /// run files; with `--`, every path before it is a baseline run (`A1 A2 A3 -- B1 B2
    /// B3`).
    #[arg(value_name = "BASE", required = true)]
    paths: Vec<String>,
    /// The candidate runs, after `--`.
    #[arg(value_name = "CANDIDATE", last = true)]
    candidates: Vec<String>,
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
    /// The runs were interleaved (A B A B …): pair them in order (implies --repetitions).
    #[arg(long)]
    paired: bool,
    /// Confidence level of the intervals and verdicts.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95, value_parser = confidence)]
    confidence: f64,
    /// The effect (percent of the baseline) to plan repetitions for.
    #[arg(long, value_name = "PERCENT", default_value_t = 2.0, value_parser = effect)]
    effect: f64,
    /// The minimum effect (percent of the baseline): a change beyond the noise but not
    /// surely beyond this is "better (worse) but below the minimum effect".
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = min_effect)]
    min_effect: f64,
    /// The target metric, tested first at the full level (the others are controlled by
    /// Holm–Bonferroni): a metric key such as `total_token_throughput`, `mean_tpot_ms`.
    #[arg(long, value_name = "METRIC", default_value = "total_token_throughput", value_parser = target)]
    target: String,
}

fn min_effect(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(e) if e >= 0.0 && e.is_finite() => Ok(e),
        _ => Err(format!(
            "`{s}` is not a non-negative percentage (e.g. 1 for 1 %)"
        )),
    }
}

fn target(s: &str) -> Result<String, String> {
    if METRICS.iter().any(|m| m.key == s) {
        Ok(s.to_string())
    } else {
        let keys: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        Err(format!(
            "`{s}` is not a metric key; one of {}",
            keys.join(", ")
        ))
    }
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

/// Above this smallest detectable change of the target (percent), `compare` says that the
/// runs cannot decide it and what would.
const WIDE_TARGET_PERCENT: f64 = 10.0;

/// A note when the target's smallest detectable change is beyond
/// [`WIDE_TARGET_PERCENT`]: the default target (Total Token throughput, the figure the
/// source study decides on) stays, and the note says what would decide: more runs, or a
/// steadier metric with its own detectable change.
fn wide_target_note(noise: &NoisyComparison) -> Option<String> {
    let t = noise.metrics.first()?;
    let mde = t.mde_percent.filter(|m| *m > WIDE_TARGET_PERCENT)?;
    let runs = t
        .runs_needed
        .map(|n| format!("about {n} runs per side (`servebench ab`)"))
        .unwrap_or_else(|| "several runs per side (`servebench ab`)".into());
    let steadier = noise
        .metrics
        .iter()
        .skip(1)
        .filter_map(|m| Some((m, m.mde_percent?)))
        .filter(|(_, d)| *d < mde / 2.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(m, d)| {
            format!(
                ", or judge a steadier metric: --target {} (±{d:.1}% here)",
                m.metric.key
            )
        })
        .unwrap_or_default();
    Some(format!(
        "Note: these runs can call {} different only beyond ±{mde:.1}% (it varies that much \
         within a run); to decide a {}% change, repeat them: {runs}{steadier}.",
        t.metric.label, noise.options.effect_percent
    ))
}

/// One side of a single-run comparison: the result, with intervals computed from its
/// records when it is a servebench run file (`bench --output`) with records and no
/// intervals yet. The second value says why intervals could not be computed, if they could
/// not.
fn single(
    path: &str,
    all: Vec<Run>,
    block: Option<u64>,
    confidence: f64,
) -> Result<(BenchmarkResult, Option<String>), InputError> {
    let run = pick(path, all, block)?;
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

/// The one result of `path` (its runs `all`), or its `block`-th.
fn pick(path: &str, mut all: Vec<Run>, block: Option<u64>) -> Result<Run, InputError> {
    let name = input::display_name(path);
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

/// A warning for each run that was interrupted: it measured only part of its workload.
fn interrupted_warnings<'a>(
    inputs: impl Iterator<Item = (&'a String, &'a Vec<Run>)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, runs) in inputs {
        for r in runs {
            if let Some(x) = &r.records {
                if let Some(reason) = &x.interrupted {
                    out.push(format!(
                        "Warning: {} was interrupted ({reason}) after {} requests were sent: \
                         its figures cover only part of its workload.",
                        input::display_name(path),
                        x.all.len()
                    ));
                }
            }
        }
    }
    out
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

/// The paths of one side: each directory replaced by its files (sorted by name, hidden
/// files skipped).
fn expand(paths: &[String]) -> Result<Vec<String>, InputError> {
    let mut out = Vec::new();
    for p in paths {
        let path = std::path::Path::new(p);
        if p != "-" && path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| InputError(format!("{p}: cannot read the directory: {e}")))?;
            let mut files: Vec<String> = Vec::new();
            for e in entries {
                let e =
                    e.map_err(|e| InputError(format!("{p}: cannot read the directory: {e}")))?;
                let hidden = e.file_name().to_string_lossy().starts_with('.');
                if !hidden && e.path().is_file() {
                    files.push(e.path().to_string_lossy().into_owned());
                }
            }
            if files.is_empty() {
                return Err(InputError(format!("{p}: the directory holds no files")));
            }
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// The command line with `compare`'s own flags that stand after `--` moved before it:
/// `compare A1 A2 -- B1 B2 --paired` reads `--paired` as the flag, not as a candidate file
/// (a file whose name starts with `--` is written `./--name`). Other command lines are
/// returned unchanged.
pub fn hoist_own_flags(argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if argv.get(1).is_none_or(|a| a != "compare") {
        return argv;
    }
    let Some(dash) = argv.iter().position(|a| a == "--") else {
        return argv;
    };
    let own = crate::long_flags("compare");
    let (mut head, tail) = (argv[..dash].to_vec(), &argv[dash + 1..]);
    let mut rest = Vec::new();
    let mut i = 0;
    while i < tail.len() {
        let text = tail[i].to_string_lossy();
        let name = text
            .strip_prefix("--")
            .map(|n| n.split('=').next().unwrap_or_default());
        match name.and_then(&own) {
            Some(takes_value) => {
                head.push(tail[i].clone());
                if takes_value && !text.contains('=') {
                    head.extend(tail.get(i + 1).cloned());
                    i += 1;
                }
            }
            None => rest.push(tail[i].clone()),
        }
        i += 1;
    }
    head.push("--".into());
    head.extend(rest);
    head
}

/// The two sides' paths: `BASE CANDIDATE`, or every path before `--` and every one after.
fn sides(args: &Args) -> Result<(Vec<String>, Vec<String>), InputError> {
    if args.candidates.is_empty() {
        match &args.paths[..] {
            [b, c] => Ok((
                expand(std::slice::from_ref(b))?,
                expand(std::slice::from_ref(c))?,
            )),
            // A usage error (exit 2), as clap reports a missing argument.
            ps => clap::Error::raw(
                clap::error::ErrorKind::WrongNumberOfValues,
                format!(
                    "compare takes BASE CANDIDATE, or several runs per side separated by `--` \
                     (A1 A2 -- B1 B2); got {} path(s) without `--`\n",
                    ps.len()
                ),
            )
            .exit(),
        }
    } else {
        Ok((expand(&args.paths)?, expand(&args.candidates)?))
    }
}

/// The comparison table, the noise verdicts and the conclusion table, in the chosen format.
pub fn run(args: &Args) -> Result<String, InputError> {
    let target = METRICS
        .iter()
        .find(|m| m.key == args.target)
        .map_or(servebench::compare::TOTAL_TOKEN_THROUGHPUT.key, |m| m.key);
    let vopts = VerdictOptions {
        confidence: args.confidence,
        effect_percent: args.effect,
        min_effect_percent: args.min_effect,
        target,
        ..VerdictOptions::default()
    };
    let (base_paths, cand_paths) = sides(args)?;
    let several = base_paths.len() > 1 || cand_paths.len() > 1;
    if several && (args.base_block.is_some() || args.candidate_block.is_some()) {
        return Err(InputError(
            "--base-block/--candidate-block choose one result of one file; with several runs \
             per side every result of every file is a run"
                .into(),
        ));
    }
    // Every input read once (`-` is stdin, which cannot be read again).
    let load = |paths: &[String]| -> Result<Vec<Vec<Run>>, InputError> {
        paths.iter().map(|p| input::load(p)).collect()
    };
    let (mut base_loaded, mut cand_loaded) = (load(&base_paths)?, load(&cand_paths)?);
    let interrupted = interrupted_warnings(
        base_paths
            .iter()
            .zip(&base_loaded)
            .chain(cand_paths.iter().zip(&cand_loaded)),
    );
    let mut notes: Vec<String> = Vec::new();
    let mut between = args.repetitions || args.paired || several;
    // `--repetitions` on one result per side: nothing to compare between runs; each run's
    // own intervals (from its records) decide instead, and the output says so.
    if between && !several && base_loaded[0].len() == 1 && cand_loaded[0].len() == 1 {
        between = false;
        notes.push(
            "Note: each side holds one run, so there is no run-to-run spread to compare \
             (--repetitions, --paired); the verdicts use each run's within-run intervals."
                .into(),
        );
    }
    let (mut base, mut cand, noise, runs) = if between {
        let results = |loaded: Vec<Vec<Run>>| -> Vec<BenchmarkResult> {
            loaded.into_iter().flatten().map(|r| r.result).collect()
        };
        let bs = results(base_loaded);
        let cs = results(cand_loaded);
        for (side, paths, runs) in [
            ("baseline", &base_paths, &bs),
            ("candidate", &cand_paths, &cs),
        ] {
            if runs.len() < 2 {
                let names: Vec<String> = paths.iter().map(|p| input::display_name(p)).collect();
                return Err(InputError(if args.repetitions && !several {
                    format!(
                        "{}: --repetitions needs at least 2 results, the input holds {}",
                        names.join(" "),
                        runs.len()
                    )
                } else {
                    format!(
                        "{}: between-run intervals need at least 2 runs per side, the {side} \
                         has {}; compare one run against one (BASE CANDIDATE) or add runs",
                        names.join(" "),
                        runs.len()
                    )
                }));
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
        notes.push(format!(
            "Note: the first table shows the first run of each side ({} baseline and {} \
             candidate runs); the noise table compares the means.",
            bs.len(),
            cs.len()
        ));
        let mut runs = bs.clone();
        runs.extend(cs.iter().cloned());
        (bs[0].clone(), cs[0].clone(), noise, runs)
    } else {
        let (b, why_b) = single(
            &base_paths[0],
            base_loaded.swap_remove(0),
            args.base_block,
            args.confidence,
        )?;
        let (c, why_c) = single(
            &cand_paths[0],
            cand_loaded.swap_remove(0),
            args.candidate_block,
            args.confidence,
        )?;
        let mut noise = compare_runs(&b, &c, &vopts);
        let whys: Vec<String> = why_b.into_iter().chain(why_c).collect();
        if noise.source == NoiseSource::Unknown && !whys.is_empty() {
            noise.unknown_reason = Some(whys.join("; "));
        } else {
            notes.extend(whys.iter().map(|w| format!("Note: {w}")));
        }
        let runs = vec![b.clone(), c.clone()];
        (b, c, noise, runs)
    };
    if noise.source != NoiseSource::Unknown {
        let unknown: Vec<&str> = noise
            .metrics
            .iter()
            .filter(|d| {
                d.p_value.is_none()
                    && (d.metric.key.starts_with("p99_") || d.metric.key.starts_with("median_"))
            })
            .map(|d| d.metric.label)
            .collect();
        if !unknown.is_empty() && !several && !args.repetitions {
            notes.push(format!(
                "Note: no within-run interval for {}: a tail percentile needs enough \
                 independent requests beyond it (repetitions give one).",
                unknown.join(", ")
            ));
        }
    }
    if let Some(name) = &args.profile {
        let p = Profile::preset(name).map_err(|e| InputError(e.to_string()))?;
        base.meta.profile = Some(p.clone());
        cand.meta.profile = Some(p);
    }
    // Different workloads: a warning first (the convention's own note follows the table).
    let all = runs;
    let mut diffs = Vec::new();
    for r in all.iter().skip(1) {
        for d in workload_differences(&all[0], r) {
            if !matches!(
                d,
                servebench::compare::WorkloadDifference::Convention { .. }
            ) && !diffs.contains(&d)
            {
                diffs.push(d);
            }
        }
    }
    if args.profile.is_some() {
        diffs.retain(|d| {
            matches!(
                d,
                servebench::compare::WorkloadDifference::Convention { .. }
            )
        });
    }
    let mut warning = workload_warning(&diffs)
        .map(|w| {
            eprintln!("{w}");
            format!("{w}\n\n")
        })
        .unwrap_or_default();
    for w in interrupted {
        eprintln!("{w}");
        warning.push_str(&w);
        warning.push_str("\n\n");
    }
    let cmp = compare(&base, &cand);
    if cmp.metrics.is_empty() {
        return Err(InputError(format!(
            "{} and {}: no metric present in both results",
            input::display_name(&base_paths[0]),
            input::display_name(&cand_paths[0])
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
    notes.extend(wide_target_note(&noise));
    let notes: String = notes.iter().map(|n| format!("{n}\n")).collect();
    let markdown = matches!(args.format, Format::Markdown);
    let (comparison, mut conclusion) = if markdown {
        (cmp.to_markdown_with(&noise), table.markdown())
    } else {
        (cmp.to_text_with(&noise), table.text())
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
        "{warning}{comparison}\n{}{notes}\n{conclusion}{tpot_note}",
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
