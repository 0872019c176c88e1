//! The simulator's reading of a configuration: a model name and vLLM flags (in vLLM's own
//! spelling) mapped onto the simulator's [`Config`] and [`Params`]. A flag the simulator
//! does not model is an error naming it, never silently ignored. (A small adapter: the
//! simulator's own `--engine-args` parser can replace it.)

use crate::sim::{Config, Params, Weights};

/// A flag the simulator cannot model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the simulator does not model `{flag}`")]
pub struct Unmodelled {
    /// The flag as written.
    pub flag: String,
}

/// The flag's key (text before `=`) and value.
pub fn split_flag(flag: &str) -> (&str, Option<&str>) {
    match flag.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (flag.trim(), None),
    }
}

/// Maps `model` and `flags` onto the simulator.
///
/// ```
/// use servebench::study::flags::sim_config;
/// let (c, p) = sim_config("Qwen/Qwen3.5-35B-A3B-FP8", &["--enable-prefix-caching".into(),
///     "--max-num-batched-tokens=4096".into()]).unwrap();
/// assert!(c.prefix_caching);
/// assert_eq!(p.max_batched_tokens, 4096);
/// let err = sim_config("Qwen/Qwen3.5-35B-A3B", &["--speculative-config={}".into()]).unwrap_err();
/// assert_eq!(err.flag, "--speculative-config={}");
/// ```
pub fn sim_config(model: &str, flags: &[String]) -> Result<(Config, Params), Unmodelled> {
    let mut c = Config::named("baseline").ok_or_else(|| Unmodelled {
        flag: "baseline".into(),
    })?;
    c.name = "study";
    if model.to_ascii_uppercase().ends_with("-FP8") {
        c.weights = Weights::Fp8;
    }
    let bad = |f: &String| Unmodelled { flag: f.clone() };
    let mut batched = None;
    let mut seqs = None;
    for f in flags {
        match split_flag(f) {
            ("--quantization", Some("fp8")) => c.weights = Weights::Fp8,
            ("--kv-cache-dtype", Some("fp8")) => c.kv_fp8 = true,
            ("--kv-cache-dtype", Some("auto")) => c.kv_fp8 = false,
            ("--performance-mode", Some("throughput")) => c.performance_mode = true,
            ("--enable-prefix-caching", None) => c.prefix_caching = true,
            ("--no-enable-prefix-caching", None) => c.prefix_caching = false,
            ("--max-num-batched-tokens", Some(v)) => {
                batched = Some(
                    v.parse::<u64>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| bad(f))?,
                )
            }
            ("--max-num-seqs", Some(v)) => {
                seqs = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| bad(f))?,
                )
            }
            ("--reasoning-parser", Some(_)) | ("--async-scheduling", None) => {}
            ("--max-model-len", Some("32768")) => {}
            _ => return Err(bad(f)),
        }
    }
    let mut p = Params::for_config(&c);
    if let Some(b) = batched {
        p.max_batched_tokens = b;
    }
    if let Some(s) = seqs {
        p.max_seqs = s;
    }
    Ok((c, p))
}
