//! The study verbs on top of the [`Runner`]: a whole study on the simulator in memory
//! ([`run_in_memory`]), the document written into the study directory ([`write_document`])
//! and the plan with its estimated wall time ([`estimate`]).

use std::sync::atomic::AtomicBool;

use super::Runner;
use crate::format::study::{render, Document};
use crate::study::{file, journal, plan, StudyError, StudyFile};

/// Runs a study with simulator engines in memory and returns its document (the main job).
pub fn run_in_memory(study: &StudyFile) -> Result<Document, StudyError> {
    let mut r = Runner::in_memory(study.clone());
    let never = AtomicBool::new(false);
    r.run(&never, &mut |_| {})?;
    Ok(render(study, &r.outcomes, &r.analysis(), false))
}

/// Writes `STUDY.md`, `study.json` and the document's charts and report
/// ([`Document::files`]) into the study directory (each atomically).
pub fn write_document(dir: &std::path::Path, doc: &Document) -> Result<(), StudyError> {
    for (rel, contents) in &doc.files {
        let path = dir.join(rel);
        let io = |e: std::io::Error| StudyError::Io {
            path: path.clone(),
            message: e.to_string(),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        journal::write_atomic(&path, contents.as_bytes()).map_err(io)?;
    }
    let md = dir.join("STUDY.md");
    journal::write_atomic(&md, doc.markdown.as_bytes()).map_err(|e| StudyError::Io {
        path: md.clone(),
        message: e.to_string(),
    })?;
    let js = dir.join("study.json");
    let bytes = serde_json::to_vec_pretty(&doc.json).map_err(|e| StudyError::Io {
        path: js.clone(),
        message: e.to_string(),
    })?;
    journal::write_atomic(&js, &bytes).map_err(|e| StudyError::Io {
        path: js,
        message: e.to_string(),
    })
}

/// The plan of a study: every session and run in order with the simulator's estimate of
/// its wall time (a launch's `expected_start_s` added per command-engine session). Where
/// the ladder branches, the plan follows the simulator's decisions.
pub fn estimate(study: &StudyFile) -> Result<String, StudyError> {
    use std::fmt::Write as _;
    let mut sim = study.clone();
    for e in &mut sim.engines {
        e.kind = file::EngineKind::Simulator;
    }
    let mut r = Runner::in_memory(sim.clone());
    let never = AtomicBool::new(false);
    let mut sessions: Vec<String> = Vec::new();
    r.run(&never, &mut |line| sessions.push(line.to_string()))?;
    // Replay the sessions in order with their runs' simulated durations.
    let mut out = String::new();
    let mut total_s = 0.0;
    let mut runs = 0;
    let mut unknown = 0;
    let mut n = 0;
    let mut seen = std::collections::BTreeSet::new();
    let a = r.analysis();
    let mut configs: Vec<(String, journal::Configuration)> = a
        .engines
        .iter()
        .map(|e| (format!("engine {}", e.name), e.config.clone()))
        .collect();
    configs.extend(
        a.steps
            .iter()
            .map(|s| (format!("step {}", s.name), s.config.clone())),
    );
    let mut assumed = false;
    if let (Some(b), Some(rc)) = (&a.baseline, &a.recommended) {
        configs.push(("final: baseline".into(), b.clone()));
        configs.push(("final: recommended".into(), rc.clone()));
    } else if let Some(first) = a.engines.first() {
        // The simulator could not run the baseline (flags it cannot model): the ladder is
        // still the plan, listed as if every step were kept.
        assumed = true;
        configs.extend(assumed_ladder(study, &first.config));
    }
    let final_runs = plan::ordered_runs(study, &study.final_.profiles);
    let ladder_runs = plan::ordered_runs(study, &study.ladder.profiles);
    // `repetitions = "auto"`: the ladder's configurations ran as many repetitions as the
    // simulated sequential decisions needed.
    let all_ladder_runs: Vec<(String, u32)> = (1..=study.planned_repetitions())
        .flat_map(|rep| study.ladder.profiles.iter().map(move |p| (p.clone(), rep)))
        .collect();
    for (purpose, c) in configs {
        let simulated: Vec<(String, u32)>;
        let planned = if purpose.starts_with("final") {
            &final_runs
        } else if study.is_auto() {
            simulated = all_ladder_runs
                .iter()
                .filter(|(p, rep)| {
                    r.outcomes
                        .results
                        .contains_key(&journal::run_key(&c.key(), p, *rep))
                })
                .cloned()
                .collect();
            &simulated
        } else {
            &ladder_runs
        };
        let todo: Vec<&(String, u32)> = planned
            .iter()
            .filter(|(p, rep)| seen.insert(journal::run_key(&c.key(), p, *rep)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        n += 1;
        let spec = study.engines.iter().find(|e| e.name == c.engine);
        let start = spec
            .filter(|e| e.kind == file::EngineKind::Command)
            .map(|e| e.expected_start_s)
            .unwrap_or(0.0);
        total_s += start;
        let _ = writeln!(
            out,
            "{n:>3}. {purpose} [{}]: {} {}",
            c.key(),
            c.model,
            c.flags.join(" ")
        );
        if start > 0.0 {
            let _ = writeln!(out, "       launch                     ~{start:.0} s");
        }
        for (p, rep) in todo {
            runs += 1;
            match r
                .outcomes
                .results
                .get(&journal::run_key(&c.key(), p, *rep))
                .and_then(|x| x.duration_s())
            {
                Some(d) => {
                    total_s += d;
                    let _ = writeln!(out, "       {:<26} {d:>8.1} s", format!("{p} r{rep}"));
                }
                None => {
                    unknown += 1;
                    let why = r
                        .outcomes
                        .failures
                        .get(&c.key())
                        .map(|f| f.reason.clone())
                        .unwrap_or_else(|| "not simulated".into());
                    let _ = writeln!(out, "       {:<26} unknown ({why})", format!("{p} r{rep}"));
                }
            }
        }
    }
    let h = (total_s / 3600.0).floor();
    let m = (total_s - h * 3600.0) / 60.0;
    let mut head = format!(
        "Plan of \"{}\": {n} server sessions, {runs} runs; estimated wall time {h:.0} h {m:.0} min ({total_s:.0} s) from the simulator{}\n",
        study.title,
        if unknown > 0 { format!(", {unknown} runs not estimated") } else { String::new() }
    );
    if assumed {
        head.push_str(
            "The simulator could not run the baseline, so it cannot say which steps will be \
             kept: the ladder is listed as if every step were kept.\n",
        );
    }
    let tail = if study.is_auto() {
        expected_runs(study, &a, &r.outcomes, runs, total_s)
    } else {
        String::new()
    };
    Ok(head + &out + &tail)
}

/// The ladder's configurations from `baseline` as if every step were kept (each starting
/// from the one its `on` names: the best so far, the baseline, or an earlier step), then the
/// final pair: the purposes and configurations [`estimate`] lists.
fn assumed_ladder(
    study: &StudyFile,
    baseline: &journal::Configuration,
) -> Vec<(String, journal::Configuration)> {
    let mut out = Vec::new();
    let mut named: Vec<(String, journal::Configuration)> = Vec::new();
    let mut best = baseline.clone();
    for step in &study.ladder.steps {
        let from = match step.on.as_deref() {
            None | Some("best") => best.clone(),
            Some("baseline") => baseline.clone(),
            Some(name) => named
                .iter()
                .find(|(n, _)| n == name)
                .map_or_else(|| best.clone(), |(_, c)| c.clone()),
        };
        let c = journal::Configuration {
            engine: from.engine.clone(),
            model: step.model.clone().unwrap_or_else(|| from.model.clone()),
            flags: plan::apply_flags(&from.flags, &step.add, &step.remove),
        };
        out.push((format!("step {} (assumed kept)", step.name), c.clone()));
        named.push((step.name.clone(), c.clone()));
        best = c;
    }
    let recommended = journal::Configuration {
        flags: plan::apply_flags(&best.flags, &study.final_.add, &[]),
        ..best
    };
    out.push(("final: baseline".into(), baseline.clone()));
    out.push(("final: recommended".into(), recommended));
    out
}

/// Merges the shard directories `dirs` (any order) into `out`
/// ([`crate::study::merged::merge_studies`]) and writes the merged study's document there.
pub fn merge_studies(
    dirs: &[std::path::PathBuf],
    out: &std::path::Path,
) -> Result<crate::study::merged::MergedStudy, StudyError> {
    let merged = crate::study::merged::merge_studies(dirs, out)?;
    let doc = render(&merged.study, &merged.outcomes, &merged.analysis, true);
    write_document(out, &doc)?;
    Ok(merged)
}

/// `study plan` of a `repetitions = "auto"` study: per ladder step the expected number of
/// repetitions per side and the chance it is kept, from the sequential design's operating
/// characteristics at the step's simulated effect and the simulated run-to-run spread
/// (seeded Monte-Carlo), then the expected runs and GPU-hours of the whole study (one GPU
/// per server; the simulated study took `simulated_runs` runs in `simulated_s` seconds).
fn expected_runs(
    study: &StudyFile,
    a: &crate::study::plan::Analysis,
    o: &crate::study::plan::Outcomes,
    simulated_runs: usize,
    simulated_s: f64,
) -> String {
    use std::fmt::Write as _;
    let design = study.design();
    let profile = study.ladder.profiles[0].as_str();
    let m = study.target_metric();
    let per_run_s = simulated_s / simulated_runs.max(1) as f64;
    let mut out = format!(
        "Sequential design ({} alpha spending, 95% overall confidence, minimum effect {}%, {} to {} repetitions per side); per ladder step, at its simulated effect and spread:\n",
        design.spending.as_str(),
        crate::format::study::trim(design.min_effect_percent),
        design.first_look,
        design.max_repetitions
    );
    let mut expected_extra = 0.0;
    let mut worst_extra = 0.0;
    let per_rep_runs = study.ladder.profiles.len() as f64;
    for s in &a.steps {
        let Some(d) = &s.decision else { continue };
        let reference = a
            .steps
            .iter()
            .find(|x| x.name == s.reference)
            .map(|x| &x.config)
            .or(a.baseline.as_ref());
        let Some(reference) = reference else { continue };
        // The spread of one run's target value: the paired differences' sd / √2.
        let vals = |c: &journal::Configuration| -> Vec<f64> {
            o.runs_of(c, profile, d.n_candidate as u32)
                .into_iter()
                .filter_map(|r| m.value(r))
                .collect()
        };
        let (rv, cv) = (vals(reference), vals(&s.config));
        let diffs: Vec<f64> = rv.iter().zip(&cv).map(|(x, y)| y - x).collect();
        let rm = crate::study::plan::mean(&rv);
        let cv_percent = if diffs.len() >= 2 && rm != 0.0 {
            let dm = crate::study::plan::mean(&diffs);
            let var =
                diffs.iter().map(|x| (x - dm).powi(2)).sum::<f64>() / (diffs.len() - 1) as f64;
            100.0 * (var / 2.0).sqrt() / rm.abs()
        } else {
            0.0
        };
        let sign = if study.higher_is_better() { 1.0 } else { -1.0 };
        let effect = sign * d.percent.unwrap_or(0.0);
        let oc = design.operating_characteristics(effect, cv_percent, 400, 29);
        let _ = writeln!(
            out,
            "  {:<40} effect {effect:+.2}%, run-to-run CV {cv_percent:.2}%: {:.1} repetitions per side expected (simulated: {}), kept with probability {:.0}%",
            s.name,
            oc.mean_repetitions,
            d.n_candidate,
            100.0 * oc.p_kept
        );
        // Runs beyond the first look, on both sides.
        let first = f64::from(design.first_look);
        expected_extra += 2.0 * (oc.mean_repetitions - first).max(0.0) * per_rep_runs;
        worst_extra += 2.0 * (f64::from(design.max_repetitions) - first) * per_rep_runs;
    }
    let simulated_extra: usize = a
        .steps
        .iter()
        .filter_map(|s| s.decision.as_ref())
        .map(|d| 2 * (d.n_candidate.saturating_sub(design.first_look as usize)))
        .sum::<usize>()
        * study.ladder.profiles.len();
    let base = simulated_runs.saturating_sub(simulated_extra) as f64;
    let expected = base + expected_extra;
    let worst = base + worst_extra;
    let _ = writeln!(
        out,
        "Expected {expected:.0} runs, about {:.2} GPU-hours at one GPU per server (at most {worst:.0} runs, {:.2} GPU-hours, if every step spends its budget; extra repetitions relaunch the server)",
        expected * per_run_s / 3600.0,
        worst * per_run_s / 3600.0
    );
    out
}
