//! Importers for result files written by other benchmark tools: guidellm's JSON report
//! ([`guidellm`]), `vllm bench serve --save-result` JSON and JSON Lines ([`vllm`]), and
//! SGLang `bench_serving` JSON Lines ([`sglang`]).
//!
//! Each importer produces two things per benchmark run:
//!
//! * the file's **own aggregates** as a [`BenchmarkResult`](crate::result::BenchmarkResult) (with `meta.convention` saying
//!   whose definitions they follow), so that `servebench report` prints what the tool
//!   measured;
//! * the **per-request records** ([`RequestRecord`](crate::record::RequestRecord)s) when the file holds them, so that
//!   every metric can be recomputed under another convention.
//!
//! Also aiperf's exports ([`aiperf`]) and guidellm's YAML and CSV reports
//! ([`guidellm::from_yaml_slice`], [`guidellm::from_csv_slice`]). [`crate::load`] tells the formats apart and
//! turns any file into runs; [`crate::app::report_path`] prints every benchmark of a file as report blocks,
//! from the file's own aggregates or recomputed under a convention (`servebench report`).
//!
//! Large files: the importers parse the bytes once, straight into typed structures that
//! skip what they do not need (prompts, outputs, tracebacks) — never into a generic JSON
//! value, and never holding a second copy of the text (bare `NaN` tokens are rewritten by a
//! streaming filter, not in a copy). A guidellm report of 1 MiB or more is parsed on
//! several threads: its request lists in pieces, the rest as a small copy with the lists
//! left out, with the same result as the sequential parse (which it falls back to, errors
//! included, on anything unexpected); see [`guidellm::from_slice`].
//!
//! # Errors
//!
//! Bad input never panics: it gives an [`ImportError`] naming the JSON path (or the line of
//! a JSON Lines file) and what was wrong. Bare `NaN`/`Infinity` tokens, which Python's JSON
//! writer emits, are accepted and read as absent values (see [`NonFinite`]).
//!
//! ```
//! use servebench::import::{self, ImportError};
//! let err = import::guidellm::from_slice(br#"{"benchmarks": [{"duration": "#).unwrap_err();
//! assert!(matches!(err, ImportError::Json { .. }));
//! assert!(err.to_string().contains("$.benchmarks[0]"), "{err}");
//! ```

use std::path::{Path, PathBuf};

pub mod aiperf;
pub mod guidellm;
pub(crate) mod json;
pub mod sglang;
pub mod vllm;

pub use json::{bare_non_finite_keys, NonFinite};

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

/// Read a whole file, mapping I/O errors to [`ImportError::Io`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, ImportError> {
    std::fs::read(path).map_err(|source| ImportError::Io {
        file: path.to_path_buf(),
        source,
    })
}

pub(crate) fn in_file(path: &Path, e: ImportError) -> ImportError {
    ImportError::InFile {
        file: path.to_path_buf(),
        source: Box::new(e),
    }
}

/// Whether parsing a whole file as one JSON value failed the way JSON Lines fail: a complete
/// first value followed by more ("trailing characters"). Any other error (a truncated or
/// broken pretty-printed file) is the file's real error, at its real line.
pub(crate) fn looks_like_json_lines(whole: &ImportError) -> bool {
    matches!(whole, ImportError::Json { message, .. } if message.starts_with("trailing characters"))
}

/// One JSON object, or JSON Lines of objects (a whole file that fails the way JSON Lines
/// fail, [`looks_like_json_lines`], with at least two lines), each converted by
/// `convert(object, line, bytes)`: `line` is `None` for a whole-file object, else the
/// 1-based line, and `bytes` what the object was read from. A whole file that is neither
/// gives its own parse error.
pub(crate) fn object_or_lines<T>(
    bytes: &[u8],
    mut convert: impl FnMut(&json::OrderedObject, Option<usize>, &[u8]) -> Result<T, ImportError>,
) -> Result<Vec<T>, ImportError> {
    match json::parse_slice::<json::OrderedObject>(bytes, 0) {
        Ok(obj) => Ok(vec![convert(&obj, None, bytes)?]),
        Err(whole) => {
            let lines: Vec<(usize, &[u8])> = json_lines(bytes).collect();
            if lines.len() < 2 || !looks_like_json_lines(&whole) {
                return Err(whole);
            }
            lines
                .into_iter()
                .map(|(n, l)| {
                    let obj = json::parse_slice::<json::OrderedObject>(l, n - 1)?;
                    convert(&obj, Some(n), l)
                })
                .collect()
        }
    }
}

/// Split JSON Lines into (1-based line number, line bytes), skipping blank lines.
pub(crate) fn json_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
}

/// The 1-based line where a CSV record at byte `offset` of `bytes` starts. The csv reader
/// may give a record's position before the previous record's line terminator (and its line
/// count then names the previous line), so line endings at `offset` are skipped: a record
/// never starts with one.
pub(crate) fn line_at(bytes: &[u8], offset: u64) -> usize {
    let mut end = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
    while matches!(bytes.get(end), Some(b'\r' | b'\n')) {
        end += 1;
    }
    1 + memchr::memchr_iter(b'\n', &bytes[..end]).count()
}

/// Round half to even, as Python's `format(x, ".0f")` does, to a non-negative integer.
pub(crate) fn round_count(v: f64) -> Option<u64> {
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return None;
    }
    Some(v.round_ties_even() as u64)
}
