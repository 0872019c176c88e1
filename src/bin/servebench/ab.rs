//! `servebench ab`: an ad-hoc A/B test of two servers. Interleaved pairs of runs in
//! counterbalanced order (baseline then candidate, candidate then baseline, …), each a
//! `servebench bench` run with the given bench flags, every
//! run file saved in `--out DIR/runs/`; `--repetitions N` runs N pairs, `auto` runs pairs
//! until the sequential design of [`servebench::noise::Design`] decides on the target
//! metric (or `--max-repetitions` is spent). Then the verdict table: the target metric
//! first, decided with the minimum effect at 95 % confidence over all looks; every other
//! metric at a Bonferroni-corrected level (95 % for the family of secondary metrics), without
//! a minimum effect. The same URL twice is an A/A test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use servebench::compare::{Direction, Metric, METRICS};
use servebench::noise::{classify_interval, normal_quantile, Design, EffectOutcome, Look};
use servebench::runfile::RunFile;
use servebench::BenchmarkResult;

use crate::input::InputError;

/// `servebench ab` flags; everything after them is passed to each `bench` run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The baseline server's base URL (side A).
    #[arg(long)]
    baseline: String,
    /// The candidate server's base URL (side B; the baseline's again for an A/A test).
    #[arg(long)]
    candidate: String,
    /// Pairs of runs: a number, or `auto` (until the sequential design decides).
    #[arg(long, default_value = "auto", value_parser = repetitions)]
    repetitions: Reps,
    /// `auto`: the budget, runs per side at most.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..))]
    max_repetitions: u32,
    /// The minimum effect on the target metric, percent of the baseline's mean.
    #[arg(long, default_value_t = servebench::noise::DEFAULT_MIN_EFFECT_PERCENT,
          value_parser = min_effect)]
    min_effect: f64,
    /// The target metric (a key `servebench compare` prints).
    #[arg(long, default_value = "total_token_throughput", value_parser = metric)]
    metric: String,
    /// Directory for the run files (`runs/baseline-rN.json`, `runs/candidate-rN.json`)
    /// and the verdict (`verdict.txt`); created, and it must not hold runs already.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The flags of every `servebench bench` run (`--profile throughput`,
    /// `--max-requests 200`, …), after `--` or simply after the flags above.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "BENCH FLAGS"
    )]
    bench: Vec<String>,
}

/// `--repetitions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reps {
    /// This many pairs.
    Fixed(u32),
    /// Until the sequential design decides.
    Auto,
}

fn repetitions(v: &str) -> Result<Reps, String> {
    if v == "auto" {
        return Ok(Reps::Auto);
    }
    match v.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(Reps::Fixed(n)),
        _ => Err(format!(
            "`{v}` is neither a number of runs (>= 1) nor `auto`"
        )),
    }
}

fn min_effect(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("`{v}` is not a percentage >= 0")),
    }
}

fn metric(v: &str) -> Result<String, String> {
    if METRICS.iter().any(|m| m.key == v) {
        Ok(v.to_string())
    } else {
        let keys: Vec<_> = METRICS.iter().map(|m| m.key).collect();
        Err(format!("unknown metric `{v}` (known: {})", keys.join(", ")))
    }
}

/// The command line with `ab`'s own flags moved before the bench flags, wherever the user
/// wrote them: `ab --baseline U --candidate U --profile throughput --repetitions 2 --out D`
/// reads `--repetitions` and `--out` as `ab`'s, not as bench flags. Everything after a
/// literal `--` is a bench flag. Other command lines are returned unchanged.
pub fn hoist_own_flags(argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if argv.get(1).is_none_or(|a| a != "ab") {
        return argv;
    }
    let own = crate::long_flags("ab");
    let mut it = argv.into_iter();
    let mut head: Vec<std::ffi::OsString> = it.by_ref().take(2).collect();
    let mut bench = Vec::new();
    while let Some(arg) = it.next() {
        let text = arg.to_string_lossy();
        if text == "--" {
            bench.extend(it.by_ref());
            break;
        }
        let name = text
            .strip_prefix("--")
            .map(|n| n.split('=').next().unwrap_or_default());
        if text == "-h" || text == "--help" {
            head.push(arg);
        } else if let Some(takes_value) = name.and_then(&own) {
            let with_value = text.contains('=');
            head.push(arg);
            if takes_value && !with_value {
                head.extend(it.next());
            }
        } else {
            bench.push(arg);
        }
    }
    if !bench.is_empty() {
        head.push("--".into());
        head.extend(bench);
    }
    head
}

