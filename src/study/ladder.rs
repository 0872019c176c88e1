//! The optimization ladder of a study file and the rule that keeps a step across the
//! ladder's profiles.
//!
//! A step is judged on its **target profile** (the first of `ladder.profiles`) by the
//! study's decision rule ([`super::verdict`]). Under [`LadderRule::AllProfiles`] (the
//! default) it must also be shown **not worse than a tolerance** on every other ladder
//! profile: the interval of its change there — repetitions, within-run intervals or the
//! simulator's stated model error — must lie above `−tolerance` percent of the reference
//! (a non-inferiority test). Keeping a step is then an intersection–union test: each part
//! is tested at the study's error rate α and the step is kept only when every part passes,
//! so the chance of keeping a step that is not better on the target, or that loses more
//! than the tolerance on another profile, stays at most α with no multiplicity correction
//! (Berger, "Multiparameter hypothesis testing and acceptance sampling", Technometrics
//! 24(4), 1982). [`LadderRule::Target`] is the source study's method: the target profile
//! alone decides, and the document says what the recommendation trades away elsewhere.

use serde::{Deserialize, Serialize};

use super::verdict::Decision;

/// The most a kept step may lose on another ladder profile under
/// [`LadderRule::AllProfiles`], percent of the reference, when the study file sets none.
pub const DEFAULT_TOLERANCE_PERCENT: f64 = 2.0;

/// The optimization ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderSpec {
    /// Profiles the engine selection and every step run (the seed: `["sharegpt"]`); the
    /// first is the target profile.
    pub profiles: Vec<String>,
    /// The steps, in order.
    #[serde(default)]
    pub steps: Vec<StepSpec>,
    /// How the profiles decide a step.
    #[serde(default)]
    pub rule: LadderRule,
    /// [`LadderRule::AllProfiles`]: the most a kept step may lose on another profile,
    /// percent of the reference (default [`DEFAULT_TOLERANCE_PERCENT`]).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// [`LadderRule::Weighted`]: each profile's weight (a profile not named weighs 1).
    #[serde(default)]
    pub weights: std::collections::BTreeMap<String, f64>,
}

/// How a ladder's profiles decide a step (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LadderRule {
    /// Better on the target profile and not worse than the tolerance on any other.
    #[default]
    AllProfiles,
    /// The target profile alone decides.
    Target,
    /// The weighted mean of the step's percent changes over the profiles decides: kept
    /// when its interval lies above the minimum effect (each profile's interval at α/k,
    /// Bonferroni, so the weighted interval covers at 1 − α).
    Weighted,
}

/// One optimization step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// The step's name in the document (`Prefix Cache && Quantization`).
    pub name: String,
    /// The configuration it starts from: `best` (the best so far, default), `baseline` or
    /// an earlier step's name.
    #[serde(default)]
    pub on: Option<String>,
    /// Serve this model instead (`Qwen/Qwen3.5-35B-A3B-FP8`).
    #[serde(default)]
    pub model: Option<String>,
    /// Flags added (a flag with the same key, the text before `=`, is replaced).
    #[serde(default)]
    pub add: Vec<String>,
    /// Flag keys removed (`--enable-prefix-caching`).
    #[serde(default)]
    pub remove: Vec<String>,
    /// What is known about the step from elsewhere (a source study's measurement of it):
    /// the document says it beside the step, and in the conclusion when the step is kept.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl LadderSpec {
    /// The tolerance in percent of the reference.
    pub fn tolerance_percent(&self) -> f64 {
        self.tolerance.unwrap_or(DEFAULT_TOLERANCE_PERCENT)
    }

    /// A profile's weight under [`LadderRule::Weighted`] (1 unless the file says).
    pub fn weight(&self, profile: &str) -> f64 {
        self.weights.get(profile).copied().unwrap_or(1.0)
    }

    /// Whether profiles besides the target guard a step.
    pub fn guarded(&self) -> bool {
        self.rule == LadderRule::AllProfiles && self.profiles.len() > 1
    }

    /// Checks what the study file cannot check by its types alone.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.profiles.is_empty() {
            return Err("ladder.profiles: at least one profile is needed".into());
        }
        if let Some(t) = self.tolerance {
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!(
                    "ladder.tolerance: must be a percentage >= 0, got {t}"
                ));
            }
            if self.rule != LadderRule::AllProfiles {
                return Err("ladder.tolerance: needs rule = \"all-profiles\"".into());
            }
        }
        if !self.weights.is_empty() && self.rule != LadderRule::Weighted {
            return Err("ladder.weights: needs rule = \"weighted\"".into());
        }
        for (p, w) in &self.weights {
            if !self.profiles.contains(p) {
                return Err(format!("ladder.weights.{p}: not a ladder profile"));
            }
            if !(w.is_finite() && *w > 0.0) {
                return Err(format!(
                    "ladder.weights.{p}: must be a positive number, got {w}"
                ));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, p) in self.profiles.iter().enumerate() {
            if !seen.insert(p) {
                return Err(format!("ladder.profiles[{i}]: `{p}` is listed twice"));
            }
        }
        Ok(())
    }
}

