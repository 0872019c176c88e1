//! Request bodies encoded ahead of their send time. A long prompt takes milliseconds to
//! encode as JSON (a debug build: about 4 ms for the Mooncake slice's 55 KB mean), and the
//! I/O threads that do it also start every other request's task: encoding at the send time
//! made replayed sends late by tens of milliseconds on a busy machine. [`Preparer`] encodes
//! the upcoming requests on its own thread, in the order they are due, staying at most
//! [`AHEAD_BYTES`] ahead of the sends; a request whose body is not ready (or was never
//! announced) is encoded at its send time as before.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;

use super::client::HttpConfig;
use crate::engine::EngineRequest;

/// Most encoded bytes kept waiting for their send.
pub const AHEAD_BYTES: usize = 64 << 20;

/// What a prepared body was made from, checked at the send (ids are the driver's indices:
/// a body prepared for another run's request of the same id is not used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    prompt_bytes: Option<usize>,
    prompt_tokens: u64,
    max_output_tokens: u64,
    ignore_eos: bool,
}

impl Key {
    fn of(r: &EngineRequest) -> Key {
        Key {
            prompt_bytes: r.prompt.as_ref().map(String::len),
            prompt_tokens: r.prompt_tokens,
            max_output_tokens: r.max_output_tokens,
            ignore_eos: r.ignore_eos,
        }
    }
}

/// A request's encoded body and what it carries.
#[derive(Debug, Clone)]
pub(crate) struct Encoded {
    /// The JSON body.
    pub(crate) body: Bytes,
    /// Response form, inputs and images of the request ([`crate::record::Payload`]).
    pub(crate) payload: crate::record::Payload,
}

#[derive(Default)]
struct State {
    ready: HashMap<u64, (Key, Encoded)>,
    bytes: usize,
    stop: bool,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    room: Condvar,
}

/// A thread encoding the announced requests' bodies ahead of their sends.
pub(crate) struct Preparer {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
}

impl Preparer {
    /// Starts encoding `upcoming` (in the order given) with `encode`.
    pub(crate) fn start(
        config: HttpConfig,
        upcoming: Vec<EngineRequest>,
        encode: fn(&HttpConfig, &EngineRequest) -> Encoded,
    ) -> Preparer {
        let inner = Arc::new(Inner::default());
        let worker = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name("servebench-prepare".into())
            .spawn(move || {
                for r in upcoming {
                    let body = encode(&config, &r);
                    let Ok(mut st) = worker.state.lock() else {
                        return;
                    };
                    while !st.stop && st.bytes + body.body.len() > AHEAD_BYTES && st.bytes > 0 {
                        st = match worker.room.wait(st) {
                            Ok(g) => g,
                            Err(_) => return,
                        };
                    }
                    if st.stop {
                        return;
                    }
                    st.bytes += body.body.len();
                    st.ready.insert(r.id, (Key::of(&r), body));
                }
            })
            .ok();
        Preparer { inner, thread }
    }

    /// The body prepared for `request`, if it is ready and was made from the same request.
    pub(crate) fn take(&self, request: &EngineRequest) -> Option<Encoded> {
        let mut st = self.inner.state.lock().ok()?;
        let (key, body) = st.ready.remove(&request.id)?;
        st.bytes -= body.body.len();
        self.inner.room.notify_one();
        (key == Key::of(request)).then_some(body)
    }
}

impl Drop for Preparer {
    fn drop(&mut self) {
        if let Ok(mut st) = self.inner.state.lock() {
            st.stop = true;
            st.ready.clear();
        }
        self.inner.room.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
