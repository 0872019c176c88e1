//! Datasets that carry structure beyond a list of lengths: Mooncake trace replay (send times
//! and shared prefix blocks), shared-prefix groups, multi-turn conversations, and JSON Lines
//! prompt files. [`DatasetSpec::build`] turns one into a [`Plan`]: the requests, plus the
//! fixed send times (trace replay) or the conversation structure (multi-turn) that
//! [`RunOptions`](super::RunOptions) hands to the driver.
//!
//! Every generated prompt is made of common one-token words ([`super::workload::synthetic_text`]),
//! so a prompt of `n` tokens is `n` words and servers that count tokens roughly (the example
//! server) see the same length. Text is deterministic: a Mooncake block with hash id `h` is
//! always the same 512 words (different ids give different words), a shared-prefix group's
//! prefix is the same words in every prompt of the group, and a conversation's turn `k`
//! begins with turns `1..k` verbatim — so a server's prefix cache sees exactly the sharing
//! the dataset describes.
//!
//! ```
//! use servebench::driver::DatasetSpec;
//! let spec = DatasetSpec::SharedPrefix {
//!     groups: 2, prompts_per_group: 3, prefix_tokens: 100, input_tokens: 20, output_tokens: 8, seed: 1,
//! };
//! let plan = spec.build(None).unwrap();
//! assert_eq!(plan.items.len(), 6);
//! assert!(plan.items.iter().all(|w| w.prompt_tokens == 120 && w.shared_prefix_tokens == 100));
//! ```

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use crate::profile::{DatasetSpec, SessionSpec, ThinkTime};

use super::workload::{approx_tokens, synthetic_text, WorkItem, MAX_REQUESTS, MAX_TEXT_TOKENS};
use crate::rng::Rng;

/// Tokens per `hash_ids` block in the Mooncake trace format.
pub const MOONCAKE_BLOCK_TOKENS: u64 = 512;

pub use super::turns::TurnPlan;

/// A built dataset: the requests and how the driver must schedule them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// The requests, in id order.
    pub items: Vec<WorkItem>,
    /// Fixed send offsets from the run's start, one per item (trace replay); `None`: the
    /// run's arrival process decides.
    pub send_at: Option<Vec<Duration>>,
    /// Conversation structure, one per item (multi-turn); `None`: independent requests.
    pub turns: Option<Vec<TurnPlan>>,
}

impl Plan {
    /// Copies the plan's schedule constraints into `opts` (`send_at`, `turns`).
    pub fn apply(&self, opts: &mut super::RunOptions) {
        opts.send_at = self.send_at.clone();
        opts.turns = self.turns.clone();
    }
}

/// A dataset could not be built.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line or value is invalid: the file, the 1-based line and what is wrong (with the
    /// JSON path of the field).
    #[error("{path}:{line}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 for the whole file).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A parameter is out of range (names the parameter).
    #[error("{0}")]
    BadParameter(String),
    /// More requests or longer prompts than a workload holds in memory.
    #[error("dataset too large: {0}")]
    TooLarge(String),
}

impl DatasetSpec {
    /// A profile sending every request of the dataset at `request_rate` (first turns, for
    /// multi-turn; a trace's own times, for Mooncake), named `name`, with no cap of its own
    /// (the driver's default applies). The request count is the dataset's; building it
    /// checks the parameters and reads the file, if any.
    ///
    /// ```
    /// use servebench::driver::DatasetSpec;
    /// let spec = DatasetSpec::MultiTurn {
    ///     conversations: 8, turns: 4, input_tokens: 256, output_tokens: 64,
    ///     think_time_s: 1.0, seed: 42, path: None,
    /// };
    /// let p = spec.profile("multi-turn", 2.0).unwrap();
    /// assert_eq!(p.total_requests, 32);
    /// assert_eq!(p.title(), "multi-turn");
    /// ```
    pub fn profile(
        self,
        name: &str,
        request_rate: f64,
    ) -> Result<crate::profile::Profile, DatasetError> {
        let n = self.build(None)?.items.len() as u64;
        Ok(crate::profile::Profile {
            name: Some(name.to_string()),
            dataset: crate::profile::Dataset::Structured(self),
            request_rate,
            total_requests: n,
            max_concurrency: None,
        })
    }

