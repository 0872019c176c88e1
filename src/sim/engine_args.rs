//! vLLM's own command-line flags as the simulator's configuration: [`EngineArgs::parse`]
//! reads `vllm serve` flags (either spelling, `--flag=value` or `--flag value`) into typed
//! fields; flags the simulator does not know are returned in [`EngineArgs::ignored`] and
//! flags it knows but does not model in [`EngineArgs::no_effect`] — nothing is dropped
//! silently. [`from_engine_args`] turns a model, a GPU and such flags into a
//! [`SimConfig`]; the seed's named configurations are flag sets too ([`NAMED_CONFIGS`]).
//!
//! ```
//! use servebench::sim::from_engine_args;
//!
//! let flags: Vec<String> = [
//!     "--max-num-seqs=512",
//!     "--speculative-config",
//!     r#"{"method":"mtp","num_speculative_tokens":1}"#,
//!     "--frobnicate",
//! ]
//! .iter()
//! .map(|s| s.to_string())
//! .collect();
//! let config = from_engine_args("Qwen/Qwen3.5-35B-A3B-FP8", "h200", &flags).unwrap();
//! assert_eq!(config.args.max_num_seqs, Some(512));
//! assert_eq!(config.args.speculative_tokens(), 1);
//! assert_eq!(config.args.ignored, vec!["--frobnicate".to_string()]);
//! ```

use super::engine::Config;
use super::model::Weights;
use super::spec::{GpuSpec, ModelSpec, SpecError};

/// The simulator's configuration: a model on a GPU under vLLM flags (the same type as the
/// named [`Config`]s).
pub type SimConfig = Config;

/// Why flags could not become a configuration.
#[derive(Debug, thiserror::Error)]
pub enum SimConfigError {
    /// A flag's value is missing or not valid for it.
    #[error("{flag}: {message}")]
    Flag {
        /// The flag as written.
        flag: String,
        /// What is wrong.
        message: String,
    },
    /// The model or GPU description.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The weights do not fit the GPU's memory budget.
    #[error("{model} needs {weights_gb:.1} GB of weights; {gpu} leaves {budget_gb:.1} GB at a GPU memory utilization of {util} (after {reserve_gb:.1} GB of non-KV memory)")]
    DoesNotFit {
        /// Model id.
        model: String,
        /// GPU name.
        gpu: String,
        /// Weight bytes, GB.
        weights_gb: f64,
        /// Memory budget for weights + KV, GB.
        budget_gb: f64,
        /// Non-KV reserve, GB.
        reserve_gb: f64,
        /// `--gpu-memory-utilization`.
        util: f64,
    },
}

/// `--performance-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PerformanceMode {
    /// The default.
    #[default]
    Balanced,
    /// Finer CUDA-graph capture for small batches (no effect in the model).
    Interactivity,
    /// Doubles the batch defaults the user did not set.
    Throughput,
}

/// `--speculative-config` (only `method: mtp` is simulated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speculative {
    /// `method` (`mtp`, `qwen3_next_mtp`, `qwen3_5_mtp`).
    pub method: String,
    /// `num_speculative_tokens`.
    pub num_speculative_tokens: u64,
}

/// The vLLM flags the simulator reads, typed. `None` means vLLM's default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EngineArgs {
    /// The flags as given (normalised to `--name=value`), in order.
    pub flags: Vec<String>,
    /// `--max-num-seqs`.
    pub max_num_seqs: Option<usize>,
    /// `--max-num-batched-tokens`.
    pub max_num_batched_tokens: Option<u64>,
    /// `--performance-mode`.
    pub performance_mode: PerformanceMode,
    /// `--enable-prefix-caching` (`--no-enable-prefix-caching`).
    pub enable_prefix_caching: bool,
    /// `--kv-cache-dtype=fp8` (also `fp8_e4m3`, `fp8_e5m2`).
    pub kv_cache_fp8: bool,
    /// `--max-cudagraph-capture-size`.
    pub max_cudagraph_capture_size: Option<u64>,
    /// `--speculative-config`.
    pub speculative: Option<Speculative>,
    /// `--async-scheduling` / `--no-async-scheduling` (on by default in vLLM 0.17).
    pub async_scheduling: Option<bool>,
    /// `--max-model-len`.
    pub max_model_len: Option<u64>,
    /// `--language-model-only`: the vision tower is not loaded.
    pub language_model_only: bool,
    /// `--gpu-memory-utilization` (default 0.9).
    pub gpu_memory_utilization: Option<f64>,
    /// `--quantization=fp8`: FP8 weights from a BF16 checkpoint.
    pub quantization_fp8: bool,
    /// `--reasoning-parser`.
    pub reasoning_parser: Option<String>,
    /// Known flags the simulator does not model (accepted, listed, no effect).
    pub no_effect: Vec<String>,
    /// Flags the simulator does not know (listed, never silently dropped).
    pub ignored: Vec<String>,
}

