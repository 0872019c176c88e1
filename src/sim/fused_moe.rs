//! vLLM's fused-MoE Triton kernel as the step model times it ([`FusedMoe`]): the routed
//! experts of one MoE layer — the touched experts' weights streamed at the measured rate
//! plus a fixed latency read off vLLM's published kernel timings, and a compute-bound rate
//! fitted to the seed — rather than from the table's `torch._grouped_mm` rows, a different
//! kernel.

use super::kernels::Operator;
use super::spec::GpuSpec;

/// vLLM's fused-MoE Triton kernel, the routed experts of one MoE layer as vLLM runs them
/// (`fused_experts`: `moe_align_block_size`, the w13 (gate_up) GEMM, SiLU·mul, the w2
/// (down) GEMM and the top-k sum, each token's rows gathered by expert; vLLM's
/// `vllm/model_executor/layers/fused_moe/fused_moe.py`, and `benchmarks/kernels/benchmark_moe.py`
/// which times exactly that call). The H200 table's `moe` rows were measured with
/// `torch._grouped_mm` (CUTLASS), a different kernel; this model stands for vLLM's:
///
/// - **memory side**: a fixed latency ([`FusedMoe::fixed_us`]) plus the touched experts'
///   weights, `E·(1 − (1 − k/E)^T)` experts (the count the H200 probe measured for uniform
///   routing), streamed at [`FusedMoe::eta_stream`] of the HBM bandwidth;
/// - **compute side**: the expert GEMMs' FLOPs at [`FusedMoe::eta_compute`] of the BF16
///   dense peak, whatever the weight precision;
/// - the larger of the two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusedMoe {
    /// Fixed latency of one fused-MoE call (its five kernels' floors and the first
    /// weight tiles' latency), µs: 27 µs, the intercept of vLLM's published
    /// `benchmark_moe.py` timings at batch 1 once the touched weights' streaming is taken
    /// off — Qwen3-30B-A3B FP8 on an H100 40.4 µs for 38 MB (vllm-project/vllm#24700),
    /// Mixtral-8x7B BF16 TP2 on an H100 144 µs for 352 MB (same PR), Qwen3-Next-80B FP8
    /// block-scaled TP4 on an H100 29.5 µs for 8 MB (#44830), Qwen3-Omni-30B BF16 on a
    /// B200 39.6 µs for 75 MB (#31448): intercepts 24–29 µs. (`benchmark_moe.py` replays
    /// one routing, so a call whose touched weights fit the L2 may read them from there;
    /// the Mixtral call, 352 MB, cannot, and gives 24 µs.)
    pub fixed_us: f64,
    /// Fraction of the HBM data-sheet bandwidth the touched experts' weights stream at:
    /// 0.875, the H200 probe's plain streaming read (`torch.sum` over 8.6 GB; a Triton
    /// load-sum reached 0.948, cuBLAS's lm_head GEMM at one token 0.86).
    pub eta_stream: f64,
    /// Fraction of the BF16 dense peak the kernel reaches when compute-bound (prefill
    /// chunks of thousands of tokens): 0.25, the one constant of this model fitted to the
    /// seed — in sample, to its BF16 runs on the operator tables (the Long Context
    /// profile's prefill chunks). No published figure times vLLM's kernel at the 35B's
    /// shape when compute-bound; those that time it elsewhere bracket the fit: Qwen3-30B-A3B
    /// FP8 (128 experts of 768) at 4096 tokens on an H100, 1647.6 µs = 188 TFLOP/s = 0.19
    /// of the BF16 peak (vllm-project/vllm#24700, the default config), and Mixtral-8x7B
    /// BF16 at TP 2 (experts of 4096 × 7168 per GPU, tuned config) at 1536 tokens,
    /// 1122.9 µs = 482 TFLOP/s = 0.49 (same PR). CUTLASS's grouped GEMM measured 0.33 at
    /// the 35B's shape on the H200 (the table's row), and with that rate the seed's Long
    /// Context came out 11.6 % short.
    pub eta_compute: f64,
}

/// The fused-MoE constants ([`FusedMoe`]).
pub const FUSED_MOE: FusedMoe = FusedMoe {
    fixed_us: 27.0,
    eta_stream: 0.875,
    eta_compute: 0.25,
};

impl FusedMoe {
    /// The time of `op` (an [`Operator::Moe`]) over `x` tokens on `gpu`, µs; `None` for
    /// another operator.
    pub fn time_us(&self, op: &Operator, x: f64, gpu: &GpuSpec) -> Option<f64> {
        let Operator::Moe { .. } = op else {
            return None;
        };
        let (flops, bytes) = op.work(x);
        let memory = self.fixed_us + bytes / (gpu.hbm_bytes_per_s * self.eta_stream) * 1e6;
        let compute = flops / (gpu.peak_bf16_flops * self.eta_compute) * 1e6;
        Some(memory.max(compute))
    }
}
