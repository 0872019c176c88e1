//! What a study shows beyond its figures: each run's client records and server metrics
//! ([`Observed`], kept from the run files), a paragraph per ladder step explaining its change
//! of TTFT and TPOT against the configuration it was compared with
//! ([`crate::observe::explain`]), and with the `plot` feature the charts (`plots/PROFILE/`)
//! and the HTML report (`report.html`) written beside the document. All of it is a function
//! of the study file and the run files, like the document itself.

use std::time::Duration;

use super::file::StudyFile;
use super::journal::{run_key, Configuration};
use super::plan::representative;
use super::plan::{Analysis, Outcomes};
use crate::observe::explain::{explain, Explanation, RunView};
use crate::observe::ServerSeries;
use crate::record::RequestRecord;
use crate::runfile::RunFile;

/// How often a study samples the server's metrics: a launched server's `/metrics` is
/// scraped at this interval, the simulator's are sampled at it in virtual time.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// One finished run's records and server metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The client's records.
    pub records: Vec<RequestRecord>,
    /// The server's metrics over the run, if scraped or sampled.
    pub server: Option<ServerSeries>,
}

impl Observed {
    /// What a run file holds of it.
    pub fn of(run: &RunFile) -> Observed {
        Observed {
            records: run.records.clone(),
            server: run.server_metrics.clone(),
        }
    }
}

/// A ladder step's change against the configuration it was compared with, on the ladder's
/// decision profile (the representative repetition of each side).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepExplanation {
    /// The step's name.
    pub step: String,
    /// What it was compared with (`baseline` or a step's name).
    pub reference: String,
    /// The reference's run key.
    pub base_key: String,
    /// The step's run key.
    pub candidate_key: String,
    /// The explanation.
    pub explanation: Explanation,
}

/// The configuration a step was compared with.
fn reference_config<'a>(a: &'a Analysis, reference: &str) -> Option<&'a Configuration> {
    if reference == "baseline" {
        return a.baseline.as_ref();
    }
    a.steps
        .iter()
        .find(|s| s.name == reference)
        .map(|s| &s.config)
}

/// The representative run of `c` on `profile`: its key and observation.
fn observed_run<'a>(
    study: &StudyFile,
    o: &'a Outcomes,
    c: &Configuration,
    profile: &str,
) -> Option<(String, &'a Observed)> {
    let (rep, _) = representative(study, o, c, profile)?;
    let key = run_key(&c.key(), profile, rep);
    let obs = o.observed.get(&key)?;
    Some((key, obs))
}

/// The explanation of every step whose runs and reference's runs finished and were
/// observed, in ladder order.
pub fn step_explanations(study: &StudyFile, o: &Outcomes, a: &Analysis) -> Vec<StepExplanation> {
    let Some(profile) = study.ladder.profiles.first() else {
        return Vec::new();
    };
    a.steps
        .iter()
        .filter_map(|s| {
            let base = reference_config(a, &s.reference)?;
            let (base_key, b) = observed_run(study, o, base, profile)?;
            let (candidate_key, c) = observed_run(study, o, &s.config, profile)?;
            let explanation = explain(
                &RunView {
                    label: &s.reference,
                    records: &b.records,
                    server: b.server.as_ref(),
                },
                &RunView {
                    label: &s.name,
                    records: &c.records,
                    server: c.server.as_ref(),
                },
            );
            Some(StepExplanation {
                step: s.name.clone(),
                reference: s.reference.clone(),
                base_key,
                candidate_key,
                explanation,
            })
        })
        .collect()
}

/// The configurations a study's charts show per profile, labelled, in document order
/// (engines' baselines, steps, then the recommended configuration), each once.
fn labelled_configs(a: &Analysis) -> Vec<(String, Configuration)> {
    let mut out: Vec<(String, Configuration)> = Vec::new();
    let mut push = |label: String, c: &Configuration| {
        if !out.iter().any(|(_, x)| x.key() == c.key()) {
            out.push((label, c.clone()));
        }
    };
    for e in &a.engines {
        push(format!("{} baseline", e.name), &e.config);
    }
    for s in &a.steps {
        push(s.name.clone(), &s.config);
    }
    if let Some(r) = &a.recommended {
        push("recommended".into(), r);
    }
    out
}

/// Every profile of the study, ladder profiles first.
fn profiles(study: &StudyFile) -> Vec<String> {
    let mut names: Vec<String> = study.ladder.profiles.clone();
    for p in &study.final_.profiles {
        if !names.contains(p) {
            names.push(p.clone());
        }
    }
    names
}

/// Files written beside the document: `(path relative to the study directory, contents)`.
pub type Files = Vec<(String, String)>;

/// The charts of every profile (`plots/PROFILE/*.svg`) and the HTML report (`report.html`:
/// the ladder's decision profile with every configuration, each step's explanation, and
/// links to the other profiles' charts). Empty without the `plot` feature or without a
/// finished run.
#[cfg(feature = "plot")]
pub fn files(study: &StudyFile, o: &Outcomes, a: &Analysis) -> Files {
    use crate::observe::html::{report, PageSection};
    use crate::observe::plot::{charts, PlotRun};
    let configs = labelled_configs(a);
    let mut out = Files::new();
    let mut first: Option<String> = None;
    for p in profiles(study) {
        let runs: Vec<(String, &crate::result::BenchmarkResult, &Observed)> = configs
            .iter()
            .filter_map(|(label, c)| {
                let (rep, result) = representative(study, o, c, &p)?;
                let obs = o.observed.get(&run_key(&c.key(), &p, rep))?;
                Some((label.clone(), result, obs))
            })
            .collect();
        let plot_runs: Vec<PlotRun> = runs
            .iter()
            .map(|(label, result, obs)| PlotRun {
                server: obs.server.as_ref(),
                ..PlotRun::new(label, result, &obs.records)
            })
            .collect();
        let Ok(drawn) = charts(&plot_runs) else {
            continue;
        };
        for c in &drawn {
            out.push((format!("plots/{p}/{}", c.file), c.svg.clone()));
        }
        if first.is_none() {
            first = Some(p.clone());
            let mut sections: Vec<PageSection> = step_explanations(study, o, a)
                .iter()
                .map(|e| {
                    PageSection::text(
                        format!("{}: {} → {} (profile {p})", e.step, e.reference, e.step),
                        e.explanation.render(),
                    )
                })
                .collect();
            sections.push(PageSection::text(
                "Other profiles",
                "The charts of every profile are in plots/PROFILE/ beside this report (listed in STUDY.md).",
            ));
            let title = format!("{} — profile {p}", study.title);
            out.push((
                "report.html".into(),
                report(&title, &plot_runs, &drawn, &sections),
            ));
        }
    }
    out
}

/// Without the `plot` feature there are no charts.
#[cfg(not(feature = "plot"))]
pub fn files(_study: &StudyFile, _o: &Outcomes, _a: &Analysis) -> Files {
    let _ = (labelled_configs, profiles);
    Files::new()
}
