//! `--serve`: the process side of serving the simulator — raising the open-file limit to fit
//! `--max-connections` (this needs `libc`, which the `#![forbid(unsafe_code)]` library does
//! not use) and serving until the process is stopped. The server itself is
//! [`servebench::sim::serve`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use servebench::http::{server, timeline};
use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::{Config, H200Sim};

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

/// What answers the requests.
pub enum Engine {
    /// The simulator; with a noise seed, varying as a real server does
    /// (`servebench::sim::NoiseModel`, its documented defaults).
    Simulator {
        /// The noise model's seed.
        noise_seed: Option<u64>,
    },
    /// Nothing: every answer's tokens at once (`servebench::engine::FixedEngine` with no
    /// time to first token and none between tokens).
    ZeroCompute,
}

/// Serve until the process is stopped. With `timeline`, the server records every request
/// (`GET /timeline` serves them) and, on SIGTERM or SIGINT, writes them to that file
/// (atomically, JSON Lines; see `servebench::http::timeline`) before exiting.
/// `engine` says what answers (see [`Engine`]).
/// `tune` sets what the flags add to the library's options (a reasoning phase, LoRA
/// adapters).
pub fn run(
    config: Config,
    args: &ServeArgs,
    timeline: Option<&Path>,
    engine: Engine,
    tune: impl FnOnce(&mut server::ServeOptions),
) -> Result<(), String> {
    let mut args = args.clone();
    let (cap, warning) = connection_cap(args.max_connections);
    args.max_connections = cap;
    if let Some(w) = warning {
        eprintln!("h200_server: {w}");
    }
    let mut opts = serve::options(&config, &args);
    opts.record_timeline = timeline.is_some();
    tune(&mut opts);
    // Warm, or cold with --cold, as `serve::spawn` serves it.
    let handle = match engine {
        Engine::ZeroCompute => server::spawn(
            servebench::engine::FixedEngine::new(0, 0, 1),
            args.addr,
            args.speed,
            opts.clone(),
        ),
        Engine::Simulator { noise_seed } => server::spawn(
            serve::engine(
                match noise_seed {
                    Some(seed) => {
                        let mut params = servebench::sim::Params::for_config(&config);
                        params.noise = Some(servebench::sim::NoiseModel::typical(seed));
                        H200Sim::with_params(config.clone(), params)
                    }
                    None => H200Sim::new(config.clone()),
                },
                &args,
            ),
            args.addr,
            args.speed,
            opts.clone(),
        ),
    }
    .map_err(|e| e.to_string())?;
    eprintln!(
        "h200_server: serving {} ({} config) on http://{} at {}x speed; chat deltas in `{:?}`; \
         routes /health /metrics /v1/models /v1/completions /v1/chat/completions{}; \
         at most {} connections{}",
        opts.model,
        config.name,
        handle.local_addr(),
        args.speed,
        opts.delta_field,
        if timeline.is_some() { " /timeline" } else { "" },
        opts.max_connections,
        if opts.api_key.is_some() {
            "; API key required"
        } else {
            ""
        }
    );
    let Some(path) = timeline else {
        handle.wait();
        return Ok(());
    };
    let stop = stop_flag()?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let entries = timeline::entries(&handle.timeline(), handle.origin(), handle.speed());
    handle.shutdown();
    timeline::write_file(path, &entries).map_err(|e| format!("--timeline: {e}"))?;
    eprintln!(
        "h200_server: wrote {} requests to {}",
        entries.len(),
        path.display()
    );
    Ok(())
}

/// A flag raised by SIGTERM or SIGINT.
#[cfg(unix)]
fn stop_flag() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| format!("cannot handle signal {sig}: {e}"))?;
    }
    Ok(stop)
}

/// Without Unix signals the timeline cannot be written on a stop.
#[cfg(not(unix))]
fn stop_flag() -> Result<Arc<AtomicBool>, String> {
    Err("--timeline needs Unix signals (SIGTERM/SIGINT); use GET /timeline".into())
}

#[cfg(test)]
mod tests {
    use super::*;

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
