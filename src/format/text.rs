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
//! [`parse`] finds every block in any text (markdown, an indented admonition, a log) and
//! records in a [`Layout`] everything needed to print the block again byte for byte: the
//! style, the rows and their order (hence the optional rows and the percentile list of each
//! metric and the spelling), the leading indent, the line ending and whether vLLM's trailing
//! pad spaces were stripped. [`render`] follows that layout, so for every block `x` found in
//! a text, `render_auto(&parse(text)?[i].result) == x`.
//!
//! Rendered blocks have **no trailing newline**: the text ends with the closing `=====`
//! line, and a [`ParsedBlock`]'s span likewise excludes the closing line's line ending.
//!
//! Values are stored in the units of [`BenchmarkResult`] (ms); the seconds printed by the
//! `Benchmark duration (s):` and `… Latency(s):` rows are converted at the edge by shifting
//! the decimal point of the printed text (`30.19` s → `30190` ms exactly), so that printing
//! the value again gives the same text. A value whose text would not come back identical
//! (`30.1` in a `.2f` row, a leading zero, more digits than an `f64` keeps) is rejected with
//! [`ParseError::BadValue`].
//!
//! ```
//! use servebench::format::text::{parse, render_auto};
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
//! assert_eq!(render_auto(r), &doc[blocks[0].span.clone()]);
//! ```

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::pyfmt;
use crate::result::{BenchmarkResult, Convention, Percentile, Summary};

/// The title line of every block (50 characters).
pub const TITLE: &str = "============ Serving Benchmark Result ============";
/// The closing line of every block: 50 `=`.
pub const FOOTER: &str = "==================================================";
/// GPUStack's hand-typed Latency separator (22 dashes, `Latency`, 21 dashes), which is not
/// what Python's centring would give.
pub const GPUSTACK_LATENCY_HEADER: &str = "----------------------Latency---------------------";

/// Width of vLLM's label column (`{:<40}`).
const LABEL_WIDTH: usize = 40;
/// Width of vLLM's value column (`{:<10}`).
const VALUE_WIDTH: usize = 10;

/// The two report styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Style {
    /// GPUStack's performance-lab block (seconds for the E2E latency, `N/A`, no padding).
    #[default]
    Gpustack,
    /// `vllm bench serve`'s report (`{:<40} {:<10}` rows).
    Vllm,
}

impl Style {
    /// The style's name as written in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Style::Gpustack => "gpustack",
            Style::Vllm => "vllm",
        }
    }
}

impl fmt::Display for Style {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error of [`Style`]'s `FromStr`: the name is neither `gpustack` nor `vllm`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report style `{0}` (expected `gpustack` or `vllm`)")]
pub struct UnknownStyle(pub String);

impl std::str::FromStr for Style {
    type Err = UnknownStyle;

    /// ```
    /// use servebench::format::text::Style;
    /// assert_eq!("vllm".parse::<Style>().unwrap(), Style::Vllm);
    /// assert!("csv".parse::<Style>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gpustack" => Ok(Style::Gpustack),
            "vllm" => Ok(Style::Vllm),
            other => Err(UnknownStyle(other.to_string())),
        }
    }
}

/// The line ending between a block's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineEnding {
    /// `\n`.
    #[default]
    Lf,
    /// `\r\n`.
    Crlf,
}

impl LineEnding {
    /// The characters of this line ending.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
        }
    }
}

/// A metric section of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// Time to first token (`TTFT`, ms).
    Ttft,
    /// Time per output token (`TPOT`, ms).
    Tpot,
    /// Inter-token latency (`ITL`, ms).
    Itl,
    /// vLLM's end-to-end latency section (`E2EL`, ms).
    E2el,
    /// GPUStack's E2E latency section (`Latency(s)`, printed in **seconds**).
    Latency,
}

impl Section {
    const ALL: [Section; 5] = [
        Section::Ttft,
        Section::Tpot,
        Section::Itl,
        Section::E2el,
        Section::Latency,
    ];

