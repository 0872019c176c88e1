//! Rendering a result as a block into any sink: [`write`](fn@write) / [`render`](fn@render) in a style's
//! canonical layout, [`write_with`] / [`render_with`] following a [`Layout`] exactly.

use super::layout::{canonical_rows, Layout};
use super::values::*;
use super::vocabulary::*;
use super::{FOOTER, TITLE, VALUE_WIDTH};
use crate::result::BenchmarkResult;

/// Writes `result` as a block of `style` in that style's canonical layout
/// ([`Layout::canonical`]) to `w`. Values missing from the result print as `N/A`. The text
/// has no trailing newline. To print a parsed block again byte for byte, write it with its
/// own layout ([`write_with`], [`ParsedBlock::render`](super::ParsedBlock::render)).
///
/// # Errors
///
/// Only those of `w`.
pub fn write<W: std::fmt::Write + ?Sized>(
    w: &mut W,
    result: &BenchmarkResult,
    style: Style,
) -> std::fmt::Result {
    write_with(w, result, &Layout::canonical(result, style))
}

/// [`write`](fn@write) into a new `String`.
///
/// ```
/// use servebench::format::text::{render, Style};
/// use servebench::BenchmarkResult;
/// let r = BenchmarkResult { successful_requests: Some(200), duration_ms: Some(203_510.0), ..Default::default() };
/// assert_eq!(
///     render(&r, Style::Vllm),
///     "============ Serving Benchmark Result ============\n\
///      Successful requests:                     200       \n\
///      Benchmark duration (s):                  203.51    \n\
///      =================================================="
/// );
/// ```
pub fn render(result: &BenchmarkResult, style: Style) -> String {
    render_with(result, &Layout::canonical(result, style))
}

/// [`write_with`] into a new `String`.
pub fn render_with(result: &BenchmarkResult, layout: &Layout) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_with(&mut out, result, layout);
    out
}

/// Writes `result` to `w` following `layout` exactly (an empty `layout.rows` means the
/// canonical rows of `layout.style`).
///
/// # Errors
///
/// Only those of `w`.
pub fn write_with<W: std::fmt::Write + ?Sized>(
    w: &mut W,
    result: &BenchmarkResult,
    layout: &Layout,
) -> std::fmt::Result {
    let canonical;
    let rows = if layout.rows.is_empty() {
        canonical = canonical_rows(result, layout.style);
        &canonical
    } else {
        &layout.rows
    };
    let eol = layout.line_ending.as_str();
    w.write_str(&layout.indent)?;
    w.write_str(TITLE)?;
    for row in rows {
        w.write_str(eol)?;
        w.write_str(&layout.indent)?;
        match row {
            Row::Header(s) => w.write_str(s.header())?,
            Row::Field(_) | Row::Stat(..) => {
                let label = row.text();
                let value = format_value(value_of(result, row), layout.int_valued.contains(row));
                w.write_str(&label)?;
                let col = row.value_col(label.len());
                write!(w, "{:1$}", "", col - label.len())?;
                w.write_str(&value)?;
                if layout.style == Style::Vllm && !layout.pad_stripped {
                    let pad = VALUE_WIDTH.saturating_sub(value.len());
                    write!(w, "{:1$}", "", pad)?;
                }
            }
        }
    }
    w.write_str(eol)?;
    w.write_str(&layout.indent)?;
    w.write_str(FOOTER)
}
