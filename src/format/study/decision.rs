//! How the study document words one decision: the call, its figures, what it rests on,
//! and the study's rule it applied.

use super::method::{confidence_label, rule_words};
use crate::study::plan::Analysis;
use crate::study::verdict::{Call, Decision, CAPACITY_INTERVALS, DETERMINISTIC, MODEL_ERROR};

/// A decision as the study document words it.
impl Decision {
    /// The call with its figures: `better (+3.21%, 95% interval +2.10% to +4.32%, n = 4
    /// vs 4, repetitions)`, `better but below the minimum effect (+0.61%, exact,
    /// deterministic simulation)`.
    pub fn text(&self) -> String {
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
            (MODEL_ERROR, _, _) if self.difference == 0.0 => {
                format!("{what}, a simulation without run-to-run noise, {n}")
            }
            (MODEL_ERROR, Some((lo, hi)), _) => format!(
                "{what}, {} to {} within the simulator's stated model error, {n}",
                pct(lo),
                pct(hi)
            ),
            (CAPACITY_INTERVALS, Some((lo, hi)), _) => format!(
                "{what}, the candidate's capacity interval less the reference's {} to {}, \
                 one search each",
                pct(lo),
                pct(hi)
            ),
            (_, Some((lo, hi)), Some(c)) => format!(
                "{what}, {} interval {} to {}, {n}, {}",
                confidence_label(c),
                pct(lo),
                pct(hi),
                self.basis
            ),
            _ => format!("{what}, single runs without intervals, {n}"),
        };
        let call = if (self.basis == DETERMINISTIC || self.basis == MODEL_ERROR)
            && self.call == Call::WithinNoise
            && self.difference == 0.0
        {
            // Exactly equal: there is no noise to be within.
            "no difference"
        } else if self.basis == MODEL_ERROR && self.call == Call::WithinNoise {
            "within model error"
        } else if self.basis == CAPACITY_INTERVALS && self.call == Call::WithinNoise {
            // Two searches' intervals overlap: on a deterministic simulation each interval
            // is the search's resolution, on a server also its noise.
            "intervals overlap"
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

/// `d` with the study's rule it applied in words in [`Decision::rule`] (a rule kept as data
/// until the document renders the decision).
pub(super) fn with_rule(mut d: Decision) -> Decision {
    if let Some(rule) = &d.study_rule {
        d.rule = rule_words(rule);
    }
    d
}

/// `a` with every decision's rule in words, as the document shows it and `study.json`
/// records it.
pub(super) fn with_rules(a: &Analysis) -> Analysis {
    let mut a = a.clone();
    for s in &mut a.steps {
        s.decision = s.decision.take().map(with_rule);
    }
    a
}
