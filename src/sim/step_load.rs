//! What one engine step computes ([`StepLoad`]): the tokens, sequences, sampled rows, KV
//! reads and attention pairs of its batch, which the step model ([`super::model`]) and the
//! operator model ([`super::operators`]) turn into time.

/// What one step computes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepLoad {
    /// Tokens scheduled (decode tokens, speculative tokens to verify, prefill chunk tokens).
    pub tokens: u64,
    /// Sequences in the batch.
    pub seqs: u64,
    /// Positions whose logits are computed (one per sequence, `1 + k` per sequence
    /// verifying `k` draft tokens).
    pub sampled_rows: u64,
    /// KV tokens read (context + new), summed over sequences.
    pub kv_tokens: u64,
    /// Causal (query token × context token) pairs; × the model's FLOPs per pair.
    pub attention_pairs: f64,
    /// Whether any sequence is prefilling.
    pub has_prefill: bool,
    /// Tokens of decoding sequences (one each, `1 + k` when verifying `k` drafts).
    pub decode_tokens: u64,
    /// KV tokens read by decoding sequences (context + new).
    pub decode_kv_tokens: u64,
    /// Causal (query × context) pairs of prefill tokens.
    pub prefill_pairs: f64,
    /// Draft tokens verified this step (a decoding sequence's tokens beyond its first):
    /// vLLM's Gated DeltaNet kernel writes the linear-attention state after each of them
    /// (into the request's extra state slots, so a rejected token can be rolled back).
    pub spec_tokens: u64,
}

impl StepLoad {
    /// Adds a sequence computing `n` new tokens after `c` cached ones.
    pub fn add(&mut self, n: u64, c: u64, prefill: bool) {
        self.add_sampled(n, c, prefill, 1);
    }

    /// [`StepLoad::add`] with `rows` positions sampled (`1 + k` when verifying `k` draft
    /// tokens).
    pub fn add_sampled(&mut self, n: u64, c: u64, prefill: bool, rows: u64) {
        self.tokens += n;
        self.seqs += 1;
        self.sampled_rows += rows;
        self.kv_tokens += c + n;
        let nf = n as f64;
        let pairs = nf * (c as f64 + (nf + 1.0) / 2.0);
        self.attention_pairs += pairs;
        self.has_prefill |= prefill;
        if prefill {
            self.prefill_pairs += pairs;
        } else {
            self.decode_tokens += n;
            self.decode_kv_tokens += c + n;
            self.spec_tokens += n.saturating_sub(1);
        }
    }
}
