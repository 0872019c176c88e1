//! `--serve ADDR [--speed X] [--config NAME] [--delta content|reasoning|reasoning_content]
//! [--fault SPEC] [--max-connections N] [--api-key KEY]`: the simulator as an OpenAI-compatible streaming server, paced to the wall
//! clock (virtual time = wall time × speed), through [`crate::http::server`].
//!
//! Like vLLM 0.17 with `--reasoning-parser=qwen3` (which the seed's configurations use), chat
//! output streams as `delta.reasoning` by default: the model spends its whole `max_tokens`
//! budget thinking.

use std::net::SocketAddr;

use crate::http::server::{self, DeltaField, Fault, ServeOptions};

use super::engine::{Config, H200Sim};

/// The `--serve` flags.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeArgs {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Virtual seconds per wall second.
    pub speed: f64,
    /// Chat delta field; `None`: `reasoning` when the configuration has a reasoning parser.
    pub delta: Option<DeltaField>,
    /// Fault injection (tests): `500:N`, `cut:N:K`, `error:N:K`.
    pub fault: Option<Fault>,
    /// Most connections open at once (each open stream holds one).
    pub max_connections: usize,
    /// Required API key (`Authorization: Bearer KEY` on `/v1/…`), like `vllm serve --api-key`.
    pub api_key: Option<String>,
    /// Most woken streams waiting to write ([`ServeOptions::handoff_window`]; 0: no limit).
    pub handoff_window: usize,
    /// HTTP worker threads ([`ServeOptions::worker_threads`]).
    pub worker_threads: usize,
    /// Serve as a fresh deployment: not ready (503) for this many virtual seconds, then
    /// the first engine step pays the cold-start cost ([`Config::startup_s`] models the
    /// first). `None`: a warm server, ready at once.
    pub startup_s: Option<f64>,
}

impl Default for ServeArgs {
    /// A warm server on a free loopback port (`127.0.0.1:0`) at speed 1: the configuration's
    /// delta field, no fault, 1024 connections, no API key, the library's handoff window and
    /// worker threads.
    fn default() -> ServeArgs {
        ServeArgs {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            speed: 1.0,
            delta: None,
            fault: None,
            max_connections: 1024,
            api_key: None,
            handoff_window: server::DEFAULT_HANDOFF_WINDOW,
            worker_threads: server::default_worker_threads(),
            startup_s: None,
        }
    }
}

/// Parses a `--delta` value.
pub fn parse_delta(v: &str) -> Result<DeltaField, String> {
    match v {
        "content" => Ok(DeltaField::Content),
        "reasoning" => Ok(DeltaField::Reasoning),
        "reasoning_content" | "reasoning-content" => Ok(DeltaField::ReasoningContent),
        other => Err(format!(
            "unknown delta field `{other}` (content, reasoning, reasoning_content)"
        )),
    }
}

/// The server options for `config`.
pub fn options(config: &Config, args: &ServeArgs) -> ServeOptions {
    let params = config.backend_parameters();
    let reasoning = params.iter().any(|p| p.starts_with("--reasoning-parser"));
    let max_model_len = params
        .iter()
        .find_map(|p| p.strip_prefix("--max-model-len="))
        .and_then(|v| v.parse().ok());
    ServeOptions {
        model: config.model().to_string(),
        delta_field: args.delta.unwrap_or(if reasoning {
            DeltaField::Reasoning
        } else {
            DeltaField::Content
        }),
        fault: args.fault,
        max_model_len,
        max_connections: args.max_connections,
        api_key: args.api_key.clone(),
        handoff_window: args.handoff_window,
        worker_threads: args.worker_threads,
        ready_after: args
            .startup_s
            .map(|s| std::time::Duration::from_secs_f64((s / args.speed).max(0.0)))
            .unwrap_or_default(),
        ..ServeOptions::default()
    }
}

/// `sim` as `args` serve it: warm (a server someone is already talking to: the cold-start
/// cost models the seed's first benchmark on a fresh deployment), or cold where
/// [`ServeArgs::startup_s`] starts it as a fresh deployment.
pub fn engine(sim: H200Sim, args: &ServeArgs) -> H200Sim {
    if args.startup_s.is_some() {
        sim
    } else {
        sim.warmed_up()
    }
}

/// Starts serving `config` with `args` (warm, or cold with [`ServeArgs::startup_s`]); the handle stops the server when dropped or
/// waited on. Raising the process's open-file limit to fit `args.max_connections` is the
/// caller's job (the example does it).
pub fn spawn(config: &Config, args: &ServeArgs) -> Result<server::ServerHandle, String> {
    let opts = options(config, args);
    server::spawn(
        engine(H200Sim::new(config.clone()), args),
        args.addr,
        args.speed,
        opts,
    )
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    //! Flag mapping only: the served simulator is checked end to end (timing at speed 10,
    //! `servebench bench` against it) in `tests/h200_serve.rs`, which includes these modules.

    use super::super::engine::CONFIG_NAMES;
    use super::*;

    #[test]
    fn every_config_serves_its_model_name_and_context_length() {
        let args = ServeArgs {
            addr: "127.0.0.1:0".parse().unwrap(),
            speed: 1.0,
            delta: None,
            fault: None,
            max_connections: 8192,
            api_key: None,
            handoff_window: crate::http::server::DEFAULT_HANDOFF_WINDOW,
            worker_threads: crate::http::server::default_worker_threads(),
            startup_s: None,
        };
        for name in CONFIG_NAMES {
            let config = Config::named(name).unwrap();
            let o = options(&config, &args);
            let want = if name == "baseline" {
                "Qwen/Qwen3.5-35B-A3B"
            } else {
                "Qwen/Qwen3.5-35B-A3B-FP8"
            };
            assert_eq!(o.model, want, "{name}");
            assert_eq!(o.max_model_len, Some(32768), "{name}");
            assert_eq!(o.delta_field, DeltaField::Reasoning, "{name}");
            assert_eq!((o.max_connections, o.api_key.as_deref()), (8192, None));
        }
        let o = options(
            &Config::named("baseline").unwrap(),
            &ServeArgs {
                delta: Some(DeltaField::Content),
                api_key: Some("k".into()),
                handoff_window: crate::http::server::DEFAULT_HANDOFF_WINDOW,
                worker_threads: crate::http::server::default_worker_threads(),
                startup_s: None,
                max_connections: 10,
                ..args
            },
        );
        assert_eq!(o.delta_field, DeltaField::Content);
        assert_eq!((o.max_connections, o.api_key.as_deref()), (10, Some("k")));
    }
}
