//! `servebench bench --slo … --search rate|concurrency [--min X] --max Y`: the highest load
//! at which the SLO holds, with its interval; every probe saved as a run file in
//! `--result-dir` (default `servebench-capacity-DATE/`), the search as `capacity.json` and
//! `capacity.svg`. Prints the probe table and the conclusion.

use std::path::{Path, PathBuf};

use servebench::app::bench::BenchArgs;
use servebench::app::{run_capacity, CapacityArgs};
use servebench::capacity::{options_for, SloTarget};
use servebench::result::SearchKind;

use crate::input::InputError;

/// What a capacity search varies, as typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchArg {
    /// The request rate (constant arrivals; Poisson/gamma with --arrivals/--burstiness).
    Rate,
    /// The client's concurrency cap, every request sent at once.
    Concurrency,
}

/// The flags of a capacity search.
#[derive(Debug, Clone, clap::Args)]
pub struct CapacityFlags {
    /// The SLO a capacity search holds the server to: conditions METRIC:STAT<=LIMIT
    /// (METRIC ttft|tpot|itl|e2el, STAT mean|median|pN, LIMIT with ms or s) and optionally
    /// goodput>=SHARE, e.g. "ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99".
    #[arg(long, value_name = "SLO", requires = "search")]
    pub slo: Option<String>,
    /// Search for the highest request rate (or concurrency) at which --slo holds.
    #[arg(long, value_enum, requires = "slo",
          conflicts_with_all = ["sweep", "shard", "start_at", "output", "save_result", "ci", "rate"])]
    pub search: Option<SearchArg>,
    /// The lowest load the search probes [default: --max / 32 for rate, 1 for concurrency].
    #[arg(long, requires = "search", allow_negative_numbers = true)]
    pub min: Option<f64>,
    /// The highest load the search probes (req/s, or requests in flight).
    #[arg(long, requires = "search", allow_negative_numbers = true)]
    pub max: Option<f64>,
    /// Stop when no two probed loads inside the interval are further apart than this
    /// [default: (max − min) / 32 for rate, 1 for concurrency].
    #[arg(long, requires = "search", allow_negative_numbers = true)]
    pub resolution: Option<f64>,
    /// Most probes at one load near the SLO's limit.
    #[arg(long, requires = "search", default_value_t = servebench::capacity::DEFAULT_REPEATS,
          value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeats: u32,
    /// How long each rate probe sends, seconds [default: --max-seconds when given, else
    /// 30]: a probe is bounded by time (rate × seconds requests, at least 50), so that it
    /// reaches a steady state; a probe that did not complete 95 % of its offered rate
    /// does not hold.
    #[arg(long, requires = "search", value_name = "S",
          value_parser = crate::values::positive_f64("--probe-seconds"))]
    pub probe_seconds: Option<f64>,
    /// Most probes in all.
    #[arg(long, requires = "search", default_value_t = servebench::capacity::DEFAULT_MAX_PROBES,
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub max_probes: u32,
}

/// The search's arguments from the flags; a usage message naming the flag otherwise.
pub fn capacity_args(
    flags: &CapacityFlags,
    search: SearchArg,
    result_dir: Option<&Path>,
    max_seconds: Option<f64>,
) -> Result<CapacityArgs, String> {
    let text = flags.slo.as_deref().unwrap_or_default();
    let slo: SloTarget = text.parse().map_err(|e| format!("--slo: {e}"))?;
    let kind = match search {
        SearchArg::Rate => SearchKind::Rate,
        SearchArg::Concurrency => SearchKind::Concurrency,
    };
    let max = flags
        .max
        .ok_or_else(|| "--search needs --max (the highest load to probe)".to_string())?;
    let min = flags.min.unwrap_or(match kind {
        SearchKind::Rate => max / 32.0,
        SearchKind::Concurrency => 1.0,
    });
    let mut options = options_for(kind, min, max, flags.resolution);
    options.repeats = flags.repeats;
    options.max_probes = flags.max_probes;
    options
        .check()
        .map_err(|e| format!("--min/--max/--resolution: {e}"))?;
    let dir = result_dir.map(Path::to_path_buf).unwrap_or_else(|| {
        PathBuf::from(format!(
            "servebench-capacity-{}",
            chrono::Local::now().format("%Y%m%d-%H%M%S")
        ))
    });
    Ok(CapacityArgs {
        slo,
        kind,
        options,
        dir,
        probe_seconds: flags
            .probe_seconds
            .or(max_seconds)
            .unwrap_or(servebench::capacity::DEFAULT_PROBE_SECONDS),
    })
}

/// Runs the search; the probe table and the conclusion are the output (exit status 0).
/// Unless `quiet`, a line as each probe starts and ends, and a progress line every few
/// seconds while it runs.
pub fn run(args: &BenchArgs, cap: &CapacityArgs, quiet: bool) -> Result<(String, u8), InputError> {
    use servebench::app::ProbeEvent;
    let unit = cap.kind.unit();
    let total = std::cell::Cell::new(0u64);
    let mut on_probe = |e: ProbeEvent<'_>| {
        if quiet {
            return;
        }
        match e {
            ProbeEvent::Started { at, requests } => {
                total.set(requests);
                let how = match cap.kind {
                    servebench::result::SearchKind::Rate => format!(
                        "{requests} requests over about {:.0} s",
                        requests as f64 / at.load
                    ),
                    servebench::result::SearchKind::Concurrency => {
                        format!("{requests} requests")
                    }
                };
                eprintln!(
                    "servebench: probe {} at {} {unit} (repetition {}): {how}",
                    at.index,
                    servebench::format::capacity::load(cap.kind, at.load),
                    at.repetition,
                );
            }
            ProbeEvent::Ended { at, check } => eprintln!(
                "servebench: probe {} at {} {unit}: {}",
                at.index,
                servebench::format::capacity::load(cap.kind, at.load),
                servebench::format::capacity::probe_summary(check),
            ),
        }
    };
    let mut last: Option<std::time::Duration> = None;
    let mut progress = |p: &servebench::app::bench::Progress| {
        // A new probe's clock starts again at zero.
        if last.is_some_and(|l| p.elapsed < l) {
            last = None;
        }
        let due = last.is_none_or(|l| p.elapsed >= l + crate::progress::PLAIN_PROGRESS_EVERY);
        if !quiet && due && p.elapsed > std::time::Duration::ZERO {
            eprintln!("{}", crate::progress::progress_line(p, total.get()));
            last = Some(p.elapsed);
        }
    };
    let run = run_capacity(args, cap, &mut on_probe, &mut progress)
        .map_err(|e| InputError(format!("bench --search: {e}")))?;
    eprintln!(
        "servebench: {} probe run files, capacity.json and the chart saved in {}",
        run.files.len(),
        cap.dir.display()
    );
    let text = servebench::format::capacity::render(
        &run.estimate,
        &run.probes,
        &run.outcome.loads,
        cap.options.grid_probes(),
    );
    Ok((text, 0))
}
