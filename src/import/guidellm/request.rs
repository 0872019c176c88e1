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

/// Most token iterations one request may have (a million-token stream is beyond any model;
/// a larger count is corrupt input, and would make the importer allocate without bound).
pub const MAX_ITERATIONS: u64 = 1_000_000;

/// guidellm's token timeline as chunks (see the module docs). `at` converts an epoch
/// timestamp to an offset (its path closure names the field on error).
pub(super) fn reconstruct_chunks(
    t: &Times,
    output_tokens: Option<u64>,
    at: impl Fn(f64, &dyn Fn() -> String) -> Result<Duration, ImportError>,
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
            // Integer shares whose running sum after k iterations is
            // floor(k * rest / gaps): each adds `whole`, plus one when the remainder
            // (k * part mod gaps, kept in `carry`) wraps.
            let (whole, part) = (rest / gaps, rest % gaps);
            let mut carry = 0u64;
            for k in 1..=gaps {
                let time = if k == gaps {
                    last
                } else {
                    first + k as f64 * step
                };
                // carry < gaps and part < gaps: no overflow (gaps ≤ MAX_ITERATIONS).
                carry += part;
                let tokens = if carry >= gaps {
                    carry -= gaps;
                    whole + 1
                } else {
                    whole
                };
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

/// `Duration::try_from_secs_f64(secs).ok()`, computed directly for 2^-20 ≤ `secs` < 2^33
/// (all the offsets of a run; this runs once per chunk): the exact product of `secs` and
/// 10^9 rounded to the nearest nanosecond, ties to even, which is what the standard
/// library computes.
#[inline]
pub(super) fn offset(secs: f64) -> Option<Duration> {
    let bits = secs.to_bits();
    // The biased exponent (a negative `secs` has the sign bit set: out of range).
    let biased = bits >> 52;
    if (1003..1056).contains(&biased) {
        // secs = m · 2^(biased − 1075), with m < 2^53: the product m · 10^9 < 2^83.
        let m = (bits & ((1 << 52) - 1)) | (1 << 52);
        let shift = (1075 - biased) as u32; // 20 ..= 72
        let p = u128::from(m) * 1_000_000_000;
        let ns = (p >> shift) as u64; // < 2^63
        let rem = p & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && ns & 1 == 1);
        return Some(Duration::from_nanos(ns + u64::from(up)));
    }
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn std_offset(secs: f64) -> Option<Duration> {
        Duration::try_from_secs_f64(secs).ok()
    }

    #[test]
    fn offset_is_the_standard_conversion_on_ties_and_edges() {
        // m / 1024 with m odd is a tie at the nanosecond (m · 976562.5 ns).
        for m in (1..20_000u64).step_by(7) {
            let secs = m as f64 / 1024.0;
            assert_eq!(offset(secs), std_offset(secs), "{secs}");
        }
        for secs in [
            0.0,
            -0.0,
            -1.0,
            f64::MIN_POSITIVE,
            2f64.powi(-20),
            2f64.powi(-20) * (1.0 - f64::EPSILON),
            2f64.powi(33),
            2f64.powi(33) * (1.0 - f64::EPSILON / 2.0),
            1e-9,
            0.5e-9,
            1.5e-9,
            f64::NAN,
            f64::INFINITY,
            1e30,
            u64::MAX as f64,
        ] {
            assert_eq!(offset(secs), std_offset(secs), "{secs}");
        }
    }

    proptest! {
        #[test]
        fn offset_is_the_standard_conversion(bits in any::<u64>(), secs in 0.0..1e6f64, scale in -30i32..40) {
            let any = f64::from_bits(bits);
            prop_assert_eq!(offset(any), std_offset(any));
            let scaled = secs * 2f64.powi(scale);
            prop_assert_eq!(offset(scaled), std_offset(scaled));
            // The offsets of a run: epoch times minus an origin.
            let diff = (1.7e9 + secs) - 1.7e9;
            prop_assert_eq!(offset(diff), std_offset(diff));
        }
    }
}
