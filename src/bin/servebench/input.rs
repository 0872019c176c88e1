//! Reading the CLI's inputs: a path (or `-` for stdin) holding either text reports (any
//! document with "Serving Benchmark Result" blocks) or JSON results (one object or an
//! array). Every error names the file and, where there is one, the line.

use std::fmt;
use std::io::Read as _;

use servebench::format::doc;
use servebench::format::text::{BlocksFile, Layout, BLOCKS_FORMAT, BLOCKS_VERSION};
use servebench::result::{BenchmarkResult, MIN_SCHEMA_VERSION, SCHEMA_VERSION};

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
    /// How it was printed, for a text block or a `servebench parse` block (`render` follows
    /// it); `None` for a plain JSON result.
    pub layout: Option<Layout>,
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
    let mut bytes = Vec::new();
    let res = if path == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|b| bytes = b)
    };
    res.map_err(|e| InputError(format!("{name}: cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let ok = e.as_bytes().get(..at).unwrap_or_default();
        let line = 1 + ok.iter().filter(|&&b| b == b'\n').count();
        InputError(format!(
            "{name}: line {line}: not UTF-8 text (invalid byte at offset {at})"
        ))
    })
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
    if crate::runfile_in::sniff(text.as_bytes()) {
        let file = crate::runfile_in::read(&name, text.as_bytes())?;
        return Ok(vec![Loaded {
            result: file.result,
            layout: None,
            origin: name,
        }]);
    }
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
                layout: Some(b.layout),
                origin: format!("{name}:{}", b.start_line),
            })
            .collect())
    }
}

fn json_error(name: &str, text: &str, e: &serde_json::Error) -> InputError {
    // serde_json's message ends with "at line L column C"; add the JSON path there.
    let path = match e.classify() {
        serde_json::error::Category::Data => json_path_at(text, e.line(), e.column()),
        _ => None,
    };
    match path {
        Some(p) => InputError(format!("{name}: not a servebench JSON result: {e} ({p})")),
        None => InputError(format!("{name}: not a servebench JSON result: {e}")),
    }
}

