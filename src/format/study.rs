//! The study document: `STUDY.md` in the seed's structure (Conclusion, Experimental Setup,
//! Experiment Results, Summary of Optimization Options, Other Benchmark Cases) and
//! `study.json` with the same content as data. Both are a pure function of the study file
//! and the finished runs — no clock, no port, no path outside the study directory — so a
//! resumed study writes the same bytes as an uninterrupted one.

use std::fmt::Write as _;

use serde::Serialize;

use crate::compare::gpustack::latency::{baseline_latency_cell, latency_cell, latency_summary};
use crate::compare::gpustack::{
    conclusion_row, speed_summary, Annotation, Cell, ConclusionTable, LadderStep, Verdict,
};
use crate::format::capacity::{
    capacity_cell_of, capacity_conclusion_markdown, capacity_study_note, capacity_table_markdown,
};
use crate::format::gpustack::latency::{
    latency_conclusion_markdown_judged, LATENCY_BASELINE_HEADER,
};
use crate::format::text::{self, Style};
use crate::profile::Dataset;
use crate::result::BenchmarkResult;
use crate::study::file::{EngineKind, Goal, StudyFile};
use crate::study::journal::Configuration;
use crate::study::plan::{representative, target_values, Analysis, Outcomes, Status, StepOutcome};
use crate::study::verdict::{decide_results, mean_interval, Call, Decision};

mod command;
mod cost;
mod decision;
mod method;
mod profiles;
mod startup;
use command::serve_command;
pub use command::DEFAULT_SERVE_PORT;
use decision::{with_rule, with_rules};
pub(crate) use method::trim;
use method::{describe_bases, guard_words, ladder_rule, method_sentence};

/// One profile's final comparison, as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalRow {
    /// The profile's name.
    pub profile: String,
    /// The target metric's values over the baseline's repetitions.
    pub baseline: Vec<f64>,
    /// … and over the recommended configuration's.
    pub recommended: Vec<f64>,
    /// The decision rule's answer.
    pub decision: Option<Decision>,
}

/// `study.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyJson {
    /// Always `servebench-study-document`.
    pub format: &'static str,
    /// 1.
    pub version: u32,
    /// The study's title.
    pub title: String,
    /// The model.
    pub model: String,
    /// The hardware.
    pub hardware: String,
    /// The target metric's key.
    pub target: String,
    /// Repetitions per (configuration, profile): the fixed count (for
    /// `repetitions = "auto"`, that of the engines' baselines and the final comparison).
    pub repetitions: u32,
    /// `repetitions = "auto"`: the sequential design the ladder's steps followed.
    pub sequential: Option<crate::noise::sequential::Design>,
    /// Whether the simulator's run-to-run noise was on (`None`: no simulator engine).
    pub simulator_noise: Option<bool>,
    /// The document's sentences about the method, generated from the decisions made.
    pub method: Vec<String>,
    /// Everything decided.
    pub analysis: Analysis,
    /// The recommended serving command.
    pub serving_command: Option<String>,
    /// The final comparison per profile.
    pub conclusion: Vec<FinalRow>,
    /// Run keys of every run the document uses, in document order.
    pub runs: Vec<String>,
    /// Each ladder step's change of TTFT and TPOT against what it was compared with.
    pub explanations: Vec<crate::study::observe::StepExplanation>,
    /// Each launched configuration's start-ups, by key.
    pub startups: std::collections::BTreeMap<String, Vec<crate::study::Startup>>,
}

/// The document of a (possibly unfinished) study.
#[derive(Debug, Clone)]
pub struct Document {
    /// `STUDY.md`.
    pub markdown: String,
    /// `study.json`'s content.
    pub json: StudyJson,
    /// The charts and HTML report written beside the document, `(relative path, contents)`
    /// (only for a study directory, with the `plot` feature).
    pub files: crate::study::observe::Files,
}

fn fence(w: &mut String, body: &str) {
    let _ = writeln!(w, "```\n{}\n```\n", body.trim_end());
}

struct Ctx<'a> {
    study: &'a StudyFile,
    o: &'a Outcomes,
    used: Vec<String>,
}

