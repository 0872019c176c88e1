//! A study's quality gate: with a `[quality]` section every configuration also answers an
//! eval set (after its runs, on the same server), and a ladder step is kept only when its
//! accuracy is shown non-inferior to its reference's at the margin (McNemar's exact test
//! and the paired difference's interval, [`crate::quality::paired`]).
//!
//! ```toml
//! [quality]
//! eval = "synthetic:500"   # or a JSON Lines file (servebench's, GSM8K's, MMLU's lines)
//! margin = 1.0             # accuracy points a kept step may lose, at 95 % (one-sided)
//! # The simulator engine has no answers of its own: each configuration's accuracy is
//! # staged — the baseline's, and each step's change in points.
//! sim_accuracy = { baseline = 0.80, "Quantization" = -0.5 }
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::quality::paired::{compare_runs, PairedComparison};

/// The accuracy the simulator engine's baseline answers at when the file names none.
pub const DEFAULT_SIM_ACCURACY: f64 = 0.8;

/// The `[quality]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QualitySpec {
    /// The eval set: `synthetic:N` or a JSON Lines file.
    pub eval: String,
    /// Accuracy points a kept step may lose (default 1).
    #[serde(default)]
    pub margin: Option<f64>,
    /// Most tokens per answer (default 32).
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// The simulator engine's staged accuracy: `baseline` (0–1), and per step name its
    /// change in accuracy points.
    #[serde(default)]
    pub sim_accuracy: BTreeMap<String, f64>,
}

impl QualitySpec {
    /// The margin in accuracy points.
    pub fn margin_points(&self) -> f64 {
        self.margin.unwrap_or(1.0)
    }

    /// Checks the section; `steps` are the ladder's step names.
    pub(super) fn check(&self, steps: &[&str]) -> Result<(), String> {
        crate::quality::eval::load(&self.eval).map_err(|e| format!("quality.eval: {e}"))?;
        if let Some(m) = self.margin.filter(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(format!(
                "quality.margin: must be a positive number of points, got {m}"
            ));
        }
        for (k, v) in &self.sim_accuracy {
            if k == "baseline" {
                if !(0.0..=1.0).contains(v) {
                    return Err(format!(
                        "quality.sim_accuracy.baseline: must be between 0 and 1, got {v}"
                    ));
                }
            } else if !steps.contains(&k.as_str()) {
                return Err(format!("quality.sim_accuracy.{k}: not a ladder step"));
            } else if !(v.is_finite() && v.abs() <= 100.0) {
                return Err(format!(
                    "quality.sim_accuracy.{k}: a change in points, got {v}"
                ));
            }
        }
        Ok(())
    }

    /// The staged accuracy on the simulator of a configuration built by the steps `chain`
    /// (the step that built it, the one it was built on, …, back to the baseline): the
    /// baseline's plus their changes.
    pub fn sim_accuracy_of(&self, chain: &[&str]) -> f64 {
        let base = self
            .sim_accuracy
            .get("baseline")
            .copied()
            .unwrap_or(DEFAULT_SIM_ACCURACY);
        let points: f64 = chain
            .iter()
            .map(|s| self.sim_accuracy.get(*s).copied().unwrap_or(0.0))
            .sum();
        (base + points / 100.0).clamp(0.0, 1.0)
    }
}

/// The quality comparison of a candidate's answers against its reference's, when both
/// answered the eval set; `None` otherwise.
pub fn quality_decision(
    spec: &QualitySpec,
    reference: Option<&Vec<bool>>,
    candidate: Option<&Vec<bool>>,
    alpha: f64,
) -> Option<PairedComparison> {
    compare_runs(reference?, candidate?, alpha, spec.margin_points()).ok()
}
