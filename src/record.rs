//! Per-request raw timings: what a load generator observed for one request. Everything the
//! metrics need is derived from a slice of [`RequestRecord`]s, so a run's raw records can be
//! saved (JSON Lines, one record per line) and every metric recomputed later.
//!
//! Times are [`Duration`] offsets from the run's start (the collector's or importer's
//! origin); serde writes them as `{"secs":…,"nanos":…}`.
//!
//! ```
//! use std::time::Duration;
//! use servebench::record::{read_jsonl, write_jsonl, Chunk, RequestRecord};
//! let mut r = RequestRecord::new(7, Duration::from_millis(3));
//! r.chunks.push(Chunk { at: Duration::from_millis(40), tokens: 2 });
//! let mut buf = Vec::new();
//! write_jsonl(&mut buf, std::slice::from_ref(&r)).unwrap();
//! assert_eq!(read_jsonl(&buf[..]).unwrap(), vec![r]);
//! ```

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod server_clock;
pub mod synthetic;

pub use server_clock::{unix_s, ServerClock};

/// Token usage as reported by the server (the `usage` object of the last SSE event).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`.
    pub completion_tokens: Option<u64>,
}

/// One streamed chunk (an SSE event carrying output): when it arrived and how many tokens
/// it carried (1 for plain decoding, more with speculative decoding or stream intervals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Arrival time, offset from the run's start.
    pub at: Duration,
    /// Tokens in this chunk.
    pub tokens: u32,
}

/// Why a request did not succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Could not connect or send.
    Connect,
    /// The server answered with a non-success HTTP status.
    HttpStatus,
    /// The stream was cut before it finished.
    StreamCut,
    /// The server sent an in-stream error object.
    ServerError,
    /// The request timed out.
    Timeout,
    /// The response could not be parsed.
    Protocol,
    /// The engine rejected the request (too long, no capacity, …).
    Rejected,
    /// Anything else.
    Other,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// Completed successfully.
    Success,
    /// Failed with an error.
    Error {
        /// Error category.
        kind: ErrorKind,
        /// Human-readable reason (HTTP status text, server message, …).
        message: String,
    },
    /// Never finished: cancelled, cut off by the end of the run, or its handle was dropped.
    Incomplete {
        /// Why it did not finish.
        reason: String,
    },
}

impl Outcome {
    /// `true` for [`Outcome::Success`].
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::Success)
    }
}

/// Everything observed for one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Request id, unique within a run.
    pub id: u64,
    /// When the load profile scheduled the request to arrive (before any client-side
    /// concurrency queueing), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_at: Option<Duration>,
    /// When the request was sent to the server.
    pub sent_at: Duration,
    /// When the response finished (last byte / outcome known), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Duration>,
    /// Every output chunk in arrival order.
    #[serde(default)]
    pub chunks: Vec<Chunk>,
    /// Prompt tokens as the client (dataset) counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the server reported in `usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_prompt_tokens: Option<u64>,
    /// Output tokens the server reported in `usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_output_tokens: Option<u64>,
    /// How the request ended.
    pub outcome: Outcome,
    /// The conversation and turn the request belongs to (multi-turn workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnRef>,
    /// Which chunks carried the model's reasoning and which its answer, for a stream that
    /// carried any reasoning (`delta.reasoning` or `delta.reasoning_content`); absent for a
    /// stream of answer text only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<StreamSplit>,
    /// The LoRA adapter the request was sent to (the `model` it named), when the run split
    /// its traffic over adapters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// How the answer came: streamed (the default, left out of the file) or as one JSON body
    /// (the pooling endpoints: embeddings, rerank, score, …), for which the record has no
    /// chunks and no token timing applies.
    #[serde(default, skip_serializing_if = "ResponseForm::is_streamed")]
    pub response: ResponseForm,
    /// Inputs in the request when it carried several: the texts of an embeddings batch, the
    /// documents of a rerank or score query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<u32>,
    /// The images the request carried (chat content parts), when it carried any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImagesSent>,
    /// What was checked in the answer (its tool calls, its structured output), when the
    /// request offered tools or asked for a response format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<OutputChecks>,
}

