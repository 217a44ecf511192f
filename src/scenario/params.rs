//! Parameter counts per block (after tensor-parallel sharding) and static memory: weights,
//! gradients and optimizer state at 18 bytes per parameter (bf16 weight, fp32 gradient, fp32
//! master, Adam m and v), or `6 + 12/D` with the distributed optimizer and `18/D` with ZeRO-3,
//! `D = d x cp` the ranks that hold copies of a stage.

use crate::scenario::{ModelSpec, ModelStyle, Scenario};

/// Parameters of one block kind: the part split over tensor-parallel ranks and the part
/// every rank holds whole (norms, biases of row-parallel layers, position embeddings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockParams {
    /// Split over `t`.
    pub sharded: u64,
    /// Held whole by every rank.
    pub replicated: u64,
}

impl BlockParams {
    /// Parameters on one device.
    pub fn per_device(self, t: u64) -> u64 {
        self.sharded / t.max(1) + self.replicated
    }

    /// Parameters of the whole block.
    pub fn total(self) -> u64 {
        self.sharded + self.replicated
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
    let (q, kv) = widths(m);
    match m.style {
        ModelStyle::Gpt => BlockParams {
            sharded: h * (q + 2 * kv) + (q + 2 * kv) + q * h,
            replicated: h + 2 * h,
        },
        ModelStyle::Llama => BlockParams {
            sharded: h * (q + 2 * kv) + q * h,
            replicated: h,
        },
    }
}

/// An MLP sub-layer.
pub fn mlp(m: &ModelSpec) -> BlockParams {
    let (h, f) = (m.hidden, m.ffn);
    match m.style {
        ModelStyle::Gpt => BlockParams {
            sharded: h * f + f + f * h,
            replicated: h + 2 * h,
        },
        ModelStyle::Llama => BlockParams {
            sharded: 3 * h * f,
            replicated: h,
        },
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

/// Optimizer-state bytes per parameter: 12, or `12/D` with the distributed optimizer (and
/// ZeRO-3), `D = d x cp`.
pub fn optimizer_bytes_per_param(s: &Scenario) -> f64 {
    if s.parallel.distributed_optimizer {
        12.0 / s.parallel.shard_ranks() as f64
    } else {
        12.0
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
