//! A collector's record sink: where each finished record goes before the collector keeps
//! it (a soak streams whole records to disk and keeps a slim copy).

use std::sync::{Arc, Mutex};

use crate::record::RequestRecord;

/// Where a collector hands each finished record before it keeps it (a soak streams whole
/// records to disk): the sink takes the record and returns what the collector keeps — a
/// slimmer copy, or `None`. Cloning shares the one sink.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use servebench::collector::{Collector, ManualClock, RecordSink};
/// use servebench::engine::Usage;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let s = seen.clone();
/// let c = Collector::with_clock(ManualClock::new())
///     .with_sink(RecordSink::new(move |r| { s.lock().unwrap().push(r.id); None }));
/// let mut h = c.begin_at(Duration::ZERO);
/// h.chunk_at(Duration::from_millis(5), 1);
/// h.finish_at(Duration::from_millis(5), Usage::default());
/// assert_eq!(*seen.lock().unwrap(), [0]);
/// assert!(c.into_records().is_empty()); // handed on, not kept
/// ```
#[derive(Clone)]
pub struct RecordSink(Arc<Mutex<dyn FnMut(RequestRecord) -> Option<RequestRecord> + Send>>);

impl RecordSink {
    /// A sink calling `f` with each finished record; `f` returns what the collector keeps.
    pub fn new(f: impl FnMut(RequestRecord) -> Option<RequestRecord> + Send + 'static) -> Self {
        RecordSink(Arc::new(Mutex::new(f)))
    }

    /// Hands `record` to the sink; what to keep.
    pub fn take(&self, record: RequestRecord) -> Option<RequestRecord> {
        let mut f = match self.0.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(record)
    }
}

impl std::fmt::Debug for RecordSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordSink")
    }
}

impl PartialEq for RecordSink {
    /// The same sink.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
