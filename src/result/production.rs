//! The production figures of a result beside the report block: reasoning-aware latency
//! ([`ReasoningFigures`]), energy and GPU telemetry ([`EnergyFigures`]), speculative
//! decoding ([`SpecDecodeFigures`]), per-LoRA-adapter results ([`AdapterFigures`]) and
//! what the tokens cost on the GPUs that served them ([`CostFigures`]).
//! Plain data: the formulas are in `crate::metrics::production` and `crate::observe::gpu`.
//! Times in ms, energy in joules, power in watts.

use serde::{Deserialize, Serialize};

use super::{float, Summary};

/// Reasoning-aware latency: the two streams of a reasoning model (vLLM's
/// `delta.reasoning`, SGLang's `delta.reasoning_content`, then `delta.content`).
///
/// The result's `ttft` counts the first token of **either** stream (as `vllm bench serve`
/// does); [`time_to_first_answer`](Self::time_to_first_answer) counts only the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasoningFigures {
    /// Successful requests whose stream carried reasoning.
    pub requests_with_reasoning: u64,
    /// Of those, requests whose answer never started (the budget ran out while reasoning).
    #[serde(default)]
    pub requests_without_answer: u64,
    /// Time to the first reasoning token, ms, over the requests that reasoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_reasoning: Option<Summary>,
    /// Time to the first answer (content) token, ms, over every successful request that
    /// reached its answer (a request without reasoning: its TTFT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_answer: Option<Summary>,
    /// Reasoning tokens of the successful requests (chunks that carried reasoning only).
    pub reasoning_tokens: u64,
    /// Answer tokens of the successful requests (chunks that carried answer text).
    pub answer_tokens: u64,
}

/// Energy and GPU telemetry over a run's span, from NVIDIA DCGM exporter metrics or
/// `nvidia-smi` samples (summed over the GPUs seen).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnergyFigures {
    /// Where the figures came from (`dcgm:http://…/metrics`, `nvidia-smi`, `h200-sim`).
    pub source: String,
    /// GPUs seen.
    pub gpus: u32,
    /// Seconds of the run the figures cover (its measured window, wall clock).
    #[serde(default, with = "float")]
    pub span_s: Option<f64>,
    /// Energy used over the span, J (the energy counter's increase, else power integrated).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub energy_j: Option<f64>,
    /// Mean power, W: energy ÷ the window's server seconds (so energy, span and power
    /// agree), else the time-weighted mean of the power samples inside the window (at
    /// least two).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub mean_power_w: Option<f64>,
    /// Highest power sample, W.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub peak_power_w: Option<f64>,
    /// Energy per output token over the run, J/token (the window's energy over the
    /// result's output tokens).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub joules_per_output_token: Option<f64>,
    /// Output tokens per joule: the inverse.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub output_tokens_per_joule: Option<f64>,
    /// Time-weighted mean GPU utilization, percent.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub gpu_util_mean_pct: Option<f64>,
    /// Highest frame-buffer memory in use, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub fb_used_peak_mib: Option<f64>,
    /// Time-weighted mean SM clock, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub sm_clock_mean_mhz: Option<f64>,
    /// Server seconds per wall-clock second when the source runs on a clock of its own
    /// (the example server at `--speed X` exports it as `servebench_clock_speed`): the
    /// energy is then over `span_s × server_speed` seconds of the server's time.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub server_speed: Option<f64>,
    /// Why a figure is missing (too few samples inside the run, a window of no length).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Speculative decoding over a run: the server's counters (vLLM's names) and the client's
/// tokens per streamed chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SpecDecodeFigures {
    /// Drafts proposed over the span (`vllm:spec_decode_num_drafts`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub drafts: Option<f64>,
    /// Draft tokens proposed (`vllm:spec_decode_num_draft_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub draft_tokens: Option<f64>,
    /// Draft tokens accepted (`vllm:spec_decode_num_accepted_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub accepted_tokens: Option<f64>,
    /// Accepted ÷ proposed draft tokens, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub acceptance_rate: Option<f64>,
    /// Mean tokens a verification step emits: 1 + accepted ÷ drafts (vLLM's "mean
    /// acceptance length").
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub mean_accepted_length: Option<f64>,
    /// Acceptance rate per draft position (`vllm:spec_decode_num_accepted_tokens_per_pos`
    /// ÷ drafts), position 0 first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acceptance_per_position: Vec<f64>,
    /// Client side: output tokens per streamed chunk over the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub tokens_per_chunk: Option<f64>,
}

/// One LoRA adapter's share of a run (requests sent with `model` = the adapter's name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdapterFigures {
    /// The adapter's model name.
    pub adapter: String,
    /// Requests sent to it.
    pub requests: u64,
    /// Of those, successful.
    pub successful_requests: u64,
    /// Output tokens of its successful requests.
    pub output_tokens: u64,
    /// Its output tokens per second of the run's duration.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub output_throughput_per_s: Option<f64>,
    /// Time to first token of its successful requests, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<Summary>,
    /// End-to-end latency of its successful requests, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el: Option<Summary>,
}