    /// The section's separator line (50 characters): vLLM's `"{:-^50}".format(title)`
    /// (odd pad character on the right), except GPUStack's hand-typed Latency line.
    pub fn header(self) -> &'static str {
        match self {
            Section::Ttft => "---------------Time to First Token----------------",
            Section::Tpot => "-----Time per Output Token (excl. 1st token)------",
            Section::Itl => "---------------Inter-token Latency----------------",
            Section::E2el => "----------------End-to-end Latency----------------",
            Section::Latency => GPUSTACK_LATENCY_HEADER,
        }
    }

    /// The section's title as vLLM centres it (`Time to First Token`).
    pub fn title(self) -> &'static str {
        match self {
            Section::Ttft => "Time to First Token",
            Section::Tpot => "Time per Output Token (excl. 1st token)",
            Section::Itl => "Inter-token Latency",
            Section::E2el => "End-to-end Latency",
            Section::Latency => "Latency",
        }
    }

    /// The label tail after the statistic word: `TTFT (ms):`, `Latency(s):`.
    fn label_tail(self) -> &'static str {
        match self {
            Section::Ttft => "TTFT (ms):",
            Section::Tpot => "TPOT (ms):",
            Section::Itl => "ITL (ms):",
            Section::E2el => "E2EL (ms):",
            Section::Latency => "Latency(s):",
        }
    }

    /// Whether the section prints seconds (stored as ms).
    fn in_seconds(self) -> bool {
        self == Section::Latency
    }

    fn metric(self) -> Metric {
        match self {
            Section::Ttft => Metric::Ttft,
            Section::Tpot => Metric::Tpot,
            Section::Itl => Metric::Itl,
            Section::E2el | Section::Latency => Metric::E2el,
        }
    }
}

/// Which [`Summary`] of a result a section fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Ttft,
    Tpot,
    Itl,
    E2el,
}

impl Metric {
    fn get(self, r: &BenchmarkResult) -> Option<&Summary> {
        match self {
            Metric::Ttft => r.ttft.as_ref(),
            Metric::Tpot => r.tpot.as_ref(),
            Metric::Itl => r.itl.as_ref(),
            Metric::E2el => r.e2el.as_ref(),
        }
    }

    fn slot(self, r: &mut BenchmarkResult) -> &mut Summary {
        let s = match self {
            Metric::Ttft => &mut r.ttft,
            Metric::Tpot => &mut r.tpot,
            Metric::Itl => &mut r.itl,
            Metric::E2el => &mut r.e2el,
        };
        s.get_or_insert_with(Summary::default)
    }
}

/// A statistic row of a section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// `Mean …`.
    Mean,
    /// `Median …`.
    Median,
    /// `P{p} …`, `p` in percent (`99.9`).
    Percentile(f64),
}

impl Stat {
    fn word(self) -> String {
        match self {
            Stat::Mean => "Mean".to_string(),
            Stat::Median => "Median".to_string(),
            Stat::Percentile(p) => format!("P{}", pyfmt::percentile_word(p)),
        }
    }

    fn from_word(word: &str) -> Option<Stat> {
        match word {
            "Mean" => Some(Stat::Mean),
            "Median" => Some(Stat::Median),
            _ => {
                let num = word.strip_prefix('P')?;
                let dots = num.bytes().filter(|&b| b == b'.').count();
                if num.is_empty()
                    || dots > 1
                    || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                {
                    return None;
                }
                let p: f64 = num.parse().ok()?;
                // Only the spelling vLLM itself would print maps back to the same row.
                (pyfmt::percentile_word(p) == num).then_some(Stat::Percentile(p))
            }
        }
    }
}