    /// Builds the plan; `max_requests` keeps the first N requests (whole conversations are
    /// not required: a multi-turn plan cut at N keeps the first N requests by id).
    pub fn build(&self, max_requests: Option<u64>) -> Result<Plan, DatasetError> {
        let limit = max_requests.unwrap_or(MAX_REQUESTS).min(MAX_REQUESTS);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let mut plan = match self {
            DatasetSpec::Mooncake { path, time_scale } => mooncake(path, *time_scale, limit)?,
            DatasetSpec::SharedPrefix {
                groups,
                prompts_per_group,
                prefix_tokens,
                input_tokens,
                output_tokens,
                seed,
            } => shared_prefix(
                *groups,
                *prompts_per_group,
                *prefix_tokens,
                *input_tokens,
                *output_tokens,
                *seed,
            )?,
            DatasetSpec::MultiTurn {
                conversations,
                turns,
                input_tokens,
                output_tokens,
                think_time_s,
                seed,
                path,
            } => {
                let think = Duration::try_from_secs_f64(*think_time_s).map_err(|_| {
                    DatasetError::BadParameter(format!(
                        "think time {think_time_s}: not a non-negative number of seconds"
                    ))
                })?;
                match path {
                    // An object with `conversations`: SGLang's agentic trace format.
                    Some(p) if super::agentic::is_trace_file(p) => {
                        super::conversations::agentic_trace(
                            p,
                            *conversations,
                            *turns,
                            *output_tokens,
                            think,
                            *seed,
                        )?
                    }
                    Some(p) => super::conversations::sharegpt_multi_turn(
                        p,
                        *conversations,
                        *turns,
                        think,
                        *seed,
                    )?,
                    None => super::conversations::multi_turn(
                        *conversations,
                        *turns,
                        *input_tokens,
                        *output_tokens,
                        think,
                        *seed,
                    )?,
                }
            }
            DatasetSpec::Sessions(spec) => super::conversations::agent_sessions(spec)?,
            DatasetSpec::Jsonl {
                path,
                default_output_tokens,
            } => jsonl(path, *default_output_tokens, limit)?,
        };
        if plan.items.len() > limit {
            plan.items.truncate(limit);
            if let Some(s) = &mut plan.send_at {
                s.truncate(limit);
            }
            if let Some(t) = &mut plan.turns {
                t.truncate(limit);
            }
        }
        Ok(plan)
    }
}