/// What servebench checked in one answer: its tool calls — each one's arguments parsed as
/// JSON and validated against the named tool's `parameters` schema — and, when a response
/// format was asked for, whether the answer parsed and matched its schema.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OutputChecks {
    /// Tool calls in the answer.
    #[serde(default)]
    pub tool_calls: u32,
    /// Tool calls whose arguments parse and match their tool's schema.
    #[serde(default)]
    pub valid_tool_calls: u32,
    /// Index of the first chunk that carried a tool call (its time is the time to the first
    /// tool-call token), if any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_tool_chunk: Option<u32>,
    /// Tokens of the chunks that carried tool calls.
    #[serde(default)]
    pub tool_tokens: u64,
    /// With a response format: whether the answer parsed as JSON and matched the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_valid: Option<bool>,
    /// Why the first failed check failed (`tool get_weather: "city" is a required
    /// property`), for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// How a server answered a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResponseForm {
    /// Streamed, chunk by chunk (the generation APIs).
    #[default]
    Streamed,
    /// One JSON body (the pooling APIs): the request's latency is its only timing.
    Whole,
}

impl ResponseForm {
    /// `true` for [`ResponseForm::Streamed`].
    pub fn is_streamed(&self) -> bool {
        *self == ResponseForm::Streamed
    }
}

/// The images one request carried: how many, their encoded bytes, and the vision tokens
/// the model's preprocessor turns them into (see [`crate::driver::images`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImagesSent {
    /// Images in the request.
    pub count: u32,
    /// Their encoded size (PNG bytes, before base64).
    pub bytes: u64,
    /// Prompt tokens the images become (vision tokens and their start/end markers), of the
    /// images whose size the client knows.
    pub vision_tokens: u64,
    /// Images sent by URL whose size the client does not know (the server fetches them):
    /// their bytes and vision tokens are not in `bytes` and `vision_tokens`.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub of_unknown_size: u32,
}

/// What an engine tells about a request beyond its text: how its answer comes, how many
/// inputs it carried, its images ([`crate::engine::EngineEvent::Carried`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Payload {
    /// Streamed or one JSON body.
    pub response: ResponseForm,
    /// Inputs in the request (batch texts, documents), when several.
    pub inputs: Option<u32>,
    /// Its images, when it carried any.
    pub images: Option<ImagesSent>,
}

/// How a reasoning model's stream divided into its two streams: the reasoning (vLLM's
/// `delta.reasoning`, SGLang's `delta.reasoning_content`) and the answer (`delta.content`,
/// `text`, `tool_calls`). Chunk indices point into [`RequestRecord::chunks`].
///
/// A chunk that carries both (the transition chunk a reasoning parser may send) is the
/// first answer chunk, and its tokens count as answer tokens.
///
/// ```
/// use std::time::Duration;
/// use servebench::record::{Chunk, RequestRecord, StreamSplit};
/// let ms = Duration::from_millis;
/// let mut r = RequestRecord::new(0, ms(10));
/// for t in [30, 40, 50] {
///     r.chunks.push(Chunk { at: ms(t), tokens: 1 });
/// }
/// r.reasoning = Some(StreamSplit {
///     first_reasoning_chunk: Some(0),
///     first_answer_chunk: Some(2),
///     reasoning_tokens: 2,
///     answer_tokens: 1,
/// });
/// assert_eq!(r.time_to_first_reasoning(), Some(ms(20)));
/// assert_eq!(r.time_to_first_answer(), Some(ms(40)));
/// assert_eq!(r.ttft(), Some(ms(20))); // TTFT counts either stream
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StreamSplit {
    /// Index of the first chunk that carried reasoning text, if any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_reasoning_chunk: Option<u32>,
    /// Index of the first chunk that carried answer text, if any did (none: the stream
    /// ended while the model was still reasoning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_chunk: Option<u32>,
    /// Tokens in chunks that carried reasoning only.
    pub reasoning_tokens: u64,
    /// Tokens in chunks that carried answer text.
    pub answer_tokens: u64,
}

