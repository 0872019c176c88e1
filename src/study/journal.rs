//! The study directory's journal (`journal.json`): the study file, every configuration,
//! every finished run (its run file under `runs/`), every recorded failure and the server
//! running right now, rewritten atomically after each event so that a crash loses nothing
//! finished and `--resume` knows what is left.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::file::StudyFile;
use super::StudyError;

/// The value of the journal's `format` key.
pub const FORMAT: &str = "servebench-study-journal";
/// The journal version this crate writes and reads.
pub const VERSION: u32 = 1;
/// The journal's file name in the study directory.
pub const FILE: &str = "journal.json";

/// A serving configuration: engine, model and flags. Its [`key`](Configuration::key) names
/// its runs and files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Configuration {
    /// The engine's name (from the study file).
    pub engine: String,
    /// The model served.
    pub model: String,
    /// The flags, in order.
    pub flags: Vec<String>,
}

impl Configuration {
    /// A stable name: the engine's name in lower case and a 64-bit FNV-1a hash of model and
    /// flags (`vllm-3f2a…`).
    pub fn key(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in std::iter::once(&self.model).chain(self.flags.iter()) {
            for b in part.bytes().chain(std::iter::once(0)) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        let engine: String = self
            .engine
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        format!("{engine}-{h:016x}")
    }
}

/// The key of one run: `CONFIG/PROFILE/rN`.
pub fn run_key(config: &str, profile: &str, rep: u32) -> String {
    format!("{config}/{profile}/r{rep}")
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// The configuration's key.
    pub config: String,
    /// The profile's name.
    pub profile: String,
    /// The repetition, from 1.
    pub rep: u32,
    /// The run file, relative to the study directory (a sharded study's: this shard's part).
    pub file: String,
    /// A sharded study's: the run merged from every shard's part (what the decisions saw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<String>,
}

/// A configuration that failed (never healthy, crashed, wrong command, not modelled).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// What happened, for the document.
    pub reason: String,
    /// The server log, relative to the study directory, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Whether a resume may retry it (a server failure); `false` for a configuration the
    /// simulator cannot model.
    pub retryable: bool,
}

/// The server running now (so that a resume after a crash of the runner can stop it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveServer {
    /// The configuration's key.
    pub config: String,
    /// Process id = process-group id.
    pub pid: i32,
    /// The launch command with `{api_key}` unfilled.
    pub argv: Vec<String>,
}

/// The journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The study being run.
    pub study: StudyFile,
    /// Every configuration met so far, by key.
    pub configs: BTreeMap<String, Configuration>,
    /// Finished runs, by run key.
    pub runs: BTreeMap<String, RunEntry>,
    /// Failed configurations, by key.
    pub failures: BTreeMap<String, Failure>,
    /// The server running now, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<LiveServer>,
    /// The shard this directory holds, for a sharded study (`study run --shard K/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::driver::shard::Shard>,
    /// What happened, in order (launches, failures, resumes): for people, not the document.
    #[serde(default)]
    pub events: Vec<String>,
    /// Each launched configuration's start-ups, by key, in launch order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub startups: BTreeMap<String, Vec<super::startup::Startup>>,
    /// Each configuration's answers to the `[quality]` eval set, by key (right or not, in
    /// the set's order).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub quality: BTreeMap<String, Vec<bool>>,
}

impl Journal {
    /// An empty journal for `study`.
    pub fn new(study: StudyFile) -> Journal {
        Journal {
            format: FORMAT.into(),
            version: VERSION,
            study,
            configs: BTreeMap::new(),
            runs: BTreeMap::new(),
            failures: BTreeMap::new(),
            server: None,
            shard: None,
            events: Vec::new(),
            startups: BTreeMap::new(),
            quality: BTreeMap::new(),
        }
    }

    /// Reads `DIR/journal.json`.
    pub fn read(dir: &Path) -> Result<Journal, StudyError> {
        let path = dir.join(FILE);
        let bytes = std::fs::read(&path).map_err(|e| StudyError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        let j: Journal =
            serde_path_to_error::deserialize(&mut de).map_err(|e| StudyError::File {
                path: path.clone(),
                message: format!("at `{}`: {}", e.path(), e.inner()),
            })?;
        if j.format != FORMAT || j.version != VERSION {
            return Err(StudyError::File {
                path,
                message: format!(
                    "not a study journal of version {VERSION} (format `{}`, version {})",
                    j.format, j.version
                ),
            });
        }
        Ok(j)
    }

    /// Writes `DIR/journal.json` atomically.
    pub fn write(&self, dir: &Path) -> Result<(), StudyError> {
        let path = dir.join(FILE);
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| StudyError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        write_atomic(&path, &bytes).map_err(|e| StudyError::Io {
            path,
            message: e.to_string(),
        })
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::atomic::write(path, bytes)
}
