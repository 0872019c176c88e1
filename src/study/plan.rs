//! What a study runs and what it concluded, as a pure function of the runs finished so far
//! ([`analyse`]): the engines' baselines, each ladder step (its configuration follows from
//! earlier decisions), the final comparison, and the next session to run. The runner, the
//! plan and the document all read the same [`Analysis`], so a resumed study decides exactly
//! as an uninterrupted one.

use std::collections::BTreeMap;

use serde::Serialize;

use super::file::EngineKind;
use super::file::{Order, StudyFile};
use super::flags::split_flag;
use super::journal::{run_key, Configuration, Failure};
use super::ladder::ProfileVerdict;
use super::verdict::{decide_results, Call, Decision, Rule};
use crate::result::BenchmarkResult;

/// What has happened so far: finished runs' results by run key, failures by configuration key.
#[derive(Debug, Clone, Default)]
pub struct Outcomes {
    /// Results by run key (`CONFIG/PROFILE/rN`).
    pub results: BTreeMap<String, BenchmarkResult>,
    /// Failed configurations by key.
    pub failures: BTreeMap<String, Failure>,
    /// Each finished run's records and server metrics, by run key (for the explanations
    /// and plots of the document).
    pub observed: BTreeMap<String, super::observe::Observed>,
    /// Each launched configuration's start-ups, by key ([`super::startup`]).
    pub startups: BTreeMap<String, Vec<super::startup::Startup>>,
    /// Each configuration's answers to the `[quality]` eval set, by key.
    pub quality: BTreeMap<String, Vec<bool>>,
}

/// A server session to run: one configuration, its runs in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    /// The configuration.
    pub config: Configuration,
    /// Every run this session plans, in order, `(profile, repetition)`; the runner skips
    /// finished ones.
    pub runs: Vec<(String, u32)>,
    /// What the session is for (`engine vLLM`, `step Quantization`, `final`).
    pub purpose: String,
}

/// Where a configuration stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum Status {
    /// Every planned run finished.
    Done,
    /// Recorded failure.
    Failed {
        /// Why.
        reason: String,
    },
    /// Runs still to do.
    Pending,
}

/// One engine's baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineOutcome {
    /// The engine's name.
    pub name: String,
    /// Its baseline configuration.
    pub config: Configuration,
    /// Where it stands.
    pub status: Status,
}

/// One ladder step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepOutcome {
    /// The step's name.
    pub name: String,
    /// Its configuration (known once the configuration it starts from is).
    pub config: Configuration,
    /// Where it stands.
    pub status: Status,
    /// The reference it was compared with (`baseline` or a step's name).
    pub reference: String,
    /// The decision rule's answer (when both sides finished).
    pub decision: Option<Decision>,
    /// Whether the step entered the recommended configuration.
    pub accepted: bool,
    /// Lowest success rate over the step's runs on the decision profile.
    pub success_rate: Option<f64>,
    /// The step's verdict on each ladder profile, the target first (empty for a
    /// one-profile ladder); under `rule = "all-profiles"` every guard must hold.
    pub profiles: Vec<super::ladder::ProfileVerdict>,
    /// Under `rule = "weighted"`: the weighted change that decided the step.
    pub weighted: Option<super::ladder::WeightedChange>,
    /// With a `[quality]` section: its accuracy against its reference's.
    pub quality: Option<crate::quality::paired::PairedComparison>,
}

/// Everything decided so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The engines' baselines.
    pub engines: Vec<EngineOutcome>,
    /// Index of the selected engine.
    pub selected: Option<usize>,
    /// The ladder's steps (only those reached).
    pub steps: Vec<StepOutcome>,
    /// The selected engine's baseline configuration.
    pub baseline: Option<Configuration>,
    /// The recommended configuration (best step + `final.add`).
    pub recommended: Option<Configuration>,
    /// Where the final runs stand (baseline, recommended).
    pub final_status: Option<(Status, Status)>,
    /// The next session to run; `None` when the study is complete.
    pub pending: Option<Session>,
}

