//! The physics of one vLLM engine step: either the sum of the model's operators timed from
//! the GPU's measured tables ([`StepModel::with_operator_tables`], what dense and BF16
//! deployments run; [`super::uses_operator_tables`]), or a roofline over weight/state
//! streaming and GEMM/attention compute for any model of the Qwen3.5 family
//! ([`ModelSpec`]) on any GPU ([`GpuSpec`]), with one set of achieved-efficiency constants
//! ([`EFFICIENCIES`]) shared by every model and GPU. The roofline's constants were fitted
//! once, to the seed's Qwen3.5-35B-A3B runs on an H200; it runs the FP8 MoE deployments.
//! See the guide's table of fitted constants ([`crate::guide::simulator`]). MTP
//! speculative decoding adds the draft passes of the model's MTP layer
//! ([`StepModel::draft_seconds`]); the verification is an ordinary step over `1 + k`
//! tokens per sequence.

use std::sync::Arc;

use super::kernels::{Dtype, KernelTable};
use super::operators::{draft_pass_overhead_s, OperatorModel};
use super::spec::{GpuSpec, ModelSpec};
use super::step_load::StepLoad;

/// Bytes of one Qwen3.5-35B-A3B block id (10 layer pages of 544 × 2048 B); the engine's
/// tests size their KV pools in these.
#[cfg(test)]
pub(crate) const BLOCK_BYTES: f64 = 544.0 * 2048.0 * 10.0;

/// Weight precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    /// BF16 (e.g. `Qwen/Qwen3.5-35B-A3B`, the seed's baseline).
    Bf16,
    /// FP8 linear layers (`Qwen/Qwen3.5-35B-A3B-FP8`, or `--quantization fp8`); embedding,
    /// lm_head and the vision tower stay BF16.
    Fp8,
}

/// Achieved fractions of the data-sheet peaks and the fixed costs, shared by every model
/// and GPU. Each was fitted to the seed's Qwen3.5-35B-A3B BF16/FP8 runs on one H200
/// (reference §6); the README lists them with the data behind each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Efficiencies {
    /// Fixed cost per decoder layer per step (kernel launches of a CUDA-graph replay,
    /// norms, the sampler's share), s: 4.5 ms over the 35B model's 40 layers.
    pub t_layer_s: f64,
    /// Achieved fraction of HBM bandwidth when streaming weights, KV and state.
    pub eta_bw: f64,
    /// Achieved fraction of the BF16 dense peak in ordinary (dense) GEMMs: projections,
    /// dense MLPs, shared experts, lm_head. Assumed, not fitted: the common 60 % rule of
    /// thumb for large cuBLAS GEMMs.
    pub eta_dense: f64,
    /// Achieved fraction of the BF16 dense peak in the routed experts' grouped GEMMs
    /// (tiny N = 512 experts, Triton fused-MoE): derived from the fitted 30 % of the
    /// seed's whole linear path with `eta_dense` for its dense share.
    pub eta_moe: f64,
    /// The FP8 path reaches this fraction of the BF16 path's efficiency (of the FP8 peak):
    /// fitted, 0.20 / 0.30 on the seed's FP8 runs.
    pub fp8_eta_factor: f64,
    /// Achieved fraction of the BF16 peak in attention.
    pub eta_att: f64,
    /// Extra cost per running sequence in a step that runs outside a full CUDA graph (any
    /// prefill tokens, or more tokens than the largest captured graph), s.
    pub t_mix_s: f64,
    /// FP8 block-scaled expert reads reach this fraction of the BF16 streaming rate.
    pub fp8_expert_bw_factor: f64,
}

/// The shared constants (reference §6.1, §6.4; `t_mix` 0.21 ms where the reference's
/// Little's-law estimate is 0.17–0.20 ms).
pub const EFFICIENCIES: Efficiencies = Efficiencies {
    t_layer_s: 4.5e-3 / 40.0,
    eta_bw: 0.80,
    eta_dense: 0.60,
    // 2.438 / 0.30 = 1.007 / eta_moe + 1.431 / 0.60 (active GFLOP/2 per token of the 35B).
    eta_moe: 1.007 / (2.438 / 0.30 - 1.431 / 0.60),
    fp8_eta_factor: 0.20 / 0.30,
    eta_att: 0.60,
    t_mix_s: 0.21e-3,
    fp8_expert_bw_factor: 0.7,
};

