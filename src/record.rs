//! Per-request raw timings: what a load generator observed for one request. Everything the
//! metrics need is derived from a slice of [`RequestRecord`]s, so a run's raw records can be
//! saved (JSON Lines, one record per line) and every metric recomputed later.
//!
//! Times are [`Duration`] offsets from the run's start (the collector's or importer's
//! origin); serde writes them as `{"secs":…,"nanos":…}`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

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
        }
    }

    /// Output tokens counted by the client: the sum of the chunks' token counts.
    pub fn client_output_tokens(&self) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.tokens)).sum()
    }

    /// Output tokens: the server's `usage` when reported (and non-zero), else the client's
    /// count — vLLM's rule (`output_tokens or re-tokenize`).
    pub fn output_tokens(&self) -> u64 {
        match self.usage_output_tokens {
            Some(n) if n > 0 => n,
            _ => self.client_output_tokens(),
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

    /// End-to-end latency as vLLM measures it: last chunk − send time.
    pub fn latency(&self) -> Option<Duration> {
        self.chunks
            .last()
            .map(|c| c.at.saturating_sub(self.sent_at))
    }
}
