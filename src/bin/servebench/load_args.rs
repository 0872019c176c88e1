//! `bench`'s load-shape flags made into arrivals: the rate and arrival process, vLLM's
//! ramp-up (`--ramp-up`), and a run bounded by time (`--duration`).

use std::time::Duration;

use servebench::driver::Arrivals;
use servebench::profile::{Dataset, Profile};

use crate::bench::{usage, Args, ArrivalsArg};

/// `--ramp-up`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum RampArg {
    /// The rate grows by equal steps.
    Linear,
    /// The rate grows by equal factors (needs --ramp-start > 0).
    Exponential,
}

pub(crate) fn non_negative_f64(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("`{v}` is not a rate >= 0")),
    }
}

pub(crate) fn arrivals(args: &Args, p: &Profile) -> Result<Option<Arrivals>, clap::Error> {
    let seed = args.seed.unwrap_or(match p.dataset {
        Dataset::Random { seed, .. } => seed,
        Dataset::ShareGpt { .. } | Dataset::Structured(_) => 42,
    });
    if let (Some(r), Some(start_rate), Some(end_rate)) =
        (args.ramp_up, args.ramp_start, args.ramp_end)
    {
        let a = Arrivals::Ramp {
            strategy: match r {
                RampArg::Linear => servebench::driver::RampStrategy::Linear,
                RampArg::Exponential => servebench::driver::RampStrategy::Exponential,
            },
            start_rate,
            end_rate,
            burstiness: args.burstiness.unwrap_or(1.0),
            seed,
        };
        a.schedule(2)
            .map_err(|e| usage(format!("--ramp-start/--ramp-end: {e}")))?;
        return Ok(Some(a));
    }
    Ok(match (args.rate, args.burstiness, args.arrivals) {
        (Some(r), _, _) if r.is_infinite() => Some(Arrivals::AllAtOnce),
        (_, Some(burstiness), _) => Some(Arrivals::Gamma {
            rate: p.request_rate,
            burstiness,
            seed,
            rescale: true,
        }),
        (_, None, ArrivalsArg::Poisson) => Some(Arrivals::Poisson {
            rate: p.request_rate,
            seed,
        }),
        (_, None, ArrivalsArg::Constant) => None,
    })
}

/// `--duration`: `90s`, `30m`, `2h`, or seconds.
pub(crate) fn duration(v: &str) -> Result<Duration, String> {
    crate::values::duration_in(v, &[("h", 3600.0), ("m", 60.0), ("s", 1.0)])
        .ok_or_else(|| format!("`{}` is not a positive duration (90s, 30m, 2h)", v.trim()))
}

/// `--phases FILE`: the phase file read and checked; an error names the file and, for a
/// TOML error, its line and column.
pub(crate) fn phases(
    path: &std::path::Path,
) -> Result<servebench::driver::Phases, crate::input::InputError> {
    use crate::input::InputError;
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("--phases {name}: cannot read: {e}")))?;
    let phases: servebench::driver::Phases =
        toml::from_str(&text).map_err(|e| InputError(format!("--phases {name}: {e}")))?;
    phases
        .check()
        .map_err(|e| InputError(format!("--phases {name}: {e}")))?;
    Ok(phases)
}

/// Load-shape flags beside the rate: a rate as an expression of time, and what leaves a
/// run's figures by time (its first and last seconds).
#[derive(Debug, Clone, clap::Args)]
pub struct ShapeArgs {
    /// A request rate that varies with time, an expression of `t` (seconds from the
    /// start) with `pi`, `e`, `sin`, `cos`, `exp`, `sqrt`, `abs`, `min`, `max`, `^`: e.g.
    /// "10 + 5 * sin(2 * pi * t / 60)". Needs --duration; constant gaps, or Poisson with
    /// --arrivals poisson.
    #[arg(long, value_name = "EXPR", requires = "duration",
          conflicts_with_all = ["rate", "ramp_up", "phases"])]
    pub rate_expr: Option<String>,
    /// Leave the requests sent in the run's first S seconds out of its figures (kept in
    /// the run file as warm-up records); by time, where --warmup-requests counts.
    #[arg(long, value_name = "S", value_parser = crate::values::positive_f64("--warmup-seconds"))]
    pub warmup_seconds: Option<f64>,
    /// Leave the requests sent in the run's last S seconds out of its figures (kept in the
    /// run file as cool-down records).
    #[arg(long, value_name = "S", value_parser = crate::values::positive_f64("--cooldown-seconds"))]
    pub cooldown_seconds: Option<f64>,
    /// Measure a server's start: wait for `GET /health` to answer 200 (up to
    /// --cold-timeout), record how long that took, send no warm-up requests, and report
    /// the first requests (those before the steady state, MSER-5) apart from the steady
    /// state.
    #[arg(long, conflicts_with_all = ["warmup_requests", "warmup_seconds"])]
    pub cold: bool,
    /// With --cold: how long to wait for the server to become healthy.
    #[arg(long, value_name = "S", default_value_t = 600.0, requires = "cold",
          value_parser = crate::values::positive_f64("--cold-timeout"))]
    pub cold_timeout: f64,
}

