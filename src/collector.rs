//! The [`Collector`]: records what a load generator observes — per request, the send time,
//! every streamed chunk and the outcome — from any number of threads or async tasks, and a
//! [`Clock`] to stamp it with ([`SystemClock`] for real runs, [`ManualClock`] for virtual-time
//! simulations and tests).
//!
//! # Hot path
//!
//! A request is a [`RequestHandle`] owned by the task that drives it. [`RequestHandle::chunk`]
//! reads the clock and pushes onto the handle's own `Vec`: no lock, no shared write, no
//! allocation beyond the `Vec`'s amortised growth. The live token counter of the request's
//! shard (one of 64 cache-line-padded shards, `id % 64`) is bumped with one relaxed atomic
//! add every 32 chunks and when the request ends, so [`Collector::snapshot`]'s
//! `output_tokens` trails by fewer than 32 chunks per open request. Only ending a request
//! takes a lock — the mutex of its shard — so contention stays negligible with hundreds of
//! concurrent streams.
//!
//! # Never losing a request
//!
//! A handle dropped without [`finish`](RequestHandle::finish) /
//! [`fail`](RequestHandle::fail) / [`cancel`](RequestHandle::cancel) records an
//! [`Outcome::Incomplete`] request at the time of the drop (a panicking task, a timeout that
//! dropped the future, …).
//!
//! # Huge runs
//!
//! With [`CollectorOptions::histograms`] every finished request also feeds a per-shard
//! [`Accumulator`] — the collector's second type parameter, e.g.
//! `servebench::metrics::VllmHistograms` (bounded memory, mergeable across collectors and
//! hosts); the collector knows no metric definition itself — and with
//! `keep_records: false` the raw records are dropped after that, so memory stays bounded
//! whatever the number of requests.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use servebench::collector::{Collector, ManualClock};
//! use servebench::engine::Usage;
//!
//! let clock = Arc::new(ManualClock::new());
//! let collector = Collector::with_clock(clock.clone());
//! let mut req = collector.begin();
//! clock.advance(Duration::from_millis(40));
//! req.chunk(1);
//! clock.advance(Duration::from_millis(10));
//! req.chunk(2);
//! req.finish(Usage { prompt_tokens: Some(100), completion_tokens: Some(3) });
//! let dropped = collector.begin(); // never finished …
//! drop(dropped);                    // … still recorded, as incomplete
//!
//! let snap = collector.snapshot();
//! assert_eq!((snap.succeeded, snap.incomplete, snap.output_tokens), (1, 1, 3));
//! let records = collector.records();
//! assert_eq!(records[0].ttft(), Some(Duration::from_millis(40)));
//! assert!(!records[1].outcome.is_success());
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::record::{Accumulator, Chunk, ErrorKind, Outcome, Payload, RequestRecord, Usage};

mod clock;
mod sink;
mod split;
pub use clock::{Clock, ManualClock, SystemClock};
pub use sink::RecordSink;

/// What a collector keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectorOptions {
    /// Keep every finished request's raw record (default `true`).
    pub keep_records: bool,
    /// Also feed the collector's [`Accumulator`] (default `false`).
    pub histograms: bool,
}

impl Default for CollectorOptions {
    fn default() -> Self {
        CollectorOptions {
            keep_records: true,
            histograms: false,
        }
    }
}

/// Live counters for progress displays ([`Collector::snapshot`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectorSnapshot {
    /// Clock reading when the snapshot was taken.
    pub elapsed: Duration,
    /// Requests begun.
    pub started: u64,
    /// Requests begun and not yet ended.
    pub in_flight: u64,
    /// Requests finished successfully.
    pub succeeded: u64,
    /// Requests that failed with an error.
    pub failed: u64,
    /// Requests cancelled, dropped unfinished, or cut off.
    pub incomplete: u64,
    /// Output tokens received so far (sum of chunk token counts; open requests publish
    /// theirs every 32 chunks, so this trails by fewer than 32 chunks per open request).
    pub output_tokens: u64,
    /// Chunks of ended requests.
    pub chunks: u64,
}

/// Everything a collector holds, as plain data: ship it to another process or host
/// (serde) and [`Collector::absorb`] it there to merge runs from several load machines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectorExport<A = ()> {
    /// Counters at export time (`elapsed` is the exporting clock's reading).
    pub snapshot: CollectorSnapshot,
    /// Raw records, sorted by id (empty when records were not kept).
    pub records: Vec<RequestRecord>,
    /// The accumulator's state, when the collector kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<A>,
}