/// Flags that take a value and do not change the simulated physics.
const NO_EFFECT_WITH_VALUE: [&str; 13] = [
    "--host",
    "--port",
    "--served-model-name",
    "--api-key",
    "--tool-call-parser",
    "--chat-template",
    "--tensor-parallel-size",
    "--seed",
    "--dtype",
    "--uvicorn-log-level",
    "--compilation-config",
    "--model",
    "--tokenizer",
];
/// Switches that do not change the simulated physics.
const NO_EFFECT_SWITCHES: [&str; 6] = [
    "--trust-remote-code",
    "--enable-auto-tool-choice",
    "--disable-log-requests",
    "--disable-log-stats",
    "--enforce-eager",
    "--enable-chunked-prefill",
];

impl EngineArgs {
    /// Parses one string of flags as a shell would split it (quotes group and are removed
    /// when they wrap a whole value; JSON objects stay whole).
    pub fn parse_str(s: &str) -> Result<EngineArgs, SimConfigError> {
        EngineArgs::parse(&split(s))
    }

    /// Parses flags (`--name=value`, `--name value`, `--switch`, `--no-switch`; `_` and
    /// `-` are the same in names, as in vLLM).
    pub fn parse(tokens: &[String]) -> Result<EngineArgs, SimConfigError> {
        let mut a = EngineArgs::default();
        let mut i = 0;
        while i < tokens.len() {
            let tok = tokens[i].trim();
            i += 1;
            if tok.is_empty() {
                continue;
            }
            let Some(body) = tok.strip_prefix("--") else {
                a.ignored.push(tok.to_string());
                continue;
            };
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let name = format!("--{}", name.replace('_', "-"));
            let takes_value = matches!(
                name.as_str(),
                "--max-num-seqs"
                    | "--max-num-batched-tokens"
                    | "--performance-mode"
                    | "--kv-cache-dtype"
                    | "--max-cudagraph-capture-size"
                    | "--speculative-config"
                    | "--max-model-len"
                    | "--gpu-memory-utilization"
                    | "--quantization"
                    | "-q"
                    | "--reasoning-parser"
            ) || NO_EFFECT_WITH_VALUE.contains(&name.as_str());
            let value = if takes_value {
                match inline {
                    Some(v) => Some(v),
                    None => match tokens.get(i) {
                        Some(v) if !v.starts_with("--") => {
                            i += 1;
                            Some(v.clone())
                        }
                        _ => {
                            return Err(SimConfigError::Flag {
                                flag: name,
                                message: "needs a value".into(),
                            })
                        }
                    },
                }
            } else {
                inline
            };
            let written = match &value {
                Some(v) => format!("{name}={v}"),
                None => name.clone(),
            };
            let v = value.clone().unwrap_or_default();
            let bad = |message: String| SimConfigError::Flag {
                flag: written.clone(),
                message,
            };
            let switch = |v: &Option<String>| -> Result<bool, SimConfigError> {
                match v.as_deref() {
                    None | Some("true") | Some("True") | Some("1") => Ok(true),
                    Some("false") | Some("False") | Some("0") => Ok(false),
                    Some(other) => Err(bad(format!("not a boolean: `{other}`"))),
                }
            };
            match name.as_str() {
                "--max-num-seqs" => a.max_num_seqs = Some(positive(&v).map_err(bad)? as usize),
                "--max-num-batched-tokens" => {
                    a.max_num_batched_tokens = Some(positive(&v).map_err(bad)?)
                }
                "--max-cudagraph-capture-size" => {
                    a.max_cudagraph_capture_size = Some(positive(&v).map_err(bad)?)
                }
                "--max-model-len" => a.max_model_len = Some(model_len(&v).map_err(bad)?),
                "--performance-mode" => {
                    a.performance_mode = match v.as_str() {
                        "balanced" => PerformanceMode::Balanced,
                        "interactivity" => PerformanceMode::Interactivity,
                        "throughput" => PerformanceMode::Throughput,
                        other => {
                            return Err(bad(format!(
                                "`{other}` is not one of balanced, interactivity, throughput"
                            )))
                        }
                    }
                }
                "--enable-prefix-caching" => a.enable_prefix_caching = switch(&value)?,
                "--no-enable-prefix-caching" => a.enable_prefix_caching = false,
                "--kv-cache-dtype" => {
                    a.kv_cache_fp8 = match v.as_str() {
                        "auto" | "bfloat16" => false,
                        "fp8" | "fp8_e4m3" | "fp8_e5m2" => true,
                        other => {
                            return Err(bad(format!(
                                "`{other}` is not one of auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2"
                            )))
                        }
                    }
                }
                "--speculative-config" => a.speculative = Some(speculative(&v).map_err(bad)?),
                "--async-scheduling" => a.async_scheduling = Some(switch(&value)?),
                "--no-async-scheduling" => a.async_scheduling = Some(false),
                "--language-model-only" => a.language_model_only = switch(&value)?,
                "--gpu-memory-utilization" => {
                    let u: f64 = v.parse().map_err(|_| bad(format!("not a number: `{v}`")))?;
                    if !(u > 0.0 && u <= 1.0) {
                        return Err(bad(format!("must be in (0, 1], got {u}")));
                    }
                    a.gpu_memory_utilization = Some(u);
                }
                "--quantization" | "-q" => match v.as_str() {
                    "fp8" => a.quantization_fp8 = true,
                    other => return Err(bad(format!("`{other}` is not simulated (only fp8 is)"))),
                },
                "--reasoning-parser" => a.reasoning_parser = Some(v),
                n if NO_EFFECT_WITH_VALUE.contains(&n) || NO_EFFECT_SWITCHES.contains(&n) => {
                    a.no_effect.push(written.clone())
                }
                _ => {
                    a.ignored.push(written.clone());
                    continue;
                }
            }
            a.flags.push(written);
        }
        Ok(a)
    }