/// A step's verdict on one ladder profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileVerdict {
    /// The profile.
    pub profile: String,
    /// Whether it is the target profile (else a guard).
    pub target: bool,
    /// The decision rule's answer on this profile.
    pub decision: Option<Decision>,
    /// The worst change the decision's interval allows, percent of the reference, signed
    /// so that a loss is negative (the exact difference where there is no interval).
    pub worst_percent: Option<f64>,
    /// Target: better by the minimum effect. Guard: `worst_percent >= −tolerance`.
    pub holds: bool,
}

impl ProfileVerdict {
    /// A guard profile's verdict: whether the decision shows the step losing no more than
    /// `tolerance_percent` of `reference_mean` (a decision without interval or exact
    /// difference shows nothing, so it does not hold).
    pub fn guard(
        profile: &str,
        decision: Option<Decision>,
        reference_mean: f64,
        tolerance_percent: f64,
        higher_is_better: bool,
    ) -> ProfileVerdict {
        let worst_percent = decision.as_ref().and_then(|d| {
            let worst = match (d.interval, d.basis.as_str()) {
                (Some((lo, hi)), _) => {
                    if higher_is_better {
                        lo
                    } else {
                        -hi
                    }
                }
                (None, super::verdict::DETERMINISTIC) => {
                    if higher_is_better {
                        d.difference
                    } else {
                        -d.difference
                    }
                }
                (None, _) => return None,
            };
            (reference_mean != 0.0 && reference_mean.is_finite())
                .then(|| 100.0 * worst / reference_mean.abs())
        });
        ProfileVerdict {
            profile: profile.to_string(),
            target: false,
            holds: worst_percent.is_some_and(|w| w >= -tolerance_percent),
            decision,
            worst_percent,
        }
    }
}

/// A step's weighted change over the ladder's profiles ([`LadderRule::Weighted`]), as a
/// gain: positive is better whatever the metric's direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeightedChange {
    /// The weighted mean gain, percent of each profile's reference.
    pub percent: f64,
    /// Its interval (each profile's interval at α/k); `None` when a profile has none.
    pub interval: Option<(f64, f64)>,
    /// Whether the interval lies above the minimum effect.
    pub holds: bool,
}

