//! `servebench bench --slo … --search rate|concurrency`: the capacity search
//! ([`crate::capacity::search()`]) with every probe a [`super::bench::run`]
//! against the server — the same workload at a constant rate (or, for a concurrency
//! search, every request at once under a cap) — judged against the SLO, saved as a run
//! file as soon as it ends (`probe-NNN.json`, with its place in the search in
//! `capacity_probe`), then the search as `capacity.json` and, with the `plot` feature,
//! `capacity.svg`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::bench::{self, BenchArgs, BenchError, Progress};
use crate::capacity::{
    estimate_of, probe_of, search, ProbeAt, ProbeRecord, SearchOptions, SearchOptionsError,
    SearchOutcome, SloCheck, SloTarget,
};
use crate::driver::arrivals::Arrivals;
use crate::result::{CapacityEstimate, SearchKind};

/// What to search.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityArgs {
    /// The SLO.
    pub slo: SloTarget,
    /// Rate or concurrency.
    pub kind: SearchKind,
    /// The search's range, resolution, repeats, band and budget.
    pub options: SearchOptions,
    /// Where each probe's run file, `capacity.json` and `capacity.svg` go (created).
    pub dir: PathBuf,
    /// How long a rate probe sends ([`crate::capacity::DEFAULT_PROBE_SECONDS`] by
    /// default): probes are bounded by time, not by the profile's request count.
    pub probe_seconds: f64,
}

/// A finished search.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityRun {
    /// The search.
    pub outcome: SearchOutcome,
    /// Its answer.
    pub estimate: CapacityEstimate,
    /// Each probe with its SLO figures, in order.
    pub probes: Vec<(ProbeRecord, SloCheck)>,
    /// Each probe's run file, in order.
    pub files: Vec<PathBuf>,
}

/// Errors of a capacity search.
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// The options cannot run a search.
    #[error("--search: {0}")]
    Options(#[from] SearchOptionsError),
    /// A probe could not run.
    #[error("probe {index} at {load}: {source}")]
    Probe {
        /// The probe's place.
        index: u32,
        /// Its load.
        load: f64,
        /// Why.
        source: BenchError,
    },
    /// A probe was interrupted (Ctrl-C): it and the probes before it are saved.
    #[error("probe {index} interrupted ({reason}); it (marked interrupted) and the probes before it are saved in {}", dir.display())]
    Interrupted {
        /// The probe's place.
        index: u32,
        /// The signal or reason.
        reason: String,
        /// The probes' directory.
        dir: PathBuf,
    },
    /// Writing a file failed.
    #[error("writing {}: {message}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// The value of `capacity.json`'s `format` field.
pub const CAPACITY_FORMAT: &str = "servebench-capacity";

/// `capacity.json`: the search, its answer, and each probe's file and SLO figures.
#[derive(Debug, Serialize)]
struct SearchFile<'a> {
    format: &'static str,
    version: u32,
    slo: String,
    search: SearchKind,
    capacity: &'a CapacityEstimate,
    outcome: &'a SearchOutcome,
    probes: Vec<ProbeEntry<'a>>,
}

#[derive(Debug, Serialize)]
struct ProbeEntry<'a> {
    file: String,
    index: u32,
    load: f64,
    repetition: u32,
    check: &'a SloCheck,
}

