//! Parsing a large guidellm report on several threads.
//!
//! Almost all of a large report is its request lists (`requests.successful`, `errored`,
//! `incomplete`: thousands of ~5 KB objects). This module cuts those lists into pieces,
//! parses the pieces on `threads` threads (with [`super::scan`], or `serde_json`), and parses the rest of the
//! document — a small *skeleton* copy in which every list's content is replaced by the
//! placeholder `"0"` — with the same structures as the sequential path. The pieces are
//! found by cheap byte patterns, so any of them may be wrong; the result is used only when
//! the parse proves it right, and [`parse`] otherwise returns `None` (the caller then runs
//! the sequential parser, with its precise errors):
//!
//! * a list starts after `"successful": [` (or `errored`, `incomplete`, any whitespace);
//!   the cuts, spread evenly over the file from the first non-empty list on, are at
//!   `}, {` followed by the same first member as that list's first request
//!   (`"type_": "generative_request_stats"`). The other lists are found in what the
//!   pieces parsed from there do not cover, and parsed in a second round;
//! * a piece parses whole request objects separated by commas, and ends exactly where the
//!   next cut of the list starts or at the list's `]`; a list is the chain of pieces from
//!   its start to its `]`. Each object is parsed strictly (`serde_json::from_slice`
//!   semantics: no bare `NaN`, no trailing comma), by [`super::scan`]'s fast reader when
//!   the object lies in its subset (where it gives what `serde_json` gives), else by
//!   `serde_json`.
//! * the skeleton must parse, each placeholder must be read as a request list (the
//!   placeholder is recognised by the address of its borrowed string, which no other text
//!   can forge), and every placeholder exactly once.
//!
//! Then the original text is the skeleton with each placeholder (a value inside an array)
//! replaced by a well-formed sequence of values, so it is valid JSON and parses to the same
//! structures: the result equals the sequential one. (Nesting depth does not differ either:
//! a request object nests at most three levels of typed structure, and `serde_json` skips
//! ignored values without a depth limit.)

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::de::{self, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::raw::{RawBenchmark, RawReport, RawRequest, RawRequests};

/// A request list as its pieces, in order.
pub(super) type Pieces = Vec<Vec<RawRequest>>;

/// Files below this size are parsed sequentially (threads would not pay off).
pub(super) const MIN_BYTES: usize = 1 << 20;

/// Most threads [`threads`] proposes.
const MAX_THREADS: usize = 4;

/// Pieces per thread (several, so that a thread finishing early takes more work).
const PIECES_PER_THREAD: usize = 16;

/// The keys of the request lists, with their quotes.
const LIST_KEYS: [&[u8]; 3] = [b"\"successful\"", b"\"errored\"", b"\"incomplete\""];

/// How many threads to parse with: the available parallelism, at most [`MAX_THREADS`].
pub(super) fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(MAX_THREADS)
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|&b| is_ws(b)) {
        i += 1;
    }
    i
}

/// Where the content of each request list may start: just past `"successful": [` and the
/// whitespace after it (likewise `errored`, `incomplete`), for every `[` in
/// `bytes[from..to]`.
fn list_starts(bytes: &[u8], from: usize, to: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let Some(range) = bytes.get(from..to) else {
        return out;
    };
    for rel in memchr::memchr_iter(b'[', range) {
        let open = from + rel;
        let mut j = open;
        while j > 0 && is_ws(bytes[j - 1]) {
            j -= 1;
        }
        if j == 0 || bytes[j - 1] != b':' {
            continue;
        }
        j -= 1;
        while j > 0 && is_ws(bytes[j - 1]) {
            j -= 1;
        }
        let head = &bytes[..j];
        if LIST_KEYS.iter().any(|k| head.ends_with(k)) {
            out.push(skip_ws(bytes, open + 1));
        }
    }
    out
}