/// The 512 words of Mooncake block `hash_id` (the first `tokens` of them): the same for
/// the same id, different for different ids.
///
/// ```
/// use servebench::driver::mooncake_block_text;
/// assert_eq!(mooncake_block_text(7, 512), mooncake_block_text(7, 512));
/// assert_ne!(mooncake_block_text(7, 512), mooncake_block_text(8, 512));
/// assert!(mooncake_block_text(7, 512).starts_with(&mooncake_block_text(7, 100)));
/// assert_eq!(mooncake_block_text(7, 100).split(' ').count(), 100);
/// ```
pub fn mooncake_block_text(hash_id: u64, tokens: u64) -> String {
    let mut rng = Rng::new(hash_id ^ 0x4d4f_4f4e_4341_4b45);
    synthetic_text(tokens.min(MOONCAKE_BLOCK_TOKENS), &mut rng)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MooncakeLine {
    timestamp: f64,
    input_length: u64,
    output_length: u64,
    #[serde(default)]
    hash_ids: Vec<u64>,
}

fn read_lines(path: &Path) -> Result<Vec<(usize, String)>, DatasetError> {
    let file = std::fs::File::open(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| DatasetError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !line.trim().is_empty() {
            out.push((i + 1, line));
        }
    }
    Ok(out)
}

fn invalid(path: &Path, line: usize, message: impl Into<String>) -> DatasetError {
    DatasetError::Invalid {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Reads a Mooncake trace (the first `limit` requests) into a plan with fixed send times.
pub fn mooncake(path: &Path, time_scale: f64, limit: usize) -> Result<Plan, DatasetError> {
    if !(time_scale.is_finite() && time_scale >= 0.0) {
        return Err(DatasetError::BadParameter(format!(
            "time scale {time_scale}: not a non-negative number"
        )));
    }
    let mut items = Vec::new();
    let mut send_at = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (line, text) in read_lines(path)?.into_iter().take(limit) {
        let r: MooncakeLine = serde_json::from_str(&text).map_err(|e| {
            invalid(
                path,
                line,
                format!("not a Mooncake trace line (column {}): {e}", e.column()),
            )
        })?;
        if !(r.timestamp.is_finite() && r.timestamp >= 0.0) {
            return Err(invalid(
                path,
                line,
                format!(
                    "$.timestamp: not a non-negative number of ms: {}",
                    r.timestamp
                ),
            ));
        }
        if r.input_length == 0 || r.output_length == 0 {
            return Err(invalid(
                path,
                line,
                "$.input_length and $.output_length must be at least 1",
            ));
        }
        if r.input_length > MAX_TEXT_TOKENS {
            return Err(DatasetError::TooLarge(format!(
                "{}:{line}: input_length {} (at most {MAX_TEXT_TOKENS})",
                path.display(),
                r.input_length
            )));
        }
        let blocks = r.input_length.div_ceil(MOONCAKE_BLOCK_TOKENS);
        if r.hash_ids.len() as u64 != blocks {
            return Err(invalid(
                path,
                line,
                format!(
                    "$.hash_ids has {} ids, but input_length {} spans {blocks} blocks of \
                     {MOONCAKE_BLOCK_TOKENS} tokens",
                    r.hash_ids.len(),
                    r.input_length
                ),
            ));
        }
        let mut prompt = String::with_capacity((r.input_length as usize).saturating_mul(4));
        let mut left = r.input_length;
        // Leading blocks an earlier request already had: the prefix this one shares.
        let mut shared = 0;
        let mut prefix = true;
        for &h in &r.hash_ids {
            let n = left.min(MOONCAKE_BLOCK_TOKENS);
            if !prompt.is_empty() {
                prompt.push(' ');
            }
            prompt.push_str(&mooncake_block_text(h, n));
            left -= n;
            prefix = prefix && seen.contains(&h);
            if prefix {
                shared += n;
            }
            seen.insert(h);
        }
        let at = Duration::try_from_secs_f64(r.timestamp / 1000.0 * time_scale).map_err(|_| {
            invalid(
                path,
                line,
                "$.timestamp × time scale is past the clock's range",
            )
        })?;
        items.push(WorkItem {
            prompt_tokens: r.input_length,
            output_tokens: r.output_length,
            prompt: Some(prompt),
            shared_prefix_tokens: shared,
        });
        send_at.push(at);
    }
    if items.is_empty() {
        return Err(invalid(path, 0, "the trace has no requests"));
    }
    Ok(Plan {
        items,
        send_at: Some(send_at),
        turns: None,
    })
}

/// `groups × per_group` prompts with shared prefixes (see [`DatasetSpec::SharedPrefix`]).
pub fn shared_prefix(
    groups: u64,
    per_group: u64,
    prefix_tokens: u64,
    suffix_tokens: u64,
    output_tokens: u64,
    seed: u64,
) -> Result<Plan, DatasetError> {
    let n = groups.saturating_mul(per_group);
    if n == 0 || output_tokens == 0 || prefix_tokens.saturating_add(suffix_tokens) == 0 {
        return Err(DatasetError::BadParameter(format!(
            "a shared-prefix dataset needs at least 1 group, 1 prompt per group and 1 output \
             token, and a non-empty prompt (got {groups} × {per_group}, prefix \
             {prefix_tokens}, suffix {suffix_tokens}, output {output_tokens})"
        )));
    }
    if n > MAX_REQUESTS || prefix_tokens.saturating_add(suffix_tokens) > MAX_TEXT_TOKENS {
        return Err(DatasetError::TooLarge(format!(
            "{n} prompts of {} tokens",
            prefix_tokens.saturating_add(suffix_tokens)
        )));
    }
    let mut rng = Rng::new(seed ^ 0x5052_4546_4958);
    let prefixes: Vec<String> = (0..groups)
        .map(|_| synthetic_text(prefix_tokens, &mut rng))
        .collect();
    let mut order: Vec<u64> = (0..n).map(|i| i / per_group).collect();
    rng.shuffle(&mut order);
    let items = order
        .into_iter()
        .map(|g| {
            let suffix = synthetic_text(suffix_tokens, &mut rng);
            let prefix = &prefixes[g as usize];
            let prompt = match (prefix.is_empty(), suffix.is_empty()) {
                (true, _) => suffix,
                (_, true) => prefix.clone(),
                _ => format!("{prefix} {suffix}"),
            };
            WorkItem {
                prompt_tokens: prefix_tokens + suffix_tokens,
                output_tokens,
                prompt: Some(prompt),
                shared_prefix_tokens: prefix_tokens,
            }
        })
        .collect();
    Ok(Plan {
        items,
        send_at: None,
        turns: None,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonlLine {
    prompt: String,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// One prompt per line (`prompt`, optional `output_tokens`); the first `limit` lines.
pub fn jsonl(path: &Path, default_output_tokens: u64, limit: usize) -> Result<Plan, DatasetError> {
    let mut items = Vec::new();
    for (line, text) in read_lines(path)?.into_iter().take(limit) {
        let r: JsonlLine = serde_json::from_str(&text).map_err(|e| {
            invalid(
                path,
                line,
                format!(
                    "expected {{\"prompt\": string, \"output_tokens\"?: integer}} (column {}): {e}",
                    e.column()
                ),
            )
        })?;
        let output_tokens = r.output_tokens.unwrap_or(default_output_tokens);
        if output_tokens == 0 {
            return Err(invalid(
                path,
                line,
                "$.output_tokens must be at least 1 (or a default output length for lines without it)",
            ));
        }
        let prompt_tokens = approx_tokens(&r.prompt);
        if prompt_tokens == 0 {
            return Err(invalid(path, line, "$.prompt is empty"));
        }
        items.push(WorkItem {
            prompt_tokens,
            output_tokens,
            prompt: Some(r.prompt),
            shared_prefix_tokens: 0,
        });
    }
    if items.is_empty() {
        return Err(invalid(path, 0, "the file has no prompts"));
    }
    Ok(Plan {
        items,
        send_at: None,
        turns: None,
    })
}
