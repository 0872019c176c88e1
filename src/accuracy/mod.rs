//! How far a benchmark client's figures are from the server's own: each request a client
//! file lists is joined, by the id it sent (`x-request-id`) or the response id it got, to
//! the example server's timeline ([`crate::http::timeline`]), and the client's TTFT, ITL,
//! TPOT and end-to-end latency are compared with the server's for the same request.
//!
//! Errors are `client − server`, in milliseconds, over the requests both sides saw
//! succeed. The server's times are wall-clock (`*_unix_s`): from the request's arrival at
//! the server's socket (its first bytes; on Linux the kernel's stamp) to the engine
//! releasing a chunk to the response stream, so an error holds the server's own lateness
//! after the engine (reported apart) and everything outside the server: the client's
//! scheduling and connection, the request and response on the wire, the client's reading
//! and time-stamping.
//!
//! * **TTFT**: client TTFT − (first chunk − arrival), per request. Where the timeline has
//!   the first chunk's release (`first_release_unix_s`), the error is split in two: the
//!   server's own lateness ([`ClientAccuracy::ttft_server_late`]: release − first chunk, the
//!   engine thread's wake-up) and what remains after the release
//!   ([`ClientAccuracy::ttft_after_release`]: client TTFT − (release − arrival)); where it
//!   has the first chunk's write (`first_write_unix_s`), the part after the server's HTTP
//!   task handed the bytes on ([`ClientAccuracy::ttft_after_write`]): socket, loopback and
//!   client.
//! * **E2E**: client (end, else last chunk) − send − (end − arrival), per request.
//! * **TPOT** (vLLM's): (last chunk − first chunk) / (output tokens − 1), client − server,
//!   per request with at least two tokens (the server's output count).
//! * **ITL**: every gap between consecutive chunks, client − server, for requests whose
//!   chunk counts agree (others are counted in [`ClientAccuracy::itl_skipped`]; guidellm's
//!   chunk times are its own reconstruction, evenly spaced).
//!
//! Throughput: what the client reported against what the server delivered to the
//! matched requests (output tokens over first arrival → last end), and the load the client
//! intended (its rate or concurrency cap) against what reached the server (its arrival
//! rate and exact peak of requests in flight).
//!
//! ```
//! use servebench::accuracy::{measure, Truth};
//! use servebench::accuracy::RequestKeys;
//! use servebench::http::timeline::TimelineEntry;
//! use servebench::load::{Format, Provenance, Records, Run};
//! use servebench::record::{Chunk, RequestRecord};
//! use std::time::Duration;
//!
//! let t0 = 1.0e9;
//! let truth = Truth::new(vec![TimelineEntry {
//!     request_id: "q".into(), response_id: "cmpl-0".into(),
//!     arrival_s: 0.0, admitted_s: 0.0, first_token_s: Some(0.02), chunk_s: vec![0.02, 0.03],
//!     end_s: Some(0.03), arrival_unix_s: t0, admitted_unix_s: t0,
//!     first_token_unix_s: Some(t0 + 0.020), chunk_unix_s: vec![t0 + 0.020, t0 + 0.030],
//!     end_unix_s: Some(t0 + 0.030), first_release_unix_s: Some(t0 + 0.0203),
//!     first_write_unix_s: Some(t0 + 0.0205),
//!     chunk_tokens: vec![1, 1], output_tokens: 2,
//!     prompt_tokens: Some(4), outcome: servebench::record::Outcome::Success,
//! }]);
//! // The client saw the first token 1.5 ms later than the server sent it.
//! let mut r = RequestRecord::new(0, Duration::ZERO);
//! r.chunks = vec![
//!     Chunk { at: Duration::from_micros(21_500), tokens: 1 },
//!     Chunk { at: Duration::from_micros(31_500), tokens: 1 },
//! ];
//! r.ended_at = Some(Duration::from_micros(31_500));
//! let run = Run {
//!     name: "run".into(),
//!     result: Default::default(),
//!     records: Some(Records::plain(vec![r])),
//!     layout: None,
//!     provenance: Provenance { file: "c.json".into(), format: Format::ServebenchRun, at: None },
//!     sweep: None,
//! };
//! let keys = vec![RequestKeys { request_id: Some("q".into()), response_id: None }];
//! let a = measure(&truth, &run, &keys);
//! assert_eq!((a.matched, a.unmatched), (1, 0));
//! let ttft = a.ttft.unwrap();
//! assert!((ttft.median_ms - 1.5).abs() < 1e-3);
//! assert!(a.itl.unwrap().max_ms.abs() < 1e-3);
//! // 0.3 ms of it was the server's (its engine thread released the chunk late), 1.2 ms after.
//! assert!((a.ttft_server_late.unwrap().median_ms - 0.3).abs() < 1e-3);
//! assert!((a.ttft_after_release.unwrap().median_ms - 1.2).abs() < 1e-3);
//! // Of those 1.2 ms, 1.0 ms passed after the server's HTTP task wrote the chunk.
//! assert!((a.ttft_after_write.unwrap().median_ms - 1.0).abs() < 1e-3);
//! ```

