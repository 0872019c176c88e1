//! Per-request quantities, one function per formula and convention. The reference
//! computation (`Convention::Vllm`), the one-pass fast path, the live histograms
//! ([`VllmHistograms`](super::VllmHistograms)) and the time-sliced summaries in
//! [`crate::observe`] all call these, so a definition is written once.
//!
//! guidellm's per-request quantities (TPOT including the TTFT, "ITL" as the per-request
//! decode mean) are written once too, on its request view in [`super::guidellm`].
//!
//! ```
//! use std::time::Duration;
//! use servebench::metrics::{vllm_itl_gaps, vllm_success, vllm_tpot, vllm_tpot_s};
//! use servebench::record::{Chunk, RequestRecord};
//!
//! let ms = Duration::from_millis;
//! let mut r = RequestRecord::new(0, ms(0));
//! r.chunks = vec![Chunk { at: ms(100), tokens: 1 }, Chunk { at: ms(150), tokens: 2 }];
//! assert!(vllm_success(&r));
//! // (e2el − ttft) / (output − 1) = (0.150 − 0.100) / 2
//! assert_eq!(vllm_tpot(&r), Some(ms(25)));
//! assert!((vllm_tpot_s(0.100, 0.150, 3).unwrap() - 0.025).abs() < 1e-15);
//! assert_eq!(vllm_tpot_s(0.1, 0.2, 1), None);
//! assert_eq!(vllm_itl_gaps(&r).collect::<Vec<_>>(), vec![ms(50)]);
//! ```

use std::time::Duration;

use crate::record::RequestRecord;

/// A success in vLLM's sense: outcome success **and** at least one chunk (vLLM marks a
/// stream without a token chunk as failed).
#[inline]
pub fn vllm_success(r: &RequestRecord) -> bool {
    r.outcome.is_success() && !r.chunks.is_empty()
}

/// vLLM's time per output token of one request, in seconds:
/// `(e2el_s − ttft_s) / (output_tokens − 1)`, for `output_tokens > 1` only (`None`
/// otherwise: vLLM leaves such requests out of its TPOT list and counts 0 for goodput).
/// The arithmetic is vLLM's, in f64 seconds, so results match it bit for bit.
#[inline]
pub fn vllm_tpot_s(ttft_s: f64, e2el_s: f64, output_tokens: u64) -> Option<f64> {
    (output_tokens > 1).then(|| (e2el_s - ttft_s) / (output_tokens - 1) as f64)
}

/// [`vllm_tpot_s`]'s definition on a record's integer nanoseconds: (E2EL − TTFT) ÷
/// (output tokens − 1), with TTFT ([`RequestRecord::ttft`]), E2EL
/// ([`RequestRecord::latency`]) and the output length ([`RequestRecord::output_tokens`]);
/// the difference is exact and the division truncates to whole nanoseconds. `None`
/// without a chunk or with fewer than two output tokens. For histograms and plots; the
/// reported statistics use [`vllm_tpot_s`], whose float arithmetic is vLLM's.
pub fn vllm_tpot(r: &RequestRecord) -> Option<Duration> {
    let n = r.output_tokens();
    if n <= 1 {
        return None;
    }
    let decode = r.latency()?.saturating_sub(r.ttft()?);
    let per = decode.as_nanos() / u128::from(n - 1);
    Some(Duration::from_nanos(u64::try_from(per).unwrap_or(u64::MAX)))
}

/// vLLM's inter-token latencies of one request: every gap between consecutive chunks,
/// never divided by the chunk's token count (a chunk earlier than the one before gives 0).
pub fn vllm_itl_gaps(r: &RequestRecord) -> impl Iterator<Item = Duration> + '_ {
    r.chunks.windows(2).map(|w| w[1].at.saturating_sub(w[0].at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Chunk, Outcome};

    fn record(chunks_ms: &[u64], usage: Option<u64>) -> RequestRecord {
        let mut r = RequestRecord::new(0, Duration::from_millis(10));
        r.chunks = chunks_ms
            .iter()
            .map(|&ms| Chunk {
                at: Duration::from_millis(ms),
                tokens: 1,
            })
            .collect();
        r.usage_output_tokens = usage;
        r
    }

    #[test]
    fn vllm_tpot_uses_the_server_count_and_skips_single_tokens() {
        // ttft 0.09 s, e2el 0.39 s, 4 tokens by usage (2 chunks seen): 0.3 / 3.
        let r = record(&[100, 400], Some(4));
        assert_eq!(vllm_tpot(&r), Some(Duration::from_millis(100)));
        assert_eq!(vllm_tpot_s(0.09, 0.39, 4), Some((0.39 - 0.09) / 3.0));
        assert_eq!(vllm_tpot_s(0.09, 0.39, 1), None);
        assert_eq!(vllm_tpot(&record(&[100], None)), None);
        assert_eq!(vllm_tpot(&record(&[], Some(5))), None);
        // Chunk count when usage is 0 (not reported by the server); 200 ms / 3 truncated.
        let r = record(&[100, 150, 200, 300], Some(0));
        assert_eq!(vllm_tpot(&r), Some(Duration::from_nanos(66_666_666)));
    }

    #[test]
    fn vllm_success_needs_a_chunk_and_a_successful_outcome() {
        assert!(vllm_success(&record(&[100], None)));
        assert!(!vllm_success(&record(&[], None)));
        let mut failed = record(&[100], None);
        failed.outcome = Outcome::Incomplete {
            reason: "cut".into(),
        };
        assert!(!vllm_success(&failed));
    }

    #[test]
    fn itl_gaps_are_every_chunk_gap_saturating() {
        let r = record(&[100, 130, 120, 200], None);
        let gaps: Vec<u64> = vllm_itl_gaps(&r).map(|d| d.as_millis() as u64).collect();
        assert_eq!(gaps, vec![30, 0, 80]);
    }
}