const SHARDS: usize = 64;

#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard<A> {
    started: AtomicU64,
    succeeded: AtomicU64,
    failed: AtomicU64,
    incomplete: AtomicU64,
    tokens: AtomicU64,
    chunks: AtomicU64,
    records: Mutex<Vec<RequestRecord>>,
    histograms: Mutex<Option<A>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a shard lock cannot leave a half-written Vec or histogram
    // behind (pushes and records are single operations), so a poisoned lock is usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Collects [`RequestRecord`]s from any number of threads or tasks. `Send + Sync`: share it
/// as `&Collector` or `Arc<Collector>`. See the [module docs](self).
#[derive(Debug)]
pub struct Collector<C: Clock = SystemClock, A: Accumulator = ()> {
    clock: C,
    options: CollectorOptions,
    next_id: AtomicU64,
    shards: Box<[Shard<A>]>,
    sink: Option<RecordSink>,
}

impl Collector<SystemClock> {
    /// A collector on the system clock, whose time zero is now; keeps raw records.
    pub fn new() -> Self {
        Collector::with_clock(SystemClock::new())
    }
}

impl Default for Collector<SystemClock> {
    fn default() -> Self {
        Collector::new()
    }
}

impl<C: Clock> Collector<C> {
    /// A collector stamping with `clock`; keeps raw records.
    pub fn with_clock(clock: C) -> Self {
        Collector::with_options(clock, CollectorOptions::default())
    }

    /// A collector stamping with `clock`, keeping what `options` says (no accumulator:
    /// see [`Collector::with_accumulator`]).
    pub fn with_options(clock: C, options: CollectorOptions) -> Self {
        Collector::with_accumulator(clock, options)
    }
}

impl<C: Clock, A: Accumulator + Clone> Collector<C, A> {
    /// A collector stamping with `clock`, keeping what `options` says; with
    /// [`CollectorOptions::histograms`] every finished request also feeds an `A`
    /// (`Collector::<_, servebench::metrics::VllmHistograms>::with_accumulator(…)`).
    pub fn with_accumulator(clock: C, options: CollectorOptions) -> Self {
        // One more shard than `shard(id)` reaches: absorbed exports' counters live there,
        // where live requests never add to them.
        let shards: Vec<Shard<A>> = (0..=SHARDS)
            .map(|_| Shard {
                histograms: Mutex::new(options.histograms.then(A::default)),
                ..Shard::default()
            })
            .collect();
        Collector {
            clock,
            options,
            next_id: AtomicU64::new(0),
            shards: shards.into_boxed_slice(),
            sink: None,
        }
    }

    /// This collector, handing each finished record to `sink` first and keeping what it
    /// returns ([`RecordSink`]).
    pub fn with_sink(mut self, sink: RecordSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The collector's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The current time on the collector's clock.
    #[inline]
    pub fn now(&self) -> Duration {
        self.clock.now()
    }

    /// What this collector keeps.
    pub fn options(&self) -> CollectorOptions {
        self.options
    }

    #[inline]
    fn shard(&self, id: u64) -> &Shard<A> {
        &self.shards[(id % SHARDS as u64) as usize]
    }

    /// The shard holding absorbed exports (the last one, past those `shard` reaches).
    fn absorbed_shard(&self) -> &Shard<A> {
        &self.shards[SHARDS]
    }

    /// Begin a request now, with the next free id (0, 1, 2, … in `begin` order).
    #[inline]
    pub fn begin(&self) -> RequestHandle<'_, C, A> {
        let at = self.clock.now();
        self.begin_at(at)
    }

