//! The study document's sentences about its method — how each decision was reached, the
//! rule applied (and its numbers: confidence levels, minimum effects), how often each
//! configuration ran and whether the simulator varied — generated from the decisions
//! actually made, never from what the study file intended.

use crate::study::file::{EngineKind, StudyFile};
use crate::study::verdict::{
    Decision, Rule, CAPACITY_INTERVALS, DETERMINISTIC, MODEL_ERROR, NO_BASIS, REPETITIONS,
    WITHIN_RUN,
};

/// `95%`, or `99.7%` for a sequential look's level.
pub(super) fn confidence_label(c: f64) -> String {
    let p = 100.0 * c;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else if (10.0 * p - (10.0 * p).round()).abs() < 1e-6 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// `1`, `0.5`, `2.25`.
pub(crate) fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A study's rule in words (a decision's `rule` in the document and `study.json`).
pub(super) fn rule_words(rule: &Rule) -> String {
    let d = &rule.design;
    let keep = format!(
        "kept only if better by more than {}% of the reference",
        trim(d.min_effect_percent)
    );
    if rule.deterministic {
        return match rule.model_error {
            Some(k) => format!(
                "{keep} after the simulator's stated error on an effect's size (±{}% of the difference)",
                trim(100.0 * k)
            ),
            None => format!("{keep} (exact differences of a deterministic simulation)"),
        };
    }
    let conf = format!("{} confidence", confidence_label(1.0 - d.alpha));
    if rule.sequential {
        format!(
            "{keep} with {conf} over all looks (sequential: {} alpha spending, {} to {} repetitions per side)",
            d.spending.as_str(),
            d.first_look,
            d.max_repetitions
        )
    } else {
        format!("{keep} with {conf}")
    }
}

/// How `decisions` were reached, in words, counted by basis: `3 decisions on repetitions
/// (n = 2 to 5 per side), 1 exactly in a deterministic simulation`.
pub(super) fn describe_bases(decisions: &[&Decision], what: &str) -> String {
    if decisions.is_empty() {
        return format!("no {what} decision was reached");
    }
    let mut parts = Vec::new();
    for basis in [
        DETERMINISTIC,
        MODEL_ERROR,
        REPETITIONS,
        WITHIN_RUN,
        CAPACITY_INTERVALS,
        NO_BASIS,
    ] {
        let of: Vec<&&Decision> = decisions.iter().filter(|d| d.basis == basis).collect();
        if of.is_empty() {
            continue;
        }
        let k = of.len();
        let s = if k == 1 { "" } else { "s" };
        let ns: Vec<usize> = of
            .iter()
            .flat_map(|d| [d.n_reference, d.n_candidate])
            .collect();
        let (lo, hi) = (
            ns.iter().copied().min().unwrap_or(0),
            ns.iter().copied().max().unwrap_or(0),
        );
        let n = if lo == hi {
            format!("n = {lo} per side")
        } else {
            format!("n = {lo} to {hi} per side")
        };
        parts.push(match basis {
            DETERMINISTIC => format!("{k} decision{s} on exact differences of a deterministic simulation (the simulator without run-to-run noise, {n})"),
            MODEL_ERROR => format!("{k} decision{s} on a simulation without run-to-run noise, each difference within the simulator's stated model error ({n}; `servebench::sim::EFFECT_ERROR_FRACTION`)"),
            REPETITIONS => {
                let c: Vec<String> = of
                    .iter()
                    .filter_map(|d| d.confidence)
                    .map(confidence_label)
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                format!("{k} decision{s} on the interval of the difference over repetitions ({n}; {} intervals)", c.join(", "))
            }
            WITHIN_RUN => format!("{k} decision{s} on single runs' within-run intervals ({n}; they do not see run-to-run variation)"),
            CAPACITY_INTERVALS => format!("{k} decision{s} on the capacity searches' intervals ({n}; better or worse only when one interval lies wholly beyond the other; on a deterministic simulation an interval is the search's resolution, on a server also its noise)"),
            _ => format!("{k} decision{s} on single runs without any interval ({n}; not kept: no confidence can be stated)"),
        });
    }
    parts.join("; ")
}

