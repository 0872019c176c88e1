//! Tuning studies: the seed's whole job — pick an engine at its defaults, try optimization
//! steps one at a time keeping what helps, compare baseline and the recommended
//! configuration on every profile, and write the document.
//!
//! The pipeline: a [`StudyFile`] (TOML, [`file::EXPLAIN`]) → [`plan::analyse`] decides what
//! to run next from what has finished → the [`Runner`] runs it on the embedded simulator or
//! on servers it launches ([`process`]), writing each run file and the [`journal`] as it
//! goes → [`document::render`] writes `STUDY.md` and `study.json`. [`estimate`] is the plan
//! of a study with the simulator's timings.
//!
//! ```
//! use servebench::study::{self, StudyFile};
//! let text = r#"
//! format = "servebench-study"
//! version = 1
//! title = "Tiny"
//! model = "Qwen/Qwen3.5-35B-A3B"
//! hardware = "NVIDIA H200"
//! [profiles.tiny]
//! dataset_name = "Random"
//! dataset_input_tokens = 64
//! dataset_output_tokens = 16
//! request_rate = 1000
//! total_requests = 8
//! [[engines]]
//! name = "vLLM"
//! kind = "simulator"
//! flags = ["--max-model-len=32768"]
//! [ladder]
//! profiles = ["tiny"]
//! [[ladder.steps]]
//! name = "Quantization"
//! model = "Qwen/Qwen3.5-35B-A3B-FP8"
//! [final]
//! profiles = ["tiny"]
//! "#;
//! let s = StudyFile::parse(text, "tiny.toml".as_ref()).unwrap();
//! let doc = study::run_in_memory(&s).unwrap();
//! assert!(doc.markdown.contains("## Summary of Optimization Options"));
//! assert!(doc.markdown.contains("vllm serve Qwen/Qwen3.5-35B-A3B"));
//! ```

pub mod document;
pub mod file;
pub mod flags;
pub mod journal;
pub mod merged;
mod method;
pub mod observe;
pub mod plan;
pub mod process;
pub mod runner;
pub mod shards;
pub mod verdict;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

pub use document::{render, Document};
pub use file::StudyFile;
pub use runner::{Finish, Runner};

/// A study error: names the file (and the key or line) or the bad usage.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A study file or journal that does not parse or check.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line/column or key.
        message: String,
    },
    /// Reading or writing failed.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// A request that cannot be carried out (`--out` without a directory, …).
    #[error("{0}")]
    Usage(String),
    /// A sharded study that cannot go on or merge ([`shards`], [`merged`]).
    #[error(transparent)]
    Sharded(Box<shards::ShardedError>),
    /// Shard directories that do not merge into one study ([`merged`]).
    #[error(transparent)]
    StudyMerge(Box<merged::StudyMergeError>),
}

impl From<shards::ShardedError> for StudyError {
    fn from(e: shards::ShardedError) -> Self {
        StudyError::Sharded(Box::new(e))
    }
}

impl From<merged::StudyMergeError> for StudyError {
    fn from(e: merged::StudyMergeError) -> Self {
        StudyError::StudyMerge(Box::new(e))
    }
}

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
    if let (Some(b), Some(rc)) = (&a.baseline, &a.recommended) {
        configs.push(("final: baseline".into(), b.clone()));
        configs.push(("final: recommended".into(), rc.clone()));
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
    let head = format!(
        "Plan of \"{}\": {n} server sessions, {runs} runs; estimated wall time {h:.0} h {m:.0} min ({total_s:.0} s) from the simulator{}\n",
        study.title,
        if unknown > 0 { format!(", {unknown} runs not estimated") } else { String::new() }
    );
    let tail = if study.is_auto() {
        plan::expected_runs(study, &a, &r.outcomes, runs, total_s)
    } else {
        String::new()
    };
    Ok(head + &out + &tail)
}