/// `flags` with `add` applied (same key replaced in place, else appended) and `remove`d keys
/// dropped.
pub fn apply_flags(flags: &[String], add: &[String], remove: &[String]) -> Vec<String> {
    let mut out: Vec<String> = flags
        .iter()
        .filter(|f| !remove.iter().any(|r| split_flag(f).0 == r.trim()))
        .cloned()
        .collect();
    for a in add {
        let key = split_flag(a).0;
        match out.iter_mut().find(|f| split_flag(f).0 == key) {
            Some(slot) => *slot = a.clone(),
            None => out.push(a.clone()),
        }
    }
    out
}

/// The runs of `profiles` × repetitions in the study's order (the fixed count of
/// repetitions; `min_repetitions` for `repetitions = "auto"`).
pub fn ordered_runs(study: &StudyFile, profiles: &[String]) -> Vec<(String, u32)> {
    let reps = 1..=study.fixed_repetitions();
    match study.order {
        Order::Sequential => profiles
            .iter()
            .flat_map(|p| reps.clone().map(move |r| (p.clone(), r)))
            .collect(),
        Order::Interleaved => reps
            .flat_map(|r| profiles.iter().map(move |p| (p.clone(), r)))
            .collect(),
    }
}

impl Outcomes {
    /// The status of `config` for `runs`.
    pub fn status(&self, config: &Configuration, runs: &[(String, u32)]) -> Status {
        let key = config.key();
        let done = runs
            .iter()
            .all(|(p, r)| self.results.contains_key(&run_key(&key, p, *r)));
        if done {
            return Status::Done;
        }
        match self.failures.get(&key) {
            Some(f) => Status::Failed {
                reason: f.reason.clone(),
            },
            None => Status::Pending,
        }
    }

    /// The finished results of `config` on `profile`, by repetition.
    pub fn runs_of(
        &self,
        config: &Configuration,
        profile: &str,
        reps: u32,
    ) -> Vec<&BenchmarkResult> {
        let key = config.key();
        (1..=reps)
            .filter_map(|r| self.results.get(&run_key(&key, profile, r)))
            .collect()
    }
}

/// Values of the study's target metric over `config`'s runs of `profile`.
pub fn target_values(
    study: &StudyFile,
    o: &Outcomes,
    config: &Configuration,
    profile: &str,
) -> Vec<f64> {
    let m = study.target_metric();
    o.runs_of(config, profile, study.planned_repetitions())
        .into_iter()
        .filter_map(|r| m.value(r))
        .collect()
}

pub(crate) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Whether `c` runs on the simulator with its noise off: its runs replay one run exactly.
pub fn deterministic(study: &StudyFile, c: &Configuration) -> bool {
    !study.noise_on()
        && study
            .engines
            .iter()
            .find(|e| e.name == c.engine)
            .is_some_and(|e| e.kind == EngineKind::Simulator)
}

/// The rule that decides between `reference` and `candidate` (sequential on the ladder of
/// a `repetitions = "auto"` study).
pub fn rule(
    study: &StudyFile,
    reference: &Configuration,
    candidate: &Configuration,
    ladder: bool,
) -> Rule {
    Rule {
        design: study.design(),
        sequential: ladder && study.is_auto(),
        deterministic: deterministic(study, reference) && deterministic(study, candidate),
        model_error: Some(crate::sim::EFFECT_ERROR_FRACTION),
    }
}

/// The runs of `profiles` at repetition `rep` that `config` lacks.
fn missing(
    o: &Outcomes,
    config: &Configuration,
    profiles: &[String],
    reps: std::ops::RangeInclusive<u32>,
) -> Vec<(String, u32)> {
    let key = config.key();
    reps.flat_map(|r| profiles.iter().map(move |p| (p.clone(), r)))
        .filter(|(p, r)| !o.results.contains_key(&run_key(&key, p, *r)))
        .collect()
}

