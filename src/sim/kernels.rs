//! Measured kernel tables: the time of each operator the step model sums
//! ([`Operator`]), measured on a GPU at a grid of sizes and interpolated between them
//! ([`KernelTable`]). The tables are versioned data files (`src/sim/data/kernels/*.json`,
//! format `servebench-kernels/1`, each with its provenance: GPU, driver, library versions,
//! date, method; the format `scripts/profile_kernels.py` writes). A GPU without a table of its own
//! borrows one measured on a GPU of the same chip, scaled by the documented rule of
//! [`KernelTable::scaled_to`]; an operator no table holds falls back to the roofline
//! ([`Operator::roofline_us`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::spec::GpuSpec;

pub use super::fused_moe::{FusedMoe, FUSED_MOE};

/// Table format this module reads.
pub const KERNELS_FORMAT: &str = "servebench-kernels/1";

/// Shipped tables: (GPU short name, JSON).
pub const SHIPPED_TABLES: [(&str, &str); 1] = [("h200", include_str!("data/kernels/h200.json"))];

/// Data type of a linear layer's weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// BF16.
    Bf16,
    /// FP8 (e4m3).
    Fp8,
}

impl Dtype {
    /// Bytes per weight.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Bf16 => 2.0,
            Dtype::Fp8 => 1.0,
        }
    }
}

/// What a table row's sizes count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Tokens (rows of the activation).
    Tokens,
    /// Sequences.
    Batch,
    /// Sampled rows (logits).
    Rows,
    /// KV tokens read (summed over sequences).
    KvTokens,
    /// Causal (query × context) pairs.
    Pairs,
}

/// One operator of a step, identified by the shapes that decide its time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Operator {
    /// A dense GEMM `[M, k] × [k, n]` with weights of `dtype` (axis: tokens).
    Gemm {
        /// Weight data type.
        dtype: Dtype,
        /// Input features.
        k: u64,
        /// Output features.
        n: u64,
    },
    /// One layer's routed experts: gate_up, SiLU·mul, down over `top_k` of `experts`
    /// experts per token (axis: tokens).
    Moe {
        /// Weight data type.
        dtype: Dtype,
        /// Hidden size.
        hidden: u64,
        /// Expert intermediate size.
        intermediate: u64,
        /// Routed experts.
        experts: u64,
        /// Experts per token.
        top_k: u64,
    },
    /// The router's softmax + top-k (axis: tokens).
    RouterTopk {
        /// Routed experts.
        experts: u64,
        /// Experts per token.
        top_k: u64,
    },
    /// Fused residual add + RMSNorm over `width` features (axis: tokens).
    Rmsnorm {
        /// Features.
        width: u64,
    },
    /// SiLU(gate) · up (or a sigmoid output gate) producing `width` features (axis: tokens).
    SiluMul {
        /// Output features.
        width: u64,
    },
    /// Rotary embedding over `width` features of q and k (axis: tokens).
    Rope {
        /// Features rotated.
        width: u64,
    },
    /// Decode attention of one layer over the KV cache (axis: KV tokens, BF16 KV).
    AttentionDecode {
        /// Query heads.
        q_heads: u64,
        /// KV heads.
        kv_heads: u64,
        /// Head dimension.
        head_dim: u64,
    },
    /// Causal prefill attention of one layer (axis: pairs).
    AttentionPrefill {
        /// Query heads.
        q_heads: u64,
        /// KV heads.
        kv_heads: u64,
        /// Head dimension.
        head_dim: u64,
    },
    /// One Gated DeltaNet layer's recurrent update for one token per sequence (axis: batch).
    GdnDecode {
        /// Key heads.
        key_heads: u64,
        /// Value heads.
        value_heads: u64,
        /// Key head dimension.
        key_dim: u64,
        /// Value head dimension.
        value_dim: u64,
    },
    /// One Gated DeltaNet layer's chunked prefill (axis: tokens).
    GdnPrefill {
        /// Key heads.
        key_heads: u64,
        /// Value heads.
        value_heads: u64,
        /// Key head dimension.
        key_dim: u64,
        /// Value head dimension.
        value_dim: u64,
    },
    /// The short causal convolution's state update at decode (axis: batch).
    ConvDecode {
        /// Channels.
        channels: u64,
        /// Kernel width.
        kernel: u64,
    },
    /// The short causal convolution over prefill tokens (axis: tokens).
    ConvPrefill {
        /// Channels.
        channels: u64,
        /// Kernel width.
        kernel: u64,
    },
    /// The sampler over the vocabulary (axis: rows).
    Sampler {
        /// Vocabulary.
        vocab: u64,
    },
}

