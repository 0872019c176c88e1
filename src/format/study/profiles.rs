//! How the study document shows a decision across the ladder's profiles: each step's
//! verdict per profile, why a guard profile stopped a step, what the recommendation trades
//! away, what the kept steps cost in latency and KV-cache pressure, and which measured
//! configuration was best on each profile.

use std::fmt::Write as _;

use crate::study::file::StudyFile;
use crate::study::journal::run_key;
use crate::study::plan::{representative, Analysis, Outcomes, StepOutcome};
use crate::study::verdict::{Call, Decision};

use super::method::trim;

/// `−34.81%`.
fn pct(v: f64) -> String {
    format!("{v:+.2}%")
}

/// Why a step that was better on its target profile was not kept: `not shown within the
/// 2% tolerance on generation-heavy (worse (−34.81%, …))`, or that its accuracy is not shown
/// within the `[quality]` margin. `None` when neither stopped it.
pub(super) fn guard_failure(study: &StudyFile, s: &StepOutcome) -> Option<String> {
    let better = s.decision.as_ref().is_some_and(|d| d.call == Call::Better);
    if !better || s.weighted.is_some() {
        return None;
    }
    let mut why = Vec::new();
    if study.ladder.guarded() {
        let failed: Vec<String> = s
            .profiles
            .iter()
            .filter(|v| !v.target && !v.holds)
            .map(|v| {
                let d = v.decision.as_ref().map(|d| d.text());
                format!("{} ({})", v.profile, d.unwrap_or_else(|| "not run".into()))
            })
            .collect();
        if !failed.is_empty() {
            why.push(format!(
                "not shown within the {}% tolerance on {}",
                trim(study.ladder.tolerance_percent()),
                failed.join("; ")
            ));
        }
    }
    if let Some(q) = study.quality.as_ref() {
        match &s.quality {
            Some(c) if !c.non_inferior => why.push(format!(
                "its accuracy is not shown within the {}-point margin ({:+.2} points: {} items lost, {} gained)",
                trim(q.margin_points()),
                100.0 * c.difference,
                c.lost,
                c.gained
            )),
            None => why.push("its accuracy was not measured".into()),
            Some(_) => {}
        }
    }
    (!why.is_empty()).then(|| why.join(", and "))
}

/// Under `rule = "weighted"`, the weighted change that decided the step, in words.
pub(super) fn weighted_words(study: &StudyFile, s: &StepOutcome) -> Option<String> {
    let wc = s.weighted.as_ref()?;
    let weights: Vec<String> = study
        .ladder
        .profiles
        .iter()
        .map(|p| format!("{p} {}", trim(study.ladder.weight(p))))
        .collect();
    let interval = wc
        .interval
        .map(|(lo, hi)| {
            format!(
                ", interval {} to {} (each profile's at α/{})",
                pct(lo),
                pct(hi),
                study.ladder.profiles.len()
            )
        })
        .unwrap_or_else(|| ", no interval".into());
    Some(format!(
        "weighted change over the profiles (weights {}): {}{interval}; {} the {}% minimum effect",
        weights.join(", "),
        pct(wc.percent),
        if wc.holds { "above" } else { "not shown above" },
        trim(study.design().min_effect_percent)
    ))
}

