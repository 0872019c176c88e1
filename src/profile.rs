//! Load profiles: what a benchmark sends (dataset, rate, request count, concurrency cap),
//! the seed study's presets, and the guidellm commands that run them.
//!
//! A [`Profile`] serializes with the key names GPUStack's profile lists use
//! (`dataset_name`, `dataset_input_tokens`, `dataset_output_tokens`, `dataset_seed`,
//! `request_rate`, `total_requests`):
//!
//! ```
//! use servebench::profile::Profile;
//! let p = Profile::preset("throughput").unwrap();
//! let json = serde_json::to_string(&p).unwrap();
//! assert!(json.contains(r#""dataset_name":"Random""#));
//! assert!(json.contains(r#""dataset_input_tokens":1024"#));
//! let back: Profile = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, p);
//! ```

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// File name of the ShareGPT dataset the seed's commands read.
pub const SHAREGPT_FILE: &str = "ShareGPT_V3_unfiltered_cleaned_split.json";

/// What prompts a profile sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Dataset {
    /// Conversations from a ShareGPT JSON file (`None`: the conventional
    /// `./ShareGPT_V3_unfiltered_cleaned_split.json`, or servebench's built-in length
    /// distribution when the file is absent).
    ShareGpt {
        /// Path to the dataset file, if given.
        path: Option<PathBuf>,
    },
    /// Synthetic prompts of a fixed token length.
    Random {
        /// Prompt tokens per request.
        input_tokens: u64,
        /// Output tokens per request (sent as `max_tokens` with `ignore_eos`).
        output_tokens: u64,
        /// Random seed.
        seed: u64,
    },
    /// A structured dataset: trace replay, shared prefixes, multi-turn conversations or a
    /// JSON Lines prompt file ([`DatasetSpec`]); on the wire `dataset_name` is its
    /// [`DatasetSpec::name`] and `dataset` holds its parameters.
    Structured(DatasetSpec),
}

/// A load profile. Construct one directly, or take a [`preset`](Profile::preset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ProfileWire", into = "ProfileWire")]
pub struct Profile {
    /// Preset name (`sharegpt`, `throughput`, …) or a user's name; `None` for ad-hoc profiles.
    pub name: Option<String>,
    /// The prompts.
    pub dataset: Dataset,
    /// Requests per second the client schedules (the seed's 1000 means "as fast as the
    /// concurrency cap allows").
    pub request_rate: f64,
    /// Number of requests to send.
    pub total_requests: u64,
    /// Client-side cap on requests in flight, if any.
    pub max_concurrency: Option<u64>,
}

/// Names of the built-in presets, in the seed's order (plus GPUStack's Latency preset).
pub const PRESET_NAMES: [&str; 5] = [
    "sharegpt",
    "throughput",
    "long-context",
    "generation-heavy",
    "latency",
];

/// Error for an unknown preset name or a malformed profile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// No preset with that name.
    #[error("unknown profile `{0}` (known: sharegpt, throughput, long-context, generation-heavy, latency)")]
    UnknownPreset(String),
    /// `dataset_name` is none of ShareGPT, Random, mooncake, shared-prefix, multi-turn, jsonl.
    #[error("unknown dataset_name `{0}` (expected ShareGPT, Random, mooncake, shared-prefix, multi-turn or jsonl)")]
    UnknownDataset(String),
    /// A Random dataset without its token counts, or a structured one without `dataset`.
    #[error("this dataset_name needs `{0}`")]
    MissingField(&'static str),
    /// The rate is not a positive finite number.
    #[error("request_rate must be a positive number, got {0}")]
    BadRate(f64),
    /// `dataset_name` and the kind of `dataset` disagree.
    #[error("dataset_name `{name}` but dataset.kind `{kind}`")]
    DatasetMismatch {
        /// `dataset_name`.
        name: String,
        /// `dataset.kind`.
        kind: &'static str,
    },
}

fn random(input_tokens: u64, output_tokens: u64) -> Dataset {
    Dataset::Random {
        input_tokens,
        output_tokens,
        seed: 42,
    }
}