pub(crate) mod keys;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::http::timeline::{self, TimelineEntry, TimelineError};
use crate::load::{self, LoadError, Run};
use crate::stats::{median_sorted, percentile_linear};
pub use keys::{
    client_origin_unix_s, order_prefixes, request_keys, request_order_keys, KeysError, RequestKeys,
};

/// The server's timeline, indexed for the join.
#[derive(Debug, Clone)]
pub struct Truth {
    entries: Vec<TimelineEntry>,
    by_request_id: HashMap<String, Vec<usize>>,
    by_response_id: HashMap<String, Vec<usize>>,
}

impl Truth {
    /// Index `entries` by request id and response id.
    pub fn new(entries: Vec<TimelineEntry>) -> Self {
        let mut by_request_id: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_response_id: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            by_request_id
                .entry(e.request_id.clone())
                .or_default()
                .push(i);
            by_response_id
                .entry(e.response_id.clone())
                .or_default()
                .push(i);
        }
        Truth {
            entries,
            by_request_id,
            by_response_id,
        }
    }

    /// The entries, as read.
    pub fn entries(&self) -> &[TimelineEntry] {
        &self.entries
    }

    /// The entry `keys` name: by request id first, then by response id. `Err(n)` when an
    /// id names `n > 1` entries (a server that saw the same id twice), `Ok(None)` when none.
    fn find(&self, keys: &RequestKeys) -> Result<Option<usize>, usize> {
        let lookups = [
            keys.request_id.as_ref().map(|k| self.by_request_id.get(k)),
            keys.response_id
                .as_ref()
                .map(|k| self.by_response_id.get(k)),
        ];
        for found in lookups.into_iter().flatten().flatten() {
            match found.as_slice() {
                [one] => return Ok(Some(*one)),
                [] => {}
                many => return Err(many.len()),
            }
        }
        Ok(None)
    }
}

/// The distribution of one metric's error (client − server, ms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErrorStats {
    /// Values compared (requests, or chunk gaps for ITL).
    pub count: usize,
    /// Median error.
    pub median_ms: f64,
    /// 99th percentile of the error (numpy `linear`).
    pub p99_ms: f64,
    /// Largest error.
    pub max_ms: f64,
    /// Smallest error (negative: the client saw less time than the server).
    pub min_ms: f64,
    /// The server's median of the metric itself, for scale.
    pub truth_median_ms: f64,
}

impl ErrorStats {
    /// Statistics of `(client_ms, server_ms)` pairs; `None` when there are none.
    pub fn from_pairs(pairs: &[(f64, f64)]) -> Option<Self> {
        let mut err: Vec<f64> = pairs.iter().map(|(c, s)| c - s).collect();
        let mut truth: Vec<f64> = pairs.iter().map(|(_, s)| *s).collect();
        err.sort_by(f64::total_cmp);
        truth.sort_by(f64::total_cmp);
        Some(ErrorStats {
            count: err.len(),
            median_ms: median_sorted(&err)?,
            p99_ms: percentile_linear(&err, 99.0)?,
            max_ms: *err.last()?,
            min_ms: *err.first()?,
            truth_median_ms: median_sorted(&truth)?,
        })
    }
}

