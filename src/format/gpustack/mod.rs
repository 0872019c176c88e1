//! GPUStack's performance documents as text
//! (`hack/perf/generate_throughput_optimization_doc.py`): the rendering of
//! [`crate::compare::gpustack`]'s cells, rows, tables, summaries and ladder, in their
//! markdown form and in the plain-text form the seed shows (the same document with markup
//! removed: table cells joined by tabs, `<br>` read as a space, spans and backticks
//! dropped). The types' `text()` and `markdown()` methods are defined here, beside the
//! document's other wording: the serving command ([`serving_command`]), the latency
//! document's ([`latency_conclusion_markdown`]) and the noise brackets ([`noisy_cell_text`]).
//!
//! ```
//! use servebench::compare::gpustack::conclusion_row;
//! use servebench::result::{BenchmarkResult, Summary};
//! let run = |tps: f64, tpot: f64| BenchmarkResult {
//!     successful_requests: Some(1000),
//!     total_token_throughput_per_s: Some(tps),
//!     tpot: Some(Summary { mean: Some(tpot), ..Default::default() }),
//!     ..Default::default()
//! };
//! let row = conclusion_row("ShareGPT Profile", &run(9632.01, 25.89), &run(10570.88, 24.71));
//! assert_eq!(row.optimized.text(), "Total TPS: 10570.88 (+9.75%) Mean TPOT(ms): 24.71");
//! assert_eq!(row.baseline.text(), "Total TPS: 9632.01 Mean TPOT(ms): 25.89");
//! ```

pub(crate) mod latency;
pub(crate) mod noise;

pub use latency::{latency_conclusion_markdown, LATENCY_BASELINE_HEADER};
pub use noise::{noisy_cell_text, noisy_row_markdown, noisy_row_text, noisy_summary_text};

use std::fmt::Write as _;

use crate::compare::gpustack::{
    Annotation, Cell, ConclusionRow, ConclusionTable, Ladder, LadderStep, SpeedSummary,
};
use crate::format::comparison::signed_percent;

/// The markdown separator row under the "Summary of Optimization Options" header, as the
/// generator prints it.
const LADDER_SEPARATOR: &str = "| --------------------------------------- | ------------------------------------------------------------------------------------------------------- | ------------------------------------------ |";

impl Annotation {
    /// The annotation as plain text: `(+9.75%)`.
    ///
    /// ```
    /// use servebench::compare::gpustack::Annotation;
    /// let a = Annotation::SuccessRateSkipped { success_rate: 516.0 / 1000.0 };
    /// assert_eq!(a.text(), "(Success rate: 51.6%, optimization skipped)");
    /// ```
    pub fn text(&self) -> String {
        match *self {
            Annotation::Change { percent } => format!("({})", signed_percent(percent)),
            Annotation::SuccessRateSkipped { success_rate } => format!(
                "(Success rate: {:.1}%, optimization skipped)",
                success_rate * 100.0
            ),
            Annotation::LowerThanPrevious {
                percent,
                previous_percent,
            } => format!(
                "({},lower than previous {}, optimization skipped in final command)",
                signed_percent(percent),
                signed_percent(previous_percent)
            ),
            Annotation::Judged { percent, verdict } => {
                format!("({}, {verdict})", signed_percent(percent))
            }
            Annotation::NotAvailable => "N/A".to_string(),
        }
    }

    /// This annotation as a decision that called the change `verdict` leaves it: a change
    /// kept with the verdict's words and no colour.
    ///
    /// ```
    /// use servebench::compare::gpustack::Annotation;
    /// let a = Annotation::Change { percent: 1.4 }.judged("within noise");
    /// assert_eq!(a.markdown(), "(+1.40%, within noise)");
    /// ```
    pub fn judged(self, verdict: &'static str) -> Annotation {
        match self {
            Annotation::Change { percent } => Annotation::Judged { percent, verdict },
            other => other,
        }
    }

