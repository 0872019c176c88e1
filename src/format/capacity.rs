//! The text of a capacity search under an SLO: one line per probe (load, worst ratio,
//! each condition's observed value), each load's judgement, and the conclusion
//! ("holds 12.40 req/s [11.80, 13.00] under ttft:p99<=500ms"), with what the interval means.

use std::fmt::Write as _;

use crate::capacity::{JudgedLoad, LoadVerdict, ProbeRecord, SloCheck};
use crate::result::{BenchmarkResult, CapacityEstimate, SearchKind};

/// A load in its kind's precision (`12.40` req/s, `24` concurrent requests).
pub fn load(kind: SearchKind, x: f64) -> String {
    match kind {
        SearchKind::Rate => format!("{x:.2}"),
        SearchKind::Concurrency => format!("{x:.0}"),
    }
}

/// `holds 12.40 req/s [11.80, 13.00]` (or at least the maximum, or not at the minimum).
pub fn capacity_cell(e: &CapacityEstimate) -> String {
    let f = |x: f64| load(e.search, x);
    let unit = e.search.unit();
    let mut s = match (e.estimate, e.lower, e.upper) {
        (Some(x), Some(lo), Some(hi)) => format!("holds {} {unit} [{}, {}]", f(x), f(lo), f(hi)),
        (_, Some(lo), None) => format!("holds at least {} {unit} (the search's maximum)", f(lo)),
        (_, None, Some(hi)) => format!("does not hold at {} {unit}", f(hi)),
        (Some(x), None, None) => format!("about {} {unit} (no load judged to hold or fail)", f(x)),
        (None, _, _) => "not found (no load judged to hold or fail)".to_string(),
    };
    if !e.converged {
        s.push_str(", probe budget spent before the resolution");
    }
    s
}

/// The conclusion line: the cell, the SLO, the probe count.
pub fn conclusion(e: &CapacityEstimate) -> String {
    format!(
        "capacity: {} under {} ({} probes)",
        capacity_cell(e),
        e.slo,
        e.probes
    )
}

/// One condition's observed value as the probe table prints it: ms for a latency, a share
/// for goodput, a percentage of the offered rate for the sustained load.
fn observed(c: &crate::capacity::ConditionCheck) -> String {
    match c.observed {
        Some(v) if c.condition == crate::capacity::SUSTAINED_CONDITION => {
            format!("{:.1} %", v * 100.0)
        }
        Some(v) if c.condition.starts_with("goodput") => format!("{v:.4}"),
        Some(v) => format!("{v:.1} ms"),
        None => "-".into(),
    }
}

/// A probe's judgement in one line: `held: ttft:p99<=2000ms 812.4 ms (0.41), sustained 99.2 %
/// of the offered rate (0.96)`; a probe that did not carry its load says so first.
pub fn probe_summary(check: &SloCheck) -> String {
    let mut parts = Vec::new();
    for c in &check.conditions {
        if c.condition == crate::capacity::SUSTAINED_CONDITION {
            parts.push(format!(
                "completed {} of the offered rate over the steady window (at least 95 % to hold) ({:.2})",
                observed(c),
                c.ratio
            ));
        } else {
            parts.push(format!("{} {} ({:.2})", c.condition, observed(c), c.ratio));
        }
    }
    format!(
        "{}: {}",
        if check.held { "held" } else { "did not hold" },
        parts.join(", ")
    )
}

/// What the interval `[L, U]` means, in one paragraph.
pub const INTERVAL_MEANING: &str = "The interval [L, U]: L is the highest load judged to \
hold the SLO and U the lowest judged to fail it. A load is judged by one probe when its worst \
ratio (observed / limit) is clear of 1 by the noise band, else by up to R probes until the 95 % \
t-interval of their mean log ratio excludes 0 (a load where it never does stays inside the \
interval). The estimate is where the mean log ratio crosses 0, interpolated between \
neighbouring loads. A rate probe holds only if it also carried its load: over its steady window (the sending time less its first 20 %) the requests completed, one median latency later, are at least 95 % of those sent (`sustained>=0.95`, achieved / offered).";

fn verdict(v: LoadVerdict) -> &'static str {
    match v {
        LoadVerdict::Holds => "holds",
        LoadVerdict::Fails => "fails",
        LoadVerdict::Uncertain => "uncertain",
    }
}

