//! Ctrl-C for `bench`: the first SIGINT or SIGTERM stops sending and lets the requests in
//! flight finish within the drain time; a second one cuts them off at once. Either way the
//! run returns normally and its file is saved, marked interrupted.

use servebench::driver::StopSignal;

/// Watches SIGINT and SIGTERM until dropped; the signals raise `stop`.
pub struct Watch {
    #[cfg(unix)]
    handle: signal_hook::iterator::Handle,
    #[cfg(unix)]
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The exit status of a command ended by `signal` (128 + its number, as shells report it).
pub fn exit_status(reason: &str) -> u8 {
    match reason {
        "SIGINT" => 130,
        "SIGTERM" => 143,
        _ => 1,
    }
}

/// Start watching; `drain_s` is only for the message.
#[cfg(unix)]
pub fn watch(stop: StopSignal, drain_s: f64) -> std::io::Result<Watch> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let handle = signals.handle();
    let thread = std::thread::Builder::new()
        .name("servebench-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let name = if sig == SIGTERM { "SIGTERM" } else { "SIGINT" };
                if stop.is_stopping() {
                    eprintln!("servebench: {name} again: cutting off the requests in flight");
                    stop.stop_now(name);
                } else {
                    eprintln!(
                        "servebench: {name}: no more requests are sent; waiting up to {drain_s} s \
                         for those in flight, then saving (again to stop at once)"
                    );
                    stop.stop(name);
                }
            }
        })?;
    Ok(Watch {
        handle,
        thread: Some(thread),
    })
}

/// Without Unix signals there is nothing to watch (Ctrl-C ends the process).
#[cfg(not(unix))]
pub fn watch(_stop: StopSignal, _drain_s: f64) -> std::io::Result<Watch> {
    Ok(Watch {})
}

impl Drop for Watch {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            self.handle.close();
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}