/// Bench flags `ab` sets itself.
const RESERVED: &[&str] = &[
    "--target",
    "--base-url",
    "--output",
    "--result-filename",
    "--save-result",
    "--result-dir",
    "--format",
    "--shard",
    "--start-at",
    "--sweep",
];

/// Runs the A/B test; the verdict table.
pub fn run(args: &Args) -> Result<String, InputError> {
    let flags: Vec<String> = args
        .bench
        .iter()
        .skip_while(|f| f.as_str() == "--")
        .cloned()
        .collect();
    for f in &flags {
        let key = f.split('=').next().unwrap_or(f);
        if RESERVED.contains(&key) {
            return Err(InputError(format!(
                "ab: bench flag `{key}` is set by `ab` itself (--baseline/--candidate, --out)"
            )));
        }
    }
    // The bench flags must parse before anything runs.
    let mut probe = vec!["servebench".to_string(), "bench".into(), "--target".into()];
    probe.push(args.baseline.clone());
    probe.extend(flags.iter().cloned());
    if let Err(e) = <crate::Cli as clap::Parser>::try_parse_from(&probe) {
        return Err(InputError(format!(
            "ab: the bench flags do not parse: {}",
            e.to_string().lines().next().unwrap_or_default()
        )));
    }
    let target = METRICS
        .iter()
        .find(|m| m.key == args.metric)
        .copied()
        .ok_or_else(|| InputError(format!("ab: unknown metric `{}`", args.metric)))?;
    let design = Design {
        min_effect_percent: args.min_effect,
        max_repetitions: match args.repetitions {
            Reps::Fixed(n) => n.max(2),
            Reps::Auto => args.max_repetitions,
        },
        ..Design::default()
    };
    design.check().map_err(|e| InputError(format!("ab: {e}")))?;
    // Both servers answer before anything runs (a candidate found unreachable after a
    // whole baseline run wastes the run).
    for (side, url) in [("baseline", &args.baseline), ("candidate", &args.candidate)] {
        reachable(url).map_err(|why| InputError(format!("ab: the {side} {url}: {why}")))?;
    }
    let runs_dir = args.out.join("runs");
    if runs_dir.exists() {
        return Err(InputError(format!(
            "ab: {} already holds runs; give a new --out",
            runs_dir.display()
        )));
    }
    std::fs::create_dir_all(&runs_dir)
        .map_err(|e| InputError(format!("ab: {}: {e}", runs_dir.display())))?;
    let exe = std::env::current_exe()
        .map_err(|e| InputError(format!("ab: cannot find the servebench binary: {e}")))?;
    let (mut a, mut b): (Vec<BenchmarkResult>, Vec<BenchmarkResult>) = (Vec::new(), Vec::new());
    let higher = target.direction == Direction::HigherIsBetter;
    let look = loop {
        let k = a.len() + 1;
        // Counterbalanced order (A B, B A, A B, …): whatever the server carries from one
        // run into the next (a warmer cache, a drifting clock) falls on each side alike
        // instead of always favouring the second run of a pair, which with little
        // run-to-run variance reads as a tiny, consistent "difference".
        let mut order = [
            ("baseline", &args.baseline, &mut a),
            ("candidate", &args.candidate, &mut b),
        ];
        if k % 2 == 0 {
            order.reverse();
        }
        for (side, url, into) in order {
            let path = runs_dir.join(format!("{side}-r{k}.json"));
            eprintln!("servebench ab: {side} run {k} against {url}");
            into.push(bench_run(&exe, url, &flags, &path)?);
        }
        let values = |rs: &[BenchmarkResult]| -> Vec<f64> {
            rs.iter().filter_map(|r| target.value(r)).collect()
        };
        let (va, vb) = (values(&a), values(&b));
        let done = match args.repetitions {
            Reps::Fixed(n) => k >= n as usize,
            Reps::Auto => {
                k >= design.first_look as usize
                    && design.look(&va, &vb, higher).outcome != EffectOutcome::Undecided
            }
        };
        if done {
            break match args.repetitions {
                Reps::Auto => design.look(&va, &vb, higher),
                Reps::Fixed(_) if k == 1 => single_run_look(&a[0], &b[0], &target, &design),
                Reps::Fixed(_) => design.fixed(&va, &vb, higher),
            };
        }
    };
    let text = table(args, &target, &design, &look, &a, &b);
    let path = args.out.join("verdict.txt");
    servebench::study::write_atomic(&path, text.as_bytes())
        .map_err(|e| InputError(format!("ab: {}: {e}", path.display())))?;
    Ok(text)
}