/// The whole search as text: the probe table, the loads' judgements, the conclusion and,
/// for comparison, what a fixed grid at the same resolution would have cost.
pub fn render(
    e: &CapacityEstimate,
    probes: &[(ProbeRecord, SloCheck)],
    loads: &[JudgedLoad],
    grid_probes: usize,
) -> String {
    let mut w = String::new();
    let unit = match e.search {
        SearchKind::Rate => "rate/s",
        SearchKind::Concurrency => "concurrency",
    };
    let names: Vec<String> = probes
        .first()
        .map(|(_, c)| c.conditions.iter().map(|c| c.condition.clone()).collect())
        .unwrap_or_default();
    let _ = write!(
        w,
        "{:>5} {:>12} {:>4} {:>8} {:>5}",
        "probe", unit, "rep", "worst", "held"
    );
    for n in &names {
        let _ = write!(w, " {n:>22}");
    }
    w.push('\n');
    for (p, c) in probes {
        let _ = write!(
            w,
            "{:>5} {:>12} {:>4} {:>8.3} {:>5}",
            p.index,
            load(e.search, p.load),
            p.repetition,
            p.worst_ratio,
            if c.held { "yes" } else { "no" }
        );
        for k in &c.conditions {
            let _ = write!(w, " {:>22}", format!("{} ({:.2})", observed(k), k.ratio));
        }
        w.push('\n');
    }
    w.push('\n');
    let _ = writeln!(
        w,
        "{:>12} {:>6} {:>14} {:>10}",
        unit, "probes", "mean log ratio", "judged"
    );
    for l in loads {
        let _ = writeln!(
            w,
            "{:>12} {:>6} {:>14.3} {:>10}",
            load(e.search, l.load),
            l.worst_ratios.len(),
            l.mean_log_ratio,
            verdict(l.verdict)
        );
    }
    w.push('\n');
    let _ = writeln!(w, "{}", conclusion(e));
    let _ = writeln!(
        w,
        "{} probes at {} loads; a fixed grid at the same resolution ({}) takes {grid_probes}",
        e.probes,
        loads.len(),
        load(e.search, e.resolution).trim_end_matches(".00")
    );
    w
}

/// A result's capacity cell ([`capacity_cell`]), or why it has none.
pub fn capacity_cell_of(r: &BenchmarkResult) -> String {
    r.capacity
        .as_ref()
        .map_or_else(|| "no capacity search".to_string(), capacity_cell)
}

/// A markdown table of capacities: `| NAME | Capacity under the SLO |` per `(name, result)`.
pub fn capacity_table_markdown(first: &str, rows: &[(&str, &BenchmarkResult)]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let mut w = format!("| {first} | Capacity under the SLO |\n| --- | --- |\n");
    for (name, r) in rows {
        let _ = writeln!(w, "| {name} | {} |", capacity_cell_of(r));
    }
    Some(w.trim_end().to_string())
}

/// The conclusion table of a capacity study: per benchmark case, the baseline's and the
/// optimized configuration's capacity with their intervals.
pub fn capacity_conclusion_markdown(
    rows: &[(String, &BenchmarkResult, &BenchmarkResult)],
) -> String {
    let mut w = String::from(
        "| Benchmark Case | Baseline capacity | Optimized capacity |\n| --- | --- | --- |\n",
    );
    for (case, b, r) in rows {
        let _ = writeln!(
            w,
            "| {case} | {} | {} |",
            capacity_cell_of(b),
            capacity_cell_of(r)
        );
    }
    w
}

/// The document's note on how a capacity study measures and decides.
pub fn capacity_study_note(slo: &str, kind: SearchKind) -> String {
    let what = match kind {
        SearchKind::Rate => "request rate (constant arrivals)",
        SearchKind::Concurrency => "concurrency (every request at once, under a cap)",
    };
    format!(
        "Every run is a capacity search: the highest {what} at which the SLO `{slo}` holds, \
         written \"holds X [L, U]\" ({}), every probe kept as a run file. The ladder keeps a \
         step when its capacity interval lies wholly above the best configuration's so far \
         (with repetitions: the 95% interval of the difference of their mean capacities).",
        SearchKind::unit(kind)
    ) + " "
        + INTERVAL_MEANING
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(estimate: Option<f64>, lower: Option<f64>, upper: Option<f64>) -> CapacityEstimate {
        CapacityEstimate {
            search: SearchKind::Rate,
            slo: "ttft:p99<=500ms".into(),
            estimate,
            lower,
            upper,
            resolution: 0.5,
            probes: 9,
            converged: true,
        }
    }

    #[test]
    fn the_cell_says_the_interval_or_which_end_was_reached() {
        assert_eq!(
            capacity_cell(&est(Some(12.4), Some(11.8), Some(13.0))),
            "holds 12.40 req/s [11.80, 13.00]"
        );
        assert_eq!(
            capacity_cell(&est(Some(40.0), Some(40.0), None)),
            "holds at least 40.00 req/s (the search's maximum)"
        );
        assert_eq!(
            capacity_cell(&est(None, None, Some(1.0))),
            "does not hold at 1.00 req/s"
        );
        assert_eq!(
            conclusion(&est(Some(12.4), Some(11.8), Some(13.0))),
            "capacity: holds 12.40 req/s [11.80, 13.00] under ttft:p99<=500ms (9 probes)"
        );
    }
}
