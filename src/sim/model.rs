//! The physics of one vLLM engine step for Qwen3.5-35B-A3B on one H200: a roofline over
//! weight/state streaming and GEMM/attention compute, calibrated against the seed's BF16
//! baseline (`../shared/reference/h200-step-model.md` §6).

/// Full-attention layers (the other 30 are Gated DeltaNet).
pub const FULL_ATTENTION_LAYERS: f64 = 10.0;
/// Routed experts per MoE layer.
pub const EXPERTS: f64 = 256.0;
/// Experts each token is routed to.
pub const TOP_K: f64 = 8.0;
/// MoE layers (every layer).
pub const MOE_LAYERS: f64 = 40.0;
/// Parameters of one routed expert: 3 × 2048 × 512.
pub const EXPERT_PARAMS: f64 = 3.0 * 2048.0 * 512.0;
/// lm_head parameters: vocabulary 248,320 × hidden 2048.
pub const LM_HEAD_PARAMS: f64 = 248_320.0 * 2048.0;
/// Active non-expert parameters per token: GDN + attention + shared expert + routers.
pub const DENSE_ACTIVE_PARAMS: f64 = 1.011e9 + 0.273e9 + 0.126e9 + 0.021e9;
/// Full-attention KV bytes per token in BF16: 10 layers × K,V × 2 heads × 256 × 2 B.
pub const KV_BYTES_PER_TOKEN: f64 = 20_480.0;
/// Gated-DeltaNet recurrent + conv state per sequence, BF16: 30 × (32·128·128 + 3·8192) × 2 B.
pub const GDN_STATE_BYTES: f64 = 30.0 * (32.0 * 128.0 * 128.0 + 3.0 * 8192.0) * 2.0;
/// Attention FLOPs per (query token × context token): 4 · 16 heads · 256 · 10 layers.
pub const ATTENTION_FLOPS_PER_PAIR: f64 = 4.0 * 16.0 * 256.0 * FULL_ATTENTION_LAYERS;
/// Tokens per KV block (the hybrid allocator's unified page: 544 tokens).
pub const BLOCK_TOKENS: u64 = 544;
/// Bytes of one block id (10 layer pages of 544 × 2048 B).
pub const BLOCK_BYTES: f64 = 544.0 * 2048.0 * 10.0;
/// Blocks of GDN state each running sequence holds (3 GDN layer groups).
pub const STATE_BLOCKS_PER_SEQ: u64 = 3;

/// H200 SXM peaks.
pub const PEAK_BF16_FLOPS: f64 = 989e12;
/// Dense FP8 tensor peak.
pub const PEAK_FP8_FLOPS: f64 = 1979e12;
/// HBM3e bandwidth, bytes/s.
pub const HBM_BYTES_PER_S: f64 = 4.8e12;

/// Weight precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    /// `Qwen/Qwen3.5-35B-A3B` (the seed's baseline).
    Bf16,
    /// `Qwen/Qwen3.5-35B-A3B-FP8`.
    Fp8,
}

/// The per-step cost constants (see the reference §6.1 and §6.4).
#[derive(Debug, Clone, PartialEq)]
pub struct StepModel {
    /// Fixed cost of a step, s.
    pub t0_s: f64,
    /// Achieved fraction of HBM bandwidth.
    pub eta_bw: f64,
    /// Achieved fraction of the weight precision's GEMM peak.
    pub eta_mm: f64,
    /// Achieved fraction of the BF16 peak in attention.
    pub eta_att: f64,
    /// Extra cost per running sequence in a step that contains prefill tokens, s (0.21 ms;
    /// the reference's Little's-law estimate is 0.17–0.20 ms).
    pub t_mix_s: f64,
    /// Bytes per weight (2 BF16, 1 FP8).
    pub weight_bytes: f64,
    /// GEMM peak for the weight precision, FLOP/s.
    pub peak_mm: f64,
    /// Expert-read bandwidth efficiency relative to `eta_bw` (FP8 block-scaled MoE: 0.7).
    pub expert_bw_factor: f64,
    /// KV bytes per token (halved by an FP8 KV cache).
    pub kv_bytes_per_token: f64,
}

