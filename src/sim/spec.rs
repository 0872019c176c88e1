//! What the simulator knows about the hardware and the model, from public facts only: a
//! model's architecture read from the fields of its Hugging Face `config.json`
//! ([`ModelSpec`]) and a GPU's data-sheet figures ([`GpuSpec`]). Two models
//! (Qwen3.5-35B-A3B, Qwen3.5-9B) and two GPUs (H100 SXM 80 GB, H200 141 GB) are shipped
//! (`src/sim/data/*.json`, each citing its sources in a `_comment` field); others load from
//! a file. Everything derived here (parameter counts, KV bytes per token, Gated-DeltaNet
//! state bytes, vLLM's hybrid page size) is arithmetic on those fields.
//!
//! ```
//! use servebench::sim::{GpuSpec, ModelSpec};
//!
//! let m = ModelSpec::resolve("Qwen/Qwen3.5-35B-A3B-FP8").unwrap();
//! assert!(m.fp8_checkpoint);
//! assert_eq!(m.full_attention_layers, 10);
//! assert_eq!(m.kv_bytes_per_token(2.0), 20_480.0);
//! let h100 = GpuSpec::resolve("h100").unwrap();
//! assert_eq!(h100.hbm_bytes_per_s, 3.35e12);
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Shipped model descriptions: (short name, Hugging Face id, config JSON).
pub const SHIPPED_MODELS: [(&str, &str, &str); 3] = [
    (
        "qwen3.5-35b-a3b",
        "Qwen/Qwen3.5-35B-A3B",
        include_str!("data/qwen3.5-35b-a3b.json"),
    ),
    (
        "qwen3.5-9b",
        "Qwen/Qwen3.5-9B",
        include_str!("data/qwen3.5-9b.json"),
    ),
    (
        "qwen3-embedding-0.6b",
        "Qwen/Qwen3-Embedding-0.6B",
        include_str!("data/qwen3-embedding-0.6b.json"),
    ),
];

/// Shipped GPU descriptions: (short name, JSON).
pub const SHIPPED_GPUS: [(&str, &str); 2] = [
    ("h100", include_str!("data/h100.json")),
    ("h200", include_str!("data/h200.json")),
];

/// Why a model or GPU description could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// Not a shipped name, not a Hugging Face id of one, and no such file.
    #[error("unknown {what} `{name}` (shipped: {known}; or a path to a JSON file)")]
    Unknown {
        /// `model` or `gpu`.
        what: &'static str,
        /// What was asked for.
        name: String,
        /// The shipped names.
        known: String,
    },
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The JSON does not describe a model or GPU.
    #[error("{origin}: line {line}, column {column}: {message}")]
    Json {
        /// The file or shipped name.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde's message (names the missing or mistyped field).
        message: String,
    },
    /// A field is present but not usable.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        /// The file or shipped name.
        origin: String,
        /// The JSON path of the field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// A GPU's data-sheet figures.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    /// Sources, free text (ignored).
    #[serde(rename = "_comment", default)]
    pub comment: String,
    /// Display name.
    pub name: String,
    /// Device memory as the driver reports it, bytes.
    pub memory_bytes: f64,
    /// HBM bandwidth, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// Dense BF16 tensor peak, FLOP/s.
    pub peak_bf16_flops: f64,
    /// Dense FP8 tensor peak, FLOP/s.
    pub peak_fp8_flops: f64,
}

impl GpuSpec {
    /// `h100`, `h200` (case-insensitive; `h100-sxm`, `h200-sxm` too) or a path to a JSON
    /// file with the same fields.
    pub fn resolve(name: &str) -> Result<GpuSpec, SpecError> {
        let lower = name.to_ascii_lowercase();
        let short = lower.trim_end_matches("-sxm");
        if let Some((_, json)) = SHIPPED_GPUS.iter().find(|(n, _)| *n == short) {
            return GpuSpec::from_json(json, short);
        }
        let path = Path::new(name);
        if path.is_file() {
            return GpuSpec::load(path);
        }
        Err(SpecError::Unknown {
            what: "gpu",
            name: name.to_string(),
            known: SHIPPED_GPUS.map(|(n, _)| n).join(", "),
        })
    }