    /// The span colour GPUStack uses, if any.
    pub fn colour(&self) -> Option<&'static str> {
        match *self {
            Annotation::Change { percent } if percent >= 0.0 => Some("lightgreen"),
            Annotation::Change { .. } | Annotation::SuccessRateSkipped { .. } => Some("#ffd6d6"),
            Annotation::LowerThanPrevious { .. } => Some("yellow"),
            Annotation::NotAvailable | Annotation::Judged { .. } => None,
        }
    }

    /// The annotation in markdown, inside its coloured span.
    ///
    /// ```
    /// use servebench::compare::gpustack::Annotation;
    /// assert_eq!(
    ///     Annotation::Change { percent: -1.234 }.markdown(),
    ///     r#"<span style="background-color:#ffd6d6;">(-1.23%)</span>"#
    /// );
    /// ```
    pub fn markdown(&self) -> String {
        match self.colour() {
            Some(c) => format!(
                "<span style=\"background-color:{c};\">{}</span>",
                self.text()
            ),
            None => self.text(),
        }
    }
}

fn fmt2(v: Option<f64>) -> String {
    match v {
        Some(v) => crate::format::pyfmt::fixed(v, 2),
        None => "N/A".to_string(),
    }
}

impl Cell {
    /// Plain text, as in the seed: `Total TPS: 10570.88 (+9.75%) Mean TPOT(ms): 24.71`.
    pub fn text(&self) -> String {
        let note = self
            .annotation
            .map(|a| format!(" {}", a.text()))
            .unwrap_or_default();
        format!(
            "Total TPS: {}{note} Mean TPOT(ms): {}",
            fmt2(self.total_tps),
            fmt2(self.mean_tpot_ms)
        )
    }

    /// Markdown, as GPUStack's generator prints it:
    /// `Total TPS: 10570.88 <span style="background-color:lightgreen;">(+9.75%)</span><br>Mean TPOT(ms): 24.71`.
    pub fn markdown(&self) -> String {
        let note = self
            .annotation
            .map(|a| format!(" {}", a.markdown()))
            .unwrap_or_default();
        format!(
            "Total TPS: {}{note}<br>Mean TPOT(ms): {}",
            fmt2(self.total_tps),
            fmt2(self.mean_tpot_ms)
        )
    }
}

impl ConclusionRow {
    /// Tab-separated, as in the seed.
    pub fn text(&self) -> String {
        format!(
            "{}\t{}\t{}",
            self.case,
            self.baseline.text(),
            self.optimized.text()
        )
    }

    /// A markdown table row, case in bold.
    pub fn markdown(&self) -> String {
        format!(
            "| **{}** | {} | {} |",
            self.case,
            self.baseline.markdown(),
            self.optimized.markdown()
        )
    }
}

impl ConclusionTable {
    /// Tab-separated lines (header first), each ending in `\n`.
    pub fn text(&self) -> String {
        let mut out = format!("Benchmark Case\t{}\tOptimized\n", self.baseline_header);
        for r in &self.rows {
            out.push_str(&r.text());
            out.push('\n');
        }
        out
    }

    /// The markdown table, each line ending in `\n`.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "| Benchmark Case | {} | Optimized |\n|----------|-------------------------------------------|-----------|\n",
            self.baseline_header
        );
        for r in &self.rows {
            out.push_str(&r.markdown());
            out.push('\n');
        }
        out
    }
}