/// The summary table of runs side by side for the study's goal: the speed or latency
/// summary, or the capacity table with `first` as its first column's heading (`None` when
/// there is nothing to compare).
fn goal_summary(goal: Goal, first: &str, runs: &[(&str, &BenchmarkResult)]) -> Option<String> {
    match goal {
        Goal::Throughput => speed_summary(runs).map(|s| s.markdown()),
        Goal::Latency => latency_summary(runs).map(|s| s.markdown()),
        Goal::Capacity => capacity_table_markdown(first, runs),
    }
}

/// A profile's title for a heading (its name when the study file cannot build it).
fn profile_title(study: &StudyFile, name: &str) -> String {
    study
        .profile(name)
        .map(|x| x.title())
        .unwrap_or_else(|_| name.to_string())
}

impl Ctx<'_> {
    /// `Profile: TITLE` and [`Ctx::block`] for each profile of the ladder.
    fn profile_blocks(&mut self, w: &mut String, c: &Configuration) {
        let study = self.study;
        for p in &study.ladder.profiles {
            let title = profile_title(study, p);
            let _ = writeln!(w, "Profile: {title}\n");
            self.block(w, c, p, "");
        }
    }

    /// `Backend Parameters:` + flags + the block of the representative run, or why none.
    fn block(&mut self, w: &mut String, c: &Configuration, profile: &str, who: &str) {
        let _ = writeln!(w, "{who}Backend Parameters:\n");
        fence(w, &c.flags.join("\n"));
        let reps = (1..=self.study.planned_repetitions())
            .filter(|r| {
                self.o
                    .results
                    .contains_key(&crate::study::journal::run_key(&c.key(), profile, *r))
            })
            .count();
        match representative(self.study, self.o, c, profile) {
            Some((rep, r)) => {
                self.used
                    .push(crate::study::journal::run_key(&c.key(), profile, rep));
                let convention = r
                    .meta
                    .convention
                    .map(|c| format!("{c:?}"))
                    .unwrap_or_else(|| "unknown".into());
                let which = if reps > 1 {
                    let values = target_values(self.study, self.o, c, profile);
                    let (mean, hw) = mean_interval(&values);
                    format!(
                        ", repetition {rep} of {reps} (median {}; mean {}{})",
                        self.study.target_metric().label,
                        fmt(mean),
                        hw.map(|h| format!(" ± {}", fmt(h))).unwrap_or_default()
                    )
                } else {
                    String::new()
                };
                let lower = if who.is_empty() {
                    "Benchmark result".to_string()
                } else {
                    format!("{who}benchmark result")
                };
                let _ = writeln!(w, "{lower} (servebench, {convention} convention{which})\n");
                fence(w, &text::render(r, Style::Gpustack));
            }
            None => {
                let why = match self.o.status(c, &[(profile.to_string(), 1)]) {
                    Status::Failed { reason } => reason,
                    _ => "not run".into(),
                };
                let _ = writeln!(w, "Benchmark result: none — {why}\n");
            }
        }
    }
}

fn fmt(v: f64) -> String {
    format!("{v:.2}")
}

fn step_title(goal: Goal) -> &'static str {
    match goal {
        Goal::Throughput => "throughput",
        Goal::Latency => "latency",
        Goal::Capacity => "capacity under the SLO",
    }
}