    /// Begin a request sent at `sent_at` (for drivers that already have timestamps).
    pub fn begin_at(&self, sent_at: Duration) -> RequestHandle<'_, C, A> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.begin_with_id(id, sent_at)
    }

    /// Begin a request with the caller's own id (unique within the run; do not mix with
    /// [`Collector::begin`]'s automatic ids).
    pub fn begin_with_id(&self, id: u64, sent_at: Duration) -> RequestHandle<'_, C, A> {
        let shard = self.shard(id);
        shard.started.fetch_add(1, Ordering::Relaxed);
        RequestHandle {
            collector: self,
            shard,
            record: Some(RequestRecord::new(id, sent_at)),
            pending_tokens: 0,
            pending_chunks: 0,
        }
    }

    /// Store an already-complete record (e.g. one replayed from a file); it counts as
    /// begun and ended.
    pub fn push_record(&self, record: RequestRecord) {
        let shard = self.shard(record.id);
        shard.started.fetch_add(1, Ordering::Relaxed);
        shard
            .tokens
            .fetch_add(record.client_output_tokens(), Ordering::Relaxed);
        self.store(shard, record);
    }

    fn store(&self, shard: &Shard<A>, record: RequestRecord) {
        let counter = match record.outcome {
            Outcome::Success => &shard.succeeded,
            Outcome::Error { .. } => &shard.failed,
            Outcome::Incomplete { .. } => &shard.incomplete,
        };
        shard
            .chunks
            .fetch_add(record.chunks.len() as u64, Ordering::Relaxed);
        if self.options.histograms {
            if let Some(h) = lock(&shard.histograms).as_mut() {
                h.record(&record);
            }
        }
        let kept = match &self.sink {
            Some(sink) => sink.take(record),
            None => Some(record),
        };
        if let (true, Some(record)) = (self.options.keep_records, kept) {
            lock(&shard.records).push(record);
        }
        // Counted last, so a snapshot never shows an ended request that is not stored yet.
        counter.fetch_add(1, Ordering::Release);
    }

    /// Live counters (cheap: no lock; ~64 atomic loads per field).
    pub fn snapshot(&self) -> CollectorSnapshot {
        let mut s = CollectorSnapshot {
            elapsed: self.clock.now(),
            ..CollectorSnapshot::default()
        };
        for sh in self.shards.iter() {
            // Ended counters first, then started: started is never read smaller than ended.
            let ok = sh.succeeded.load(Ordering::Acquire);
            let failed = sh.failed.load(Ordering::Acquire);
            let incomplete = sh.incomplete.load(Ordering::Acquire);
            let chunks = sh.chunks.load(Ordering::Relaxed);
            let tokens = sh.tokens.load(Ordering::Relaxed);
            let started = sh.started.load(Ordering::Relaxed);
            // Saturating: absorbed exports can carry any counts.
            s.succeeded = s.succeeded.saturating_add(ok);
            s.failed = s.failed.saturating_add(failed);
            s.incomplete = s.incomplete.saturating_add(incomplete);
            s.chunks = s.chunks.saturating_add(chunks);
            s.output_tokens = s.output_tokens.saturating_add(tokens);
            s.started = s.started.saturating_add(started);
            let ended = ok.saturating_add(failed).saturating_add(incomplete);
            s.in_flight = s.in_flight.saturating_add(started.saturating_sub(ended));
        }
        s
    }

    /// Copies of the ended requests' records, sorted by id.
    pub fn records(&self) -> Vec<RequestRecord> {
        let mut out = Vec::new();
        for sh in self.shards.iter() {
            out.extend(lock(&sh.records).iter().cloned());
        }
        out.sort_by_key(|r| r.id);
        out
    }

    /// Move the ended requests' records out (sorted by id), leaving the collector's
    /// storage empty — for flushing long runs to disk. Counters are unchanged.
    pub fn take_records(&self) -> Vec<RequestRecord> {
        let mut out = Vec::new();
        for sh in self.shards.iter() {
            out.append(&mut lock(&sh.records));
        }
        out.sort_by_key(|r| r.id);
        out
    }

    /// Consume the collector and return its records, sorted by id. (Every handle borrows
    /// the collector, so none can still be open.)
    pub fn into_records(self) -> Vec<RequestRecord> {
        self.take_records()
    }

    /// The merged accumulators of all shards, when [`CollectorOptions::histograms`] is on.
    pub fn histograms(&self) -> Result<Option<A>, A::Error> {
        if !self.options.histograms {
            return Ok(None);
        }
        let mut total = A::default();
        for sh in self.shards.iter() {
            if let Some(h) = lock(&sh.histograms).as_ref() {
                total.merge(h)?;
            }
        }
        Ok(Some(total))
    }

    /// Everything this collector holds, as plain data (see [`CollectorExport`]).
    pub fn export(&self) -> Result<CollectorExport<A>, A::Error> {
        Ok(CollectorExport {
            snapshot: self.snapshot(),
            records: self.records(),
            histograms: self.histograms()?,
        })
    }

    /// Merge another collector's export into this one: its records, counters and (when
    /// both keep them) histograms. Records keep their ids; give each load machine its own
    /// id range ([`Collector::begin_with_id`]) when merging runs.
    pub fn absorb(&self, other: CollectorExport<A>) -> Result<(), A::Error> {
        let sh = self.absorbed_shard();
        let s = other.snapshot;
        // Histograms first: when they do not merge, no counter has moved yet.
        if let (true, Some(h)) = (self.options.histograms, other.histograms.as_ref()) {
            if let Some(mine) = lock(&sh.histograms).as_mut() {
                mine.merge(h)?;
            }
        }
        add_saturating(&sh.started, s.started, Ordering::Relaxed);
        add_saturating(&sh.tokens, s.output_tokens, Ordering::Relaxed);
        add_saturating(&sh.chunks, s.chunks, Ordering::Relaxed);
        if self.options.keep_records {
            lock(&sh.records).extend(other.records);
        }
        add_saturating(&sh.succeeded, s.succeeded, Ordering::Release);
        add_saturating(&sh.failed, s.failed, Ordering::Release);
        add_saturating(&sh.incomplete, s.incomplete, Ordering::Release);
        Ok(())
    }
}

