//! Model shapes: GPT style (LayerNorm, GeLU MLP, multi-head attention, dropout) and
//! Llama style (RMSNorm, SwiGLU, grouped-query attention, RoPE, no dropout), with the
//! Llama-style extensions of today's large models: mixtures of experts ([`MoeSpec`]),
//! DeepSeek's multi-head latent attention ([`MlaSpec`]), per-head q/k norms (Qwen3) and
//! multi-token-prediction layers.

use serde::{Deserialize, Serialize};

/// Which block family the model uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ModelStyle {
    /// LayerNorm, GeLU MLP with biases, multi-head attention, dropout, learned positions.
    #[default]
    Gpt,
    /// RMSNorm, SwiGLU MLP, grouped-query attention, RoPE, no dropout, no biases.
    Llama,
}

/// The shape of a decoder-only transformer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Preset name, e.g. `gpt3-175b`.
    pub name: String,
    /// One line saying what this model is.
    pub description: String,
    /// Block family.
    pub style: ModelStyle,
    /// Number of transformer layers `L`.
    pub layers: u32,
    /// Hidden size `h`.
    pub hidden: u64,
    /// Query heads `a`.
    pub heads: u64,
    /// Key/value heads `k` (equal to `heads` without grouped-query attention).
    pub kv_heads: u64,
    /// Width of one attention head `d` when it is not `hidden / heads` (Qwen3, Gemma); `None`:
    /// `hidden / heads`. Every q, k, v and attention size and FLOP count uses it.
    #[serde(default)]
    pub head_dim: Option<u64>,
    /// FFN inner size `f`.
    pub ffn: u64,
    /// Vocabulary before padding; padded to a multiple of `128 t` as Megatron does.
    pub vocab: u64,
    /// The longest sequence the model takes: GPT's learned position embeddings (their
    /// count); for a RoPE model the context length it was trained to (a longer sequence is
    /// refused), `None` when not given.
    pub max_positions: Option<u64>,
    /// Whether the output head shares the input embedding's weights.
    pub tied_embeddings: bool,
    /// The base of a RoPE model's rotary position embeddings (Hugging Face's `rope_theta`,
    /// Megatron's `--rotary-base`): not a cost (RoPE adds no parameters and the same work at
    /// any base), but part of the run an export writes. `None`: not given (Megatron's
    /// default, 10000); a GPT-style model (learned positions) has none.
    #[serde(default)]
    pub rope_theta: Option<u64>,
    /// Routed (and shared) experts in place of the dense MLP of every layer after the first
    /// `dense_layers`; `None` for a dense model.
    #[serde(default)]
    pub moe: Option<MoeSpec>,
    /// DeepSeek's multi-head latent attention in place of multi-head / grouped-query
    /// attention; `None` for those.
    #[serde(default)]
    pub mla: Option<MlaSpec>,
    /// An RMSNorm over each head's q and k before RoPE (Qwen3's QK-norm).
    #[serde(default)]
    pub qk_norm: bool,
    /// Multi-token-prediction layers after the last layer (DeepSeek-V3: 1): each a projection
    /// of the hidden state and the next token's embedding, one more transformer layer, and
    /// one more loss through the shared output head. 0 for none.
    #[serde(default)]
    pub mtp_layers: u32,
}

/// A mixture-of-experts MLP: every token goes to `experts_per_token` of the `experts` routed
/// experts (a SwiGLU MLP of `expert_ffn` each) chosen by a router, plus `shared_experts`
/// experts every token goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoeSpec {
    /// Routed experts `E`.
    pub experts: u64,
    /// Experts each token is sent to (top-k) `k`.
    pub experts_per_token: u64,
    /// Shared experts (each the size of a routed one) every token passes through.
    pub shared_experts: u64,
    /// Inner size of one expert's SwiGLU MLP `f_e`.
    pub expert_ffn: u64,
    /// The first layers keep a dense MLP of `ffn` (DeepSeek-V3: 3).
    pub dense_layers: u32,
    /// Group-limited routing: the routed experts form this many equal groups, consecutive
    /// experts in a group, and a token's experts are chosen from `groups_per_token` of them
    /// (DeepSeek-V3: `n_group` 8, `topk_group` 4, which on its 8-node expert-parallel
    /// group keeps each token on at most 4 nodes). `None`: no grouping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<ExpertGroups>,
}