/// The per-step cost model of one deployment (model × GPU × precision × KV dtype).
#[derive(Debug, Clone, PartialEq)]
pub struct StepModel {
    /// Fixed cost of a step, s.
    pub t0_s: f64,
    /// Achieved fraction of HBM bandwidth.
    pub eta_bw: f64,
    /// Achieved fraction of the weight precision's GEMM peak in dense GEMMs.
    pub eta_mm: f64,
    /// Achieved fraction of the weight precision's GEMM peak in the routed experts.
    pub eta_moe: f64,
    /// Achieved fraction of the BF16 peak in attention.
    pub eta_att: f64,
    /// Extra cost per running sequence in a step outside a full CUDA graph, s.
    pub t_mix_s: f64,
    /// Bytes per linear-layer weight (2 BF16, 1 FP8).
    pub weight_bytes: f64,
    /// GEMM peak for the weight precision, FLOP/s.
    pub peak_mm: f64,
    /// Expert-read bandwidth efficiency relative to `eta_bw`.
    pub expert_bw_factor: f64,
    /// KV bytes per token (halved by an FP8 KV cache).
    pub kv_bytes_per_token: f64,
    /// BF16 peak (attention), FLOP/s.
    pub peak_bf16: f64,
    /// HBM bandwidth, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// Non-expert parameters every token runs through.
    pub dense_active_params: f64,
    /// lm_head parameters (always BF16).
    pub lm_head_params: f64,
    /// Routed experts per layer (0: dense).
    pub experts: f64,
    /// Experts per token.
    pub top_k: f64,
    /// Parameters of one routed expert.
    pub expert_params: f64,
    /// Layers with routed experts.
    pub moe_layers: f64,
    /// Linear-attention state per sequence, bytes (read and written every step).
    pub state_bytes: f64,
    /// Attention FLOPs per (query token × context token).
    pub attention_flops_per_pair: f64,
    /// Fixed cost of one MTP draft pass, s: the MTP layers' share of the per-layer cost
    /// plus the pass's own per-forward overhead and eager attention launch
    /// ([`draft_pass_overhead_s`]).
    pub draft_t0_s: f64,
    /// Non-expert parameters of the MTP layer(s).
    pub draft_dense_params: f64,
    /// MTP layers (each with the model's routed experts).
    pub draft_layers: f64,
    /// KV bytes per token of the MTP layer(s).
    pub draft_kv_bytes_per_token: f64,
    /// Largest decode batch (tokens) replayed as a full CUDA graph.
    pub max_cudagraph_tokens: u64,
    /// The operator-table model ([`StepModel::with_operator_tables`]); `None`: the
    /// roofline above alone.
    pub ops: Option<Arc<OperatorModel>>,
    /// Extra cost per running sequence in a step outside a full CUDA graph on the
    /// operator-table path, s ([`MIXED_SEQ_S`]).
    pub mixed_seq_s: f64,
    /// Vision-tower parameters (0: no vision tower); always BF16.
    pub vision_params: f64,
    /// Vision-tower hidden size.
    pub vision_hidden: f64,
    /// The decoder's hidden size (the vision merger's output).
    pub decoder_hidden: f64,
    /// Vision-tower blocks.
    pub vision_depth: f64,
    /// Achieved fraction of the BF16 peak in the vision tower's GEMMs.
    pub eta_vision: f64,
    /// Fixed cost per vision-tower block, s (the decoder's per-layer cost).
    pub t_vision_block_s: f64,
}

/// The operator-table path's calibrated residual: extra seconds per running sequence in a
/// step outside a full CUDA graph (steps with prefill tokens). The reference's
/// Little's-law analysis of the seed's Throughput and ShareGPT runs needs 0.17–0.20 ms
/// per sequence in such steps that no measured kernel accounts for (the per-request
/// metadata work of a non-uniform batch: block tables, the Gated DeltaNet varlen
/// bookkeeping — with any prefill in the batch vLLM runs every sequence's linear-attention
/// state through the chunked kernel, gathered and scattered back —, the sampler's
/// per-request state). Fitted to the seed (in sample) together with the fused-MoE
/// kernel's compute rate ([`super::kernels::FusedMoe::eta_compute`]): 0.195 ms and 0.25
/// give the seed's twelve BF16 figures the least mean error (4.9 %) of those that keep
/// every one within its bounds.
pub const MIXED_SEQ_S: f64 = 0.195e-3;

