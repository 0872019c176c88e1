//! The study file: a versioned TOML document naming the model and hardware, the engines
//! (the embedded simulator or a launch command), the optimization ladder, the profiles, the
//! repetitions and the decision rule. [`EXPLAIN`] documents every field; [`StudyFile::parse`]
//! checks the document and names the key of anything wrong.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::compare::{Direction, Metric, METRICS};
use crate::profile::Profile;

use super::StudyError;

pub use super::ladder::{LadderRule, LadderSpec, StepSpec};
pub use super::repetitions::{NoiseMode, NoiseSpec, Repetitions};

/// The value of a study file's `format` key.
pub const FORMAT: &str = "servebench-study";
/// The study-file version this crate reads.
pub const VERSION: u32 = 1;

/// A study file. See [`EXPLAIN`](super::EXPLAIN) for every field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The document's title (`Optimizing Qwen3.5-35B-A3B Throughput`).
    pub title: String,
    /// Throughput, latency or capacity: picks the default target metric and the
    /// document's wording.
    #[serde(default)]
    pub goal: Goal,
    /// `goal = "capacity"`: the SLO every run's capacity search holds the server to, in
    /// `bench --slo`'s syntax (`ttft:p99<=500ms tpot:p99<=50ms goodput>=0.99`).
    #[serde(default)]
    pub slo: Option<String>,
    /// `goal = "capacity"`: what the capacity search varies, and its range.
    #[serde(default)]
    pub capacity: Option<CapacitySpec>,
    /// The model as users name it (`Qwen/Qwen3.5-35B-A3B`).
    pub model: String,
    /// The hardware label (`NVIDIA H200`).
    pub hardware: String,
    /// The metric the decision rule compares (a key of [`METRICS`]); default by `goal`:
    /// `total_token_throughput` or `mean_e2el_ms`.
    #[serde(default)]
    pub target: Option<String>,
    /// Runs per (configuration, profile): a number, or `"auto"` (the sequential design of
    /// [`crate::noise::Design`], up to `max_repetitions`).
    #[serde(default)]
    pub repetitions: Repetitions,
    /// `repetitions = "auto"`: the budget, repetitions per side at most (default 10).
    #[serde(default)]
    pub max_repetitions: Option<u32>,
    /// `repetitions = "auto"`: repetitions per side at the first look, and of the engines'
    /// baselines and the final comparison (default 2).
    #[serde(default)]
    pub min_repetitions: Option<u32>,
    /// The minimum effect a step must exceed to be kept, percent of the reference's target
    /// value (default [`crate::noise::sequential::DEFAULT_MIN_EFFECT_PERCENT`]).
    #[serde(default)]
    pub min_effect: Option<f64>,
    /// The simulator engine's run-to-run noise.
    #[serde(default)]
    pub noise: NoiseSpec,
    /// How a configuration's runs are ordered.
    #[serde(default)]
    pub order: Order,
    /// Requests sent (and discarded) after a server becomes healthy, before its first run.
    #[serde(default)]
    pub warmup_requests: u64,
    /// Seed of the workloads (ShareGPT sampling); repetition `r` uses `seed + r - 1` when
    /// `vary_seed` is set.
    #[serde(default)]
    pub seed: u64,
    /// Give each repetition its own workload seed.
    #[serde(default)]
    pub vary_seed: bool,
    /// Custom profiles by name (GPUStack's keys: `dataset_name`, `dataset_input_tokens`, …).
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// The engines to compare at their defaults; the best one enters the ladder.
    pub engines: Vec<EngineSpec>,
    /// The ladder of optimization steps.
    pub ladder: LadderSpec,
    /// The final comparison of baseline and the recommended configuration.
    #[serde(rename = "final")]
    pub final_: FinalSpec,
    /// Sentences for the document's note on what was not tested.
    #[serde(default)]
    pub notes: Vec<String>,
    /// An eval set every configuration answers; a step must keep quality ([`QualitySpec`](super::QualitySpec)).
    #[serde(default)]
    pub quality: Option<super::quality::QualitySpec>,
    /// The API every run calls (`[endpoint]`; default: completions), for a study of an
    /// embeddings or rerank tier. Command engines only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<super::endpoint::EndpointSpec>,
    /// Add a "Production Figures" section to the document: per configuration, energy per
    /// output token and tokens per joule beside throughput, speculative-decoding
    /// acceptance, and the time to the first answer token of reasoning streams (each where
    /// measured).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub production: bool,
    /// GPU telemetry sampled during every run of a started engine (as `bench
    /// --gpu-metrics`): a DCGM exporter's URL or `nvidia-smi`. Simulator runs use the
    /// simulator's power model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_metrics: Option<String>,
}