/// Load reported and intended by the client against what reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Throughput {
    /// The client's reported output throughput (tok/s): the figure it printed, from its file
    /// (for aiperf's per-request export, from its aggregate export beside it), else
    /// recomputed from the file's records.
    pub client_output_tok_per_s: Option<f64>,
    /// Output tokens the server delivered to the matched requests over first arrival →
    /// last end (tok/s).
    pub truth_output_tok_per_s: Option<f64>,
    /// `client / truth − 1`, in percent.
    pub output_error_pct: Option<f64>,
    /// The client's reported request throughput (req/s).
    pub client_request_per_s: Option<f64>,
    /// Matched requests that succeeded, over first arrival → last end (req/s).
    pub truth_request_per_s: Option<f64>,
    /// The request rate the client was asked for (req/s), when its file says.
    pub intended_rate_per_s: Option<f64>,
    /// The concurrency the client was configured with (vLLM's and SGLang's
    /// `--max-concurrency`, guidellm's concurrent `streams`, aiperf's `--concurrency`,
    /// servebench's `--max-concurrency`), when its file says: never a measured figure.
    pub intended_concurrency: Option<u64>,
    /// The peak concurrency the client itself measured and printed, when its file holds
    /// one: guidellm's maximum of concurrent requests, vLLM's and SGLang's "Peak concurrent
    /// requests" (requests active during any part of a 1-second bucket).
    pub client_peak_concurrency: Option<f64>,
    /// Server entries the `truth_*` figures cover: the matched requests that succeeded, or
    /// for a file that cannot be joined, every entry no other file claimed.
    pub truth_requests: Option<usize>,
    /// The exact peak of the matched requests in flight at the server (arrival → end).
    pub truth_peak_in_flight: Option<u64>,
    /// Mean requests in flight at the server over first arrival → last end.
    pub truth_mean_in_flight: Option<f64>,
}

/// Where a request-id prefix came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefixFrom {
    /// Given by the user (`--request-id-prefix`).
    Given,
    /// Found in the timeline: the one prefix `P` whose ids there are exactly `P0` … `P{n−1}`
    /// for the file's `n` requests.
    Timeline,
}

/// How a client file's requests were found in the server's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Join {
    /// By the `x-request-id` servebench sends for each record (`servebench-{record id}`).
    ServebenchIds,
    /// By the ids the file lists for each request: guidellm's request id, else the response
    /// id it recorded; aiperf's `x_request_id`.
    FileIds,
    /// By request order: vLLM's `x-request-id` is its `--request-id-prefix` followed by the
    /// request's index, and its `--save-detailed` lists are in request order, so record `i`
    /// is `{prefix}{i}`.
    RequestOrder {
        /// The prefix.
        prefix: String,
        /// Given or found.
        prefix_from: PrefixFrom,
        /// The check that the order holds: joined pairs whose prompt-token counts (the
        /// file's `input_lens`, the server's count) were compared …
        prompt_tokens_compared: usize,
        /// … and of those, how many agree.
        prompt_tokens_agree: usize,
    },
    /// No join: the file keeps nothing the timeline knows its requests by. Only counts and
    /// throughput are compared, against the timeline entries no other file claimed.
    None {
        /// Why no join is possible.
        reason: String,
    },
}