/// The best fraction of the HBM data-sheet rate a kernel streams at: 0.948, a Triton
/// load-sum over 8.6 GB on the H200 (2026-12-04); `torch.sum` reached 0.875.
pub const STREAM_CEILING: f64 = 0.948;

/// Fallback roofline for operators no table holds: achieved fractions of the data-sheet
/// peaks and the smallest time of one kernel, read off the 2026-12-04 H200 tables (big
/// BF16 GEMMs 0.70–0.80 of peak, streaming 0.86–0.95 of HBM, small kernels a 4–13 µs floor
/// for GEMMs and 1.4 µs for the smallest elementwise update).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Roofline {
    /// Achieved fraction of the dense tensor peak.
    pub eta_compute: f64,
    /// Achieved fraction of HBM bandwidth.
    pub eta_memory: f64,
    /// Smallest time of a GEMM kernel, µs.
    pub gemm_floor_us: f64,
    /// Smallest time of any other kernel, µs.
    pub kernel_floor_us: f64,
}

/// The fallback constants ([`Roofline`]).
pub const ROOFLINE: Roofline = Roofline {
    eta_compute: 0.75,
    eta_memory: 0.80,
    gemm_floor_us: 5.0,
    kernel_floor_us: 2.0,
};

impl Operator {
    /// The axis the operator's table is keyed on.
    pub fn axis(&self) -> Axis {
        match self {
            Operator::AttentionDecode { .. } => Axis::KvTokens,
            Operator::AttentionPrefill { .. } => Axis::Pairs,
            Operator::GdnDecode { .. } | Operator::ConvDecode { .. } => Axis::Batch,
            Operator::Sampler { .. } => Axis::Rows,
            _ => Axis::Tokens,
        }
    }

    /// (FLOPs, bytes moved) at size `x` on the operator's axis.
    pub fn work(&self, x: f64) -> (f64, f64) {
        let u = |v: &u64| *v as f64;
        match self {
            Operator::Gemm { dtype, k, n } => (
                2.0 * x * u(k) * u(n),
                u(k) * u(n) * dtype.bytes() + 2.0 * x * (u(k) + u(n)),
            ),
            Operator::Moe {
                dtype,
                hidden,
                intermediate,
                experts,
                top_k,
            } => {
                let e = u(experts);
                let touched = e * (1.0 - (1.0 - u(top_k) / e).powf(x));
                let per_expert = 3.0 * u(hidden) * u(intermediate);
                (
                    2.0 * x * u(top_k) * per_expert,
                    touched * per_expert * dtype.bytes() + 4.0 * x * u(top_k) * u(hidden),
                )
            }
            Operator::RouterTopk { experts, .. } => (0.0, 8.0 * x * u(experts)),
            Operator::Rmsnorm { width } => (0.0, 8.0 * x * u(width)),
            Operator::SiluMul { width } => (0.0, 6.0 * x * u(width)),
            Operator::Rope { width } => (0.0, 4.0 * x * u(width)),
            Operator::AttentionDecode {
                q_heads,
                kv_heads,
                head_dim,
            } => (
                4.0 * x * u(q_heads) * u(head_dim),
                4.0 * x * u(kv_heads) * u(head_dim),
            ),
            Operator::AttentionPrefill {
                q_heads, head_dim, ..
            } => (4.0 * x * u(q_heads) * u(head_dim), 0.0),
            Operator::GdnDecode {
                value_heads,
                key_dim,
                value_dim,
                ..
            } => {
                let state = u(value_heads) * u(key_dim) * u(value_dim);
                (6.0 * x * state, 4.0 * x * state)
            }
            Operator::GdnPrefill {
                value_heads,
                key_dim,
                value_dim,
                ..
            } => (
                8.0 * x * u(value_heads) * u(key_dim) * u(value_dim),
                2.0 * x * u(value_heads) * (3.0 * u(key_dim) + 2.0 * u(value_dim)),
            ),
            Operator::ConvDecode { channels, kernel } => (0.0, 2.0 * x * u(channels) * u(kernel)),
            Operator::ConvPrefill { channels, .. } => (0.0, 4.0 * x * u(channels)),
            Operator::Sampler { vocab } => (0.0, 8.0 * x * u(vocab)),
        }
    }

