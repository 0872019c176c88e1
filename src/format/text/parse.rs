//! Finding and parsing blocks in any text: [`parse`] (every block of a document),
//! [`parse_block`] (a text that is one block), [`ParsedBlock`] (a result with its layout and
//! place), [`BlocksFile`] (the versioned JSON envelope `servebench parse` writes) and
//! [`ParseError`], which names the 1-based line.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::values::*;
use super::vocabulary::*;
use super::{FOOTER, GPUSTACK_LATENCY_HEADER, TITLE, VALUE_WIDTH};
use crate::result::{BenchmarkResult, Convention};

/// A block found by [`parse`]: its figures, how it was printed, and where it stood.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedBlock {
    /// The block's values (all times in ms).
    pub result: BenchmarkResult,
    /// How the block was printed: [`ParsedBlock::render`] follows it byte for byte.
    pub layout: Layout,
    /// 1-based line of the title line.
    pub start_line: usize,
    /// 1-based line of the closing `=====` line.
    pub end_line: usize,
    /// Byte range of the block in the input: from the start of the title line (indent
    /// included) to the end of the closing line (its line ending excluded). Rendering the
    /// result gives exactly `&text[span]`.
    pub span: Range<usize>,
}

impl ParsedBlock {
    /// The block printed again, following its [`Layout`]: for a block found in a text,
    /// exactly `&text[self.span]`.
    pub fn render(&self) -> String {
        super::render::render_with(&self.result, &self.layout)
    }
}

/// The `format` tag of a [`BlocksFile`].
pub const BLOCKS_FORMAT: &str = "servebench-blocks";
/// The current [`BlocksFile`] version.
pub const BLOCKS_VERSION: u32 = 1;

/// The JSON that `servebench parse` writes: every block of the inputs, each result with its
/// layout and lines beside it (the result schema itself carries no presentation), so that
/// `servebench render` prints each block again byte for byte.
///
/// ```json
/// {"format": "servebench-blocks", "version": 1,
///  "blocks": [{"result": {"schema_version": 1, "...": "..."},
///              "layout": {"style": "vllm", "rows": ["Successful requests:", "..."]},
///              "origin": "seed.txt:3"}]}
/// ```
///
/// Version history: 1 — first version (before it, `parse` wrote an array of results, each
/// with its layout inside as `"layout"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlocksFile {
    /// Always [`BLOCKS_FORMAT`].
    pub format: String,
    /// [`BLOCKS_VERSION`] when written by this crate.
    pub version: u32,
    /// The blocks, in input order.
    pub blocks: Vec<BlockEntry>,
}

/// One block of a [`BlocksFile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockEntry {
    /// The block's figures.
    pub result: BenchmarkResult,
    /// How it was printed; absent for a result that never was a block (rendered then in the
    /// canonical layout of the style asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    /// Where it came from: `FILE:LINE` of a block's title line, `FILE[INDEX]`, or `FILE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl BlocksFile {
    /// A file of `blocks` in the current version.
    pub fn new(blocks: Vec<BlockEntry>) -> BlocksFile {
        BlocksFile {
            format: BLOCKS_FORMAT.to_string(),
            version: BLOCKS_VERSION,
            blocks,
        }
    }
}