fn ladder_row(
    study: &StudyFile,
    o: &Outcomes,
    baseline: &BenchmarkResult,
    best_pct: &mut Option<f64>,
    s: &StepOutcome,
    profile: &str,
) -> String {
    let cand = representative(study, o, &s.config, profile).map(|x| x.1);
    let Some(cand) = cand else {
        let why = match &s.status {
            Status::Failed { reason } => reason.clone(),
            _ => "not run".into(),
        };
        let base = match study.goal {
            Goal::Throughput => Cell::of(baseline).markdown(),
            Goal::Latency => baseline_latency_cell(baseline).markdown(),
            Goal::Capacity => capacity_cell_of(baseline),
        };
        return format!("| {} | {} (optimization skipped) | {} |", s.name, why, base);
    };
    if study.goal == Goal::Capacity {
        let mut cell = capacity_cell_of(cand);
        if !s.accepted {
            cell.push_str(" (optimization skipped)");
        }
        return format!("| {} | {cell} | {} |", s.name, capacity_cell_of(baseline));
    }
    if study.goal == Goal::Latency {
        let mut cell = latency_cell(baseline, cand).markdown();
        if !s.accepted {
            cell.push_str(" (optimization skipped)");
        }
        return format!(
            "| {} | {} | {} |",
            s.name,
            cell,
            baseline_latency_cell(baseline).markdown()
        );
    }
    let mut cell = Cell::candidate(baseline, cand);
    let verdict = match cell.annotation {
        Some(Annotation::SuccessRateSkipped { success_rate }) => {
            Verdict::SkippedSuccessRate { success_rate }
        }
        Some(Annotation::Change { percent }) => {
            if s.accepted {
                *best_pct = Some(percent);
                Verdict::Accepted
            } else if let Some(prev) = best_pct.filter(|p| percent < *p) {
                cell.annotation = Some(Annotation::LowerThanPrevious {
                    percent,
                    previous_percent: prev,
                });
                Verdict::SkippedLowerThanPrevious {
                    previous_percent: prev,
                }
            } else if best_pct.is_some() {
                // Not lower, but not better beyond the rule either: say so after the cell.
                let step = LadderStep {
                    name: s.name.clone(),
                    optimized: cell,
                    baseline: Cell::of(baseline),
                    verdict: Verdict::NotAvailable,
                    backend_parameters: s.config.flags.clone(),
                };
                let why = profiles::weighted_words(study, s)
                    .or_else(|| profiles::guard_failure(study, s))
                    .or_else(|| s.decision.as_ref().map(|d| d.text()))
                    .unwrap_or_default();
                return format!(
                    "| {} | {} (not kept against {}: {why}; optimization skipped) | {} |",
                    step.name,
                    step.optimized.markdown(),
                    s.reference,
                    step.baseline.markdown()
                );
            } else {
                Verdict::SkippedBelowBaseline
            }
        }
        _ => Verdict::NotAvailable,
    };
    LadderStep {
        name: s.name.clone(),
        optimized: cell,
        baseline: Cell::of(baseline),
        verdict,
        backend_parameters: s.config.flags.clone(),
    }
    .markdown()
}

/// The "Production Figures" section (study files with `production = true`): one row per
/// configuration that ran the decision profile (engines, then the ladder's steps), from
/// its representative run.
fn production_section(
    w: &mut String,
    study: &StudyFile,
    o: &Outcomes,
    a: &Analysis,
    profile: &str,
) {
    let _ = writeln!(w, "## Production Figures\n");
    let _ = writeln!(
        w,
        "Profile {profile}; each configuration's representative run. Energy is the GPU's over the run (the DCGM exporter's energy counter, `nvidia-smi`'s power, or the simulator's power model); speculative decoding from the server's counters; the time to first answer token counts the answer (content) stream only, where TTFT counts reasoning too.\n"
    );
    let _ = writeln!(
        w,
        "| Configuration | Output tok/s | J per output token | Output tokens per J | Mean power (W) | Spec-decode acceptance | Mean accepted length | Mean TTFT of the answer (ms) |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let cell = |v: Option<f64>, digits: usize| {
        v.filter(|x| x.is_finite())
            .map_or("-".to_string(), |x| format!("{x:.digits$}"))
    };
    let mut seen = Vec::new();
    let configs = a
        .engines
        .iter()
        .map(|e| (e.name.clone(), &e.config))
        .chain(a.steps.iter().map(|s| (s.name.clone(), &s.config)));
    for (name, c) in configs {
        if seen.contains(&c.key()) {
            continue;
        }
        seen.push(c.key());
        let Some((_, r)) = representative(study, o, c, profile) else {
            continue;
        };
        let e = r.energy.as_ref();
        let s = r.spec_decode.as_ref();
        let answer = r
            .reasoning
            .as_ref()
            .and_then(|f| f.time_to_first_answer.as_ref())
            .and_then(|t| t.mean);
        let _ = writeln!(
            w,
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            cell(r.output_throughput_per_s, 2),
            cell(e.and_then(|e| e.joules_per_output_token), 4),
            cell(e.and_then(|e| e.output_tokens_per_joule), 3),
            cell(e.and_then(|e| e.mean_power_w), 1),
            s.and_then(|s| s.acceptance_rate)
                .map_or("-".to_string(), |x| format!("{:.1} %", x * 100.0)),
            cell(s.and_then(|s| s.mean_accepted_length), 2),
            cell(answer, 2),
        );
    }
    w.push('\n');
}