    /// Whether the operator runs on the tensor cores (its FLOPs count against the
    /// `dtype`'s GEMM peak).
    pub(super) fn peak_flops(&self, gpu: &GpuSpec) -> f64 {
        match self {
            Operator::Gemm {
                dtype: Dtype::Fp8, ..
            }
            | Operator::Moe {
                dtype: Dtype::Fp8, ..
            } => gpu.peak_fp8_flops,
            _ => gpu.peak_bf16_flops,
        }
    }

    /// The roofline time at size `x` on `gpu`, µs: the larger of compute and memory time
    /// at [`ROOFLINE`]'s efficiencies, and at least one kernel's floor.
    pub fn roofline_us(&self, x: f64, gpu: &GpuSpec) -> f64 {
        let (flops, bytes) = self.work(x);
        let r = ROOFLINE;
        let t = (flops / (self.peak_flops(gpu) * r.eta_compute))
            .max(bytes / (gpu.hbm_bytes_per_s * r.eta_memory));
        let floor = match self {
            Operator::Gemm { .. } | Operator::Moe { .. } => r.gemm_floor_us,
            _ => r.kernel_floor_us,
        };
        (t * 1e6).max(floor)
    }
}

/// One measured operator: its times (µs) at sizes on its axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableEntry {
    /// The operator.
    #[serde(flatten)]
    pub op: Operator,
    /// What the sizes count (must be the operator's [`Operator::axis`]).
    pub axis: Axis,
    /// Key of the provenance record the entry comes from.
    pub source: String,
    /// The kernel measured (free text).
    #[serde(rename = "impl", default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// (size, µs) pairs, sizes increasing.
    pub points: Vec<[f64; 2]>,
}

/// A kernel table file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TableFile {
    format: String,
    gpu: String,
    provenance: BTreeMap<String, serde_json::Value>,
    operators: Vec<TableEntry>,
    #[serde(default)]
    skipped: Vec<serde_json::Value>,
    #[serde(default)]
    errors: Vec<serde_json::Value>,
}

/// Why a table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// Not JSON of the table format.
    #[error("{origin}: line {line}, column {column}: {message}")]
    Json {
        /// The file or shipped name.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde's message.
        message: String,
    },
    /// A well-formed file with unusable content.
    #[error("{origin}: {path}: {message}")]
    Invalid {
        /// The file or shipped name.
        origin: String,
        /// JSON path of the bad value.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The measured operator times of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTable {
    /// GPU the table was measured on (or derived for).
    pub gpu: String,
    /// Provenance records, by key.
    pub provenance: BTreeMap<String, serde_json::Value>,
    /// The measured operators.
    pub entries: Vec<TableEntry>,
}

impl KernelTable {
    /// The shipped table for the GPU called `short` (`h200`), if any.
    pub fn shipped(short: &str) -> Option<KernelTable> {
        SHIPPED_TABLES
            .iter()
            .find(|(n, _)| *n == short)
            .and_then(|(n, json)| KernelTable::from_json(json, n).ok())
    }

    /// The table to use for `gpu`: its own when shipped, else the H200's scaled to it when
    /// it is of the same chip (an H100 SXM: [`KernelTable::scaled_to`]); `None` otherwise
    /// (the step model then uses the roofline alone).
    pub fn for_gpu(gpu: &GpuSpec) -> Option<KernelTable> {
        let name = gpu.name.to_ascii_lowercase();
        if name.starts_with("h200") {
            return KernelTable::shipped("h200");
        }
        if name.starts_with("h100") {
            let h200 = KernelTable::shipped("h200")?;
            let from = GpuSpec::resolve("h200").ok()?;
            return Some(h200.scaled_to(&from, gpu));
        }
        None
    }

