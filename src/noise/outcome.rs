//! The outcome of one decision "is the candidate better than the baseline?" with a minimum
//! effect: [`EffectOutcome`], the one verdict type of `compare` (one outcome per metric,
//! controlled for multiplicity, see [`crate::noise::verdict`]), of the studies and of
//! `servebench ab` (one per ladder step or A/B comparison, see [`crate::noise::sequential`]).
//!
//! The input is the interval of the **improvement** (the gain: positive = better, whatever
//! the metric's direction) at the level the decision is made at, and the minimum effect
//! `m ≥ 0` in the same unit (percent of the baseline for `compare`, the metric's unit for a
//! study). What the decision asks ([`Question`]) sets how `m` applies; the rule lives in one
//! place, [`EffectOutcome::of_gain`]:
//!
//! | interval of the improvement | [`Question::Change`] (`compare`) | [`Question::Keep`] (a study's final look, `ab`) |
//! |---|---|---|
//! | lower bound > `m` | [`EffectOutcome::Better`] | [`EffectOutcome::Better`] (kept) |
//! | lower bound > 0, not > `m` | [`EffectOutcome::BetterBelowMinEffect`] | [`EffectOutcome::BetterBelowMinEffect`] |
//! | contains 0 | [`EffectOutcome::WithinNoise`] | [`EffectOutcome::WithinNoise`] |
//! | upper bound < 0, not < −`m` | [`EffectOutcome::WorseBelowMinEffect`] | [`EffectOutcome::Worse`] |
//! | upper bound < −`m` | [`EffectOutcome::Worse`] | [`EffectOutcome::Worse`] |
//! | no interval (noise unknown) | [`EffectOutcome::NoiseUnknown`]: only the sign is known | [`EffectOutcome::NoiseUnknown`] |
//!
//! `compare` asks whether a metric moved by more than the minimum effect either way, so the
//! minimum effect applies to both sides. A study (or `ab`) asks only whether the candidate is
//! worth keeping: the minimum effect guards the keep side, and a regression sure beyond the
//! noise is `worse` whatever its size. [`Question::KeepOrContinue`] is a sequential look
//! with repetitions left: an interval not above `m` that still reaches `m` is
//! [`EffectOutcome::Undecided`] (run another pair).
//!
//! With `m = 0` the two "below the minimum effect" outcomes cannot occur.
//!
//! ```
//! use servebench::noise::{EffectOutcome, Question};
//! assert_eq!(EffectOutcome::from_improvement(2.0, 4.0, 1.0), EffectOutcome::Better);
//! assert_eq!(EffectOutcome::from_improvement(0.2, 1.8, 1.0), EffectOutcome::BetterBelowMinEffect);
//! assert_eq!(EffectOutcome::from_improvement(-0.5, 1.8, 1.0), EffectOutcome::WithinNoise);
//! assert_eq!(EffectOutcome::from_improvement(-3.0, -1.5, 1.0), EffectOutcome::Worse);
//! assert!(EffectOutcome::Better.is_better() && !EffectOutcome::BetterBelowMinEffect.is_better());
//! // Keeping asks less of a regression, and a look with budget left may wait.
//! assert_eq!(EffectOutcome::of_gain(-0.5, -0.1, 1.0, Question::Keep), EffectOutcome::Worse);
//! assert_eq!(EffectOutcome::of_gain(0.5, 1.5, 1.0, Question::KeepOrContinue), EffectOutcome::Undecided);
//! ```

use serde::{Deserialize, Serialize};

use crate::compare::Direction;

/// What a decision asks, which sets how the minimum effect applies (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Question {
    /// Did the metric change, by more than the minimum effect, either way? (`compare`)
    Change,
    /// Is the candidate worth keeping, better by more than the minimum effect? A regression
    /// beyond the noise is worse whatever its size. (A study's decision, `ab`.)
    Keep,
    /// [`Question::Keep`] at a sequential look with repetitions left: an interval not above
    /// the minimum effect that still reaches it is [`EffectOutcome::Undecided`].
    KeepOrContinue,
}

