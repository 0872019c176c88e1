//! The served simulator's ground truth: one JSON Lines entry per finished request (its id,
//! arrival at the server, admission to the engine, first token, every chunk, end, tokens), in
//! the simulator's virtual time and in wall time. The server keeps the raw records
//! ([`ServedRequest`], with [`ServeOptions::record_timeline`](super::server::ServeOptions));
//! this module turns them into [`TimelineEntry`]s, writes them atomically
//! ([`write_file`]), serves them (`GET /timeline`, [`to_jsonl`]) and reads them back
//! ([`read_file`]).
//!
//! Times: `*_s` fields are virtual seconds since the server started (virtual time = wall
//! time × speed); `*_unix_s` fields are the same instants as wall-clock Unix seconds. Chunk
//! times are when the engine thread released each chunk to the request's stream (paced to
//! the wall clock), not when its bytes reached the socket.
//!
//! ```
//! use servebench::http::timeline::{read_jsonl, to_jsonl, TimelineEntry};
//! let e = TimelineEntry {
//!     request_id: "r-1".into(),
//!     response_id: "cmpl-0".into(),
//!     arrival_s: 0.5,
//!     admitted_s: 0.5,
//!     first_token_s: Some(0.6),
//!     chunk_s: vec![0.6, 0.62],
//!     end_s: Some(0.62),
//!     arrival_unix_s: 1.0e9,
//!     admitted_unix_s: 1.0e9,
//!     first_token_unix_s: Some(1.0e9 + 0.1),
//!     chunk_unix_s: vec![1.0e9 + 0.1, 1.0e9 + 0.12],
//!     end_unix_s: Some(1.0e9 + 0.12),
//!     first_release_unix_s: Some(1.0e9 + 0.1003),
//!     first_write_unix_s: Some(1.0e9 + 0.1004),
//!     chunk_tokens: vec![1, 1],
//!     output_tokens: 2,
//!     prompt_tokens: Some(8),
//!     outcome: servebench::record::Outcome::Success,
//! };
//! let text = to_jsonl(&[e.clone()]);
//! assert_eq!(read_jsonl(text.as_bytes(), "t.jsonl").unwrap(), vec![e]);
//! ```

use std::io::BufRead;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::server::ServedRequest;
use crate::record::Outcome;

/// One served request, as the server saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// The join key: the client's `x-request-id` header, else the response id.
    pub request_id: String,
    /// The response's `id` (`cmpl-N` / `chatcmpl-N`).
    pub response_id: String,
    /// Virtual time the request arrived: its first bytes reached the server's socket (the
    /// kernel's receive stamp on Linux). Files written before 2026-12-04 hold the time its
    /// head reached the server's handler.
    pub arrival_s: f64,
    /// Virtual time the engine accepted the request (its arrival in the engine's queue).
    pub admitted_s: f64,
    /// Virtual time of the first chunk, if any.
    pub first_token_s: Option<f64>,
    /// Virtual time of every chunk, in order.
    pub chunk_s: Vec<f64>,
    /// Virtual time the engine finished (or dropped) the request, if it did.
    pub end_s: Option<f64>,
    /// `arrival_s` as wall-clock Unix seconds.
    pub arrival_unix_s: f64,
    /// `admitted_s` as wall-clock Unix seconds.
    pub admitted_unix_s: f64,
    /// `first_token_s` as wall-clock Unix seconds.
    pub first_token_unix_s: Option<f64>,
    /// `chunk_s` as wall-clock Unix seconds.
    pub chunk_unix_s: Vec<f64>,
    /// `end_s` as wall-clock Unix seconds.
    pub end_unix_s: Option<f64>,
    /// When the engine thread actually handed the first token chunk to the request's HTTP
    /// task, as wall-clock Unix seconds: `first_token_unix_s` is when the simulated engine
    /// produced it; the thread sleeps until the simulator's next event, so this is its
    /// wake-up later. Absent in files written before it was recorded.
    #[serde(default)]
    pub first_release_unix_s: Option<f64>,
    /// When the request's HTTP task handed the first token chunk's bytes to hyper (which
    /// writes them to the socket), as wall-clock Unix seconds: what a client's TTFT holds
    /// beyond this is the socket, the loopback and the client. Absent in files written
    /// before it was recorded.
    #[serde(default)]
    pub first_write_unix_s: Option<f64>,
    /// Tokens in each chunk (parallel to `chunk_s`).
    pub chunk_tokens: Vec<u32>,
    /// Output tokens (the engine's count when it reported one, else the chunks' sum).
    pub output_tokens: u64,
    /// Prompt tokens as the server counted them.
    pub prompt_tokens: Option<u64>,
    /// How the request ended (`incomplete` when the client went away first).
    pub outcome: Outcome,
}

/// A timeline file that cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a timeline entry.
    #[error("{path}:{line}: not a timeline entry: {message}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong (with its JSON path).
        message: String,
    },
}