/// A ladder step of a `repetitions = "auto"` study: looks at `n = min_repetitions, …` pairs
/// until one decides; `Err(session)` when a side lacks the runs of the next look.
fn sequential_step(
    study: &StudyFile,
    o: &Outcomes,
    reference: &Configuration,
    candidate: &Configuration,
    name: &str,
) -> Result<Option<Decision>, Session> {
    let design = study.design();
    let profiles = &study.ladder.profiles;
    let decision_profile = profiles[0].as_str();
    let rule = rule(study, reference, candidate, true);
    let target = study.target_metric();
    let mut n = design.first_look;
    loop {
        let c_missing = missing(o, candidate, profiles, 1..=n);
        let r_missing = missing(o, reference, profiles, 1..=n);
        let failed = |c: &Configuration| o.failures.contains_key(&c.key());
        if !c_missing.is_empty() && !failed(candidate) {
            return Err(Session {
                config: candidate.clone(),
                runs: c_missing,
                purpose: format!("step {name}"),
            });
        }
        if !r_missing.is_empty() && !failed(reference) {
            return Err(Session {
                config: reference.clone(),
                runs: r_missing,
                purpose: format!("step {name}: reference, repetition {n}"),
            });
        }
        let complete = c_missing.is_empty() && r_missing.is_empty();
        // A side that failed before this look: decide on the last complete look, as if the
        // budget were spent.
        let at = if complete { n } else { n - 1 };
        let r = o.runs_of(reference, decision_profile, at);
        let c = o.runs_of(candidate, decision_profile, at);
        let mut final_rule = rule;
        if !complete || at >= design.max_repetitions {
            final_rule.design.max_repetitions = at.max(design.first_look);
        }
        let d = decide_results(&r, &c, &target, &final_rule);
        match d {
            Some(d) if d.call == Call::Undecided && complete && n < design.max_repetitions => {
                n += 1;
            }
            d => return Ok(d),
        }
    }
}

