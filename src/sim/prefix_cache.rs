//! The simulator's prefix cache, as vLLM's V1 KV cache manager keeps it: the prompt is cut
//! into blocks of the KV block size, each full block is named by a hash chained over every
//! token before it (so equal hashes mean equal prefixes), computed blocks stay in the pool
//! after their request ends, and an unreferenced cached block is evicted, least recently
//! used first, only when the pool needs the space. Cached blocks share the KV pool with the
//! running requests: the engine counts them as held, and evicts to make room.
//!
//! The simulator has no tokenizer: a prompt's tokens are its chat template (a fixed run of
//! [`H200Sim`](super::H200Sim)'s template tokens) followed by its whitespace-separated words,
//! one token each — exact for the one-token words servebench's datasets generate.
//!
//! vLLM 0.17 defaults for this model type (Qwen3.5, a hybrid of Gated DeltaNet and full
//! attention): prefix caching runs in `mamba_cache_mode="align"`, where the GDN state is
//! saved at block boundaries and the block size is the hybrid allocator's unified page
//! (544 tokens for this model on one GPU, 1088 with an fp8 KV cache); hits are whole
//! blocks, and at least one prompt token is always computed. Whether it is on by default
//! for hybrid models has changed across vLLM releases (older ones disabled it for them);
//! the seed study enables it explicitly as a tuning step, so the simulator's baseline has
//! it off and `--enable-prefix-caching` turns it on.
//!
//! ```
//! use servebench::sim::{block_hashes, PrefixCache};
//! let a = block_hashes(2, "a b c d e f", 4); // 2 template tokens + 6 words: 2 full blocks
//! let b = block_hashes(2, "a b c d x y", 4);
//! assert_eq!(a.len(), 2);
//! assert_eq!(a[0], b[0]);
//! assert_ne!(a[1], b[1]);
//! let mut cache = PrefixCache::default();
//! assert_eq!(cache.insert_new(&a), a); // both blocks become cached, held by their request
//! cache.release(&a);
//! assert_eq!(cache.lookup(&b), 1);
//! assert_eq!((cache.len(), cache.evictable()), (2, 2));
//! assert_eq!(cache.evict(5), 2);
//! assert_eq!(cache.lookup(&b), 0);
//! ```

use std::collections::{BTreeMap, HashMap};

pub use crate::metrics::prefix::block_hashes;

#[derive(Debug, Clone, Copy)]
struct Entry {
    refs: u32,
    /// LRU key while unreferenced.
    stamp: u64,
}

/// Cached blocks by hash, with reference counts and an LRU of the unreferenced ones. See
/// the module docs.
#[derive(Debug, Clone, Default)]
pub struct PrefixCache {
    blocks: HashMap<u64, Entry>,
    lru: BTreeMap<u64, u64>,
    clock: u64,
}

impl PrefixCache {
    /// Blocks cached (referenced or not): the pool blocks the cache holds.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// `true` when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Cached blocks no running request references: evictable.
    pub fn evictable(&self) -> usize {
        self.lru.len()
    }

    /// How many leading `hashes` are cached (the hit, in blocks).
    pub fn lookup(&self, hashes: &[u64]) -> usize {
        hashes
            .iter()
            .take_while(|h| self.blocks.contains_key(h))
            .count()
    }

    /// References the cached blocks `hashes` (a hit: they leave the LRU while in use).
    /// Every hash must be cached ([`PrefixCache::lookup`]); others are skipped.
    pub fn acquire(&mut self, hashes: &[u64]) {
        for h in hashes {
            if let Some(e) = self.blocks.get_mut(h) {
                if e.refs == 0 {
                    self.lru.remove(&e.stamp);
                }
                e.refs += 1;
            }
        }
    }

    /// A request computed the blocks `hashes`: those not cached yet become cached, referenced
    /// by it, and are returned (they move from the request to the cache); the request keeps
    /// its own copy of the others and must not [`release`](Self::release) them.
    pub fn insert_new(&mut self, hashes: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        for &h in hashes {
            if let std::collections::hash_map::Entry::Vacant(v) = self.blocks.entry(h) {
                v.insert(Entry { refs: 1, stamp: 0 });
                out.push(h);
            }
        }
        out
    }

    /// Drops one reference to each of `hashes`; a block nobody references becomes evictable
    /// (most recently used last; the tail of a prompt is evicted before its head).
    pub fn release(&mut self, hashes: &[u64]) {
        for h in hashes.iter().rev() {
            if let Some(e) = self.blocks.get_mut(h) {
                e.refs = e.refs.saturating_sub(1);
                if e.refs == 0 {
                    self.clock += 1;
                    e.stamp = self.clock;
                    self.lru.insert(self.clock, *h);
                }
            }
        }
    }

    /// Evicts up to `n` unreferenced blocks, least recently used first; returns how many.
    pub fn evict(&mut self, n: usize) -> usize {
        let mut freed = 0;
        while freed < n {
            let Some((_, h)) = self.lru.pop_first() else {
                break;
            };
            self.blocks.remove(&h);
            freed += 1;
        }
        freed
    }

    /// Blocks referenced by running requests (not evictable).
    pub fn in_use(&self) -> usize {
        self.blocks.len() - self.lru.len()
    }
}

/// The prefix cache's counters, in tokens, as vLLM counts them: every newly scheduled
/// request queries its prompt tokens; hits are the tokens found cached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrefixCacheCounts {
    /// Prompt tokens looked up.
    pub queries_tokens: u64,
    /// Of them, found cached (their prefill is skipped).
    pub hits_tokens: u64,
}
