//! The loader's one error type: which file, what it was recognised as, and why it did not
//! fit (with the line, JSON path or field the format's parser names).

use std::fmt;

use super::Format;
use crate::format::text::ParseError;
use crate::import::ImportError;

/// Why a file could not be loaded.
///
/// Its `Display` is `FILE: AS: WHY`, e.g. `run.json: a vLLM result (JSON): line 1, column
/// 20, at $.completed: invalid type: string "x", expected a number`.
#[derive(Debug)]
pub struct LoadError {
    /// The file's name as given (`<stdin>` for standard input).
    pub file: String,
    /// What the file was recognised as, when it was.
    pub format: Option<Format>,
    /// Why it did not fit.
    pub kind: LoadErrorKind,
}

/// The reason inside a [`LoadError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
    /// The file is empty (or only blank).
    #[error("empty input")]
    Empty,
    /// The bytes are not text: a NUL byte, or bytes that are not UTF-8.
    #[error("line {line}: {} (invalid byte at offset {offset})", if *nul { "binary data, not text" } else { "not UTF-8 text" })]
    Binary {
        /// 1-based line of the first non-text byte.
        line: usize,
        /// Byte offset of the first non-text byte.
        offset: usize,
        /// Whether that byte is a NUL (binary data) rather than invalid UTF-8.
        nul: bool,
    },
    /// Text that is none of the formats this crate reads.
    #[error(
        "not a format servebench reads (a text report, a servebench result or run file, \
         guidellm JSON/YAML/CSV, vLLM JSON/JSON Lines, SGLang JSON Lines, aiperf \
         JSON/JSON Lines/CSV); it starts with `{start}`"
    )]
    Unrecognised {
        /// The first line (cut to 60 characters).
        start: String,
    },
    /// A text report whose blocks do not parse.
    #[error("{0}")]
    Text(#[source] ParseError),
    /// A text without any "Serving Benchmark Result" block (or a file without any run).
    #[error("no benchmark run in it{0}")]
    NoRuns(String),
    /// The format's own parser failed (line, column, JSON path or field in the message).
    #[error("{0}")]
    Import(#[source] ImportError),
    /// A servebench run file that does not fit its schema (line, JSON path in the message).
    #[error("{0}")]
    RunFile(#[source] crate::runfile::RunFileError),
    /// A run holding a value that cannot be a measurement (a time past any plausible
    /// clock); the message names the run, request and field.
    #[error("run `{run}`: {message}")]
    Implausible {
        /// The run's name.
        run: String,
        /// What is implausible.
        message: String,
    },
}

impl LoadError {
    /// A new error about `file`.
    pub fn new(file: impl Into<String>, format: Option<Format>, kind: LoadErrorKind) -> Self {
        LoadError {
            file: file.into(),
            format,
            kind,
        }
    }

    /// The format parser's error, when that is what failed (unwrapped from any
    /// [`ImportError::InFile`]).
    pub fn import_error(&self) -> Option<&ImportError> {
        match &self.kind {
            LoadErrorKind::Import(e) => Some(e.innermost()),
            _ => None,
        }
    }

    /// The 1-based line the error is about, when it names one.
    pub fn line(&self) -> Option<usize> {
        match &self.kind {
            LoadErrorKind::Text(e) => Some(e.line()),
            LoadErrorKind::Import(e) => match e.innermost() {
                ImportError::Json { line, .. } => Some(*line),
                ImportError::Csv { line, .. } | ImportError::Yaml { line, .. } => Some(*line),
                _ => None,
            },
            LoadErrorKind::RunFile(crate::runfile::RunFileError::Json { line, .. }) => *line,
            _ => None,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(format) = self.format {
            write!(f, "read as {}: ", format.description())?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}
