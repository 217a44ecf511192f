//! Parameter counts per block (after tensor- and expert-parallel sharding) and static
//! memory: weights, gradients and optimizer state at 18 bytes per parameter (bf16 weight,
//! fp32 gradient, fp32 master, Adam m and v), or `6 + 12/D` with the distributed optimizer
//! and `18/D` with ZeRO-3, `D = d x cp` the ranks that hold copies of a stage (for the
//! routed experts, `D` is their own data-parallel group `edp`).

use crate::scenario::{ModelSpec, ModelStyle, Scenario};

/// Parameters of one block kind: the part split over tensor-parallel ranks, the part every
/// rank holds whole (norms, biases of row-parallel layers, position embeddings, MLA's down
/// projections, the router), the routed experts (split over `ep x etp` ranks) and copies of
/// another block's weights that the block needs where it runs (the MTP layers' embedding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockParams {
    /// Split over `t`.
    pub sharded: u64,
    /// Held whole by every rank.
    pub replicated: u64,
    /// Routed experts' weights: split over the `ep x etp` ranks of the expert layout.
    pub expert: u64,
    /// A copy of weights counted in another block (split over `t` like them): held and
    /// updated here, not counted again in the model's size.
    pub copy: u64,
}

impl BlockParams {
    /// Parameters on one device with tensor-parallel size `t` and `ep_etp` (expert parallel
    /// x expert tensor parallel) ranks sharing the routed experts.
    pub fn per_device(self, t: u64, ep_etp: u64) -> u64 {
        (self.sharded.saturating_add(self.copy) / t.max(1))
            .saturating_add(self.replicated)
            .saturating_add(self.expert_per_device(ep_etp))
    }

    /// Routed-expert parameters on one device (`ep_etp` ranks share them).
    pub fn expert_per_device(self, ep_etp: u64) -> u64 {
        self.expert / ep_etp.max(1)
    }

    /// Parameters of the whole block (copies not counted).
    pub fn total(self) -> u64 {
        self.sharded
            .saturating_add(self.replicated)
            .saturating_add(self.expert)
    }
}

/// Megatron's vocabulary padding: up to a multiple of `128 t`.
pub fn padded_vocab(vocab: u64, t: u64) -> u64 {
    let unit = 128 * t.max(1);
    vocab.div_ceil(unit) * unit
}

/// Query width `a d` and key/value width `k d` (`d` the head width, `h / a` by default).
fn widths(m: &ModelSpec) -> (u64, u64) {
    let d = m.head_dim();
    (m.heads * d, m.kv_heads * d)
}

/// An attention sub-layer.
pub fn attention(m: &ModelSpec) -> BlockParams {
    let h = m.hidden;
    if let Some(mla) = m.mla {
        return mla_attention(m, &mla);
    }
    let (q, kv) = widths(m);
    // Qwen3's QK-norm: one RMSNorm weight of the head width for q and one for k.
    let qk_norm = if m.qk_norm { 2 * m.head_dim() } else { 0 };
    match m.style {
        ModelStyle::Gpt => BlockParams {
            sharded: h * (q + 2 * kv) + (q + 2 * kv) + q * h,
            replicated: h + 2 * h + qk_norm,
            ..BlockParams::default()
        },
        ModelStyle::Llama => BlockParams {
            sharded: h * (q + 2 * kv) + q * h,
            replicated: h + qk_norm,
            ..BlockParams::default()
        },
    }
}

/// Multi-head latent attention (DeepSeek-V3's `MLA` module; Megatron-Core's
/// `MLASelfAttention`): the input norm, the q down projection `h x q_lora_rank` and its norm,
/// the q up projection to `a (qk + rope)`, the kv down projection `h x (kv_lora_rank + rope)`
/// (the rope key included) and its norm, the kv up projection to `a (qk + v)`, and the output
/// projection `a v x h`. Megatron-Core runs both down projections duplicated on every
/// tensor-parallel rank (Transformer Engine's `parallel_mode='duplicated'`), so they are
/// replicated here, with the norms; the up and output projections are split over `t`.
fn mla_attention(m: &ModelSpec, mla: &super::MlaSpec) -> BlockParams {
    let (h, a) = (m.hidden, m.heads);
    let qk = mla.qk_dim();
    let (q_down, q_norm, q_up) = match mla.q_lora_rank {
        Some(r) => (h * r, r, r * a * qk),
        None => (0, 0, h * a * qk),
    };
    let kv_down = h * (mla.kv_lora_rank + mla.qk_rope_dim);
    let kv_up = mla.kv_lora_rank * a * (mla.qk_head_dim + mla.v_head_dim);
    let out = a * mla.v_head_dim * h;
    BlockParams {
        sharded: q_up + kv_up + out,
        replicated: h + q_down + q_norm + kv_down + mla.kv_lora_rank,
        ..BlockParams::default()
    }
}

