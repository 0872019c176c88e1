//! The profile as text: the seed's profile listing (`Profile`'s `Display`) and the guidellm
//! command lines that replay a profile ([`Profile::guidellm_command`],
//! [`Profile::guidellm_run_command`]), numbers spelled as Python prints them
//! (`pyfmt`). [`crate::profile`] holds the data only.

use std::fmt;
use std::path::PathBuf;

use crate::profile::{Dataset, DatasetSpec, Profile, SHAREGPT_FILE};

impl Profile {
    /// The seed's "Open-Source Replacement" command (`guidellm benchmark …`, guidellm ≤ 0.7),
    /// with `target` and `model_path` filled in. Pass `"${target}"` and `"${model_path}"` to
    /// get the template as the seed prints it. A concurrency cap is set through guidellm's
    /// `GUIDELLM__MAX_CONCURRENCY` setting (that command has no flag for it).
    ///
    /// ```
    /// use servebench::profile::Profile;
    /// let cmd = Profile::preset("throughput").unwrap().guidellm_command("${target}", "${model_path}");
    /// assert_eq!(cmd, "guidellm benchmark \\\n  --target ${target} \\\n  --profile constant \\\n  --rate 1000 \\\n  --max-requests 1000 \\\n  --processor ${model_path} \\\n  --data \"prompt_tokens=1024,output_tokens=128\" \\\n  --random-seed 42");
    /// ```
    pub fn guidellm_command(&self, target: &str, model_path: &str) -> String {
        use crate::format::shell::quote_template;
        let (target, model_path) = (quote_template(target), quote_template(model_path));
        let mut lines = vec![
            "guidellm benchmark".to_string(),
            format!("  --target {target}"),
            "  --profile constant".to_string(),
            format!("  --rate {}", super::pyfmt::int_or_repr(self.request_rate)),
            format!("  --max-requests {}", self.total_requests),
            format!("  --processor {model_path}"),
        ];
        lines.extend(
            self.guidellm_data_lines(|input_tokens, output_tokens, seed| {
                [
                    format!(
                        "  --data \"prompt_tokens={input_tokens},output_tokens={output_tokens}\""
                    ),
                    format!("  --random-seed {seed}"),
                ]
            }),
        );
        if let Some(c) = self.max_concurrency {
            // `guidellm benchmark` has no concurrency flag: its cap on requests in flight is
            // the setting `max_concurrency` (512 in 0.5–0.6), read from the environment.
            lines[0] = format!("GUIDELLM__MAX_CONCURRENCY={c} guidellm benchmark");
        }
        lines.join(" \\\n")
    }

    /// The same run in guidellm 0.8's `guidellm run` syntax (registry-typed `kind=…`
    /// arguments), with `model_path` as the tokenizer. A concurrency cap goes on the rate
    /// profile (`--profile kind=constant,rate=R,max_concurrency=C`).
    ///
    /// ```
    /// use servebench::profile::Profile;
    /// let cmd = Profile::preset("latency").unwrap().guidellm_run_command("http://127.0.0.1:8000", "/models/qwen");
    /// assert!(cmd.starts_with("guidellm run \\\n  --backend kind=openai_http,target=http://127.0.0.1:8000 \\\n"));
    /// assert!(cmd.contains("--profile kind=constant,rate=1 \\\n"));
    /// assert!(cmd.contains("--data kind=synthetic_text,prompt_tokens=128,output_tokens=128"));
    /// ```
    pub fn guidellm_run_command(&self, target: &str, model_path: &str) -> String {
        use crate::format::shell::quote;
        let backend = format!("kind=openai_http,target={target}");
        let tokenizer = format!("kind=hf_auto,model={model_path}");
        let (backend, tokenizer) = (quote(&backend), quote(&tokenizer));
        let mut lines = vec![
            "guidellm run".to_string(),
            format!("  --backend {backend}"),
            format!("  --tokenizer {tokenizer}"),
            format!(
                "  --profile kind=constant,rate={}{}",
                super::pyfmt::int_or_repr(self.request_rate),
                // The cap belongs to the rate profile; guidellm 0.8 has no
                // `max_concurrency` constraint ("invalid kind 'max_concurrency'").
                self.max_concurrency
                    .map(|c| format!(",max_concurrency={c}"))
                    .unwrap_or_default()
            ),
            format!(
                "  --constraint kind=max_requests,count={}",
                self.total_requests
            ),
        ];
        lines.extend(self.guidellm_data_lines(|input_tokens, output_tokens, seed| {
            [
                format!("  --seed kind=static,value={seed}"),
                format!(
                    "  --data kind=synthetic_text,prompt_tokens={input_tokens},output_tokens={output_tokens}"
                ),
            ]
        }));
        lines.join(" \\\n")
    }
}

impl Profile {
    /// The dataset's lines of a guidellm command: `--data` for ShareGPT and structured
    /// datasets (the same in both syntaxes), `random(input_tokens, output_tokens, seed)`'s
    /// two lines for the random dataset (each syntax spells those its own way).
    fn guidellm_data_lines(
        &self,
        random: impl FnOnce(u64, u64, u64) -> [String; 2],
    ) -> Vec<String> {
        match &self.dataset {
            Dataset::ShareGpt { path } => vec![format!("  --data {}", sharegpt_arg(path))],
            Dataset::Random {
                input_tokens,
                output_tokens,
                seed,
            } => random(*input_tokens, *output_tokens, *seed).into(),
            Dataset::Structured(spec) => vec![guidellm_data(spec)],
        }
    }
}

/// The `--data` line for a structured dataset: the file for a JSON Lines prompt file;
/// the others have no guidellm equivalent, which the line says.
fn guidellm_data(spec: &DatasetSpec) -> String {
    match spec {
        DatasetSpec::Jsonl { path, .. } => format!(
            "  --data {}",
            crate::format::shell::quote(&path.to_string_lossy())
        ),
        other => format!(
            "  --data {}",
            crate::format::shell::quote(&format!(
                "servebench dataset `{}`: no guidellm equivalent",
                other.name()
            ))
        ),
    }
}

fn sharegpt_arg(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => crate::format::shell::quote(&p.to_string_lossy()).into_owned(),
        None => crate::format::shell::quote(&format!("./{SHAREGPT_FILE}")).into_owned(),
    }
}

impl fmt::Display for Profile {
    /// The seed's profile listing (`dataset_name: Random` …), one key per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.dataset {
            Dataset::ShareGpt { .. } => writeln!(f, "dataset_name: ShareGPT")?,
            Dataset::Random {
                input_tokens,
                output_tokens,
                seed,
            } => {
                writeln!(f, "dataset_name: Random")?;
                writeln!(f, "dataset_input_tokens: {input_tokens}")?;
                writeln!(f, "dataset_output_tokens: {output_tokens}")?;
                writeln!(f, "dataset_seed: {seed}")?;
            }
            Dataset::Structured(spec) => {
                writeln!(f, "dataset_name: {}", spec.name())?;
                let json = serde_json::to_string(spec).map_err(|_| fmt::Error)?;
                writeln!(f, "dataset: {json}")?;
            }
        }
        writeln!(
            f,
            "request_rate: {}",
            super::pyfmt::int_or_repr(self.request_rate)
        )?;
        write!(f, "total_requests: {}", self.total_requests)?;
        if let Some(c) = self.max_concurrency {
            write!(f, "\nmax_concurrency: {c}")?;
        }
        Ok(())
    }
}