impl Profile {
    /// A built-in preset by name: `sharegpt`, `throughput`, `long-context`,
    /// `generation-heavy` (the seed's four) or `latency` (GPUStack's Random 128/128 at 1 req/s).
    ///
    /// ```
    /// use servebench::profile::{Dataset, Profile};
    /// let p = Profile::preset("long-context").unwrap();
    /// assert_eq!(p.total_requests, 100);
    /// assert!(matches!(p.dataset, Dataset::Random { input_tokens: 32000, output_tokens: 100, seed: 42 }));
    /// assert!(Profile::preset("nope").is_err());
    /// ```
    pub fn preset(name: &str) -> Result<Profile, ProfileError> {
        let (dataset, rate, total) = match name {
            "sharegpt" => (Dataset::ShareGpt { path: None }, 1000.0, 1000),
            "throughput" => (random(1024, 128), 1000.0, 1000),
            "long-context" => (random(32000, 100), 1000.0, 100),
            "generation-heavy" => (random(1000, 2000), 1000.0, 200),
            "latency" => (random(128, 128), 1.0, 100),
            other => return Err(ProfileError::UnknownPreset(other.to_string())),
        };
        Ok(Profile {
            name: Some(name.to_string()),
            dataset,
            request_rate: rate,
            total_requests: total,
            max_concurrency: None,
        })
    }

    /// All presets, in [`PRESET_NAMES`] order.
    pub fn presets() -> Vec<Profile> {
        PRESET_NAMES
            .iter()
            .filter_map(|n| Profile::preset(n).ok())
            .collect()
    }

    /// The seed's four study profiles (without `latency`).
    pub fn seed_study() -> Vec<Profile> {
        PRESET_NAMES[..4]
            .iter()
            .filter_map(|n| Profile::preset(n).ok())
            .collect()
    }

    /// The heading the seed uses for this profile ("ShareGPT", "Throughput", "Long Context",
    /// "Generation Heavy", "Latency"); for other names the name itself.
    pub fn title(&self) -> String {
        match self.name.as_deref() {
            Some("sharegpt") => "ShareGPT".into(),
            Some("throughput") => "Throughput".into(),
            Some("long-context") => "Long Context".into(),
            Some("generation-heavy") => "Generation Heavy".into(),
            Some("latency") => "Latency".into(),
            Some(other) => other.to_string(),
            None => match &self.dataset {
                Dataset::ShareGpt { .. } => "ShareGPT".into(),
                Dataset::Random {
                    input_tokens,
                    output_tokens,
                    ..
                } => format!("Random {input_tokens}/{output_tokens}"),
                Dataset::Structured(spec) => spec.name().into(),
            },
        }
    }
}

/// A rate on the wire: integers stay integers (`1000`), others are floats.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(untagged)]
enum WireRate {
    Int(u64),
    Float(f64),
}

/// The flat, seed-keyed serde form of a [`Profile`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    dataset_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset_path: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset_seed: Option<u64>,
    /// A structured dataset's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dataset: Option<DatasetSpec>,
    request_rate: WireRate,
    total_requests: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_concurrency: Option<u64>,
}

impl From<Profile> for ProfileWire {
    fn from(p: Profile) -> Self {
        let rate =
            if p.request_rate.fract() == 0.0 && p.request_rate >= 0.0 && p.request_rate < 1e15 {
                WireRate::Int(p.request_rate as u64)
            } else {
                WireRate::Float(p.request_rate)
            };
        let mut w = ProfileWire {
            name: p.name,
            dataset_name: String::new(),
            dataset_path: None,
            dataset_input_tokens: None,
            dataset_output_tokens: None,
            dataset_seed: None,
            dataset: None,
            request_rate: rate,
            total_requests: p.total_requests,
            max_concurrency: p.max_concurrency,
        };
        match p.dataset {
            Dataset::ShareGpt { path } => {
                w.dataset_name = "ShareGPT".into();
                w.dataset_path = path;
            }
            Dataset::Random {
                input_tokens,
                output_tokens,
                seed,
            } => {
                w.dataset_name = "Random".into();
                w.dataset_input_tokens = Some(input_tokens);
                w.dataset_output_tokens = Some(output_tokens);
                w.dataset_seed = Some(seed);
            }
            Dataset::Structured(spec) => {
                w.dataset_name = spec.name().into();
                w.dataset = Some(spec);
            }
        }
        w
    }
}