/// Walks the study over `o` (see the module docs).
pub fn analyse(study: &StudyFile, o: &Outcomes) -> Analysis {
    let mut a = Analysis {
        engines: Vec::new(),
        selected: None,
        steps: Vec::new(),
        baseline: None,
        recommended: None,
        final_status: None,
        pending: None,
    };
    let ladder_runs = ordered_runs(study, &study.ladder.profiles);
    let decision_profile = study.ladder.profiles[0].as_str();
    let higher = study.higher_is_better();
    // 1. Engines at their defaults.
    for e in &study.engines {
        let config = Configuration {
            engine: e.name.clone(),
            model: e.model.clone().unwrap_or_else(|| study.model.clone()),
            flags: e.flags.clone(),
        };
        let status = o.status(&config, &ladder_runs);
        if status == Status::Done && a.pending.is_none() {
            a.pending = quality_session(study, o, &config, &e.name);
        }
        if status == Status::Pending && a.pending.is_none() {
            a.pending = Some(Session {
                config: config.clone(),
                runs: ladder_runs.clone(),
                purpose: format!("engine {}", e.name),
            });
        }
        a.engines.push(EngineOutcome {
            name: e.name.clone(),
            config,
            status,
        });
    }
    if a.pending.is_some() {
        return a;
    }
    // The engines' baselines: their first runs only (a baseline that later serves as a
    // reference runs more, and the selection must not move).
    let score = |c: &Configuration| {
        let m = study.target_metric();
        let v: Vec<f64> = o
            .runs_of(c, decision_profile, study.fixed_repetitions())
            .into_iter()
            .filter_map(|r| m.value(r))
            .collect();
        (!v.is_empty()).then(|| mean(&v))
    };
    let mut best_engine: Option<(usize, f64)> = None;
    for (i, e) in a.engines.iter().enumerate() {
        if e.status != Status::Done {
            continue;
        }
        if let Some(s) = score(&e.config) {
            let better = match best_engine {
                None => true,
                Some((_, b)) => (higher && s > b) || (!higher && s < b),
            };
            if better {
                best_engine = Some((i, s));
            }
        }
    }
    let Some((sel, _)) = best_engine else {
        return a;
    };
    a.selected = Some(sel);
    let baseline = a.engines[sel].config.clone();
    a.baseline = Some(baseline.clone());
    // 2. The ladder.
    let mut best = (baseline.clone(), "baseline".to_string());
    let mut by_name: BTreeMap<String, Configuration> = BTreeMap::new();
    by_name.insert("baseline".into(), baseline.clone());
    for s in &study.ladder.steps {
        let base = match s.on.as_deref() {
            None | Some("best") => best.0.clone(),
            Some(name) => by_name.get(name).cloned().unwrap_or_else(|| best.0.clone()),
        };
        let config = Configuration {
            engine: base.engine.clone(),
            model: s.model.clone().unwrap_or(base.model.clone()),
            flags: apply_flags(&base.flags, &s.add, &s.remove),
        };
        by_name.insert(s.name.clone(), config.clone());
        let mut step = StepOutcome {
            name: s.name.clone(),
            config: config.clone(),
            status: Status::Pending,
            reference: best.1.clone(),
            decision: None,
            accepted: false,
            success_rate: None,
            profiles: Vec::new(),
            weighted: None,
            quality: None,
        };
        if study.is_auto() {
            if let Some(f) = o.failures.get(&config.key()) {
                step.status = Status::Failed {
                    reason: f.reason.clone(),
                };
            } else {
                match sequential_step(study, o, &best.0, &config, &s.name) {
                    Err(session) => {
                        a.pending = Some(session);
                        a.steps.push(step);
                        return a;
                    }
                    Ok(d) => {
                        step.status = Status::Done;
                        step.decision = d;
                    }
                }
            }
        } else {
            step.status = o.status(&config, &ladder_runs);
            if step.status == Status::Pending {
                a.pending = Some(Session {
                    config: config.clone(),
                    runs: ladder_runs.clone(),
                    purpose: format!("step {}", s.name),
                });
                a.steps.push(step);
                return a;
            }
            if step.status == Status::Done {
                let reference = o.runs_of(&best.0, decision_profile, study.fixed_repetitions());
                let candidate = o.runs_of(&config, decision_profile, study.fixed_repetitions());
                let rule = rule(study, &best.0, &config, true);
                step.decision =
                    decide_results(&reference, &candidate, &study.target_metric(), &rule);
            }
        }
        if let Some(q) = quality_session(study, o, &config, &s.name) {
            a.pending = Some(q).filter(|_| step.status == Status::Done);
            if a.pending.is_some() {
                a.steps.push(step);
                return a;
            }
        }
        if step.status == Status::Done {
            let rates: Vec<f64> = o
                .runs_of(&config, decision_profile, study.planned_repetitions())
                .iter()
                .filter_map(|r| r.success_rate(None))
                .collect();
            step.success_rate = rates.iter().copied().reduce(f64::min);
            step.profiles = profile_verdicts(study, o, &best.0, &config, step.decision.as_ref());
            let weighted = study.ladder.rule == super::ladder::LadderRule::Weighted;
            if weighted {
                step.weighted = weighted_step(study, o, &best.0, &config, step.decision.as_ref());
            }
            let decided = if weighted {
                step.weighted.as_ref().is_some_and(|w| w.holds)
            } else {
                step.decision
                    .as_ref()
                    .is_some_and(|d| d.call == Call::Better)
                    && (!study.ladder.guarded() || step.profiles.iter().all(|v| v.holds))
            };
            step.accepted = decided && step.success_rate.is_none_or(|r| r >= 1.0);
            if let Some(q) = &study.quality {
                let alpha = study.design().alpha;
                let answers = |c: &Configuration| o.quality.get(&c.key());
                step.quality =
                    super::quality::quality_decision(q, answers(&best.0), answers(&config), alpha);
                step.accepted &= step.quality.as_ref().is_some_and(|c| c.non_inferior);
            }
        }
        if step.accepted {
            best = (config.clone(), s.name.clone());
        }
        a.steps.push(step);
    }
    // 3. Baseline and recommended on the final profiles.
    let recommended = Configuration {
        flags: apply_flags(&best.0.flags, &study.final_.add, &[]),
        ..best.0.clone()
    };
    a.recommended = Some(recommended.clone());
    let final_runs = ordered_runs(study, &study.final_.profiles);
    let b = o.status(&baseline, &final_runs);
    let r = o.status(&recommended, &final_runs);
    if b == Status::Pending {
        a.pending = Some(Session {
            config: baseline.clone(),
            runs: final_runs.clone(),
            purpose: "final: baseline".into(),
        });
    } else if r == Status::Pending {
        a.pending = Some(Session {
            config: recommended.clone(),
            runs: final_runs,
            purpose: "final: recommended".into(),
        });
    }
    a.final_status = Some((b, r));
    a
}

/// With a `[quality]` section: a session of no runs in which `config` (runs done) answers
/// the eval set, when it has not.
fn quality_session(
    study: &StudyFile,
    o: &Outcomes,
    c: &Configuration,
    name: &str,
) -> Option<Session> {
    let missing = study.quality.is_some()
        && !o.quality.contains_key(&c.key())
        && !o.failures.contains_key(&c.key());
    missing.then(|| Session {
        config: c.clone(),
        runs: Vec::new(),
        purpose: format!("quality of {name}"),
    })
}

