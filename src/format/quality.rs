//! The words of `servebench quality`: a run's accuracy line and a paired comparison.

use crate::quality::paired::{Accuracy, PairedComparison};

/// `Accuracy: 80.15 % (1603 of 2000 items), 95 % interval 78.35–81.83 % (Wilson)`.
pub fn accuracy_line(a: &Accuracy) -> String {
    format!(
        "Accuracy: {:.2} % ({} of {} items), {:.0} % interval {:.2}–{:.2} % (Wilson)",
        100.0 * a.accuracy,
        a.right,
        a.items,
        100.0 * a.confidence,
        100.0 * a.lo,
        100.0 * a.hi
    )
}

/// The comparison's verdict with its figures and the non-inferiority answer.
pub fn comparison_lines(
    c: &PairedComparison,
    reference: &Accuracy,
    candidate: &Accuracy,
) -> Vec<String> {
    let conf = 100.0 * (1.0 - c.alpha);
    vec![
        format!(
            "Quality: candidate {:.2} % vs reference {:.2} % over {} items: {} ({:+.2} points, {conf:.0} % interval {:+.2} to {:+.2}; {} items lost, {} gained; McNemar's exact p {})",
            100.0 * candidate.accuracy,
            100.0 * reference.accuracy,
            c.items,
            c.call.as_str(),
            100.0 * c.difference,
            100.0 * c.interval.0,
            100.0 * c.interval.1,
            c.lost,
            c.gained,
            if c.p_value < 1e-4 {
                "< 0.0001".to_string()
            } else {
                format!("= {:.4}", c.p_value)
            }
        ),
        if c.non_inferior {
            format!(
                "Non-inferior at a {} point margin: the accuracy drop is at most {} points at {conf:.0} % (one-sided).",
                trim(c.margin_points),
                trim(c.margin_points)
            )
        } else {
            format!(
                "Not shown non-inferior at a {} point margin: a drop of more than {} points is not ruled out at {conf:.0} % (one-sided).",
                trim(c.margin_points),
                trim(c.margin_points)
            )
        },
    ]
}

/// `1`, `0.5`.
fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