    /// Draft tokens per step (0 without speculative decoding).
    pub fn speculative_tokens(&self) -> u64 {
        self.speculative
            .as_ref()
            .map_or(0, |s| s.num_speculative_tokens)
    }

    /// vLLM 0.17's `max_num_batched_tokens` and `max_num_seqs` for `vllm serve` on `gpu`
    /// (`get_batch_defaults`: 8192 / 1024 with at least 70 GiB of device memory, else
    /// 2048 / 256; `--performance-mode throughput` doubles the ones not set; the seqs are
    /// capped at the tokens, the tokens at seqs × `max_model_len`).
    pub fn batch_limits(&self, gpu: &GpuSpec, max_model_len: u64) -> (u64, usize) {
        let big = gpu.memory_bytes >= 70.0 * 1024.0 * 1024.0 * 1024.0;
        let (dt, ds) = if big { (8192, 1024) } else { (2048, 256) };
        let double = if self.performance_mode == PerformanceMode::Throughput {
            2
        } else {
            1
        };
        let seqs = self.max_num_seqs.unwrap_or(ds * double);
        let tokens = self.max_num_batched_tokens.unwrap_or(dt * double as u64);
        let tokens = tokens.min(seqs as u64 * max_model_len);
        let seqs = seqs.min(tokens as usize);
        (tokens, seqs)
    }

    /// Lines for the `ignored`/`no effect` notice (empty when there is nothing to say).
    pub fn notice(&self) -> String {
        let mut s = String::new();
        if !self.ignored.is_empty() {
            s.push_str(&format!(
                "engine args not known to the simulator (ignored): {}\n",
                self.ignored.join(" ")
            ));
        }
        if !self.no_effect.is_empty() {
            s.push_str(&format!(
                "engine args accepted without effect on the simulation: {}\n",
                self.no_effect.join(" ")
            ));
        }
        s
    }
}

fn positive(v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("not a positive integer: `{v}`")),
    }
}

