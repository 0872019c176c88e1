//! `servebench bench` flags of the structured datasets (`--dataset-name mooncake |
//! shared-prefix | multi-turn | jsonl`), the prefix-cache reset and the rate sweep; the
//! datasets themselves are `servebench::driver` (its dataset readers).

use std::path::PathBuf;

use servebench::driver::DatasetSpec;

/// Flags of the structured datasets, `--reset-prefix-cache` and `--sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkloadArgs {
    /// Mooncake: multiply the trace's timestamps by this (0.5 replays twice as fast).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true,
          value_parser = non_negative("--time-scale"))]
    pub time_scale: f64,
    /// Shared prefix: number of prefix groups.
    #[arg(long, visible_alias = "prefix-repetition-num-prefixes",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub prefix_groups: Option<u64>,
    /// Shared prefix: prompts per group [default: --max-requests / --prefix-groups, as vLLM's
    /// prefix_repetition dataset divides --num-prompts].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub prompts_per_group: Option<u64>,
    /// Shared prefix: tokens of each group's prefix.
    #[arg(long, visible_alias = "prefix-repetition-prefix-len")]
    pub prefix_tokens: Option<u64>,
    /// Shared prefix: tokens of each prompt's unique suffix (vLLM's name; --input-tokens
    /// says the same).
    #[arg(long)]
    pub prefix_repetition_suffix_len: Option<u64>,
    /// Shared prefix: output tokens (vLLM's name; --output-tokens says the same).
    #[arg(long)]
    pub prefix_repetition_output_len: Option<u64>,
    /// Multi-turn: conversations (--max-concurrency then counts conversations).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub conversations: Option<u64>,
    /// Multi-turn: turns per conversation (at most, with a ShareGPT file).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub turns: Option<u32>,
    /// Multi-turn: time between an answer's end and the next turn (`2s`, `500ms`, or seconds).
    #[arg(long, default_value = "0", allow_negative_numbers = true, value_parser = think_time)]
    pub think_time: f64,
    /// Sessions: `synthetic` (generated turns; --turns, --conversations or --max-requests)
    /// or a trace FILE (SGLang's agentic trace or a multi-turn ShareGPT file): the same as
    /// `--dataset multi-turn [--dataset-path FILE]`.
    #[arg(long, value_name = "synthetic|FILE", conflicts_with = "dataset")]
    pub sessions: Option<String>,
    /// Empty the server's prefix cache before the run (vLLM `POST /reset_prefix_cache`,
    /// else SGLang `POST /flush_cache`); the run file says whether it was reset.
    #[arg(long)]
    pub reset_prefix_cache: bool,
    /// guidellm's rate sweep: a synchronous run, a throughput run, then N constant rates
    /// between them; prints the rate table and the saturation point. With --output, the
    /// file holds every run (a sweep file).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
    pub sweep: Option<u64>,
}

fn non_negative(flag: &'static str) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{flag}: not a non-negative number: `{s}`")),
    }
}

/// The names of the structured datasets, as `--dataset-name` takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    /// `mooncake`.
    Mooncake,
    /// `shared-prefix` (vLLM's `prefix_repetition`).
    SharedPrefix,
    /// `multi-turn`.
    MultiTurn,
    /// `jsonl` (vLLM's `custom`).
    Jsonl,
}

/// What the common flags say, for [`WorkloadArgs::spec`].
pub struct Common<'a> {
    /// `--dataset-path`.
    pub path: Option<&'a PathBuf>,
    /// `--input-tokens`.
    pub input_tokens: Option<u64>,
    /// `--output-tokens`.
    pub output_tokens: Option<u64>,
    /// `--max-requests`.
    pub max_requests: Option<u64>,
    /// `--seed`.
    pub seed: u64,
}

impl WorkloadArgs {
    /// The dataset `kind` with these flags; an error message names the missing flag.
    pub fn spec(&self, kind: Structured, c: &Common<'_>) -> Result<DatasetSpec, String> {
        let need_path = |name: &str| {
            c.path
                .cloned()
                .ok_or_else(|| format!("--dataset-name {name} needs --dataset-path FILE"))
        };
        Ok(match kind {
            Structured::Mooncake => DatasetSpec::Mooncake {
                path: need_path("mooncake")?,
                time_scale: self.time_scale,
            },
            Structured::SharedPrefix => {
                let groups = self
                    .prefix_groups
                    .ok_or("--dataset-name shared-prefix needs --prefix-groups G")?;
                let per_group = match (self.prompts_per_group, c.max_requests) {
                    (Some(q), _) => q,
                    (None, Some(n)) if n >= groups => n / groups,
                    _ => {
                        return Err("--dataset-name shared-prefix needs --prompts-per-group Q \
                                    (or --max-requests N with N ≥ --prefix-groups)"
                            .into())
                    }
                };
                DatasetSpec::SharedPrefix {
                    groups,
                    prompts_per_group: per_group,
                    prefix_tokens: self
                        .prefix_tokens
                        .ok_or("--dataset-name shared-prefix needs --prefix-tokens P")?,
                    input_tokens: self
                        .prefix_repetition_suffix_len
                        .or(c.input_tokens)
                        .unwrap_or(256),
                    output_tokens: self
                        .prefix_repetition_output_len
                        .or(c.output_tokens)
                        .unwrap_or(128),
                    seed: c.seed,
                }
            }
            Structured::MultiTurn => DatasetSpec::MultiTurn {
                // A trace's sessions and turns default to all of them; generated ones to
                // --max-requests spread over --turns.
                conversations: match (self.conversations, c.path, self.turns, c.max_requests) {
                    (Some(n), _, _, _) => n,
                    (None, Some(_), _, _) => u64::MAX,
                    (None, None, Some(t), Some(m)) => m.div_ceil(u64::from(t)),
                    _ => return Err("--dataset-name multi-turn needs --conversations C".into()),
                },
                turns: match (self.turns, c.path) {
                    (Some(t), _) => t,
                    (None, Some(_)) => u32::MAX,
                    (None, None) => return Err("--dataset-name multi-turn needs --turns T".into()),
                },
                input_tokens: c.input_tokens.unwrap_or(128),
                output_tokens: c.output_tokens.unwrap_or(128),
                think_time_s: self.think_time,
                seed: c.seed,
                path: c.path.cloned(),
            },
            Structured::Jsonl => DatasetSpec::Jsonl {
                path: need_path("jsonl")?,
                default_output_tokens: c.output_tokens.unwrap_or(128),
            },
        })
    }
}

/// `--think-time`: `2s`, `500ms`, `1m` or a bare number of seconds, zero or more.
fn think_time(v: &str) -> Result<f64, String> {
    if v.trim().parse::<f64>() == Ok(0.0) {
        return Ok(0.0);
    }
    crate::values::duration_in(v, &[("ms", 1e-3), ("s", 1.0), ("m", 60.0)])
        .map(|d| d.as_secs_f64())
        .ok_or_else(|| format!("`{v}` is not a time (2s, 500ms, or seconds)"))
}
