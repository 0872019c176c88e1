//! "Serving Benchmark Result" blocks: rendering and parsing in GPUStack and vLLM styles.
//!
//! A block is the text between the title line `============ Serving Benchmark Result
//! ============` and the closing line of 50 `=`. Two styles exist in the wild:
//!
//! * [`Style::Gpustack`]: the blocks of GPUStack's performance-lab docs (and the seed).
//!   Hand-typed layout: values start at column 41, except the four `Latency(s)` rows whose
//!   values start at column 42; the Latency separator is 22 dashes + `Latency` + 21 dashes;
//!   `Total Token throughput` with a capital T; integers raw, floats `.2f`, `N/A` for a
//!   missing value; no trailing spaces. The E2E latency is printed in **seconds**.
//! * [`Style::Vllm`]: `vllm bench serve` 0.10–0.34. Every row is `{:<40} {:<10}` (so the
//!   value is padded with trailing spaces to 10 columns), rows appear only when the run had
//!   them, one `P{p}` row per chosen percentile, optional `End-to-end Latency` section (in
//!   ms), `Total Token` (≤ 0.12) or `Total token` (≥ 0.13) spelling.
//!
//! [`parse`](fn@parse) finds every block in any text (markdown, an indented admonition, a log) and
//! records in a [`Layout`] everything needed to print the block again byte for byte: the
//! style, the rows and their order (hence the optional rows and the percentile list of each
//! metric and the spelling), the leading indent, the line ending and whether vLLM's trailing
//! pad spaces were stripped. [`render`](fn@render) follows that layout, so for every block `x` found in
//! a text, `parse(text)?[i].render() == x`.
//!
//! Rendered blocks have **no trailing newline**: the text ends with the closing `=====`
//! line, and a [`ParsedBlock`]'s span likewise excludes the closing line's line ending.
//!
//! Values are stored in the units of [`BenchmarkResult`](crate::result::BenchmarkResult) (ms); the seconds printed by the
//! `Benchmark duration (s):` and `… Latency(s):` rows are converted at the edge by shifting
//! the decimal point of the printed text (`30.19` s → `30190` ms exactly), so that printing
//! the value again gives the same text. A value whose text would not come back identical
//! (`30.1` in a `.2f` row, a leading zero, more digits than an `f64` keeps) is rejected with
//! [`ParseError::BadValue`].
//!
//! ```
//! use servebench::format::text::parse;
//! let doc = "Benchmark result\n\n\
//! ============ Serving Benchmark Result ============
//! Successful requests:                     1000
//! Benchmark duration (s):                  70.72
//! Total input tokens:                      342058
//! ==================================================
//! ";
//! let blocks = parse(doc).unwrap();
//! assert_eq!(blocks.len(), 1);
//! let r = &blocks[0].result;
//! assert_eq!(r.duration_ms, Some(70720.0));
//! assert_eq!(blocks[0].start_line, 3);
//! assert_eq!(blocks[0].render(), &doc[blocks[0].span.clone()]);
//! ```

//! The module is split along the pipeline of a block: the vocabulary ([`Style`],
//! [`Section`], [`Row`]), the layout (how a block was printed: [`Layout`]), the values (rows
//! ↔ result fields, value text), parsing ([`parse()`], [`parse_block`]) and rendering
//! ([`render()`], [`render_with`]). The result schema
//! ([`BenchmarkResult`](crate::result::BenchmarkResult)) knows nothing of this module: a
//! block's [`Layout`] travels beside its result ([`ParsedBlock`], [`BlocksFile`]).

pub(crate) mod layout;
pub(crate) mod parse;
pub(crate) mod render;
pub(crate) mod values;
pub(crate) mod vocabulary;

pub use layout::{canonical_rows, Layout};
pub use parse::{
    parse, parse_block, BlockEntry, BlocksFile, ParseError, ParsedBlock, BLOCKS_FORMAT,
    BLOCKS_VERSION,
};
pub use render::{render, render_with, write, write_with};
pub use vocabulary::{Field, LineEnding, Row, Section, Stat, Style, UnknownRow, UnknownStyle};

/// The title line of every block (50 characters).
pub const TITLE: &str = "============ Serving Benchmark Result ============";
/// The closing line of every block: 50 `=`.
pub const FOOTER: &str = "==================================================";
/// GPUStack's hand-typed Latency separator (22 dashes, `Latency`, 21 dashes), which is not
/// what Python's centring would give.
pub const GPUSTACK_LATENCY_HEADER: &str = "----------------------Latency---------------------";

/// Width of vLLM's label column (`{:<40}`).
pub(crate) const LABEL_WIDTH: usize = 40;
/// Width of vLLM's value column (`{:<10}`).
pub(crate) const VALUE_WIDTH: usize = 10;

#[cfg(test)]
mod tests;