/// Host time to compute one sampled position's allowed-token mask for a request whose
/// answer follows a grammar (structured output), s. vLLM's default backend, XGrammar,
/// fills a JSON-schema mask in under 40 µs per token (Dong et al., "XGrammar: Flexible and
/// Efficient Structured Generation Engine for Large Language Models", MLSys 2025,
/// arXiv:2411.15100); vLLM computes the batch's masks in the scheduler before the forward
/// (`StructuredOutputManager.grammar_bitmask`), so the simulator charges them serially,
/// 40 µs per masked position (an upper bound where the masks are filled in parallel
/// threads or overlapped by async scheduling).
pub const GRAMMAR_MASK_S: f64 = 40e-6;

impl StepModel {
    /// The step model of `model` on `gpu`.
    pub fn for_deployment(
        model: &ModelSpec,
        gpu: &GpuSpec,
        weights: Weights,
        kv_fp8: bool,
        e: &Efficiencies,
    ) -> StepModel {
        let (weight_bytes, peak_mm, precision, expert_bw_factor) = match weights {
            Weights::Bf16 => (2.0, gpu.peak_bf16_flops, 1.0, 1.0),
            Weights::Fp8 => (
                1.0,
                gpu.peak_fp8_flops,
                e.fp8_eta_factor,
                e.fp8_expert_bw_factor,
            ),
        };
        let kv_value_bytes = if kv_fp8 { 1.0 } else { 2.0 };
        let per_layer_kv =
            model.kv_bytes_per_token(kv_value_bytes) / model.full_attention_layers.max(1) as f64;
        let h = model.hidden as f64;
        StepModel {
            t0_s: e.t_layer_s * model.layers() as f64,
            eta_bw: e.eta_bw,
            eta_mm: e.eta_dense * precision,
            eta_moe: e.eta_moe * precision,
            eta_att: e.eta_att,
            t_mix_s: e.t_mix_s,
            weight_bytes,
            peak_mm,
            expert_bw_factor,
            kv_bytes_per_token: model.kv_bytes_per_token(kv_value_bytes),
            peak_bf16: gpu.peak_bf16_flops,
            hbm_bytes_per_s: gpu.hbm_bytes_per_s,
            dense_active_params: model.dense_active_params(),
            lm_head_params: model.lm_head_params(),
            experts: model.experts as f64,
            top_k: model.top_k as f64,
            expert_params: model.expert_params(),
            moe_layers: if model.experts > 0 {
                model.layers() as f64
            } else {
                0.0
            },
            state_bytes: model.linear_state_bytes(),
            attention_flops_per_pair: model.attention_flops_per_pair(),
            draft_t0_s: e.t_layer_s * model.mtp_layers as f64
                + draft_pass_overhead_s(model.mtp_layers),
            draft_dense_params: model.mtp_layers as f64
                * (model.attention_params() + model.dense_mlp_params() + 2.0 * h * h),
            draft_layers: model.mtp_layers as f64,
            draft_kv_bytes_per_token: per_layer_kv * model.mtp_layers as f64,
            max_cudagraph_tokens: 512,
            ops: None,
            mixed_seq_s: MIXED_SEQ_S,
            vision_params: model.vision_params,
            vision_hidden: model.vision_hidden as f64,
            decoder_hidden: h,
            vision_depth: model.vision_depth as f64,
            eta_vision: e.eta_dense,
            t_vision_block_s: e.t_layer_s,
        }
    }