/// A top-level (non-section) row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// `Successful requests:` (integer).
    SuccessfulRequests,
    /// `Failed requests:` (integer; vLLM ≥ 0.12).
    FailedRequests,
    /// `Maximum request concurrency:` (integer).
    MaxConcurrency,
    /// `Request rate configured (RPS):` (`.2f`; vLLM, finite rates only).
    RequestRateConfigured,
    /// `Benchmark duration (s):` (`.2f` seconds, stored as ms).
    Duration,
    /// `Total input tokens:` (integer).
    TotalInputTokens,
    /// `Total generated tokens:` (integer).
    TotalGeneratedTokens,
    /// `Request throughput (req/s):`.
    RequestThroughput,
    /// `Request goodput (req/s):` (vLLM with `--goodput`).
    RequestGoodput,
    /// `Input token throughput (tok/s):` (2024-era vLLM script).
    InputTokenThroughput,
    /// `Output token throughput (tok/s):`.
    OutputTokenThroughput,
    /// `Peak output token throughput (tok/s):`.
    PeakOutputThroughput,
    /// `Peak concurrent requests:` (`.2f` although vLLM's value is an integer).
    PeakConcurrentRequests,
    /// `Total token throughput (tok/s):` (vLLM ≥ 0.13 spelling).
    TotalTokenThroughput,
    /// `Total Token throughput (tok/s):` (GPUStack and vLLM ≤ 0.12 spelling).
    TotalTokenThroughputCapital,
}

impl Field {
    const ALL: [Field; 15] = [
        Field::SuccessfulRequests,
        Field::FailedRequests,
        Field::MaxConcurrency,
        Field::RequestRateConfigured,
        Field::Duration,
        Field::TotalInputTokens,
        Field::TotalGeneratedTokens,
        Field::RequestThroughput,
        Field::RequestGoodput,
        Field::InputTokenThroughput,
        Field::OutputTokenThroughput,
        Field::PeakOutputThroughput,
        Field::PeakConcurrentRequests,
        Field::TotalTokenThroughput,
        Field::TotalTokenThroughputCapital,
    ];

    /// The row's label, colon included.
    pub fn label(self) -> &'static str {
        match self {
            Field::SuccessfulRequests => "Successful requests:",
            Field::FailedRequests => "Failed requests:",
            Field::MaxConcurrency => "Maximum request concurrency:",
            Field::RequestRateConfigured => "Request rate configured (RPS):",
            Field::Duration => "Benchmark duration (s):",
            Field::TotalInputTokens => "Total input tokens:",
            Field::TotalGeneratedTokens => "Total generated tokens:",
            Field::RequestThroughput => "Request throughput (req/s):",
            Field::RequestGoodput => "Request goodput (req/s):",
            Field::InputTokenThroughput => "Input token throughput (tok/s):",
            Field::OutputTokenThroughput => "Output token throughput (tok/s):",
            Field::PeakOutputThroughput => "Peak output token throughput (tok/s):",
            Field::PeakConcurrentRequests => "Peak concurrent requests:",
            Field::TotalTokenThroughput => "Total token throughput (tok/s):",
            Field::TotalTokenThroughputCapital => "Total Token throughput (tok/s):",
        }
    }

    /// Both spellings of the total token throughput fill the same value.
    fn canonical(self) -> Field {
        match self {
            Field::TotalTokenThroughputCapital => Field::TotalTokenThroughput,
            other => other,
        }
    }
}

/// One line of a block between the title and the closing line.
///
/// In JSON a row is written as its exact text: the separator line for a header, the label
/// (colon included) for a value row, e.g. `"P99.9 TTFT (ms):"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Row {
    /// A section separator line.
    Header(Section),
    /// A top-level value row.
    Field(Field),
    /// A statistic of a section.
    Stat(Section, Stat),
}

impl Row {
    /// The row's text: the whole line for a header, the label (with its colon) otherwise.
    ///
    /// ```
    /// use servebench::format::text::{Row, Section, Stat};
    /// assert_eq!(Row::Stat(Section::Ttft, Stat::Percentile(99.9)).text(), "P99.9 TTFT (ms):");
    /// assert_eq!(Row::Stat(Section::Latency, Stat::Mean).text(), "Mean Latency(s):");
    /// ```
    pub fn text(&self) -> String {
        match self {
            Row::Header(s) => s.header().to_string(),
            Row::Field(f) => f.label().to_string(),
            Row::Stat(s, st) => format!("{} {}", st.word(), s.label_tail()),
        }
    }

