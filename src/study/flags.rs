//! The simulator's reading of a study configuration: a model name and vLLM flags (in vLLM's
//! own spelling) turned into the simulator's [`Config`] and [`Params`] by the simulator's
//! own flag reader ([`crate::sim::from_engine_args`]). A flag the simulator does not know,
//! or knows but does not model (it would change nothing, so a study step adding it would
//! look "within noise"), is an error naming it, never silently ignored.

use std::fmt;

use crate::sim::{from_engine_args, Config, Params};

/// The GPU the study runner simulates (the seed's).
pub const SIM_GPU: &str = "h200";

/// A flag (or model) the simulator cannot model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmodelled {
    /// The flag as written (or the model name).
    pub flag: String,
    /// Why, where there is more to say than "not modelled" (a bad value, an unknown model).
    pub reason: Option<String>,
}

impl fmt::Display for Unmodelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the simulator does not model `{}`", self.flag)?;
        if let Some(r) = &self.reason {
            write!(f, " ({r})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Unmodelled {}

/// The flag's key (text before `=`) and value.
pub fn split_flag(flag: &str) -> (&str, Option<&str>) {
    match flag.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (flag.trim(), None),
    }
}

/// Maps `model` and `flags` onto the simulator (on [`SIM_GPU`]).
///
/// ```
/// use servebench::study::sim_config;
/// let (c, p) = sim_config("Qwen/Qwen3.5-35B-A3B-FP8", &["--enable-prefix-caching".into(),
///     "--max-num-batched-tokens=4096".into()]).unwrap();
/// assert!(c.prefix_caching);
/// assert_eq!(p.max_batched_tokens, 4096);
/// let (_, mtp) = sim_config("Qwen/Qwen3.5-35B-A3B",
///     &[r#"--speculative-config={"method":"mtp","num_speculative_tokens":2}"#.into()]).unwrap();
/// assert_eq!(mtp.spec_tokens, 2);
/// let err = sim_config("Qwen/Qwen3.5-35B-A3B", &["--frobnicate".into()]).unwrap_err();
/// assert_eq!(err.flag, "--frobnicate");
/// let err = sim_config("Qwen/Qwen3.5-35B-A3B", &["--enforce-eager".into()]).unwrap_err();
/// assert_eq!(err.to_string(), "the simulator does not model `--enforce-eager`");
/// ```
pub fn sim_config(model: &str, flags: &[String]) -> Result<(Config, Params), Unmodelled> {
    let mut c = from_engine_args(model, SIM_GPU, flags).map_err(|e| {
        use crate::sim::SimConfigError;
        match e {
            SimConfigError::Flag { flag, message } => Unmodelled {
                // The flag as written in the study file when it is there.
                flag: flags
                    .iter()
                    .find(|f| split_flag(f).0 == flag)
                    .cloned()
                    .unwrap_or(flag),
                reason: Some(message),
            },
            other => Unmodelled {
                flag: model.to_string(),
                reason: Some(other.to_string()),
            },
        }
    })?;
    if let Some(f) = c.args.ignored.first().or(c.args.no_effect.first()) {
        return Err(Unmodelled {
            flag: f.clone(),
            reason: None,
        });
    }
    c.name = "study";
    let p = Params::for_config(&c);
    Ok((c, p))
}