/// Why a text could not be parsed. Every variant names the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A line inside a block is not a known row or section header.
    #[error("line {line}: unknown row `{text}`")]
    UnknownRow {
        /// 1-based line.
        line: usize,
        /// The line, indent removed.
        text: String,
    },
    /// A known row whose value is not where the style puts it, or with unexpected trailing
    /// spaces, or a line without the block's indent.
    #[error("line {line}: misaligned row `{text}`: {reason}")]
    Misaligned {
        /// 1-based line.
        line: usize,
        /// The line.
        text: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A value that is not a number of the row's type, or not in the exact form the style
    /// prints (so re-rendering it would change the text).
    #[error("line {line}: bad value `{value}` in row `{label}`: {reason}")]
    BadValue {
        /// 1-based line.
        line: usize,
        /// The row's label.
        label: String,
        /// The value text.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A row (or section header) that fills a value already filled in this block.
    #[error("line {line}: duplicate row `{text}`")]
    DuplicateRow {
        /// 1-based line.
        line: usize,
        /// The line, indent removed.
        text: String,
    },
    /// vLLM pad spaces present on some rows and stripped on others.
    #[error("line {line}: trailing pad spaces differ from the block's earlier rows")]
    InconsistentPadding {
        /// 1-based line.
        line: usize,
    },
    /// `\n` and `\r\n` mixed inside one block.
    #[error("line {line}: line ending differs from the block's title line")]
    MixedLineEndings {
        /// 1-based line.
        line: usize,
    },
    /// A block whose closing `=====` line never came.
    #[error("line {line}: block has no closing `=====` line (reached line {reached})")]
    Unterminated {
        /// 1-based line of the block's title.
        line: usize,
        /// 1-based line where the search stopped (end of text or another title).
        reached: usize,
    },
    /// [`parse_block`]: the text does not start with a block's title line.
    #[error("line {line}: expected `{TITLE}`, found `{text}`")]
    ExpectedTitle {
        /// 1-based line.
        line: usize,
        /// The line found.
        text: String,
    },
    /// [`parse_block`]: text after the block's closing line.
    #[error("line {line}: text after the block: `{text}`")]
    TrailingText {
        /// 1-based line.
        line: usize,
        /// The line found.
        text: String,
    },
}

impl ParseError {
    /// The 1-based line the error is about.
    pub fn line(&self) -> usize {
        match self {
            ParseError::UnknownRow { line, .. }
            | ParseError::Misaligned { line, .. }
            | ParseError::BadValue { line, .. }
            | ParseError::DuplicateRow { line, .. }
            | ParseError::InconsistentPadding { line }
            | ParseError::MixedLineEndings { line }
            | ParseError::Unterminated { line, .. }
            | ParseError::ExpectedTitle { line, .. }
            | ParseError::TrailingText { line, .. } => *line,
        }
    }
}

/// One line of the input.
pub(super) struct Line<'a> {
    /// 1-based.
    no: usize,
    /// Byte offset of the line's start.
    start: usize,
    /// The line without its line ending.
    body: &'a str,
    /// Ended by `\r\n`.
    cr: bool,
    /// Followed by `\n` (false for the last line).
    nl: bool,
}

pub(super) fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut no = 1;
    while let Some(rest) = text.get(start..) {
        match rest.find('\n') {
            Some(i) => {
                let raw = &rest[..i];
                let (body, cr) = match raw.strip_suffix('\r') {
                    Some(b) => (b, true),
                    None => (raw, false),
                };
                lines.push(Line {
                    no,
                    start,
                    body,
                    cr,
                    nl: true,
                });
                start += i + 1;
                no += 1;
            }
            None => {
                lines.push(Line {
                    no,
                    start,
                    body: rest,
                    cr: false,
                    nl: false,
                });
                break;
            }
        }
    }
    lines
}

/// The indent of a title line, if `body` is one: the title preceded only by spaces, tabs
/// and markdown quote marks (`>`).
pub(super) fn title_indent(body: &str) -> Option<&str> {
    let indent = body.strip_suffix(TITLE)?;
    indent
        .chars()
        .all(|c| c == ' ' || c == '\t' || c == '>')
        .then_some(indent)
}

