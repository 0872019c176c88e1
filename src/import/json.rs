//! JSON plumbing shared by the importers: tolerant parsing of Python's bare `NaN` /
//! `Infinity` / `-Infinity` tokens, and JSON paths for errors.
//!
//! Python's `json.dumps` writes non-finite floats as bare `NaN`, `Infinity` and `-Infinity`,
//! which strict JSON (and `serde_json`) rejects. [`NonFinite`] is a streaming [`Read`]
//! adapter that rewrites those tokens, when they appear outside strings, into `null`, so a
//! non-finite number reads as "absent" — importers never see a NaN. Nothing is copied:
//! the adapter works on a fixed 64 KiB window.
//!
//! [`parse_slice`] is the entry point: it parses straight from the slice (the common case,
//! at `serde_json::from_slice` speed) and, only when that fails with a syntax error and the
//! text contains `NaN` or `Infinity`, parses again through [`NonFinite`]. On error it reports the line, the column and the JSON
//! path of the failing value (`benchmarks[0].requests.successful[3].info.timings`), found
//! by re-scanning the text up to the error position with a small tokenizer.

use std::io::{self, Read};

use serde::de::DeserializeOwned;

use super::{ImportError, JsonErrorKind};

/// Size of [`NonFinite`]'s input window.
const WINDOW: usize = 64 * 1024;

/// A [`Read`] adapter that replaces bare `NaN`, `Infinity` and `-Infinity` tokens outside
/// JSON strings with `null`.
///
/// ```
/// use std::io::Read;
/// use servebench::import::NonFinite;
/// let mut out = String::new();
/// NonFinite::new(&br#"{"a": NaN, "b": [-Infinity, 1], "s": "NaN"}"#[..])
///     .read_to_string(&mut out)
///     .unwrap();
/// assert_eq!(out, r#"{"a": null, "b": [null, 1], "s": "NaN"}"#);
/// ```
pub struct NonFinite<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    in_string: bool,
    escape: bool,
    pending: &'static [u8],
    replaced: u64,
}

impl<R: Read> NonFinite<R> {
    /// Wrap `inner`.
    pub fn new(inner: R) -> Self {
        NonFinite {
            inner,
            buf: vec![0; WINDOW],
            start: 0,
            end: 0,
            eof: false,
            in_string: false,
            escape: false,
            pending: &[],
            replaced: 0,
        }
    }

    /// How many tokens were replaced so far.
    pub fn replaced(&self) -> u64 {
        self.replaced
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while !self.eof && self.end < self.buf.len() {
            let n = self.inner.read(&mut self.buf[self.end..])?;
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
            if self.end - self.start >= 16 {
                break;
            }
        }
        Ok(())
    }
}

const TOKENS: [(&[u8], &[u8]); 3] = [
    (b"NaN", b"null"),
    (b"Infinity", b"null"),
    (b"-Infinity", b"null"),
];

impl<R: Read> Read for NonFinite<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut written = 0;
        while written < out.len() {
            if !self.pending.is_empty() {
                let n = self.pending.len().min(out.len() - written);
                out[written..written + n].copy_from_slice(&self.pending[..n]);
                self.pending = &self.pending[n..];
                written += n;
                continue;
            }
            if self.end - self.start < 9 && !self.eof {
                self.fill()?;
            }
            if self.start == self.end {
                break;
            }
            // Copy a run of ordinary bytes at once.
            let avail = &self.buf[self.start..self.end];
            let space = out.len() - written;
            let run = if self.escape {
                0
            } else {
                let window = &avail[..avail.len().min(space)];
                let special = |c: &u8| {
                    if self.in_string {
                        matches!(c, b'"' | b'\\')
                    } else {
                        matches!(c, b'"' | b'N' | b'I' | b'-')
                    }
                };
                window.iter().position(special).unwrap_or(window.len())
            };
            if run > 0 {
                out[written..written + run].copy_from_slice(&avail[..run]);
                written += run;
                self.start += run;
                continue;
            }
            let b = self.buf[self.start];
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else if b == b'"' {
                self.in_string = true;
            } else if b == b'N' || b == b'I' || b == b'-' {
                let rest = &self.buf[self.start..self.end];
                if let Some((tok, rep)) = TOKENS.iter().find(|(t, _)| rest.starts_with(t)) {
                    self.start += tok.len();
                    self.pending = rep;
                    self.replaced += 1;
                    continue;
                }
            }
            out[written] = b;
            written += 1;
            self.start += 1;
        }
        Ok(written)
    }
}

