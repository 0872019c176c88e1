//! `servebench study merge DIR… --out DIR`: the study directories of a sharded study's N
//! shards (`study run --shard K/N`) merged into the directory one unsharded study would
//! have written — every run's shard files merged ([`super::shards::merge_shard_runs`], the
//! merge the shards decided on), the journal, `study.toml`, the server logs (shard 1's:
//! it launched the servers) and the document ([`crate::format::study::render`], written by
//! [`crate::app::study::merge_studies`]).
//!
//! It refuses directories of different studies, a shard set with a shard missing or given
//! twice, and runs some shard has not finished, naming the directory and run; and a study
//! the shards have not finished (resume them first).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::journal::{Journal, RunEntry};
use super::plan::{analyse, Outcomes};
use super::shards::merge_shard_runs;
use super::StudyError;
use crate::driver::shard::Shard;
use crate::runfile::RunFile;

/// Why shard directories do not merge into a study. Each names the directory or run.
#[derive(Debug, thiserror::Error)]
pub enum StudyMergeError {
    /// Nothing to merge.
    #[error("no study directories to merge")]
    Empty,
    /// A study directory of an unsharded study.
    #[error("{}: not a shard of a study (its journal records no shard)", dir.display())]
    NotAShard {
        /// The directory.
        dir: PathBuf,
    },
    /// Another study, or another shard count.
    #[error("{}: {what} differs from {}'s: shards of different studies", dir.display(), first.display())]
    Different {
        /// The directory.
        dir: PathBuf,
        /// The first directory.
        first: PathBuf,
        /// `study file` or `shard count`.
        what: String,
    },
    /// The same shard twice.
    #[error("{}: shard {shard} is also {}", dir.display(), other.display())]
    DuplicateShard {
        /// The directory.
        dir: PathBuf,
        /// The other directory holding it.
        other: PathBuf,
        /// The shard.
        shard: Shard,
    },
    /// Shards missing.
    #[error("shards {missing:?} of {count} are missing")]
    MissingShards {
        /// The missing shards.
        missing: Vec<u32>,
        /// The shard count.
        count: u32,
    },
    /// A run some shard has not finished.
    #[error("{}: run {run} is missing (finished by {}): resume that shard first", dir.display(), by.display())]
    MissingRun {
        /// The directory lacking it.
        dir: PathBuf,
        /// The run key.
        run: String,
        /// A directory that has it.
        by: PathBuf,
    },
    /// The shards have not finished the study.
    #[error("the shards have not finished the study (next: {next}): resume them first")]
    Unfinished {
        /// The session still to run.
        next: String,
    },
    /// The output directory holds a study already.
    #[error("{}: holds a study already (merge into a new directory)", dir.display())]
    OutExists {
        /// The directory.
        dir: PathBuf,
    },
}