/// The first list start after `from` (see [`list_starts`]).
fn next_list_start(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let open = from + memchr::memchr(b'[', bytes.get(from..)?)?;
        if let Some(&l) = list_starts(bytes, open, open + 1).first() {
            return Some(l);
        }
        from = open + 1;
    }
}

/// The beginning of the object at `at` up to the end of its first member's key, or of its
/// value when that is a short string: what every request of one list starts with.
fn signature(bytes: &[u8], at: usize) -> Option<&[u8]> {
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let k = skip_ws(bytes, at + 1);
    if bytes.get(k) != Some(&b'"') {
        return None;
    }
    let close = k + 1 + memchr::memchr(b'"', bytes.get(k + 1..)?)?;
    let mut end = close + 1;
    let colon = skip_ws(bytes, end);
    if bytes.get(colon) == Some(&b':') {
        let v = skip_ws(bytes, colon + 1);
        if bytes.get(v) == Some(&b'"') {
            let limit = bytes.len().min(v + 1 + 64);
            if let Some(q) = memchr::memchr(b'"', bytes.get(v + 1..limit)?) {
                end = v + 2 + q;
            }
        }
    }
    bytes.get(at..end)
}

/// The first `}, {` boundary in `bytes[from..to]` whose object starts with `sig`: the
/// position of its `{`.
fn cut_after(bytes: &[u8], from: usize, to: usize, sig: &[u8]) -> Option<usize> {
    let mut i = from;
    while i < to {
        let c = i + memchr::memchr(b'}', bytes.get(i..to)?)?;
        let comma = skip_ws(bytes, c + 1);
        if bytes.get(comma) == Some(&b',') {
            let k = skip_ws(bytes, comma + 1);
            if k < to && signature(bytes, k) == Some(sig) {
                return Some(k);
            }
        }
        i = c + 1;
    }
    None
}

/// How a piece ended.
enum Stop {
    /// At the start of the next cut (a position in `cuts`).
    Cut(usize),
    /// At the list's closing `]` (its position).
    End(usize),
}

/// The requests of one piece.
struct Piece {
    requests: Vec<RawRequest>,
    stop: Stop,
}

/// Parse request objects from `start` until the next cut or the list's end; `None` on
/// anything unexpected.
fn parse_piece(bytes: &[u8], start: usize, cuts: &[usize]) -> Option<Piece> {
    let mut requests = Vec::new();
    let mut pos = start;
    if bytes.get(pos) == Some(&b']') {
        return Some(Piece {
            requests,
            stop: Stop::End(pos),
        });
    }
    loop {
        // The fast reader when the object is in its subset, else `serde_json`.
        let (request, end) = match super::scan::request(bytes, pos) {
            Some(read) => read,
            None => {
                let mut one = serde_json::Deserializer::from_slice(bytes.get(pos..)?)
                    .into_iter::<RawRequest>();
                let request = one.next()?.ok()?;
                (request, pos + one.byte_offset())
            }
        };
        if requests.is_empty() {
            // Room for the piece's requests if they are about this size (growing the
            // vector would copy them, and touch more fresh memory).
            let bound = cuts
                .get(cuts.partition_point(|&c| c <= start))
                .map_or(bytes.len(), |&c| c);
            requests.reserve(((bound - start) / (end - start).max(1) + 1).min(1 << 16));
        }
        requests.push(request);
        pos = skip_ws(bytes, end);
        match bytes.get(pos) {
            Some(b',') => {
                // A `]` here (a trailing comma) fails as the next object, as it should.
                pos = skip_ws(bytes, pos + 1);
                if cuts.binary_search(&pos).is_ok() {
                    return Some(Piece {
                        requests,
                        stop: Stop::Cut(pos),
                    });
                }
            }
            Some(b']') => {
                return Some(Piece {
                    requests,
                    stop: Stop::End(pos),
                })
            }
            _ => return None,
        }
    }
}

/// A request list in the skeleton: `["0"]`, identified by the address of the string.
struct Slot(usize);