/// The keys of the top-level object in `bytes` whose value is a bare non-finite token
/// (Python's `json.dumps` of `nan`, `inf`, `-inf`: `NaN`, `Infinity`, `-Infinity`), with
/// that value, in order. Strings are skipped, so `"NaN"` is not one.
///
/// ```
/// use servebench::import::bare_non_finite_keys;
/// let keys = bare_non_finite_keys(br#"{"a": NaN, "b": {"c": NaN}, "d": "NaN", "e" : -Infinity}"#);
/// assert_eq!(keys.len(), 2);
/// assert!(keys[0].0 == "a" && keys[0].1.is_nan());
/// assert_eq!(keys[1], ("e".to_string(), f64::NEG_INFINITY));
/// ```
pub fn bare_non_finite_keys(bytes: &[u8]) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    if !may_contain_non_finite(bytes) {
        return out;
    }
    let (mut depth, mut i) = (0usize, 0usize);
    let mut key: Option<(usize, usize)> = None;
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
                if depth == 1 {
                    key = Some((start, i.min(bytes.len())));
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'N' | b'I' | b'-' if depth == 1 => {
                let token: Option<(&[u8], f64)> = [
                    (&b"NaN"[..], f64::NAN),
                    (&b"Infinity"[..], f64::INFINITY),
                    (&b"-Infinity"[..], f64::NEG_INFINITY),
                ]
                .into_iter()
                .find(|(t, _)| bytes.get(i..i + t.len()) == Some(*t));
                if let Some((t, v)) = token {
                    if let Some((a, z)) = key.take() {
                        out.push((String::from_utf8_lossy(&bytes[a..z]).into_owned(), v));
                    }
                    i += t.len() - 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `true` when `bytes` may contain a bare non-finite token (a cheap over-approximation:
/// the words appear anywhere, strings included).
pub fn may_contain_non_finite(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.contains("NaN") || s.contains("Infinity"),
        Err(_) => true,
    }
}

/// Parse `bytes` into `T`, accepting bare `NaN`/`Infinity` tokens (read as `null`).
///
/// Errors carry the line, column and JSON path of the failure; `line_offset` is added to
/// the line (for JSON Lines, where `bytes` is one line of a larger file).
pub fn parse_slice<T: DeserializeOwned>(
    bytes: &[u8],
    line_offset: usize,
) -> Result<T, ImportError> {
    // Strict JSON first, at full speed; only a syntax error in a text that may hold a bare
    // non-finite token is retried through the filter.
    match serde_json::from_slice(bytes) {
        Ok(v) => Ok(v),
        Err(e) if e.is_syntax() && may_contain_non_finite(bytes) => {
            serde_json::from_reader(io::BufReader::new(NonFinite::new(bytes)))
                .map_err(|e| json_error(bytes, &e, line_offset))
        }
        Err(e) => Err(json_error(bytes, &e, line_offset)),
    }
}

/// Turn a `serde_json` error on `bytes` into an [`ImportError::Json`] with the path.
pub(crate) fn json_error(bytes: &[u8], e: &serde_json::Error, line_offset: usize) -> ImportError {
    let kind = match e.classify() {
        serde_json::error::Category::Io => JsonErrorKind::Syntax,
        serde_json::error::Category::Syntax => JsonErrorKind::Syntax,
        serde_json::error::Category::Data => JsonErrorKind::Data,
        serde_json::error::Category::Eof => JsonErrorKind::Truncated,
    };
    let path = path_at(NonFinite::new(bytes), e.line(), e.column());
    // serde_json appends " at line L column C" to the message; keep only the reason.
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    };
    ImportError::Json {
        path,
        line: e.line() + line_offset,
        column: e.column(),
        kind,
        message,
    }
}

enum Frame {
    Object {
        key: Option<String>,
        expecting_key: bool,
    },
    Array {
        index: usize,
    },
}

/// The JSON path (`a.b[3].c`) of the value being read at 1-based `line` and byte `column`
/// of the text `r` produces; `$` for the top level.
pub fn path_at<R: Read>(r: R, line: usize, column: usize) -> String {
    let mut stack: Vec<Frame> = Vec::new();
    let mut cur_line = 1usize;
    let mut cur_col = 0usize;
    let mut in_string = false;
    let mut escape = false;
    let mut key_buf: Option<Vec<u8>> = None;
    let reader = io::BufReader::new(r);
    for byte in reader.bytes() {
        let Ok(b) = byte else { break };
        if b == b'\n' {
            cur_line += 1;
            cur_col = 0;
        } else {
            cur_col += 1;
        }
        if cur_line > line || (cur_line == line && cur_col > column) {
            break;
        }
        if in_string {
            if escape {
                escape = false;
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                in_string = false;
                if let Some(k) = key_buf.take() {
                    if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                        *key = Some(String::from_utf8_lossy(&k).into_owned());
                    }
                }
                continue;
            }
            if let Some(k) = key_buf.as_mut() {
                if k.len() < 200 {
                    k.push(b);
                }
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                if let Some(Frame::Object {
                    expecting_key: true,
                    ..
                }) = stack.last()
                {
                    key_buf = Some(Vec::new());
                }
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                expecting_key: true,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { expecting_key, .. }) = stack.last_mut() {
                    *expecting_key = false;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { expecting_key, .. }) => *expecting_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
    }
    render_path(&stack)
}

fn render_path(stack: &[Frame]) -> String {
    let mut out = String::from("$");
    for f in stack {
        match f {
            Frame::Object { key: Some(k), .. } => {
                out.push('.');
                out.push_str(k);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => {
                out.push_str(&format!("[{index}]"));
            }
        }
    }
    out
}

/// One JSON object whose members are kept in file order (vLLM's key order carries the
/// report's row and percentile order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderedObject(pub Vec<(String, serde_json::Value)>);

impl OrderedObject {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'de> serde::Deserialize<'de> for OrderedObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OrderedObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<OrderedObject, A::Error> {
                let mut v = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, serde_json::Value>()? {
                    v.push((k, val));
                }
                Ok(OrderedObject(v))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_handles_window_boundaries() {
        // Put tokens across the 64 KiB boundary.
        let mut s = String::from("[");
        while s.len() < WINDOW - 4 {
            s.push_str("1,");
        }
        s.push_str("NaN,-Infinity,\"Infinity\\\"NaN\",Infinity]");
        let mut out = String::new();
        NonFinite::new(s.as_bytes())
            .read_to_string(&mut out)
            .unwrap();
        assert!(
            out.ends_with("null,null,\"Infinity\\\"NaN\",null]"),
            "{}",
            &out[out.len() - 60..]
        );
        let v: Vec<Option<serde_json::Value>> = serde_json::from_str(&out).unwrap();
        assert_eq!(v.iter().filter(|x| x.is_none()).count(), 3);
    }

    /// A reader that hands out at most `step` bytes per call.
    struct Dribble<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    proptest::proptest! {
        #[test]
        fn filter_replaces_exactly_the_bare_tokens(
            picks in proptest::collection::vec(0usize..13, 0..200),
            step in 1usize..9,
            out_len in 1usize..17,
        ) {
            const PIECES: [(&str, &str); 13] = [
                ("NaN", "null"), ("Infinity", "null"), ("-Infinity", "null"), ("1", "1"),
                ("\"NaN\"", "\"NaN\""), ("\"a\\\"NaN\"", "\"a\\\"NaN\""), (",", ","),
                ("[", "["), ("]", "]"), (" ", " "), ("-1", "-1"), ("\"x\\\\\"", "\"x\\\\\""),
                ("Nope", "Nope"),
            ];
            let input: String = picks.iter().map(|&i| PIECES[i].0).collect();
            let want: String = picks.iter().map(|&i| PIECES[i].1).collect();
            let mut f = NonFinite::new(Dribble { data: input.as_bytes(), step });
            let mut got = Vec::new();
            let mut buf = vec![0u8; out_len];
            loop {
                let n = f.read(&mut buf).unwrap();
                if n == 0 { break; }
                got.extend_from_slice(&buf[..n]);
            }
            proptest::prop_assert_eq!(String::from_utf8(got).unwrap(), want);
        }
    }

    #[test]
    fn path_of_type_error() {
        let text = br#"{"a": {"b": [1, 2, {"c": 5}]}}"#;
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct C {
            c: String,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct B {
            b: (u8, u8, C),
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct A {
            a: B,
        }
        let err = parse_slice::<A>(text, 0).unwrap_err();
        match err {
            ImportError::Json { path, kind, .. } => {
                assert_eq!(path, "$.a.b[2].c");
                assert_eq!(kind, JsonErrorKind::Data);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_is_reported_as_such() {
        let err = parse_slice::<serde_json::Value>(br#"{"a": [1, 2"#, 0).unwrap_err();
        assert!(
            matches!(
                err,
                ImportError::Json {
                    kind: JsonErrorKind::Truncated,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