/// One client run's accuracy against the server's timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientAccuracy {
    /// The file, as given.
    pub file: String,
    /// The run's name in the file.
    pub run: String,
    /// The client that wrote the file (`servebench`, `guidellm`, `aiperf`, …).
    pub tool: String,
    /// How the file's requests were joined to the timeline.
    pub join: Join,
    /// Requests the file counts as successful (its own figure, where it has one).
    pub client_successful: Option<u64>,
    /// Where the client's printed figures were read from when not from the file itself:
    /// aiperf's aggregate export beside its per-request export.
    pub client_figures_from: Option<String>,
    /// Requests the file lists.
    pub requests: usize,
    /// Requests found in the timeline.
    pub matched: usize,
    /// Requests not in the timeline (or without any id).
    pub unmatched: usize,
    /// A few of the unmatched requests' ids, for the message.
    pub unmatched_examples: Vec<String>,
    /// Requests whose id the timeline holds more than once (not compared).
    pub ambiguous: usize,
    /// Matched requests that failed on either side (not compared).
    pub failed: usize,
    /// Timeline entries no request of this file matched.
    pub truth_unmatched: usize,
    /// TTFT error.
    pub ttft: Option<ErrorStats>,
    /// The server's part of the TTFT error: first chunk's release − its engine time.
    pub ttft_server_late: Option<ErrorStats>,
    /// The rest: client TTFT − (release of the first chunk − arrival).
    pub ttft_after_release: Option<ErrorStats>,
    /// Of the rest, what passed after the server's HTTP task handed the first chunk's bytes
    /// to its HTTP library: client TTFT − (first write − arrival) — the socket, the
    /// loopback and the client's reading and stamping (and its sending, before arrival).
    pub ttft_after_write: Option<ErrorStats>,
    /// The TTFT error's two ends on one clock, where the client file gives its wall-clock
    /// origin (servebench run files: `started_at`) and client and server share a host:
    /// the request's way in, server arrival − client send (the client's task, connection
    /// and write, the loopback, the server's accept and parse).
    pub ttft_send: Option<ErrorStats>,
    /// The way out: client stamp of the first chunk − the server's write of it (the
    /// server's socket write, the loopback, the client's read).
    pub ttft_receive: Option<ErrorStats>,
    /// ITL error, per chunk gap.
    pub itl: Option<ErrorStats>,
    /// Requests whose chunk counts differ between client and server (no ITL comparison).
    pub itl_skipped: usize,
    /// TPOT error (vLLM's definition).
    pub tpot: Option<ErrorStats>,
    /// End-to-end latency error.
    pub e2e: Option<ErrorStats>,
    /// Reported and intended load against the server's.
    pub throughput: Throughput,
}