impl<'de> Deserialize<'de> for Slot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Slot;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a request-list placeholder")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Slot, A::Error> {
                let s: &'de str = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("empty placeholder"))?;
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom("not a placeholder"));
                }
                Ok(Slot(s.as_ptr() as usize))
            }
        }
        d.deserialize_seq(V)
    }
}

impl<L> RawRequests<L> {
    fn map<M>(self, f: &mut impl FnMut(L) -> Option<M>) -> Option<RawRequests<M>> {
        let mut g = |l: Option<L>| l.map(&mut *f).map_or(Some(None), |m| m.map(Some));
        Some(RawRequests {
            successful: g(self.successful)?,
            errored: g(self.errored)?,
            incomplete: g(self.incomplete)?,
        })
    }
}

impl<L> RawBenchmark<L> {
    fn map<M>(self, f: &mut impl FnMut(L) -> Option<M>) -> Option<RawBenchmark<M>> {
        let requests = match self.requests {
            Some(r) => Some(r.map(f)?),
            None => None,
        };
        Some(RawBenchmark {
            config: self.config,
            scheduler_metrics: self.scheduler_metrics,
            metrics: self.metrics,
            requests,
            start_time: self.start_time,
            end_time: self.end_time,
            duration: self.duration,
            args: self.args,
            run_stats: self.run_stats,
            request_totals: self.request_totals,
            worker: self.worker,
            benchmarks: self.benchmarks,
        })
    }
}

/// Run `f` on every item index on `threads` threads (the caller's included), each taking
/// the next index when done; the results in index order, or the first panic of a thread
/// (its payload, for the caller to resume or to fall back on). Also the parallel request
/// conversion's loop (`convert`).
pub(super) fn run_all<T: Send>(
    n: usize,
    threads: usize,
    f: &(impl Fn(usize) -> T + Sync),
) -> std::thread::Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            out.push((i, f(i)));
        }
        out
    };
    let mut all: Vec<(usize, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut all = work();
        let mut panicked = None;
        for h in handles {
            match h.join() {
                Ok(part) => all.extend(part),
                Err(e) => {
                    panicked.get_or_insert(e);
                }
            }
        }
        match panicked {
            None => Ok(all),
            Some(e) => Err(e),
        }
    })?;
    all.sort_unstable_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, t)| t).collect())
}

