//! A step as the sum of its operators: which operators one forward pass of a model runs,
//! per layer kind (Gated DeltaNet and full-attention layers' projections, attention and
//! recurrence; the MLP — routed experts, shared expert and router, or a dense MLP —;
//! norms and activations; lm_head and the sampler; the MTP layer), each with the share of
//! the step it sees ([`Feed`]) and how often it runs ([`OperatorUse`]); and the step time
//! as the sum of their table times ([`OperatorModel`], [`super::kernels`]) plus a small
//! per-step overhead. The operator list is what `scripts/profile_kernels.py` measures
//! (`servebench simulate --dump-operators`, [`operator_list_json`]).

use serde::Serialize;

use super::kernels::{Axis, Curve, Dtype, KernelTable, Operator, FUSED_MOE};
use super::spec::{GpuSpec, ModelSpec};
use super::step_load::StepLoad;

/// Format of the operator list ([`operator_list_json`]).
pub const OPERATORS_FORMAT: &str = "servebench-operators/1";

/// Which part of a step an operator sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feed {
    /// Every scheduled token.
    Tokens,
    /// Sampled rows (one per sequence, `1 + k` verifying `k` drafts).
    Rows,
    /// Decode tokens (one per decoding sequence, `1 + k` when verifying).
    DecodeTokens,
    /// Prefill tokens.
    PrefillTokens,
    /// KV tokens read by decoding sequences, in BF16-equivalent tokens.
    DecodeKv,
    /// Causal (query × context) pairs of prefill tokens.
    PrefillPairs,
}

/// One operator of a forward pass: what it is, what it sees, how many times it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperatorUse {
    /// What it computes (`gdn.in_proj_qkvz`, `moe.experts`, …).
    pub name: &'static str,
    /// The operator (its table key).
    #[serde(flatten)]
    pub op: Operator,
    /// The table's axis.
    pub axis: Axis,
    /// What it sees.
    #[serde(skip)]
    pub feed: Feed,
    /// Times per forward pass (layers).
    pub count: u64,
}

fn use_of(name: &'static str, op: Operator, feed: Feed, count: u64) -> OperatorUse {
    OperatorUse {
        name,
        axis: op.axis(),
        op,
        feed,
        count,
    }
}