impl StreamSplit {
    /// Account one token chunk (index `chunk`, `tokens` tokens) that carried reasoning
    /// and/or answer text.
    pub fn add_chunk(&mut self, chunk: u32, tokens: u32, reasoning: bool, answer: bool) {
        if reasoning && self.first_reasoning_chunk.is_none() {
            self.first_reasoning_chunk = Some(chunk);
        }
        if answer {
            if self.first_answer_chunk.is_none() {
                self.first_answer_chunk = Some(chunk);
            }
            self.answer_tokens = self.answer_tokens.saturating_add(u64::from(tokens));
        } else if reasoning {
            self.reasoning_tokens = self.reasoning_tokens.saturating_add(u64::from(tokens));
        }
    }
}

/// Where a request sits in a multi-turn conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TurnRef {
    /// Conversation id, unique within a run.
    pub conversation: u64,
    /// 1-based turn number within the conversation (within its agent, for a session
    /// with sub-agents).
    pub turn: u32,
    /// 0: the session's main agent; `k ≥ 1`: its `k`-th sub-agent (absent in the file: 0).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub agent: u32,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl RequestRecord {
    /// A new record sent at `sent_at`, with no chunks yet and a successful outcome.
    pub fn new(id: u64, sent_at: Duration) -> Self {
        RequestRecord {
            id,
            scheduled_at: None,
            sent_at,
            ended_at: None,
            chunks: Vec::new(),
            prompt_tokens: None,
            usage_prompt_tokens: None,
            usage_output_tokens: None,
            outcome: Outcome::Success,
            turn: None,
            reasoning: None,
            adapter: None,
            response: ResponseForm::Streamed,
            inputs: None,
            images: None,
            checks: None,
        }
    }

    /// Output tokens counted by the client: the sum of the chunks' token counts.
    pub fn client_output_tokens(&self) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.tokens)).sum()
    }

    /// Output tokens: the server's `usage` when reported (and non-zero), else the client's
    /// count — vLLM's rule (`output_tokens or re-tokenize`).
    pub fn output_tokens(&self) -> u64 {
        self.output_tokens_or(|| self.client_output_tokens())
    }

    /// [`output_tokens`](Self::output_tokens) with the client's count given by the caller
    /// (asked for only when the server reported none), for code that has summed the chunks
    /// already.
    #[inline]
    pub fn output_tokens_or(&self, client_tokens: impl FnOnce() -> u64) -> u64 {
        match self.usage_output_tokens {
            Some(n) if n > 0 => n,
            _ => client_tokens(),
        }
    }

    /// Prompt tokens: the server's `usage` when reported, else the client's count.
    pub fn input_tokens(&self) -> Option<u64> {
        self.usage_prompt_tokens.or(self.prompt_tokens)
    }

    /// Time to first token: first chunk − send time.
    pub fn ttft(&self) -> Option<Duration> {
        self.chunks
            .first()
            .map(|c| c.at.saturating_sub(self.sent_at))
    }

    /// Time to the first reasoning token: the first chunk that carried reasoning − send
    /// time; `None` for a stream without reasoning.
    pub fn time_to_first_reasoning(&self) -> Option<Duration> {
        let i = self.reasoning?.first_reasoning_chunk?;
        let c = self.chunks.get(usize::try_from(i).ok()?)?;
        Some(c.at.saturating_sub(self.sent_at))
    }

    /// Time to the first answer (content) token: the first chunk that carried answer text
    /// − send time. Without a reasoning split every chunk is answer text, so this is the
    /// [`ttft`](Self::ttft); `None` when a reasoning stream never reached its answer.
    pub fn time_to_first_answer(&self) -> Option<Duration> {
        let c = match self.reasoning {
            None => self.chunks.first()?,
            Some(split) => self
                .chunks
                .get(usize::try_from(split.first_answer_chunk?).ok()?)?,
        };
        Some(c.at.saturating_sub(self.sent_at))
    }

    /// End-to-end latency as vLLM measures it: last chunk − send time (an answer that came
    /// whole: its end − send time).
    pub fn latency(&self) -> Option<Duration> {
        match self.response {
            // An answer that came whole ended when its body did.
            ResponseForm::Whole => self.ended_at.map(|e| e.saturating_sub(self.sent_at)),
            ResponseForm::Streamed => self
                .chunks
                .last()
                .map(|c| c.at.saturating_sub(self.sent_at)),
        }
    }
}