impl TryFrom<ProfileWire> for Profile {
    type Error = ProfileError;
    fn try_from(w: ProfileWire) -> Result<Self, ProfileError> {
        let rate = match w.request_rate {
            WireRate::Int(i) => i as f64,
            WireRate::Float(f) => f,
        };
        if !(rate.is_finite() && rate > 0.0) {
            return Err(ProfileError::BadRate(rate));
        }
        let dataset = match w.dataset_name.to_ascii_lowercase().as_str() {
            "sharegpt" => Dataset::ShareGpt {
                path: w.dataset_path,
            },
            "random" => Dataset::Random {
                input_tokens: w
                    .dataset_input_tokens
                    .ok_or(ProfileError::MissingField("dataset_input_tokens"))?,
                output_tokens: w
                    .dataset_output_tokens
                    .ok_or(ProfileError::MissingField("dataset_output_tokens"))?,
                seed: w.dataset_seed.unwrap_or(42),
            },
            name => match w.dataset {
                Some(spec) if spec.name() == name => Dataset::Structured(spec),
                Some(spec) => {
                    return Err(ProfileError::DatasetMismatch {
                        name: w.dataset_name,
                        kind: spec.name(),
                    })
                }
                None if [
                    "mooncake",
                    "shared-prefix",
                    "multi-turn",
                    "sessions",
                    "jsonl",
                ]
                .contains(&name) =>
                {
                    return Err(ProfileError::MissingField("dataset"))
                }
                None => return Err(ProfileError::UnknownDataset(w.dataset_name)),
            },
        };
        Ok(Profile {
            name: w.name,
            dataset,
            request_rate: rate,
            total_requests: w.total_requests,
            max_concurrency: w.max_concurrency,
        })
    }
}

fn one() -> f64 {
    1.0
}

/// A structured dataset: trace replay, shared prefixes, multi-turn conversations or a JSON
/// Lines prompt file. `driver::datasets` builds its requests (`DatasetSpec::build`); its
/// docs say how the prompts are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DatasetSpec {
    /// A Mooncake trace (JSON Lines: `timestamp` ms, `input_length`, `output_length`,
    /// `hash_ids` of 512-token blocks), sent at `timestamp × time_scale`.
    Mooncake {
        /// The trace file.
        path: PathBuf,
        /// Multiplies the trace's times (0.5 sends twice as fast).
        #[serde(default = "one")]
        time_scale: f64,
    },
    /// `groups × prompts_per_group` prompts: each group shares a `prefix_tokens` prefix,
    /// followed by a unique `input_tokens` suffix; shuffled with `seed`.
    SharedPrefix {
        /// Prefix groups (vLLM `--prefix-repetition-num-prefixes`).
        groups: u64,
        /// Prompts per group.
        prompts_per_group: u64,
        /// Shared prefix length, tokens (`--prefix-repetition-prefix-len`).
        prefix_tokens: u64,
        /// Unique suffix length, tokens (`--prefix-repetition-suffix-len`).
        input_tokens: u64,
        /// Output tokens per request (`--prefix-repetition-output-len`).
        output_tokens: u64,
        /// Seed of the text and the order.
        seed: u64,
    },
    /// `conversations × turns` requests: turn `k` sends turns `1..k` (user message and
    /// answer each) plus the next user message, after the previous turn ended and
    /// `think_time_s` passed. With `path`, the conversations come from a multi-turn
    /// ShareGPT file instead (user and assistant turns as written there).
    MultiTurn {
        /// Conversations.
        conversations: u64,
        /// Turns per conversation (at most, with a file).
        turns: u32,
        /// Tokens of each user message (generated conversations).
        input_tokens: u64,
        /// Output tokens of each answer (generated conversations).
        output_tokens: u64,
        /// Seconds between a turn's end and the next turn's send.
        #[serde(default)]
        think_time_s: f64,
        /// Seed of the text (and of the file's conversation order).
        seed: u64,
        /// A ShareGPT JSON file with multi-turn conversations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<PathBuf>,
    },
    /// Generated agent sessions ([`SessionSpec`]): tool results after think times,
    /// sub-agents forked in parallel.
    Sessions(SessionSpec),
    /// One prompt per line: `{"prompt": "…", "output_tokens": N}` (`output_tokens`
    /// optional; `default_output_tokens` otherwise).
    Jsonl {
        /// The file.
        path: PathBuf,
        /// Output budget of lines without `output_tokens`.
        default_output_tokens: u64,
    },
}