/// `32768`, `32k`, `1m` (vLLM's human-readable lengths, k = 1000, K = 1024).
fn model_len(v: &str) -> Result<u64, String> {
    let (num, mult) = match v.chars().last() {
        Some('k') => (&v[..v.len() - 1], 1000),
        Some('K') => (&v[..v.len() - 1], 1024),
        Some('m') => (&v[..v.len() - 1], 1_000_000),
        Some('M') => (&v[..v.len() - 1], 1024 * 1024),
        _ => (v, 1),
    };
    positive(num)
        .map(|n| n * mult)
        .map_err(|_| format!("not a length: `{v}`"))
}

fn speculative(v: &str) -> Result<Speculative, String> {
    let j: serde_json::Value =
        serde_json::from_str(v).map_err(|e| format!("not JSON ({e}): `{v}`"))?;
    let method = j
        .get("method")
        .and_then(|m| m.as_str())
        .ok_or("needs a \"method\"")?
        .to_string();
    if !matches!(method.as_str(), "mtp" | "qwen3_next_mtp" | "qwen3_5_mtp") {
        return Err(format!(
            "method `{method}` is not simulated (mtp, qwen3_next_mtp, qwen3_5_mtp are)"
        ));
    }
    let k = j
        .get("num_speculative_tokens")
        .and_then(|k| k.as_u64())
        .ok_or("needs \"num_speculative_tokens\" (a positive integer)")?;
    if !(1..=16).contains(&k) {
        return Err(format!("num_speculative_tokens {k} is outside 1..=16"));
    }
    Ok(Speculative {
        method,
        num_speculative_tokens: k,
    })
}

/// Splits a command line: whitespace separates tokens except inside quotes or `{…}`;
/// quotes that wrap a whole token (or the value after `=`) are removed.
fn split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    for ch in s.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(ch);
                cur.push(ch);
            }
            (None, '{') => {
                depth += 1;
                cur.push(ch);
            }
            (None, '}') => {
                depth = depth.saturating_sub(1);
                cur.push(ch);
            }
            (None, c) if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    out.push(unwrap_quotes(&cur));
                    cur.clear();
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(unwrap_quotes(&cur));
    }
    out
}

fn unwrap_quotes(tok: &str) -> String {
    let strip = |v: &str| -> Option<String> {
        let first = v.chars().next()?;
        if (first == '"' || first == '\'') && v.len() >= 2 && v.ends_with(first) {
            Some(v[1..v.len() - 1].to_string())
        } else {
            None
        }
    };
    if let Some(inner) = strip(tok) {
        return inner;
    }
    if let Some((name, value)) = tok.split_once('=') {
        if let Some(inner) = strip(value) {
            return format!("{name}={inner}");
        }
    }
    tok.to_string()
}

/// The seed's configurations as vLLM flag sets on Qwen3.5-35B-A3B: (name, FP8 checkpoint,
/// flags), in the seed's order.
pub const NAMED_CONFIGS: [(&str, bool, &[&str]); 6] = [
    (
        "baseline",
        false,
        &["--reasoning-parser=qwen3", "--max-model-len=32768"],
    ),
    (
        "quantization",
        true,
        &["--reasoning-parser=qwen3", "--max-model-len=32768"],
    ),
    (
        "prefix-cache",
        true,
        &[
            "--reasoning-parser=qwen3",
            "--max-model-len=32768",
            "--enable-prefix-caching",
        ],
    ),
    (
        "performance-mode",
        true,
        &[
            "--reasoning-parser=qwen3",
            "--performance-mode=throughput",
            "--max-model-len=32768",
            "--enable-prefix-caching",
        ],
    ),
    (
        "kv-fp8",
        true,
        &[
            "--reasoning-parser=qwen3",
            "--performance-mode=throughput",
            "--max-model-len=32768",
            "--enable-prefix-caching",
            "--kv-cache-dtype=fp8",
        ],
    ),
    (
        "optimized",
        true,
        &[
            "--reasoning-parser=qwen3",
            "--performance-mode=throughput",
            "--max-model-len=32768",
            "--enable-prefix-caching",
            "--async-scheduling",
        ],
    ),
];