/// A step's verdict on every ladder profile, as a table (nothing for a one-profile ladder).
pub(super) fn step_details(
    w: &mut String,
    study: &StudyFile,
    o: &Outcomes,
    a: &Analysis,
    s: &StepOutcome,
) {
    if let (Some(q), Some(c)) = (&study.quality, &s.quality) {
        let acc = |config: Option<&crate::study::journal::Configuration>| {
            let v = o.quality.get(&config?.key())?;
            Some(crate::quality::paired::accuracy(
                v.iter().filter(|x| **x).count(),
                v.len(),
                0.95,
            ))
        };
        let reference = if s.reference == "baseline" {
            a.baseline.as_ref()
        } else {
            a.steps
                .iter()
                .find(|x| x.name == s.reference)
                .map(|x| &x.config)
        };
        if let (Some(r), Some(k)) = (acc(reference), acc(Some(&s.config))) {
            let lines = crate::format::quality::comparison_lines(c, &r, &k);
            let text = lines.join(" ");
            let text = text.strip_prefix("Quality: ").unwrap_or(&text);
            let _ = writeln!(w, "Quality ({}): {text}\n", q.eval);
        }
    }
    if !s.profiles.is_empty() {
        let guarded = study.ladder.guarded();
        let tol = trim(study.ladder.tolerance_percent());
        let _ = writeln!(
            w,
            "| Profile | Role | Verdict | Worst case | Holds |\n|---|---|---|---|---|"
        );
        for v in &s.profiles {
            let weighted = s.weighted.is_some();
            let role = match (v.target, guarded) {
                _ if weighted => format!("weight {}", trim(study.ladder.weight(&v.profile))),
                (true, _) => "target: better by the minimum effect".to_string(),
                (false, true) => format!("guard: loses at most {tol}%"),
                (false, false) => "shown only (rule = \"target\")".to_string(),
            };
            let verdict = v
                .decision
                .as_ref()
                .map(|d| d.text())
                .unwrap_or_else(|| "not run".into());
            let worst = v.worst_percent.map(pct).unwrap_or_else(|| "–".into());
            let holds = match (!weighted && (v.target || guarded), v.holds) {
                (false, _) => "–",
                (true, true) => "yes",
                (true, false) => "no",
            };
            let _ = writeln!(
                w,
                "| {} | {role} | {verdict} | {worst} | {holds} |",
                v.profile
            );
        }
        w.push('\n');
    }
    if let Some(spec) = study.ladder.steps.iter().find(|x| x.name == s.name) {
        for n in &spec.notes {
            let _ = writeln!(w, "Known from elsewhere: {n}\n");
        }
    }
}

/// The conclusion's account of the decision across profiles: what the recommendation
/// trades away on the final profiles (`finals`: each profile's decision) (or that the rule
/// let it trade nothing), what each kept step cost on the
/// target profile, the best measured configuration per profile, and what is known about
/// the kept steps from elsewhere.
pub(super) fn conclusion(
    w: &mut String,
    study: &StudyFile,
    o: &Outcomes,
    a: &Analysis,
    finals: &[(&str, Option<&Decision>)],
) {
    let worse: Vec<String> = finals
        .iter()
        .filter_map(|(profile, d)| {
            let d = d.filter(|d| d.call == Call::Worse)?;
            Some(format!("{profile} ({})", d.text()))
        })
        .collect();
    if !worse.is_empty() {
        let why = if study.ladder.guarded() {
            "a profile outside the ladder, or the flags the final comparison adds".to_string()
        } else {
            format!(
                "the ladder decided on {} alone (rule = \"target\")",
                study.ladder.profiles[0]
            )
        };
        let _ = writeln!(
            w,
            "**Trade-off:** the recommended command is worse than the baseline on {} — {why}.\n",
            worse.join(", ")
        );
    } else if study.ladder.guarded() {
        let _ = writeln!(
            w,
            "No kept step was allowed to lose more than {}% on any ladder profile ({}).\n",
            trim(study.ladder.tolerance_percent()),
            study.ladder.profiles.join(", ")
        );
    }
    kept_costs(w, study, o, a);
    best_per_profile(w, study, o, a);
    let notes: Vec<String> = a
        .steps
        .iter()
        .filter(|s| s.accepted)
        .filter_map(|s| study.ladder.steps.iter().find(|x| x.name == s.name))
        .flat_map(|x| x.notes.iter().map(move |n| format!("- {}: {n}", x.name)))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(
            w,
            "What is known about the kept steps from elsewhere:\n\n{}\n",
            notes.join("\n")
        );
    }
}