/// Live accumulation of finished requests, in hdrhistogram's `Recorder` shape: record one
/// request at a time, merge what another accumulator (another thread, process or host) has
/// recorded. The collector feeds one without knowing what it computes; what a request
/// contributes (a metric definition) is the implementor's, e.g.
/// `servebench::metrics::VllmHistograms`.
pub trait Accumulator: Default {
    /// Why two accumulators could not be merged.
    type Error;

    /// Take one finished request into account.
    fn record(&mut self, r: &RequestRecord);

    /// Add everything `other` recorded.
    fn merge(&mut self, other: &Self) -> Result<(), Self::Error>;
}

/// No live accumulation: records nothing, merges always.
impl Accumulator for () {
    type Error = std::convert::Infallible;

    fn record(&mut self, _: &RequestRecord) {}

    fn merge(&mut self, _: &()) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Errors reading or writing JSON Lines records.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A line is not a valid record.
    #[error("{}line {line}: invalid request record: {source}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Json {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: usize,
        /// The JSON error (with its column).
        source: serde_json::Error,
    },
    /// Reading or writing failed.
    #[error("{}{source}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Io {
        /// The file, when reading or writing one.
        path: Option<PathBuf>,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Write records as JSON Lines: one compact JSON object per line.
pub fn write_jsonl<W: Write>(mut w: W, records: &[RequestRecord]) -> Result<(), RecordError> {
    let io = |source| RecordError::Io { path: None, source };
    for (i, r) in records.iter().enumerate() {
        serde_json::to_writer(&mut w, r).map_err(|source| RecordError::Json {
            path: None,
            line: i + 1,
            source,
        })?;
        w.write_all(b"\n").map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Read JSON Lines records (blank lines are skipped).
pub fn read_jsonl<R: BufRead>(r: R) -> Result<Vec<RequestRecord>, RecordError> {
    let mut out = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|source| RecordError::Io { path: None, source })?;
        if line.trim().is_empty() {
            continue;
        }
        let rec = serde_json::from_str(&line).map_err(|source| RecordError::Json {
            path: None,
            line: i + 1,
            source,
        })?;
        out.push(rec);
    }
    Ok(out)
}

/// [`write_jsonl`] to a file (created or truncated).
pub fn write_jsonl_file(
    path: impl AsRef<Path>,
    records: &[RequestRecord],
) -> Result<(), RecordError> {
    let path = path.as_ref();
    let f = std::fs::File::create(path).map_err(|source| RecordError::Io {
        path: Some(path.to_path_buf()),
        source,
    })?;
    write_jsonl(std::io::BufWriter::new(f), records).map_err(|e| e.in_file(path))
}

/// [`read_jsonl`] from a file; errors name the file and line.
pub fn read_jsonl_file(path: impl AsRef<Path>) -> Result<Vec<RequestRecord>, RecordError> {
    let path = path.as_ref();
    let f = std::fs::File::open(path).map_err(|source| RecordError::Io {
        path: Some(path.to_path_buf()),
        source,
    })?;
    read_jsonl(std::io::BufReader::new(f)).map_err(|e| e.in_file(path))
}

impl RecordError {
    fn in_file(self, p: &Path) -> Self {
        match self {
            RecordError::Json { line, source, .. } => RecordError::Json {
                path: Some(p.to_path_buf()),
                line,
                source,
            },
            RecordError::Io { source, .. } => RecordError::Io {
                path: Some(p.to_path_buf()),
                source,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_errors_name_file_and_line() {
        let dir = std::env::temp_dir().join(format!("servebench-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.jsonl");
        let good = RequestRecord::new(1, Duration::from_millis(1));
        let mut text = serde_json::to_string(&good).unwrap();
        text.push_str("\n\n{\"id\": 2}\n");
        std::fs::write(&path, text).unwrap();
        let err = read_jsonl_file(&path).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("bad.jsonl") && msg.contains("line 3"), "{msg}");
        write_jsonl_file(&path, std::slice::from_ref(&good)).unwrap();
        assert_eq!(read_jsonl_file(&path).unwrap(), vec![good]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
