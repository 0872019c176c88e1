//! [`Layout`]: how one block was printed (style, rows and their order, indent, line
//! ending, padding), kept beside its result so rendering reproduces it byte for byte; and
//! the canonical rows of each style.

use serde::{Deserialize, Serialize};

use super::values::*;
use super::vocabulary::*;
use crate::result::BenchmarkResult;

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

pub(super) fn is_default<T: Default + PartialEq>(v: &T) -> bool {
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
    /// assert_eq!(r.layout.percentiles(Section::Ttft), vec![50.0, 99.9]);
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
            // Every field in vLLM's order, in the 0.13+ spelling.
            let mut rows: Vec<Row> = Field::ALL
                .into_iter()
                .filter(|f| *f != Field::TotalTokenThroughputCapital)
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
