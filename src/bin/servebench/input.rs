//! Reading the CLI's inputs: a path (or `-` for stdin) holding either text reports (any
//! document with "Serving Benchmark Result" blocks) or JSON results (one object or an
//! array). Every error names the file and, where there is one, the line.

use std::fmt;
use std::io::Read as _;

use servebench::format::doc;
use servebench::result::{BenchmarkResult, SCHEMA_VERSION};

/// A bad input: the message already names the file and line.
#[derive(Debug)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One result read from an input, with where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The result.
    pub result: BenchmarkResult,
    /// `FILE:LINE` of a text block, `FILE[INDEX]` of a JSON array element, or `FILE`.
    pub origin: String,
}

/// The name used in messages: `<stdin>` for `-`.
pub fn display_name(path: &str) -> String {
    if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    }
}

/// Reads `path` (`-`: stdin) as UTF-8 text.
pub fn read(path: &str) -> Result<String, InputError> {
    let name = display_name(path);
    let mut text = String::new();
    let res = if path == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    res.map_err(|e| InputError(format!("{name}: cannot read: {e}")))?;
    Ok(text)
}

/// Whether `text` is JSON (its first non-blank character opens an object or an array).
fn is_json(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
}

/// All results in `path`: the blocks of a text report (with the run metadata of the
/// document around them), or the JSON result(s).
pub fn load(path: &str) -> Result<Vec<Loaded>, InputError> {
    let name = display_name(path);
    let text = read(path)?;
    if is_json(&text) {
        load_json(&name, &text)
    } else {
        let blocks = doc::parse(&text).map_err(|e| InputError(format!("{name}: {e}")))?;
        if blocks.is_empty() {
            return Err(InputError(format!(
                "{name}: no \"Serving Benchmark Result\" block and not JSON"
            )));
        }
        Ok(blocks
            .into_iter()
            .map(|b| Loaded {
                result: b.result,
                origin: format!("{name}:{}", b.start_line),
            })
            .collect())
    }
}

fn json_error(name: &str, e: &serde_json::Error) -> InputError {
    // serde_json's message ends with "at line L column C".
    InputError(format!("{name}: not a servebench JSON result: {e}"))
}

fn load_json(name: &str, text: &str) -> Result<Vec<Loaded>, InputError> {
    let results: Vec<(String, BenchmarkResult)> = if text.trim_start().starts_with('[') {
        let v: Vec<BenchmarkResult> =
            serde_json::from_str(text).map_err(|e| json_error(name, &e))?;
        v.into_iter()
            .enumerate()
            .map(|(i, r)| (format!("{name}[{i}]"), r))
            .collect()
    } else {
        let r: BenchmarkResult = serde_json::from_str(text).map_err(|e| json_error(name, &e))?;
        vec![(name.to_string(), r)]
    };
    results
        .into_iter()
        .map(|(origin, result)| {
            if result.schema_version != SCHEMA_VERSION {
                return Err(InputError(format!(
                    "{origin}: schema_version {} is not supported (this servebench reads {SCHEMA_VERSION})",
                    result.schema_version
                )));
            }
            Ok(Loaded { result, origin })
        })
        .collect()
}