/// Why `accuracy` could not run.
#[derive(Debug, thiserror::Error)]
pub enum AccuracyError {
    /// The truth could not be read.
    #[error("{0}")]
    Truth(#[from] TimelineError),
    /// The truth has no entry.
    #[error("{file}: no request in the timeline")]
    EmptyTruth {
        /// The timeline file.
        file: String,
    },
    /// A client file could not be loaded.
    #[error("{0}")]
    Load(#[from] LoadError),
    /// A client file's run has no per-request records.
    #[error("{file}: {run} has no per-request records to join (aggregates only)")]
    NoRecords {
        /// The file.
        file: String,
        /// The run.
        run: String,
    },
    /// A client file's request ids could not be read.
    #[error("{file}: {source}")]
    Keys {
        /// The file.
        file: String,
        /// Why.
        source: KeysError,
    },
}

/// Join `run` (its records, with `keys` in the same order) to `truth`.
pub fn measure(truth: &Truth, run: &Run, keys: &[RequestKeys]) -> ClientAccuracy {
    measure_on_clock(truth, run, keys, None)
}

/// [`measure`], and where `client_origin_unix_s` gives the wall-clock time of the client
/// records' zero (a servebench run file's `started_at`), the TTFT error's send and receive
/// ends ([`ClientAccuracy::ttft_send`], [`ClientAccuracy::ttft_receive`]), which compare
/// the two processes' clocks and so need them on one host.
pub fn measure_on_clock(
    truth: &Truth,
    run: &Run,
    keys: &[RequestKeys],
    client_origin_unix_s: Option<f64>,
) -> ClientAccuracy {
    join_run(truth, run, keys, client_origin_unix_s).0
}

/// An accuracy row with nothing joined yet: the file's own counts and figures.
fn blank(run: &Run, join: Join, requests: usize) -> ClientAccuracy {
    ClientAccuracy {
        file: run.provenance.file.clone(),
        run: run.name.clone(),
        tool: run.provenance.format.tool().to_string(),
        join,
        client_successful: run.result.successful_requests,
        client_figures_from: None,
        requests,
        matched: 0,
        unmatched: 0,
        unmatched_examples: Vec::new(),
        ambiguous: 0,
        failed: 0,
        truth_unmatched: 0,
        ttft: None,
        ttft_server_late: None,
        ttft_after_release: None,
        ttft_after_write: None,
        ttft_send: None,
        ttft_receive: None,
        itl: None,
        itl_skipped: 0,
        tpot: None,
        e2e: None,
        throughput: Throughput::default(),
    }
}

/// [`measure_on_clock`], and which timeline entries the run's requests matched.
fn join_run(
    truth: &Truth,
    run: &Run,
    keys: &[RequestKeys],
    client_origin_unix_s: Option<f64>,
) -> (ClientAccuracy, Vec<bool>) {
    let empty = Vec::new();
    let records = run.records.as_ref().map_or(&empty, |r| &r.all);
    let join = if run.provenance.format == load::Format::ServebenchRun {
        Join::ServebenchIds
    } else {
        Join::FileIds
    };
    let mut out = ClientAccuracy {
        ..blank(run, join, records.len())
    };
    let (mut ttft, mut itl, mut tpot, mut e2e) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut late, mut after, mut after_write) = (Vec::new(), Vec::new(), Vec::new());
    let (mut send, mut receive) = (Vec::new(), Vec::new());
    let mut used = vec![false; truth.entries.len()];
    let mut served: Vec<&TimelineEntry> = Vec::new();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let default_keys = RequestKeys::default();
    for (i, rec) in records.iter().enumerate() {
        let k = keys.get(i).unwrap_or(&default_keys);
        let at = match truth.find(k) {
            Ok(Some(at)) => at,
            Ok(None) => {
                out.unmatched += 1;
                if out.unmatched_examples.len() < 3 {
                    let id = k.request_id.as_ref().or(k.response_id.as_ref());
                    out.unmatched_examples
                        .push(id.cloned().unwrap_or_else(|| format!("record {}", rec.id)));
                }
                continue;
            }
            Err(_) => {
                out.ambiguous += 1;
                continue;
            }
        };
        out.matched += 1;
        used[at] = true;
        let e = &truth.entries[at];
        let (Some(t_first), Some(c_ttft)) = (e.first_token_unix_s, rec.ttft()) else {
            out.failed += 1;
            continue;
        };
        if !rec.outcome.is_success() || !e.outcome.is_success() {
            out.failed += 1;
            continue;
        }
        served.push(e);
        let s_ttft = (t_first - e.arrival_unix_s) * 1e3;
        ttft.push((ms(c_ttft), s_ttft));
        if let Some(release) = e.first_release_unix_s {
            let s_release = (release - e.arrival_unix_s) * 1e3;
            late.push((s_release, s_ttft));
            after.push((ms(c_ttft), s_release));
        }
        if let Some(write) = e.first_write_unix_s {
            after_write.push((ms(c_ttft), (write - e.arrival_unix_s) * 1e3));
            if let (Some(origin), Some(first)) = (client_origin_unix_s, rec.chunks.first()) {
                let sent = origin + rec.sent_at.as_secs_f64();
                let seen = origin + first.at.as_secs_f64();
                send.push(((e.arrival_unix_s - sent) * 1e3, 0.0));
                receive.push(((seen - write) * 1e3, 0.0));
            }
        }
        let t_last = e.chunk_unix_s.last().copied().unwrap_or(t_first);
        let t_end = e.end_unix_s.unwrap_or(t_last);
        let c_end = rec
            .ended_at
            .or_else(|| rec.chunks.last().map(|c| c.at))
            .unwrap_or(rec.sent_at);
        e2e.push((
            ms(c_end.saturating_sub(rec.sent_at)),
            (t_end - e.arrival_unix_s) * 1e3,
        ));
        if e.output_tokens >= 2 {
            let n = (e.output_tokens - 1) as f64;
            if let (Some(first), Some(last)) = (rec.chunks.first(), rec.chunks.last()) {
                tpot.push((
                    ms(last.at.saturating_sub(first.at)) / n,
                    (t_last - t_first) * 1e3 / n,
                ));
            }
        }
        if rec.chunks.len() == e.chunk_unix_s.len() {
            for (c, s) in rec.chunks.windows(2).zip(e.chunk_unix_s.windows(2)) {
                itl.push((ms(c[1].at.saturating_sub(c[0].at)), (s[1] - s[0]) * 1e3));
            }
        } else {
            out.itl_skipped += 1;
        }
    }
    out.truth_unmatched = used.iter().filter(|u| !**u).count();
    out.ttft = ErrorStats::from_pairs(&ttft);
    out.ttft_server_late = ErrorStats::from_pairs(&late);
    out.ttft_after_release = ErrorStats::from_pairs(&after);
    out.ttft_after_write = ErrorStats::from_pairs(&after_write);
    out.ttft_send = ErrorStats::from_pairs(&send);
    out.ttft_receive = ErrorStats::from_pairs(&receive);
    out.itl = ErrorStats::from_pairs(&itl);
    out.tpot = ErrorStats::from_pairs(&tpot);
    out.e2e = ErrorStats::from_pairs(&e2e);
    out.throughput = throughput(run, &served);
    (out, used)
}

/// The concurrency the client was configured with, from its file: a guidellm or aiperf
/// file's own field, a profile's cap, else `max_concurrency` where that is the client's cap
/// (vLLM's definitions; under guidellm's it is the measured peak).
fn configured_concurrency(r: &crate::result::BenchmarkResult) -> Option<u64> {
    r.meta
        .configured_concurrency
        .or_else(|| r.meta.profile.as_ref().and_then(|p| p.max_concurrency))
        .or(match r.meta.convention {
            Some(crate::result::Convention::Guidellm) => None,
            _ => r.max_concurrency,
        })
}

fn throughput(run: &Run, served: &[&TimelineEntry]) -> Throughput {
    let r = &run.result;
    let mut t = Throughput {
        client_output_tok_per_s: r.output_throughput_per_s,
        client_request_per_s: r.request_throughput_per_s,
        intended_rate_per_s: r.request_rate_configured.filter(|x| x.is_finite()),
        intended_concurrency: configured_concurrency(r),
        client_peak_concurrency: r.peak_concurrent_requests,
        truth_requests: Some(served.len()),
        ..Throughput::default()
    };
    let end = |e: &TimelineEntry| {
        e.end_unix_s
            .or_else(|| e.chunk_unix_s.last().copied())
            .unwrap_or(e.arrival_unix_s)
    };
    let start = served.iter().map(|e| e.arrival_unix_s).reduce(f64::min);
    let stop = served.iter().map(|e| end(e)).reduce(f64::max);
    if let (Some(a), Some(b)) = (start, stop) {
        let span = b - a;
        if span > 0.0 {
            let tokens: u64 = served.iter().map(|e| e.output_tokens).sum();
            let truth = tokens as f64 / span;
            t.truth_output_tok_per_s = Some(truth);
            t.truth_request_per_s = Some(served.len() as f64 / span);
            t.output_error_pct = t.client_output_tok_per_s.map(|c| (c / truth - 1.0) * 100.0);
            let busy: f64 = served.iter().map(|e| end(e) - e.arrival_unix_s).sum();
            t.truth_mean_in_flight = Some(busy / span);
        }
        // Exact peak: +1 at each arrival, −1 at each end (ends first on ties).
        let mut events: Vec<(f64, i64)> = served
            .iter()
            .flat_map(|e| [(e.arrival_unix_s, 1), (end(e), -1)])
            .collect();
        events.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let (mut now, mut peak) = (0i64, 0i64);
        for (_, d) in events {
            now += d;
            peak = peak.max(now);
        }
        t.truth_peak_in_flight = u64::try_from(peak).ok();
    }
    t
}

/// Options of [`measure_files_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinOptions {
    /// vLLM's `--request-id-prefix` (the same flag name as vLLM's) for its result files:
    /// record `i` is then the timeline's `{prefix}{i}`. `None`: found in the timeline.
    pub request_id_prefix: Option<String>,
}