/// `counter += v`, saturating at `u64::MAX` (for absorbed counts, which can be anything).
fn add_saturating(counter: &AtomicU64, v: u64, order: Ordering) {
    let _ = counter.fetch_update(order, Ordering::Relaxed, |c| Some(c.saturating_add(v)));
}

/// One request in progress. Created by [`Collector::begin`]; ended by
/// [`finish`](RequestHandle::finish), [`fail`](RequestHandle::fail),
/// [`cancel`](RequestHandle::cancel) — or by being dropped, which records it as incomplete.
#[derive(Debug)]
pub struct RequestHandle<'c, C: Clock = SystemClock, A: Accumulator + Clone = ()> {
    collector: &'c Collector<C, A>,
    shard: &'c Shard<A>,
    /// `None` once ended.
    record: Option<RequestRecord>,
    /// Tokens not yet added to the shard's live counter.
    pending_tokens: u64,
    /// Chunks since the last flush of `pending_tokens`.
    pending_chunks: u32,
}

/// Chunks between two updates of a shard's live token counter.
const TOKEN_FLUSH_CHUNKS: u32 = 32;

impl<C: Clock, A: Accumulator + Clone> RequestHandle<'_, C, A> {
    /// The request's id.
    pub fn id(&self) -> u64 {
        self.record.as_ref().map_or(0, |r| r.id)
    }

    /// The record so far.
    pub fn record(&self) -> Option<&RequestRecord> {
        self.record.as_ref()
    }

    /// Set when the load profile scheduled the request (before client-side queueing).
    pub fn set_scheduled_at(&mut self, at: Duration) {
        if let Some(r) = self.record.as_mut() {
            r.scheduled_at = Some(at);
        }
    }

    /// Correct the send time (an engine that stamps the actual send, e.g. after waiting for
    /// a connection, reports it after the driver began the request).
    pub fn set_sent_at(&mut self, at: Duration) {
        if let Some(r) = self.record.as_mut() {
            r.sent_at = at;
        }
    }

    /// Set the prompt length as the client counted it.
    pub fn set_prompt_tokens(&mut self, tokens: u64) {
        if let Some(r) = self.record.as_mut() {
            r.prompt_tokens = Some(tokens);
        }
    }

    /// Set the conversation and turn the request belongs to (multi-turn workloads).
    pub fn set_turn(&mut self, turn: crate::record::TurnRef) {
        if let Some(r) = self.record.as_mut() {
            r.turn = Some(turn);
        }
    }

    /// Record what the request carried and how its answer comes ([`Payload`]): a request to
    /// a pooling endpoint (embeddings, rerank, …) is answered with one JSON body, so it is
    /// recorded as [`ResponseForm::Whole`](crate::record::ResponseForm::Whole) and finished without chunks — its latency is its
    /// only timing, and no TTFT, TPOT or ITL is computed for it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use servebench::collector::{Collector, ManualClock};
    /// use servebench::engine::Usage;
    /// use servebench::record::{Payload, ResponseForm};
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let collector = Collector::with_clock(clock.clone());
    /// let mut req = collector.begin();
    /// // An embeddings request of 8 texts …
    /// req.set_payload(Payload { response: ResponseForm::Whole, inputs: Some(8), images: None });
    /// clock.advance(Duration::from_millis(35));
    /// // … answered with one body after 35 ms.
    /// req.finish(Usage { prompt_tokens: Some(1024), completion_tokens: None });
    /// let r = &collector.records()[0];
    /// assert_eq!(r.latency(), Some(Duration::from_millis(35)));
    /// assert_eq!((r.response, r.inputs, r.ttft()), (ResponseForm::Whole, Some(8), None));
    /// ```
    pub fn set_payload(&mut self, payload: Payload) {
        if let Some(r) = self.record.as_mut() {
            r.response = payload.response;
            r.inputs = payload.inputs;
            r.images = payload.images;
        }
    }

    /// Record what was checked in the answer (tool calls, structured output).
    pub fn set_checks(&mut self, checks: crate::record::OutputChecks) {
        if let Some(r) = self.record.as_mut() {
            r.checks = Some(checks);
        }
    }

    /// Pre-allocate room for `n` chunks (avoids regrowing the Vec on the hot path).
    pub fn reserve_chunks(&mut self, n: usize) {
        if let Some(r) = self.record.as_mut() {
            r.chunks.reserve(n);
        }
    }

    /// A chunk carrying `tokens` tokens arrived now.
    #[inline]
    pub fn chunk(&mut self, tokens: u32) {
        let at = self.collector.clock.now();
        self.chunk_at(at, tokens);
    }

    /// A chunk carrying `tokens` tokens arrived at `at`.
    #[inline]
    pub fn chunk_at(&mut self, at: Duration, tokens: u32) {
        if let Some(r) = self.record.as_mut() {
            r.chunks.push(Chunk { at, tokens });
        }
        self.pending_tokens += u64::from(tokens);
        self.pending_chunks += 1;
        if self.pending_chunks == TOKEN_FLUSH_CHUNKS {
            self.flush_tokens();
        }
    }

    #[inline]
    fn flush_tokens(&mut self) {
        self.shard
            .tokens
            .fetch_add(self.pending_tokens, Ordering::Relaxed);
        self.pending_tokens = 0;
        self.pending_chunks = 0;
    }

    /// The response completed now; `usage` is what the server reported (if anything).
    pub fn finish(self, usage: Usage) {
        let at = self.collector.clock.now();
        self.finish_at(at, usage);
    }

    /// The response completed at `at`.
    pub fn finish_at(mut self, at: Duration, usage: Usage) {
        self.end(at, Outcome::Success, Some(usage));
    }

    /// The request failed now.
    pub fn fail(self, kind: ErrorKind, message: impl Into<String>) {
        let at = self.collector.clock.now();
        self.fail_at(at, kind, message);
    }

    /// The request failed at `at`.
    pub fn fail_at(mut self, at: Duration, kind: ErrorKind, message: impl Into<String>) {
        let outcome = Outcome::Error {
            kind,
            message: message.into(),
        };
        self.end(at, outcome, None);
    }

    /// The request was abandoned now (cancelled, cut off by the end of the run).
    pub fn cancel(self, reason: impl Into<String>) {
        let at = self.collector.clock.now();
        self.cancel_at(at, reason);
    }

    /// The request was abandoned at `at`.
    pub fn cancel_at(mut self, at: Duration, reason: impl Into<String>) {
        let outcome = Outcome::Incomplete {
            reason: reason.into(),
        };
        self.end(at, outcome, None);
    }

    fn end(&mut self, at: Duration, outcome: Outcome, usage: Option<Usage>) {
        self.flush_tokens();
        if let Some(mut r) = self.record.take() {
            r.ended_at = Some(at);
            r.outcome = outcome;
            if let Some(u) = usage {
                r.usage_prompt_tokens = u.prompt_tokens;
                r.usage_output_tokens = u.completion_tokens;
            }
            self.collector.store(self.shard, r);
        }
    }
}