/// The operators of one decoder layer of `kind` (full attention or Gated DeltaNet) with
/// its MLP, `count` times, linear layers in `w`.
fn layer_ops(m: &ModelSpec, w: Dtype, full: bool, count: u64, out: &mut Vec<OperatorUse>) {
    if count == 0 {
        return;
    }
    let h = m.hidden;
    let gemm = |k, n| Operator::Gemm { dtype: w, k, n };
    use Feed::*;
    if full {
        let q = m.heads * m.head_dim;
        let kv = m.kv_heads * m.head_dim;
        let gate = if m.attn_output_gate { 2 } else { 1 };
        out.push(use_of(
            "attn.qkv_proj",
            gemm(h, q * gate + 2 * kv),
            Tokens,
            count,
        ));
        out.push(use_of(
            "attn.qk_norm",
            Operator::Rmsnorm { width: q + kv },
            Tokens,
            count,
        ));
        out.push(use_of(
            "attn.rope",
            Operator::Rope { width: q + kv },
            Tokens,
            count,
        ));
        let (q_heads, kv_heads, head_dim) = (m.heads, m.kv_heads, m.head_dim);
        out.push(use_of(
            "attn.decode",
            Operator::AttentionDecode {
                q_heads,
                kv_heads,
                head_dim,
            },
            DecodeKv,
            count,
        ));
        out.push(use_of(
            "attn.prefill",
            Operator::AttentionPrefill {
                q_heads,
                kv_heads,
                head_dim,
            },
            PrefillPairs,
            count,
        ));
        if m.attn_output_gate {
            out.push(use_of(
                "attn.output_gate",
                Operator::SiluMul { width: q },
                Tokens,
                count,
            ));
        }
        out.push(use_of("attn.o_proj", gemm(q, h), Tokens, count));
    } else {
        let k = m.linear_key_heads * m.linear_key_dim;
        let v = m.linear_value_heads * m.linear_value_dim;
        out.push(use_of(
            "gdn.in_proj_qkvz",
            gemm(h, 2 * k + 2 * v),
            Tokens,
            count,
        ));
        out.push(use_of(
            "gdn.in_proj_ba",
            gemm(h, 2 * m.linear_value_heads),
            Tokens,
            count,
        ));
        let (channels, kernel) = (2 * k + v, m.conv_kernel);
        out.push(use_of(
            "gdn.conv_decode",
            Operator::ConvDecode { channels, kernel },
            DecodeTokens,
            count,
        ));
        out.push(use_of(
            "gdn.conv_prefill",
            Operator::ConvPrefill { channels, kernel },
            PrefillTokens,
            count,
        ));
        let (key_heads, value_heads, key_dim, value_dim) = (
            m.linear_key_heads,
            m.linear_value_heads,
            m.linear_key_dim,
            m.linear_value_dim,
        );
        out.push(use_of(
            "gdn.recurrent_decode",
            Operator::GdnDecode {
                key_heads,
                value_heads,
                key_dim,
                value_dim,
            },
            DecodeTokens,
            count,
        ));
        out.push(use_of(
            "gdn.chunk_prefill",
            Operator::GdnPrefill {
                key_heads,
                value_heads,
                key_dim,
                value_dim,
            },
            PrefillTokens,
            count,
        ));
        out.push(use_of(
            "gdn.gated_norm",
            Operator::Rmsnorm { width: v },
            Tokens,
            count,
        ));
        out.push(use_of("gdn.out_proj", gemm(v, h), Tokens, count));
    }
    // MLP.
    if m.experts > 0 {
        let bf16 = |k, n| Operator::Gemm {
            dtype: Dtype::Bf16,
            k,
            n,
        };
        out.push(use_of("moe.router", bf16(h, m.experts), Tokens, count));
        out.push(use_of(
            "moe.topk",
            Operator::RouterTopk {
                experts: m.experts,
                top_k: m.top_k,
            },
            Tokens,
            count,
        ));
        out.push(use_of(
            "moe.experts",
            Operator::Moe {
                dtype: w,
                hidden: h,
                intermediate: m.expert_intermediate,
                experts: m.experts,
                top_k: m.top_k,
            },
            Tokens,
            count,
        ));
        if m.shared_expert_intermediate > 0 {
            let si = m.shared_expert_intermediate;
            out.push(use_of("moe.shared_gate_up", gemm(h, 2 * si), Tokens, count));
            out.push(use_of(
                "moe.shared_act",
                Operator::SiluMul { width: si },
                Tokens,
                count,
            ));
            out.push(use_of("moe.shared_down", gemm(si, h), Tokens, count));
            out.push(use_of("moe.shared_expert_gate", bf16(h, 1), Tokens, count));
        }
    } else {
        let i = m.intermediate;
        out.push(use_of("mlp.gate_up", gemm(h, 2 * i), Tokens, count));
        out.push(use_of(
            "mlp.act",
            Operator::SiluMul { width: i },
            Tokens,
            count,
        ));
        out.push(use_of("mlp.down", gemm(i, h), Tokens, count));
    }
    out.push(use_of(
        "layer.norms",
        Operator::Rmsnorm { width: h },
        Tokens,
        2 * count,
    ));
}

/// The operators of one forward pass of `model` with linear layers in `w`: every decoder
/// layer, the final norm, lm_head (BF16) and the sampler.
pub fn forward_ops(m: &ModelSpec, w: Dtype) -> Vec<OperatorUse> {
    let mut out = Vec::new();
    layer_ops(m, w, false, m.linear_attention_layers, &mut out);
    layer_ops(m, w, true, m.full_attention_layers, &mut out);
    head_ops(m, &mut out);
    out
}

/// The final norm, lm_head and sampler.
fn head_ops(m: &ModelSpec, out: &mut Vec<OperatorUse>) {
    out.push(use_of(
        "final_norm",
        Operator::Rmsnorm { width: m.hidden },
        Feed::Tokens,
        1,
    ));
    out.push(use_of(
        "lm_head",
        Operator::Gemm {
            dtype: Dtype::Bf16,
            k: m.hidden,
            n: m.vocab,
        },
        Feed::Rows,
        1,
    ));
    out.push(use_of(
        "sampler",
        Operator::Sampler { vocab: m.vocab },
        Feed::Rows,
        1,
    ));
}

/// The operators of one MTP draft pass: the two input norms and the 2h → h projection,
/// the MTP layer(s) (full attention with the model's MLP), lm_head and the sampler.
pub fn draft_ops(m: &ModelSpec, w: Dtype) -> Vec<OperatorUse> {
    let mut out = Vec::new();
    if m.mtp_layers == 0 {
        return out;
    }
    out.push(use_of(
        "mtp.input_norms",
        Operator::Rmsnorm { width: m.hidden },
        Feed::Tokens,
        2 * m.mtp_layers,
    ));
    out.push(use_of(
        "mtp.fc",
        Operator::Gemm {
            dtype: w,
            k: 2 * m.hidden,
            n: m.hidden,
        },
        Feed::Tokens,
        m.mtp_layers,
    ));
    layer_ops(m, w, true, m.mtp_layers, &mut out);
    head_ops(m, &mut out);
    out
}