impl StepModel {
    /// The calibrated model for a weight precision and KV-cache dtype.
    pub fn new(weights: Weights, kv_fp8: bool) -> StepModel {
        let kv = if kv_fp8 {
            KV_BYTES_PER_TOKEN / 2.0
        } else {
            KV_BYTES_PER_TOKEN
        };
        match weights {
            Weights::Bf16 => StepModel {
                t0_s: 4.5e-3,
                eta_bw: 0.80,
                eta_mm: 0.30,
                eta_att: 0.60,
                t_mix_s: 0.21e-3,
                weight_bytes: 2.0,
                peak_mm: PEAK_BF16_FLOPS,
                expert_bw_factor: 1.0,
                kv_bytes_per_token: kv,
            },
            Weights::Fp8 => StepModel {
                t0_s: 4.5e-3,
                eta_bw: 0.80,
                eta_mm: 0.20,
                eta_att: 0.60,
                t_mix_s: 0.21e-3,
                weight_bytes: 1.0,
                peak_mm: PEAK_FP8_FLOPS,
                expert_bw_factor: 0.7,
                kv_bytes_per_token: kv,
            },
        }
    }

    /// Seconds the GPU spends on a step with this load.
    pub fn step_seconds(&self, load: &StepLoad) -> f64 {
        let n = load.tokens as f64;
        let s = load.seqs as f64;
        let f_lin = 2.0 * n * (DENSE_ACTIVE_PARAMS + TOP_K * EXPERT_PARAMS * MOE_LAYERS)
            + 2.0 * s * LM_HEAD_PARAMS;
        let experts = EXPERTS * (1.0 - (1.0 - TOP_K / EXPERTS).powf(n));
        let w_bytes = self.weight_bytes * (DENSE_ACTIVE_PARAMS + LM_HEAD_PARAMS)
            + self.weight_bytes * MOE_LAYERS * experts * EXPERT_PARAMS / self.expert_bw_factor;
        let bw = HBM_BYTES_PER_S * self.eta_bw;
        let t_lin = (f_lin / (self.peak_mm * self.eta_mm)).max(w_bytes / bw);
        let m_att = self.kv_bytes_per_token * load.kv_tokens as f64 + s * 2.0 * GDN_STATE_BYTES;
        let t_att = (load.attention_flops / (PEAK_BF16_FLOPS * self.eta_att)).max(m_att / bw);
        let mix = if load.has_prefill {
            self.t_mix_s * s
        } else {
            0.0
        };
        self.t0_s + t_lin + t_att + mix
    }
}

/// What one step computes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepLoad {
    /// Tokens scheduled (decode tokens + prefill chunk tokens).
    pub tokens: u64,
    /// Sequences in the batch.
    pub seqs: u64,
    /// KV tokens read (context + new), summed over sequences.
    pub kv_tokens: u64,
    /// Causal attention FLOPs.
    pub attention_flops: f64,
    /// Whether any sequence is prefilling.
    pub has_prefill: bool,
}

impl StepLoad {
    /// Adds a sequence computing `n` new tokens after `c` cached ones.
    pub fn add(&mut self, n: u64, c: u64, prefill: bool) {
        self.tokens += n;
        self.seqs += 1;
        self.kv_tokens += c + n;
        let nf = n as f64;
        self.attention_flops += ATTENTION_FLOPS_PER_PAIR * nf * (c as f64 + (nf + 1.0) / 2.0);
        self.has_prefill |= prefill;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(b: u64, ctx: u64) -> f64 {
        let mut l = StepLoad::default();
        for _ in 0..b {
            l.add(1, ctx, false);
        }
        StepModel::new(Weights::Bf16, false).step_seconds(&l) * 1000.0
    }

    /// The reference's decode anchors (§6.1): measured 6.4–6.9, 11.7, 18.9, 27.8 ms.
    #[test]
    fn decode_steps_match_measured_anchors() {
        let close = |got: f64, want: f64| (got - want).abs() / want < 0.06;
        assert!(close(decode(2, 600), 6.6), "{}", decode(2, 600));
        assert!(close(decode(13, 600), 11.7), "{}", decode(13, 600));
        assert!(close(decode(40, 600), 18.9), "{}", decode(40, 600));
        assert!(close(decode(200, 2000), 27.8), "{}", decode(200, 2000));
    }

    #[test]
    fn prefill_chunk_rate_and_fp8_is_faster_at_decode() {
        let mut l = StepLoad::default();
        l.add(8192, 0, true);
        let t = StepModel::new(Weights::Bf16, false).step_seconds(&l);
        assert!((0.14..0.16).contains(&t), "{t}");
        let mut d = StepLoad::default();
        for _ in 0..40 {
            d.add(1, 600, false);
        }
        let bf = StepModel::new(Weights::Bf16, false).step_seconds(&d);
        let fp = StepModel::new(Weights::Fp8, false).step_seconds(&d);
        assert!(fp < bf * 0.8, "{fp} vs {bf}");
    }
}