/// Why a file's runs cannot be joined at all, by format (`None`: they can).
fn unjoinable(format: load::Format) -> Option<&'static str> {
    match format {
        load::Format::SglangJsonl => Some(
            "SGLang's bench_serving file keeps no request or response id and no send times, so \
             its requests cannot be told apart in the timeline: only counts and throughput are \
             compared",
        ),
        _ => None,
    }
}

/// [`measure_files_with`] with default options.
///
/// # Errors
///
/// As [`measure_files_with`].
pub fn measure_files(
    truth: &Path,
    clients: &[&Path],
) -> Result<Vec<ClientAccuracy>, AccuracyError> {
    measure_files_with(truth, clients, &JoinOptions::default())
}

/// Read the timeline at `truth` and every run of every client file in `clients`, and
/// measure each run: joined by the ids the file keeps ([`Join::ServebenchIds`],
/// [`Join::FileIds`]), vLLM's by request order ([`Join::RequestOrder`]); SGLang's, which
/// cannot be joined ([`Join::None`]), by counts and throughput against the timeline
/// entries no other file claimed. aiperf's per-request export takes aiperf's own figures
/// from its aggregate export beside it ([`load::attach_aiperf_aggregates`]).
///
/// # Errors
///
/// The first file that cannot be read, has no records or no request ids (a vLLM file whose
/// prefix is not given and not found, or found more than once), named.
pub fn measure_files_with(
    truth: &Path,
    clients: &[&Path],
    opts: &JoinOptions,
) -> Result<Vec<ClientAccuracy>, AccuracyError> {
    enum Row {
        Joined(Box<ClientAccuracy>),
        Unjoined(Box<Run>, &'static str),
    }
    let entries = timeline::read_file(truth)?;
    if entries.is_empty() {
        return Err(AccuracyError::EmptyTruth {
            file: truth.display().to_string(),
        });
    }
    let truth = Truth::new(entries);
    let mut claimed = vec![false; truth.entries.len()];
    let mut claim = |used: &[bool]| {
        for (c, u) in claimed.iter_mut().zip(used) {
            *c |= *u;
        }
    };
    let mut rows = Vec::new();
    for path in clients {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| LoadError::new(&name, None, load::LoadErrorKind::Io(e)))?;
        let mut runs = load::load(&name, &bytes)?;
        load::attach_aiperf_aggregates(path, &mut runs)?;
        let Some(format) = runs.first().map(|r| r.provenance.format) else {
            continue;
        };
        if let Some(reason) = unjoinable(format) {
            rows.extend(runs.into_iter().map(|r| Row::Unjoined(Box::new(r), reason)));
            continue;
        }
        if let Some(run) = runs.iter().find(|r| r.records.is_none()) {
            return Err(AccuracyError::NoRecords {
                file: name,
                run: run.name.clone(),
            });
        }
        let keys_error = |source| AccuracyError::Keys {
            file: name.clone(),
            source,
        };
        match keys::request_keys(&runs, &bytes) {
            Ok(keys) => {
                let origin = keys::client_origin_unix_s(&runs, &bytes);
                for (run, k) in runs.iter().zip(&keys) {
                    let (mut a, used) = join_run(&truth, run, k, origin);
                    let aiperf_beside = run.provenance.format == load::Format::AiperfJsonl
                        && run
                            .records
                            .as_ref()
                            .is_some_and(|r| r.tool_duration_s.is_some());
                    if aiperf_beside {
                        a.client_figures_from = path
                            .parent()
                            .map(|d| d.join(load::AIPERF_AGGREGATE_FILE).display().to_string());
                    }
                    claim(&used);
                    rows.push(Row::Joined(Box::new(a)));
                }
            }
            Err(KeysError::NoIds { format: what }) if format == load::Format::VllmJson => {
                for run in &runs {
                    let n = run.records.as_ref().map_or(0, |r| r.all.len());
                    let (prefix, prefix_from) = match &opts.request_id_prefix {
                        Some(p) => (p.clone(), PrefixFrom::Given),
                        None => {
                            let last = n.saturating_sub(1);
                            let ids = truth.entries.iter().map(|e| e.request_id.as_str());
                            let mut found = keys::order_prefixes(ids, n);
                            match found.len() {
                                1 => (found.remove(0), PrefixFrom::Timeline),
                                0 => {
                                    return Err(keys_error(KeysError::NoPrefix {
                                        format: what,
                                        last,
                                    }))
                                }
                                _ => {
                                    return Err(keys_error(KeysError::AmbiguousPrefix {
                                        format: what,
                                        last,
                                        candidates: found,
                                    }))
                                }
                            }
                        }
                    };
                    let k = keys::request_order_keys(n, &prefix);
                    let (mut a, used) = join_run(&truth, run, &k, None);
                    let (prompt_tokens_compared, prompt_tokens_agree) =
                        prompt_tokens_check(&truth, run, &k);
                    a.join = Join::RequestOrder {
                        prefix,
                        prefix_from,
                        prompt_tokens_compared,
                        prompt_tokens_agree,
                    };
                    claim(&used);
                    rows.push(Row::Joined(Box::new(a)));
                }
            }
            Err(source) => return Err(keys_error(source)),
        }
    }
    Ok(rows
        .into_iter()
        .map(|row| match row {
            Row::Joined(a) => *a,
            Row::Unjoined(run, reason) => unjoined(&truth, &run, reason, &claimed),
        })
        .collect())
}