/// The outcome of a noise-aware decision with a minimum effect (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectOutcome {
    /// Better, beyond the noise and by more than the minimum effect (a study keeps it).
    Better,
    /// Better beyond the noise, but not by more than the minimum effect at the stated
    /// confidence.
    #[serde(alias = "below-minimum-effect")]
    BetterBelowMinEffect,
    /// The interval contains no change: the data cannot tell.
    WithinNoise,
    /// Worse beyond the noise, but not by more than the minimum effect.
    WorseBelowMinEffect,
    /// Worse, beyond the noise and by more than the minimum effect.
    Worse,
    /// No interval: the noise is unknown, only the sign of the change is.
    NoiseUnknown,
    /// Not decided yet: a sequential look with repetitions left wants another pair
    /// ([`Question::KeepOrContinue`]).
    #[serde(alias = "continue")]
    Undecided,
}

impl EffectOutcome {
    /// The one rule (see the module docs): the outcome of an improvement interval
    /// `[lo, hi]` (positive = better) against the minimum effect `min_effect` (same unit,
    /// ≥ 0; negative counts as 0) for the decision `question`. A non-finite bound gives
    /// [`EffectOutcome::NoiseUnknown`].
    pub fn of_gain(lo: f64, hi: f64, min_effect: f64, question: Question) -> EffectOutcome {
        if !(lo.is_finite() && hi.is_finite()) {
            return EffectOutcome::NoiseUnknown;
        }
        let m = min_effect.max(0.0);
        if lo > m {
            return EffectOutcome::Better;
        }
        if question == Question::KeepOrContinue && hi >= m {
            return EffectOutcome::Undecided;
        }
        // Only `compare` asks a regression to exceed the minimum effect too.
        let worse_by = if question == Question::Change { m } else { 0.0 };
        if lo > 0.0 {
            EffectOutcome::BetterBelowMinEffect
        } else if hi < 0.0 {
            if hi < -worse_by {
                EffectOutcome::Worse
            } else {
                EffectOutcome::WorseBelowMinEffect
            }
        } else {
            EffectOutcome::WithinNoise
        }
    }

    /// [`EffectOutcome::of_gain`] for an interval of the **change** `candidate − base`
    /// (not signed by direction) of a metric improving in `direction`.
    pub fn of_change(
        lo: f64,
        hi: f64,
        direction: Direction,
        min_effect: f64,
        question: Question,
    ) -> EffectOutcome {
        match direction {
            Direction::HigherIsBetter => EffectOutcome::of_gain(lo, hi, min_effect, question),
            Direction::LowerIsBetter => EffectOutcome::of_gain(-hi, -lo, min_effect, question),
        }
    }

    /// `compare`'s outcome ([`Question::Change`]) of an improvement interval `[lo, hi]`
    /// (percent of the baseline, positive = better) against the minimum effect
    /// `min_effect_percent` (≥ 0; negative counts as 0). A non-finite bound gives
    /// [`EffectOutcome::NoiseUnknown`].
    pub fn from_improvement(lo: f64, hi: f64, min_effect_percent: f64) -> EffectOutcome {
        EffectOutcome::of_gain(lo, hi, min_effect_percent, Question::Change)
    }

    /// `compare`'s outcome ([`Question::Change`]) of an interval of the **change**
    /// `candidate − base` in percent of the baseline, for a metric improving in `direction`.
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
        EffectOutcome::of_change(lo, hi, direction, min_effect_percent, Question::Change)
    }

    /// `better`, `better but below the minimum effect`, `within noise`, `worse but below
    /// the minimum effect`, `worse`, `noise unknown`, `undecided`.
    pub fn as_str(self) -> &'static str {
        match self {
            EffectOutcome::Better => "better",
            EffectOutcome::BetterBelowMinEffect => "better but below the minimum effect",
            EffectOutcome::WithinNoise => "within noise",
            EffectOutcome::WorseBelowMinEffect => "worse but below the minimum effect",
            EffectOutcome::Worse => "worse",
            EffectOutcome::NoiseUnknown => "noise unknown",
            EffectOutcome::Undecided => "undecided",
        }
    }

    /// A short form for narrow table cells: `better`, `better < min`, `within noise`,
    /// `worse < min`, `worse`, `noise unknown`, `undecided`.
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

    /// Whether the change is beyond the noise (either way, below the minimum effect or not;
    /// not when within noise, noise unknown or undecided).
    pub fn is_different(self) -> bool {
        !matches!(
            self,
            EffectOutcome::WithinNoise | EffectOutcome::NoiseUnknown | EffectOutcome::Undecided
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
