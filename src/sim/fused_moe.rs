//! vLLM's fused-MoE Triton kernel as the step model times it ([`FusedMoe`]): the routed
//! experts of one MoE layer from measured figures — the touched experts' weights streamed
//! at the measured rate plus a fixed latency read off vLLM's published kernel timings, the
//! measured grouped-GEMM rate as the compute side — rather than from the table's
//! `torch._grouped_mm` rows, a different kernel.

use super::kernels::{Curve, Operator};
use super::spec::GpuSpec;

/// vLLM's fused-MoE Triton kernel, the routed experts of one MoE layer as vLLM runs them
/// (`fused_experts`: `moe_align_block_size`, the w13 (gate_up) GEMM, SiLU·mul, the w2
/// (down) GEMM and the top-k sum, each token's rows gathered by expert; vLLM's
/// `vllm/model_executor/layers/fused_moe/fused_moe.py`, and `benchmarks/kernels/benchmark_moe.py`
/// which times exactly that call). The H200 table's `moe` rows were measured with
/// `torch._grouped_mm` (CUTLASS), a different kernel; this model stands for vLLM's from
/// measured figures, not a fit:
///
/// - **memory side**: a fixed latency ([`FusedMoe::fixed_us`]) plus the touched experts'
///   weights, `E·(1 − (1 − k/E)^T)` experts (the count the H200 probe measured for uniform
///   routing), streamed at [`FusedMoe::eta_stream`] of the HBM bandwidth;
/// - **compute side**: the grouped expert GEMMs at the rate the table measured at its
///   largest size (8192 tokens: `torch._grouped_mm` 0.33 of the BF16 peak with the SiLU·mul,
///   `torch._scaled_grouped_mm` for FP8), or [`FusedMoe::eta_compute`] of the peak without
///   a table;
/// - the larger of the two, and never slower than the measured grouped-GEMM table where
///   that is faster.
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
    /// Fraction of the weight precision's dense peak the expert GEMMs reach when
    /// compute-bound and no table measured them: 0.33, `torch._grouped_mm` gate_up +
    /// SiLU·mul + down at 8192 tokens on the H200 (328 TFLOP/s).
    pub eta_compute: f64,
}

/// The fused-MoE constants ([`FusedMoe`]).
pub const FUSED_MOE: FusedMoe = FusedMoe {
    fixed_us: 27.0,
    eta_stream: 0.875,
    eta_compute: 0.33,
};

impl FusedMoe {
    /// The time of `op` (an [`Operator::Moe`]) over `x` tokens on `gpu`, µs; `grouped`:
    /// the measured grouped-GEMM row of the same operator, if any. `None` for another
    /// operator.
    pub fn time_us(
        &self,
        op: &Operator,
        x: f64,
        gpu: &GpuSpec,
        grouped: Option<&Curve>,
    ) -> Option<f64> {
        let Operator::Moe { .. } = op else {
            return None;
        };
        let (flops, bytes) = op.work(x);
        let memory = self.fixed_us + bytes / (gpu.hbm_bytes_per_s * self.eta_stream) * 1e6;
        let compute = match grouped {
            Some(c) => {
                let [xl, tl] = c.last_point();
                tl * x / xl
            }
            None => flops / (op.peak_flops(gpu) * self.eta_compute) * 1e6,
        };
        let fused = memory.max(compute);
        Some(match grouped {
            Some(c) => fused.min(c.at(x)),
            None => fused,
        })
    }
}