    /// The row whose text is `text` (see [`Row::text`]), if any.
    pub fn from_text(text: &str) -> Option<Row> {
        if let Some(s) = Section::ALL.into_iter().find(|s| s.header() == text) {
            return Some(Row::Header(s));
        }
        if let Some(f) = Field::ALL.into_iter().find(|f| f.label() == text) {
            return Some(Row::Field(f));
        }
        let (word, tail) = text.split_once(' ')?;
        let section = Section::ALL.into_iter().find(|s| s.label_tail() == tail)?;
        Some(Row::Stat(section, Stat::from_word(word)?))
    }

    /// 0-based column (after the indent) where the value starts.
    fn value_col(&self, label_len: usize) -> usize {
        let base = label_len.max(LABEL_WIDTH) + 1;
        match self {
            // GPUStack's hand-typed quirk: one extra space on the Latency rows.
            Row::Stat(Section::Latency, _) => base + 1,
            _ => base,
        }
    }

    /// What the row's value means: its type and unit.
    fn kind(&self) -> ValueKind {
        match self {
            Row::Header(_) => ValueKind::None,
            Row::Field(f) => match f {
                Field::SuccessfulRequests
                | Field::FailedRequests
                | Field::MaxConcurrency
                | Field::TotalInputTokens
                | Field::TotalGeneratedTokens => ValueKind::Int,
                Field::Duration => ValueKind::Float { seconds: true },
                _ => ValueKind::Float { seconds: false },
            },
            Row::Stat(s, _) => ValueKind::Float {
                seconds: s.in_seconds(),
            },
        }
    }

    /// The slot of the result the row fills, for duplicate detection.
    fn slot(&self) -> Slot {
        match *self {
            Row::Header(s) => Slot::Header(s),
            Row::Field(f) => Slot::Field(f.canonical()),
            Row::Stat(s, st) => Slot::Stat(s.metric(), st),
        }
    }
}

impl From<Row> for String {
    fn from(r: Row) -> String {
        r.text()
    }
}

/// Error of [`Row`]'s `TryFrom<String>`: the text is not a known row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report row `{0}`")]
pub struct UnknownRow(pub String);