/// The functions a rate expression may call without evalexpr's `math::` namespace.
const MATH: &[&str] = &["sin", "cos", "tan", "exp", "ln", "sqrt", "abs"];

/// `--rate-expr EXPR` over `duration`: the expression (of `t`, seconds from the start, with
/// `pi` and `e`; `sin`, `cos`, `tan`, `exp`, `ln`, `sqrt`, `abs`, `min`, `max`, `floor`,
/// `ceil`; `^` for powers) parsed once by evalexpr and evaluated each millisecond into send
/// times ([`servebench::driver::rate_schedule`]), Poisson with `poisson_seed`.
pub(crate) fn rate_expr_schedule(
    expr: &str,
    duration: Duration,
    poisson_seed: Option<u64>,
) -> Result<Vec<Duration>, String> {
    use evalexpr::{ContextWithMutableVariables as _, DefaultNumericTypes, HashMapContext, Value};
    let mut text = expr.to_string();
    for f in MATH {
        text = replace_call(&text, f);
    }
    let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(&text)
        .map_err(|e| format!("`{expr}`: {e}"))?;
    let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
    let set = |ctx: &mut HashMapContext<DefaultNumericTypes>, k: &str, v: f64| {
        ctx.set_value(k.into(), Value::from_float(v))
            .map_err(|e| format!("`{expr}`: {e}"))
    };
    set(&mut ctx, "pi", std::f64::consts::PI)?;
    set(&mut ctx, "e", std::f64::consts::E)?;
    // The expression must evaluate at t = 0 (a typo is found before the run).
    set(&mut ctx, "t", 0.0)?;
    tree.eval_number_with_context(&ctx)
        .map_err(|e| format!("`{expr}` at t = 0: {e}"))?;
    let mut failed = None;
    let at = servebench::driver::rate_schedule(
        |t| {
            let v = set(&mut ctx, "t", t).and_then(|()| {
                tree.eval_number_with_context(&ctx)
                    .map_err(|e| format!("`{expr}` at t = {t:.3} s: {e}"))
            });
            v.unwrap_or_else(|e| {
                failed.get_or_insert(e);
                0.0
            })
        },
        duration.as_secs_f64(),
        poisson_seed,
    )
    .map_err(|e| format!("`{expr}`: {e}"))?;
    match failed {
        Some(e) => Err(e),
        None if at.is_empty() => Err(format!("`{expr}` sends no request in {duration:?}")),
        None => Ok(at),
    }
}

/// `sin(` → `math::sin(` where `sin` is a whole word not already namespaced.
fn replace_call(text: &str, f: &str) -> String {
    let needle = format!("{f}(");
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        let before = &rest[..i];
        let whole = before
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
        out.push_str(before);
        if whole {
            out.push_str("math::");
        }
        out.push_str(&needle);
        rest = &rest[i + needle.len()..];
    }
    out.push_str(rest);
    out
}

/// `--rate-expr`: its schedule into `bench_args` (send times, and the request count).
/// A run bounded by `--duration` is a soak: its records stream to a spool beside the
/// output (`FILE.spool.jsonl`, copied into the run file at the end) and stay slim in
/// memory ([`servebench::app::bench::SoakRecords`]).
pub(crate) fn soak(
    args: &Args,
    output: Option<&std::path::Path>,
) -> Option<servebench::app::bench::SoakRecords> {
    args.duration?;
    Some(servebench::app::bench::SoakRecords {
        spool: output.map(|o| {
            let mut name = o.as_os_str().to_owned();
            name.push(".spool.jsonl");
            name.into()
        }),
    })
}

pub(crate) fn apply_rate_expr(
    args: &Args,
    bench_args: &mut servebench::app::bench::BenchArgs,
) -> Result<(), clap::Error> {
    let (Some(expr), Some(d)) = (&args.shape.rate_expr, args.duration) else {
        return Ok(());
    };
    let seed = match args.arrivals {
        ArrivalsArg::Poisson => Some(args.seed.unwrap_or(42)),
        ArrivalsArg::Constant => None,
    };
    let at = rate_expr_schedule(expr, d, seed).map_err(|e| usage(format!("--rate-expr: {e}")))?;
    bench_args.profile.total_requests = at.len() as u64;
    bench_args.schedule = Some(at);
    Ok(())
}