/// For a join by request order: how many joined pairs have a prompt-token count on both
/// sides, and how many of those agree (a join whose order is wrong pairs requests of other
/// lengths).
fn prompt_tokens_check(truth: &Truth, run: &Run, keys: &[RequestKeys]) -> (usize, usize) {
    let empty = Vec::new();
    let records = run.records.as_ref().map_or(&empty, |r| &r.all);
    let (mut compared, mut agree) = (0, 0);
    for (rec, k) in records.iter().zip(keys) {
        let Ok(Some(at)) = truth.find(k) else {
            continue;
        };
        if let (Some(c), Some(s)) = (rec.prompt_tokens, truth.entries[at].prompt_tokens) {
            compared += 1;
            if c == s {
                agree += 1;
            }
        }
    }
    (compared, agree)
}

/// The row of a run that cannot be joined: its counts and throughput, against the
/// timeline entries no other file claimed.
fn unjoined(truth: &Truth, run: &Run, reason: &str, claimed: &[bool]) -> ClientAccuracy {
    let requests = match &run.records {
        Some(r) => r.all.len(),
        None => {
            let n = run.result.successful_requests.unwrap_or(0)
                + run.result.failed_requests.unwrap_or(0);
            usize::try_from(n).unwrap_or(usize::MAX)
        }
    };
    let join = Join::None {
        reason: reason.to_string(),
    };
    let mut a = blank(run, join, requests);
    a.unmatched = requests;
    let unclaimed: Vec<&TimelineEntry> = truth
        .entries
        .iter()
        .zip(claimed)
        .filter(|(_, c)| !**c)
        .map(|(e, _)| e)
        .collect();
    a.truth_unmatched = unclaimed.len();
    let served: Vec<&TimelineEntry> = unclaimed
        .into_iter()
        .filter(|e| e.outcome.is_success() && e.first_token_unix_s.is_some())
        .collect();
    a.throughput = throughput(run, &served);
    a
}
