//! The inbox where the I/O tasks leave their stamped events for [`Engine::advance`],
//! waking the driver thread only on terminal events.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

#[cfg(doc)]
use crate::engine::Engine;
use crate::engine::EngineEvent;

/// Where the I/O tasks leave their stamped events. Only terminal events wake the thread
/// waiting in [`Engine::advance`]; chunks wait here (their timestamps are already taken), so
/// the driver thread wakes once per request rather than once per token.
#[derive(Default)]
pub(super) struct Inbox {
    pub(super) state: Mutex<InboxState>,
    pub(super) wake: Condvar,
}

#[derive(Default)]
pub(super) struct InboxState {
    pub(super) events: Vec<EngineEvent>,
    pub(super) terminals: usize,
}

impl Inbox {
    pub(super) fn push(&self, batch: impl IntoIterator<Item = EngineEvent>) {
        if let Ok(mut st) = self.state.lock() {
            let mut wake = false;
            for ev in batch {
                wake |= ev.is_terminal();
                st.terminals += usize::from(ev.is_terminal());
                st.events.push(ev);
            }
            if wake {
                self.wake.notify_one();
            }
        }
    }

    /// Wait until a terminal event is in (or `timeout`, `None`: no limit), then move every
    /// event into `out`. `false` if the lock is poisoned.
    pub(super) fn take(&self, timeout: Option<Duration>, out: &mut VecDeque<EngineEvent>) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        let start = Instant::now();
        while st.terminals == 0 {
            match timeout {
                None => match self.wake.wait(st) {
                    Ok(g) => st = g,
                    Err(_) => return false,
                },
                Some(t) => {
                    let left = t.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    match self.wake.wait_timeout(st, left) {
                        Ok((g, _)) => st = g,
                        Err(_) => return false,
                    }
                }
            }
        }
        st.terminals = 0;
        out.extend(st.events.drain(..));
        true
    }
}
