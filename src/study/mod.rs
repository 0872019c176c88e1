//! Tuning studies: the seed's whole job — pick an engine at its defaults, try optimization
//! steps one at a time keeping what helps, compare baseline and the recommended
//! configuration on every profile, and write the document.
//!
//! The pipeline: a [`StudyFile`] (TOML, [`EXPLAIN`]) → the plan decides what
//! to run next from what has finished → the [`Runner`](crate::app::study::Runner) runs it on the embedded simulator or
//! on servers it launches ([`fill_command`]), writing each run file and the [`Journal`] as it
//! goes → [`crate::format::study::render`] writes `STUDY.md` and `study.json`.
//! [`crate::app::study::estimate`] is the plan
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
//! let doc = servebench::app::study::run_in_memory(&s).unwrap();
//! assert!(doc.markdown.contains("## Summary of Optimization Options"));
//! assert!(doc.markdown.contains("vllm serve Qwen/Qwen3.5-35B-A3B"));
//! ```

pub(crate) mod endpoint;
pub(crate) mod explain;
pub(crate) mod file;
pub(crate) mod flags;
pub(crate) mod journal;
pub(crate) mod ladder;
pub(crate) mod merged;
pub(crate) mod observe;
pub(crate) mod plan;
pub(crate) mod process;
pub(crate) mod quality;
pub(crate) mod repetitions;
pub(crate) mod shards;
pub(crate) mod startup;
pub(crate) mod verdict;

use std::path::PathBuf;

pub use endpoint::{EndpointSpec, ENDPOINT_NAMES};
pub use explain::EXPLAIN;
pub use file::{
    CapacitySpec, EngineKind, EngineSpec, FinalSpec, Goal, LadderRule, LadderSpec, NoiseMode,
    NoiseSpec, Order, Repetitions, StepSpec, StudyFile,
};
pub use file::{FORMAT as STUDY_FORMAT, VERSION as STUDY_VERSION};
pub use flags::{sim_config, SIM_GPU};
pub use journal::{run_key, write_atomic, Configuration, Failure, Journal, LiveServer, RunEntry};
pub use journal::{FORMAT as JOURNAL_FORMAT, VERSION as JOURNAL_VERSION};
pub use ladder::{ProfileVerdict, DEFAULT_TOLERANCE_PERCENT};
pub use merged::{merge_studies, MergedStudy, StudyMergeError};
pub use process::{
    check_placeholders, fill_command, group_alive, signal_number, Fill, RedactingCopy, Signal,
};
pub use quality::{QualitySpec, DEFAULT_SIM_ACCURACY};
pub use shards::{refuse_simulators, ShardedError};
pub use startup::Startup;
pub use verdict::{
    decide, decide_capacity, Call, Decision, DETERMINISTIC, MODEL_ERROR, NO_BASIS, REPETITIONS,
    WITHIN_RUN,
};

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
    /// A command engine names an API-key variable (`api_key_env`) that is not set: its
    /// server would start without authentication.
    #[error("engine `{engine}`: api_key_env names `{var}`, which is not set (or empty) in the environment; set it, or remove api_key_env")]
    ApiKeyUnset {
        /// The engine's name.
        engine: String,
        /// The variable.
        var: String,
    },
    /// A request that cannot be carried out (`--out` without a directory, …).
    #[error("{0}")]
    Usage(String),
    /// A sharded study that cannot go on or merge ([`refuse_simulators`], [`merge_studies`]).
    #[error(transparent)]
    Sharded(Box<shards::ShardedError>),
    /// Shard directories that do not merge into one study ([`merge_studies`]).
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
