//! A quality run as `servebench quality --output Q.json` writes it: every item's outcome
//! (so two runs can be paired item by item) and the accuracy with its interval.

use serde::{Deserialize, Serialize};

use super::paired::Accuracy;

/// The value of a quality file's `format`.
pub const QUALITY_FORMAT: &str = "servebench-quality";

/// One item's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemOutcome {
    /// The item's id.
    pub id: String,
    /// Whether the response was right.
    pub right: bool,
    /// The answer the scorer read from the response (`None`: none, or the request failed).
    #[serde(default)]
    pub answer: Option<String>,
    /// Why the request failed, when it did (counted wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A quality run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityRun {
    /// Always [`QUALITY_FORMAT`].
    pub format: String,
    /// 1.
    pub version: u32,
    /// The server asked.
    pub target: String,
    /// The model named in the requests, if any.
    #[serde(default)]
    pub model: Option<String>,
    /// The eval set (`synthetic:N` or its file name).
    pub eval: String,
    /// The sampling the items were asked with.
    pub sampling: String,
    /// Every item's outcome, in the eval set's order.
    pub items: Vec<ItemOutcome>,
    /// The accuracy over them.
    pub accuracy: Accuracy,
}

/// A quality file that does not read.
#[derive(Debug, thiserror::Error)]
pub enum QualityFileError {
    /// Reading failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        message: String,
    },
    /// Not a quality file.
    #[error("{path}: not a servebench quality file: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong (with line and column).
        message: String,
    },
}

impl QualityRun {
    /// Reads `path`.
    pub fn read(path: &str) -> Result<QualityRun, QualityFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| QualityFileError::Io {
            path: path.into(),
            message: e.to_string(),
        })?;
        let run: QualityRun =
            serde_json::from_str(&text).map_err(|e| QualityFileError::Format {
                path: path.into(),
                message: e.to_string(),
            })?;
        if run.format != QUALITY_FORMAT {
            return Err(QualityFileError::Format {
                path: path.into(),
                message: format!("`format` is `{}`, expected `{QUALITY_FORMAT}`", run.format),
            });
        }
        Ok(run)
    }

    /// The items' outcomes in order, for [`super::paired::compare_runs`].
    pub fn outcomes(&self) -> Vec<bool> {
        self.items.iter().map(|i| i.right).collect()
    }
}
