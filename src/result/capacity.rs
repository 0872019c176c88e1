//! The schema of a capacity search under an SLO (`bench --slo … --search rate|concurrency`,
//! a study with `goal = "capacity"`): [`CapacityEstimate`], the answer kept in a result,
//! and [`CapacityProbe`], what one probe's run file says about its place in the search.
//! The search itself is [`crate::capacity`]; these types only hold its numbers.

use serde::{Deserialize, Serialize};

/// What a capacity search varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchKind {
    /// The request rate (constant arrivals), requests per second.
    Rate,
    /// The client's concurrency cap (every request sent at once, at most this many in
    /// flight), requests in flight.
    Concurrency,
}

impl SearchKind {
    /// The unit of a load of this kind: `req/s` or `concurrent requests`.
    pub fn unit(self) -> &'static str {
        match self {
            SearchKind::Rate => "req/s",
            SearchKind::Concurrency => "concurrent requests",
        }
    }
}

/// The answer of a capacity search: the highest load at which the SLO holds, with the
/// bracket the search established around it. Loads are in [`SearchKind::unit`] of
/// `search` (requests/s for a rate search, requests in flight for a concurrency search).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityEstimate {
    /// What was varied.
    pub search: SearchKind,
    /// The SLO, in the syntax `--slo` reads (`ttft:p99<=500ms tpot:p99<=50ms`).
    pub slo: String,
    /// The capacity: where the SLO's worst ratio (observed / limit, averaged on a log
    /// scale over a load's probes) crosses 1, interpolated between the highest load whose
    /// average held and the next load above it whose average did not (a concurrency
    /// search keeps the highest load that held). `None` when the SLO held nowhere.
    pub estimate: Option<f64>,
    /// The interval's lower end: the highest load judged to hold (below every load judged
    /// to fail). `None`: no load held (the capacity is below the search's minimum).
    pub lower: Option<f64>,
    /// The interval's upper end: the lowest load judged to fail. `None`: no load failed
    /// (the capacity is at least the search's maximum).
    pub upper: Option<f64>,
    /// The resolution the search stopped at: no two probed loads inside the interval are
    /// further apart than this.
    pub resolution: f64,
    /// Probes (benchmark runs) the search took.
    pub probes: u32,
    /// Whether the search ended by reaching its resolution (`false`: its probe budget ran
    /// out first, and the interval is wider than the resolution says).
    pub converged: bool,
}

/// One probe's place in a capacity search (kept in the probe's run file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityProbe {
    /// What was varied.
    pub search: SearchKind,
    /// The SLO, in the syntax `--slo` reads.
    pub slo: String,
    /// The probe's place in the search, 1-based.
    pub index: u32,
    /// The load this probe ran at ([`SearchKind::unit`]).
    pub load: f64,
    /// Which probe at this load it was, 1-based (loads near the SLO's limit are probed
    /// more than once).
    pub repetition: u32,
    /// The SLO's worst ratio in this probe: the largest observed / limit over its
    /// conditions (for `goodput>=G`: the share of requests missing the per-request limits
    /// over `1 − G`); at most 1 when the SLO held.
    pub worst_ratio: f64,
    /// Whether the SLO held in this probe (`worst_ratio <= 1`).
    pub held: bool,
}