/// The operator list of a deployment as JSON (format [`OPERATORS_FORMAT`]): the forward
/// pass's and the MTP drafter's operators, each with its table key, axis, name and count
/// per pass — what `scripts/profile_kernels.py --operators` measures.
pub fn operator_list_json(m: &ModelSpec, w: Dtype) -> String {
    #[derive(Serialize)]
    struct List<'a> {
        format: &'static str,
        model: &'a str,
        weights: Dtype,
        forward: Vec<OperatorUse>,
        mtp_draft: Vec<OperatorUse>,
    }
    let list = List {
        format: OPERATORS_FORMAT,
        model: &m.id,
        weights: w,
        forward: forward_ops(m, w),
        mtp_draft: draft_ops(m, w),
    };
    let mut s = serde_json::to_string_pretty(&list).unwrap_or_default();
    s.push('\n');
    s
}

/// Fixed GPU-side cost of every step besides its operators, s: the gaps between kernels
/// of a CUDA-graph replay and the graph launch, input preparation (positions, slot
/// mapping, block tables copied to the GPU) and the output copy back. 0.3 ms: the
/// measured 9B linear step ran 4.546 ms as one graph against a 4.528 ms sum of its
/// kernels (≈ 0.1 µs per kernel boundary), and vLLM's own input preparation and
/// sampled-token copy add a few hundred µs per step on an H100/H200 (Vidur's measured CPU
/// overheads, arXiv:2405.05465 §4: schedule, prepare inputs, process outputs, each
/// 0.1–1 ms; with async scheduling most of it overlaps the GPU).
pub const STEP_OVERHEAD_S: f64 = 0.3e-3;

/// Extra fixed cost of a step that runs outside a full CUDA graph (any prefill tokens, or
/// more tokens than the largest captured graph), s: vLLM then replays piecewise graphs
/// between eagerly launched attention and Gated DeltaNet ops; the probe measured eager
/// calls of fla's recurrent kernel at ≥ 150 µs of host time against 4 µs in a graph, so
/// each of the model's linear and full-attention layers pays one eager launch, 20 µs.
pub const EAGER_LAYER_S: f64 = 20e-6;

/// Fixed cost of one MTP draft pass besides its operators, s: vLLM's drafter
/// (`vllm/v1/spec_decode/eagle.py`, `EagleProposer.propose`, which serves `method: mtp`)
/// runs each pass as a forward of its own — it shifts the input ids, builds the drafting
/// attention metadata and launches the MTP model — so a pass pays the per-forward
/// overhead of a step ([`STEP_OVERHEAD_S`]), and it replays the drafter only as
/// *piecewise* CUDA graphs (the proposer supports no full graph), so the MTP layer's
/// attention launches eagerly ([`EAGER_LAYER_S`] per MTP layer); past the largest captured
/// size the whole pass runs eagerly (the same per-layer figure). Its sampling is an argmax
/// over the logits of each sequence's last token (`LocalArgmaxMixin`), not the sampler.
pub fn draft_pass_overhead_s(mtp_layers: u64) -> f64 {
    if mtp_layers == 0 {
        return 0.0;
    }
    STEP_OVERHEAD_S + EAGER_LAYER_S * mtp_layers as f64
}

/// Sizes 1…this each operator's time is computed for once ([`Curve::with_whole_sizes`]):
/// every decode batch up to vLLM's default largest CUDA graph.
const WHOLE_SIZES: usize = 512;

/// A deployment's step time from measured operator tables.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorModel {
    forward: Vec<OperatorUse>,
    draft: Vec<OperatorUse>,
    /// Each forward operator's measured curve (`None`: the roofline), resolved once.
    forward_points: Vec<Option<Curve>>,
    /// The same for the drafter's operators.
    draft_points: Vec<Option<Curve>>,
    table: Option<KernelTable>,
    gpu: GpuSpec,
    /// KV bytes per value relative to BF16 (0.5 for an FP8 KV cache).
    kv_scale: f64,
    /// Decoder layers (eager launches outside full graphs).
    layers: f64,
    /// Fixed cost of one MTP draft pass ([`draft_pass_overhead_s`]).
    draft_pass_s: f64,
    /// Which kernel times the routed experts.
    moe_kernel: MoeKernel,
}

