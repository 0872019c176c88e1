//! `servebench self-test --target URL`: the client's own ceiling on this machine — the
//! highest request rate (and streamed events per second) it sustains with a p99 time to
//! first token of at most 1 ms (`--p99-ttft`) against a server that computes nothing (`h200_server --serve
//! ADDR --zero-compute`). It is a rate capacity search (the same search as `bench --search
//! rate`) of tiny requests: 8 prompt tokens, `--output-tokens` answer tokens, each token one
//! streamed event. The figure includes the server's own HTTP work on the same machine, so
//! it is a lower bound on what the client alone sustains.
//!
//! The ceiling is saved (`--save`, by default `$XDG_CACHE_HOME/servebench/client-ceiling.json`
//! or `~/.cache/…`); `bench` reads it after every run and warns when the run came within
//! 20 % of it: past that point the client's own delays show in its figures.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use servebench::app::bench::BenchArgs;
use servebench::app::{run_capacity, CapacityArgs};
use servebench::capacity::options_for;
use servebench::profile::{Dataset, Profile};
use servebench::result::SearchKind;

use crate::input::InputError;

/// The share of the ceiling past which `bench` warns.
const NEAR: f64 = 0.8;
/// The environment variable naming the ceiling file (else the cache directory's).
pub const CEILING_ENV: &str = "SERVEBENCH_CLIENT_CEILING";

/// `servebench self-test` flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A zero-compute server's base URL (`h200_server --serve ADDR --zero-compute`).
    #[arg(long)]
    target: String,
    /// The highest request rate probed, req/s.
    #[arg(long, default_value_t = 40_000.0,
          value_parser = crate::values::positive_f64("--max"))]
    max: f64,
    /// The lowest request rate probed, req/s.
    #[arg(long, default_value_t = 250.0,
          value_parser = crate::values::positive_f64("--min"))]
    min: f64,
    /// How long each probe sends, seconds.
    #[arg(long, default_value_t = 2.0,
          value_parser = crate::values::positive_f64("--probe-seconds"))]
    probe_seconds: f64,
    /// The p99 time to first token a rate must hold, ms (a debug build of the client needs
    /// more than the default).
    #[arg(long, value_name = "MS", default_value_t = 1.0,
          value_parser = crate::values::positive_f64("--p99-ttft"))]
    p99_ttft: f64,
    /// Tokens in each answer (each one a streamed event).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    output_tokens: u64,
    /// Where to save the ceiling [default: the cache directory; $SERVEBENCH_CLIENT_CEILING
    /// when set].
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Where the probes' run files go [default: a temporary directory, removed after].
    #[arg(long, value_name = "DIR")]
    result_dir: Option<PathBuf>,
    /// No progress lines.
    #[arg(long, short)]
    quiet: bool,
}

/// The saved ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// `servebench-client-ceiling`.
    pub format: String,
    /// When it was measured (RFC 3339).
    pub measured_at: String,
    /// The zero-compute server it was measured against.
    pub target: String,
    /// Requests per second sustained within the SLO.
    pub requests_per_s: f64,
    /// Streamed events (token chunks) per second at that rate.
    pub events_per_s: f64,
    /// Answer tokens per request of the test.
    pub output_tokens: u64,
    /// The SLO held.
    pub slo: String,
}

const FORMAT: &str = "servebench-client-ceiling";

/// The ceiling file: `$SERVEBENCH_CLIENT_CEILING`, else under the user's cache directory.
pub fn ceiling_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(CEILING_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("servebench").join("client-ceiling.json"))
}

