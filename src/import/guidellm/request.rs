//! One guidellm request: its times resolved across schema versions, its error message
//! classified, and its token timeline reconstructed as chunks (see the module docs of
//! [`super`]).

use std::time::Duration;

use super::raw::RawRequest;
use crate::import::ImportError;
use crate::record::{Chunk, ErrorKind};

/// The times of one request in epoch seconds, resolved across schema versions.
pub(super) struct Times {
    pub(super) scheduled: Option<f64>,
    pub(super) start: Option<f64>,
    pub(super) first: Option<f64>,
    pub(super) last: Option<f64>,
    pub(super) end: Option<f64>,
    /// `request_end_time` in guidellm's sense (request end, else resolve end).
    pub(super) end_for_window: Option<f64>,
    pub(super) iterations: Option<u64>,
}

pub(super) fn times(r: &RawRequest) -> Times {
    if let Some(t) = r.info.as_ref().and_then(|i| i.timings.as_ref()) {
        let start = t.request_start.or(r.request_start_time).or(t.resolve_start);
        let end_for_window = r.request_end_time.or(t.request_end).or(t.resolve_end);
        Times {
            scheduled: t.targeted_start,
            start,
            first: t.first_token_iteration,
            last: t.last_token_iteration,
            end: t.request_end.or(end_for_window),
            end_for_window,
            iterations: t.token_iterations,
        }
    } else {
        // 0.2/0.3 layout.
        let si = r.scheduler_info.as_ref();
        let start = r
            .start_time
            .or(si.and_then(|s| s.request_start))
            .filter(|v| *v >= 0.0);
        let end = r
            .end_time
            .or(si.and_then(|s| s.request_end))
            .filter(|v| *v >= 0.0);
        Times {
            scheduled: si.and_then(|s| s.targeted_start_time).filter(|v| *v >= 0.0),
            start,
            first: r.first_token_time,
            last: r.last_token_time.or(end),
            end,
            end_for_window: end,
            iterations: None,
        }
    }
}

pub(super) fn classify_error(message: &str) -> ErrorKind {
    let m = message.to_ascii_lowercase();
    if m.starts_with("httpstatuserror") || m.contains("status code") {
        ErrorKind::HttpStatus
    } else if m.contains("remoteprotocolerror")
        || m.contains("incomplete chunked")
        || m.contains("peer closed")
    {
        ErrorKind::StreamCut
    } else if m.contains("streaming response returned an error") {
        ErrorKind::ServerError
    } else if m.contains("timeout") {
        ErrorKind::Timeout
    } else if m.contains("connecterror") || m.contains("connection refused") {
        ErrorKind::Connect
    } else {
        ErrorKind::Other
    }
}

/// Converts an epoch timestamp to an offset; the path closure names the field on error.
pub(super) type ToOffset<'a> =
    dyn Fn(f64, &dyn Fn() -> String) -> Result<Duration, ImportError> + 'a;

/// Most token iterations one request may have (a million-token stream is beyond any model;
/// a larger count is corrupt input, and would make the importer allocate without bound).
pub const MAX_ITERATIONS: u64 = 1_000_000;

/// guidellm's token timeline as chunks (see the module docs).
pub(super) fn reconstruct_chunks(
    t: &Times,
    output_tokens: Option<u64>,
    at: &ToOffset<'_>,
    tp: &dyn Fn(&str) -> String,
) -> Result<Vec<Chunk>, ImportError> {
    let iterations = t.iterations.unwrap_or(0);
    let n = match output_tokens {
        Some(n) => n,
        None => iterations,
    };
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match (t.first, t.last) {
        (Some(first), Some(last))
            if n >= 1 && (iterations >= 2 || (t.iterations.is_none() && n >= 2)) =>
        {
            if last < first {
                return Err(ImportError::invalid(
                    tp("last_token_iteration"),
                    "the last token arrives before the first",
                ));
            }
            // 0.2/0.3 files have no iteration count: one token per iteration.
            let iters = if iterations >= 2 { iterations } else { n };
            if iters > MAX_ITERATIONS {
                return Err(ImportError::invalid(
                    tp("token_iterations"),
                    format!("{iters} token iterations in one request (more than {MAX_ITERATIONS})"),
                ));
            }
            let mut chunks = Vec::with_capacity(usize::try_from(iters).unwrap_or(0));
            chunks.push(Chunk {
                at: at(first, &|| tp("first_token_iteration"))?,
                tokens: 1,
            });
            let gaps = iters - 1;
            let rest = n - 1;
            let step = (last - first) / gaps as f64;
            let mut given = 0u64;
            for k in 1..=gaps {
                let time = if k == gaps {
                    last
                } else {
                    first + k as f64 * step
                };
                // Integer share whose running sum is floor(k * rest / gaps).
                let upto = (u128::from(k) * u128::from(rest) / u128::from(gaps)) as u64;
                let tokens = upto - given;
                given = upto;
                chunks.push(Chunk {
                    at: at(time, &|| tp("last_token_iteration"))?,
                    tokens: clamp(tokens),
                });
            }
            Ok(chunks)
        }
        _ => {
            if n == 0 {
                return Ok(Vec::new());
            }
            let time = t.last.or(t.end_for_window);
            match time {
                Some(time) => Ok(vec![Chunk {
                    at: at(time, &|| tp("last_token_iteration"))?,
                    tokens: clamp(n),
                }]),
                None => Ok(Vec::new()),
            }
        }
    }
}