/// An MLP sub-layer.
pub fn mlp(m: &ModelSpec) -> BlockParams {
    let (h, f) = (m.hidden, m.ffn);
    match m.style {
        ModelStyle::Gpt => BlockParams {
            sharded: h * f + f + f * h,
            replicated: h + 2 * h,
            ..BlockParams::default()
        },
        ModelStyle::Llama => BlockParams {
            sharded: 3 * h * f,
            replicated: h,
            ..BlockParams::default()
        },
    }
}

/// A mixture-of-experts MLP (Megatron-Core's `MoELayer` with its pre-MLP norm): the norm and
/// the router `E x h` on every rank (the router is not split over `t`), the shared experts
/// (SwiGLU of `shared x f_e`, split over `t` like a dense MLP), and the `E` routed experts
/// (SwiGLU `3 h f_e` each), split over the expert ranks. A dense model has none.
pub fn moe(m: &ModelSpec) -> BlockParams {
    let Some(e) = m.moe else {
        return BlockParams::default();
    };
    let h = m.hidden;
    // One expert fits in u64 once the widths are within `limits::WIDTH`; the products with
    // the expert counts saturate, and `magnitude::check_parameters` refuses such a model.
    let one = 3 * h * e.expert_ffn;
    BlockParams {
        sharded: one.saturating_mul(e.shared_experts),
        replicated: h + e.experts * h,
        expert: one.saturating_mul(e.experts),
        copy: 0,
    }
}

/// One multi-token-prediction layer's attention block with the MTP module's own pieces
/// (DeepSeek-V3; Megatron-Core's `MultiTokenPredictionLayer`): the norms of the next
/// token's embedding and of the hidden state (`enorm`, `hnorm`), the projection of their
/// concatenation `2h x h` (`eh_proj`, split over `t`), the MTP's final norm, then an
/// attention sub-layer. The next token's embedding is looked up in a copy of the input
/// embedding (`vocab x h`, split over `t`) held where the MTP layer runs (none at `p` 1,
/// nor on a V-shape or DualPipe placement, where the embedding itself is on the device: the
/// anatomy drops it); the copy is not
/// counted in the model's size. A model without MTP layers has none.
pub fn mtp(m: &ModelSpec, vocab: u64) -> BlockParams {
    if m.mtp_layers == 0 {
        return BlockParams::default();
    }
    let h = m.hidden;
    let attn = attention(m);
    BlockParams {
        sharded: attn.sharded + 2 * h * h,
        replicated: attn.replicated + 3 * h,
        expert: 0,
        copy: vocab * h,
    }
}

/// The embedding with vocabulary `vocab` (already padded or not) and, for GPT, `positions`
/// learned position embeddings.
pub fn embedding(m: &ModelSpec, vocab: u64, positions: u64) -> BlockParams {
    BlockParams {
        sharded: vocab * m.hidden,
        replicated: match m.style {
            ModelStyle::Gpt => positions * m.hidden,
            ModelStyle::Llama => 0,
        },
        ..BlockParams::default()
    }
}

/// The head: final norm, plus the output projection unless it is the embedding itself
/// (tied embeddings on a single stage). With tied embeddings and `p > 1`, Megatron keeps a
/// copy of the embedding on the last stage (its gradient all-reduced with the first).
pub fn head(m: &ModelSpec, vocab: u64, pp: u32) -> BlockParams {
    let norm = match m.style {
        ModelStyle::Gpt => 2 * m.hidden,
        ModelStyle::Llama => m.hidden,
    };
    let output = if m.tied_embeddings && pp <= 1 {
        0
    } else {
        vocab * m.hidden
    };
    BlockParams {
        sharded: output,
        replicated: norm,
        ..BlockParams::default()
    }
}