/// Runs the test; the capacity table and the ceiling are the output.
pub fn run(args: &Args) -> Result<String, InputError> {
    let profile = Profile {
        name: Some("self-test".into()),
        dataset: Dataset::Random {
            input_tokens: 8,
            output_tokens: args.output_tokens,
            seed: 1,
        },
        request_rate: args.max,
        total_requests: 1,
        max_concurrency: None,
    };
    let bench = BenchArgs::new(args.target.clone(), profile);
    if args.min >= args.max {
        return Err(InputError(format!(
            "--min {} must be below --max {}",
            args.min, args.max
        )));
    }
    let (dir, temporary) = match &args.result_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("servebench-self-test-{}", std::process::id())),
            true,
        ),
    };
    let slo = format!("ttft:p99<={}ms", args.p99_ttft);
    let cap = CapacityArgs {
        slo: slo
            .parse()
            .map_err(|e| InputError(format!("--p99-ttft: {e}")))?,
        kind: SearchKind::Rate,
        options: options_for(SearchKind::Rate, args.min, args.max, None),
        dir: dir.clone(),
        probe_seconds: args.probe_seconds,
    };
    let quiet = args.quiet;
    let mut on_probe = |e: servebench::app::ProbeEvent<'_>| {
        if let (false, servebench::app::ProbeEvent::Ended { at, check }) = (quiet, e) {
            eprintln!(
                "servebench: self-test probe {} at {:.0} req/s: {}",
                at.index,
                at.load,
                servebench::format::capacity::probe_summary(check)
            );
        }
    };
    let result = run_capacity(&bench, &cap, &mut on_probe, &mut |_| {});
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let run = result.map_err(|e| InputError(format!("self-test: {e}")))?;
    let mut text = servebench::format::capacity::render(
        &run.estimate,
        &run.probes,
        &run.outcome.loads,
        cap.options.grid_probes(),
    );
    let Some(rate) = run.estimate.lower else {
        text.push_str(&format!(
            "\nClient ceiling: below {:.0} req/s (no probed rate held {slo}); nothing saved.\n",
            args.min
        ));
        return Ok(text);
    };
    let ceiling = Ceiling {
        format: FORMAT.into(),
        measured_at: chrono::Local::now().to_rfc3339(),
        target: args.target.clone(),
        requests_per_s: rate,
        events_per_s: rate * args.output_tokens as f64,
        output_tokens: args.output_tokens,
        slo: slo.clone(),
    };
    // The saved figure is the highest rate judged to hold, not the interpolated capacity
    // printed above it: say which, so the two figures side by side do not disagree.
    let estimate = run
        .estimate
        .estimate
        .filter(|e| *e > rate)
        .map(|e| format!("; the interpolated capacity above is {e:.0}"))
        .unwrap_or_default();
    text.push_str(&format!(
        "\nClient ceiling: {:.0} req/s (the highest probed rate judged to hold{estimate}), \
         {:.0} streamed events/s ({} tokens per answer) within {slo} against a zero-compute \
         server ({}), the server's own work on this machine included",
        ceiling.requests_per_s, ceiling.events_per_s, ceiling.output_tokens, ceiling.target
    ));
    match args.save.clone().or_else(ceiling_path) {
        Some(path) => {
            save(&path, &ceiling)?;
            text.push_str(&format!("; saved to {}\n", path.display()));
        }
        None => text.push_str("; not saved (no cache directory: give --save FILE)\n"),
    }
    Ok(text)
}

fn save(path: &Path, c: &Ceiling) -> Result<(), InputError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError(format!("--save {}: {e}", dir.display())))?;
    }
    let bytes = serde_json::to_vec_pretty(c).map_err(|e| InputError(e.to_string()))?;
    servebench::atomic::write(path, &bytes)
        .map_err(|e| InputError(format!("--save {}: {e}", path.display())))
}

/// The saved ceiling, when there is one (a file that does not read as one is said, not
/// silently skipped).
fn saved() -> Option<Result<(PathBuf, Ceiling), String>> {
    let path = ceiling_path()?;
    let bytes = std::fs::read(&path).ok()?;
    Some(
        serde_json::from_slice::<Ceiling>(&bytes)
            .ok()
            .filter(|c| c.format == FORMAT)
            .map(|c| (path.clone(), c))
            .ok_or_else(|| format!("{}: not a client-ceiling file", path.display())),
    )
}

/// The warning for a run that came within 20 % of the saved ceiling (`None`: no ceiling
/// saved, or the run stayed below).
pub fn near_ceiling(file: &servebench::runfile::RunFile) -> Option<String> {
    let (path, c) = match saved()? {
        Ok(x) => x,
        Err(e) => return Some(format!("client ceiling: {e}")),
    };
    let r = &file.result;
    let secs = r.duration_ms.map(|d| d / 1000.0).filter(|s| *s > 0.0)?;
    let req_s = r.request_throughput_per_s.unwrap_or(0.0);
    let events = file
        .records
        .iter()
        .map(|x| x.chunks.len() as f64)
        .sum::<f64>();
    let events_s = events / secs;
    let near = req_s >= NEAR * c.requests_per_s || events_s >= NEAR * c.events_per_s;
    near.then(|| {
        format!(
            "warning: this run's load on the client ({req_s:.0} req/s, {events_s:.0} streamed \
             events/s) is within 20 % of this machine's client ceiling ({:.0} req/s, {:.0} \
             events/s, measured {} by `servebench self-test`, {}): the client's own delays \
             may show in its latencies; spread the load over shards (--shard K/N) or machines",
            c.requests_per_s,
            c.events_per_s,
            c.measured_at,
            path.display()
        )
    })
}