/// The JSON path (`$[1].ttft.mean`) of the value that ends at 1-based `line`/`column` of
/// `text` (where serde_json reports a data error), by scanning the containers open there.
fn json_path_at(text: &str, line: usize, column: usize) -> Option<String> {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let end = line_start.checked_add(column)?.min(text.len());
    // Open containers: an object's current key, or an array's current index.
    enum Frame {
        Object { key: Option<String>, want_key: bool },
        Array(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let bytes = text.as_bytes().get(..end)?;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                let start = i + 1;
                i = start;
                while let Some(&c) = bytes.get(i) {
                    match c {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                if let Some(Frame::Object { key, want_key }) = stack.last_mut() {
                    if *want_key {
                        *key = text.get(start..i.min(end)).map(str::to_string);
                        *want_key = false;
                    }
                }
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                want_key: true,
            }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object { want_key, .. }) => *want_key = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut path = String::from("$");
    for f in &stack {
        match f {
            Frame::Object { key: Some(k), .. } => {
                path.push('.');
                path.push_str(k);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array(n) => path.push_str(&format!("[{n}]")),
        }
    }
    Some(path)
}

/// The `schema_version` of a JSON object, when it has an integer one.
fn schema_version(v: &serde_json::Value) -> Option<u64> {
    v.get("schema_version")?.as_u64()
}

fn load_json(name: &str, text: &str) -> Result<Vec<Loaded>, InputError> {
    // Check the versions first: a result written by another servebench version may fail to
    // deserialize, and the version is then the real problem.
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| json_error(name, text, &e))?;
    if value.get("format").and_then(|f| f.as_str()) == Some(BLOCKS_FORMAT) {
        return load_blocks(name, text, &value);
    }
    let versions: Vec<(String, Option<u64>)> = match &value {
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{name}[{i}]"), schema_version(v)))
            .collect(),
        v => vec![(name.to_string(), schema_version(v))],
    };
    for (origin, version) in &versions {
        let readable = u64::from(MIN_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION);
        if let Some(v) = version.filter(|v| !readable.contains(v)) {
            return Err(InputError(format!(
                "{origin}: schema_version {v} is not supported (this servebench reads {MIN_SCHEMA_VERSION} to {SCHEMA_VERSION})"
            )));
        }
    }
    // Deserialize from the text (not the Value) so errors carry their line and column.
    let results: Vec<BenchmarkResult> = if value.is_array() {
        serde_json::from_str(text).map_err(|e| json_error(name, text, &e))?
    } else {
        vec![serde_json::from_str(text).map_err(|e| json_error(name, text, &e))?]
    };
    // Results written by `servebench parse` before its envelope carried their layout inside.
    let legacy_layouts: Vec<Option<Result<Layout, serde_json::Error>>> = match &value {
        serde_json::Value::Array(items) => items.iter().map(legacy_layout).collect(),
        v => vec![legacy_layout(v)],
    };
    results
        .into_iter()
        .zip(versions)
        .zip(legacy_layouts)
        .map(|((result, (origin, _)), layout)| {
            let layout = layout
                .transpose()
                .map_err(|e| InputError(format!("{origin}: layout: {e}")))?;
            Ok(Loaded {
                result,
                layout,
                origin,
            })
        })
        .collect()
}

/// The `"layout"` key that results written by servebench before the blocks envelope carried.
fn legacy_layout(v: &serde_json::Value) -> Option<Result<Layout, serde_json::Error>> {
    v.get("layout")
        .map(|l| serde_json::from_value::<Layout>(l.clone()))
}

/// A [`BlocksFile`] (what `servebench parse` writes).
fn load_blocks(
    name: &str,
    text: &str,
    value: &serde_json::Value,
) -> Result<Vec<Loaded>, InputError> {
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(u64::from(BLOCKS_VERSION)) {
        return Err(InputError(format!(
            "{name}: {BLOCKS_FORMAT} version {} is not supported (this servebench reads {BLOCKS_VERSION})",
            version.map_or_else(|| "(missing)".to_string(), |v| v.to_string())
        )));
    }
    let file: BlocksFile = serde_json::from_str(text).map_err(|e| json_error(name, text, &e))?;
    Ok(file
        .blocks
        .into_iter()
        .enumerate()
        .map(|(i, b)| Loaded {
            result: b.result,
            layout: b.layout,
            origin: b.origin.unwrap_or_else(|| format!("{name}.blocks[{i}]")),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path serde_json's error position points into, for each kind of container.
    #[test]
    fn json_path_follows_keys_indices_and_escaped_quotes() {
        let text = "[{\"a\": 1}, {\"m\\\"q\": {\"xs\": [1, 2, \"x\"]}}]";
        let err =
            serde_json::from_str::<Vec<std::collections::HashMap<String, serde_json::Value>>>(
                "[1]",
            )
            .unwrap_err();
        assert_eq!(
            json_path_at("[1]", err.line(), err.column()).as_deref(),
            Some("$[0]")
        );
        // Just after `"x"`: inside element 1, key `m\"q`, key `xs`, index 2.
        let col = text.find("\"x\"").unwrap() + 3;
        assert_eq!(
            json_path_at(text, 1, col).as_deref(),
            Some("$[1].m\\\"q.xs[2]")
        );
        let two_lines = "{\"a\": {\n\"b\": true}}";
        assert_eq!(json_path_at(two_lines, 2, 9).as_deref(), Some("$.a.b"));
        // Positions past the text or on missing lines do not panic.
        assert_eq!(json_path_at(two_lines, 9, 1), None);
        assert_eq!(json_path_at(two_lines, 1, usize::MAX).as_deref(), Some("$"));
    }
}
