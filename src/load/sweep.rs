//! Sweep files (`servebench bench --sweep N --output FILE`): one [`Run`] per run of the
//! sweep, each with its [`SweepPoint`] (strategy, achieved rate, whether the server kept
//! up, the sweep's saturation point), so every verb reads them and `report` can print the
//! rate table again ([`sweep_of`]).

use serde::Deserialize;

use super::{Provenance, Records, Run};
use crate::import::{self, ImportError};
use crate::result::{Strategy, Sweep, SweepRun, SWEEP_FORMAT};

/// The sweep file versions this build reads.
const SWEEP_VERSION: u64 = 1;

/// Where a run of a sweep file stood in its sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// What was run (synchronous, throughput, a constant rate).
    pub strategy: Strategy,
    /// Requests completed per second, as the sweep measured it.
    pub achieved_rate_per_s: f64,
    /// Whether the server kept up (constant rates only).
    pub kept_up: Option<bool>,
    /// Why the over-saturation detector stopped the run early, if it did.
    pub stopped_early: Option<String>,
    /// The whole sweep's saturation point (the same on every run of a file).
    pub saturation_rate_per_s: Option<f64>,
}

#[derive(Deserialize)]
struct SweepFile {
    #[serde(flatten)]
    sweep: Sweep,
}

/// A short name for a run of a sweep: `synchronous`, `throughput`, `constant@12.50`.
pub fn strategy_name(s: &Strategy) -> String {
    match s {
        Strategy::Synchronous => "synchronous".into(),
        Strategy::Throughput => "throughput".into(),
        Strategy::Constant { rate } => format!("constant@{rate:.2}"),
    }
}

/// The runs of a sweep file (`format` already sniffed as a sweep).
pub(super) fn runs(
    bytes: &[u8],
    prov: impl Fn(Option<String>) -> Provenance,
) -> Result<Vec<Run>, ImportError> {
    let value: serde_json::Value = import::json::parse_slice(bytes, 0)?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version != Some(SWEEP_VERSION) {
        return Err(ImportError::UnsupportedSchema {
            format: SWEEP_FORMAT,
            path: "$.version".into(),
            found: format!(
                "{} (this servebench reads {SWEEP_VERSION})",
                version.map_or_else(|| "missing".to_string(), |v| v.to_string())
            ),
        });
    }
    // Typed parse from the bytes so errors carry line, column and path.
    let file: SweepFile = import::json::parse_slice(bytes, 0)?;
    let saturation = file.sweep.saturation_rate_per_s;
    Ok(file
        .sweep
        .runs
        .into_iter()
        .enumerate()
        .map(|(i, r)| Run {
            name: strategy_name(&r.strategy),
            result: r.result,
            records: Some(Records::plain(r.records)),
            layout: None,
            provenance: prov(Some(format!("$.runs[{i}]"))),
            sweep: Some(SweepPoint {
                strategy: r.strategy,
                achieved_rate_per_s: r.achieved_rate_per_s,
                kept_up: r.kept_up,
                stopped_early: r.stopped_early,
                saturation_rate_per_s: saturation,
            }),
        })
        .collect())
}

/// The sweep the runs came from, when they all came from one sweep file (without their
/// records, which the table does not need): feed it to [`crate::format::sweep::write_table`].
///
/// ```
/// use servebench::driver::{sweep, SweepOptions};
/// use servebench::driver::{run, workload, RunOptions};
/// use servebench::sim::{Config, H200Sim};
/// let work = workload::random(60, 256, 16, 0.0, 1, false).unwrap();
/// let s = sweep(
///     &mut |o: &RunOptions| -> Result<_, servebench::driver::DriverError> {
///         let out = run(&mut H200Sim::new(Config::named("baseline").unwrap()).warmed_up(), &work, o)?;
///         let result = servebench::metrics::summarize(
///             &out.records, None, &servebench::metrics::MetricsOptions::load_run(), o.max_concurrency,
///         );
///         Ok((out, result))
///     },
///     &RunOptions::default(),
///     &SweepOptions { rates: 2, ..SweepOptions::default() },
/// ).unwrap();
/// let bytes = servebench::driver::sweep_to_file_bytes(&s).unwrap();
/// let runs = servebench::load::load("sweep.json", &bytes).unwrap();
/// assert_eq!(runs.len(), 4);
/// assert_eq!(runs[1].name, "throughput");
/// let again = servebench::load::sweep_of(&runs).unwrap();
/// assert_eq!(again.saturation_rate_per_s, s.saturation_rate_per_s);
/// ```
pub fn sweep_of(runs: &[Run]) -> Option<Sweep> {
    let points: Option<Vec<&SweepPoint>> = runs.iter().map(|r| r.sweep.as_ref()).collect();
    let points = points?;
    let saturation = points.first()?.saturation_rate_per_s;
    Some(Sweep {
        runs: runs
            .iter()
            .zip(points)
            .map(|(r, p)| SweepRun {
                strategy: p.strategy,
                achieved_rate_per_s: p.achieved_rate_per_s,
                kept_up: p.kept_up,
                stopped_early: p.stopped_early.clone(),
                result: r.result.clone(),
                records: Vec::new(),
            })
            .collect(),
        saturation_rate_per_s: saturation,
    })
}