impl TryFrom<String> for Row {
    type Error = UnknownRow;
    fn try_from(s: String) -> Result<Row, UnknownRow> {
        Row::from_text(&s).ok_or(UnknownRow(s))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    Header(Section),
    Field(Field),
    Stat(Metric, Stat),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ValueKind {
    None,
    Int,
    Float { seconds: bool },
}

/// How a block was laid out, so that rendering reproduces it byte for byte.
///
/// [`Layout::default`] is the canonical GPUStack layout; an empty `rows` list means "the
/// style's canonical rows for this result" (see [`canonical_rows`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    /// The report style (decides the padding rules).
    pub style: Style,
    /// Text before every line of the block (`"    "` inside a GPUStack admonition).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub indent: String,
    /// Line ending between the block's lines.
    #[serde(default, skip_serializing_if = "is_default")]
    pub line_ending: LineEnding,
    /// vLLM only: the `{:<10}` trailing pad spaces were stripped (e.g. by an editor).
    #[serde(default, skip_serializing_if = "is_default")]
    pub pad_stripped: bool,
    /// Every line between the title and the closing line, in order: section headers and
    /// value rows. It tells which optional rows were present, the percentiles of each metric
    /// and the spelling (`Total Token` vs `Total token`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Row>,
    /// GPUStack only: `.2f` rows whose value was a Python `int` and so was printed without
    /// decimals (`fmt_number(512)` → `512`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub int_valued: Vec<Row>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl Layout {
    /// The canonical layout of `style` for `result`: no indent, `\n`, padded vLLM rows, and
    /// [`canonical_rows`].
    pub fn canonical(result: &BenchmarkResult, style: Style) -> Layout {
        Layout {
            style,
            rows: canonical_rows(result, style),
            ..Layout::default()
        }
    }

    /// The percentiles listed for `section`, in order.
    ///
    /// ```
    /// use servebench::format::text::{parse_block, Section};
    /// let block = "============ Serving Benchmark Result ============\n\
    /// P50 TTFT (ms):                           902.78    \n\
    /// P99.9 TTFT (ms):                         1819.37   \n\
    /// ==================================================";
    /// let r = parse_block(block).unwrap();
    /// assert_eq!(r.layout.unwrap().percentiles(Section::Ttft), vec![50.0, 99.9]);
    /// ```
    pub fn percentiles(&self, section: Section) -> Vec<f64> {
        self.rows
            .iter()
            .filter_map(|r| match r {
                Row::Stat(s, Stat::Percentile(p)) if *s == section => Some(*p),
                _ => None,
            })
            .collect()
    }
}

/// The rows a style prints for `result` when no layout says otherwise.
///
/// * GPUStack: always the same 30 rows (title and closing line aside): every field of
///   GPUStack's block, the Latency/TTFT/TPOT/ITL sections with Mean, Median, P95 and P99,
///   `N/A` where a value is missing.
/// * vLLM (0.13+ spelling): a field row for each value present, in `vllm bench serve`'s
///   order; a section for each metric present, with Mean and Median when present and one
///   row per percentile of the summary, in its order.
pub fn canonical_rows(result: &BenchmarkResult, style: Style) -> Vec<Row> {
    match style {
        Style::Gpustack => {
            let mut rows: Vec<Row> = [
                Field::SuccessfulRequests,
                Field::MaxConcurrency,
                Field::Duration,
                Field::TotalInputTokens,
                Field::TotalGeneratedTokens,
                Field::RequestThroughput,
                Field::OutputTokenThroughput,
                Field::PeakOutputThroughput,
                Field::PeakConcurrentRequests,
                Field::TotalTokenThroughputCapital,
            ]
            .into_iter()
            .map(Row::Field)
            .collect();
            for s in [Section::Latency, Section::Ttft, Section::Tpot, Section::Itl] {
                rows.push(Row::Header(s));
                for st in [
                    Stat::Mean,
                    Stat::Median,
                    Stat::Percentile(95.0),
                    Stat::Percentile(99.0),
                ] {
                    rows.push(Row::Stat(s, st));
                }
            }
            rows
        }
        Style::Vllm => {
            let mut rows: Vec<Row> = [
                Field::SuccessfulRequests,
                Field::FailedRequests,
                Field::MaxConcurrency,
                Field::RequestRateConfigured,
                Field::Duration,
                Field::TotalInputTokens,
                Field::TotalGeneratedTokens,
                Field::RequestThroughput,
                Field::RequestGoodput,
                Field::InputTokenThroughput,
                Field::OutputTokenThroughput,
                Field::PeakOutputThroughput,
                Field::PeakConcurrentRequests,
                Field::TotalTokenThroughput,
            ]
            .into_iter()
            .map(Row::Field)
            .filter(|row| value_of(result, row) != Value::Missing)
            .collect();
            for s in [Section::Ttft, Section::Tpot, Section::Itl, Section::E2el] {
                let Some(summary) = s.metric().get(result) else {
                    continue;
                };
                rows.push(Row::Header(s));
                if summary.mean.is_some() {
                    rows.push(Row::Stat(s, Stat::Mean));
                }
                if summary.median.is_some() {
                    rows.push(Row::Stat(s, Stat::Median));
                }
                for q in &summary.percentiles {
                    rows.push(Row::Stat(s, Stat::Percentile(q.p)));
                }
            }
            rows
        }
    }
}

/// A row's value in the unit it is printed in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Missing,
    Int(u64),
    Float(f64),
}

