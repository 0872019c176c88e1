//! `--serve ADDR [--speed X] [--config NAME] [--delta content|reasoning|reasoning_content]
//! [--fault SPEC] [--max-connections N] [--api-key KEY]`: the simulator as an OpenAI-compatible streaming server, paced to the wall
//! clock (virtual time = wall time × speed), through [`servebench::http::server`].
//!
//! Like vLLM 0.17 with `--reasoning-parser=qwen3` (which the seed's configurations use), chat
//! output streams as `delta.reasoning` by default: the model spends its whole `max_tokens`
//! budget thinking.

use std::net::SocketAddr;

use servebench::http::server::{self, DeltaField, Fault, ServeOptions};

use crate::sim::{Config, H200Sim};

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
}

/// File descriptors the server needs beside its connections (listener, runtime, stdio).
const SPARE_FDS: u64 = 64;

/// Raise the soft `RLIMIT_NOFILE` to `want` where the hard limit allows (many systems start
/// processes at a soft limit of 1024); returns the soft limit in force afterwards, `None`
/// when it cannot be read.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // `rlim_t` is `u64` on Linux, not everywhere
pub fn raise_fd_limit(want: u64) -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given, which lives on this stack frame.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    let (soft, hard) = (lim.rlim_cur as u64, lim.rlim_max as u64);
    if soft >= want {
        return Some(soft);
    }
    let raised = libc::rlimit {
        rlim_cur: want.min(hard) as libc::rlim_t,
        rlim_max: lim.rlim_max,
    };
    // SAFETY: setrlimit only reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        Some(want.min(hard))
    } else {
        Some(soft)
    }
}

/// Without `getrlimit`: assume the limit fits.
#[cfg(not(unix))]
pub fn raise_fd_limit(want: u64) -> Option<u64> {
    Some(want)
}

/// `max_connections`, lowered to what the file-descriptor limit allows (after trying to
/// raise it), with a warning when it had to be lowered.
pub fn connection_cap(max_connections: usize) -> (usize, Option<String>) {
    let want = max_connections as u64 + SPARE_FDS;
    match raise_fd_limit(want) {
        Some(limit) if limit < want => {
            let cap = limit.saturating_sub(SPARE_FDS).max(1) as usize;
            (
                cap,
                Some(format!(
                    "the open-file limit is {limit} (hard limit reached): at most {cap} \
                     connections instead of {max_connections}; raise it with `ulimit -n`"
                )),
            )
        }
        _ => (max_connections, None),
    }
}

/// Parses a `--delta` value.
pub fn parse_delta(v: &str) -> Result<DeltaField, String> {
    match v {
        "content" => Ok(DeltaField::Content),
        "reasoning" => Ok(DeltaField::Reasoning),
        "reasoning_content" | "reasoning-content" => Ok(DeltaField::ReasoningContent),
        other => Err(format!(
            "--delta: unknown field `{other}` (content, reasoning, reasoning_content)"
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
        ..ServeOptions::default()
    }
}

/// Serve until the process is stopped.
pub fn run(config: Config, args: &ServeArgs) -> Result<(), String> {
    let mut opts = options(&config, args);
    let (cap, warning) = connection_cap(opts.max_connections);
    opts.max_connections = cap;
    if let Some(w) = warning {
        eprintln!("h200_server: {w}");
    }
    // Served warm: the cold-start cost models the seed's first benchmark on a fresh
    // deployment, not a server someone is already talking to.
    let handle = server::spawn(
        H200Sim::new(config.clone()).warmed_up(),
        args.addr,
        args.speed,
        opts.clone(),
    )
    .map_err(|e| e.to_string())?;
    eprintln!(
        "h200_server: serving {} ({} config) on http://{} at {}x speed; chat deltas in `{:?}`; \
         routes /health /metrics /v1/models /v1/completions /v1/chat/completions; \
         at most {} connections{}",
        opts.model,
        config.name,
        handle.local_addr(),
        args.speed,
        opts.delta_field,
        opts.max_connections,
        if opts.api_key.is_some() {
            "; API key required"
        } else {
            ""
        }
    );
    handle.wait();
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Flag mapping only: the served simulator is checked end to end (timing at speed 10,
    //! `servebench bench` against it) in `tests/h200_serve.rs`, which includes these modules.

    use super::*;
    use crate::sim::CONFIG_NAMES;

    #[test]
    fn every_config_serves_its_model_name_and_context_length() {
        let args = ServeArgs {
            addr: "127.0.0.1:0".parse().unwrap(),
            speed: 1.0,
            delta: None,
            fault: None,
            max_connections: 8192,
            api_key: None,
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
                max_connections: 10,
                ..args
            },
        );
        assert_eq!(o.delta_field, DeltaField::Content);
        assert_eq!((o.max_connections, o.api_key.as_deref()), (10, Some("k")));
    }

    #[test]
    fn the_connection_cap_fits_the_fd_limit() {
        // A small cap always fits (and raising towards it never lowers the limit).
        assert_eq!(connection_cap(16), (16, None));
        let (cap, warning) = connection_cap(usize::MAX / 2);
        assert!(
            cap < usize::MAX / 2 && warning.is_some(),
            "{cap} {warning:?}"
        );
    }
}
