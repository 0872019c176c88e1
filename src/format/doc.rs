//! Documents that hold report blocks (a GPUStack performance page, as markdown or as the
//! plain text the seed is): the run metadata written around each block. [`contexts`] reads
//! the lines before each block: the nearest heading-like line (`Quantization`,
//! `Throughput Profile`, `#### vLLM`), `Profile: ShareGPT`, the `Backend Parameters:` list
//! (`--reasoning-parser=qwen3` …), the `Baseline benchmark result` / `Optimized benchmark
//! result` titles and the `Engine Version` lines (`vLLM v0.17.1`), and
//! [`BlockContext::apply`] writes them into a result's [`RunMeta`].
//!
//! Rules, in the order a line is tried (after trimming; `- `/`* ` bullets and backticks
//! around values are ignored):
//! - ```` ``` ```` fences and blank lines are skipped;
//! - `#…` lines are headings (in a markdown document, the only headings);
//! - `??? info "Baseline benchmark result"` or a bare `… benchmark result` line is the
//!   block's title; `Baseline`/`Optimized` in it is the block's [`Role`];
//! - `Profile: X` names the block's profile; `X` (or `X Profile`) is mapped to a preset
//!   with [`profile_for_title`];
//! - `[Baseline |Optimized ]Backend Parameters:` starts the parameter list: the following
//!   lines that start with `--` (blank and fence lines allowed between them);
//! - `vLLM v0.17.1` / `SGLang v0.5.9` record an engine version for the document;
//! - in plain text, a line of at most 100 characters and 12 words that has no tab, no
//!   `: `, none of `[]{}|=<>`, does not start with `-`, `!`, `>`, a digit or a log level
//!   (`INFO`, `WARNING`, …) and does not end with `.`, `:`, `;`, `,` or `\` is heading-like.
//!
//! Profile, parameters and title belong to the next block only. The heading persists until
//! the next heading, so the "Optimized" block of an "Other Benchmark Cases" pair gets its
//! pair's heading. The engine is the nearest heading naming vLLM or SGLang (as a word)
//! between the previous block and this one.

use std::ops::Range;

use serde::Serialize;

use crate::format::text::{self, ParseError};
use crate::profile::Profile;
use crate::result::{BenchmarkResult, RunMeta};

/// A block found in a document, its result carrying the run metadata read around it.
#[derive(Debug, Clone, PartialEq)]
pub struct DocBlock {
    /// The block's figures, `meta` filled from `context` (see [`BlockContext::apply`]).
    pub result: BenchmarkResult,
    /// How the block was printed.
    pub layout: text::Layout,
    /// 1-based line of the block's title line.
    pub start_line: usize,
    /// 1-based line of the block's closing line.
    pub end_line: usize,
    /// Byte range of the block in the document (see `format::text::ParsedBlock::span`).
    pub span: Range<usize>,
    /// What the document says around the block.
    pub context: BlockContext,
}

/// Finds every block of `text` with [`text::parse`](fn@text::parse) and attaches each block's
/// [`BlockContext`] to its result's metadata.
///
/// ```
/// use servebench::format::doc;
/// let seed = std::fs::read_to_string("tests/fixtures/seed.txt").unwrap();
/// let blocks = doc::parse(&seed).unwrap();
/// assert_eq!(blocks.len(), 15);
/// let mtp = &blocks[6].result;
/// assert_eq!(mtp.meta.label.as_deref(), Some("Speculative Decoding && Quantization"));
/// assert_eq!(mtp.success_rate(None), Some(0.516)); // 516 of the ShareGPT profile's 1000
/// ```
///
/// # Errors
///
/// Any [`ParseError`] of [`text::parse`](fn@text::parse); it names the 1-based line.
pub fn parse(text: &str) -> Result<Vec<DocBlock>, ParseError> {
    let blocks = text::parse(text)?;
    if blocks.is_empty() {
        return Ok(Vec::new());
    }
    let ranges: Vec<(usize, usize)> = blocks.iter().map(|b| (b.start_line, b.end_line)).collect();
    let ctxs = contexts(text, &ranges);
    Ok(blocks
        .into_iter()
        .zip(ctxs)
        .map(|(b, context)| {
            let mut result = b.result;
            context.apply(&mut result.meta);
            DocBlock {
                result,
                layout: b.layout,
                start_line: b.start_line,
                end_line: b.end_line,
                span: b.span,
                context,
            }
        })
        .collect())
}