/// What the study optimizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Goal {
    /// Total token throughput (the seed).
    #[default]
    Throughput,
    /// Mean request latency.
    Latency,
    /// The highest load at which `slo` holds: every run is a capacity search, and the
    /// ladder keeps the step that holds the most load under the SLO.
    Capacity,
}

/// The capacity search of a `goal = "capacity"` study (`[capacity]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// `rate` (requests/s, constant arrivals) or `concurrency` (every request at once,
    /// under a cap).
    #[serde(default = "rate_search")]
    pub search: crate::result::SearchKind,
    /// The lowest load probed (default: `max / 32` for rate, 1 for concurrency).
    #[serde(default)]
    pub min: Option<f64>,
    /// The highest load probed.
    pub max: f64,
    /// The resolution (default: `(max − min) / 32` for rate, 1 for concurrency).
    #[serde(default)]
    pub resolution: Option<f64>,
    /// Most probes at one load near the SLO's limit.
    #[serde(default = "capacity_repeats")]
    pub repeats: u32,
}

fn rate_search() -> crate::result::SearchKind {
    crate::result::SearchKind::Rate
}

fn capacity_repeats() -> u32 {
    crate::capacity::DEFAULT_REPEATS
}

/// The order of a configuration's runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Each profile's repetitions back to back (`a1 a2 b1 b2`).
    #[default]
    Sequential,
    /// Repetitions interleaved across the profiles (`a1 b1 a2 b2`), so slow drift of the
    /// server spreads over every profile.
    Interleaved,
}

/// How an engine is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineKind {
    /// The embedded simulator (vLLM 0.17 on an H200, in virtual time).
    Simulator,
    /// A server process started from `command`.
    Command,
}

/// One engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// The engine's name in the document (`vLLM`, `SGLang`).
    pub name: String,
    /// `simulator` or `command`.
    pub kind: EngineKind,
    /// The engine version for the document (`v0.17.1`).
    #[serde(default)]
    pub version: Option<String>,
    /// GPUs the engine's server uses (for the cost figures; default 1).
    #[serde(default)]
    pub gpus: Option<u32>,
    /// Price of one GPU for an hour, USD: the document adds $/1M tokens and tok/s per GPU.
    #[serde(default)]
    pub gpu_price: Option<f64>,
    /// The model this engine serves at baseline (default: the study's `model`).
    #[serde(default)]
    pub model: Option<String>,
    /// The baseline flags, in the engine's own spelling, one argument each
    /// (`--max-model-len=32768`).
    #[serde(default)]
    pub flags: Vec<String>,
    /// `command`: the launch command as an argument vector. Placeholders `{model}`,
    /// `{port}`, `{host}` and `{api_key}` are filled inside each argument; an argument that is
    /// exactly `{flags}` becomes the configuration's flags, one argument each. No shell.
    #[serde(default)]
    pub command: Vec<String>,
    /// `command`: host the server listens on.
    #[serde(default = "localhost")]
    pub host: String,
    /// `command`: port; `0` picks a free one per launch.
    #[serde(default)]
    pub port: u16,
    /// `command`: path polled until it answers 200.
    #[serde(default = "health")]
    pub health_path: String,
    /// `command`: seconds to wait for health and `/v1/models`.
    #[serde(default = "start_timeout")]
    pub start_timeout_s: f64,
    /// `command`: the signal that asks the server to stop (`SIGTERM`, `SIGINT`).
    #[serde(default = "sigterm")]
    pub stop_signal: String,
    /// `command`: seconds between the stop signal and `SIGKILL` of the process group.
    #[serde(default = "stop_timeout")]
    pub stop_timeout_s: f64,
    /// `command`: environment variables added to the server's.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Name of the environment variable holding the API key (its value is sent as a bearer
    /// token and fills `{api_key}`; it is never written to the journal, logs or document).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// `command`: seconds the plan assumes a launch takes (for its estimate).
    #[serde(default = "expected_start")]
    pub expected_start_s: f64,
    /// `command`: limit for one request, seconds (a server that stops answering fails the
    /// request instead of hanging the study).
    #[serde(default = "request_timeout")]
    pub request_timeout_s: f64,
}