    /// Parses a table; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<KernelTable, TableError> {
        let f: TableFile = serde_json::from_str(text).map_err(|e| TableError::Json {
            origin: origin.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let invalid = |path: String, message: String| TableError::Invalid {
            origin: origin.to_string(),
            path,
            message,
        };
        if f.format != KERNELS_FORMAT {
            return Err(invalid(
                "format".into(),
                format!("`{}`, expected `{KERNELS_FORMAT}`", f.format),
            ));
        }
        for (i, e) in f.operators.iter().enumerate() {
            if e.axis != e.op.axis() {
                return Err(invalid(
                    format!("operators[{i}].axis"),
                    format!("{:?}, the operator's axis is {:?}", e.axis, e.op.axis()),
                ));
            }
            if !f.provenance.contains_key(&e.source) {
                return Err(invalid(
                    format!("operators[{i}].source"),
                    format!("no provenance record `{}`", e.source),
                ));
            }
            if e.points.is_empty() {
                return Err(invalid(format!("operators[{i}].points"), "empty".into()));
            }
            let mut last = 0.0;
            for (j, [x, t]) in e.points.iter().enumerate() {
                if !(x.is_finite() && t.is_finite() && *x > last && *t > 0.0) {
                    return Err(invalid(
                        format!("operators[{i}].points[{j}]"),
                        format!("[{x}, {t}]: sizes must increase, times be positive"),
                    ));
                }
                last = *x;
            }
        }
        Ok(KernelTable {
            gpu: f.gpu,
            provenance: f.provenance,
            entries: f.operators,
        })
    }

    /// The measured entry for `op`, if any (the last one when several measure it).
    pub fn entry(&self, op: &Operator) -> Option<&TableEntry> {
        self.entries.iter().rev().find(|e| &e.op == op)
    }

    /// The time of `op` at size `x`, µs, interpolated in the table ([`interpolate`]: the
    /// first size's time below it, a kernel's floor; shaped like a kernel between measured
    /// sizes; proportional to size beyond the last, throughput-bound). `None` when
    /// unmeasured.
    pub fn time_us(&self, op: &Operator, x: f64) -> Option<f64> {
        self.entry(op).map(|e| interpolate(&e.points, x))
    }

    /// This table, measured on `from`, for a GPU `to` of the same chip with different
    /// memory bandwidth (H200 → H100 SXM: both GH100 with 132 SMs enabled, the same
    /// 1980 MHz boost clock and the same 989 / 1979 TFLOP/s dense BF16 / FP8 peaks; HBM
    /// 4.8 vs 3.35 TB/s, NVIDIA's data sheets). A point the roofline calls memory-bound is
    /// taken as a fixed latency plus its bytes streamed at [`STREAM_CEILING`] of the
    /// bandwidth: on `to` the latency stays and the streaming slows, t + bytes /
    /// ceiling × (1 / bw_to − 1 / bw_from). A weight-streaming GEMM at one token (0.86 of
    /// the H200's bandwidth) slows by ≈ 1.4×, a kernel that reached about half of it
    /// (vLLM's Gated DeltaNet update at 256 sequences) by ≈ 1.24×. A compute-bound point
    /// scales with the tensor peaks (1 here).
    pub fn scaled_to(&self, from: &GpuSpec, to: &GpuSpec) -> KernelTable {
        let entries = self
            .entries
            .iter()
            .map(|e| {
                let peak = e.op.peak_flops(from) / e.op.peak_flops(to);
                let points = e
                    .points
                    .iter()
                    .map(|&[x, t]| {
                        let (flops, bytes) = e.op.work(x);
                        let stream = |bw: f64| bytes / (bw * STREAM_CEILING) * 1e6;
                        let compute_us =
                            flops / (e.op.peak_flops(from) * ROOFLINE.eta_compute) * 1e6;
                        if stream(from.hbm_bytes_per_s) >= compute_us {
                            let slower = stream(to.hbm_bytes_per_s) - stream(from.hbm_bytes_per_s);
                            [x, t + slower.max(0.0)]
                        } else {
                            [x, t * peak]
                        }
                    })
                    .collect();
                TableEntry {
                    points,
                    ..e.clone()
                }
            })
            .collect();
        let mut provenance = self.provenance.clone();
        provenance.insert(
            "derived".into(),
            serde_json::Value::String(format!(
                "{} table for {}: memory-bound points + bytes / {STREAM_CEILING} x \
                 (1 / {} − 1 / {} TB/s), compute-bound points x the peak ratio",
                self.gpu,
                to.name,
                to.hbm_bytes_per_s / 1e12,
                from.hbm_bytes_per_s / 1e12
            )),
        );
        KernelTable {
            gpu: to.name.clone(),
            provenance,
            entries,
        }
    }
}

/// How far, in log time, an interpolated time sits from the chord toward the knee bound
/// ([`interpolate`]): 0 is the log-log chord, 1 the sharp knee. Measured knees are soft
/// (tile shapes and waves change gradually), so the truth lies between the two; 0.75 was
/// chosen by leave-one-out on the H200 tables (each interior point predicted from the
/// others: 43 of 192 beyond 10 % at 0.75, 45 at 0.8, 43 at 0.7, 54 at 1, 77 for the
/// chord alone), a broad optimum.
pub const KNEE_WEIGHT: f64 = 0.75;

/// A kernel's time at size `x`, µs, interpolated in its measured `points` ((size, µs),
/// sizes increasing): the first time below the first size (the kernel's floor),
/// proportional to size beyond the last (throughput-bound), and in between shaped like a
/// kernel: a floor, then a memory-bound ramp, then compute-bound growth.
///
/// In log-log space each segment has its chord and two tangent lines: through its left
/// point with the slope of the segment before it (0, the floor, for the first) and
/// through its right point with the slope of the segment after it (1, proportional, for
/// the last). Where the three slopes increase (a knee: convex) the curve follows the
/// larger tangent, where they decrease (saturation, e.g. routed experts once all are
/// touched: concave) the smaller; elsewhere (noise) the chord. The result is
/// [`KNEE_WEIGHT`] of the way from the chord to that tangent bound, kept between the two
/// points' times. It passes through every measured point and is continuous. (Plain
/// log-log interpolation puts a straight line across the knee and overestimates the
/// sizes between a flat floor and a linear ramp by 15–40 %.)
pub fn interpolate(points: &[[f64; 2]], x: f64) -> f64 {
    Curve::new(points).at(x)
}

/// One segment of a [`Curve`], its logarithms and slopes computed once.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    /// Right end's size, µs and logarithms; left end's.
    xb: f64,
    ta: f64,
    tb: f64,
    ln_xa: f64,
    ln_ta: f64,
    ln_xb: f64,
    ln_tb: f64,
    /// Log-log slopes: the chord's, the segment before's, the segment after's.
    chord: f64,
    before: f64,
    after: f64,
}