impl SpeedSummary {
    /// The sentence as the generator prints it after `- Summary: ` (names in backticks).
    pub fn sentence(&self) -> String {
        let gap = self.fastest_tps - self.slowest_tps;
        let mut s = format!(
            "`{f}` Total TPS = {:.2}, `{sl}` Total TPS = {:.2}. `{f}` is faster by {gap:.2} tok/s ({:.2}%)",
            self.fastest_tps,
            self.slowest_tps,
            gap / self.slowest_tps * 100.0,
            f = self.fastest,
            sl = self.slowest,
        );
        if let (Some(fast), Some(slow)) = (self.fastest_tpot_ms, self.slowest_tpot_ms) {
            let delta = slow - fast;
            let _ = write!(s, "; Mean TPOT = {fast:.2} ms vs {slow:.2} ms");
            if delta.abs() < 1e-9 {
                s.push_str(", unchanged");
            } else if delta > 0.0 {
                let _ = write!(
                    s,
                    ", reduced by {delta:.2} ms ({:.2}%)",
                    delta / slow * 100.0
                );
            } else {
                let inc = -delta;
                let _ = write!(
                    s,
                    ", increased by {inc:.2} ms ({:.2}% slower)",
                    inc / slow * 100.0
                );
            }
        }
        s.push('.');
        s
    }

    /// The markdown line: `` - Summary: `vLLM` Total TPS = … ``.
    pub fn markdown(&self) -> String {
        format!("- Summary: {}", self.sentence())
    }

    /// The plain-text line, as the seed shows it: `Summary: vLLM Total TPS = …` (no bullet,
    /// no backticks).
    pub fn text(&self) -> String {
        format!("Summary: {}", self.sentence().replace('`', ""))
    }
}

impl LadderStep {
    /// Tab-separated row, as in the seed: name, optimized, baseline.
    pub fn text(&self) -> String {
        format!(
            "{}\t{}\t{}",
            self.name,
            self.optimized.text(),
            self.baseline.text()
        )
    }

    /// Markdown row, as the generator prints it.
    pub fn markdown(&self) -> String {
        format!(
            "| {} | {} | {} |",
            self.name,
            self.optimized.markdown(),
            self.baseline.markdown()
        )
    }
}

impl Ladder {
    /// The tab-separated table (header `Benchmark Cases\tOptimized\tBaseline`), lines
    /// ending in `\n`.
    pub fn text(&self) -> String {
        let mut out = String::from("Benchmark Cases\tOptimized\tBaseline\n");
        for s in &self.steps {
            out.push_str(&s.text());
            out.push('\n');
        }
        out
    }

    /// The markdown table as the generator prints it, lines ending in `\n`.
    pub fn markdown(&self) -> String {
        let mut out = format!("| Benchmark Cases | Optimized | Baseline |\n{LADDER_SEPARATOR}\n");
        for s in &self.steps {
            out.push_str(&s.markdown());
            out.push('\n');
        }
        out
    }
}

/// The serving command of a configuration, as GPUStack's "Serving Command" prints it:
/// `vllm serve MODEL \` (or `python3 -m sglang.launch_server \` + `--model MODEL \` when
/// `engine` is SGLang), then one parameter per line indented by four spaces. Every word is
/// quoted for a POSIX shell ([`crate::format::shell::quote`]) and a key's value is
/// redacted ([`crate::secret::redact_argv`]), so that the command is safe to paste.
///
/// ```
/// use servebench::format::gpustack::serving_command;
/// let cmd = serving_command("vLLM", "Qwen/Qwen3.5-35B-A3B-FP8", &["--max-model-len=32768".into()]);
/// assert_eq!(cmd, "vllm serve Qwen/Qwen3.5-35B-A3B-FP8 \\\n    --max-model-len=32768");
/// let mtp = serving_command("vLLM", "m", &[r#"--speculative-config={"method":"mtp"}"#.into()]);
/// assert_eq!(mtp, "vllm serve m \\\n    '--speculative-config={\"method\":\"mtp\"}'");
/// ```
pub fn serving_command(engine: &str, model: &str, parameters: &[String]) -> String {
    use crate::format::shell::quote;
    let model = quote(model);
    let mut lines = if engine.trim().eq_ignore_ascii_case("sglang") {
        vec![
            "python3 -m sglang.launch_server".to_string(),
            format!("    --model {model}"),
        ]
    } else {
        vec![format!("vllm serve {model}")]
    };
    lines.extend(
        crate::secret::redact_argv(parameters)
            .iter()
            .map(|p| format!("    {}", quote(p))),
    );
    lines.join(" \\\n")
}