impl EngineSpec {
    /// The API key from the variable `api_key_env` names; `None` without `api_key_env`.
    /// A variable that is not set, or empty, is an error (a server launched with an empty
    /// key may run without authentication).
    pub fn api_key(&self) -> Result<Option<String>, StudyError> {
        let Some(var) = &self.api_key_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(k) if !k.is_empty() => Ok(Some(k)),
            _ => Err(StudyError::ApiKeyUnset {
                engine: self.name.clone(),
                var: var.clone(),
            }),
        }
    }
}

/// The first argument of `argv` that holds a key's value in the study file itself (a
/// secret flag whose value is not `{api_key}`): `(index, flag)`.
fn literal_secret(argv: &[String]) -> Option<(usize, String)> {
    crate::secret::secrets_in(argv).into_iter().find_map(|at| {
        let value = crate::secret::value_at(argv, at);
        if value.contains("{api_key}") {
            return None;
        }
        let i = match at {
            crate::secret::SecretAt::Inline(i) => i,
            crate::secret::SecretAt::Next(i) => i - 1,
        };
        let flag = argv[i].split('=').next().unwrap_or_default().to_string();
        Some((i, flag))
    })
}

fn request_timeout() -> f64 {
    3600.0
}

fn localhost() -> String {
    "127.0.0.1".into()
}
fn health() -> String {
    "/health".into()
}
fn start_timeout() -> f64 {
    600.0
}
fn sigterm() -> String {
    "SIGTERM".into()
}
fn stop_timeout() -> f64 {
    30.0
}
fn expected_start() -> f64 {
    120.0
}

/// The final comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinalSpec {
    /// Profiles baseline and the recommended configuration both run.
    pub profiles: Vec<String>,
    /// Flags added to the best step for the recommended configuration without a step of
    /// their own (the seed adds `--async-scheduling`); the document says so.
    #[serde(default)]
    pub add: Vec<String>,
}

