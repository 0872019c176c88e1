//! Telling the formats apart: [`sniff`] looks at a file's first bytes (and its name, for
//! the formats whose content alone is ambiguous) and says which [`Format`] it is, or why it
//! is none.

use super::{Format, LoadErrorKind};

/// How many leading bytes [`sniff`] reads.
const HEAD: usize = 8192;

/// The UTF-8 byte order mark some editors write at the start of a file.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The format of `bytes` (a file called `name`), decided from the first few KiB.
///
/// A UTF-8 byte order mark is skipped. JSON is told apart by its first object's keys
/// (servebench result or run file, guidellm report, aiperf aggregate, aiperf per-request
/// record, SGLang or vLLM result); YAML and CSV by their first line (guidellm's YAML opens
/// with a top-level key, guidellm's CSV with its two header rows, aiperf's CSV with
/// `Metric,`); anything holding a `Serving Benchmark Result` title line is a text report.
///
/// ```
/// use servebench::load::{sniff, Format};
/// assert_eq!(sniff("x.json", br#"{"metadata": {"version": 2}, "benchmarks": []}"#).ok(), Some(Format::GuidellmJson));
/// assert_eq!(sniff("x.txt", b"\xEF\xBB\xBF============ Serving Benchmark Result ============\n").ok(), Some(Format::Text));
/// assert!(sniff("x.bin", b"\x00\x01\x02").is_err());
/// ```
///
/// # Errors
///
/// [`LoadErrorKind::Empty`] for an empty (or blank) file, [`LoadErrorKind::Binary`] for
/// bytes that are not text, [`LoadErrorKind::Unrecognised`] (saying what the start looked
/// like) otherwise.
pub fn sniff(name: &str, bytes: &[u8]) -> Result<Format, LoadErrorKind> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let head = &bytes[..bytes.len().min(HEAD)];
    if head.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadErrorKind::Empty);
    }
    if let Some(offset) = binary_at(head, bytes.len() > HEAD) {
        return Err(binary(bytes, offset));
    }
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start();
    let lower = name.to_ascii_lowercase();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return Ok(json_format(&text, trimmed).unwrap_or(Format::Unknown));
    }
    if text.contains("Serving Benchmark Result") {
        return Ok(Format::Text);
    }
    let first = trimmed.lines().next().unwrap_or_default();
    if first.starts_with("Metric,") || first.starts_with("\"Metric\",") {
        return Ok(Format::AiperfCsv);
    }
    if is_guidellm_csv(first) || (lower.ends_with(".csv") && text.contains("Benchmark")) {
        return Ok(Format::GuidellmCsv);
    }
    if is_guidellm_yaml(&text) {
        return Ok(Format::GuidellmYaml);
    }
    Ok(Format::Unknown)
}

/// The error for a non-text byte at `offset` of `bytes`.
pub(crate) fn binary(bytes: &[u8], offset: usize) -> LoadErrorKind {
    let before = bytes.get(..offset).unwrap_or(bytes);
    LoadErrorKind::Binary {
        line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
        offset,
        nul: bytes.get(offset) == Some(&0),
    }
}

/// The offset of the first byte that shows `head` is not text (a NUL, or invalid UTF-8 that
/// is not merely cut at the end of the head).
fn binary_at(head: &[u8], cut: bool) -> Option<usize> {
    if let Some(i) = head.iter().position(|&b| b == 0) {
        return Some(i);
    }
    match std::str::from_utf8(head) {
        Ok(_) => None,
        // Cut in the middle of a character at the end of the head: still text.
        Err(e) if e.error_len().is_none() && cut => None,
        Err(e) => Some(e.valid_up_to()),
    }
}

fn json_format(text: &str, trimmed: &str) -> Option<Format> {
    let has = |k: &str| text.contains(&format!("\"{k}\""));
    if trimmed.starts_with('[') {
        return has("schema_version").then_some(Format::ServebenchJson);
    }
    let compact: String = text
        .chars()
        .take(512)
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if compact.contains(&format!("\"format\":\"{}\"", crate::result::SWEEP_FORMAT)) {
        return Some(Format::ServebenchSweep);
    }
    if crate::runfile::RunFile::sniff(text.as_bytes()) {
        return Some(Format::ServebenchRun);
    }
    // aiperf: per-request records carry `metadata` with its request ids and `metrics` of
    // `{value, unit}`; the aggregate export names its version and input configuration.
    if has("metadata") && has("metrics") && (has("x_request_id") || has("worker_id")) {
        return Some(Format::AiperfJsonl);
    }
    if has("aiperf_version") || has("input_config") || (has("unit") && has("avg") && has("p99")) {
        return Some(Format::AiperfJson);
    }
    if has("benchmarks") {
        return Some(Format::GuidellmJson);
    }
    if has("schema_version") {
        return Some(Format::ServebenchJson);
    }
    if has("dataset_name") && !has("endpoint_type") && !has("tokenizer_id") {
        return Some(Format::SglangJsonl);
    }
    if has("completed") || has("request_throughput") || has("date") {
        return Some(Format::VllmJson);
    }
    None
}

/// guidellm's CSV: its first header row names column groups, the second the columns; the
/// first group is `Benchmark` (or the row starts with guidellm's `Run Info` group).
fn is_guidellm_csv(first: &str) -> bool {
    let first = first.trim_start_matches('"');
    (first.starts_with("Benchmark") || first.starts_with("Run Info")) && first.contains(',')
}

/// guidellm's YAML: a top-level `benchmarks:` key (with `metadata:` or `args:` beside it).
fn is_guidellm_yaml(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("benchmarks:"))
        && text
            .lines()
            .any(|l| l.starts_with("metadata:") || l.starts_with("args:") || l.starts_with("- "))
}