impl<C: Clock, A: Accumulator + Clone> Drop for RequestHandle<'_, C, A> {
    fn drop(&mut self) {
        if self.record.is_some() {
            let at = self.collector.clock.now();
            let outcome = Outcome::Incomplete {
                reason: "request handle dropped before the request ended".into(),
            };
            self.end(at, outcome, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::VllmHistograms;
    use std::sync::Arc;

    /// An export read from another process (or a file) can hold any counts: absorbing
    /// u64::MAX counters beside live requests must saturate, not overflow.
    #[test]
    fn absorbing_huge_counters_saturates() {
        let c = Collector::with_clock(ManualClock::new());
        let mut export = CollectorExport::default();
        export.snapshot.started = u64::MAX;
        export.snapshot.succeeded = u64::MAX;
        export.snapshot.output_tokens = u64::MAX;
        c.absorb(export.clone()).unwrap();
        c.absorb(export).unwrap();
        // Live requests land in other shards than the absorbed counters.
        for _ in 0..3 {
            let mut h = c.begin();
            h.chunk(2);
            h.finish(Usage::default());
        }
        let s = c.snapshot();
        assert_eq!(s.started, u64::MAX);
        assert_eq!(s.succeeded, u64::MAX);
        assert_eq!(s.output_tokens, u64::MAX);
        assert_eq!(s.in_flight, 0);
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn collector_is_send_sync_with_both_clocks() {
        assert_send_sync::<Collector>();
        assert_send_sync::<Collector<Arc<ManualClock>>>();
        assert_send_sync::<Arc<Collector>>();
    }

    #[test]
    fn explicit_times_and_outcomes() {
        let c = Collector::with_clock(ManualClock::new());
        let ms = Duration::from_millis;
        let mut a = c.begin_at(ms(5));
        a.set_prompt_tokens(7);
        a.chunk_at(ms(20), 1);
        a.chunk_at(ms(30), 4);
        a.finish_at(
            ms(31),
            Usage {
                prompt_tokens: Some(8),
                completion_tokens: Some(5),
            },
        );
        let mut b = c.begin_at(ms(6));
        b.chunk_at(ms(25), 1);
        b.fail_at(ms(26), ErrorKind::StreamCut, "peer closed");
        let d = c.begin_at(ms(7));
        d.cancel_at(ms(50), "end of run");
        let s = c.snapshot();
        assert_eq!(
            (s.started, s.in_flight, s.succeeded, s.failed, s.incomplete),
            (3, 0, 1, 1, 1)
        );
        assert_eq!((s.output_tokens, s.chunks), (6, 3));
        let r = c.records();
        assert_eq!(r.iter().map(|r| r.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(r[0].ended_at, Some(ms(31)));
        assert_eq!(r[0].input_tokens(), Some(8));
        assert_eq!(r[0].output_tokens(), 5);
        assert_eq!(r[0].prompt_tokens, Some(7));
        assert!(matches!(
            r[1].outcome,
            Outcome::Error {
                kind: ErrorKind::StreamCut,
                ..
            }
        ));
        assert_eq!(r[2].ended_at, Some(ms(50)));
    }

    #[test]
    fn in_flight_counts_open_handles() {
        let c = Collector::with_clock(ManualClock::new());
        let h1 = c.begin();
        let mut h2 = c.begin();
        h2.chunk(3);
        let s = c.snapshot();
        // Open requests publish their tokens every 32 chunks.
        assert_eq!((s.started, s.in_flight, s.output_tokens), (2, 2, 0));
        for _ in 0..31 {
            h2.chunk(1);
        }
        assert_eq!(c.snapshot().output_tokens, 34);
        h2.chunk(1);
        assert_eq!(c.snapshot().output_tokens, 34);
        drop(h1);
        h2.finish(Usage::default());
        let s = c.snapshot();
        assert_eq!((s.in_flight, s.succeeded, s.incomplete), (0, 1, 1));
        assert_eq!(
            s.output_tokens, 35,
            "the rest is published when the request ends"
        );
        assert_eq!(c.into_records().len(), 2);
    }

    #[test]
    fn streaming_mode_drops_records_but_keeps_histograms() {
        let clock = Arc::new(ManualClock::new());
        let c = Collector::<_, VllmHistograms>::with_accumulator(
            clock.clone(),
            CollectorOptions {
                keep_records: false,
                histograms: true,
            },
        );
        for _ in 0..10 {
            let mut h = c.begin();
            clock.advance(Duration::from_millis(100));
            h.chunk(1);
            clock.advance(Duration::from_millis(10));
            h.chunk(1);
            h.finish(Usage::default());
        }
        assert!(c.records().is_empty());
        let h = c.histograms().unwrap().unwrap();
        assert_eq!(h.requests, 10);
        assert_eq!(h.ttft.count(), 10);
        assert_eq!(h.itl.count(), 10);
        let within = |got: Option<Duration>, ms: f64| {
            let g = got.unwrap().as_secs_f64() * 1e3;
            assert!(g >= ms && g <= ms * (1.0 + 1.0 / 1024.0), "{g} vs {ms}");
        };
        within(h.tpot.percentile(50.0), 10.0);
        within(h.ttft.percentile(50.0), 100.0);
        within(h.e2el.percentile(100.0), 110.0);
        let export = c.export().unwrap();
        let json = serde_json::to_string(&export).unwrap();
        let back: CollectorExport<VllmHistograms> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, export);
    }
}
