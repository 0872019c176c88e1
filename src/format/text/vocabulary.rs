//! The vocabulary of a block: its two [`Style`]s, line endings, metric [`Section`]s and
//! their statistic rows, top-level [`Field`]s, and [`Row`], one line of a block with its
//! exact label text and the column its value starts at.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{GPUSTACK_LATENCY_HEADER, LABEL_WIDTH};
use crate::format::pyfmt;
use crate::result::{BenchmarkResult, Summary};

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
    pub(super) const ALL: [Section; 5] = [
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
    pub(super) fn label_tail(self) -> &'static str {
        match self {
            Section::Ttft => "TTFT (ms):",
            Section::Tpot => "TPOT (ms):",
            Section::Itl => "ITL (ms):",
            Section::E2el => "E2EL (ms):",
            Section::Latency => "Latency(s):",
        }
    }

    /// Whether the section prints seconds (stored as ms).
    pub(super) fn in_seconds(self) -> bool {
        self == Section::Latency
    }

    pub(super) fn metric(self) -> Metric {
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
pub(super) enum Metric {
    Ttft,
    Tpot,
    Itl,
    E2el,
}

impl Metric {
    pub(super) fn get(self, r: &BenchmarkResult) -> Option<&Summary> {
        match self {
            Metric::Ttft => r.ttft.as_ref(),
            Metric::Tpot => r.tpot.as_ref(),
            Metric::Itl => r.itl.as_ref(),
            Metric::E2el => r.e2el.as_ref(),
        }
    }

    pub(super) fn slot(self, r: &mut BenchmarkResult) -> &mut Summary {
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
    pub(super) fn word(self) -> String {
        match self {
            Stat::Mean => "Mean".to_string(),
            Stat::Median => "Median".to_string(),
            Stat::Percentile(p) => format!("P{}", pyfmt::percentile_word(p)),
        }
    }

    pub(super) fn from_word(word: &str) -> Option<Stat> {
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
    /// `Input throughput (inputs/s):` (vLLM's pooling runs: texts, documents per second).
    InputThroughput,
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
    pub(super) const ALL: [Field; 16] = [
        Field::SuccessfulRequests,
        Field::FailedRequests,
        Field::MaxConcurrency,
        Field::RequestRateConfigured,
        Field::Duration,
        Field::TotalInputTokens,
        Field::TotalGeneratedTokens,
        Field::RequestThroughput,
        Field::RequestGoodput,
        Field::InputThroughput,
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
            Field::InputThroughput => "Input throughput (inputs/s):",
            Field::InputTokenThroughput => "Input token throughput (tok/s):",
            Field::OutputTokenThroughput => "Output token throughput (tok/s):",
            Field::PeakOutputThroughput => "Peak output token throughput (tok/s):",
            Field::PeakConcurrentRequests => "Peak concurrent requests:",
            Field::TotalTokenThroughput => "Total token throughput (tok/s):",
            Field::TotalTokenThroughputCapital => "Total Token throughput (tok/s):",
        }
    }

    /// Both spellings of the total token throughput fill the same value.
    pub(super) fn canonical(self) -> Field {
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
    pub(super) fn value_col(&self, label_len: usize) -> usize {
        let base = label_len.max(LABEL_WIDTH) + 1;
        match self {
            // GPUStack's hand-typed quirk: one extra space on the Latency rows.
            Row::Stat(Section::Latency, _) => base + 1,
            _ => base,
        }
    }

    /// What the row's value means: its type and unit.
    pub(super) fn kind(&self) -> ValueKind {
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
    pub(super) fn slot(&self) -> Slot {
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
pub(super) enum Slot {
    Header(Section),
    Field(Field),
    Stat(Metric, Stat),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ValueKind {
    None,
    Int,
    Float { seconds: bool },
}
