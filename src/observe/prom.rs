//! Prometheus' text exposition format (version 0.0.4, as vLLM, SGLang and this crate's
//! servers write it): parsing a scrape into [`Sample`]s and writing samples back.
//!
//! Every sample line is kept, known metric or not; `# HELP` and `# TYPE` lines are checked
//! for shape and skipped (the metric's kind is implied by its name: `_total` counters,
//! `_bucket`/`_sum`/`_count` histograms). A malformed line is an error naming its line
//! number, never a silently dropped sample.
//!
//! (The `prometheus-parse` crate was considered: it skips lines and values it cannot
//! parse without saying so, which this crate's input rules forbid. The format is small
//! enough to parse here; `fuzz/fuzz_targets/prom_parse.rs` fuzzes this parser.)
//!
//! ```
//! use servebench::observe::prom::{parse, write};
//!
//! let text = [
//!     "# HELP vllm:num_requests_running Running.",
//!     "# TYPE vllm:num_requests_running gauge",
//!     r#"vllm:num_requests_running{engine="0",model_name="m"} 12"#,
//!     r#"vllm:kv_cache_usage_perc{engine="0"} 0.25 1700000000000"#,
//! ]
//! .join("\n");
//! let samples = parse(&text).unwrap();
//! assert_eq!(samples.len(), 2);
//! assert_eq!(samples[0].name, "vllm:num_requests_running");
//! assert_eq!(samples[0].label("model_name"), Some("m"));
//! assert_eq!(samples[1].value, 0.25);
//! assert_eq!(parse(&write(&samples)).unwrap(), samples);
//!
//! let err = parse("ok 1\nvllm:x{a=\"1\" 2\n").unwrap_err();
//! assert_eq!(err.line, 2);
//! ```

use std::fmt;

/// One sample line: a metric name, its labels in the order written, and the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Metric name (`vllm:num_requests_running`, `sglang:token_usage`, …).
    pub name: String,
    /// Label pairs, in the order they were written.
    pub labels: Vec<(String, String)>,
    /// The value (may be NaN or ±Inf, as the format allows).
    pub value: f64,
}

impl Sample {
    /// A sample without labels.
    pub fn new(name: impl Into<String>, value: f64) -> Sample {
        Sample {
            name: name.into(),
            labels: Vec::new(),
            value,
        }
    }

    /// The value of label `key`, if present.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The series key: the name, then the labels as written in the text format
    /// (`name{a="1",b="2"}`); just the name without labels.
    pub fn key(&self) -> String {
        let mut s = self.name.clone();
        if !self.labels.is_empty() {
            s.push('{');
            for (i, (k, v)) in self.labels.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(k);
                s.push_str("=\"");
                escape_into(&mut s, v);
                s.push('"');
            }
            s.push('}');
        }
        s
    }
}

/// A line that is not valid text exposition format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct PromError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn is_label_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Parses a whole scrape. Blank lines and comments are skipped; every sample is returned in
/// order.
pub fn parse(text: &str) -> Result<Vec<Sample>, PromError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let err = |message: String| PromError {
            line: i + 1,
            message,
        };
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            check_comment(rest.trim_start()).map_err(err)?;
            continue;
        }
        out.push(parse_sample(line).map_err(err)?);
    }
    Ok(out)
}

fn check_comment(rest: &str) -> Result<(), String> {
    let mut words = rest.splitn(3, ' ');
    match words.next() {
        Some("TYPE") => {
            let name = words.next().unwrap_or("");
            check_name(name)?;
            let kind = words.next().unwrap_or("").trim();
            match kind {
                "counter" | "gauge" | "histogram" | "summary" | "untyped" | "info" | "stateset"
                | "gaugehistogram" | "unknown" => Ok(()),
                other => Err(format!("# TYPE {name}: unknown metric type `{other}`")),
            }
        }
        Some("HELP") => check_name(words.next().unwrap_or("")),
        // Any other comment is free text.
        _ => Ok(()),
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if is_name_start(c) && chars.all(is_name_char) => Ok(()),
        _ => Err(format!("invalid metric name `{name}`")),
    }
}

fn parse_sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .char_indices()
        .find(|&(_, c)| !is_name_char(c))
        .map_or(line.len(), |(i, _)| i);
    let name = &line[..name_end];
    check_name(name)?;
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = parse_labels(r, &mut labels)?;
    }
    if !rest.starts_with([' ', '\t']) {
        return Err(format!(
            "{name}: expected a space and a value after the name"
        ));
    }
    let mut fields = rest.split_ascii_whitespace();
    let value_text = fields
        .next()
        .ok_or_else(|| format!("{name}: missing value"))?;
    let value =
        parse_value(value_text).ok_or_else(|| format!("{name}: bad value `{value_text}`"))?;
    if let Some(ts) = fields.next() {
        ts.parse::<i64>()
            .map_err(|_| format!("{name}: bad timestamp `{ts}`"))?;
    }
    if let Some(extra) = fields.next() {
        return Err(format!("{name}: unexpected `{extra}` after the value"));
    }
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// Parses `k="v",…}` (after the opening brace); returns what follows the closing brace.
fn parse_labels<'a>(mut r: &'a str, labels: &mut Vec<(String, String)>) -> Result<&'a str, String> {
    loop {
        r = r.trim_start();
        if let Some(after) = r.strip_prefix('}') {
            return Ok(after);
        }
        let key_end = r
            .char_indices()
            .find(|&(_, c)| !is_label_char(c))
            .map_or(r.len(), |(i, _)| i);
        let key = &r[..key_end];
        if !key.chars().next().is_some_and(is_label_start) {
            return Err(format!("invalid label name at `{}`", head(r)));
        }
        r = r[key_end..].trim_start();
        r = r
            .strip_prefix('=')
            .ok_or_else(|| format!("label {key}: expected `=`"))?
            .trim_start();
        r = r
            .strip_prefix('"')
            .ok_or_else(|| format!("label {key}: expected a quoted value"))?;
        let mut value = String::new();
        let mut chars = r.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err(format!("label {key}: unterminated value")),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, c)) => return Err(format!("label {key}: bad escape `\\{c}`")),
                    None => return Err(format!("label {key}: unterminated value")),
                },
                Some((_, c)) => value.push(c),
            }
        };
        labels.push((key.to_string(), value));
        r = r[end + 1..].trim_start();
        if let Some(after) = r.strip_prefix(',') {
            r = after;
        } else if !r.starts_with('}') {
            return Err(format!("label {key}: expected `,` or `}}`"));
        }
    }
}