impl ModelSpec {
    /// The model's published-style parameter count: unpadded vocabulary, the output
    /// projection counted once when tied, GPT position embeddings for `max_positions` (2048
    /// when not given).
    /// Saturates at `u64::MAX` for a shape that validation refuses (over 10^15 parameters).
    pub fn parameters(&self) -> u64 {
        u64::try_from(crate::scenario::magnitude::parameters_wide(self)).unwrap_or(u64::MAX)
    }

    /// Parameters one token passes through (the published "active" count of a mixture of
    /// experts): every parameter but the routed experts, of which each MoE layer's token
    /// uses `experts_per_token`. Equal to [`ModelSpec::parameters`] for a dense model.
    pub fn active_parameters(&self) -> u64 {
        let all = crate::scenario::magnitude::parameters_wide(self);
        let Some(e) = self.moe else {
            return u64::try_from(all).unwrap_or(u64::MAX);
        };
        let layers = u128::from(self.moe_layers() + self.mtp_layers);
        let per_expert = u128::from(3 * self.hidden * e.expert_ffn);
        let idle = u128::from(e.experts.saturating_sub(e.experts_per_token)) * per_expert;
        u64::try_from(all.saturating_sub(layers * idle)).unwrap_or(u64::MAX)
    }
}

/// Bytes per parameter of weights + gradients + optimizer state: 2 (bf16 weight) +
/// `grad_bytes` (4, or 2 with 16-bit gradients) + 12 (fp32 master, Adam m and v), the 12
/// divided by `D = d x cp` with the distributed optimizer (18, 16, `6 + 12/D` or `4 + 12/D`),
/// and all of it with ZeRO-3 (`18/D`; the layers it gathers while they run are the
/// anatomy's `device_bytes`).
pub fn bytes_per_param(s: &Scenario) -> f64 {
    let weights_grads = 2.0 + f64::from(s.parallel.grad_bytes);
    if s.parallel.full_shard {
        weights_grads / s.parallel.shard_ranks() as f64 + optimizer_bytes_per_param(s)
    } else {
        weights_grads + optimizer_bytes_per_param(s)
    }
}

/// Optimizer-state bytes per parameter: the fp32 master weight and Adam's two moments,
/// `4 + 2 x moment_bytes` (12, or 8 with bf16 moments), divided by `D = d x cp` with the
/// distributed optimizer (and ZeRO-3).
pub fn optimizer_bytes_per_param(s: &Scenario) -> f64 {
    let state = optimizer_state_bytes(s);
    if s.parallel.distributed_optimizer {
        state / s.parallel.shard_ranks() as f64
    } else {
        state
    }
}

/// Bytes of optimizer state per parameter before sharding: a 4-byte master weight and two
/// moments of `moment_bytes` (Adam's m and v: 4 each, or 2 each in bf16 as DeepSeek-V3's
/// technical report, section 3.3.3, keeps them).
pub fn optimizer_state_bytes(s: &Scenario) -> f64 {
    4.0 + 2.0 * f64::from(s.parallel.moment_bytes)
}

/// Bytes per routed-expert parameter: as [`bytes_per_param`], with the expert data-parallel
/// group `edp` (Megatron-Core's expert-data-parallel group) in place of `d x cp` for the
/// distributed optimizer's and ZeRO-3's sharding.
pub fn expert_bytes_per_param(s: &Scenario) -> f64 {
    let edp = s.parallel.expert_data_ranks() as f64;
    let weights_grads = 2.0 + f64::from(s.parallel.grad_bytes);
    let state = optimizer_state_bytes(s);
    let optimizer = if s.parallel.distributed_optimizer {
        state / edp
    } else {
        state
    };
    if s.parallel.full_shard {
        weights_grads / edp + optimizer
    } else {
        weights_grads + optimizer
    }
}

/// `(weights, gradients, optimizer)` bytes of `static_bytes` held for `params` parameters:
/// 2 and `grad_bytes` per parameter, the optimizer the rest (so the three add up).
pub fn static_split(params: u64, static_bytes: u64, grad_bytes: u32) -> (u64, u64, u64) {
    let weights = params.saturating_mul(2).min(static_bytes);
    let grads = params
        .saturating_mul(u64::from(grad_bytes))
        .min(static_bytes - weights);
    (weights, grads, static_bytes - weights - grads)
}

/// Static bytes of `params` parameters on one device.
pub fn static_bytes(params: u64, bytes_per_param: f64) -> u64 {
    (params as f64 * bytes_per_param).round() as u64
}