/// A measured row prepared for repeated lookups: [`interpolate`] with every logarithm
/// and slope of its points computed once, so a lookup costs one logarithm and one
/// exponential (the step model looks up every operator of every simulated step), and
/// optionally the times at the whole sizes 1…n computed up front
/// ([`Curve::with_whole_sizes`]): a decode step's operators see the batch size. Gives the
/// same bits as [`interpolate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The first point (the floor below it).
    first: [f64; 2],
    /// The last point (proportional beyond it).
    last: [f64; 2],
    segments: Vec<Segment>,
    /// The times at sizes 1, 2, … (index 0: size 1).
    whole: Vec<f64>,
}

impl Curve {
    /// The curve through `points` ((size, µs), sizes increasing); an empty row is 0
    /// everywhere.
    pub fn new(points: &[[f64; 2]]) -> Curve {
        let n = points.len();
        let log_slope = |i: usize| {
            let ([xa, ta], [xb, tb]) = (points[i], points[i + 1]);
            (tb / ta).ln() / (xb / xa).ln()
        };
        let segments = (0..n.saturating_sub(1))
            .map(|i| {
                let ([xa, ta], [xb, tb]) = (points[i], points[i + 1]);
                Segment {
                    xb,
                    ta,
                    tb,
                    ln_xa: xa.ln(),
                    ln_ta: ta.ln(),
                    ln_xb: xb.ln(),
                    ln_tb: tb.ln(),
                    chord: log_slope(i),
                    before: if i > 0 { log_slope(i - 1) } else { 0.0 },
                    after: if i + 2 < n { log_slope(i + 1) } else { 1.0 },
                }
            })
            .collect();
        Curve {
            first: points.first().copied().unwrap_or([f64::INFINITY, 0.0]),
            last: points.last().copied().unwrap_or([f64::INFINITY, 0.0]),
            segments,
            whole: Vec::new(),
        }
    }