/// How the ladder decides, from the rule its decisions state (all share one rule unless
/// the bases differ).
pub(super) fn ladder_rule(study: &StudyFile, decisions: &[&Decision]) -> String {
    let rules: std::collections::BTreeSet<&str> =
        decisions.iter().map(|d| d.rule.as_str()).collect();
    if rules.is_empty() {
        let d = study.design();
        return format!(
            "kept only if better than the best configuration so far by more than {}%",
            trim(d.min_effect_percent)
        );
    }
    let joined = rules.into_iter().collect::<Vec<_>>().join("; or ");
    format!("compared with the best configuration so far and {joined}")
}

/// What the ladder's other profiles do to a step, in words (`""` for a one-profile ladder).
pub(super) fn guard_words(study: &StudyFile) -> String {
    if study.ladder.guarded() {
        format!(
            ", and only if the interval of its change on each other ladder profile ({}) lies above -{}% of the reference (each part tested at the study's error rate; a step must pass all, so the chance of a wrong keep stays at that rate)",
            study.ladder.profiles[1..].join(", "),
            trim(study.ladder.tolerance_percent())
        )
    } else if study.ladder.rule == crate::study::file::LadderRule::Weighted {
        format!(
            ", or under rule = \"weighted\" on the weighted mean of its changes over the ladder's profiles ({}), kept when that mean's interval lies above the minimum effect",
            study.ladder.profiles.join(", ")
        )
    } else if study.ladder.profiles.len() > 1 {
        format!(
            ", on the target profile alone (rule = \"target\"; {} shown, not decided)",
            study.ladder.profiles[1..].join(", ")
        )
    } else {
        String::new()
    }
}

/// The Benchmark Method paragraph: how often each configuration ran and whether the
/// simulator varied, from the study and the decisions made.
pub(super) fn method_sentence(study: &StudyFile, ladder: &[&Decision]) -> String {
    let n = study.fixed_repetitions();
    let times = |n: u32| format!("{n} time{}", if n == 1 { "" } else { "s" });
    let runs = if study.is_auto() {
        let d = study.design();
        let used: Vec<usize> = ladder.iter().map(|x| x.n_candidate).collect();
        let used = match (used.iter().min(), used.iter().max()) {
            (Some(lo), Some(hi)) if lo == hi => format!("; the steps used {lo} each"),
            (Some(lo), Some(hi)) => format!("; the steps used {lo} to {hi}"),
            _ => String::new(),
        };
        format!(
            "the engines' baselines and the final comparison {} per profile, each ladder step and its reference in repetitions added one pair at a time until the sequential design ({} alpha spending, 95% overall confidence, {} to {} repetitions per side) reached its decision{used}",
            times(n),
            d.spending.as_str(),
            d.first_look,
            d.max_repetitions
        )
    } else {
        format!("every profile {} per configuration", times(n))
    };
    let sim = study
        .engines
        .iter()
        .any(|e| e.kind == EngineKind::Simulator);
    let noise = if !sim {
        String::new()
    } else if study.noise_on() {
        let x = &study.noise;
        format!(" The simulator ran with its run-to-run noise model on (run speed log-sd {}, step-time log-sd {}, arrival jitter {} ms; sized on published vLLM run-to-run spread), each run with its own noise seed.", x.run_sigma, x.step_sigma, x.arrival_jitter_ms)
    } else {
        format!(" The simulator ran as a deterministic simulation: no run-to-run noise, so a repetition would replay the same run and a difference between configurations is the model's effect — known only as well as the model: on the seed study's measured change the simulator's predicted gains were off by {}% of their size on average, so each difference is decided with that band around it.", trim(100.0 * crate::sim::EFFECT_ERROR_FRACTION))
    };
    // A pooling endpoint's answers come whole: their latency is their only timing.
    let source = match study.endpoint.as_ref().filter(|e| !e.streams()) {
        Some(e) => format!("every request's answer (the {} endpoint answers whole: request latency is its only timing, so no TTFT, TPOT or ITL is reported)", e.name),
        None => "every request's streamed chunks".to_string(),
    };
    format!("servebench ran this study with `servebench study run`: each configuration on a freshly started server, {runs}, the figures computed by servebench from {source} and labelled by metric convention. Each step is decided on {}.{noise}", study.target_metric().label)
}