/// Finds and parses every "Serving Benchmark Result" block in `text`.
///
/// Text around the blocks is ignored; a text without blocks gives an empty list. A block is
/// recognised by its title line, which may be indented by spaces, tabs or `>` quote marks;
/// every line of the block must carry the same indent. Each result carries its [`Layout`]
/// and `meta.convention` (GPUStack's numbers follow guidellm's definitions, vLLM's its own).
///
/// # Errors
///
/// The first malformed block stops the parse: unknown or misaligned rows, values not in the
/// style's exact form, duplicate rows, mixed padding or line endings, or a missing closing
/// line. See [`ParseError`]; every error names its 1-based line.
pub fn parse(text: &str) -> Result<Vec<ParsedBlock>, ParseError> {
    let lines = split_lines(text);
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(indent) = title_indent(lines[i].body) {
            let (block, footer_idx) = parse_at(&lines, i, indent)?;
            blocks.push(block);
            i = footer_idx + 1;
        } else {
            i += 1;
        }
    }
    Ok(blocks)
}

/// Parses a text that is exactly one block (optionally followed by one line ending), as
/// [`render`](fn@super::render) writes it.
///
/// # Errors
///
/// As [`parse`], plus [`ParseError::ExpectedTitle`] when the first line is not a title line
/// and [`ParseError::TrailingText`] when anything follows the closing line.
pub fn parse_block(block: &str) -> Result<ParsedBlock, ParseError> {
    let lines = split_lines(block);
    let first = lines.first().ok_or(ParseError::ExpectedTitle {
        line: 1,
        text: String::new(),
    })?;
    let indent = title_indent(first.body).ok_or_else(|| ParseError::ExpectedTitle {
        line: 1,
        text: first.body.to_string(),
    })?;
    let (parsed, footer_idx) = parse_at(&lines, 0, indent)?;
    // Allowed after the closing line: nothing, or one final line ending (an empty last line).
    if let Some(extra) = lines.get(footer_idx + 1) {
        if !(footer_idx + 2 == lines.len() && extra.body.is_empty() && !extra.nl) {
            return Err(ParseError::TrailingText {
                line: extra.no,
                text: extra.body.to_string(),
            });
        }
    }
    Ok(parsed)
}