    /// Seconds of the vision encoder's forward over images of `patches` ViT patches each
    /// (vLLM runs it in the step that schedules the images' tokens, before the decoder).
    /// Per image of `p` patches: the blocks' GEMMs, 2 · p · `vision_params` FLOPs at
    /// `eta_vision` of the BF16 peak; full attention within the image, 4 · p² · hidden ·
    /// depth FLOPs at `eta_att`; the 2 × 2 merger's MLP, 2 · (p / 4) · (4h · 4h + 4h · H)
    /// FLOPs (h the tower's hidden size, H the decoder's); never faster than streaming the
    /// tower's BF16 weights once; plus the per-block fixed cost. Not fitted to a measured
    /// encoder: the same efficiencies as the decoder's BF16 GEMMs and attention.
    ///
    /// ```
    /// use servebench::sim::{GpuSpec, ModelSpec, StepModel, Weights, EFFICIENCIES};
    /// let m = ModelSpec::resolve("qwen3.5-35b-a3b").unwrap();
    /// let g = GpuSpec::resolve("h200").unwrap();
    /// let s = StepModel::for_deployment(&m, &g, Weights::Bf16, false, &EFFICIENCIES);
    /// // A 1024 x 1024 image (4096 patches) costs more than a 512 x 512 one (1024).
    /// let (big, small) = (s.vision_encoder_seconds(&[4096]), s.vision_encoder_seconds(&[1024]));
    /// assert!(big > 2.0 * small && small > 0.0, "{big} {small}");
    /// assert_eq!(s.vision_encoder_seconds(&[]), 0.0);
    /// ```
    pub fn vision_encoder_seconds(&self, patches: &[u64]) -> f64 {
        if patches.is_empty() || self.vision_params <= 0.0 {
            return 0.0;
        }
        let h = self.vision_hidden;
        let (mut gemm, mut att) = (0.0, 0.0);
        for &p in patches {
            let p = p as f64;
            gemm += 2.0 * p * self.vision_params
                + 2.0 * (p / 4.0) * (16.0 * h * h + 4.0 * h * self.decoder_hidden);
            att += 4.0 * p * p * h * self.vision_depth;
        }
        let compute =
            gemm / (self.peak_bf16 * self.eta_vision) + att / (self.peak_bf16 * self.eta_att);
        let weights = self.vision_params * 2.0 / (self.hbm_bytes_per_s * self.eta_bw);
        compute.max(weights) + self.t_vision_block_s * self.vision_depth
    }

    /// This step model with the operator-table path: every step the sum of the model's
    /// operators timed from the GPU's measured table ([`KernelTable::for_gpu`]; the
    /// roofline per operator where none exists) plus the per-step overheads
    /// ([`super::OperatorModel`]).
    pub fn with_operator_tables(
        mut self,
        model: &ModelSpec,
        gpu: &GpuSpec,
        weights: Weights,
        kv_fp8: bool,
    ) -> StepModel {
        let dtype = match weights {
            Weights::Bf16 => Dtype::Bf16,
            Weights::Fp8 => Dtype::Fp8,
        };
        let table = KernelTable::for_gpu(gpu);
        self.ops = Some(Arc::new(OperatorModel::new(
            model, gpu, dtype, kv_fp8, table,
        )));
        self
    }

    /// Distinct experts per layer that `tokens` routed tokens touch (uniform routing).
    pub(super) fn experts_touched(&self, tokens: f64) -> f64 {
        if self.experts == 0.0 {
            return 0.0;
        }
        self.experts * (1.0 - (1.0 - self.top_k / self.experts).powf(tokens))
    }

    /// Seconds the GPU spends on a step with this load (the target model's forward; see
    /// [`StepModel::draft_seconds`] for speculative decoding's draft passes).
    pub fn step_seconds(&self, load: &StepLoad) -> f64 {
        let graphed = !load.has_prefill && load.tokens <= self.max_cudagraph_tokens;
        if let Some(ops) = &self.ops {
            let mix = if graphed {
                0.0
            } else {
                self.mixed_seq_s * load.seqs as f64
            };
            return ops.step_seconds(load, graphed) + mix;
        }
        let n = load.tokens as f64;
        let s = load.seqs as f64;
        let rows = load.sampled_rows.max(load.seqs) as f64;
        let f_dense = 2.0 * n * self.dense_active_params + 2.0 * rows * self.lm_head_params;
        let f_moe = 2.0 * n * self.top_k * self.expert_params * self.moe_layers;
        let experts = self.experts_touched(n);
        let w_bytes = self.weight_bytes * self.dense_active_params
            + 2.0 * self.lm_head_params
            + self.weight_bytes * self.moe_layers * experts * self.expert_params
                / self.expert_bw_factor;
        let bw = self.hbm_bytes_per_s * self.eta_bw;
        let t_lin = (f_dense / (self.peak_mm * self.eta_mm)
            + f_moe / (self.peak_mm * self.eta_moe))
            .max(w_bytes / bw);
        // Each sequence's linear-attention state read and written once, and written again
        // after each verified draft token.
        let m_att = self.kv_bytes_per_token * load.kv_tokens as f64
            + (s * 2.0 + load.spec_tokens as f64) * self.state_bytes;
        let f_att = self.attention_flops_per_pair * load.attention_pairs;
        let t_att = (f_att / (self.peak_bf16 * self.eta_att)).max(m_att / bw);
        let mix = if graphed { 0.0 } else { self.t_mix_s * s };
        self.t0_s + t_lin + t_att + mix
    }

