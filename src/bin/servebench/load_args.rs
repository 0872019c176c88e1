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
    let v = v.trim();
    let (num, scale) = match v.char_indices().last() {
        Some((i, 'h')) => (&v[..i], 3600.0),
        Some((i, 'm')) => (&v[..i], 60.0),
        Some((i, 's')) => (&v[..i], 1.0),
        _ => (v, 1.0),
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .and_then(|x| Duration::try_from_secs_f64(x * scale).ok())
        .ok_or_else(|| format!("`{v}` is not a positive duration (90s, 30m, 2h)"))
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

/// What leaves a run's figures by time: its first and last seconds.
#[derive(Debug, Clone, clap::Args)]
pub struct CutArgs {
    /// Leave the requests sent in the run's first S seconds out of its figures (kept in
    /// the run file as warm-up records); by time, where --warmup-requests counts.
    #[arg(long, value_name = "S", value_parser = crate::values::positive_f64("--warmup-seconds"))]
    pub warmup_seconds: Option<f64>,
    /// Leave the requests sent in the run's last S seconds out of its figures (kept in the
    /// run file as cool-down records).
    #[arg(long, value_name = "S", value_parser = crate::values::positive_f64("--cooldown-seconds"))]
    pub cooldown_seconds: Option<f64>,
}