/// Whether the block starting at `title_idx` is GPUStack-styled: it has the Latency
/// separator or a `Latency(s)` row before its closing line.
pub(super) fn detect_style(lines: &[Line<'_>], title_idx: usize, indent: &str) -> Style {
    for line in lines.iter().skip(title_idx + 1) {
        let Some(body) = line.body.strip_prefix(indent) else {
            break;
        };
        if body == FOOTER || title_indent(body).is_some() {
            break;
        }
        if body == GPUSTACK_LATENCY_HEADER
            || body
                .split_once(':')
                .is_some_and(|(label, _)| label.ends_with(" Latency(s)"))
        {
            return Style::Gpustack;
        }
    }
    Style::Vllm
}

/// Parses the block whose title is `lines[title_idx]`; returns it and the index of its
/// closing line.
pub(super) fn parse_at(
    lines: &[Line<'_>],
    title_idx: usize,
    indent: &str,
) -> Result<(ParsedBlock, usize), ParseError> {
    let title = &lines[title_idx];
    let style = detect_style(lines, title_idx, indent);
    let line_ending = if title.cr {
        LineEnding::Crlf
    } else {
        LineEnding::Lf
    };
    let mut result = BenchmarkResult::default();
    let mut layout = Layout {
        style,
        indent: indent.to_string(),
        line_ending,
        ..Layout::default()
    };
    let mut slots: Vec<Slot> = Vec::new();
    // vLLM padding evidence: Some(true) = stripped.
    let mut stripped: Option<bool> = None;

    // The text's last line when it ends with a line ending: the file's last real line.
    let last_line = match lines.last() {
        Some(l) if !l.nl && l.body.is_empty() && lines.len() > 1 => l.no - 1,
        Some(l) => l.no,
        None => title.no,
    };
    for (idx, line) in lines.iter().enumerate().skip(title_idx + 1) {
        if line.no > last_line {
            break; // the empty "line" after a final line ending: the block was cut
        }
        let Some(body) = line.body.strip_prefix(indent) else {
            return Err(ParseError::Misaligned {
                line: line.no,
                text: line.body.to_string(),
                reason: "the line lacks the block's indent",
            });
        };
        if body == FOOTER {
            layout.pad_stripped = style == Style::Vllm && stripped == Some(true);
            result.meta.convention = Some(match style {
                Style::Gpustack => Convention::Guidellm,
                Style::Vllm => Convention::Vllm,
            });
            let block = ParsedBlock {
                result,
                layout,
                start_line: title.no,
                end_line: line.no,
                span: title.start..line.start + line.body.len(),
            };
            return Ok((block, idx));
        }
        // The closing line's own ending belongs to the surrounding text; every other line
        // of the block ends like the title line.
        if line.nl && line.cr != title.cr {
            return Err(ParseError::MixedLineEndings { line: line.no });
        }
        if title_indent(body).is_some() {
            return Err(ParseError::Unterminated {
                line: title.no,
                reached: line.no,
            });
        }
        let (row, value) = parse_row(body, line.no, style, &mut stripped)?;
        let slot = row.slot();
        if slots.contains(&slot) {
            return Err(ParseError::DuplicateRow {
                line: line.no,
                text: body.to_string(),
            });
        }
        slots.push(slot);
        if let Some((v, int_valued)) = value {
            set_value(&mut result, &row, v);
            if int_valued {
                layout.int_valued.push(row);
            }
        } else {
            set_value(&mut result, &row, Value::Missing);
        }
        layout.rows.push(row);
    }
    Err(ParseError::Unterminated {
        line: title.no,
        reached: last_line,
    })
}

/// Parses one line (indent removed) of a block: a header, or a row and its value (in the
/// stored unit) with whether it was printed as a Python int.
pub(super) fn parse_row(
    body: &str,
    line: usize,
    style: Style,
    stripped: &mut Option<bool>,
) -> Result<(Row, Option<(Value, bool)>), ParseError> {
    let unknown = || ParseError::UnknownRow {
        line,
        text: body.to_string(),
    };
    if let Some(s) = Section::ALL.into_iter().find(|s| s.header() == body) {
        return Ok((Row::Header(s), None));
    }
    let colon = body.find(':').ok_or_else(unknown)?;
    let (label, rest) = body.split_at(colon + 1);
    let row = match Row::from_text(label) {
        Some(row @ (Row::Field(_) | Row::Stat(..))) => row,
        _ => return Err(unknown()),
    };
    let misaligned = |reason| ParseError::Misaligned {
        line,
        text: body.to_string(),
        reason,
    };
    let gap = rest.len() - rest.trim_start_matches(' ').len();
    if label.len() + gap != row.value_col(label.len()) {
        return Err(misaligned("the value does not start at the style's column"));
    }
    let after = &rest[gap..];
    let (value, trailing) = match after.find(' ') {
        Some(i) => after.split_at(i),
        None => (after, ""),
    };
    if value.is_empty() {
        return Err(ParseError::BadValue {
            line,
            label: label.to_string(),
            value: String::new(),
            reason: "missing value",
        });
    }
    if trailing.bytes().any(|b| b != b' ') {
        return Err(ParseError::BadValue {
            line,
            label: label.to_string(),
            value: after.to_string(),
            reason: "more than one value",
        });
    }
    let parsed = parse_value(value, row.kind()).map_err(|reason| ParseError::BadValue {
        line,
        label: label.to_string(),
        value: value.to_string(),
        reason,
    })?;

    // Trailing spaces: none in GPUStack; vLLM pads to 10 columns, maybe stripped.
    let pad = VALUE_WIDTH.saturating_sub(value.len());
    match style {
        Style::Gpustack => {
            if !trailing.is_empty() {
                return Err(misaligned("trailing spaces in a GPUStack block"));
            }
        }
        Style::Vllm => {
            let this = if pad == 0 {
                if !trailing.is_empty() {
                    return Err(misaligned("trailing spaces after a 10-column value"));
                }
                None
            } else if trailing.len() == pad {
                Some(false)
            } else if trailing.is_empty() {
                Some(true)
            } else {
                return Err(misaligned("the value is not padded to 10 columns"));
            };
            if let Some(s) = this {
                if stripped.is_some_and(|prev| prev != s) {
                    return Err(ParseError::InconsistentPadding { line });
                }
                *stripped = Some(s);
            }
        }
    }
    Ok((row, parsed))
}

/// Parses a value text for a row of `kind`: `None` for `N/A`, else the value in the stored
/// unit (ms for seconds rows) and whether it was printed as a Python int. The value must
/// print back to exactly `text`.
pub(super) fn parse_value(
    text: &str,
    kind: ValueKind,
) -> Result<Option<(Value, bool)>, &'static str> {
    if text == "N/A" {
        return Ok(None);
    }
    match kind {
        ValueKind::None => Err("a header has no value"),
        ValueKind::Int => {
            let v: u64 = text.parse().map_err(|_| "not a non-negative integer")?;
            if v.to_string() != text {
                return Err("not in canonical integer form");
            }
            Ok(Some((Value::Int(v), false)))
        }
        ValueKind::Float { seconds } => {
            let int_valued = !text.contains('.') && text.bytes().all(|b| b.is_ascii_digit());
            let prints_back = |shown: f64| format_value(Value::Float(shown), int_valued) == text;
            const NOT_EXACT: &str = "not in the exact form the report prints (e.g. `.2f`)";
            if !seconds {
                let v = parse_decimal(text, 0).ok_or("not a number")?;
                return prints_back(v)
                    .then_some(Some((Value::Float(v), int_valued)))
                    .ok_or(NOT_EXACT);
            }
            // Seconds printed, ms stored. Shifting the decimal point is exact for every value
            // a report holds; for values with more digits than an f64 keeps, the ms value that
            // was rendered may lie a few ulps from the nearest one, so try the neighbours.
            let ms = parse_decimal(text, 3).ok_or("not a number")?;
            neighbours(ms, 4)
                .find(|&m| prints_back(ms_to_s(m)))
                .map(|m| Some((Value::Float(m), int_valued)))
                .ok_or(NOT_EXACT)
        }
    }
}

/// `x`, then the floats 1, 2, … `n` ulps above and below it, nearest first.
pub(super) fn neighbours(x: f64, n: usize) -> impl Iterator<Item = f64> {
    let mut up = x;
    let mut down = x;
    std::iter::once(x).chain((0..n).flat_map(move |_| {
        up = next_toward(up, true);
        down = next_toward(down, false);
        [up, down]
    }))
}

/// The next float above (`up`) or below `x`; non-finite values stay put.
pub(super) fn next_toward(x: f64, up: bool) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = x.to_bits();
    // Away from zero is one more in the bit pattern, whatever the sign.
    f64::from_bits(if (x > 0.0) == up { bits + 1 } else { bits - 1 })
}

/// Parses a plain decimal (`-?digits[.digits]`, or `nan`/`inf`/`-inf`) multiplied by
/// `10^shift`, shifting the decimal point in the text so the result is the nearest `f64` to
/// the exact product (`30.19` with shift 3 → exactly `30190.0`).
pub(super) fn parse_decimal(text: &str, shift: i32) -> Option<f64> {
    match text {
        "nan" => return Some(f64::NAN),
        "inf" => return Some(f64::INFINITY),
        "-inf" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() || !all_digits(int_part) || !all_digits(frac_part) {
        return None;
    }
    if digits.contains('.') && frac_part.is_empty() {
        return None;
    }
    let frac_len = i32::try_from(frac_part.len()).ok()?;
    let sign = if text.starts_with('-') { "-" } else { "" };
    format!("{sign}{int_part}{frac_part}e{}", shift - frac_len)
        .parse()
        .ok()
}