/// Parse `bytes` on `threads` threads; `None` when the shortcut does not apply or anything
/// is unexpected (the caller then parses sequentially).
pub(super) fn parse(bytes: &[u8], threads: usize) -> Option<RawReport<Pieces>> {
    let threads = threads.max(1);
    // 1. The first list with a request in it, and its first request's signature (the
    //    scan for the other lists runs on the threads, with the pieces).
    let mut from = 0;
    let (first, sig) = loop {
        let l = next_list_start(bytes, from)?;
        if let Some(sig) = signature(bytes, l) {
            break (l, sig);
        }
        from = l;
    };
    // A bare `NaN` before the lists (guidellm writes non-finite aggregates there) would
    // only fail the skeleton after all the work: go sequential (through the filter) at once.
    if crate::import::json::may_contain_non_finite(bytes.get(..first)?) {
        return None;
    }
    let mut starts = list_starts(bytes, 0, first);
    starts.push(first);

    // 2. Cuts spread evenly over the bytes from the first list on: `}, {` followed by an
    //    object that starts like that request.
    let pieces = threads * PIECES_PER_THREAD;
    let mut cuts: Vec<usize> = Vec::new();
    for k in 1..pieces {
        let target = first + (bytes.len() - first) * k / pieces;
        let from = target.max(cuts.last().map_or(0, |&c| c + 1));
        if let Some(c) = cut_after(bytes, from, bytes.len(), sig) {
            cuts.push(c);
        }
    }

    // 3. Parse the pieces from the first list and the cuts; then scan what they did not
    //    cover for the other lists, and parse the pieces from those.
    let mut pieces: BTreeMap<usize, Option<Piece>> = BTreeMap::new();
    let failed = AtomicBool::new(false);
    let run = |at: &[usize], pieces: &mut BTreeMap<usize, Option<Piece>>| -> Option<()> {
        let done = run_all(at.len(), threads, &|i| {
            // Once a piece has failed (a bare `NaN`, a syntax error: the sequential parse
            // will run), the others are not worth parsing.
            if failed.load(Ordering::Relaxed) {
                return None;
            }
            let piece = parse_piece(bytes, at[i], &cuts);
            if piece.is_none() {
                failed.store(true, Ordering::Relaxed);
            }
            piece
        })
        .ok()?;
        pieces.extend(at.iter().copied().zip(done));
        Some(())
    };
    let first_pieces: Vec<usize> = std::iter::once(first).chain(cuts.iter().copied()).collect();
    run(&first_pieces, &mut pieces)?;
    // The parsed pieces hold whole request objects, so a request list (its `[`) lies
    // outside them. (One missed would only stay in the skeleton, where it fails.)
    let mut from = first;
    for (&at, piece) in &pieces {
        let Some(piece) = piece else { continue };
        starts.extend(list_starts(bytes, from, at));
        from = from.max(match piece.stop {
            Stop::Cut(c) => c,
            Stop::End(e) => e,
        });
    }
    starts.extend(list_starts(bytes, from, bytes.len()));
    let later: Vec<usize> = starts
        .iter()
        .copied()
        .filter(|s| !pieces.contains_key(s))
        .collect();
    run(&later, &mut pieces)?;
    starts.sort_unstable();

    // 4. Follow each list's chain of pieces to its `]`.
    let mut lists: Vec<(usize, usize, Pieces)> = Vec::new();
    let mut prev_end = 0;
    for &start in &starts {
        if start < prev_end {
            continue; // inside the previous list: not a list
        }
        let mut requests: Pieces = Vec::new();
        let mut at = start;
        let end = loop {
            let Some(Some(piece)) = pieces.remove(&at) else {
                break None;
            };
            requests.push(piece.requests);
            match piece.stop {
                Stop::Cut(c) => at = c,
                Stop::End(e) => break Some(e),
            }
        };
        // A list that does not parse stays in the skeleton (where it fails if it is
        // really a request list).
        if let Some(end) = end {
            lists.push((start, end, requests));
            prev_end = end;
        }
    }

    // 5. The skeleton: the document with each list's content replaced by `"0"`.
    let removed: usize = lists.iter().map(|(s, e, _)| e - s).sum();
    let mut skeleton = Vec::with_capacity(bytes.len().saturating_sub(removed) + 3 * lists.len());
    let mut placeholders = Vec::with_capacity(lists.len());
    let mut at = 0;
    for (s, e, _) in &lists {
        skeleton.extend_from_slice(bytes.get(at..*s)?);
        placeholders.push(skeleton.len() + 1);
        skeleton.extend_from_slice(b"\"0\"");
        at = *e;
    }
    skeleton.extend_from_slice(bytes.get(at..)?);
    let raw: RawReport<Slot> = serde_json::from_slice(&skeleton).ok()?;

    // 6. Put the lists in their places; each placeholder must be used exactly once.
    let base = skeleton.as_ptr() as usize;
    let mut lists: Vec<Option<Pieces>> = lists.into_iter().map(|(_, _, r)| Some(r)).collect();
    let mut used = 0usize;
    let mut take = |slot: Slot| -> Option<Pieces> {
        let i = placeholders
            .binary_search(&slot.0.checked_sub(base)?)
            .ok()?;
        used += 1;
        lists.get_mut(i)?.take()
    };
    let benchmarks = match raw.benchmarks {
        Some(list) => Some(
            list.into_iter()
                .map(|b| b.map(&mut take))
                .collect::<Option<Vec<_>>>()?,
        ),
        None => None,
    };
    if used != placeholders.len() {
        return None;
    }
    Some(RawReport {
        metadata: raw.metadata,
        args: raw.args,
        benchmarks,
    })
}