/// What each kept step cost on the target profile beside its gain: TTFT, and the KV cache
/// and preemptions where the server reported them.
fn kept_costs(w: &mut String, study: &StudyFile, o: &Outcomes, a: &Analysis) {
    let target = study.target_metric();
    let p = study.ladder.profiles[0].as_str();
    let config_of = |name: &str| {
        if name == "baseline" {
            a.baseline.as_ref()
        } else {
            a.steps.iter().find(|s| s.name == name).map(|s| &s.config)
        }
    };
    let mut rows = Vec::new();
    for s in a.steps.iter().filter(|s| s.accepted) {
        let Some(rc) = config_of(&s.reference) else {
            continue;
        };
        let (Some((rrep, r)), Some((crep, c))) = (
            representative(study, o, rc, p),
            representative(study, o, &s.config, p),
        ) else {
            continue;
        };
        let gain = s
            .decision
            .as_ref()
            .and_then(|d| d.percent)
            .map(pct)
            .unwrap_or_else(|| "–".into());
        let secs = |x: Option<f64>| x.map(|v| v / 1000.0);
        let change = |a: Option<f64>, b: Option<f64>, unit: &str, digits: usize| match (a, b) {
            (Some(a), Some(b)) => {
                let unit = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                };
                format!("{a:.digits$} → {b:.digits$}{unit} ({:+.digits$})", b - a)
            }
            _ => "not reported".into(),
        };
        let ttft = |x: &crate::result::BenchmarkResult| x.ttft.as_ref().and_then(|t| t.mean);
        let p99 =
            |x: &crate::result::BenchmarkResult| x.ttft.as_ref().and_then(|t| t.percentile(99.0));
        let server = |c: &crate::study::journal::Configuration, rep: u32| {
            o.observed
                .get(&run_key(&c.key(), p, rep))
                .and_then(|x| x.server.as_ref())
                .map(|x| x.summary())
        };
        let (rs, cs) = (server(rc, rrep), server(&s.config, crep));
        let kv = |x: &Option<crate::observe::ServerSummary>| {
            x.as_ref()
                .and_then(|x| x.kv_cache_usage_peak)
                .map(|v| 100.0 * v)
        };
        let pre =
            |x: &Option<crate::observe::ServerSummary>| x.as_ref().and_then(|x| x.preemptions);
        rows.push(format!(
            "| {} | {gain} | {} | {} | {} | {} |",
            s.name,
            change(secs(ttft(r)), secs(ttft(c)), "s", 2),
            change(secs(p99(r)), secs(p99(c)), "s", 2),
            change(kv(&rs), kv(&cs), "%", 0),
            change(pre(&rs), pre(&cs), "", 0),
        ));
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "What each kept step cost on the {p} profile (against what it was compared with):\n\n\
         | Kept step | {} | Mean TTFT | P99 TTFT | KV-cache peak | Preemptions |\n|---|---|---|---|---|---|\n{}\n",
        target.label,
        rows.join("\n")
    );
}

/// Per ladder profile, the configuration measured best on the target metric among the
/// baseline and every step, against the ladder's choice (a per-profile recommendation).
fn best_per_profile(w: &mut String, study: &StudyFile, o: &Outcomes, a: &Analysis) {
    if study.ladder.profiles.len() < 2 {
        return;
    }
    let (Some(base), Some(_)) = (&a.baseline, &a.recommended) else {
        return;
    };
    // The ladder's choice before the final flags: the last kept step, else the baseline.
    let (chosen_name, chosen) = a
        .steps
        .iter()
        .rev()
        .find(|s| s.accepted)
        .map(|s| (s.name.as_str(), &s.config))
        .unwrap_or(("baseline", base));
    let target = study.target_metric();
    let higher = study.higher_is_better();
    let value = |c: &crate::study::journal::Configuration, p: &str| {
        let v: Vec<f64> = o
            .runs_of(c, p, study.fixed_repetitions())
            .into_iter()
            .filter_map(|r| target.value(r))
            .collect();
        (!v.is_empty()).then(|| crate::study::plan::mean(&v))
    };
    let mut rows = Vec::new();
    for p in &study.ladder.profiles {
        let candidates = std::iter::once(("baseline", base))
            .chain(a.steps.iter().map(|s| (s.name.as_str(), &s.config)));
        let mut best: Option<(&str, f64)> = None;
        for (name, c) in candidates {
            if let Some(v) = value(c, p) {
                if best.is_none_or(|(_, b)| (higher && v > b) || (!higher && v < b)) {
                    best = Some((name, v));
                }
            }
        }
        let (Some((name, v)), Some(ch)) = (best, value(chosen, p)) else {
            continue;
        };
        let vs = if name == chosen_name {
            "the ladder's choice".to_string()
        } else {
            format!(
                "{} against the ladder's choice",
                pct(100.0 * (v - ch) / ch.abs())
            )
        };
        rows.push(format!("| {p} | {name} | {v:.2} | {vs} |"));
    }
    let _ = writeln!(
        w,
        "Best measured configuration per profile (for traffic like one profile alone):\n\n\
         | Profile | Best configuration | {} | Against the ladder's choice ({chosen_name}) |\n|---|---|---|---|\n{}\n",
        target.label,
        rows.join("\n")
    );
}
