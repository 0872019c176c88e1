//! How the study document words one decision: the call, its figures, and what it rests on.

/// A decision as the study document words it.
impl crate::study::verdict::Decision {
    /// The call with its figures: `better (+3.21%, 95% interval +2.10% to +4.32%, n = 4
    /// vs 4, repetitions)`, `better but below the minimum effect (+0.61%, exact,
    /// deterministic simulation)`.
    pub fn text(&self) -> String {
        use crate::study::verdict::{confidence_label, Call, DETERMINISTIC};
        let pct = |v: f64| match self.ratio() {
            Some(k) => format!("{:+.2}%", 100.0 * v * k),
            None => format!("{v:+.2}"),
        };
        let what = match self.percent {
            Some(p) => format!("{p:+.2}%"),
            None => pct(self.difference),
        };
        let n = format!("n = {} vs {}", self.n_reference, self.n_candidate);
        let body = match (self.basis.as_str(), self.interval, self.confidence) {
            (DETERMINISTIC, _, _) => format!("{what}, exact: {DETERMINISTIC}, {n}"),
            (_, Some((lo, hi)), Some(c)) => format!(
                "{what}, {} interval {} to {}, {n}, {}",
                confidence_label(c),
                pct(lo),
                pct(hi),
                self.basis
            ),
            _ => format!("{what}, single runs without intervals, {n}"),
        };
        let call = if self.basis == DETERMINISTIC && self.call == Call::WithinNoise {
            // Exactly equal: there is no noise to be within.
            "no difference"
        } else {
            self.call.as_str()
        };
        format!("{call} ({body})")
    }

    /// 1 / |reference mean|, from the stored percent.
    fn ratio(&self) -> Option<f64> {
        let p = self.percent?;
        (self.difference != 0.0 && p.is_finite()).then(|| p / 100.0 / self.difference)
    }
}
