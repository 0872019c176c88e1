//! The prefix-cache hit rate a workload implies: each prompt cut into blocks as a server's
//! prefix cache cuts it (a hash chained over every token before the block's end, so equal
//! hashes mean equal prefixes), a prompt's hit the run of leading blocks an earlier prompt
//! already sent, whole blocks only and at least one token left to compute — vLLM's V1
//! rule, which on a hybrid model (Qwen3.5: Gated DeltaNet beside attention) is also the
//! checkpoint floor: its recurrent state is saved only at block boundaries, and its blocks
//! are large (544 tokens for Qwen3.5-35B-A3B on one GPU). The simulator's cache hashes
//! prompts with the same [`block_hashes`], so on the example server the implied and the
//! measured rates agree unless the cache evicts.
//!
//! Tokens are the prompt's whitespace-separated words (exact for servebench's synthetic
//! prompts on the example server, an approximation of a real tokenizer's), after a run of
//! template tokens.
//!
//! ```
//! use servebench::metrics::prefix::implied_prefix_hits;
//! // Two prompts sharing 8 of 10 words, blocks of 4: the second finds 2 blocks (8 tokens).
//! let p = ["a b c d e f g h i j", "a b c d e f g h x y"];
//! let h = implied_prefix_hits(p.iter().copied(), 0, 4);
//! assert_eq!((h.queried_tokens, h.hit_tokens), (20, 8));
//! // Blocks of 16 (a larger checkpoint interval): nothing is whole, nothing hits.
//! assert_eq!(implied_prefix_hits(p.iter().copied(), 0, 16).hit_tokens, 0);
//! ```

use std::collections::HashSet;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

pub(crate) fn mix(mut h: u64, v: u64) -> u64 {
    h ^= v
        .wrapping_add(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(h << 6)
        .wrapping_add(h >> 2);
    h.wrapping_mul(FNV_PRIME).rotate_left(29)
}

/// Chained hashes of the full blocks of `template_tokens` template tokens followed by the
/// words of `text`, `block_tokens` tokens a block (a trailing partial block has no hash).
pub fn block_hashes(template_tokens: u64, text: &str, block_tokens: u64) -> Vec<u64> {
    let block_tokens = block_tokens.max(1);
    let mut out = Vec::new();
    let mut h = FNV_OFFSET;
    let mut in_block = 0;
    let template = (0..template_tokens).map(|i| mix(0x7465_6d70_6c61_7465, i));
    for unit in template.chain(text.split_whitespace().map(|w| fnv(w.as_bytes()))) {
        h = mix(h, unit);
        in_block += 1;
        if in_block == block_tokens {
            out.push(h);
            in_block = 0;
        }
    }
    out
}

/// Tokens looked up and found, over a sequence of prompts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImpliedHits {
    /// Prompt tokens looked up (template included).
    pub queried_tokens: u64,
    /// Of them, in blocks an earlier prompt already sent.
    pub hit_tokens: u64,
}

impl ImpliedHits {
    /// `hit_tokens / queried_tokens` (`None` for nothing queried).
    pub fn rate(&self) -> Option<f64> {
        (self.queried_tokens > 0).then(|| self.hit_tokens as f64 / self.queried_tokens as f64)
    }
}

/// The hits `prompts`, sent in this order, imply for a cache of `block_tokens`-token blocks
/// that never evicts, each prompt after `template_tokens` template tokens.
pub fn implied_prefix_hits<'a>(
    prompts: impl Iterator<Item = &'a str>,
    template_tokens: u64,
    block_tokens: u64,
) -> ImpliedHits {
    let block = block_tokens.max(1);
    let mut seen = HashSet::new();
    let mut out = ImpliedHits::default();
    for p in prompts {
        let tokens = template_tokens + p.split_whitespace().count() as u64;
        let hashes = block_hashes(template_tokens, p, block);
        // Whole blocks, leaving at least one prompt token to compute.
        let usable = (tokens.saturating_sub(1) / block) as usize;
        let hit = hashes
            .iter()
            .take(usable)
            .take_while(|h| seen.contains(*h))
            .count() as u64;
        out.queried_tokens += tokens;
        out.hit_tokens += hit * block;
        seen.extend(hashes);
    }
    out
}

/// The implied hits beside the server's measured rate, and whether they disagree beyond
/// noise: by more than 5 points and more than a quarter of the implied rate.
///
/// ```
/// use servebench::metrics::prefix::{prefix_cache_figures, ImpliedHits};
/// let implied = ImpliedHits { queried_tokens: 10_000, hit_tokens: 6_000 };
/// assert!(!prefix_cache_figures(implied, 544, Some(0.58)).disagree);
/// assert!(prefix_cache_figures(implied, 544, Some(0.20)).disagree);
/// ```
pub fn prefix_cache_figures(
    implied: ImpliedHits,
    block_tokens: u64,
    measured: Option<f64>,
) -> crate::result::PrefixCacheFigures {
    let rate = implied.rate().unwrap_or(0.0);
    crate::result::PrefixCacheFigures {
        block_tokens,
        queried_tokens: implied.queried_tokens,
        implied_hit_tokens: implied.hit_tokens,
        implied_hit_rate: rate,
        measured_hit_rate: measured,
        disagree: measured.is_some_and(|m| {
            let d = (m - rate).abs();
            d > 0.05 && d > 0.25 * rate
        }),
    }
}