/// Which kernel the routed experts ([`Operator::Moe`]) are timed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MoeKernel {
    /// vLLM's fused-MoE Triton kernel ([`super::kernels::FusedMoe`]): what vLLM runs.
    #[default]
    FusedTriton,
    /// The table's measured `torch._grouped_mm` rows as they are (for comparison).
    GroupedMm,
}

/// One operator's share of a step (for [`OperatorModel::breakdown`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorTime {
    /// The operator's name.
    pub name: &'static str,
    /// Seconds in the step, all its layers together.
    pub seconds: f64,
    /// Whether a measured table row gave it as it is (else the roofline, or the fused-MoE
    /// model for the routed experts).
    pub measured: bool,
}

impl OperatorModel {
    /// The operator model of `model` with `weights` and a KV cache of `kv_fp8` on `gpu`,
    /// timed from `table` (the roofline alone when `None`).
    pub fn new(
        model: &ModelSpec,
        gpu: &GpuSpec,
        weights: Dtype,
        kv_fp8: bool,
        table: Option<KernelTable>,
    ) -> OperatorModel {
        let forward = forward_ops(model, weights);
        let draft = draft_ops(model, weights);
        let resolve = |ops: &[OperatorUse]| -> Vec<Option<Curve>> {
            ops.iter()
                .map(|u| {
                    table
                        .as_ref()
                        .and_then(|t| t.entry(&u.op))
                        .map(|e| Curve::with_whole_sizes(&e.points, WHOLE_SIZES))
                })
                .collect()
        };
        OperatorModel {
            forward_points: resolve(&forward),
            draft_points: resolve(&draft),
            forward,
            draft,
            table,
            gpu: gpu.clone(),
            kv_scale: if kv_fp8 { 0.5 } else { 1.0 },
            layers: model.layers() as f64,
            draft_pass_s: draft_pass_overhead_s(model.mtp_layers),
            moe_kernel: MoeKernel::default(),
        }
    }

    /// This model with the routed experts timed as `kernel`.
    pub fn with_moe_kernel(mut self, kernel: MoeKernel) -> OperatorModel {
        self.moe_kernel = kernel;
        self
    }

    /// The routed experts' time at `x` tokens, µs, when the fused-MoE model times them;
    /// `None` for any other operator.
    fn fused_moe_us(&self, op: &Operator, x: f64) -> Option<f64> {
        match (self.moe_kernel, op) {
            (MoeKernel::FusedTriton, Operator::Moe { .. }) => FUSED_MOE.time_us(op, x, &self.gpu),
            _ => None,
        }
    }

    /// Whether a measured table backs the model.
    pub fn has_table(&self) -> bool {
        self.table.is_some()
    }

    /// The time of `op` at size `x`, s, and whether a measured table row gave it as it
    /// is (`false` for the roofline and for the fused-MoE model).
    pub fn op_seconds(&self, op: &Operator, x: f64) -> (f64, bool) {
        if x <= 0.0 {
            return (0.0, true);
        }
        if let Some(us) = self.fused_moe_us(op, x) {
            return (us * 1e-6, false);
        }
        let curve = self
            .table
            .as_ref()
            .and_then(|t| t.entry(op))
            .map(|e| Curve::new(&e.points));
        match curve.map(|c| c.at(x)) {
            Some(us) => (us * 1e-6, true),
            None => (op.roofline_us(x, &self.gpu) * 1e-6, false),
        }
    }

    /// Seconds of all of `ops`' runs with this load (`points`: their resolved tables).
    fn sum_seconds(&self, ops: &[OperatorUse], points: &[Option<Curve>], load: &StepLoad) -> f64 {
        ops.iter()
            .zip(points)
            .map(|(u, p)| {
                let x = self.fed(u.feed, load);
                let us = if x <= 0.0 {
                    0.0
                } else if let Some(us) = self.fused_moe_us(&u.op, x) {
                    us
                } else {
                    match p {
                        Some(p) => p.at(x),
                        None => u.op.roofline_us(x, &self.gpu),
                    }
                };
                us * 1e-6 * u.count as f64
            })
            .sum()
    }

    fn fed(&self, feed: Feed, load: &StepLoad) -> f64 {
        match feed {
            Feed::Tokens => load.tokens as f64,
            Feed::Rows => load.sampled_rows.max(load.seqs) as f64,
            Feed::DecodeTokens => load.decode_tokens as f64,
            Feed::PrefillTokens => (load.tokens - load.decode_tokens) as f64,
            Feed::DecodeKv => load.decode_kv_tokens as f64 * self.kv_scale,
            Feed::PrefillPairs => load.prefill_pairs,
        }
    }