    /// Seconds of the MTP drafter in a step: `k` sequential passes of the MTP layer(s)
    /// (each pass: the layer's weights — attention, MLP or touched experts, the 2h → h input
    /// projection —, the shared BF16 lm_head for every drafting sequence, and the layer's
    /// KV), the first over all of the step's `tokens`, the others over one token per
    /// drafting sequence. 0 when `k` is 0 or the model has no MTP layer.
    pub fn draft_seconds(&self, k: u64, tokens: u64, seqs: u64, kv_tokens: u64) -> f64 {
        if k == 0 || self.draft_layers == 0.0 || seqs == 0 {
            return 0.0;
        }
        if let Some(ops) = &self.ops {
            return ops.draft_seconds(k, tokens, seqs, kv_tokens);
        }
        let bw = self.hbm_bytes_per_s * self.eta_bw;
        let s = seqs as f64;
        let pass = |n: f64| {
            let f_dense = 2.0 * n * self.draft_dense_params + 2.0 * s * self.lm_head_params;
            let f_moe = 2.0 * n * self.draft_layers * self.top_k * self.expert_params;
            let t_flops =
                f_dense / (self.peak_mm * self.eta_mm) + f_moe / (self.peak_mm * self.eta_moe);
            let bytes = self.weight_bytes * self.draft_dense_params
                + self.weight_bytes
                    * self.draft_layers
                    * self.experts_touched(n)
                    * self.expert_params
                    / self.expert_bw_factor
                + 2.0 * self.lm_head_params
                + self.draft_kv_bytes_per_token * kv_tokens as f64;
            self.draft_t0_s + t_flops.max(bytes / bw)
        };
        pass(tokens as f64) + (k - 1) as f64 * pass(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Qwen3.5-35B-A3B on one H200.
    fn h200_35b(weights: Weights) -> StepModel {
        let m = ModelSpec::resolve("qwen3.5-35b-a3b").unwrap();
        let g = GpuSpec::resolve("h200").unwrap();
        StepModel::for_deployment(&m, &g, weights, false, &EFFICIENCIES)
    }

    fn decode(b: u64, ctx: u64) -> f64 {
        let mut l = StepLoad::default();
        for _ in 0..b {
            l.add(1, ctx, false);
        }
        h200_35b(Weights::Bf16).step_seconds(&l) * 1000.0
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

    /// Verifying k draft tokens writes the linear-attention state k more times: on the
    /// roofline exactly k × the state's bytes more per sequence, at the streaming rate.
    #[test]
    fn verification_writes_the_state_once_more_per_draft_token() {
        let m = h200_35b(Weights::Fp8);
        let (mut plain, mut spec) = (StepLoad::default(), StepLoad::default());
        for _ in 0..32 {
            plain.add_sampled(2, 600, false, 2);
            spec.add_sampled(2, 600, false, 2);
        }
        plain.spec_tokens = 0;
        assert_eq!(spec.spec_tokens, 32);
        let extra = m.step_seconds(&spec) - m.step_seconds(&plain);
        let want = 32.0 * m.state_bytes / (m.hbm_bytes_per_s * m.eta_bw);
        assert!((extra / want - 1.0).abs() < 1e-9, "{extra} vs {want}");
    }

    #[test]
    fn prefill_chunk_rate_and_fp8_is_faster_at_decode() {
        let mut l = StepLoad::default();
        l.add(8192, 0, true);
        let t = h200_35b(Weights::Bf16).step_seconds(&l);
        assert!((0.14..0.16).contains(&t), "{t}");
        let mut d = StepLoad::default();
        for _ in 0..40 {
            d.add(1, 600, false);
        }
        let bf = h200_35b(Weights::Bf16).step_seconds(&d);
        let fp = h200_35b(Weights::Fp8).step_seconds(&d);
        assert!(fp < bf * 0.8, "{fp} vs {bf}");
    }
}
