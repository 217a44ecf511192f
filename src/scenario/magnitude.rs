//! Joint size checks: each field has its own upper bound (`validate::limits`), but products
//! of fields that are each allowed (a 2^24-token sequence times a 2^16 micro-batch times the
//! `s^2` of materialised attention, or 10^5 layers of width 2^24) would overflow the `u64`
//! byte counts downstream or lose `f64` exactness. These checks refuse such combinations
//! with the field, the value and the size it leads to. The bounds are orders of magnitude
//! above any real training set-up.

use super::{InvalidField, ModelSpec, Scenario};
use crate::scenario::params;

/// Most parameters a model may have (10^15, about 2000 times Llama 3 405B), so that its
/// static memory (18 bytes a parameter) stays far below `u64::MAX`.
pub const MAX_PARAMETERS: u128 = 1_000_000_000_000_000;

/// Most activation bytes of one micro-batch through the whole model, before any sharding
/// (2^53 = 8 PiB): every unit size is then an exact integer in `f64`.
pub const MAX_MICRO_BATCH_BYTES: u128 = 1 << 53;

/// Most activation bytes of one iteration (all micro-batches), before any sharding
/// (2^60 = 1 EiB): sums of kept tensors over blocks and micro-batches then fit in `u64`.
pub const MAX_ITERATION_BYTES: u128 = 1 << 60;

const PIB: f64 = (1u64 << 50) as f64;

/// Parameters of `m` without overflow (`u128`). Each block's count fits in `u64` once the
/// widths are within `limits::WIDTH`; only the product with the layer count may not.
pub fn parameters_wide(m: &ModelSpec) -> u128 {
    let layer = u128::from(params::attention(m).total()) + u128::from(params::mlp(m).total());
    let positions = m.max_positions.unwrap_or(2048);
    u128::from(m.layers) * layer
        + u128::from(params::embedding(m, m.vocab, positions).total())
        + u128::from(params::head(m, m.vocab, 1).total())
}

/// Refuses a model shape with more than [`MAX_PARAMETERS`] parameters. Call after the
/// per-field checks (it assumes `heads >= 1`).
pub fn check_parameters(m: &ModelSpec) -> Result<(), InvalidField> {
    let n = parameters_wide(m);
    if n > MAX_PARAMETERS {
        return Err(InvalidField::new(
            "model.layers",
            m.layers,
            format!(
                "few enough layers of this width that the model has at most 1e15 parameters \
                 (this shape has {:.3e})",
                n as f64
            ),
        ));
    }
    Ok(())
}

/// An upper bound on one micro-batch's activation bytes through every block, unsharded:
/// per layer `sb (40w + 8f + 8a)` with `w` the larger of `h` and the query width `a d`
/// (every unit of section 3 with room to spare), plus
/// `5 a s^2 b` without FlashAttention, plus the embedding and the logits (`sb (4h + 10V)`).
fn micro_batch_bytes(s: &Scenario) -> u128 {
    let m = &s.model;
    let seq = u128::from(s.batch.seq_len);
    let tokens = seq * u128::from(s.batch.micro_batch_size);
    let (w, f, a, v) = (
        u128::from(m.hidden).max(u128::from(m.heads) * u128::from(m.head_dim())),
        u128::from(m.ffn),
        u128::from(m.heads),
        u128::from(m.vocab),
    );
    let mut layer = tokens * (40 * w + 8 * f + 8 * a);
    if !s.plan.flash_attention {
        layer += 5 * a * seq * tokens;
    }
    u128::from(m.layers) * layer + tokens * (4 * w + 10 * v)
}

/// Refuses a batch whose activations exceed [`MAX_MICRO_BATCH_BYTES`] per micro-batch or
/// [`MAX_ITERATION_BYTES`] per iteration. Call after the per-field checks.
pub fn check_activations(s: &Scenario) -> Result<(), InvalidField> {
    let one = micro_batch_bytes(s);
    if one > MAX_MICRO_BATCH_BYTES {
        return Err(InvalidField::new(
            "batch.seq_len",
            s.batch.seq_len,
            format!(
                "short enough (with micro_batch_size {}, {} layers, flash attention {}) that \
                 one micro-batch's activations stay under 8 PiB before sharding (this needs \
                 {:.1} PiB)",
                s.batch.micro_batch_size,
                s.model.layers,
                if s.plan.flash_attention { "on" } else { "off" },
                one as f64 / PIB
            ),
        ));
    }
    let all = one * u128::from(s.batch.micro_batches);
    if all > MAX_ITERATION_BYTES {
        return Err(InvalidField::new(
            "batch.micro_batches",
            s.batch.micro_batches,
            format!(
                "few enough that one iteration's activations stay under 1 EiB before sharding \
                 ({:.3} PiB a micro-batch; this needs {:.1} PiB)",
                one as f64 / PIB,
                all as f64 / PIB
            ),
        ));
    }
    Ok(())
}
