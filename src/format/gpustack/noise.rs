//! GPUStack's conclusion cells and summary sentences with the noise verdict beside the
//! point values, when a [`NoisyComparison`] knows it: `Total TPS: 10570.88 (+9.75%)
//! [±1.65%, better] Mean TPOT(ms): 24.71 [-4.56% ±0.80%, better]`. Without noise
//! information the seed's own forms ([`ConclusionRow::text`], [`SpeedSummary::text`]) are
//! unchanged.

use super::fmt2;
use crate::compare::gpustack::{ConclusionRow, SpeedSummary};
use crate::compare::{Metric, MEAN_TPOT, TOTAL_TOKEN_THROUGHPUT};
use crate::format::comparison::signed_percent;
use crate::noise::verdict::{NoiseVerdict, NoisyComparison};

/// `[±1.65%, better]` for throughput (its change is already printed), `[-4.56% ±0.80%,
/// better]` otherwise; `None` without an interval.
fn bracket(noise: &NoisyComparison, metric: &Metric, with_change: bool) -> Option<String> {
    let d = noise.metric(metric)?;
    if d.verdict == NoiseVerdict::Unknown {
        return None;
    }
    let (lo, hi) = d.percent_interval()?;
    let half = format!("±{:.2}%", (hi - lo) / 2.0);
    Some(match (with_change, d.delta.percent()) {
        (true, Some(p)) => format!("[{} {half}, {}]", signed_percent(p), d.outcome.as_str()),
        _ => format!("[{half}, {}]", d.outcome.as_str()),
    })
}

/// The optimized cell of `row` in plain text with the noise brackets.
///
/// ```
/// use servebench::compare::gpustack::conclusion_row;
/// use servebench::format::gpustack::noisy_cell_text;
/// use servebench::noise::{compare_repetitions, VerdictOptions};
/// use servebench::result::{BenchmarkResult, Summary};
/// let run = |tps: f64, tpot: f64| BenchmarkResult {
///     total_token_throughput_per_s: Some(tps),
///     tpot: Some(Summary { mean: Some(tpot), ..Default::default() }),
///     ..Default::default()
/// };
/// let base = [run(9600.0, 25.9), run(9650.0, 25.8), run(9640.0, 26.0)];
/// let cand = [run(10560.0, 24.7), run(10580.0, 24.8), run(10570.0, 24.6)];
/// let noise = compare_repetitions(&base, &cand, false, &VerdictOptions::default());
/// let row = conclusion_row("ShareGPT Profile", &base[0], &cand[0]);
/// let text = noisy_cell_text(&row, &noise);
/// assert!(text.starts_with("Total TPS: 10560.00 (+"), "{text}");
/// assert!(text.contains(", better] Mean TPOT(ms): 24.70 [-"), "{text}");
/// ```
pub fn noisy_cell_text(row: &ConclusionRow, noise: &NoisyComparison) -> String {
    let c = &row.optimized;
    let ann = c
        .annotation
        .map(|a| format!(" {}", a.text()))
        .unwrap_or_default();
    let tps = bracket(noise, &TOTAL_TOKEN_THROUGHPUT, c.annotation.is_none())
        .map(|b| format!(" {b}"))
        .unwrap_or_default();
    let tpot = bracket(noise, &MEAN_TPOT, true)
        .map(|b| format!(" {b}"))
        .unwrap_or_default();
    format!(
        "Total TPS: {}{ann}{tps} Mean TPOT(ms): {}{tpot}",
        fmt2(c.total_tps),
        fmt2(c.mean_tpot_ms)
    )
}

/// The row in plain text (tab-separated, as [`ConclusionRow::text`]) with the noise
/// brackets in the optimized cell.
pub fn noisy_row_text(row: &ConclusionRow, noise: &NoisyComparison) -> String {
    format!(
        "{}\t{}\t{}",
        row.case,
        row.baseline.text(),
        noisy_cell_text(row, noise)
    )
}

/// The markdown row with the noise brackets in the optimized cell (`<br>` between the two
/// figures, as GPUStack's generator writes).
pub fn noisy_row_markdown(row: &ConclusionRow, noise: &NoisyComparison) -> String {
    format!(
        "| **{}** | {} | {} |",
        row.case,
        row.baseline.markdown(),
        noisy_cell_text(row, noise).replace(" Mean TPOT(ms)", "<br>Mean TPOT(ms)")
    )
}

/// The summary sentence with what the noise says about its throughput gap: `… reduced by
/// 1.18 ms (4.56%). The throughput gap is beyond the noise (95% interval of the change
/// +8.10% to +11.40%).`; the plain sentence without noise information. `noise` compares
/// the slowest run (baseline) with the fastest (candidate).
///
/// ```
/// use servebench::compare::gpustack::speed_summary;
/// use servebench::format::gpustack::noisy_summary_text;
/// use servebench::noise::{compare_repetitions, compare_runs, VerdictOptions};
/// use servebench::BenchmarkResult;
/// let run = |tps: f64| BenchmarkResult { total_token_throughput_per_s: Some(tps), ..Default::default() };
/// let slow = [run(100.0), run(101.0), run(99.0)];
/// let fast = [run(100.5), run(102.0), run(99.5)];
/// let s = speed_summary(&[("A", &slow[0]), ("B", &fast[0])]).unwrap();
/// let noise = compare_repetitions(&slow, &fast, true, &VerdictOptions::default());
/// let text = noisy_summary_text(&s, &noise);
/// assert!(text.starts_with("Summary: B Total TPS = 100.50, A Total TPS = 100.00."), "{text}");
/// assert!(text.contains("The throughput gap is within the noise (95% interval of the change -"), "{text}");
/// let unknown = compare_runs(&slow[0], &fast[0], &VerdictOptions::default());
/// assert_eq!(noisy_summary_text(&s, &unknown), s.text());
/// ```
pub fn noisy_summary_text(summary: &SpeedSummary, noise: &NoisyComparison) -> String {
    let mut s = summary.text();
    let Some(d) = noise.metric(&TOTAL_TOKEN_THROUGHPUT) else {
        return s;
    };
    let Some((lo, hi)) = d.percent_interval() else {
        return s;
    };
    let conf = noise.options.confidence * 100.0;
    let verdict = match d.verdict {
        NoiseVerdict::WithinNoise => "within the noise",
        NoiseVerdict::Better | NoiseVerdict::Worse => "beyond the noise",
        NoiseVerdict::Unknown => return s,
    };
    s.push_str(&format!(
        " The throughput gap is {verdict} ({conf:.0}% interval of the change {} to {}).",
        signed_percent(lo),
        signed_percent(hi)
    ));
    s
}