/// Group-limited routing of a mixture of experts (DeepSeek-V3's `n_group`/`topk_group`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpertGroups {
    /// Equal groups of consecutive routed experts (`n_group`).
    pub expert_groups: u64,
    /// Groups a token's routed experts are chosen from (`topk_group`).
    pub groups_per_token: u64,
}

/// Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values pass through
/// low-rank projections; each head's q and k have a `qk_head_dim` part without position and
/// a `qk_rope_dim` part with RoPE (the rope key is one per token, shared by the heads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlaSpec {
    /// Rank of the query's down projection (`None`: queries projected directly from `h`).
    pub q_lora_rank: Option<u64>,
    /// Rank of the key/value down projection (the latent kept per token).
    pub kv_lora_rank: u64,
    /// Per-head width of q and k without position (DeepSeek's `qk_nope_head_dim`).
    pub qk_head_dim: u64,
    /// Per-head width of q and k with RoPE (`qk_rope_head_dim`).
    pub qk_rope_dim: u64,
    /// Per-head width of v.
    pub v_head_dim: u64,
}

impl MlaSpec {
    /// Width of one head's q and k: `qk_head_dim + qk_rope_dim`.
    pub fn qk_dim(&self) -> u64 {
        self.qk_head_dim + self.qk_rope_dim
    }
}

impl ModelStyle {
    /// The units PipeOffload recomputes so that fewer bytes go to the host (the zero-bubble
    /// repository's `--recompute-lgd`: LayerNorm, GeLU and dropout; 20 of the 34 sbh bytes
    /// per GPT layer stay), as the `named` strategy's `recompute_units`. For Llama-style
    /// blocks, the same cheap element-wise producers: the RMSNorm outputs and SwiGLU's.
    pub fn cheap_recompute_units(self) -> &'static [&'static str] {
        match self {
            ModelStyle::Gpt => &["ln_out", "gelu_out", "out_dropout_mask"],
            ModelStyle::Llama => &["norm_out", "swiglu_out"],
        }
    }
}

impl ModelSpec {
    /// One line made from the model's shape, for a model that no longer matches its preset's
    /// description: `deepseek-v3: 61 layers (3 dense), hidden 7168, MLA 128 heads, 256
    /// experts top-8 + 1 shared, no MTP`.
    pub fn shape_description(&self) -> String {
        let mut out = format!("{}: {} layers", self.name, self.layers);
        if let Some(moe) = self.moe.as_ref().filter(|m| m.dense_layers > 0) {
            out.push_str(&format!(" ({} dense)", moe.dense_layers));
        }
        out.push_str(&format!(", hidden {}", self.hidden));
        if self.mla.is_some() {
            out.push_str(&format!(", MLA {} heads", self.heads));
        } else if self.kv_heads != self.heads {
            out.push_str(&format!(", {} heads ({} kv)", self.heads, self.kv_heads));
        } else {
            out.push_str(&format!(", {} heads", self.heads));
        }
        match &self.moe {
            Some(moe) => {
                out.push_str(&format!(
                    ", {} experts top-{}",
                    moe.experts, moe.experts_per_token
                ));
                if moe.shared_experts > 0 {
                    out.push_str(&format!(" + {} shared", moe.shared_experts));
                }
            }
            None => out.push_str(&format!(", ffn {}", self.ffn)),
        }
        match self.mtp_layers {
            0 if self.moe.is_some() => out.push_str(", no MTP"),
            0 => {}
            n => out.push_str(&format!(", {n} MTP")),
        }
        out
    }

    /// Width of one attention head `d`: `head_dim` when given, else `hidden / heads`.
    pub fn head_dim(&self) -> u64 {
        self.head_dim
            .unwrap_or_else(|| self.hidden / self.heads.max(1))
    }

    /// Whether layer `layer` (0-based, over the main layers and then the MTP layers) has a
    /// mixture-of-experts MLP: every layer after the first `dense_layers` of an MoE model,
    /// the MTP layers included.
    pub fn is_moe_layer(&self, layer: u32) -> bool {
        self.moe.is_some_and(|e| layer >= e.dense_layers)
    }

    /// Main layers with a mixture-of-experts MLP.
    pub fn moe_layers(&self) -> u32 {
        self.moe
            .map_or(0, |e| self.layers.saturating_sub(e.dense_layers))
    }

    /// Transformer layers in the block chain: the main layers, then the MTP layers.
    pub fn chain_layers(&self) -> u32 {
        self.layers.saturating_add(self.mtp_layers)
    }
}