impl StudyFile {
    /// Parses and checks a study file's text. `path` names the file in errors.
    ///
    /// ```
    /// use servebench::study::StudyFile;
    /// let text = r#"
    /// format = "servebench-study"
    /// version = 1
    /// title = "T"
    /// model = "Qwen/Qwen3.5-35B-A3B"
    /// hardware = "NVIDIA H200"
    /// [[engines]]
    /// name = "vLLM"
    /// kind = "simulator"
    /// [ladder]
    /// profiles = ["latency"]
    /// [final]
    /// profiles = ["latency"]
    /// "#;
    /// let s = StudyFile::parse(text, "s.toml".as_ref()).unwrap();
    /// assert_eq!(s.target_metric().key, "total_token_throughput");
    /// let err = StudyFile::parse(&text.replace("latency\"]\n[final]", "nope\"]\n[final]"), "s.toml".as_ref()).unwrap_err();
    /// assert!(err.to_string().contains("ladder.profiles"), "{err}");
    /// ```
    pub fn parse(text: &str, path: &Path) -> Result<StudyFile, StudyError> {
        let file: StudyFile = toml::from_str(text).map_err(|e| StudyError::File {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        file.check().map_err(|message| StudyError::File {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(file)
    }

    /// Reads and checks a study file.
    pub fn read(path: &Path) -> Result<StudyFile, StudyError> {
        let text = std::fs::read_to_string(path).map_err(|e| StudyError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        StudyFile::parse(&text, path)
    }

    fn check(&self) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!(
                "`format` is \"{}\", expected \"{FORMAT}\"",
                self.format
            ));
        }
        if self.version != VERSION {
            return Err(format!(
                "`version` {} is not supported (this servebench reads {VERSION})",
                self.version
            ));
        }
        self.check_capacity()?;
        if let Some(e) = &self.endpoint {
            e.check()?;
            if e.name != "completions"
                && self.engines.iter().any(|x| x.kind == EngineKind::Simulator)
            {
                return Err(format!(
                    "`endpoint.name` = \"{}\" needs command engines: the simulator engine serves \
                     completions (run the example server as a command engine instead)",
                    e.name
                ));
            }
        }
        if let Some(t) = self.target.as_ref().filter(|_| self.goal != Goal::Capacity) {
            if !METRICS.iter().any(|m| m.key == t) {
                let keys: Vec<_> = METRICS.iter().map(|m| m.key).collect();
                return Err(format!(
                    "`target`: unknown metric `{t}` (known: {})",
                    keys.join(", ")
                ));
            }
        }
        if self.repetitions == Repetitions::Fixed(0) {
            return Err("`repetitions` must be at least 1".into());
        }
        if self.repetitions != Repetitions::Auto {
            for (key, set) in [
                ("max_repetitions", self.max_repetitions.is_some()),
                ("min_repetitions", self.min_repetitions.is_some()),
            ] {
                if set {
                    return Err(format!("`{key}` needs `repetitions = \"auto\"`"));
                }
            }
        }
        self.design().check().map_err(|e| {
            use crate::noise::sequential::DesignError;
            let key = match e {
                DesignError::MinEffect(_) => "min_effect",
                DesignError::Budget { .. } => "max_repetitions",
                _ => "min_repetitions",
            };
            format!("`{key}`: {e}")
        })?;
        let n = &self.noise;
        for (key, v) in [
            ("noise.run_sigma", n.run_sigma),
            ("noise.step_sigma", n.step_sigma),
            ("noise.arrival_jitter_ms", n.arrival_jitter_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{key}: must be a number >= 0, got {v}"));
            }
        }
        if self.engines.is_empty() {
            return Err("`engines`: at least one engine is needed".into());
        }
        // A key is never written in the study file (it is copied into the study
        // directory): it comes from the environment, through `api_key_env`.
        let secret = |at: String, argv: &[String]| match literal_secret(argv) {
            Some((k, flag)) => Err(format!(
                "{at}[{k}]: `{flag}` carries a key in the study file; put the key in an \
                 environment variable, name it in `api_key_env` and write `{flag}={{api_key}}` \
                 in the engine's `command`"
            )),
            None => Ok(()),
        };
        for (i, e) in self.engines.iter().enumerate() {
            secret(format!("engines[{i}].flags"), &e.flags)?;
            secret(format!("engines[{i}].command"), &e.command)?;
        }
        for (i, s) in self.ladder.steps.iter().enumerate() {
            secret(format!("ladder.steps[{i}].add"), &s.add)?;
        }
        secret("final.add".into(), &self.final_.add)?;
        let mut names = std::collections::BTreeSet::new();
        for (i, e) in self.engines.iter().enumerate() {
            let at = format!("engines[{i}]");
            if e.gpus == Some(0) {
                return Err(format!("{at}.gpus: must be at least 1, got 0"));
            }
            if let Some(p) = e.gpu_price.filter(|p| !(p.is_finite() && *p > 0.0)) {
                return Err(format!("{at}.gpu_price: must be a positive price, got {p}"));
            }
            if !names.insert(e.name.as_str()) {
                return Err(format!("{at}.name: `{}` is used twice", e.name));
            }
            if e.kind == EngineKind::Command {
                if e.command.is_empty() || e.command[0].trim().is_empty() {
                    return Err(format!("{at}.command: a command engine needs a program"));
                }
                for (k, arg) in e.command.iter().enumerate() {
                    super::process::check_placeholders(arg)
                        .map_err(|m| format!("{at}.command[{k}]: {m}"))?;
                }
                if super::process::signal_number(&e.stop_signal).is_none() {
                    return Err(format!(
                        "{at}.stop_signal: unknown signal `{}` (SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGKILL)",
                        e.stop_signal
                    ));
                }
                for (key, v) in [
                    ("start_timeout_s", e.start_timeout_s),
                    ("stop_timeout_s", e.stop_timeout_s),
                    ("request_timeout_s", e.request_timeout_s),
                ] {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(format!("{at}.{key}: must be a positive number, got {v}"));
                    }
                }
                if !e.health_path.starts_with('/') {
                    return Err(format!("{at}.health_path: must start with `/`"));
                }
            }
        }
        for (name, p) in &self.profiles {
            // A run of no request measures nothing and would pass every decision unseen.
            if p.total_requests == 0 {
                return Err(format!(
                    "profiles.{name}.total_requests: must be at least 1, got 0"
                ));
            }
            if p.max_concurrency == Some(0) {
                return Err(format!(
                    "profiles.{name}.max_concurrency: must be at least 1, got 0"
                ));
            }
        }
        for (i, p) in self.ladder.profiles.iter().enumerate() {
            self.profile(p)
                .map_err(|m| format!("ladder.profiles[{i}]: {m}"))?;
        }
        self.ladder.check()?;
        if let Some(q) = &self.quality {
            let steps: Vec<&str> = self.ladder.steps.iter().map(|s| s.name.as_str()).collect();
            q.check(&steps)?;
        }
        for (i, p) in self.final_.profiles.iter().enumerate() {
            self.profile(p)
                .map_err(|m| format!("final.profiles[{i}]: {m}"))?;
        }
        let mut seen = vec!["best".to_string(), "baseline".to_string()];
        for (i, s) in self.ladder.steps.iter().enumerate() {
            if let Some(on) = &s.on {
                if !seen.contains(on) {
                    return Err(format!(
                        "ladder.steps[{i}].on: `{on}` is not `best`, `baseline` or an earlier step"
                    ));
                }
            }
            if seen.contains(&s.name) {
                return Err(format!(
                    "ladder.steps[{i}].name: `{}` is used twice",
                    s.name
                ));
            }
            seen.push(s.name.clone());
        }
        Ok(())
    }

    fn check_capacity(&self) -> Result<(), String> {
        if self.goal != Goal::Capacity {
            if self.slo.is_some() || self.capacity.is_some() {
                return Err("`slo` and `[capacity]` are for goal = \"capacity\"".into());
            }
            return Ok(());
        }
        let Some(text) = &self.slo else {
            return Err(
                "`slo`: goal = \"capacity\" needs an SLO (e.g. slo = \"ttft:p99<=500ms\")".into(),
            );
        };
        text.parse::<crate::capacity::SloTarget>()
            .map_err(|e| format!("`slo`: {e}"))?;
        if self.capacity.is_none() {
            return Err(
                "`[capacity]`: goal = \"capacity\" needs the search's range (max = …)".into(),
            );
        }
        if let Some((_, o)) = self.search_options() {
            o.check().map_err(|e| format!("`[capacity]`: {e}"))?;
        }
        if let Some(t) = self
            .target
            .as_deref()
            .filter(|t| *t != crate::compare::CAPACITY.key)
        {
            return Err(format!(
                "`target`: a capacity study's target is `capacity`, not `{t}`"
            ));
        }
        Ok(())
    }

    /// `goal = "capacity"`: the SLO.
    pub fn slo_target(&self) -> Option<crate::capacity::SloTarget> {
        self.slo.as_deref().and_then(|t| t.parse().ok())
    }

    /// `goal = "capacity"`: what the search varies and its options.
    pub fn search_options(
        &self,
    ) -> Option<(crate::result::SearchKind, crate::capacity::SearchOptions)> {
        use crate::result::SearchKind;
        let c = self.capacity.as_ref()?;
        let min = c.min.unwrap_or(match c.search {
            SearchKind::Rate => c.max / 32.0,
            SearchKind::Concurrency => 1.0,
        });
        let mut o = crate::capacity::options_for(c.search, min, c.max, c.resolution);
        o.repeats = c.repeats;
        Some((c.search, o))
    }

    /// The profile called `name`: a custom one, else a preset.
    pub fn profile(&self, name: &str) -> Result<Profile, String> {
        if let Some(p) = self.profiles.get(name) {
            let mut p = p.clone();
            p.name = Some(name.to_string());
            return Ok(p);
        }
        Profile::preset(name).map_err(|e| e.to_string())
    }

    /// The metric the decision rule compares.
    pub fn target_metric(&self) -> Metric {
        if self.goal == Goal::Capacity {
            return crate::compare::CAPACITY;
        }
        let key = self.target.as_deref().unwrap_or(match self.goal {
            Goal::Throughput => "total_token_throughput",
            Goal::Latency => "mean_e2el_ms",
            Goal::Capacity => crate::compare::CAPACITY.key,
        });
        METRICS
            .iter()
            .find(|m| m.key == key)
            .copied()
            .unwrap_or(crate::compare::TOTAL_TOKEN_THROUGHPUT)
    }

    /// Repetitions per (configuration, profile) planned at most: the fixed count, or
    /// `max_repetitions` for `"auto"`.
    pub fn planned_repetitions(&self) -> u32 {
        match self.repetitions {
            Repetitions::Fixed(n) => n,
            Repetitions::Auto => self.design().max_repetitions,
        }
    }

    /// Repetitions of the engines' baselines and the final comparison: the fixed count, or
    /// `min_repetitions` for `"auto"`.
    pub fn fixed_repetitions(&self) -> u32 {
        match self.repetitions {
            Repetitions::Fixed(n) => n,
            Repetitions::Auto => self.design().first_look,
        }
    }

    /// Whether the ladder's decisions are sequential (`repetitions = "auto"`).
    pub fn is_auto(&self) -> bool {
        self.repetitions == Repetitions::Auto
    }

    /// The decision rule's error rate, minimum effect and (for `"auto"`) sequential budget.
    pub fn design(&self) -> crate::noise::sequential::Design {
        let d = crate::noise::sequential::Design::default();
        crate::noise::sequential::Design {
            min_effect_percent: self.min_effect.unwrap_or(d.min_effect_percent),
            first_look: self.min_repetitions.unwrap_or(d.first_look),
            max_repetitions: self.max_repetitions.unwrap_or(d.max_repetitions),
            ..d
        }
    }

    /// The simulator's noise model for one run, `None` when the noise is off (a
    /// deterministic simulation). `key` names the run (configuration, profile,
    /// repetition): each run gets its own noise seed.
    pub fn sim_noise(&self, key: &str) -> Option<crate::sim::noise::NoiseModel> {
        if !self.noise_on() {
            return None;
        }
        let n = &self.noise;
        Some(crate::sim::noise::NoiseModel {
            seed: crate::sim::noise::seed_for(n.seed ^ self.seed, key),
            run_sigma: n.run_sigma,
            step_sigma: n.step_sigma,
            arrival_jitter_s: n.arrival_jitter_ms / 1e3,
            resample_dataset: false,
        })
    }

    /// Whether the simulator engine varies from run to run (see [`NoiseMode`]).
    pub fn noise_on(&self) -> bool {
        match self.noise.mode {
            NoiseMode::On => true,
            NoiseMode::Off => false,
            NoiseMode::Auto => self.is_auto() || self.repetitions != Repetitions::Fixed(1),
        }
    }

    /// Whether the higher target values are better.
    pub fn higher_is_better(&self) -> bool {
        self.target_metric().direction == Direction::HigherIsBetter
    }
}
