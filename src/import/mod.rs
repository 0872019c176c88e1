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

use std::path::Path;

pub mod aiperf;
mod ctx;
pub mod guidellm;
pub(crate) mod json;
pub mod sglang;
pub mod vllm;
mod vllm_pooling;

mod error;
pub use error::{ImportError, JsonErrorKind};
pub use json::{bare_non_finite_keys, NonFinite};

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