/// `served` as entries, with wall times from `origin` (the server's
/// [`ServerHandle::origin`](super::server::ServerHandle::origin)) at `speed` virtual seconds
/// per wall second; sorted by arrival.
pub fn entries(served: &[ServedRequest], origin: Instant, speed: f64) -> Vec<TimelineEntry> {
    // The wall clock at `origin`: now, less the time since.
    let origin_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
        - origin.elapsed().as_secs_f64();
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    let unix = |v: Duration| origin_unix_s + v.as_secs_f64() / speed;
    let mut out: Vec<TimelineEntry> = served
        .iter()
        .map(|s| {
            let r = &s.record;
            let arrival_s = s.received_wall.as_secs_f64() * speed;
            let chunk_s: Vec<f64> = r.chunks.iter().map(|c| c.at.as_secs_f64()).collect();
            TimelineEntry {
                request_id: s
                    .request_id
                    .clone()
                    .unwrap_or_else(|| s.response_id.clone()),
                response_id: s.response_id.clone(),
                arrival_s,
                admitted_s: r.sent_at.as_secs_f64(),
                first_token_s: chunk_s.first().copied(),
                end_s: r.ended_at.map(|d| d.as_secs_f64()),
                arrival_unix_s: origin_unix_s + s.received_wall.as_secs_f64(),
                admitted_unix_s: unix(r.sent_at),
                first_token_unix_s: r.chunks.first().map(|c| unix(c.at)),
                chunk_unix_s: r.chunks.iter().map(|c| unix(c.at)).collect(),
                end_unix_s: r.ended_at.map(unix),
                first_release_unix_s: s
                    .first_release_wall
                    .map(|w| origin_unix_s + w.as_secs_f64()),
                first_write_unix_s: s.first_write_wall.map(|w| origin_unix_s + w.as_secs_f64()),
                chunk_tokens: r.chunks.iter().map(|c| c.tokens).collect(),
                output_tokens: r.output_tokens(),
                prompt_tokens: r.usage_prompt_tokens.or(r.prompt_tokens),
                outcome: r.outcome.clone(),
                chunk_s,
            }
        })
        .collect();
    out.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    out
}

/// The entries as JSON Lines (one object per line, each line ending in `\n`).
pub fn to_jsonl(entries: &[TimelineEntry]) -> String {
    let mut out = String::new();
    for e in entries {
        // A struct of numbers, strings and vectors: serialization cannot fail.
        if let Ok(line) = serde_json::to_string(e) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Write `entries` to `path` atomically (a temporary file in the same folder, then renamed).
pub fn write_file(path: &Path, entries: &[TimelineEntry]) -> Result<(), TimelineError> {
    let io = |source| TimelineError::Io {
        path: path.display().to_string(),
        source,
    };
    crate::atomic::write(path, to_jsonl(entries).as_bytes()).map_err(io)
}

/// Read entries from JSON Lines (`name` names the source in errors); blank lines are skipped.
pub fn read_jsonl<R: BufRead>(r: R, name: &str) -> Result<Vec<TimelineEntry>, TimelineError> {
    let mut out = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|source| TimelineError::Io {
            path: name.to_string(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let de = &mut serde_json::Deserializer::from_str(&line);
        let e = serde_path_to_error::deserialize(de).map_err(|e| TimelineError::Parse {
            path: name.to_string(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(e);
    }
    Ok(out)
}

/// Read a timeline file.
pub fn read_file(path: &Path) -> Result<Vec<TimelineEntry>, TimelineError> {
    let f = std::fs::File::open(path).map_err(|source| TimelineError::Io {
        path: path.display().to_string(),
        source,
    })?;
    read_jsonl(std::io::BufReader::new(f), &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Chunk, RequestRecord};

    fn served(tag: Option<&str>, received_ms: u64) -> ServedRequest {
        let mut r = RequestRecord::new(3, Duration::from_millis(received_ms * 10 + 5));
        r.chunks = vec![
            Chunk {
                at: Duration::from_millis(received_ms * 10 + 100),
                tokens: 1,
            },
            Chunk {
                at: Duration::from_millis(received_ms * 10 + 150),
                tokens: 2,
            },
        ];
        r.ended_at = Some(Duration::from_millis(received_ms * 10 + 150));
        ServedRequest {
            request_id: tag.map(str::to_string),
            response_id: "cmpl-3".into(),
            received_wall: Duration::from_millis(received_ms),
            first_release_wall: Some(Duration::from_millis(received_ms + 11)),
            first_write_wall: Some(Duration::from_millis(received_ms + 12)),
            record: r,
        }
    }

    #[test]
    fn entries_convert_virtual_to_wall_time_and_fall_back_to_the_response_id() {
        let origin = Instant::now();
        let e = entries(&[served(None, 20), served(Some("a"), 10)], origin, 10.0);
        assert_eq!(e[0].request_id, "a");
        assert_eq!(e[1].request_id, "cmpl-3");
        let a = &e[0];
        assert!((a.arrival_s - 0.1).abs() < 1e-9, "{}", a.arrival_s);
        assert_eq!(a.chunk_s, vec![0.2, 0.25]);
        assert_eq!(a.first_token_s, Some(0.2));
        assert_eq!((a.output_tokens, a.chunk_tokens.clone()), (3, vec![1, 2]));
        // 10× speed: 50 virtual ms between chunks is 5 wall ms.
        let gap = a.chunk_unix_s[1] - a.chunk_unix_s[0];
        assert!((gap - 0.005).abs() < 1e-6, "{gap}");
        // Arrival (10 wall ms) and admission (105 virtual ms = 10.5 wall ms) in wall time.
        let adm = a.admitted_unix_s - a.arrival_unix_s;
        assert!((adm - 0.0005).abs() < 1e-6, "{adm}");
    }

    #[test]
    fn files_round_trip_atomically_and_bad_lines_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let e = entries(&[served(Some("x"), 1)], Instant::now(), 1.0);
        write_file(&path, &e).unwrap();
        assert_eq!(read_file(&path).unwrap(), e);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let bad = format!("{}\n{{\"request_id\": 1}}\n", to_jsonl(&e).trim_end());
        let err = read_jsonl(bad.as_bytes(), "b.jsonl")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("b.jsonl:2: "), "{err}");
        assert!(err.contains("request_id"), "{err}");
    }
}