/// Which side of a baseline/optimized pair a block is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `Baseline benchmark result`.
    Baseline,
    /// `Optimized benchmark result`.
    Optimized,
}

/// The metadata written around one block.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BlockContext {
    /// The nearest preceding heading-like line (`Quantization`, `vLLM`, `ShareGPT`).
    pub heading: Option<String>,
    /// The block's title (`Benchmark result`, `Baseline benchmark result`).
    pub title: Option<String>,
    /// Baseline or optimized, from the title.
    pub role: Option<Role>,
    /// The profile as written (`ShareGPT`), from `Profile:` or a profile-named heading.
    pub profile_name: Option<String>,
    /// The preset that name maps to.
    pub profile: Option<Profile>,
    /// The `Backend Parameters:` list.
    pub backend_parameters: Vec<String>,
    /// `vLLM` or `SGLang`, from the headings since the previous block.
    pub engine: Option<String>,
    /// The engine's version from the document's `Engine Version` lines (`0.17.1`).
    pub engine_version: Option<String>,
}

impl BlockContext {
    /// The label for the block: the heading, with the role appended when there is one
    /// (`ShareGPT (baseline)`); the role alone when there is no heading.
    pub fn label(&self) -> Option<String> {
        let role = self.role.map(|r| match r {
            Role::Baseline => "baseline",
            Role::Optimized => "optimized",
        });
        match (&self.heading, role) {
            (Some(h), Some(r)) => Some(format!("{h} ({r})")),
            (Some(h), None) => Some(h.clone()),
            (None, Some(r)) => Some(r.to_string()),
            (None, None) => None,
        }
    }

    /// Fills `meta`'s label, engine, engine version, backend parameters and profile from
    /// this context, leaving fields that are already set alone.
    pub fn apply(&self, meta: &mut RunMeta) {
        if meta.label.is_none() {
            meta.label = self.label();
        }
        if meta.engine.is_none() {
            meta.engine.clone_from(&self.engine);
        }
        if meta.engine_version.is_none() {
            meta.engine_version.clone_from(&self.engine_version);
        }
        if meta.backend_parameters.is_empty() {
            meta.backend_parameters.clone_from(&self.backend_parameters);
        }
        if meta.profile.is_none() {
            meta.profile.clone_from(&self.profile);
        }
    }
}

/// The preset a profile title names: `ShareGPT`, `Throughput`, `Long Context`,
/// `Generation Heavy`, `Latency`, with or without a trailing ` Profile`, any case, or a preset
/// name (`long-context`).
///
/// ```
/// use servebench::format::doc::profile_for_title;
/// assert_eq!(profile_for_title("Long Context Profile").unwrap().name.as_deref(), Some("long-context"));
/// assert_eq!(profile_for_title("`ShareGPT`").unwrap().total_requests, 1000);
/// assert!(profile_for_title("Quantization").is_none());
/// ```
pub fn profile_for_title(title: &str) -> Option<Profile> {
    let t = title.trim().trim_matches('`').trim();
    let lower = t.to_ascii_lowercase();
    let base = lower.strip_suffix(" profile").unwrap_or(&lower).trim();
    let name: String = base
        .chars()
        .map(|c| if c == ' ' || c == '_' { '-' } else { c })
        .collect();
    Profile::preset(&name).ok()
}

const ENGINES: [&str; 2] = ["vLLM", "SGLang"];

/// The engine a heading names as a whole word (`vLLM`, `SGLang`), canonically spelled.
fn engine_in(heading: &str) -> Option<&'static str> {
    heading
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find_map(|w| ENGINES.iter().find(|e| e.eq_ignore_ascii_case(w)).copied())
}

/// `vLLM v0.17.1` → (`vLLM`, `0.17.1`).
fn engine_version_line(s: &str) -> Option<(&'static str, String)> {
    let mut parts = s.split_whitespace();
    let (name, version) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let engine = ENGINES.iter().find(|e| e.eq_ignore_ascii_case(name))?;
    let v = version.strip_prefix(['v', 'V']).unwrap_or(version);
    v.starts_with(|c: char| c.is_ascii_digit())
        .then(|| (*engine, v.to_string()))
}