/// The weighted gain of `parts` — `(weight, decision, reference mean)` per profile — held
/// against `min_effect_percent`.
pub fn weighted_change(
    parts: &[(f64, Option<&Decision>, f64)],
    min_effect_percent: f64,
    higher_is_better: bool,
) -> Option<WeightedChange> {
    let total: f64 = parts.iter().map(|p| p.0).sum();
    if parts.is_empty() || total <= 0.0 {
        return None;
    }
    let sign = if higher_is_better { 1.0 } else { -1.0 };
    let mut percent = 0.0;
    let mut ends = Some((0.0, 0.0));
    for (w, d, rm) in parts {
        let d = (*d)?;
        if *rm == 0.0 || !rm.is_finite() {
            return None;
        }
        let pct = |v: f64| sign * 100.0 * v / rm.abs();
        percent += w * pct(d.difference) / total;
        let iv = match (d.interval, d.basis.as_str()) {
            (Some((lo, hi)), _) => Some((pct(lo).min(pct(hi)), pct(lo).max(pct(hi)))),
            (None, super::verdict::DETERMINISTIC) => Some((pct(d.difference), pct(d.difference))),
            _ => None,
        };
        ends = match (ends, iv) {
            (Some((a, b)), Some((lo, hi))) => Some((a + w * lo / total, b + w * hi / total)),
            _ => None,
        };
    }
    Some(WeightedChange {
        percent,
        interval: ends,
        holds: ends.is_some_and(|(lo, _)| lo > min_effect_percent),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::verdict::{Call, MODEL_ERROR, REPETITIONS};

    fn decision(difference: f64, interval: Option<(f64, f64)>, basis: &str) -> Decision {
        Decision {
            call: Call::WithinNoise,
            difference,
            half_width: interval.map(|(lo, hi)| (hi - lo) / 2.0),
            basis: basis.into(),
            n_reference: 1,
            n_candidate: 1,
            interval,
            confidence: None,
            percent: None,
            min_effect_percent: 1.0,
            rule: String::new(),
            study_rule: None,
        }
    }

    /// A guard holds when the worst the interval allows is within the tolerance, in the
    /// metric's own direction; without an interval nothing is shown.
    #[test]
    fn a_guard_holds_only_when_its_interval_clears_the_tolerance() {
        let cases = [
            // (difference, interval, higher is better, holds, worst %)
            (-150.0, Some((-200.0, -100.0)), true, false, -20.0),
            (0.0, Some((-15.0, 15.0)), true, true, -1.5),
            (0.0, Some((-25.0, 25.0)), true, false, -2.5),
            (50.0, Some((30.0, 70.0)), true, true, 3.0),
            // Lower is better (a latency): a rise is the loss.
            (15.0, Some((10.0, 20.0)), false, true, -2.0),
            (25.0, Some((20.0, 30.0)), false, false, -3.0),
        ];
        for (d, iv, higher, holds, worst) in cases {
            let v =
                ProfileVerdict::guard("p", Some(decision(d, iv, REPETITIONS)), 1000.0, 2.0, higher);
            assert_eq!(v.holds, holds, "{d} {iv:?} {higher}");
            assert!((v.worst_percent.unwrap() - worst).abs() < 1e-9, "{v:?}");
        }
        let none = ProfileVerdict::guard("p", Some(decision(5.0, None, "none")), 1000.0, 2.0, true);
        assert!(!none.holds && none.worst_percent.is_none());
        let model = decision(-150.0, Some((-200.0, -100.0)), MODEL_ERROR);
        assert!(!ProfileVerdict::guard("p", Some(model), 1000.0, 2.0, true).holds);
    }

    #[test]
    fn the_file_names_a_bad_tolerance_or_a_profile_twice() {
        let mut l = LadderSpec {
            profiles: vec!["a".into(), "b".into()],
            steps: Vec::new(),
            rule: LadderRule::AllProfiles,
            tolerance: Some(-1.0),
            weights: Default::default(),
        };
        assert!(l.check().unwrap_err().contains("ladder.tolerance"));
        l.tolerance = Some(2.0);
        l.rule = LadderRule::Target;
        assert!(l.check().unwrap_err().contains("all-profiles"));
        l.rule = LadderRule::AllProfiles;
        l.profiles.push("a".into());
        assert!(l.check().unwrap_err().contains("ladder.profiles[2]"));
    }

    use crate::result::BenchmarkResult;
    use crate::study::journal::{run_key, Configuration};
    use crate::study::plan::{analyse, Analysis, Outcomes};
    use crate::study::StudyFile;

    /// A study of one engine and two steps on `sharegpt` (target) and `generation-heavy`.
    fn study(reps: u32, rule: &str) -> StudyFile {
        let text = format!(
            r#"format = "servebench-study"
version = 1
title = "T"
model = "M"
hardware = "H"
repetitions = {reps}
[[engines]]
name = "A"
kind = "simulator"
[ladder]
profiles = ["sharegpt", "generation-heavy"]
rule = "{rule}"
[[ladder.steps]]
name = "S1"
add = ["--s1"]
[[ladder.steps]]
name = "S2"
add = ["--s2"]
[final]
profiles = ["sharegpt", "generation-heavy"]
"#
        );
        StudyFile::parse(&text, "t.toml".as_ref()).unwrap()
    }

    /// Runs the study to its end with `tps(config, profile, repetition)` as every run's
    /// total token throughput.
    fn drive(s: &StudyFile, tps: impl Fn(&Configuration, &str, u32) -> f64) -> Analysis {
        let mut o = Outcomes::default();
        loop {
            let a = analyse(s, &o);
            let Some(sess) = a.pending.clone() else {
                return a;
            };
            for (p, r) in &sess.runs {
                let result = BenchmarkResult {
                    successful_requests: Some(10),
                    failed_requests: Some(0),
                    total_token_throughput_per_s: Some(tps(&sess.config, p, *r)),
                    ..Default::default()
                };
                o.results.insert(run_key(&sess.config.key(), p, *r), result);
            }
        }
    }

    /// The factor a configuration's flags give a profile's throughput.
    fn effect(c: &Configuration, p: &str, s1: (f64, f64), s2: (f64, f64)) -> f64 {
        let pick = |(share, gen): (f64, f64)| if p == "sharegpt" { share } else { gen };
        let mut f = 1.0;
        if c.flags.iter().any(|x| x == "--s1") {
            f *= pick(s1);
        }
        if c.flags.iter().any(|x| x == "--s2") {
            f *= pick(s2);
        }
        f
    }

    /// The issue's ladder: a step +5 % on ShareGPT and −15 % on Generation Heavy is not
    /// kept under the all-profiles rule (its guard fails), a step +5 % on ShareGPT and
    /// neutral elsewhere is; the target-only rule keeps both.
    #[test]
    fn a_step_that_loses_on_another_profile_is_not_kept() {
        let tps = |c: &Configuration, p: &str, _| 1000.0 * effect(c, p, (1.05, 0.85), (1.05, 1.0));
        let a = drive(&study(1, "all-profiles"), tps);
        let kept: Vec<bool> = a.steps.iter().map(|s| s.accepted).collect();
        assert_eq!(kept, [false, true]);
        let s1 = &a.steps[0];
        assert!(s1.profiles[0].holds && s1.profiles[0].target);
        let guard = &s1.profiles[1];
        assert_eq!(guard.profile, "generation-heavy");
        // −15 % with the simulator's stated error (a third of it): −20 % at worst.
        assert!(!guard.holds);
        assert!(
            (guard.worst_percent.unwrap() + 15.0 * 1.33).abs() < 0.01,
            "{guard:?}"
        );
        assert!(a.recommended.unwrap().flags.iter().all(|f| f != "--s1"));
        let t = drive(&study(1, "target"), tps);
        let kept: Vec<bool> = t.steps.iter().map(|s| s.accepted).collect();
        assert_eq!(kept, [true, true]);
        assert_eq!(t.steps[0].profiles.len(), 2, "the other profile is shown");
    }

    /// The weighted rule: equal weights average +5 % and −15 % to −5 %: not kept; +5 % and
    /// 0 % to +2.5 %, whose band (a third of each effect) stays above the 1 % minimum
    /// effect: kept. A bad weight is named.
    #[test]
    fn the_weighted_rule_keeps_a_step_on_its_weighted_change() {
        let s = StudyFile::parse(
            &crate::study::ladder::tests::study(1, "weighted")
                .ladder
                .profiles
                .iter()
                .fold(String::new(), |acc, _| acc),
            "t.toml".as_ref(),
        );
        assert!(s.is_err(), "an empty text is no study");
        let tps = |c: &Configuration, p: &str, _| 1000.0 * effect(c, p, (1.05, 0.85), (1.05, 1.0));
        let a = drive(&study(1, "weighted"), tps);
        let kept: Vec<bool> = a.steps.iter().map(|s| s.accepted).collect();
        assert_eq!(kept, [false, true]);
        let w = a.steps[0].weighted.as_ref().unwrap();
        assert!((w.percent + 5.0).abs() < 1e-9, "{w:?}");
        let w = a.steps[1].weighted.as_ref().unwrap();
        assert!((w.percent - 2.5).abs() < 1e-9, "{w:?}");
        assert!(w.interval.unwrap().0 > 1.0, "{w:?}");
        let mut bad = study(1, "weighted");
        bad.ladder.weights.insert("latency".into(), 1.0);
        assert!(bad
            .ladder
            .check()
            .unwrap_err()
            .contains("ladder.weights.latency"));
    }

    /// Seeded calibration with run-to-run noise (0.5 % log-sd per run, `reps` repetitions
    /// a side, the study's 95 % rule): how often the all-profiles rule keeps a step.
    fn keep_rate(reps: u32, target: f64, other: f64, trials: u64) -> f64 {
        let s = study(reps, "all-profiles");
        let mut kept = 0;
        for t in 0..trials {
            let tps = |c: &Configuration, p: &str, r: u32| {
                // A normal draw from a seeded hash of (trial, configuration, profile, rep).
                let key = format!("{t}/{}/{p}/{r}", c.key());
                let mut rng = crate::rng::Rng::new(crate::rng::mix(
                    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                    }),
                ));
                let (u, v) = (rng.f64_open0(), rng.f64());
                let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                1000.0 * effect(c, p, (target, other), (1.0, 1.0)) * (0.005 * z).exp()
            };
            kept += u32::from(drive(&s, tps).steps[0].accepted);
        }
        f64::from(kept) / trials as f64
    }

    /// The false-keep rate of a step neutral on the target and −5 % on another profile,
    /// and of one clearly better on the target but −5 % elsewhere, stays under α = 5 %;
    /// at the tolerance's edge (−2 %) too. The price is power: a step +5 % on the target
    /// and neutral elsewhere must also show it loses under 2 % there, which three
    /// repetitions a side do about 70 % of the time and five nearly always. Rates over 400
    /// seeded trials (the guide's decisions chapter quotes them).
    #[test]
    fn the_all_profiles_rule_keeps_wrong_steps_at_most_at_alpha() {
        let neutral_loses = keep_rate(3, 1.0, 0.95, 400);
        let better_loses = keep_rate(3, 1.05, 0.95, 400);
        let at_edge = keep_rate(3, 1.05, 0.98, 400);
        let good3 = keep_rate(3, 1.05, 1.0, 400);
        let good5 = keep_rate(5, 1.05, 1.0, 400);
        eprintln!("keep rates: {neutral_loses} {better_loses} {at_edge} {good3} {good5}");
        assert!(neutral_loses <= 0.05, "{neutral_loses}");
        assert!(better_loses <= 0.05, "{better_loses}");
        assert!(at_edge <= 0.05, "{at_edge}");
        assert!((0.6..0.85).contains(&good3), "{good3}");
        assert!(good5 >= 0.95, "{good5}");
    }
}