    /// Reads a GPU description file.
    pub fn load(path: &Path) -> Result<GpuSpec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        GpuSpec::from_json(&text, &path.display().to_string())
    }

    /// Parses a GPU description; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<GpuSpec, SpecError> {
        let g: GpuSpec = serde_json::from_str(text).map_err(|e| json_error(e, origin))?;
        for (field, v) in [
            ("memory_bytes", g.memory_bytes),
            ("hbm_bytes_per_s", g.hbm_bytes_per_s),
            ("peak_bf16_flops", g.peak_bf16_flops),
            ("peak_fp8_flops", g.peak_fp8_flops),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(SpecError::Invalid {
                    origin: origin.to_string(),
                    field,
                    message: format!("must be a positive number, got {v}"),
                });
            }
        }
        Ok(g)
    }
}

fn json_error(e: serde_json::Error, origin: &str) -> SpecError {
    SpecError::Json {
        origin: origin.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

/// The `config.json` fields read (top level, or under `text_config` for the multimodal
/// checkpoints); unknown fields are allowed, as every real config has many.
#[derive(Debug, Deserialize)]
struct RawText {
    num_hidden_layers: u64,
    #[serde(default)]
    layer_types: Option<Vec<String>>,
    #[serde(default)]
    full_attention_interval: Option<u64>,
    hidden_size: u64,
    num_attention_heads: u64,
    num_key_value_heads: u64,
    head_dim: u64,
    #[serde(default)]
    attn_output_gate: bool,
    #[serde(default)]
    linear_num_key_heads: u64,
    #[serde(default)]
    linear_num_value_heads: u64,
    #[serde(default)]
    linear_key_head_dim: u64,
    #[serde(default)]
    linear_value_head_dim: u64,
    #[serde(default = "default_conv")]
    linear_conv_kernel_dim: u64,
    #[serde(default)]
    intermediate_size: u64,
    #[serde(default)]
    num_experts: u64,
    #[serde(default)]
    num_experts_per_tok: u64,
    #[serde(default)]
    moe_intermediate_size: u64,
    #[serde(default)]
    shared_expert_intermediate_size: u64,
    vocab_size: u64,
    #[serde(default)]
    tie_word_embeddings: bool,
    #[serde(default)]
    mtp_num_hidden_layers: u64,
    #[serde(default)]
    max_position_embeddings: Option<u64>,
}

fn default_conv() -> u64 {
    4
}

#[derive(Debug, Deserialize)]
struct RawVision {
    depth: u64,
    hidden_size: u64,
    intermediate_size: u64,
}

#[derive(Debug, Deserialize)]
struct RawConfig {
    #[serde(default)]
    text_config: Option<serde_json::Value>,
    #[serde(default)]
    vision_config: Option<RawVision>,
    #[serde(default)]
    quantization_config: Option<serde_json::Value>,
}

/// A model's architecture, as the step model needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// Hugging Face id (or the file it came from).
    pub id: String,
    /// Whether the checkpoint's weights are FP8 (`…-FP8` ids, or a `quantization_config`
    /// with `quant_method: fp8`).
    pub fp8_checkpoint: bool,
    /// Decoder layers with full (gated) attention.
    pub full_attention_layers: u64,
    /// Decoder layers with Gated DeltaNet (linear attention).
    pub linear_attention_layers: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Attention query heads.
    pub heads: u64,
    /// Attention KV heads.
    pub kv_heads: u64,
    /// Attention head dimension.
    pub head_dim: u64,
    /// Whether q_proj also produces an output gate (doubling it).
    pub attn_output_gate: bool,
    /// Gated DeltaNet key heads.
    pub linear_key_heads: u64,
    /// Gated DeltaNet value heads.
    pub linear_value_heads: u64,
    /// Gated DeltaNet key head dimension.
    pub linear_key_dim: u64,
    /// Gated DeltaNet value head dimension.
    pub linear_value_dim: u64,
    /// Gated DeltaNet short-convolution kernel.
    pub conv_kernel: u64,
    /// Dense MLP intermediate size (0 for MoE models).
    pub intermediate: u64,
    /// Routed experts per MoE layer (0 for dense models).
    pub experts: u64,
    /// Experts each token is routed to.
    pub top_k: u64,
    /// Routed-expert intermediate size.
    pub expert_intermediate: u64,
    /// Shared-expert intermediate size (0: none).
    pub shared_expert_intermediate: u64,
    /// Vocabulary.
    pub vocab: u64,
    /// Whether lm_head shares the embedding.
    pub tied_embeddings: bool,
    /// MTP (multi-token prediction) layers shipped for speculative decoding.
    pub mtp_layers: u64,
    /// Native context, tokens.
    pub max_position_embeddings: Option<u64>,
    /// Vision-tower parameters (0 for text-only checkpoints).
    pub vision_params: f64,
    /// Vision-tower hidden size (`vision_config.hidden_size`; 0 without one).
    pub vision_hidden: u64,
    /// Vision-tower blocks (`vision_config.depth`; 0 without one).
    pub vision_depth: u64,
}

impl ModelSpec {
    /// A shipped short name (`qwen3.5-35b-a3b`, `qwen3.5-9b`, `qwen3-embedding-0.6b`), a Hugging Face id of one
    /// (case-insensitive; a `-FP8` suffix selects the FP8 checkpoint), or a path to a
    /// `config.json`.
    pub fn resolve(name: &str) -> Result<ModelSpec, SpecError> {
        let lower = name.to_ascii_lowercase();
        let (base, fp8) = match lower.strip_suffix("-fp8") {
            Some(b) => (b, true),
            None => (lower.as_str(), false),
        };
        let base = base.strip_prefix("qwen/").unwrap_or(base);
        if let Some((short, id, json)) = SHIPPED_MODELS.iter().find(|(s, _, _)| *s == base) {
            let mut m = ModelSpec::from_json(json, short)?;
            m.fp8_checkpoint = fp8;
            m.id = if fp8 {
                format!("{id}-FP8")
            } else {
                id.to_string()
            };
            return Ok(m);
        }
        let path = Path::new(name);
        if path.is_file() {
            return ModelSpec::load(path);
        }
        Err(SpecError::Unknown {
            what: "model",
            name: name.to_string(),
            known: SHIPPED_MODELS
                .map(|(s, id, _)| format!("{s} ({id}[-FP8])"))
                .join(", "),
        })
    }

    /// Reads a Hugging Face `config.json`.
    pub fn load(path: &Path) -> Result<ModelSpec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        ModelSpec::from_json(&text, &path.display().to_string())
    }

    /// Parses a Hugging Face `config.json`; `origin` names it in errors and becomes the id.
    pub fn from_json(text: &str, origin: &str) -> Result<ModelSpec, SpecError> {
        let raw: RawConfig = serde_json::from_str(text).map_err(|e| json_error(e, origin))?;
        let t: RawText = match raw.text_config {
            Some(v) => serde_json::from_value(v).map_err(|e| SpecError::Json {
                origin: origin.to_string(),
                line: 0,
                column: 0,
                message: format!("text_config: {e}"),
            })?,
            None => serde_json::from_str(text).map_err(|e| json_error(e, origin))?,
        };
        let invalid = |field, message: String| SpecError::Invalid {
            origin: origin.to_string(),
            field,
            message,
        };
        let full = match (&t.layer_types, t.full_attention_interval) {
            (Some(types), _) => {
                if types.len() as u64 != t.num_hidden_layers {
                    return Err(invalid(
                        "text_config.layer_types",
                        format!("{} entries for {} layers", types.len(), t.num_hidden_layers),
                    ));
                }
                let mut full = 0;
                for ty in types {
                    match ty.as_str() {
                        "full_attention" => full += 1,
                        "linear_attention" => {}
                        other => {
                            return Err(invalid(
                                "text_config.layer_types",
                                format!("unknown layer type `{other}`"),
                            ))
                        }
                    }
                }
                full
            }
            (None, Some(k)) if k > 0 => t.num_hidden_layers / k,
            _ => t.num_hidden_layers,
        };
        let linear = t.num_hidden_layers - full;
        if linear > 0 && (t.linear_num_value_heads == 0 || t.linear_value_head_dim == 0) {
            return Err(invalid(
                "text_config.linear_num_value_heads",
                "linear-attention layers need linear_* head counts and dims".into(),
            ));
        }
        if t.num_experts > 0 && (t.num_experts_per_tok == 0 || t.moe_intermediate_size == 0) {
            return Err(invalid(
                "text_config.num_experts_per_tok",
                "an MoE model needs num_experts_per_tok and moe_intermediate_size".into(),
            ));
        }
        if t.num_experts == 0 && t.intermediate_size == 0 {
            return Err(invalid(
                "text_config.intermediate_size",
                "a dense model needs intermediate_size".into(),
            ));
        }
        for (field, v) in [
            ("text_config.hidden_size", t.hidden_size),
            ("text_config.num_attention_heads", t.num_attention_heads),
            ("text_config.num_key_value_heads", t.num_key_value_heads),
            ("text_config.head_dim", t.head_dim),
            ("text_config.vocab_size", t.vocab_size),
        ] {
            if v == 0 {
                return Err(invalid(field, "must be positive".into()));
            }
        }
        let (vision_hidden, vision_depth) = raw
            .vision_config
            .as_ref()
            .map_or((0, 0), |v| (v.hidden_size, v.depth));
        let vision_params = raw.vision_config.map_or(0.0, |v| {
            let h = v.hidden_size as f64;
            // Per block: qkv + out projections (4 h^2) and a two-matrix MLP.
            v.depth as f64 * (4.0 * h * h + 2.0 * h * v.intermediate_size as f64)
        });
        let fp8 = raw
            .quantization_config
            .as_ref()
            .and_then(|q| q.get("quant_method"))
            .and_then(|m| m.as_str())
            == Some("fp8");
        Ok(ModelSpec {
            id: origin.to_string(),
            fp8_checkpoint: fp8,
            full_attention_layers: full,
            linear_attention_layers: linear,
            hidden: t.hidden_size,
            heads: t.num_attention_heads,
            kv_heads: t.num_key_value_heads,
            head_dim: t.head_dim,
            attn_output_gate: t.attn_output_gate,
            linear_key_heads: t.linear_num_key_heads,
            linear_value_heads: t.linear_num_value_heads,
            linear_key_dim: t.linear_key_head_dim,
            linear_value_dim: t.linear_value_head_dim,
            conv_kernel: t.linear_conv_kernel_dim,
            intermediate: t.intermediate_size,
            experts: t.num_experts,
            top_k: t.num_experts_per_tok,
            expert_intermediate: t.moe_intermediate_size,
            shared_expert_intermediate: t.shared_expert_intermediate_size,
            vocab: t.vocab_size,
            tied_embeddings: t.tie_word_embeddings,
            mtp_layers: t.mtp_num_hidden_layers,
            max_position_embeddings: t.max_position_embeddings,
            vision_params,
            vision_hidden,
            vision_depth,
        })
    }

    /// Decoder layers.
    pub fn layers(&self) -> u64 {
        self.full_attention_layers + self.linear_attention_layers
    }

    /// Parameters of one full-attention layer's projections (q doubled by the output gate).
    pub fn attention_params(&self) -> f64 {
        let h = self.hidden as f64;
        let q = (self.heads * self.head_dim) as f64;
        let kv = (self.kv_heads * self.head_dim) as f64;
        let gate = if self.attn_output_gate { 2.0 } else { 1.0 };
        h * q * gate + 2.0 * h * kv + q * h
    }

    /// Parameters of one Gated DeltaNet layer's projections (q, k, v, z in; b, a gates;
    /// out).
    pub fn linear_attention_params(&self) -> f64 {
        let h = self.hidden as f64;
        let k = (self.linear_key_heads * self.linear_key_dim) as f64;
        let v = (self.linear_value_heads * self.linear_value_dim) as f64;
        h * (2.0 * k + 2.0 * v) + h * 2.0 * self.linear_value_heads as f64 + v * h
    }

    /// Parameters of one routed expert (gate, up, down).
    pub fn expert_params(&self) -> f64 {
        3.0 * (self.hidden * self.expert_intermediate) as f64
    }

    /// Parameters of one layer's MLP every token uses: the dense MLP, or the shared expert
    /// plus the router.
    pub fn dense_mlp_params(&self) -> f64 {
        let h = self.hidden as f64;
        if self.experts == 0 {
            3.0 * h * self.intermediate as f64
        } else {
            3.0 * h * self.shared_expert_intermediate as f64 + h * self.experts as f64
        }
    }

    /// lm_head parameters.
    pub fn lm_head_params(&self) -> f64 {
        (self.vocab * self.hidden) as f64
    }

    /// Parameters every token runs through besides routed experts and lm_head.
    pub fn dense_active_params(&self) -> f64 {
        self.full_attention_layers as f64 * self.attention_params()
            + self.linear_attention_layers as f64 * self.linear_attention_params()
            + self.layers() as f64 * self.dense_mlp_params()
    }

    /// Routed-expert parameters one token activates (0 for dense models).
    pub fn active_expert_params(&self) -> f64 {
        (self.top_k * self.layers()) as f64 * self.expert_params()
    }

    /// Parameters resident on the GPU: text tower (incl. embedding and lm_head), the MTP
    /// layers and, unless `language_model_only`, the vision tower.
    pub fn resident_params(&self, language_model_only: bool) -> f64 {
        let experts = (self.experts * self.layers()) as f64 * self.expert_params();
        let embed = self.lm_head_params();
        let lm_head = if self.tied_embeddings { 0.0 } else { embed };
        let vision = if language_model_only {
            0.0
        } else {
            self.vision_params
        };
        self.dense_active_params()
            + experts
            + embed
            + lm_head
            + self.mtp_layers as f64 * self.mtp_layer_params()
            + vision
    }

    /// Parameters of one MTP layer: a full-attention decoder layer with every expert, plus
    /// its 2h → h input projection (it shares embedding and lm_head with the model).
    pub fn mtp_layer_params(&self) -> f64 {
        let h = self.hidden as f64;
        self.attention_params()
            + self.dense_mlp_params()
            + self.experts as f64 * self.expert_params()
            + 2.0 * h * h
    }

    /// Full-attention KV bytes per token at `bytes_per_value` (2 BF16, 1 FP8).
    pub fn kv_bytes_per_token(&self, bytes_per_value: f64) -> f64 {
        (self.full_attention_layers * 2 * self.kv_heads * self.head_dim) as f64 * bytes_per_value
    }

    /// One Gated DeltaNet layer's state per sequence, bytes (recurrent state + the
    /// convolution's last `kernel − 1` inputs), in the model dtype (BF16; vLLM 0.17's
    /// default state dtype, whatever `mamba_ssm_dtype` says).
    pub fn linear_state_bytes_per_layer(&self) -> f64 {
        let recurrent = self.linear_value_heads * self.linear_key_dim * self.linear_value_dim;
        let conv_dim = 2 * self.linear_key_heads * self.linear_key_dim
            + self.linear_value_heads * self.linear_value_dim;
        ((recurrent + conv_dim * self.conv_kernel.saturating_sub(1)) * 2) as f64
    }

    /// Gated DeltaNet state per sequence over all linear layers, bytes.
    pub fn linear_state_bytes(&self) -> f64 {
        self.linear_attention_layers as f64 * self.linear_state_bytes_per_layer()
    }

    /// Attention FLOPs per (query token × context token) over all full-attention layers.
    pub fn attention_flops_per_pair(&self) -> f64 {
        (4 * self.heads * self.head_dim * self.full_attention_layers) as f64
    }

    /// vLLM's hybrid KV layout (BF16 KV): tokens per attention page — the state page
    /// divided by one layer's KV bytes per token, rounded up to a multiple of 16 —, layers
    /// per block group, and the state blocks each running sequence holds. For a model with
    /// no linear layers: 16-token pages, one group of all layers, no state blocks.
    pub fn hybrid_layout(&self) -> HybridLayout {
        let per_layer_kv = (2 * self.kv_heads * self.head_dim * 2) as f64;
        if self.linear_attention_layers == 0 || self.full_attention_layers == 0 {
            return HybridLayout {
                block_tokens: 16,
                group_layers: self.layers(),
                state_blocks_per_seq: 0,
                block_bytes: 16.0 * per_layer_kv * self.layers() as f64,
            };
        }
        let state = self.linear_state_bytes_per_layer();
        let tokens = ((state / per_layer_kv).ceil() as u64).div_ceil(16) * 16;
        let group = gcd(self.full_attention_layers, self.linear_attention_layers);
        HybridLayout {
            block_tokens: tokens,
            group_layers: group,
            state_blocks_per_seq: self.linear_attention_layers / group,
            block_bytes: tokens as f64 * per_layer_kv * group as f64,
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// vLLM's unified block pool for a hybrid model (see [`ModelSpec::hybrid_layout`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridLayout {
    /// Attention tokens per block (BF16 KV).
    pub block_tokens: u64,
    /// Layers sharing one block id.
    pub group_layers: u64,
    /// Blocks of linear-attention state per running sequence.
    pub state_blocks_per_seq: u64,
    /// Bytes of one block id.
    pub block_bytes: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_35b_description_reproduces_the_reference_accounting() {
        let m = ModelSpec::resolve("qwen3.5-35b-a3b").unwrap();
        assert_eq!(
            (m.full_attention_layers, m.linear_attention_layers),
            (10, 30)
        );
        // Reference §1: attention ≈ 27.3 M per layer, GDN ≈ 33.7 M, expert 3.146 M.
        assert!((m.attention_params() / 27.3e6 - 1.0).abs() < 0.01);
        assert!((m.linear_attention_params() / 33.7e6 - 1.0).abs() < 0.01);
        assert_eq!(m.expert_params(), 3.0 * 2048.0 * 512.0);
        assert_eq!(m.kv_bytes_per_token(2.0), 20_480.0);
        assert_eq!(
            m.linear_state_bytes(),
            30.0 * (32.0 * 128.0 * 128.0 + 3.0 * 8192.0) * 2.0
        );
        let l = m.hybrid_layout();
        assert_eq!(
            (l.block_tokens, l.group_layers, l.state_blocks_per_seq),
            (544, 10, 3)
        );
        assert_eq!(l.block_bytes, 544.0 * 2048.0 * 10.0);
        // ≈ 35 B resident incl. vision and MTP (the checkpoint says 35.95 B).
        let total = m.resident_params(false);
        assert!((34.5e9..36.5e9).contains(&total), "{total}");
    }

    #[test]
    fn the_9b_description_matches_its_checkpoint_size() {
        let m = ModelSpec::resolve("Qwen/QWEN3.5-9B").unwrap();
        assert!(!m.fp8_checkpoint);
        assert_eq!(m.experts, 0);
        // The checkpoint holds 9.653 B parameters (text + vision + MTP).
        let total = m.resident_params(false);
        assert!((total / 9.653e9 - 1.0).abs() < 0.02, "{total}");
        let l = m.hybrid_layout();
        assert_eq!(
            (l.block_tokens, l.group_layers, l.state_blocks_per_seq),
            (272, 8, 3)
        );
        assert_eq!(m.kv_bytes_per_token(2.0), 32_768.0);
    }

    #[test]
    fn names_ids_and_files_resolve_and_bad_input_is_named() {
        assert!(
            ModelSpec::resolve("qwen/qwen3.5-35b-a3b-fp8")
                .unwrap()
                .fp8_checkpoint
        );
        let e = ModelSpec::resolve("llama-70b").unwrap_err().to_string();
        assert!(e.contains("unknown model `llama-70b`"), "{e}");
        let e = ModelSpec::from_json(r#"{"text_config": {"hidden_size": 8}}"#, "x.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.json") && e.contains("num_hidden_layers"),
            "{e}"
        );
        let e = GpuSpec::from_json(
            r#"{"name": "g", "memory_bytes": 1, "hbm_bytes_per_s": 0, "peak_bf16_flops": 1, "peak_fp8_flops": 1}"#,
            "g.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("g.json: hbm_bytes_per_s"), "{e}");
        let dir = std::env::temp_dir().join(format!("sb-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("config.json");
        std::fs::write(&p, SHIPPED_MODELS[1].2).unwrap();
        let from_file = ModelSpec::resolve(p.to_str().unwrap()).unwrap();
        assert_eq!(from_file.hidden, 4096);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(GpuSpec::resolve("H200").unwrap().hbm_bytes_per_s, 4.8e12);
    }
}