enum Line<'a> {
    Skip,
    Heading(&'a str),
    Title(&'a str),
    Profile(&'a str),
    ParamsStart,
    Param(&'a str),
    EngineVersion(&'static str, String),
    Other,
}

fn strip_bullet(s: &str) -> (&str, bool) {
    for b in ["- ", "* "] {
        if let Some(rest) = s.strip_prefix(b) {
            return (rest.trim_start(), true);
        }
    }
    (s, false)
}

fn classify(line: &str, markdown: bool) -> Line<'_> {
    let raw = line.trim();
    if raw.is_empty() || raw.starts_with("```") {
        return Line::Skip;
    }
    if raw.starts_with('#') {
        let h = raw.trim_start_matches('#').trim();
        return if h.is_empty() {
            Line::Skip
        } else {
            Line::Heading(h)
        };
    }
    if let Some(rest) = raw.strip_prefix("???+").or_else(|| raw.strip_prefix("???")) {
        let title = rest.split('"').nth(1).unwrap_or("");
        return if title.to_ascii_lowercase().ends_with("benchmark result") {
            Line::Title(title)
        } else {
            Line::Other
        };
    }
    if raw.starts_with("--") {
        return Line::Param(raw);
    }
    let (s, bullet) = strip_bullet(raw);
    let lower = s.to_ascii_lowercase();
    if s.len() <= 40 && lower.ends_with("benchmark result") {
        return Line::Title(s);
    }
    if let Some(v) = s.strip_prefix("Profile:") {
        return Line::Profile(v.trim().trim_matches('`').trim());
    }
    if let Some(i) = s.find("Backend Parameters:") {
        let prefix = s.get(..i).unwrap_or("").trim();
        if prefix.is_empty() || prefix == "Baseline" || prefix == "Optimized" {
            return Line::ParamsStart;
        }
    }
    if let Some((engine, version)) = engine_version_line(s) {
        return Line::EngineVersion(engine, version);
    }
    if markdown || bullet {
        return Line::Other;
    }
    const LOG_LEVELS: [&str; 6] = ["INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL"];
    let heading_like = s.len() <= 100
        && s.split_whitespace().count() <= 12
        && !s
            .split_whitespace()
            .next()
            .is_some_and(|w| LOG_LEVELS.contains(&w.trim_matches(':')))
        && !s.contains(['\t', '[', ']', '{', '}', '|', '=', '<', '>'])
        && !s.contains(": ")
        && !s.starts_with(['|', '-', '!', '[', '>', '='])
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && !s.ends_with(['.', ':', ';', ',', '\\']);
    if heading_like {
        Line::Heading(s)
    } else {
        Line::Other
    }
}

/// The context of each block, for blocks at the given 1-based inclusive line ranges
/// (`(start_line, end_line)`, in document order, as `format::text` reports them). Returns
/// one [`BlockContext`] per range, in the same order.
///
/// ```
/// use servebench::format::doc::{contexts, Role};
/// let text = "Throughput Profile\n\nBaseline Backend Parameters:\n\n--max-model-len=32768\n\nBaseline benchmark result\n\n<block>\n";
/// let c = contexts(text, &[(9, 9)]);
/// assert_eq!(c[0].heading.as_deref(), Some("Throughput Profile"));
/// assert_eq!(c[0].role, Some(Role::Baseline));
/// assert_eq!(c[0].backend_parameters, ["--max-model-len=32768"]);
/// assert_eq!(c[0].profile.as_ref().unwrap().total_requests, 1000);
/// ```
pub fn contexts(text: &str, blocks: &[(usize, usize)]) -> Vec<BlockContext> {
    let markdown = text
        .lines()
        .any(|l| l.starts_with("# ") || l.starts_with("## ") || l.starts_with("### "));
    let mut versions: Vec<(&'static str, String)> = Vec::new();
    let mut heading: Option<String> = None;
    // The engine named by the latest heading (that names one) since the previous block.
    let mut engine_since_block: Option<&'static str> = None;
    let mut pending = BlockContext::default();
    let mut collecting = false;
    let mut out = Vec::with_capacity(blocks.len());
    let mut next = blocks.iter().peekable();
    let mut skip_until = 0usize;

    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if n <= skip_until {
            continue;
        }
        if let Some(&&(start, end)) = next.peek() {
            if n >= start {
                next.next();
                skip_until = end;
                let mut ctx = std::mem::take(&mut pending);
                ctx.heading.clone_from(&heading);
                ctx.engine = engine_since_block.map(str::to_string);
                if let Some(e) = &ctx.engine {
                    ctx.engine_version = versions
                        .iter()
                        .find(|(name, _)| name == e)
                        .map(|(_, v)| v.clone());
                }
                if ctx.profile.is_none() {
                    if let Some(h) = &heading {
                        ctx.profile = profile_for_title(h);
                        if ctx.profile.is_some() {
                            ctx.profile_name = Some(h.clone());
                        }
                    }
                }
                out.push(ctx);
                engine_since_block = None;
                collecting = false;
                continue;
            }
        }
        match classify(line, markdown) {
            Line::Skip => {}
            Line::Param(p) if collecting => pending.backend_parameters.push(p.to_string()),
            Line::ParamsStart => {
                collecting = true;
                pending.backend_parameters.clear();
            }
            other => {
                collecting = false;
                match other {
                    Line::Heading(h) => {
                        heading = Some(h.to_string());
                        if let Some(e) = engine_in(h) {
                            engine_since_block = Some(e);
                        }
                    }
                    Line::Title(t) => {
                        let lower = t.to_ascii_lowercase();
                        pending.role = if lower.starts_with("baseline") {
                            Some(Role::Baseline)
                        } else if lower.starts_with("optimized") {
                            Some(Role::Optimized)
                        } else {
                            None
                        };
                        pending.title = Some(t.to_string());
                    }
                    Line::Profile(p) => {
                        pending.profile = profile_for_title(p);
                        pending.profile_name = Some(p.to_string());
                    }
                    Line::EngineVersion(e, v) if !versions.iter().any(|(name, _)| *name == e) => {
                        versions.push((e, v));
                    }
                    _ => {}
                }
            }
        }
    }
    // Ranges beyond the text's end still get a (heading-only) context.
    for _ in next {
        out.push(BlockContext {
            heading: heading.clone(),
            ..Default::default()
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block ranges found by their header and footer lines (independent of `format::text`).
    fn ranges(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.contains("Serving Benchmark Result") {
                start = Some(i + 1);
            } else if l.len() == 50 && l.chars().all(|c| c == '=') {
                if let Some(s) = start.take() {
                    out.push((s, i + 1));
                }
            }
        }
        out
    }

    fn seed() -> (Vec<(usize, usize)>, Vec<BlockContext>) {
        let text = std::fs::read_to_string("tests/fixtures/seed.txt").unwrap();
        let r = ranges(&text);
        let c = contexts(&text, &r);
        (r, c)
    }

    #[test]
    fn seed_blocks_get_their_labels_roles_and_profiles() {
        let (r, c) = seed();
        assert_eq!(r.len(), 15);
        assert_eq!(c.len(), 15);
        let labels: Vec<String> = c.iter().map(|c| c.label().unwrap()).collect();
        assert_eq!(
            labels,
            [
                "vLLM",
                "SGLang",
                "Quantization",
                "Prefix Cache && Quantization",
                "Performance Mode && Prefix Cache && Quantization",
                "KV Cache Dtype && Prefix Cache && Performance Mode && Quantization",
                "Speculative Decoding && Quantization",
                "ShareGPT (baseline)",
                "ShareGPT (optimized)",
                "Throughput Profile (baseline)",
                "Throughput Profile (optimized)",
                "Long Context Profile (baseline)",
                "Long Context Profile (optimized)",
                "Generation Heavy Profile (baseline)",
                "Generation Heavy Profile (optimized)",
            ]
        );
        let profiles: Vec<&str> = c
            .iter()
            .map(|c| c.profile.as_ref().unwrap().name.as_deref().unwrap())
            .collect();
        assert_eq!(&profiles[..9], ["sharegpt"; 9]);
        assert_eq!(
            &profiles[9..],
            [
                "throughput",
                "throughput",
                "long-context",
                "long-context",
                "generation-heavy",
                "generation-heavy"
            ]
        );
        assert_eq!(c[0].profile_name.as_deref(), Some("ShareGPT"));
        assert_eq!(c[0].title.as_deref(), Some("Benchmark result"));
        assert_eq!(c[8].title.as_deref(), Some("Optimized benchmark result"));
    }

    #[test]
    fn seed_blocks_get_engines_and_backend_parameters() {
        let (_, c) = seed();
        assert_eq!(c[0].engine.as_deref(), Some("vLLM"));
        assert_eq!(c[0].engine_version.as_deref(), Some("0.17.1"));
        assert_eq!(c[1].engine.as_deref(), Some("SGLang"));
        assert_eq!(c[1].engine_version.as_deref(), Some("0.5.9"));
        assert!(c[2..].iter().all(|c| c.engine.is_none()));
        assert_eq!(
            c[0].backend_parameters,
            ["--reasoning-parser=qwen3", "--max-model-len=32768"]
        );
        assert_eq!(
            c[1].backend_parameters,
            ["--reasoning-parser=qwen3", "--context-length=32768"]
        );
        assert_eq!(
            c[6].backend_parameters,
            [
                "--reasoning-parser=qwen3",
                r#"--speculative-config={"method":"mtp","num_speculative_tokens":4}"#,
                "--max-model-len=32768"
            ]
        );
        assert_eq!(
            c[8].backend_parameters.last().unwrap(),
            "--async-scheduling"
        );
        assert_eq!(c[14].backend_parameters.len(), 5);
        let mut meta = RunMeta::default();
        c[1].apply(&mut meta);
        assert_eq!(meta.label.as_deref(), Some("SGLang"));
        assert_eq!(meta.engine.as_deref(), Some("SGLang"));
        assert_eq!(meta.profile.as_ref().unwrap().total_requests, 1000);
        assert_eq!(meta.backend_parameters.len(), 2);
    }

    #[test]
    fn markdown_documents_use_hash_headings_and_admonitions() {
        let md = "## Experiment Results\n\n### Baseline of the Inference Engine\n\n#### SGLang\n\n\
                  - Profile: `Long Context`\n- Backend Parameters:\n  ```bash\n  --context-length=32768\n  ```\n\n\
                  ??? info \"Benchmark result\"\n    ```\n    BLOCK\n    ```\n\n\
                  Some paragraph without a full stop\n\n#### Throughput Profile\n\n\
                  - Optimized Backend Parameters:N/A\n\n??? info \"Optimized benchmark result\"\n    BLOCK\n";
        let c = contexts(md, &[(15, 15), (25, 25)]);
        assert_eq!(c[0].heading.as_deref(), Some("SGLang"));
        assert_eq!(c[0].engine.as_deref(), Some("SGLang"));
        assert_eq!(c[0].profile_name.as_deref(), Some("Long Context"));
        assert_eq!(c[0].backend_parameters, ["--context-length=32768"]);
        assert_eq!(c[0].title.as_deref(), Some("Benchmark result"));
        assert_eq!(
            c[1].label().as_deref(),
            Some("Throughput Profile (optimized)")
        );
        assert!(c[1].backend_parameters.is_empty());
        assert_eq!(c[1].engine, None);
        assert_eq!(
            c[1].profile.as_ref().unwrap().name.as_deref(),
            Some("throughput")
        );
    }

    #[test]
    fn a_vllm_log_gives_no_spurious_heading() {
        let log = "INFO 07-12 10:00:01 [api_server.py:1234] vLLM API server version 0.10.1\n\
                   Namespace(backend='vllm', base_url=None, host='127.0.0.1', port=8000, dataset_name='random', model='Qwen/Qwen3-8B')\n\
                   Starting initial single prompt test run...\n\
                   Traffic request rate: inf\n\
                   100%|##########| 200/200 [03:23<00:00,  1.02s/it]\n";
        let c = contexts(&format!("{log}BLOCK\n"), &[(6, 6)]);
        assert_eq!(c[0], BlockContext::default());
        // Through `parse`, a real vLLM report gets no label and its own convention.
        let text = std::fs::read_to_string(
            "tests/fixtures/vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt",
        )
        .unwrap();
        let blocks = parse(&format!("{log}\n{text}")).unwrap();
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].result.meta.label, None);
        assert_eq!(blocks[0].start_line, 7);
    }

    #[test]
    fn no_context_and_ranges_past_the_end() {
        let c = contexts("just a block\n", &[(1, 1), (5, 6)]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0], BlockContext::default());
        assert_eq!(c[1].heading, None);
    }
}
