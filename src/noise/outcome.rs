//! The outcome of one decision "is the candidate better than the baseline?" with a minimum
//! effect: [`EffectOutcome`], shared by `compare` (one outcome per metric, controlled for
//! multiplicity, see [`crate::noise::verdict`]) and the studies (one per ladder step).
//!
//! The input is the interval of the **improvement** in percent of the baseline (positive =
//! better, whatever the metric's direction) at the level the decision is made at, and the
//! minimum effect `m ≥ 0` (percent):
//!
//! | interval of the improvement | outcome |
//! |---|---|
//! | lower bound > `m` | [`EffectOutcome::Better`] |
//! | lower bound > 0, not > `m` | [`EffectOutcome::BetterBelowMinEffect`] |
//! | contains 0 | [`EffectOutcome::WithinNoise`] |
//! | upper bound < 0, not < −`m` | [`EffectOutcome::WorseBelowMinEffect`] |
//! | upper bound < −`m` | [`EffectOutcome::Worse`] |
//! | no interval (noise unknown) | [`EffectOutcome::NoiseUnknown`]: only the sign is known |
//!
//! With `m = 0` the two "below the minimum effect" outcomes cannot occur.
//!
//! ```
//! use servebench::noise::EffectOutcome;
//! assert_eq!(EffectOutcome::from_improvement(2.0, 4.0, 1.0), EffectOutcome::Better);
//! assert_eq!(EffectOutcome::from_improvement(0.2, 1.8, 1.0), EffectOutcome::BetterBelowMinEffect);
//! assert_eq!(EffectOutcome::from_improvement(-0.5, 1.8, 1.0), EffectOutcome::WithinNoise);
//! assert_eq!(EffectOutcome::from_improvement(-3.0, -1.5, 1.0), EffectOutcome::Worse);
//! assert!(EffectOutcome::Better.is_better() && !EffectOutcome::BetterBelowMinEffect.is_better());
//! ```

use serde::Serialize;

use crate::compare::Direction;

/// The outcome of a noise-aware decision with a minimum effect (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectOutcome {
    /// Better, beyond the noise and by more than the minimum effect.
    Better,
    /// Better beyond the noise, but not by more than the minimum effect at the stated
    /// confidence.
    BetterBelowMinEffect,
    /// The interval contains no change: the data cannot tell.
    WithinNoise,
    /// Worse beyond the noise, but not by more than the minimum effect.
    WorseBelowMinEffect,
    /// Worse, beyond the noise and by more than the minimum effect.
    Worse,
    /// No interval: the noise is unknown, only the sign of the change is.
    NoiseUnknown,
}

impl EffectOutcome {
    /// The outcome of an improvement interval `[lo, hi]` (percent of the baseline, positive
    /// = better) against the minimum effect `min_effect_percent` (≥ 0; negative counts as 0).
    /// A non-finite bound gives [`EffectOutcome::NoiseUnknown`].
    pub fn from_improvement(lo: f64, hi: f64, min_effect_percent: f64) -> EffectOutcome {
        if !(lo.is_finite() && hi.is_finite()) {
            return EffectOutcome::NoiseUnknown;
        }
        let m = min_effect_percent.max(0.0);
        if lo > 0.0 {
            if lo > m {
                EffectOutcome::Better
            } else {
                EffectOutcome::BetterBelowMinEffect
            }
        } else if hi < 0.0 {
            if hi < -m {
                EffectOutcome::Worse
            } else {
                EffectOutcome::WorseBelowMinEffect
            }
        } else {
            EffectOutcome::WithinNoise
        }
    }

    /// The outcome of an interval of the **change** `candidate − base` in percent of the
    /// baseline, for a metric improving in `direction`.
    ///
    /// ```
    /// use servebench::compare::Direction;
    /// use servebench::noise::EffectOutcome;
    /// // A latency 3–5 % lower is better.
    /// assert_eq!(EffectOutcome::from_change(-5.0, -3.0, Direction::LowerIsBetter, 1.0), EffectOutcome::Better);
    /// ```
    pub fn from_change(
        lo: f64,
        hi: f64,
        direction: Direction,
        min_effect_percent: f64,
    ) -> EffectOutcome {
        match direction {
            Direction::HigherIsBetter => {
                EffectOutcome::from_improvement(lo, hi, min_effect_percent)
            }
            Direction::LowerIsBetter => {
                EffectOutcome::from_improvement(-hi, -lo, min_effect_percent)
            }
        }
    }

    /// `better`, `better but below the minimum effect`, `within noise`, `worse but below
    /// the minimum effect`, `worse`, `noise unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            EffectOutcome::Better => "better",
            EffectOutcome::BetterBelowMinEffect => "better but below the minimum effect",
            EffectOutcome::WithinNoise => "within noise",
            EffectOutcome::WorseBelowMinEffect => "worse but below the minimum effect",
            EffectOutcome::Worse => "worse",
            EffectOutcome::NoiseUnknown => "noise unknown",
        }
    }

    /// A short form for narrow table cells: `better`, `better < min`, `within noise`,
    /// `worse < min`, `worse`, `noise unknown`.
    pub fn short(self) -> &'static str {
        match self {
            EffectOutcome::BetterBelowMinEffect => "better < min",
            EffectOutcome::WorseBelowMinEffect => "worse < min",
            o => o.as_str(),
        }
    }

    /// Only [`EffectOutcome::Better`]: better beyond the noise and the minimum effect (a step
    /// worth keeping).
    pub fn is_better(self) -> bool {
        self == EffectOutcome::Better
    }

    /// Whether the change is beyond the noise (either way, below the minimum effect or not).
    pub fn is_different(self) -> bool {
        !matches!(
            self,
            EffectOutcome::WithinNoise | EffectOutcome::NoiseUnknown
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_region_of_the_interval_has_its_outcome() {
        let m = 1.0;
        let cases = [
            ((1.5, 3.0), EffectOutcome::Better),
            ((1.0, 3.0), EffectOutcome::BetterBelowMinEffect),
            ((0.01, 0.5), EffectOutcome::BetterBelowMinEffect),
            ((0.0, 0.5), EffectOutcome::WithinNoise),
            ((-0.5, 0.5), EffectOutcome::WithinNoise),
            ((-0.5, -0.01), EffectOutcome::WorseBelowMinEffect),
            ((-3.0, -1.0), EffectOutcome::WorseBelowMinEffect),
            ((-3.0, -1.01), EffectOutcome::Worse),
            ((f64::NAN, 1.0), EffectOutcome::NoiseUnknown),
        ];
        for ((lo, hi), want) in cases {
            assert_eq!(
                EffectOutcome::from_improvement(lo, hi, m),
                want,
                "[{lo}, {hi}]"
            );
        }
        // Without a minimum effect, significance alone decides.
        assert_eq!(
            EffectOutcome::from_improvement(0.01, 0.5, 0.0),
            EffectOutcome::Better
        );
        assert_eq!(
            EffectOutcome::from_improvement(-0.5, -0.01, 0.0),
            EffectOutcome::Worse
        );
        // Lower is better: the change's interval is mirrored.
        assert_eq!(
            EffectOutcome::from_change(0.2, 0.5, Direction::LowerIsBetter, 1.0),
            EffectOutcome::WorseBelowMinEffect
        );
    }
}
