//! Importers for result files written by other benchmark tools: guidellm's JSON report
//! ([`guidellm`]), `vllm bench serve --save-result` JSON and JSON Lines ([`vllm`]), and
//! SGLang `bench_serving` JSON Lines ([`sglang`]).
//!
//! Each importer produces two things per benchmark run:
//!
//! * the file's **own aggregates** as a [`BenchmarkResult`] (with `meta.convention` saying
//!   whose definitions they follow), so that `servebench report` prints what the tool
//!   measured;
//! * the **per-request records** ([`RequestRecord`]s) when the file holds them, so that
//!   every metric can be recomputed under another convention.
//!
//! [`report`] prints every benchmark of a file as report blocks, from the file's own
//! aggregates or recomputed under a convention (`servebench report`); [`import_path`]
//! reads any supported file (what `servebench lint` does); [`detect`] tells the formats
//! apart.
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
//! writer emits, are accepted and read as absent values (see [`json`]).
//!
//! ```
//! use servebench::import::{self, ImportError};
//! let err = import::guidellm::from_slice(br#"{"benchmarks": [{"duration": "#).unwrap_err();
//! assert!(matches!(err, ImportError::Json { .. }));
//! assert!(err.to_string().contains("$.benchmarks[0]"), "{err}");
//! ```

use std::path::{Path, PathBuf};

use crate::record::RequestRecord;
use crate::result::BenchmarkResult;

pub mod guidellm;
pub mod json;
pub mod report;
pub mod sglang;
pub mod vllm;

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

/// The file formats [`detect`] recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A guidellm JSON report (any supported version).
    Guidellm,
    /// `vllm bench serve` / `benchmark_serving.py` saved JSON, one object or JSON Lines.
    Vllm,
    /// SGLang `bench_serving` JSON Lines.
    Sglang,
    /// servebench's own JSON result (a [`BenchmarkResult`]).
    ServebenchJson,
    /// A text report ("Serving Benchmark Result" blocks).
    Text,
}

/// Guess the format of `bytes` from its first object's keys (without parsing the rest).
///
/// ```
/// use servebench::import::{detect, Format};
/// assert_eq!(detect(br#"{"metadata": {"version": 2}, "benchmarks": []}"#), Some(Format::Guidellm));
/// assert_eq!(detect(br#"{"date": "20250101-000000", "backend": "vllm", "completed": 1}"#), Some(Format::Vllm));
/// assert_eq!(detect(br#"{"backend": "sglang-oai", "dataset_name": "random", "completed": 1}"#), Some(Format::Sglang));
/// assert_eq!(detect(b"============ Serving Benchmark Result ============\n"), Some(Format::Text));
/// ```
pub fn detect(bytes: &[u8]) -> Option<Format> {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') && text.contains("\"schema_version\"") {
        return Some(Format::ServebenchJson);
    }
    if !trimmed.starts_with('{') {
        return if text.contains("Serving Benchmark Result") {
            Some(Format::Text)
        } else {
            None
        };
    }
    let has = |k: &str| text.contains(&format!("\"{k}\""));
    if has("schema_version") && has("meta") {
        Some(Format::ServebenchJson)
    } else if has("benchmarks") {
        Some(Format::Guidellm)
    } else if has("dataset_name") && !has("endpoint_type") && !has("tokenizer_id") {
        Some(Format::Sglang)
    } else if has("completed") || has("request_throughput") || has("date") {
        Some(Format::Vllm)
    } else {
        None
    }
}

/// One benchmark run read from a file: the file's aggregates and, when the file holds
/// them, the per-request records.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedRun {
    /// A short name for the run (`constant@20.00`, `line 3`, …).
    pub name: String,
    /// The file's own figures, under the tool's convention.
    pub result: BenchmarkResult,
    /// Per-request records, when the file has them (guidellm reports; vLLM/SGLang files
    /// saved with detailed lists). For guidellm these are only the requests inside the
    /// measured window.
    pub records: Option<Vec<RequestRecord>>,
}

/// Import any supported file: guidellm, vLLM, SGLang or servebench JSON.
///
/// Text reports are not handled here (see `format::text`); they give
/// [`ImportError::UnknownFormat`].
pub fn import_path(path: &Path) -> Result<Vec<ImportedRun>, ImportError> {
    let bytes = read_file(path)?;
    import_bytes(&bytes).map_err(|e| in_file(path, e))
}

/// [`import_path`] on bytes already in memory.
pub fn import_bytes(bytes: &[u8]) -> Result<Vec<ImportedRun>, ImportError> {
    match detect(bytes) {
        Some(Format::Guidellm) => {
            let report = guidellm::from_slice(bytes)?;
            Ok(report
                .benchmarks
                .into_iter()
                .map(|b| {
                    let records = b.measured_records();
                    ImportedRun {
                        name: b.name,
                        result: b.result,
                        records: Some(records),
                    }
                })
                .collect())
        }
        Some(Format::Vllm) => Ok(vllm::from_slice(bytes)?
            .into_iter()
            .map(|r| ImportedRun {
                name: r.name,
                result: r.result,
                records: r.records,
            })
            .collect()),
        Some(Format::Sglang) => Ok(sglang::from_slice(bytes)?
            .into_iter()
            .map(|r| ImportedRun {
                name: r.name,
                result: r.result,
                records: r.records,
            })
            .collect()),
        Some(Format::ServebenchJson) => {
            let array = bytes.trim_ascii_start().starts_with(b"[");
            let results: Vec<BenchmarkResult> = if array {
                json::parse_slice(bytes, 0)?
            } else {
                vec![json::parse_slice(bytes, 0)?]
            };
            results
                .into_iter()
                .enumerate()
                .map(|(i, result)| {
                    if !(crate::result::MIN_SCHEMA_VERSION..=crate::result::SCHEMA_VERSION)
                        .contains(&result.schema_version)
                    {
                        return Err(ImportError::UnsupportedSchema {
                            format: "servebench",
                            path: if array {
                                format!("$[{i}].schema_version")
                            } else {
                                "$.schema_version".into()
                            },
                            found: result.schema_version.to_string(),
                        });
                    }
                    let name = match (&result.meta.label, array) {
                        (Some(l), _) => l.clone(),
                        (None, true) => format!("[{i}]"),
                        (None, false) => "result".into(),
                    };
                    Ok(ImportedRun {
                        name,
                        result,
                        records: None,
                    })
                })
                .collect()
        }
        Some(Format::Text) => Err(ImportError::UnknownFormat(
            "a text report (read it with format::text)".into(),
        )),
        None => Err(ImportError::UnknownFormat(
            "not a guidellm, vLLM, SGLang or servebench JSON file".into(),
        )),
    }
}

/// Whether parsing a whole file as one JSON value failed the way JSON Lines fail: a complete
/// first value followed by more ("trailing characters"). Any other error (a truncated or
/// broken pretty-printed file) is the file's real error, at its real line.
pub(crate) fn looks_like_json_lines(whole: &ImportError) -> bool {
    matches!(whole, ImportError::Json { message, .. } if message.starts_with("trailing characters"))
}

/// Split JSON Lines into (1-based line number, line bytes), skipping blank lines.
pub(crate) fn json_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
}

/// Round half to even, as Python's `format(x, ".0f")` does, to a non-negative integer.
pub(crate) fn round_count(v: f64) -> Option<u64> {
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return None;
    }
    Some(v.round_ties_even() as u64)
}
