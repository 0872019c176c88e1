//! Why a foreign file could not be read: [`ImportError`], naming the file, the line or
//! the JSON path and the reason.

use std::path::PathBuf;

/// What kind of JSON failure an [`ImportError::Json`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// Not well-formed JSON.
    Syntax,
    /// The text ended in the middle of a value (a truncated file).
    Truncated,
    /// Well-formed JSON with a value of the wrong type or shape.
    Data,
}

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The JSON could not be parsed into the expected shape.
    #[error("line {line}, column {column}, at {path}: {message}")]
    Json {
        /// JSON path of the value being read (`$.benchmarks[0].metrics`).
        path: String,
        /// 1-based line (of the whole file, for JSON Lines).
        line: usize,
        /// 1-based byte column.
        column: usize,
        /// Syntax error, truncation or wrong type.
        kind: JsonErrorKind,
        /// What serde_json said.
        message: String,
    },
    /// A schema this crate does not read (another major version, an older layout).
    #[error("{path}: unsupported {format} schema: {found}")]
    UnsupportedSchema {
        /// `guidellm`, `vllm`, `sglang`.
        format: &'static str,
        /// Where the version marker is.
        path: String,
        /// What was found.
        found: String,
    },
    /// Well-formed data with impossible values (negative or non-finite durations, a
    /// request that ends before it starts, …).
    #[error("{path}: {message}")]
    Invalid {
        /// JSON path (or `line N`) of the offending value.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// No benchmark or no request at all.
    #[error("{path}: no requests")]
    Empty {
        /// JSON path (or `line N`) of the empty run.
        path: String,
    },
    /// A recomputation needs per-request records the file does not have.
    #[error("{run}: no per-request records to recompute from ({hint})")]
    NoRecords {
        /// The run.
        run: String,
        /// Why, and how to get them.
        hint: String,
    },
    /// A recomputation the run's records cannot support faithfully.
    #[error("{run}: cannot recompute: {reason}")]
    CannotRecompute {
        /// The run.
        run: String,
        /// Why.
        reason: String,
    },
    /// A CSV file that does not have the expected rows or columns.
    #[error("line {line}{}: {message}", column.as_ref().map(|c| format!(", column `{c}`")).unwrap_or_default())]
    Csv {
        /// 1-based line.
        line: usize,
        /// The column's header, when the error is about one cell.
        column: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A YAML file that could not be parsed.
    #[error("line {line}, column {column}: {message}")]
    Yaml {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the YAML parser said.
        message: String,
    },
    /// The input is none of the formats this crate reads.
    #[error("unrecognised input: {0}")]
    UnknownFormat(String),
    /// An error inside a named file.
    #[error("{}: {source}", file.display())]
    InFile {
        /// The file.
        file: PathBuf,
        /// The error.
        #[source]
        source: Box<ImportError>,
    },
}

impl ImportError {
    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The error without its [`ImportError::InFile`] wrapper.
    pub fn innermost(&self) -> &ImportError {
        match self {
            ImportError::InFile { source, .. } => source.innermost(),
            other => other,
        }
    }
}