    /// The curve through `points` with its times at the whole sizes 1…`n` computed once.
    pub fn with_whole_sizes(points: &[[f64; 2]], n: usize) -> Curve {
        let mut c = Curve::new(points);
        c.whole = (1..=n).map(|i| c.interpolated(i as f64)).collect();
        c
    }

    /// The time at size `x`, µs ([`interpolate`]'s rule).
    pub fn at(&self, x: f64) -> f64 {
        if x >= 1.0 && x <= self.whole.len() as f64 && x.fract() == 0.0 {
            return self.whole[x as usize - 1];
        }
        self.interpolated(x)
    }

    fn interpolated(&self, x: f64) -> f64 {
        let [x0, t0] = self.first;
        if x <= x0 {
            return t0;
        }
        for g in &self.segments {
            if x > g.xb {
                continue;
            }
            let u = x.ln();
            let chord = g.ln_ta + g.chord * (u - g.ln_xa);
            let left = g.ln_ta + g.before * (u - g.ln_xa);
            let right = g.ln_tb + g.after * (u - g.ln_xb);
            let bound = if g.before <= g.chord && g.chord <= g.after {
                left.max(right)
            } else if g.before >= g.chord && g.chord >= g.after {
                left.min(right)
            } else {
                chord
            };
            let t = (KNEE_WEIGHT * bound + (1.0 - KNEE_WEIGHT) * chord).exp();
            return t.clamp(g.ta.min(g.tb), g.ta.max(g.tb));
        }
        let [xl, tl] = self.last;
        tl * x / xl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_is_log_log_with_a_floor_and_a_linear_tail() {
        let p = [[1.0, 10.0], [100.0, 10.0], [1000.0, 100.0]];
        assert_eq!(interpolate(&p, 0.5), 10.0);
        assert!((interpolate(&p, 10.0) - 10.0).abs() < 1e-9);
        // Halfway in log between 100 and 1000: sqrt(10 * 100).
        assert!((interpolate(&p, 316.227_766) - 31.622_776).abs() < 1e-4);
        assert!((interpolate(&p, 4000.0) - 400.0).abs() < 1e-9);
    }

    #[test]
    fn the_knee_is_shaped_between_a_floor_and_a_ramp_and_curves_give_the_same_bits() {
        // A floor of 10 µs to 64, then proportional from 512: the log-log chord puts 256
        // at 10 · 4^(2/3) = 25.2 µs, the sharp knee at max(10, 40 · 256 / 512) = 20; the
        // curve sits three quarters of the way (in log) toward the knee, 21.2 µs.
        let p = [[1.0, 10.0], [64.0, 10.0], [512.0, 40.0], [4096.0, 320.0]];
        let t = interpolate(&p, 256.0);
        let chord = 10.0 * 4f64.powf(2.0 / 3.0);
        let expected = (0.75 * 20f64.ln() + 0.25 * chord.ln()).exp();
        assert!((t - expected).abs() < 1e-9, "{t} {expected}");
        assert!((21.1..21.3).contains(&t), "{t}");
        // Every measured point is returned; between them the curve stays within its
        // segment's two times.
        for [x, us] in p {
            assert!((interpolate(&p, x) / us - 1.0).abs() < 1e-12, "{x}");
        }
        let noisy = [
            [1.0, 3.4],
            [8.0, 4.9],
            [32.0, 1.4],
            [64.0, 1.5],
            [128.0, 2.1],
        ];
        for i in 1..1280 {
            let x = i as f64 / 10.0;
            let t = interpolate(&noisy, x);
            let seg = noisy.windows(2).find(|w| x <= w[1][0]).unwrap();
            assert!(t >= seg[0][1].min(seg[1][1]) - 1e-12, "{x}: {t}");
            assert!(t <= seg[0][1].max(seg[1][1]) + 1e-12, "{x}: {t}");
        }
        // A prepared curve, with or without its whole sizes, gives the same bits.
        let table = KernelTable::shipped("h200").unwrap();
        for e in &table.entries {
            let c = Curve::with_whole_sizes(&e.points, 600);
            for x in [
                0.5, 1.0, 2.0, 7.0, 8.0, 100.5, 511.0, 600.0, 601.0, 5000.0, 2e6,
            ] {
                assert_eq!(
                    c.at(x).to_bits(),
                    interpolate(&e.points, x).to_bits(),
                    "{x}"
                );
            }
        }
        assert_eq!(interpolate(&[], 3.0), 0.0);
    }

    #[test]
    fn the_shipped_h200_table_parses_and_bad_tables_are_named() {
        let t = KernelTable::shipped("h200").expect("shipped");
        assert!(t.entries.len() > 20, "{}", t.entries.len());
        let e = KernelTable::from_json(
            r#"{"format": "x", "gpu": "g", "provenance": {}, "operators": []}"#,
            "t.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.json: format"), "{e}");
        let bad = r#"{"format": "servebench-kernels/1", "gpu": "g", "provenance": {"p": {}},
            "operators": [{"op": "sampler", "vocab": 8, "axis": "rows", "source": "p",
            "points": [[8, 1.0], [4, 2.0]]}]}"#;
        let e = KernelTable::from_json(bad, "t.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("operators[0].points[1]"), "{e}");
        let wrong_axis = bad.replace("\"rows\"", "\"tokens\"");
        let e = KernelTable::from_json(&wrong_axis, "t.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("operators[0].axis"), "{e}");
    }

    #[test]
    fn the_h100_table_is_the_h200_one_slowed_where_its_bandwidth_binds() {
        let h200 = GpuSpec::resolve("h200").unwrap();
        let h100 = GpuSpec::resolve("h100").unwrap();
        let a = KernelTable::for_gpu(&h200).unwrap();
        let b = KernelTable::for_gpu(&h100).unwrap();
        let lm = Operator::Gemm {
            dtype: Dtype::Bf16,
            k: 2048,
            n: 248_320,
        };
        // lm_head at one row streams 1 GB of weights at 0.86 of the H200's bandwidth: its
        // streaming part slows by the bandwidth ratio, its latency does not.
        let (ta, tb) = (a.time_us(&lm, 1.0).unwrap(), b.time_us(&lm, 1.0).unwrap());
        let bytes = lm.work(1.0).1;
        let extra = bytes / STREAM_CEILING * (1.0 / 3.35e12 - 1.0 / 4.8e12) * 1e6;
        assert!((tb - ta - extra).abs() < 1e-6, "{ta} {tb}");
        assert!((1.35..4.8 / 3.35).contains(&(tb / ta)), "{ta} {tb}");
        // vLLM's Gated DeltaNet update reaches about half of the H200's bandwidth: it
        // slows less.
        let gdn = Operator::GdnDecode {
            key_heads: 16,
            value_heads: 32,
            key_dim: 128,
            value_dim: 128,
        };
        let r = b.time_us(&gdn, 256.0).unwrap() / a.time_us(&gdn, 256.0).unwrap();
        assert!((1.05..1.25).contains(&r), "{r}");
        // At 8192 rows the GEMM is compute-bound: same time.
        let big = Operator::Gemm {
            dtype: Dtype::Bf16,
            k: 2048,
            n: 12_288,
        };
        let (ta, tb) = (
            a.time_us(&big, 8192.0).unwrap(),
            b.time_us(&big, 8192.0).unwrap(),
        );
        assert!((tb / ta - 1.0).abs() < 1e-9, "{ta} {tb}");
        assert!(b.provenance.contains_key("derived"));
    }
}