/// Whether a server answers at `url` (`GET /v1/models`): an HTTP status of any kind is an
/// answer (a key the bench flags carry may be needed); no connection is not.
fn reachable(url: &str) -> Result<(), String> {
    use servebench::http::{HttpConfig, HttpEngine};
    let engine = HttpEngine::new(HttpConfig::new(url.to_string())).map_err(|e| e.to_string())?;
    match engine.models_response() {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains("HTTP ") => Ok(()),
        Err(e) => Err(format!("{e} (nothing was run)")),
    }
}

/// One `servebench bench` run into `path` (a child process, waited for); its result.
fn bench_run(
    exe: &Path,
    url: &str,
    flags: &[String],
    path: &Path,
) -> Result<BenchmarkResult, InputError> {
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "--quiet", "--ci", "--target", url])
        .args(flags)
        .arg("--output")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = cmd
        .output()
        .map_err(|e| InputError(format!("ab: cannot run bench: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(InputError(format!(
            "ab: the run into {} failed ({}): {}",
            path.display(),
            out.status,
            err.trim_end().lines().last().unwrap_or_default()
        )));
    }
    RunFile::read(path)
        .map(|f| f.result)
        .map_err(|e| InputError(format!("ab: {}: {e}", path.display())))
}

/// One run each: the within-run intervals at the design's α (no run-to-run variation).
fn single_run_look(a: &BenchmarkResult, b: &BenchmarkResult, m: &Metric, design: &Design) -> Look {
    let mut look = design.fixed(&[], &[], true);
    let (Some(va), Some(vb)) = (m.value(a), m.value(b)) else {
        return look;
    };
    look.n_reference = 1;
    look.n_candidate = 1;
    look.reference_mean = va;
    look.difference = vb - va;
    look.threshold = design.min_effect_percent / 100.0 * va.abs();
    let se = |r: &BenchmarkResult| r.intervals.as_ref()?.for_metric(m).map(|i| i.se);
    if let (Some(sa), Some(sb)) = (se(a), se(b)) {
        let h = normal_quantile(1.0 - design.alpha / 2.0) * (sa * sa + sb * sb).sqrt();
        look.interval = Some((look.difference - h, look.difference + h));
        let higher = m.direction == Direction::HigherIsBetter;
        look.outcome = classify_interval(
            look.difference - h,
            look.difference + h,
            look.threshold,
            higher,
            false,
        );
    }
    look
}

