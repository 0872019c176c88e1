//! A Pareto front as a Markdown table: each run's coordinates with their intervals and
//! where it stands (`front`, `dominated within noise by …`, `dominated by …`).

use std::fmt::Write as _;

use crate::compare::pareto::{Axes, Dominance, Estimate, ParetoPoint};

/// `1234.5 [1200.1, 1268.9]`, or the value alone without an interval.
pub fn estimate(e: &Estimate) -> String {
    if e.interval {
        format!("{:.1} [{:.1}, {:.1}]", e.value, e.lo, e.hi)
    } else {
        format!("{:.1} (no interval)", e.value)
    }
}

/// Where a point stands, in words.
pub fn standing(d: &Dominance) -> String {
    match d {
        Dominance::Front => "front".into(),
        Dominance::DominatedWithinNoise { by } => format!("dominated within noise by {by}"),
        Dominance::Dominated { by } => format!("dominated by {by}"),
    }
}

/// The table of `points` on `axes`, with a heading line.
///
/// ```
/// use servebench::compare::pareto::{pareto_points, Axes, ParetoInput};
/// let r = servebench::BenchmarkResult {
///     output_throughput_per_s: Some(1000.0),
///     tpot: Some(servebench::Summary { mean: Some(20.0), ..Default::default() }),
///     ..Default::default()
/// };
/// let pts = pareto_points(&[ParetoInput { label: "a".into(), result: &r, gpus: 1 }], Axes::Interactivity);
/// let t = servebench::format::pareto::table(&pts, Axes::Interactivity);
/// assert!(t.contains("| a | 1000.0 (no interval) | 50.0 (no interval) | front |"), "{t}");
/// ```
pub fn table(points: &[ParetoPoint], axes: Axes) -> String {
    let mut out = String::new();
    let front = points
        .iter()
        .filter(|p| p.dominance == Dominance::Front)
        .count();
    let within = points
        .iter()
        .filter(|p| matches!(p.dominance, Dominance::DominatedWithinNoise { .. }))
        .count();
    let _ = writeln!(
        out,
        "Pareto front, output tok/s per GPU against {}: {front} of {} runs on the front, {within} dominated within noise.\n",
        axes.y_label(),
        points.len()
    );
    let _ = writeln!(
        out,
        "| Run | Output tok/s per GPU | {} | Standing |\n|---|---|---|---|",
        axes.y_label()
    );
    for p in points {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            p.label,
            estimate(&p.x),
            estimate(&p.y),
            standing(&p.dominance)
        );
    }
    out
}