/// What a run's tokens cost on the GPUs that served them, at a stated price per GPU-hour
/// (formulas in `crate::metrics::cost_figures`). Prices in US dollars.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostFigures {
    /// GPUs serving the run.
    pub gpus: u32,
    /// The price of one GPU for an hour, USD.
    pub usd_per_gpu_hour: f64,
    /// USD per million output tokens: the GPUs' price over the run's output throughput.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub usd_per_million_output_tokens: Option<f64>,
    /// USD per million tokens in and out.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub usd_per_million_total_tokens: Option<f64>,
    /// Output tokens per second per GPU.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub output_tokens_per_s_per_gpu: Option<f64>,
    /// Input and output tokens per second per GPU.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "float")]
    pub total_tokens_per_s_per_gpu: Option<f64>,
}

/// The images a run's requests carried (`bench --images`): how many, their bytes, and the
/// prompt tokens they became beside the text's (from the records' `images`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFigures {
    /// Successful requests that carried images.
    pub requests: u64,
    /// Images in them.
    pub images: u64,
    /// Their encoded bytes.
    pub bytes: u64,
    /// The prompt tokens the images became (vision tokens and markers).
    pub vision_tokens: u64,
    /// All prompt tokens of those requests (text and images).
    pub prompt_tokens: u64,
    /// Images of unknown size (URLs the server fetched): not in `bytes` and
    /// `vision_tokens`, their tokens in `prompt_tokens` only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unsized_images: u64,
}

/// What the answers' checks found (`bench --tools`, `--response-format`): how many tool
/// calls were valid and how many structured answers followed their schema, each with its
/// 95 % Wilson interval, and the time to the first tool-call token.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckFigures {
    /// Successful requests whose answers were checked.
    pub requests: u64,
    /// Tool calls in them.
    pub tool_calls: u64,
    /// Tool calls whose arguments parsed and matched their tool's schema.
    pub valid_tool_calls: u64,
    /// `valid_tool_calls / tool_calls` and its 95 % Wilson interval, when there were calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_validity: Option<Rate>,
    /// Requests that called no tool although tools were offered.
    pub requests_without_tool_call: u64,
    /// Time to the first tool-call token (the first chunk carrying a tool call − send), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_first_tool_call: Option<Summary>,
    /// Structured answers checked (a response format was asked for).
    pub structured: u64,
    /// Of them, those that parsed and matched the schema.
    pub structured_valid: u64,
    /// `structured_valid / structured` and its 95 % Wilson interval (vLLM's structured-output
    /// benchmark's "correct rate"), when there were structured answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_correct_rate: Option<Rate>,
    /// The first failed check's reason, as an example.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example_failure: Option<String>,
}

/// A share with its 95 % Wilson interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// The share, 0–1.
    pub value: f64,
    /// The interval's lower end.
    pub lo: f64,
    /// Its upper end.
    pub hi: f64,
}

/// The prefix-cache hit rate the workload implies beside the one the server measured
/// (`vllm:prefix_cache_hits` ÷ `vllm:prefix_cache_queries` over the run; see
/// `crate::metrics::prefix`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PrefixCacheFigures {
    /// The block size the implied hits were counted in, tokens.
    pub block_tokens: u64,
    /// Prompt tokens the workload sent (the measured requests).
    pub queried_tokens: u64,
    /// Of them, in whole blocks an earlier prompt had sent.
    pub implied_hit_tokens: u64,
    /// `implied_hit_tokens / queried_tokens`.
    pub implied_hit_rate: f64,
    /// The server's own rate over the run, when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_hit_rate: Option<f64>,
    /// The two disagree beyond noise (by more than 5 points and a quarter of the implied
    /// rate): a cache too small for the workload's prefixes (evictions), prefix caching
    /// off, or another block size than assumed.
    pub disagree: bool,
}

/// Multi-turn sessions (conversations, agent sessions): how many finished every turn, how
/// many failed mid-way or were cut off, and how long a whole session took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionFigures {
    /// Sessions with at least one turn in the run.
    pub sessions: u64,
    /// Sessions whose every turn succeeded.
    pub complete: u64,
    /// Sessions with a failed turn (an error answer).
    pub failed: u64,
    /// Sessions with a turn that never finished (cut off by the run's end), none failed.
    pub cut_off: u64,
    /// Turns sent.
    pub turns: u64,
    /// The first failed turn of each failed session, most common first: `(turn, sessions)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_at_turn: Vec<(u32, u64)>,
    /// Time to finish a session (its first send to its last turn's end), complete sessions
    /// only, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Summary>,
    /// Successful turns per second of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_per_s: Option<f64>,
    /// Sub-agents forked (each a session's agent `k ≥ 1` with a turn in the run).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subagents: u64,
    /// Failed sessions whose first failed turn was a sub-agent's (the others are counted
    /// by their main agent's turn in `failed_at_turn`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_in_subagent: u64,
    /// The session SLO (goodput's `session:MS`): the time to finish a session, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_ms: Option<f64>,
    /// Complete sessions finished within `slo_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_slo: Option<u64>,
    /// Sessions finished within `slo_ms` per second of the run (session goodput).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_per_s: Option<f64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
