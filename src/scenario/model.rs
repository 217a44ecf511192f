//! Model shapes: GPT style (LayerNorm, GeLU MLP, multi-head attention, dropout) and
//! Llama style (RMSNorm, SwiGLU, grouped-query attention, RoPE, no dropout).

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
    /// Width of one attention head `d`: `head_dim` when given, else `hidden / heads`.
    pub fn head_dim(&self) -> u64 {
        self.head_dim
            .unwrap_or_else(|| self.hidden / self.heads.max(1))
    }
}
