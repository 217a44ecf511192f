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

/// Parameters of `m` without overflow (`u128`): the main layers (dense and mixture of
/// experts), the MTP layers (their embedding copy not counted), the embedding and the head.
/// Each block's count fits in `u64` once the widths are within `limits::WIDTH` and the
/// expert count within `validate_moe::MAX_EXPERTS` (an MoE block's routed experts saturate
/// at `u64::MAX`, far above the limit); only the products with layer counts may not.
pub fn parameters_wide(m: &ModelSpec) -> u128 {
    let attention = u128::from(params::attention(m).total());
    let dense = u128::from(params::mlp(m).total());
    let moe = u128::from(params::moe(m).total());
    let mtp = u128::from(params::mtp(m, m.vocab).total());
    let moe_layers = u128::from(m.moe_layers());
    let dense_layers = u128::from(m.layers) - moe_layers;
    let mtp_mlp = if m.moe.is_some() { moe } else { dense };
    let positions = m.max_positions.unwrap_or(2048);
    dense_layers * (attention + dense)
        + moe_layers * (attention + moe)
        + u128::from(m.mtp_layers) * (mtp + mtp_mlp)
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
/// per layer `sb (40w + 8f + 8a)` with `w` the larger of `h` and the attention widths
/// (`a d`, MLA's `a (qk + rope)`) (every unit of section 3 with room to spare), plus for a
/// mixture of experts `sb (8 X k (h + f_e) + 8 shared f_e + 16 E)` (`X` the routing
/// imbalance), plus `5 a s^2 b` without FlashAttention, plus the embedding and the logits of
/// the head and every MTP layer (`sb (4h + 10V (1 + mtp))`).
fn micro_batch_bytes(s: &Scenario) -> u128 {
    let m = &s.model;
    let seq = u128::from(s.batch.seq_len);
    let tokens = seq * u128::from(s.batch.micro_batch_size);
    let mla_width = m.mla.map_or(0, |x| {
        u128::from(m.heads) * u128::from(x.qk_dim().max(x.v_head_dim))
    });
    let (w, f, a, v) = (
        u128::from(m.hidden)
            .max(u128::from(m.heads) * u128::from(m.head_dim()))
            .max(mla_width),
        u128::from(m.ffn),
        u128::from(m.heads),
        u128::from(m.vocab),
    );
    let mut layer = tokens * (40 * w + 8 * f + 8 * a);
    if let Some(e) = m.moe {
        let imbalance = s.plan.routing_imbalance.clamp(1.0, 1e6).ceil() as u128;
        let (k, fe) = (u128::from(e.experts_per_token), u128::from(e.expert_ffn));
        layer += tokens
            * (8 * imbalance * k * (u128::from(m.hidden) + fe)
                + 8 * u128::from(e.shared_experts) * fe
                + 16 * u128::from(e.experts));
    }
    if !s.plan.flash_attention {
        layer += 5 * a * seq * tokens;
    }
    let heads = 1 + u128::from(m.mtp_layers);
    u128::from(m.chain_layers()) * layer + tokens * (4 * w + 10 * v * heads)
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