    /// Each operator's seconds in a forward step with this load.
    pub fn breakdown(&self, load: &StepLoad) -> Vec<OperatorTime> {
        self.forward
            .iter()
            .map(|u| {
                let (s, measured) = self.op_seconds(&u.op, self.fed(u.feed, load));
                OperatorTime {
                    name: u.name,
                    seconds: s * u.count as f64,
                    measured,
                }
            })
            .collect()
    }

    /// Seconds of a forward step: the operators, the per-step overhead and, outside a
    /// full CUDA graph (`graphed` false), one eager launch per layer.
    pub fn step_seconds(&self, load: &StepLoad, graphed: bool) -> f64 {
        let ops = self.sum_seconds(&self.forward, &self.forward_points, load);
        let eager = if graphed {
            0.0
        } else {
            EAGER_LAYER_S * self.layers
        };
        STEP_OVERHEAD_S + ops + eager
    }

    /// Seconds of the MTP drafter in a step: `k` sequential passes, the first over the
    /// step's `tokens` (the drafter conditions on every verified or prefilled token), the
    /// others over one token per drafting sequence; each pass samples one row per
    /// sequence and reads the MTP layer's KV of every sequence. 0 for `k` = 0, no drafting
    /// sequence or no MTP layer. Each pass also pays [`draft_pass_overhead_s`].
    pub fn draft_seconds(&self, k: u64, tokens: u64, seqs: u64, kv_tokens: u64) -> f64 {
        if k == 0 || seqs == 0 || self.draft.is_empty() {
            return 0.0;
        }
        let pass = |n: u64| {
            let load = StepLoad {
                tokens: n,
                seqs,
                sampled_rows: seqs,
                kv_tokens,
                decode_tokens: n,
                decode_kv_tokens: kv_tokens,
                ..StepLoad::default()
            };
            self.draft_pass_s + self.sum_seconds(&self.draft, &self.draft_points, &load)
        };
        pass(tokens) + (k - 1) as f64 * pass(seqs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_35b_forward_pass_has_every_operator_kind_once_per_layer() {
        let m = ModelSpec::resolve("qwen3.5-35b-a3b").unwrap();
        let ops = forward_ops(&m, Dtype::Bf16);
        let count = |name: &str| {
            Some(
                ops.iter()
                    .filter(|u| u.name == name)
                    .map(|u| u.count)
                    .sum::<u64>(),
            )
        };
        assert_eq!(count("gdn.in_proj_qkvz"), Some(30));
        assert_eq!(count("attn.decode"), Some(10));
        assert_eq!(count("moe.experts"), Some(40));
        assert_eq!(count("layer.norms"), Some(80));
        assert_eq!(count("lm_head"), Some(1));
        // The GEMMs' weights add up to the model's active parameters (the spec's count
        // leaves out the 2048 × 1 shared-expert gate).
        let weights: f64 = ops
            .iter()
            .filter(|u| u.name != "lm_head")
            .filter_map(|u| match u.op {
                Operator::Gemm { k, n, .. } => Some((k * n) as f64 * u.count as f64),
                _ => None,
            })
            .sum();
        assert!(
            (weights / m.dense_active_params() - 1.0).abs() < 1e-4,
            "{weights} vs {}",
            m.dense_active_params()
        );
        let dense = forward_ops(&ModelSpec::resolve("qwen3.5-9b").unwrap(), Dtype::Bf16);
        assert!(dense.iter().any(|u| u.name == "mlp.gate_up"));
        assert!(!dense.iter().any(|u| u.name == "moe.experts"));
    }

    /// The committed operator lists are what the model descriptions give (the profiler
    /// reads them).
    #[test]
    fn the_committed_operator_lists_are_current() {
        for (name, file, w, json) in [
            (
                "qwen3.5-35b-a3b",
                "qwen3.5-35b-a3b.json",
                Dtype::Bf16,
                include_str!("data/operators/qwen3.5-35b-a3b.json"),
            ),
            (
                "Qwen/Qwen3.5-35B-A3B-FP8",
                "qwen3.5-35b-a3b-fp8.json",
                Dtype::Fp8,
                include_str!("data/operators/qwen3.5-35b-a3b-fp8.json"),
            ),
            (
                "qwen3.5-9b",
                "qwen3.5-9b.json",
                Dtype::Bf16,
                include_str!("data/operators/qwen3.5-9b.json"),
            ),
        ] {
            let m = ModelSpec::resolve(name).unwrap();
            assert_eq!(
                operator_list_json(&m, w),
                json,
                "src/sim/data/operators/{file} is stale: regenerate it with \
                 `servebench simulate --model {name} --dump-operators`"
            );
        }
    }
}
