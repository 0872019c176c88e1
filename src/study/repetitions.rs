//! A study file's repetitions (a number or `"auto"`) and `[noise]`, the simulator engine's
//! run-to-run noise model: the types [`super::file::StudyFile`] reads them into.

use serde::{Deserialize, Serialize};

/// `repetitions`: a fixed number, or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repetitions {
    /// This many runs per (configuration, profile).
    Fixed(u32),
    /// As many as the sequential design needs (see [`crate::noise::Design`]).
    Auto,
}

impl Default for Repetitions {
    fn default() -> Self {
        Repetitions::Fixed(1)
    }
}

impl Serialize for Repetitions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Repetitions::Fixed(n) => s.serialize_u32(*n),
            Repetitions::Auto => s.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Repetitions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Repetitions;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of repetitions (>= 1) or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Repetitions, E> {
                u32::try_from(v)
                    .map(Repetitions::Fixed)
                    .map_err(|_| E::custom(format!("repetitions: {v} is not a number of runs")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Repetitions, E> {
                u32::try_from(v)
                    .map(Repetitions::Fixed)
                    .map_err(|_| E::custom(format!("repetitions: {v} is too large")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Repetitions, E> {
                if v == "auto" {
                    Ok(Repetitions::Auto)
                } else {
                    Err(E::custom(format!(
                        "repetitions: `{v}` is neither a number nor \"auto\""
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether the simulator engine varies from run to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseMode {
    /// On whenever a configuration runs more than once (`repetitions` > 1 or `"auto"`),
    /// off for single runs (a deterministic simulation).
    #[default]
    Auto,
    /// Always on.
    On,
    /// Always off: every repetition replays the same run.
    Off,
}

/// `[noise]`: the simulator engine's run-to-run noise model ([`crate::sim::NoiseModel`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseSpec {
    /// When the noise is on.
    #[serde(default)]
    pub mode: NoiseMode,
    /// Log-sd of the per-run speed factor.
    #[serde(default = "run_sigma")]
    pub run_sigma: f64,
    /// Log-sd of the per-step time factor.
    #[serde(default = "step_sigma")]
    pub step_sigma: f64,
    /// Mean extra client → server delay per request, ms.
    #[serde(default = "arrival_jitter_ms")]
    pub arrival_jitter_ms: f64,
    /// Seed of the noise (each run's noise seed derives from it, the configuration, the
    /// profile and the repetition).
    #[serde(default)]
    pub seed: u64,
}

fn run_sigma() -> f64 {
    crate::sim::noise::RUN_SIGMA
}
fn step_sigma() -> f64 {
    crate::sim::noise::STEP_SIGMA
}
fn arrival_jitter_ms() -> f64 {
    crate::sim::noise::ARRIVAL_JITTER_S * 1e3
}

impl Default for NoiseSpec {
    fn default() -> Self {
        NoiseSpec {
            mode: NoiseMode::Auto,
            run_sigma: run_sigma(),
            step_sigma: step_sigma(),
            arrival_jitter_ms: arrival_jitter_ms(),
            seed: 0,
        }
    }
}