/// What [`merge_studies`] wrote.
#[derive(Debug, Clone)]
pub struct MergedStudy {
    /// The shard count.
    pub shards: u32,
    /// Runs merged.
    pub runs: usize,
    /// The study (the first shard's file).
    pub study: super::StudyFile,
    /// The merged outcomes.
    pub outcomes: Outcomes,
    /// Their analysis (what the document reports).
    pub analysis: super::plan::Analysis,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> StudyError {
    StudyError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn bad(e: StudyMergeError) -> StudyError {
    e.into()
}

/// Reads the shards' journals, checked and in shard order.
fn journals(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, Journal)>, StudyError> {
    let mut by_shard: Vec<(Shard, PathBuf, Journal)> = Vec::new();
    for dir in dirs {
        let j = Journal::read(dir)?;
        let Some(shard) = j.shard else {
            return Err(bad(StudyMergeError::NotAShard { dir: dir.clone() }));
        };
        if let Some((s0, d0, j0)) = by_shard.first() {
            let what = if j.study != j0.study {
                Some("study file")
            } else if shard.count != s0.count {
                Some("shard count")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(bad(StudyMergeError::Different {
                    dir: dir.clone(),
                    first: d0.clone(),
                    what: what.into(),
                }));
            }
        }
        if let Some((_, other, _)) = by_shard.iter().find(|(s, _, _)| *s == shard) {
            return Err(bad(StudyMergeError::DuplicateShard {
                dir: dir.clone(),
                other: other.clone(),
                shard,
            }));
        }
        by_shard.push((shard, dir.clone(), j));
    }
    let count = by_shard
        .first()
        .map(|(s, _, _)| s.count)
        .ok_or(bad(StudyMergeError::Empty))?;
    let missing: Vec<u32> = (1..=count)
        .filter(|k| !by_shard.iter().any(|(s, _, _)| s.index == *k))
        .collect();
    if !missing.is_empty() {
        return Err(bad(StudyMergeError::MissingShards { missing, count }));
    }
    by_shard.sort_by_key(|(s, _, _)| s.index);
    Ok(by_shard.into_iter().map(|(_, d, j)| (d, j)).collect())
}

/// Merges the shard directories `dirs` (any order) into `out`, written as an unsharded
/// study's directory (its document is written by [`crate::app::study::merge_studies`]).
pub fn merge_studies(dirs: &[PathBuf], out: &Path) -> Result<MergedStudy, StudyError> {
    let shards = journals(dirs)?;
    let Some((first_dir, first)) = shards.first() else {
        return Err(bad(StudyMergeError::Empty));
    };
    // Every shard must have finished the same runs.
    let all: BTreeSet<&String> = shards.iter().flat_map(|(_, j)| j.runs.keys()).collect();
    for run in &all {
        let by = shards.iter().find(|(_, j)| j.runs.contains_key(*run));
        if let Some((dir, _)) = shards.iter().find(|(_, j)| !j.runs.contains_key(*run)) {
            return Err(bad(StudyMergeError::MissingRun {
                dir: dir.clone(),
                run: (*run).clone(),
                by: by.map(|(d, _)| d.clone()).unwrap_or_default(),
            }));
        }
    }
    let mut journal = Journal::new(first.study.clone());
    journal.configs = first.configs.clone();
    journal.failures = first.failures.clone();
    // The servers are launched by shard 1, which records their start-ups.
    journal.startups = first.startups.clone();
    let mut outcomes = Outcomes {
        failures: first.failures.clone(),
        startups: first.startups.clone(),
        ..Outcomes::default()
    };
    let mut merged_runs = Vec::new();
    for (run, entry) in &first.runs {
        let mut parts = Vec::with_capacity(shards.len());
        for (dir, j) in &shards {
            let e = &j.runs[run];
            let path = dir.join(&e.file);
            let file = RunFile::read(&path).map_err(|e| StudyError::File {
                path: path.clone(),
                message: e.to_string(),
            })?;
            parts.push((path.display().to_string(), file));
        }
        let merged = merge_shard_runs(&parts, run)?;
        let result = serde_json::to_vec(&merged.result)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| merged.result.clone());
        outcomes
            .observed
            .insert(run.clone(), super::observe::Observed::of(&merged));
        outcomes.results.insert(run.clone(), result);
        journal.runs.insert(
            run.clone(),
            RunEntry {
                merged: None,
                ..entry.clone()
            },
        );
        merged_runs.push((entry.file.clone(), merged));
    }
    let analysis = analyse(&first.study, &outcomes);
    if let Some(next) = &analysis.pending {
        return Err(bad(StudyMergeError::Unfinished {
            next: format!("{} [{}]", next.purpose, next.config.key()),
        }));
    }
    if out.join(super::journal::FILE).exists() {
        return Err(bad(StudyMergeError::OutExists {
            dir: out.to_path_buf(),
        }));
    }
    for (rel, run) in &merged_runs {
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        run.write_atomic(&path).map_err(|e| io_err(&path, e))?;
    }
    copy_tree(&first_dir.join("logs"), &out.join("logs"))?;
    let toml = first_dir.join("study.toml");
    if toml.exists() {
        let text = std::fs::read(&toml).map_err(|e| io_err(&toml, e))?;
        let to = out.join("study.toml");
        super::journal::write_atomic(&to, &text).map_err(|e| io_err(&to, e))?;
    }
    journal.events.push(format!(
        "merged from {} shards: {}",
        shards.len(),
        shards
            .iter()
            .map(|(d, _)| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    journal.write(out)?;
    Ok(MergedStudy {
        shards: shards.len() as u32,
        runs: merged_runs.len(),
        study: first.study.clone(),
        outcomes,
        analysis,
    })
}

/// Copies the files of `from` (one level: the server logs) into `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), StudyError> {
    std::fs::create_dir_all(to).map_err(|e| io_err(to, e))?;
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_err(from, e))?;
        let path = entry.path();
        if path.is_file() {
            let dest = to.join(entry.file_name());
            std::fs::copy(&path, &dest).map_err(|e| io_err(&dest, e))?;
        }
    }
    Ok(())
}