/// Builds the document from the study file and what has finished.
/// With `files`, a last section links the run files and server logs (relative to the
/// study directory).
pub fn render(study: &StudyFile, o: &Outcomes, a: &Analysis, files: bool) -> Document {
    let a = &with_rules(a);
    let mut w = String::new();
    let mut cx = Ctx {
        study,
        o,
        used: Vec::new(),
    };
    let w = &mut w;
    let goal = step_title(study.goal);
    let explanations = crate::study::observe::step_explanations(study, o, a);
    let extra = if files {
        crate::study::observe::files(study, o, a)
    } else {
        Vec::new()
    };
    let model_short = study.model.rsplit('/').next().unwrap_or(&study.model);
    let target = study.target_metric();
    let _ = writeln!(w, "# {}\n", study.title);
    // Conclusion.
    let _ = writeln!(w, "## Conclusion\n");
    let _ = writeln!(
        w,
        "Recommended configuration for optimizing {goal} of {model_short} on {}:\n",
        study.hardware
    );
    let _ = writeln!(w, "### Serving Command\n");
    let serving = a.recommended.as_ref().map(|c| serve_command(study, c));
    match &serving {
        Some(cmd) => fence(w, cmd),
        None => {
            let _ = writeln!(w, "No configuration finished: no engine's baseline ran.\n");
        }
    }
    let mut rows = Vec::new();
    let mut final_rows = Vec::new();
    if let (Some(b), Some(r)) = (&a.baseline, &a.recommended) {
        let _ = writeln!(
            w,
            "Comparison of benchmark results before and after optimization:\n"
        );
        if study.planned_repetitions() > 1 {
            let _ = writeln!(
                w,
                "Each cell is one run: the median run by {} of each configuration's \
                 repetitions; the decision table below compares their means.\n",
                target.label
            );
        }
        let mut latency_rows = Vec::new();
        let mut capacity_rows = Vec::new();
        for p in &study.final_.profiles {
            let title = profile_title(study, p);
            // The cells show the runs the verdict decided on (one n for both).
            let (b_runs, r_runs) = (
                o.runs_of(b, p, study.fixed_repetitions()),
                o.runs_of(r, p, study.fixed_repetitions()),
            );
            let values = |runs: &[&BenchmarkResult]| -> Vec<f64> {
                runs.iter().filter_map(|x| target.value(x)).collect()
            };
            let (bv, rv) = (values(&b_runs), values(&r_runs));
            let decision = decide_results(
                &b_runs,
                &r_runs,
                &target,
                &crate::study::plan::rule(study, b, r, false),
            )
            .map(with_rule);
            final_rows.push(FinalRow {
                profile: p.clone(),
                baseline: bv,
                recommended: rv,
                decision,
            });
            if let (Some((_, br)), Some((_, rr))) = (
                representative(study, o, b, p),
                representative(study, o, r, p),
            ) {
                let case = format!("{title} Profile");
                // A change the verdict found within noise (or below the minimum effect,
                // or undecided) is not coloured as better or worse: the cell carries the
                // verdict's words instead. Single runs without an interval keep
                // GPUStack's colours (the decision table says there is no interval).
                let undecided = final_rows
                    .last()
                    .and_then(|f| f.decision.as_ref())
                    .map(|d| d.call)
                    .filter(|c| {
                        matches!(
                            c,
                            Call::WithinNoise | Call::BelowMinimumEffect | Call::Undecided
                        )
                    })
                    .map(Call::as_str);
                let mut row = conclusion_row(&case, br, rr);
                if let (Some(v), Some(a)) = (undecided, row.optimized.annotation) {
                    row.optimized.annotation = Some(a.judged(v));
                }
                rows.push(row);
                latency_rows.push(latency_conclusion_markdown_judged(&case, br, rr, undecided));
                capacity_rows.push((case, br, rr));
            }
        }
        match study.goal {
            Goal::Throughput => {
                let _ = writeln!(w, "{}", ConclusionTable::new(rows).markdown());
            }
            Goal::Latency => {
                let _ = writeln!(w, "| Benchmark Case | {LATENCY_BASELINE_HEADER} | Optimized |\n|----------|-------------------------------------------|-----------|");
                for l in latency_rows {
                    let _ = writeln!(w, "{l}");
                }
                w.push('\n');
            }
            Goal::Capacity => {
                let _ = writeln!(w, "{}", capacity_conclusion_markdown(&capacity_rows));
            }
        }
        let finals: Vec<&Decision> = final_rows
            .iter()
            .filter_map(|f| f.decision.as_ref())
            .collect();
        let _ = writeln!(
            w,
            "Decision on {} per profile ({}):\n",
            target.label,
            describe_bases(&finals, "final")
        );
        let _ = writeln!(
            w,
            "| Profile | Baseline | Optimized | Verdict |\n|---|---|---|---|"
        );
        for f in &final_rows {
            let side = |v: &[f64]| {
                let (m, hw) = mean_interval(v);
                if v.is_empty() {
                    "not run".to_string()
                } else {
                    format!(
                        "{}{} (n={})",
                        fmt(m),
                        hw.map(|h| format!(" ± {}", fmt(h))).unwrap_or_default(),
                        v.len()
                    )
                }
            };
            let verdict = f
                .decision
                .as_ref()
                .map(|d| d.text())
                .unwrap_or_else(|| "no verdict".into());
            let _ = writeln!(
                w,
                "| {} | {} | {} | {} |",
                f.profile,
                side(&f.baseline),
                side(&f.recommended),
                verdict
            );
        }
        w.push('\n');
        let finals: Vec<(&str, Option<&Decision>)> = final_rows
            .iter()
            .map(|f| (f.profile.as_str(), f.decision.as_ref()))
            .collect();
        profiles::conclusion(w, study, o, a, &finals);
        cost::cost_table(w, study, o, a);
    }
    let _ = writeln!(w, "### Note\n");
    let ladder: Vec<&Decision> = a.steps.iter().filter_map(|s| s.decision.as_ref()).collect();
    let method_note = format!("These runs do not cover every combination of options: the best engine at its defaults is the starting point and each step is {} on {} (the {} profile; {}){}. This pruning finds a local optimum, which may not be the global one.", ladder_rule(study, &ladder), target.label, study.ladder.profiles[0], describe_bases(&ladder, "ladder"), guard_words(study));
    let _ = writeln!(w, "- {method_note}");
    if let (Goal::Capacity, Some(slo), Some((kind, _))) =
        (study.goal, study.slo_target(), study.search_options())
    {
        let _ = writeln!(w, "- {}", capacity_study_note(&slo.to_string(), kind));
    }
    if !study.final_.add.is_empty() {
        let _ = writeln!(w, "- The recommended command adds {} without a step of its own: it was measured only in the final comparison.", study.final_.add.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "));
    }
    for s in &a.steps {
        if let Status::Failed { reason } = &s.status {
            let _ = writeln!(w, "- Not tested: {} — {reason}.", s.name);
        }
    }
    for e in &a.engines {
        if let Status::Failed { reason } = &e.status {
            let _ = writeln!(w, "- Not tested: engine {} — {reason}.", e.name);
        }
    }
    for n in &study.notes {
        let _ = writeln!(w, "- {n}");
    }
    w.push('\n');
    // Experimental Setup.
    let _ = writeln!(
        w,
        "## Experimental Setup\n\n### Model\n\n{}\n\n### Hardware\n\n{}\n",
        study.model, study.hardware
    );
    let _ = writeln!(w, "### Engine Version\n");
    for e in &study.engines {
        let kind = match e.kind {
            EngineKind::Simulator => " (servebench's embedded simulator of vLLM 0.17.1 on an H200)",
            EngineKind::Command => "",
        };
        let _ = writeln!(
            w,
            "{} {}{kind}  ",
            e.name,
            e.version.as_deref().unwrap_or("(version not given)")
        );
    }
    w.push('\n');
    let _ = writeln!(w, "### Benchmark Method\n");
    let method_run = method_sentence(study, &ladder);
    let _ = writeln!(w, "{method_run}\n");
    let _ = writeln!(w, "### Benchmark Profiles\n");
    let mut names: Vec<&String> = study.ladder.profiles.iter().collect();
    for p in &study.final_.profiles {
        if !names.contains(&p) {
            names.push(p);
        }
    }
    let profiles: Vec<_> = names.iter().filter_map(|n| study.profile(n).ok()).collect();
    for p in &profiles {
        let _ = writeln!(w, "#### {}\n", p.title());
        let _ = writeln!(w, "```yaml\n{p}\n```\n");
    }
    let _ = writeln!(w, "### Open-Source Replacement\n");
    let _ = writeln!(
        w,
        "Without servebench, the same loads can be sent with guidellm:\n"
    );
    let mut seen_kind = Vec::new();
    for p in &profiles {
        let kind = match p.dataset {
            Dataset::ShareGpt { .. } => "ShareGPT",
            Dataset::Random { .. } => "Random",
            Dataset::Structured(ref spec) => spec.name(),
        };
        if seen_kind.contains(&kind) {
            continue;
        }
        seen_kind.push(kind);
        let _ = writeln!(w, "For profiles with dataset_name: {kind}:\n");
        let mut template = p.clone();
        let random = matches!(template.dataset, Dataset::Random { .. });
        if !random {
            template.request_rate = 1.0;
        }
        let cmd = template
            .guidellm_command("${target}", "${model_path}")
            .lines()
            .map(|l| placeholder_line(l, random))
            .collect::<Vec<_>>()
            .join("\n");
        fence(w, &cmd);
    }
    // Experiment Results.
    let decision_profile = study.ladder.profiles[0].as_str();
    let _ = writeln!(w, "## Experiment Results\n");
    let _ = writeln!(w, "### Baseline of the Inference Engine\n");
    for e in &a.engines {
        let _ = writeln!(w, "#### {}\n", e.name);
        cx.profile_blocks(w, &e.config);
    }
    let done: Vec<(String, &BenchmarkResult)> = a
        .engines
        .iter()
        .filter_map(|e| {
            representative(study, o, &e.config, decision_profile).map(|r| (e.name.clone(), r.1))
        })
        .collect();
    let pairs: Vec<(&str, &BenchmarkResult)> = done.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    if let Some(s) = goal_summary(study.goal, "Engine", &pairs) {
        let _ = writeln!(w, "{s}\n");
    }
    for s in &a.steps {
        let _ = writeln!(w, "### {}\n", s.name);
        cx.profile_blocks(w, &s.config);
        let outcome = if let Some(wc) = profiles::weighted_words(study, s) {
            let verb = if s.accepted { "Kept" } else { "Skipped" };
            format!("{verb}: {wc}, against {}", s.reference)
        } else if let Some(g) = profiles::guard_failure(study, s) {
            format!(
                "Skipped: better on {decision_profile} but {g}, against {}",
                s.reference
            )
        } else if s.accepted {
            format!(
                "Kept: {} than {}",
                s.decision.as_ref().map(|d| d.text()).unwrap_or_default(),
                s.reference
            )
        } else if let Some(d) = s
            .decision
            .as_ref()
            .filter(|d| d.call == crate::study::verdict::Call::NoInterval)
        {
            format!("Skipped: {} against {}", d.text(), s.reference)
        } else if let Some(rate) = s.success_rate.filter(|r| *r < 1.0) {
            format!("Skipped: success rate {:.1}%", rate * 100.0)
        } else if let Some(d) = &s.decision {
            format!("Skipped: {} against {}", d.text(), s.reference)
        } else if let Status::Failed { reason } = &s.status {
            format!("Skipped: {reason}")
        } else {
            "Not decided yet".to_string()
        };
        let rule = s
            .decision
            .as_ref()
            .map(|d| format!(" Rule: {}.", d.rule))
            .unwrap_or_default();
        let _ = writeln!(w, "{outcome}.{rule}\n");
        profiles::step_details(w, study, o, a, s);
        if let Some(e) = explanations.iter().find(|e| e.step == s.name) {
            let _ = writeln!(
                w,
                "Why (profile {decision_profile}; client records and server metrics): {}\n",
                e.explanation.paragraph().trim_end()
            );
        }
    }
    // Summary of Optimization Options.
    let _ = writeln!(w, "## Summary of Optimization Options\n");
    let base_run = a
        .baseline
        .as_ref()
        .and_then(|b| representative(study, o, b, decision_profile))
        .map(|x| x.1);
    if let Some(base) = base_run {
        let _ = writeln!(
            w,
            "| Benchmark Cases | Optimized | Baseline |\n| --- | --- | --- |"
        );
        let mut best_pct = None;
        for s in &a.steps {
            let _ = writeln!(
                w,
                "{}",
                ladder_row(study, o, base, &mut best_pct, s, decision_profile)
            );
        }
        w.push('\n');
    } else {
        let _ = writeln!(w, "No baseline finished.\n");
    }
    if study.production {
        production_section(w, study, o, a, decision_profile);
    }
    // Other Benchmark Cases.
    let _ = writeln!(w, "## Other Benchmark Cases\n");
    if let (Some(b), Some(r)) = (&a.baseline, &a.recommended) {
        for p in &study.final_.profiles {
            let title = profile_title(study, p);
            let _ = writeln!(w, "### {title} Profile\n");
            cx.block(w, b, p, "Baseline ");
            cx.block(w, r, p, "Optimized ");
            let (br, rr) = (
                representative(study, o, b, p),
                representative(study, o, r, p),
            );
            if let (Some((_, br)), Some((_, rr))) = (br, rr) {
                let pair = [("baseline", br), ("optimized", rr)];
                if let Some(s) = goal_summary(study.goal, "Configuration", &pair) {
                    let _ = writeln!(w, "{s}\n");
                }
            }
        }
    }
    startup::startup_section(w, o, a);
    if files {
        let _ = writeln!(w, "## Files\n");
        let _ = writeln!(w, "Every run is a servebench run file (`servebench report`, `compare` and `lint` read them); `journal.json` records the study's progress, `logs/` each server's output.\n");
        for k in &cx.used {
            if let Some((c, rest)) = k.split_once('/') {
                if let Some((p, r)) = rest.rsplit_once('/') {
                    let _ = writeln!(w, "- [{k}](runs/{c}/{p}-{r}.json)");
                }
            }
        }
        w.push('\n');
        if !extra.is_empty() {
            let _ = writeln!(w, "## Plots\n");
            let _ = writeln!(w, "[The HTML report](report.html) (one self-contained file: charts, a table per run, the explanations). The charts per profile:\n");
            for (path, _) in extra.iter().filter(|(p, _)| p.ends_with(".svg")) {
                let _ = writeln!(w, "- [{path}]({path})");
            }
            w.push('\n');
        }
    }
    let json = StudyJson {
        format: "servebench-study-document",
        version: 1,
        title: study.title.clone(),
        model: study.model.clone(),
        hardware: study.hardware.clone(),
        target: target.key.to_string(),
        repetitions: study.fixed_repetitions(),
        sequential: study.is_auto().then(|| study.design()),
        simulator_noise: study
            .engines
            .iter()
            .any(|e| e.kind == EngineKind::Simulator)
            .then(|| study.noise_on()),
        method: vec![method_note, method_run],
        analysis: a.clone(),
        serving_command: serving,
        conclusion: final_rows,
        runs: cx.used,
        explanations,
        startups: o.startups.clone(),
    };
    Document {
        markdown: std::mem::take(w).trim_end().to_string() + "\n",
        json,
        files: extra,
    }
}

/// One line of a guidellm command with the profile's values replaced by the seed's
/// `${placeholders}` (the dataset's token counts and seed only for random datasets).
fn placeholder_line(l: &str, random: bool) -> String {
    if l.contains("--rate ") {
        "  --rate ${request_rate} \\".to_string()
    } else if l.contains("--max-requests ") {
        "  --max-requests ${total_requests} \\".to_string()
    } else if random && l.contains("--data ") {
        "  --data \"prompt_tokens=${dataset_input_tokens},output_tokens=${dataset_output_tokens}\" \\".to_string()
    } else if random && l.contains("--random-seed") {
        "  --random-seed ${dataset_seed:-42}".to_string()
    } else {
        l.to_string()
    }
}
