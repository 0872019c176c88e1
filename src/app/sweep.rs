//! `servebench bench --sweep N` over HTTP: guidellm's rate sweep ([`crate::driver::sweep`])
//! against a server, one fresh connection pool per run, the prefix cache reset before each
//! run when asked, every run's figures computed as [`bench::run`](super::bench::run) does.

use std::path::Path;

use super::bench::{BenchArgs, BenchError, Progress, Progressed};
use crate::driver::workload;
use crate::driver::{run, RunOptions};
use crate::driver::{sweep, SweepOptions};
use crate::http::client::{model_ids, HttpEngine};
use crate::metrics::summarize;
use crate::profile::Dataset;
use crate::result::Sweep;

/// Runs the sweep against `args.http.target` (`args.arrivals` is ignored: the sweep sets
/// the arrivals of each run), calling `progress` as each run goes.
pub fn run_sweep(
    args: &BenchArgs,
    opts: &SweepOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Sweep, BenchError> {
    let mut http = args.http.clone();
    if http.model.is_none() && args.discover_model {
        let probe = HttpEngine::new(http.clone())?;
        http.model = model_ids(&probe.models_response()?).into_iter().next();
    }
    let mut base = RunOptions::for_profile(&args.profile);
    let work = match &args.profile.dataset {
        Dataset::Structured(spec) => {
            let plan = spec
                .build(Some(args.profile.total_requests))
                .map_err(crate::driver::DriverError::from)?;
            plan.apply(&mut base);
            plan.items
        }
        _ => {
            let mut w = args.workload.clone();
            w.with_text = true;
            workload::build(&args.profile, &w).map_err(crate::driver::DriverError::from)?
        }
    };
    args.limit_run(&mut base);
    let mut runner = |o: &RunOptions| -> Result<_, BenchError> {
        let engine = HttpEngine::new(http.clone())?;
        if args.reset_prefix_cache {
            engine.reset_prefix_cache()?;
        }
        let mut engine = Progressed::new(engine, progress);
        let out = run(&mut engine, &work, o)?;
        let mut result = summarize(
            &out.records,
            Some(&args.profile),
            &args.metrics,
            o.max_concurrency,
        );
        result.meta.model = http.model.clone();
        result.meta.source = Some(http.target.clone());
        Ok((out, result))
    };
    sweep(&mut runner, &base, opts)
}

/// Saves a sweep atomically (a temporary file in the same folder, then a rename):
/// `{"format": "servebench-sweep", "version": 1, "runs": [...], "saturation_rate_per_s": …}`.
pub fn save_sweep(path: &Path, s: &Sweep) -> Result<(), BenchError> {
    let werr = |message: String| BenchError::Write {
        path: path.display().to_string(),
        message,
    };
    let bytes = crate::result::sweep_to_file_bytes(s).map_err(|e| werr(e.to_string()))?;
    crate::atomic::write(path, &bytes).map_err(|e| werr(e.to_string()))
}
