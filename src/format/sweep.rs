//! The rate table of a sweep (`bench --sweep N`, `report` of a sweep file): per run the
//! offered and achieved rate, output throughput, mean TTFT and TPOT, goodput and whether
//! the server kept up, then the saturation point.

use std::io::Write;

use crate::result::{Strategy, Summary, Sweep};

fn ms(s: Option<&Summary>) -> String {
    s.and_then(|s| s.mean)
        .map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// Writes `sweep`'s table: rate → achieved rate, output throughput, mean TTFT and TPOT,
/// goodput, whether the server kept up; then the saturation point.
///
/// # Errors
///
/// When `w` cannot be written.
pub fn write_table<W: Write>(sweep: &Sweep, mut w: W) -> std::io::Result<()> {
    writeln!(
        w,
        "{:<14} {:>10} {:>12} {:>14} {:>12} {:>12} {:>11} {:>8}",
        "strategy",
        "rate/s",
        "achieved/s",
        "output tok/s",
        "mean TTFT ms",
        "mean TPOT ms",
        "goodput/s",
        "kept up"
    )?;
    for r in &sweep.runs {
        let (name, rate) = match r.strategy {
            Strategy::Synchronous => ("synchronous", "-".to_string()),
            Strategy::Throughput => ("throughput", "-".to_string()),
            Strategy::Constant { rate } => ("constant", format!("{rate:.2}")),
        };
        let opt = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.2}"));
        writeln!(
            w,
            "{:<14} {:>10} {:>12.2} {:>14} {:>12} {:>12} {:>11} {:>8}",
            name,
            rate,
            r.achieved_rate_per_s,
            opt(r.result.output_throughput_per_s),
            ms(r.result.ttft.as_ref()),
            ms(r.result.tpot.as_ref()),
            opt(r.result.request_goodput_per_s),
            match (r.kept_up, &r.stopped_early) {
                (_, Some(_)) => "stopped",
                (Some(true), _) => "yes",
                (Some(false), _) => "no",
                (None, _) => "-",
            }
        )?;
    }
    match sweep.saturation_rate_per_s {
        Some(r) => writeln!(
            w,
            "saturation: {r:.2} requests/s (the highest constant rate the server kept up with)"
        ),
        None => writeln!(w, "saturation: none of the constant rates was kept up with"),
    }
}
