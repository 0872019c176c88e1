//! What guidellm 0.5 + GPUStack would have reported for a simulated run.
//!
//! With vLLM 0.17's `--reasoning-parser qwen3` every reasoning token streams as
//! `delta.reasoning`, which guidellm-0.5's `chat_completions_with_reasoning` handler ignored:
//! it counted only the first (role) chunk. So every request shows **one token iteration** at
//! its first-token time carrying all its output tokens. [`reasoning_blind`] applies that to
//! the records; [`crate::metrics::compute`] with [`crate::Convention::Guidellm`] then computes
//! guidellm's definitions (TPOT includes the TTFT and is token-weighted, "ITL" is the
//! per-request decode mean, rates are event-rate means over the span of token events, peak =
//! largest instantaneous rate with events merged within 0.1 ms), as
//! [`super::run::guidellm_view`] does.

use crate::record::{Chunk, RequestRecord};
use crate::rng::Rng;

/// How long Qwen3.5 thinks before answering: log-normal reasoning length (median tokens,
/// log-space sigma). A request whose output budget ends first never emits a content delta.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thinking {
    /// Median reasoning length, tokens.
    pub median: f64,
    /// Log-space sigma.
    pub sigma: f64,
}

/// Real ShareGPT questions: the model usually answers within a couple of thousand tokens
/// (fitted so that about 12% of ShareGPT output tokens get real timing, as the seed's
/// mixture TPOT implies).
pub const THINKING_SHAREGPT: Thinking = Thinking {
    median: 1500.0,
    sigma: 1.0,
};
/// Random-token prompts: long confused reasoning (about 5.5% of 2000-token budgets end
/// thinking, none of the 100–128-token ones, as the seed's Generation Heavy TPOT implies).
pub const THINKING_RANDOM: Thinking = Thinking {
    median: 6000.0,
    sigma: 0.7,
};

/// The records as guidellm's reasoning-blind handler saw them: the role chunk at first-token
/// time, then only content deltas (after the reasoning ends, if it ends within the budget).
/// guidellm spreads a request's remaining tokens over its counted iterations.
pub fn reasoning_blind(
    records: &[RequestRecord],
    thinking: Thinking,
    seed: u64,
) -> Vec<RequestRecord> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let mut rng = Rng::new(seed ^ r.id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let reasoning = rng.lognormal(thinking.median, thinking.sigma).round() as usize;
            let total = r.output_tokens();
            if let Some(first) = r.chunks.first().copied() {
                let content = r.chunks.get(reasoning.max(1)..).unwrap_or(&[]);
                if content.is_empty() {
                    r.chunks = vec![Chunk {
                        at: first.at,
                        tokens: u32::try_from(total).unwrap_or(u32::MAX),
                    }];
                } else {
                    let rest = total.saturating_sub(1);
                    let k = content.len() as u64;
                    let mut chunks = vec![Chunk {
                        at: first.at,
                        tokens: 1,
                    }];
                    for (i, c) in content.iter().enumerate() {
                        let i = i as u64;
                        let share = rest * (i + 1) / k - rest * i / k;
                        chunks.push(Chunk {
                            at: c.at,
                            tokens: u32::try_from(share).unwrap_or(u32::MAX),
                        });
                    }
                    r.chunks = chunks;
                }
            }
            r
        })
        .collect()
}