fn head(s: &str) -> &str {
    match s.char_indices().nth(16) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A value as the format writes it: a float, `NaN`, `+Inf`, `-Inf` (Go's spellings).
pub fn parse_value(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ if s
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) =>
        {
            s.parse().ok()
        }
        _ => None,
    }
}

/// Formats a value the way [`parse_value`] reads it back exactly.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v:?}")
    }
}

fn escape_into(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Writes samples as text exposition lines (no `# HELP`/`# TYPE`; see [`write_with_help`]).
pub fn write(samples: &[Sample]) -> String {
    let mut out = String::new();
    for s in samples {
        out.push_str(&s.key());
        out.push(' ');
        out.push_str(&format_value(s.value));
        out.push('\n');
    }
    out
}

/// A metric family's documentation, written before its first sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Help<'a> {
    /// The family name (a histogram's name without `_bucket`/`_sum`/`_count`, a counter's
    /// without `_total`).
    pub family: &'a str,
    /// `counter`, `gauge` or `histogram`.
    pub kind: &'a str,
    /// One line of documentation.
    pub help: &'a str,
}

/// Writes samples with a `# HELP` and `# TYPE` line before each family's first sample.
/// `help` maps a sample to its family, if documented.
pub fn write_with_help<'a>(
    samples: &[Sample],
    help: impl Fn(&Sample) -> Option<Help<'a>>,
) -> String {
    use fmt::Write as _;
    let mut out = String::new();
    let mut last: Option<&str> = None;
    for s in samples {
        if let Some(h) = help(s) {
            if last != Some(h.family) {
                let _ = writeln!(out, "# HELP {} {}", h.family, h.help);
                let _ = writeln!(out, "# TYPE {} {}", h.family, h.kind);
                last = Some(h.family);
            }
        }
        let _ = writeln!(out, "{} {}", s.key(), format_value(s.value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_vllm_and_sglang_write() {
        let text = r#"
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3.5-35B-A3B"} 3.0
# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{engine="0",le="0.3",model_name="m"} 1.0
vllm:request_queue_time_seconds_bucket{engine="0",le="+Inf",model_name="m"} 4.0
vllm:request_queue_time_seconds_count{engine="0",model_name="m"} 4.0
vllm:request_queue_time_seconds_sum{engine="0",model_name="m"} 1.25
sglang:token_usage{model_name="m"} 0.5
python_info{implementation="CPython",version="3.12.3"} 1.0
weird{path="a\\b \"q\"\nz"} -Inf
"#;
        let s = parse(text).unwrap();
        assert_eq!(s.len(), 8);
        assert_eq!(s[0].value, 3.0);
        assert_eq!(s[2].label("le"), Some("+Inf"));
        assert_eq!(s[4].name, "vllm:request_queue_time_seconds_sum");
        assert_eq!(s[7].label("path"), Some("a\\b \"q\"\nz"));
        assert_eq!(s[7].value, f64::NEG_INFINITY);
        // Writing and re-parsing gives the same samples.
        assert_eq!(parse(&write(&s)).unwrap(), s);
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line() {
        for (text, line, what) in [
            ("a 1\n9bad 1\n", 2, "invalid metric name"),
            ("a{x=\"1\"} one\n", 1, "bad value"),
            ("a{x=1} 1\n", 1, "quoted value"),
            ("a{x=\"1} 1\n", 1, "unterminated"),
            ("\n\na{x=\"\\t\"} 1\n", 3, "bad escape"),
            ("a 1 2 3\n", 1, "unexpected"),
            ("a 1 soon\n", 1, "timestamp"),
            ("a\n", 1, "value"),
            ("# TYPE a countr\n", 1, "unknown metric type"),
            ("a{x=\"1\"y=\"2\"} 1\n", 1, "expected `,`"),
            ("a{1x=\"1\"} 1\n", 1, "invalid label name"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn values_round_trip_exactly() {
        for v in [
            0.0,
            -0.0,
            1.0 / 3.0,
            1e-300,
            6.02e23,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let back = parse_value(&format_value(v)).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v}");
        }
        assert!(parse_value(&format_value(f64::NAN)).unwrap().is_nan());
        assert_eq!(parse_value("0x10"), None);
    }
}