fn value_of(r: &BenchmarkResult, row: &Row) -> Value {
    let int = |v: Option<u64>| v.map_or(Value::Missing, Value::Int);
    let float = |v: Option<f64>| v.map_or(Value::Missing, Value::Float);
    match *row {
        Row::Header(_) => Value::Missing,
        Row::Field(f) => match f {
            Field::SuccessfulRequests => int(r.successful_requests),
            Field::FailedRequests => int(r.failed_requests),
            Field::MaxConcurrency => int(r.max_concurrency),
            Field::RequestRateConfigured => float(r.request_rate_configured),
            Field::Duration => float(r.duration_ms.map(ms_to_s)),
            Field::TotalInputTokens => int(r.total_input_tokens),
            Field::TotalGeneratedTokens => int(r.total_output_tokens),
            Field::RequestThroughput => float(r.request_throughput_per_s),
            Field::RequestGoodput => float(r.request_goodput_per_s),
            Field::InputTokenThroughput => float(r.input_throughput_per_s),
            Field::OutputTokenThroughput => float(r.output_throughput_per_s),
            Field::PeakOutputThroughput => float(r.peak_output_throughput_per_s),
            Field::PeakConcurrentRequests => float(r.peak_concurrent_requests),
            Field::TotalTokenThroughput | Field::TotalTokenThroughputCapital => {
                float(r.total_token_throughput_per_s)
            }
        },
        Row::Stat(s, st) => {
            let Some(summary) = s.metric().get(r) else {
                return Value::Missing;
            };
            let v = match st {
                Stat::Mean => summary.mean,
                Stat::Median => summary.median,
                Stat::Percentile(p) => summary.percentile(p),
            };
            float(if s.in_seconds() { v.map(ms_to_s) } else { v })
        }
    }
}

fn ms_to_s(ms: f64) -> f64 {
    ms / 1000.0
}

/// Writes `v` (in the row's printed unit, ms for the seconds rows already converted) into
/// the result.
fn set_value(r: &mut BenchmarkResult, row: &Row, v: Value) {
    let int = match v {
        Value::Int(i) => Some(i),
        _ => None,
    };
    let float = match v {
        Value::Float(x) => Some(x),
        _ => None,
    };
    match *row {
        Row::Header(s) => {
            s.metric().slot(r);
        }
        Row::Field(f) => match f {
            Field::SuccessfulRequests => r.successful_requests = int,
            Field::FailedRequests => r.failed_requests = int,
            Field::MaxConcurrency => r.max_concurrency = int,
            Field::RequestRateConfigured => r.request_rate_configured = float,
            Field::Duration => r.duration_ms = float,
            Field::TotalInputTokens => r.total_input_tokens = int,
            Field::TotalGeneratedTokens => r.total_output_tokens = int,
            Field::RequestThroughput => r.request_throughput_per_s = float,
            Field::RequestGoodput => r.request_goodput_per_s = float,
            Field::InputTokenThroughput => r.input_throughput_per_s = float,
            Field::OutputTokenThroughput => r.output_throughput_per_s = float,
            Field::PeakOutputThroughput => r.peak_output_throughput_per_s = float,
            Field::PeakConcurrentRequests => r.peak_concurrent_requests = float,
            Field::TotalTokenThroughput | Field::TotalTokenThroughputCapital => {
                r.total_token_throughput_per_s = float
            }
        },
        Row::Stat(s, st) => {
            let summary = s.metric().slot(r);
            match st {
                Stat::Mean => summary.mean = float,
                Stat::Median => summary.median = float,
                Stat::Percentile(p) => summary.percentiles.push(Percentile { p, value: float }),
            }
        }
    }
}

/// The value text of a row: `N/A`, an integer, or `.2f` (Python `int` form when
/// `int_valued` and the value is still integral).
fn format_value(v: Value, int_valued: bool) -> String {
    match v {
        Value::Missing => "N/A".to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => {
            if int_valued && x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
                // Python's str(int): no sign on zero.
                format!("{}", if x == 0.0 { 0 } else { x as i64 })
            } else {
                pyfmt::fixed(x, 2)
            }
        }
    }
}

/// A block found by [`parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedBlock {
    /// The block's values and its [`Layout`].
    pub result: BenchmarkResult,
    /// 1-based line of the title line.
    pub start_line: usize,
    /// 1-based line of the closing `=====` line.
    pub end_line: usize,
    /// Byte range of the block in the input: from the start of the title line (indent
    /// included) to the end of the closing line (its line ending excluded). Rendering the
    /// result gives exactly `&text[span]`.
    pub span: Range<usize>,
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
struct Line<'a> {
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

