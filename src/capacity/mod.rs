//! Capacity under an SLO: the SLO a server is held to ([`SloTarget`], the `--slo` syntax),
//! the noise-aware search for the highest load at which it holds ([`search()`], a pure
//! function over a probe closure), and the answer as the result schema keeps it
//! ([`estimate_of`] → [`crate::result::CapacityEstimate`]). Running the probes is the
//! caller's: `bench` over HTTP (`app::run_capacity`, feature `http`), a study on the simulator.

mod search;
mod slo;
mod sustain;

pub use search::{
    search, JudgedLoad, LoadVerdict, ProbeAt, ProbeRecord, SearchOptions, SearchOptionsError,
    SearchOutcome, DEFAULT_BAND, DEFAULT_MAX_PROBES, DEFAULT_REPEATS, NOISE_BANDS,
};
pub use slo::{
    ConditionCheck, SloCheck, SloCondition, SloMetric, SloStatistic, SloTarget, SloTargetError,
    MAX_RATIO, SUSTAINED_CONDITION,
};

pub use sustain::{
    probe_drain_seconds, probe_requests, sustained, Sustained, DEFAULT_PROBE_SECONDS,
    MAX_LATENCY_GROWTH, MIN_PROBE_REQUESTS, MIN_STEADY_REQUESTS, MIN_SUSTAINED_SHARE,
    STEADY_SKIP_SHARE,
};

use crate::result::{CapacityEstimate, CapacityProbe, SearchKind};

/// The answer of a finished search as a result keeps it.
pub fn estimate_of(kind: SearchKind, slo: &SloTarget, s: &SearchOutcome) -> CapacityEstimate {
    CapacityEstimate {
        search: kind,
        slo: slo.to_string(),
        estimate: s.estimate,
        lower: s.lower,
        upper: s.upper,
        resolution: s.options.resolution,
        probes: s.probes.len() as u32,
        converged: s.converged,
    }
}

/// What a probe's run file says about it.
pub fn probe_of(
    kind: SearchKind,
    slo: &SloTarget,
    at: &ProbeAt,
    check: &SloCheck,
) -> CapacityProbe {
    CapacityProbe {
        search: kind,
        slo: slo.to_string(),
        index: at.index,
        load: at.load,
        repetition: at.repetition,
        worst_ratio: check.worst_ratio,
        held: check.held,
    }
}

/// The search's options for `kind` over `[min, max]`: `resolution` (default: 1/32 of the
/// range for a rate, 1 for a concurrency), whole loads for a concurrency search, and the
/// default repeats, band and budget.
pub fn options_for(kind: SearchKind, min: f64, max: f64, resolution: Option<f64>) -> SearchOptions {
    let integer = kind == SearchKind::Concurrency;
    let resolution = resolution.unwrap_or(if integer { 1.0 } else { (max - min) / 32.0 });
    SearchOptions {
        integer,
        ..SearchOptions::new(min, max, resolution)
    }
}
