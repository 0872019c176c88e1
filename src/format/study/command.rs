//! The study document's Serving Command: the recommended configuration as a command that
//! runs when pasted (`vllm serve MODEL` + flags for the simulator, the engine's own launch
//! command for a command engine).

use crate::format::gpustack::serving_command;
use crate::format::shell;
use crate::study::file::{EngineKind, StudyFile};
use crate::study::journal::Configuration;

/// The recommended command: `vllm serve MODEL` + flags for the simulator (what it models),
/// the engine's own launch command for a command engine, every placeholder filled so that
/// it runs when pasted: `{model}`, `{host}` and `{port}` with the study file's values
/// ([`DEFAULT_SERVE_PORT`] when the study took a free port per launch, `port = 0`), and
/// `{api_key}` with a reference to the variable `api_key_env` names (never its value).
/// The port a pasted serving command listens on when the study file's is 0 (vLLM's
/// default).
pub const DEFAULT_SERVE_PORT: u16 = 8000;

pub(super) fn serve_command(study: &StudyFile, c: &Configuration) -> String {
    let spec = study.engines.iter().find(|e| e.name == c.engine);
    match spec {
        Some(e) if e.kind == EngineKind::Command => {
            // `port = 0`: each launch took a free port; vLLM's default stands in for it.
            let port = if e.port == 0 {
                DEFAULT_SERVE_PORT.to_string()
            } else {
                e.port.to_string()
            };
            let key = e
                .api_key_env
                .as_ref()
                .map(|v| format!("${{{v}}}"))
                .unwrap_or_default();
            // The program and what precedes `{flags}` on the first line, then one flag
            // (or later argument) per line, as the seed prints a command: each word quoted
            // for a shell, a key's value redacted.
            let mut argv: Vec<String> = Vec::new();
            let mut head = None;
            for arg in &e.command {
                if arg == "{flags}" {
                    head.get_or_insert(argv.len());
                    argv.extend(c.flags.iter().cloned());
                } else {
                    argv.push(
                        arg.replace("{model}", &c.model)
                            .replace("{host}", &e.host)
                            .replace("{port}", &port)
                            .replace("{api_key}", &key),
                    );
                }
            }
            let argv = crate::secret::redact_argv(&argv);
            let head = head.unwrap_or(argv.len()).min(argv.len());
            let (first, rest) = argv.split_at(head);
            let first: Vec<String> = first
                .iter()
                .map(|a| shell::quote_expanding(a).into_owned())
                .collect();
            std::iter::once(first.join(" "))
                .chain(
                    rest.iter()
                        .map(|f| format!("    {}", shell::quote_expanding(f))),
                )
                .collect::<Vec<_>>()
                .join(" \\\n")
        }
        _ => serving_command(&engine_label(study, c), &c.model, &c.flags),
    }
}

/// The engine's name for configuration `c` (its study-file name, else the journal's).
fn engine_label(study: &StudyFile, c: &Configuration) -> String {
    study
        .engines
        .iter()
        .find(|e| e.name == c.engine)
        .map(|e| e.name.clone())
        .unwrap_or_else(|| c.engine.clone())
}