fn pct(v: f64, base: f64) -> String {
    if base == 0.0 {
        format!("{v:+.2}")
    } else {
        format!("{:+.2}%", 100.0 * v / base.abs())
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The verdict table: the target metric's decision, then every other metric both sides
/// report at the Bonferroni level.
fn table(
    args: &Args,
    target: &Metric,
    design: &Design,
    look: &Look,
    a: &[BenchmarkResult],
    b: &[BenchmarkResult],
) -> String {
    use std::fmt::Write as _;
    let n = a.len();
    let mut w = String::new();
    let rule = match args.repetitions {
        Reps::Auto => format!(
            "sequential: interleaved pairs until decided, Pocock alpha spending, 95% overall confidence, {} to {} runs per side",
            design.first_look, design.max_repetitions
        ),
        Reps::Fixed(1) => "one run each: within-run intervals (they see no run-to-run variation)".into(),
        Reps::Fixed(k) => format!("{k} interleaved pairs: paired t-interval at 95%"),
    };
    let _ = writeln!(
        w,
        "A/B of {} (baseline) and {} (candidate): {n} run{} per side; run files in {}",
        args.baseline,
        args.candidate,
        if n == 1 { "" } else { "s" },
        args.out.join("runs").display()
    );
    let _ = writeln!(
        w,
        "Target {}: kept only if better by more than {}% of the baseline ({rule}).",
        target.key, args.min_effect
    );
    let others: Vec<&Metric> = METRICS
        .iter()
        .filter(|m| m.key != target.key)
        .filter(|m| a.iter().chain(b).all(|r| m.value(r).is_some()))
        .collect();
    let alpha_other = design.alpha / others.len().max(1) as f64;
    let _ = writeln!(
        w,
        "Other metrics: no minimum effect, each at {:.2}% confidence (Bonferroni over {} metrics: at most a 5% chance that any is called different when none differs).\n",
        100.0 * (1.0 - alpha_other),
        others.len()
    );
    let _ = writeln!(
        w,
        "{:<28} {:>14} {:>14} {:>9} {:>22} {:>8}  verdict",
        "metric", "baseline", "candidate", "change", "interval", "level"
    );
    let row = |w: &mut String, key: &str, base: f64, cand: f64, l: &Look| {
        let interval = l
            .interval
            .map(|(lo, hi)| format!("{} to {}", pct(lo, base), pct(hi, base)))
            .unwrap_or_else(|| "none".into());
        let verdict = match (l.interval, l.outcome) {
            (None, _) => "no interval (sign only)",
            (_, o) => o.as_str(),
        };
        let _ = writeln!(
            w,
            "{key:<28} {base:>14.2} {cand:>14.2} {:>9} {interval:>22} {:>7.2}%  {verdict}",
            pct(cand - base, base),
            100.0 * l.confidence
        );
    };
    let va: Vec<f64> = a.iter().filter_map(|r| target.value(r)).collect();
    let vb: Vec<f64> = b.iter().filter_map(|r| target.value(r)).collect();
    row(
        &mut w,
        &format!("{} (target)", target.key),
        mean(&va),
        mean(&vb),
        look,
    );
    let sub = Design {
        alpha: alpha_other,
        min_effect_percent: 0.0,
        ..*design
    };
    for m in others {
        let va: Vec<f64> = a.iter().filter_map(|r| m.value(r)).collect();
        let vb: Vec<f64> = b.iter().filter_map(|r| m.value(r)).collect();
        let higher = m.direction == Direction::HigherIsBetter;
        let l = if n == 1 {
            single_run_look(&a[0], &b[0], m, &sub)
        } else {
            sub.fixed(&va, &vb, higher)
        };
        row(&mut w, m.key, mean(&va), mean(&vb), &l);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::hoist_own_flags;

    fn hoisted(line: &str) -> String {
        let argv = line.split(' ').map(std::ffi::OsString::from).collect();
        let out: Vec<String> = hoist_own_flags(argv)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        out.join(" ")
    }

    #[test]
    fn abs_own_flags_are_taken_wherever_they_stand() {
        let cases = [
            // The README's form: bench flags between ab's own.
            (
                "sb ab --baseline U --candidate V --profile throughput --repetitions auto --min-effect 1 --out ab/",
                "sb ab --baseline U --candidate V --repetitions auto --min-effect 1 --out ab/ -- --profile throughput",
            ),
            (
                "sb ab --baseline=U --profile throughput --max-requests 20 --candidate V --repetitions=2 --out D",
                "sb ab --baseline=U --candidate V --repetitions=2 --out D -- --profile throughput --max-requests 20",
            ),
            // After `--`, everything is a bench flag.
            (
                "sb ab --out D -- --metric x --rate 2",
                "sb ab --out D -- --metric x --rate 2",
            ),
            ("sb ab --help", "sb ab --help"),
            // Other verbs are left alone.
            ("sb bench --out x --profile p", "sb bench --out x --profile p"),
        ];
        for (line, want) in cases {
            assert_eq!(hoisted(line), want, "{line}");
        }
    }
}