/// The configuration that serves `model` (a shipped name, a Hugging Face id — `…-FP8`
/// selects FP8 weights — or a `config.json` path) on `gpu` (`h100`, `h200` or a path)
/// with vLLM `flags`. Unknown flags land in `config.args.ignored`.
pub fn from_engine_args(
    model: &str,
    gpu: &str,
    flags: &[String],
) -> Result<SimConfig, SimConfigError> {
    let model = ModelSpec::resolve(model)?;
    let gpu = GpuSpec::resolve(gpu)?;
    let args = EngineArgs::parse(flags)?;
    Config::from_parts("custom", model, gpu, args)
}

/// Whether `args` and `model` make FP8 weights.
pub(crate) fn weights_of(model: &ModelSpec, args: &EngineArgs) -> Weights {
    if model.fp8_checkpoint || args.quantization_fp8 {
        Weights::Fp8
    } else {
        Weights::Bf16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_issue_s_flag_line_parses_into_typed_fields() {
        let a = EngineArgs::parse_str(
            r#"--max-num-seqs=512 --max-num-batched-tokens=16384 --performance-mode=interactivity --enable-prefix-caching --kv-cache-dtype=fp8 --max-cudagraph-capture-size=256 --speculative-config={"method":"mtp","num_speculative_tokens":1} --async-scheduling --max-model-len=32768 --language-model-only"#,
        )
        .unwrap();
        assert_eq!(a.max_num_seqs, Some(512));
        assert_eq!(a.max_num_batched_tokens, Some(16384));
        assert_eq!(a.performance_mode, PerformanceMode::Interactivity);
        assert!(a.enable_prefix_caching && a.kv_cache_fp8 && a.language_model_only);
        assert_eq!(a.max_cudagraph_capture_size, Some(256));
        assert_eq!(a.speculative_tokens(), 1);
        assert_eq!(a.async_scheduling, Some(true));
        assert_eq!(a.max_model_len, Some(32768));
        assert!(a.ignored.is_empty() && a.no_effect.is_empty());
    }

    #[test]
    fn spellings_quotes_and_separate_values() {
        let a = EngineArgs::parse_str(
            r#"--max_num_seqs 64 --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' --max-model-len 32k --port 8000 --weird-flag=3 stray"#,
        )
        .unwrap();
        assert_eq!(a.max_num_seqs, Some(64));
        assert_eq!(a.speculative_tokens(), 2);
        assert_eq!(a.max_model_len, Some(32_000));
        assert_eq!(a.no_effect, strs(&["--port=8000"]));
        assert_eq!(a.ignored, strs(&["--weird-flag=3", "stray"]));
        assert!(a.notice().contains("--weird-flag=3 stray"));
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (flags, want) in [
            (
                &["--max-num-seqs=0"][..],
                "--max-num-seqs=0: not a positive integer",
            ),
            (
                &["--performance-mode=fast"],
                "--performance-mode=fast: `fast`",
            ),
            (
                &["--speculative-config={\"method\":\"eagle\",\"num_speculative_tokens\":1}"],
                "not simulated",
            ),
            (&["--speculative-config={nope"], "not JSON"),
            (&["--gpu-memory-utilization=1.5"], "(0, 1]"),
            (&["--kv-cache-dtype=int4"], "--kv-cache-dtype=int4"),
            (&["--max-model-len"], "--max-model-len: needs a value"),
        ] {
            let e = EngineArgs::parse(&strs(flags)).unwrap_err().to_string();
            assert!(e.contains(want), "{flags:?}: {e}");
        }
    }

    #[test]
    fn batch_defaults_follow_vllm() {
        let h200 = GpuSpec::resolve("h200").unwrap();
        let a = EngineArgs::parse(&strs(&["--performance-mode=throughput"])).unwrap();
        assert_eq!(a.batch_limits(&h200, 32768), (16384, 2048));
        let b = EngineArgs::parse(&strs(&[
            "--performance-mode=throughput",
            "--max-num-seqs=256",
        ]))
        .unwrap();
        assert_eq!(b.batch_limits(&h200, 32768), (16384, 256));
        assert_eq!(
            EngineArgs::default().batch_limits(&h200, 32768),
            (8192, 1024)
        );
    }

    #[test]
    fn named_configs_are_their_flag_sets() {
        for (name, fp8, flags) in NAMED_CONFIGS {
            let c = Config::named(name).unwrap();
            assert_eq!(c.backend_parameters(), strs(flags), "{name}");
            assert_eq!(c.weights == Weights::Fp8, fp8, "{name}");
        }
    }
}