/// Generated agent sessions, from a seeded profile with these distributions:
///
/// - the main agent's turn 1 sends a task of `input_tokens` tokens;
/// - each later turn sends the whole history (every earlier message and answer, verbatim)
///   plus a tool result of `tool_result_tokens` tokens — log-normal with that median and
///   log-space σ `tool_result_sigma` (0: exactly that many), clamped to `[1, 16 × median]` —
///   after a think/tool time of mean `think_time_s`, fixed or exponential ([`ThinkTime`]);
/// - every answer is `output_tokens` long;
/// - with `fanout = K`, turn 1's end forks K sub-agents at once; each one's first prompt is
///   the main agent's turn-1 prompt and answer (the parent's prefix) plus a task of its own
///   (`input_tokens`), and it runs `subagent_turns` turns as above; the main agent's turn 2
///   waits for every sub-agent to finish and carries their last answers as its tool
///   results (`K × output_tokens` tokens).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSpec {
    /// Sessions.
    pub sessions: u64,
    /// Turns of each session's main agent.
    pub turns: u32,
    /// Tokens of each task (the first turn's message, each sub-agent's own task).
    pub input_tokens: u64,
    /// Tokens of every answer.
    pub output_tokens: u64,
    /// Median tokens of a tool result.
    pub tool_result_tokens: u64,
    /// Log-space σ of the tool results' sizes (0: every result has the median size).
    #[serde(default)]
    pub tool_result_sigma: f64,
    /// Mean seconds between what a turn waits for ending and its send.
    #[serde(default)]
    pub think_time_s: f64,
    /// How think times are drawn around their mean.
    #[serde(default)]
    pub think_time: ThinkTime,
    /// Sub-agents forked after the main agent's first turn (0: none).
    #[serde(default)]
    pub fanout: u32,
    /// Turns of each sub-agent.
    #[serde(default = "two")]
    pub subagent_turns: u32,
    /// Seed of the text, the tool-result sizes and the think times.
    pub seed: u64,
}

fn two() -> u32 {
    2
}

/// How a [`SessionSpec`]'s think times are drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkTime {
    /// Every think time is the mean.
    #[default]
    Fixed,
    /// Exponential with the mean (a memoryless user or tool).
    Exponential,
}

impl DatasetSpec {
    /// vLLM's `--dataset-name` for the dataset (`mooncake`, `shared-prefix`, `multi-turn`,
    /// `jsonl`).
    pub fn name(&self) -> &'static str {
        match self {
            DatasetSpec::Mooncake { .. } => "mooncake",
            DatasetSpec::SharedPrefix { .. } => "shared-prefix",
            DatasetSpec::MultiTurn { .. } => "multi-turn",
            DatasetSpec::Sessions(_) => "sessions",
            DatasetSpec::Jsonl { .. } => "jsonl",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_profile_listing_matches_the_document() {
        let seed = std::fs::read_to_string("tests/fixtures/seed.txt").unwrap();
        for p in Profile::seed_study() {
            let listing = p.to_string();
            assert!(
                seed.contains(&listing),
                "seed lacks listing for {}:\n{listing}",
                p.title()
            );
        }
    }

    #[test]
    fn seed_open_source_replacement_commands_match() {
        let seed = std::fs::read_to_string("tests/fixtures/seed.txt").unwrap();
        let sharegpt = Profile::preset("sharegpt")
            .unwrap()
            .guidellm_command("${target}", "${model_path}")
            .replace("--rate 1000", "--rate ${request_rate}")
            .replace("--max-requests 1000", "--max-requests ${total_requests}");
        assert!(seed.contains(&sharegpt), "{sharegpt}");
        let random = Profile::preset("throughput")
            .unwrap()
            .guidellm_command("${target}", "${model_path}")
            .replace("--rate 1000", "--rate ${request_rate}")
            .replace("--max-requests 1000", "--max-requests ${total_requests}")
            .replace(
                "prompt_tokens=1024",
                "prompt_tokens=${dataset_input_tokens}",
            )
            .replace(
                "output_tokens=128",
                "output_tokens=${dataset_output_tokens}",
            )
            .replace("--random-seed 42", "--random-seed ${dataset_seed:-42}");
        assert!(seed.contains(&random), "{random}");
    }

    #[test]
    fn serde_reads_seed_keys_and_rejects_garbage() {
        let p: Profile = serde_json::from_str(
            r#"{"dataset_name":"Random","dataset_input_tokens":1000,"dataset_output_tokens":2000,"dataset_seed":42,"request_rate":1000,"total_requests":200}"#,
        )
        .unwrap();
        assert_eq!(p.dataset, random(1000, 2000));
        assert!(serde_json::from_str::<Profile>(
            r#"{"dataset_name":"Foo","request_rate":1,"total_requests":1}"#
        )
        .is_err());
        assert!(serde_json::from_str::<Profile>(
            r#"{"dataset_name":"Random","request_rate":1,"total_requests":1}"#
        )
        .is_err());
        assert!(serde_json::from_str::<Profile>(
            r#"{"dataset_name":"ShareGPT","request_rate":0,"total_requests":1}"#
        )
        .is_err());
        for p in Profile::presets() {
            let back: Profile = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
            assert_eq!(back, p);
        }
    }
}