/// The bench arguments of one probe: `base` at `load`. A rate probe sends for
/// `probe_seconds` ([`crate::capacity::probe_requests`] requests, fewer when `base` caps
/// them) and may drain for [`crate::capacity::probe_drain_seconds`] after; what is still
/// in flight then is cut.
pub fn probe_args(base: &BenchArgs, kind: SearchKind, load: f64, probe_seconds: f64) -> BenchArgs {
    let mut a = base.clone();
    match kind {
        SearchKind::Rate => {
            // An explicit request cap (`--max-requests`) still caps the probe; the
            // sustained-load rule then judges whether so short a probe showed anything.
            let n = crate::capacity::probe_requests(load, probe_seconds);
            let n = base.max_requests.map_or(n, |m| m.min(n));
            a.profile.total_requests = n;
            let sending_s = n as f64 / load;
            a.max_duration = std::time::Duration::try_from_secs_f64(
                sending_s + crate::capacity::probe_drain_seconds(sending_s),
            )
            .ok();
            a.profile.request_rate = load;
            a.arrivals = Some(match base.arrivals {
                Some(Arrivals::Poisson { seed, .. }) => Arrivals::Poisson { rate: load, seed },
                Some(Arrivals::Gamma {
                    burstiness,
                    seed,
                    rescale,
                    ..
                }) => Arrivals::Gamma {
                    rate: load,
                    burstiness,
                    seed,
                    rescale,
                },
                _ => Arrivals::Constant { rate: load },
            });
        }
        SearchKind::Concurrency => {
            // A whole number by the search's construction; at least one in flight.
            let cap = load.round().max(1.0) as usize;
            a.arrivals = Some(Arrivals::AllAtOnce);
            a.max_concurrency = Some(cap);
            a.profile.max_concurrency = Some(cap as u64);
        }
    }
    a
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CapacityError> {
    crate::atomic::write(path, bytes).map_err(|e| CapacityError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// What [`run_capacity`] tells its caller of each probe.
#[derive(Debug, Clone, Copy)]
pub enum ProbeEvent<'a> {
    /// A probe starts: its place and load, and the requests it will send.
    Started {
        /// The probe.
        at: &'a ProbeAt,
        /// Requests it sends.
        requests: u64,
    },
    /// A probe ended and was judged (its run file is saved).
    Ended {
        /// The probe.
        at: &'a ProbeAt,
        /// Its SLO and sustained-load figures.
        check: &'a SloCheck,
    },
}

/// Runs the search against `base.http.target` (see the module docs); `on_probe` hears of
/// each probe as it starts and ends, `progress` of each probe's requests as they go. A
/// probe interrupted (Ctrl-C) is saved, marked interrupted, before the search stops.
pub fn run_capacity(
    base: &BenchArgs,
    cap: &CapacityArgs,
    on_probe: &mut dyn FnMut(ProbeEvent<'_>),
    progress: &mut dyn FnMut(&Progress),
) -> Result<CapacityRun, CapacityError> {
    cap.options.check()?;
    std::fs::create_dir_all(&cap.dir).map_err(|e| CapacityError::Write {
        path: cap.dir.clone(),
        message: e.to_string(),
    })?;
    let mut checks: Vec<SloCheck> = Vec::new();
    let mut files = Vec::new();
    let mut probe = |at: &ProbeAt| -> Result<f64, CapacityError> {
        let args = probe_args(base, cap.kind, at.load, cap.probe_seconds);
        let requests = args.max_requests.map_or(args.profile.total_requests, |m| {
            m.min(args.profile.total_requests)
        });
        on_probe(ProbeEvent::Started { at, requests });
        let mut run = bench::run(&args, progress).map_err(|source| CapacityError::Probe {
            index: at.index,
            load: at.load,
            source,
        })?;
        let check = cap
            .slo
            .check_probe(&run.file.records, cap.kind, Some(requests));
        run.file.capacity_probe = Some(probe_of(cap.kind, &cap.slo, at, &check));
        let path = cap.dir.join(format!("probe-{:03}.json", at.index));
        bench::save(&path, &run).map_err(|e| CapacityError::Write {
            path: path.clone(),
            message: e.to_string(),
        })?;
        // Interrupted: what the probe measured is saved (marked interrupted) above.
        if let Some(reason) = base.stop.as_ref().and_then(|s| s.reason()) {
            return Err(CapacityError::Interrupted {
                index: at.index,
                reason,
                dir: cap.dir.clone(),
            });
        }
        on_probe(ProbeEvent::Ended { at, check: &check });
        files.push(path);
        let m = check.worst_ratio;
        checks.push(check);
        Ok(m)
    };
    let outcome = search(&cap.options, &mut probe)?;
    let estimate = estimate_of(cap.kind, &cap.slo, &outcome);
    let probes: Vec<(ProbeRecord, SloCheck)> = outcome.probes.iter().cloned().zip(checks).collect();
    let file = SearchFile {
        format: CAPACITY_FORMAT,
        version: 1,
        slo: cap.slo.to_string(),
        search: cap.kind,
        capacity: &estimate,
        outcome: &outcome,
        probes: probes
            .iter()
            .zip(&files)
            .map(|((p, c), f)| ProbeEntry {
                file: f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                index: p.index,
                load: p.load,
                repetition: p.repetition,
                check: c,
            })
            .collect(),
    };
    let json = cap.dir.join("capacity.json");
    let bytes = serde_json::to_vec_pretty(&file).map_err(|e| CapacityError::Write {
        path: json.clone(),
        message: e.to_string(),
    })?;
    write_atomic(&json, &bytes)?;
    #[cfg(feature = "plot")]
    {
        use crate::observe::capacity_plot::{capacity_chart, CAPACITY_SVG};
        let path = cap.dir.join(CAPACITY_SVG);
        let svg = capacity_chart(&outcome, cap.kind, &estimate.slo).map_err(|e| {
            CapacityError::Write {
                path: path.clone(),
                message: e.to_string(),
            }
        })?;
        write_atomic(&path, svg.as_bytes())?;
    }
    Ok(CapacityRun {
        outcome,
        estimate,
        probes,
        files,
    })
}