fn split_lines(text: &str) -> Vec<Line<'_>> {
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
fn title_indent(body: &str) -> Option<&str> {
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
/// [`render`] writes it.
///
/// # Errors
///
/// As [`parse`], plus [`ParseError::ExpectedTitle`] when the first line is not a title line
/// and [`ParseError::TrailingText`] when anything follows the closing line.
pub fn parse_block(block: &str) -> Result<BenchmarkResult, ParseError> {
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
    Ok(parsed.result)
}

/// Whether the block starting at `title_idx` is GPUStack-styled: it has the Latency
/// separator or a `Latency(s)` row before its closing line.
fn detect_style(lines: &[Line<'_>], title_idx: usize, indent: &str) -> Style {
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
fn parse_at(
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
            result.layout = Some(layout);
            let block = ParsedBlock {
                result,
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
fn parse_row(
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
fn parse_value(text: &str, kind: ValueKind) -> Result<Option<(Value, bool)>, &'static str> {
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
fn neighbours(x: f64, n: usize) -> impl Iterator<Item = f64> {
    let mut up = x;
    let mut down = x;
    std::iter::once(x).chain((0..n).flat_map(move |_| {
        up = next_toward(up, true);
        down = next_toward(down, false);
        [up, down]
    }))
}

/// The next float above (`up`) or below `x`; non-finite values stay put.
fn next_toward(x: f64, up: bool) -> f64 {
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
fn parse_decimal(text: &str, shift: i32) -> Option<f64> {
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

/// Renders `result` as a block of `style`.
///
/// When `result.layout` is of the same style, its rows, indent, line ending and padding are
/// followed (so a parsed block comes back byte for byte); otherwise the style's canonical
/// layout is used ([`Layout::canonical`]). Values missing from the result print as `N/A`.
/// The text has no trailing newline.
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
    match &result.layout {
        Some(layout) if layout.style == style => render_with(result, layout),
        _ => render_with(result, &Layout::canonical(result, style)),
    }
}

/// Renders `result` in the style it was parsed from ([`Style::Gpustack`] when it has no
/// layout), following its layout.
pub fn render_auto(result: &BenchmarkResult) -> String {
    let style = result.layout.as_ref().map_or(Style::Gpustack, |l| l.style);
    render(result, style)
}

/// Renders `result` following `layout` exactly (an empty `layout.rows` means the canonical
/// rows of `layout.style`).
pub fn render_with(result: &BenchmarkResult, layout: &Layout) -> String {
    let canonical;
    let rows = if layout.rows.is_empty() {
        canonical = canonical_rows(result, layout.style);
        &canonical
    } else {
        &layout.rows
    };
    let eol = layout.line_ending.as_str();
    let mut out = String::with_capacity((rows.len() + 2) * (layout.indent.len() + 52));
    out.push_str(&layout.indent);
    out.push_str(TITLE);
    for row in rows {
        out.push_str(eol);
        out.push_str(&layout.indent);
        match row {
            Row::Header(s) => out.push_str(s.header()),
            Row::Field(_) | Row::Stat(..) => {
                let label = row.text();
                let value = format_value(value_of(result, row), layout.int_valued.contains(row));
                out.push_str(&label);
                let col = row.value_col(label.len());
                out.extend(std::iter::repeat_n(' ', col - label.len()));
                out.push_str(&value);
                if layout.style == Style::Vllm && !layout.pad_stripped {
                    let pad = VALUE_WIDTH.saturating_sub(value.len());
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
    }
    out.push_str(eol);
    out.push_str(&layout.indent);
    out.push_str(FOOTER);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_match_the_reference_literals() {
        assert_eq!(
            Section::Ttft.header(),
            "---------------Time to First Token----------------"
        );
        assert_eq!(
            Section::Tpot.header(),
            "-----Time per Output Token (excl. 1st token)------"
        );
        assert_eq!(
            Section::Itl.header(),
            "---------------Inter-token Latency----------------"
        );
        assert_eq!(
            Section::E2el.header(),
            "----------------End-to-end Latency----------------"
        );
        for s in Section::ALL {
            assert_eq!(s.header().len(), 50);
            if s != Section::Latency {
                // Python's and Rust's centring agree: odd pad character on the right.
                assert_eq!(s.header(), format!("{:-^50}", s.title()));
            }
        }
        // GPUStack's literal is NOT what centring gives (21 left / 22 right).
        assert_ne!(GPUSTACK_LATENCY_HEADER, format!("{:-^50}", "Latency"));
        assert_eq!(
            GPUSTACK_LATENCY_HEADER,
            format!("{}Latency{}", "-".repeat(22), "-".repeat(21))
        );
        assert_eq!(TITLE.len(), 50);
        assert_eq!(FOOTER.len(), 50);
    }

    #[test]
    fn row_text_round_trips() {
        let rows = canonical_rows(&BenchmarkResult::default(), Style::Gpustack);
        for row in rows.iter().chain(Field::ALL.map(Row::Field).iter()) {
            assert_eq!(Row::from_text(&row.text()), Some(*row), "{}", row.text());
        }
        assert_eq!(Row::from_text("P99.90 TTFT (ms):"), None);
        assert_eq!(Row::from_text("P TTFT (ms):"), None);
        assert_eq!(Row::from_text("P1e5 TTFT (ms):"), None);
    }

    #[test]
    fn decimal_shift_is_exact() {
        assert_eq!(parse_decimal("30.19", 3), Some(30190.0));
        assert_eq!(parse_decimal("70", 3), Some(70000.0));
        assert_eq!(parse_decimal("-0.00", 3), Some(-0.0));
        assert_eq!(parse_decimal("1.5", 0), Some(1.5));
        assert_eq!(parse_decimal("1.", 0), None);
        assert_eq!(parse_decimal(".5", 0), None);
        assert_eq!(parse_decimal("1e5", 0), None);
        assert_eq!(parse_decimal("+1", 0), None);
        assert!(parse_decimal("nan", 3).is_some_and(f64::is_nan));
    }

    #[test]
    fn neighbours_walk_outwards_one_ulp_at_a_time() {
        let n: Vec<f64> = neighbours(1.0, 2).collect();
        assert_eq!(n[0], 1.0);
        assert_eq!(n[1], 1.0 + f64::EPSILON);
        assert_eq!(n[2], 1.0 - f64::EPSILON / 2.0);
        assert_eq!(n[3], 1.0 + 2.0 * f64::EPSILON);
        assert_eq!(next_toward(-1.0, false), -1.0 - f64::EPSILON);
        assert_eq!(next_toward(0.0, false), -f64::from_bits(1));
        assert_eq!(next_toward(f64::INFINITY, false), f64::INFINITY);
    }

    #[test]
    fn huge_seconds_values_still_round_trip() {
        // A render of any ms value parses back to a value that renders the same text.
        // The first two need the neighbour search (the plain decimal shift misses them).
        for ms in [
            2.773_152_100_760_393_3e17,
            8.703_102_842_787_301e16,
            1.234_567_890_123_456_7e20,
            1e300,
            123.456,
        ] {
            let shown = ms_to_s(ms);
            let text = format_value(Value::Float(shown), false);
            let parsed = parse_value(&text, ValueKind::Float { seconds: true });
            let Ok(Some((Value::Float(back), false))) = parsed else {
                panic!("{text}: {parsed:?}");
            };
            assert_eq!(format_value(Value::Float(ms_to_s(back)), false), text);
        }
    }

    #[test]
    fn values_must_print_back_identically() {
        let f = ValueKind::Float { seconds: false };
        assert!(parse_value("30.1", f).is_err());
        assert!(parse_value("030.10", f).is_err());
        assert!(parse_value("30.100", f).is_err());
        assert!(parse_value("NaN", f).is_err());
        assert_eq!(parse_value("512", f), Ok(Some((Value::Float(512.0), true))));
        assert!(parse_value("007", ValueKind::Int).is_err());
        assert!(parse_value("-1", ValueKind::Int).is_err());
        // More digits than an f64 keeps: would not print back.
        assert!(parse_value("12345678901234567890.12", f).is_err());
    }
}
