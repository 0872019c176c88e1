//! `servebench bench` flags of the structured datasets (`--dataset-name mooncake |
//! shared-prefix | multi-turn | jsonl`), the prefix-cache reset and the rate sweep; the
//! datasets themselves are `servebench::driver` (its dataset readers).

use std::path::PathBuf;

use servebench::driver::{DatasetSpec, SessionSpec, ThinkTime};

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
    /// Multi-turn and sessions: time between an answer's end and the next turn (`2s`,
    /// `500ms`, or seconds); `exp:2s` draws each from an exponential of that mean
    /// (`--sessions synthetic` only).
    #[arg(long, default_value = "0", allow_negative_numbers = true, value_parser = think_time)]
    pub think_time: Think,
    /// Sessions: sub-agents forked after each session's first turn, run in parallel; the
    /// session's turn 2 waits for them all and carries their answers.
    #[arg(long, value_name = "K", default_value_t = 0, requires = "sessions")]
    pub fanout: u32,
    /// Sessions: turns of each sub-agent.
    #[arg(long, value_name = "N", default_value_t = 2, requires = "fanout",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub subagent_turns: u32,
    /// Sessions: median tokens of a tool result (what later turns send) [default:
    /// --input-tokens].
    #[arg(long, value_name = "TOKENS", requires = "sessions",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub tool_result_tokens: Option<u64>,
    /// Sessions: log-space sigma of the tool results' sizes (log-normal around the median,
    /// clamped to 16 × the median; 0: every result the median).
    #[arg(long, value_name = "SIGMA", default_value_t = 0.0, requires = "sessions",
          value_parser = non_negative("--tool-result-sigma"))]
    pub tool_result_sigma: f64,
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
    /// `--sessions synthetic`: generated agent sessions.
    Sessions,
}

/// `--think-time`: a mean in seconds and how times are drawn around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Think {
    /// Seconds (the mean, for an exponential).
    pub seconds: f64,
    /// Fixed or exponential.
    pub kind: ThinkTime,
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
            Structured::MultiTurn if self.fanout > 0 || self.tool_result_tokens.is_some() => {
                return Err(
                    "--fanout and --tool-result-tokens are for --sessions synthetic (a \
                            trace's sessions carry their own tool results)"
                        .into(),
                )
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
                think_time_s: match self.think_time.kind {
                    ThinkTime::Fixed => self.think_time.seconds,
                    ThinkTime::Exponential => {
                        return Err("--think-time exp:… is for --sessions synthetic; a \
                                    multi-turn run waits a fixed time"
                            .into())
                    }
                },
                seed: c.seed,
                path: c.path.cloned(),
            },
            Structured::Sessions => self.sessions_spec(c)?,
            Structured::Jsonl => DatasetSpec::Jsonl {
                path: need_path("jsonl")?,
                default_output_tokens: c.output_tokens.unwrap_or(128),
            },
        })
    }
    /// `--sessions synthetic`: the generated agent sessions of these flags.
    fn sessions_spec(&self, c: &Common<'_>) -> Result<DatasetSpec, String> {
        let turns = self.turns.ok_or("--sessions synthetic needs --turns T")?;
        let per = u64::from(turns) + u64::from(self.fanout) * u64::from(self.subagent_turns);
        let input_tokens = c.input_tokens.unwrap_or(128);
        Ok(DatasetSpec::Sessions(SessionSpec {
            sessions: match (self.conversations, c.max_requests) {
                (Some(n), _) => n,
                (None, Some(m)) => m.div_ceil(per),
                _ => {
                    return Err("--sessions synthetic needs --conversations C (or \
                                --max-requests N)"
                        .into())
                }
            },
            turns,
            input_tokens,
            output_tokens: c.output_tokens.unwrap_or(128),
            tool_result_tokens: self.tool_result_tokens.unwrap_or(input_tokens),
            tool_result_sigma: self.tool_result_sigma,
            think_time_s: self.think_time.seconds,
            think_time: self.think_time.kind,
            fanout: self.fanout,
            subagent_turns: self.subagent_turns,
            seed: c.seed,
        }))
    }
}

/// `--think-time`: `2s`, `500ms`, `1m` or a bare number of seconds, zero or more;
/// `exp:2s` for an exponential of that mean.
fn think_time(v: &str) -> Result<Think, String> {
    let (kind, time) = match v.strip_prefix("exp:") {
        Some(t) => (ThinkTime::Exponential, t),
        None => (ThinkTime::Fixed, v),
    };
    let seconds = if time.trim().parse::<f64>() == Ok(0.0) {
        0.0
    } else {
        crate::values::duration_in(time, &[("ms", 1e-3), ("s", 1.0), ("m", 60.0)])
            .map(|d| d.as_secs_f64())
            .ok_or_else(|| format!("`{v}` is not a time (2s, 500ms, seconds, or exp:2s)"))?
    };
    Ok(Think { seconds, kind })
}