/// A decided step's verdict on each ladder profile (empty for a one-profile ladder): the
/// target's `decision`, and each other profile decided on the same repetitions by the same
/// rule, held against the ladder's tolerance ([`super::ladder`]).
fn profile_verdicts(
    study: &StudyFile,
    o: &Outcomes,
    reference: &Configuration,
    candidate: &Configuration,
    decision: Option<&Decision>,
) -> Vec<ProfileVerdict> {
    let profiles = &study.ladder.profiles;
    if profiles.len() < 2 {
        return Vec::new();
    }
    let rule = rule(study, reference, candidate, false);
    let higher = study.higher_is_better();
    let mut out = vec![ProfileVerdict {
        profile: profiles[0].clone(),
        target: true,
        decision: decision.cloned(),
        worst_percent: None,
        holds: decision.is_some_and(|d| d.call == Call::Better),
    }];
    for p in &profiles[1..] {
        let (d, rm) = decide_profile(study, o, (reference, candidate), decision, p, &rule);
        out.push(ProfileVerdict::guard(
            p,
            d,
            rm,
            study.ladder.tolerance_percent(),
            higher,
        ));
    }
    out
}

/// A step's decision on `profile` by `rule`, on the repetitions its target decision used
/// (`decision`; the fixed count without one), with the reference's mean there.
fn decide_profile(
    study: &StudyFile,
    o: &Outcomes,
    (reference, candidate): (&Configuration, &Configuration),
    decision: Option<&Decision>,
    profile: &str,
    rule: &Rule,
) -> (Option<Decision>, f64) {
    let fixed = study.fixed_repetitions();
    let (nr, nc) = decision.map_or((fixed, fixed), |d| {
        (d.n_reference as u32, d.n_candidate as u32)
    });
    let target = study.target_metric();
    let r = o.runs_of(reference, profile, nr);
    let c = o.runs_of(candidate, profile, nc);
    let rm = mean(&r.iter().filter_map(|x| target.value(x)).collect::<Vec<_>>());
    (decide_results(&r, &c, &target, rule), rm)
}

/// The weighted change of a step over every ladder profile, each decided at α/k on the
/// repetitions of the target's decision ([`super::ladder::weighted_change`]).
fn weighted_step(
    study: &StudyFile,
    o: &Outcomes,
    reference: &Configuration,
    candidate: &Configuration,
    decision: Option<&Decision>,
) -> Option<super::ladder::WeightedChange> {
    let profiles = &study.ladder.profiles;
    let mut rule = rule(study, reference, candidate, false);
    rule.design.alpha /= profiles.len() as f64;
    let decided: Vec<(f64, Option<Decision>, f64)> = profiles
        .iter()
        .map(|p| {
            let (d, rm) = decide_profile(study, o, (reference, candidate), decision, p, &rule);
            (study.ladder.weight(p), d, rm)
        })
        .collect();
    let parts: Vec<(f64, Option<&Decision>, f64)> = decided
        .iter()
        .map(|(w, d, rm)| (*w, d.as_ref(), *rm))
        .collect();
    super::ladder::weighted_change(
        &parts,
        study.design().min_effect_percent,
        study.higher_is_better(),
    )
}

/// The repetition shown for `config` on `profile`: the one with the median target value.
pub fn representative<'a>(
    study: &StudyFile,
    o: &'a Outcomes,
    c: &Configuration,
    profile: &str,
) -> Option<(u32, &'a BenchmarkResult)> {
    let m = study.target_metric();
    let mut runs: Vec<(u32, &BenchmarkResult)> = (1..=study.planned_repetitions())
        .filter_map(|r| {
            o.results
                .get(&super::journal::run_key(&c.key(), profile, r))
                .map(|x| (r, x))
        })
        .collect();
    runs.sort_by(|a, b| {
        let v = |x: &BenchmarkResult| m.value(x).unwrap_or(f64::NAN);
        v(a.1).total_cmp(&v(b.1)).then(a.0.cmp(&b.0))
    });
    let mid = runs.len().checked_sub(1)? / 2;
    runs.get(mid).copied()
}

#[cfg(test)]
mod tests;
