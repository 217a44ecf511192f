//! Multi-head latent attention (DeepSeek-V2/V3) as Megatron-Core runs it
//! (`MLASelfAttention` with Transformer Engine and `--qk-layernorm`; docs/model.md, "Multi-head
//! latent attention"): the input norm; the q and kv down projections, duplicated on every
//! tensor-parallel rank and run on the rank's own sequence shard (no gather); the q and kv
//! norms fused into the up projections, which gather the sequence with SP and split the heads
//! over `t`; RoPE on each head's rope part of q and on the one shared rope key; core
//! attention with q/k heads of `qk + rope` and v heads of `v`; the output projection.
//!
//! Kept for the backward, per token (`/t`: split by tensor parallelism; `SP`: sequence
//! sharded): the input norm's output `input_norm_out` (2h, SP, both down projections' input), the
//! down projections' outputs `q_compressed` (2 q_lora, SP) and `kv_compressed` (2 (kv_lora +
//! rope), SP; the norm keeps the whole stored tensor, the rope key included), the normed
//! latents `q_ln_out` (2 q_lora, SP) and `kv_ln_out` (2 kv_lora, SP) that the up projections
//! read, `q_up`, `k_up` (2 a (qk + rope) / t each; the rope key expanded to every head) and
//! `v_up` (2 a v / t), and FlashAttention's output and statistics `core_attn` (2 a v / t + 4 a / t).

use super::cost::{InputCast, Machine, Piece};
use super::tp_comm;
use super::units::{Builder, Dims, Keep, act, add_residual, core_attention, linear_input, norm};

/// Multi-head latent attention's widths (whole, not split by `t`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MlaDims {
    /// Rank of the q down projection (`None`: q projected from `h` directly).
    pub q_lora: Option<f64>,
    /// Rank of the kv down projection.
    pub kv_lora: f64,
    /// Per-head width of q and k without position.
    pub nope: f64,
    /// Per-head width of the rope part of q and k (and of the shared rope key).
    pub rope: f64,
    /// Per-head width of v.
    pub v: f64,
}

impl MlaDims {
    /// Per-head width of q and k.
    pub fn qk(&self) -> f64 {
        self.nope + self.rope
    }
}

/// An RMSNorm over `width`-wide rows of the sequence shard: read + write forward, read
/// input, gradient, write gradient backward.
fn latent_norm(m: &Machine, d: &Dims, width: f64) -> Piece {
    let x = 2.0 * d.tokens_sp * width;
    m.elementwise(2.0 * x, 3.0 * x)
}

/// The sequence-parallel gather of a `width`-wide latent before an up projection `col`
/// (Transformer Engine's `LayerNormColumnParallelLinear`), charged as a column-parallel
/// linear's input gather.
fn gather_latent(m: &Machine, d: &Dims, width: f64, col: &Piece) -> tp_comm::Collective {
    let narrow = Dims { h: width, ..*d };
    tp_comm::gather_in(m, &narrow, col, true)
}

/// The units of an MLA sub-layer after its input, with its out-projection and residual.
pub(super) fn body(k: &mut Builder, m: &Machine, d: &Dims, mla: &MlaDims) {
    let (ts, t_full, heads) = (d.tokens_sp, d.tokens, d.heads);
    let qk = mla.qk();
    // The input norm's output feeds the two duplicated down projections on the local
    // sequence shard (no gather); under the fp8 recipe they keep its fp8 cast.
    let ln = if m.fp8() {
        Keep {
            needed_by_w: true,
            bytes: ts * d.h,
            ..Keep::default()
        }
    } else {
        Keep {
            needed_by_w: true,
            ..act(2.0 * ts * d.h)
        }
    };
    k.unit("input_norm_out", ln, norm(m, d));
    let rope = |width: f64| m.elementwise(4.0 * t_full * width, 4.0 * t_full * width);

    let q_in = match mla.q_lora {
        Some(ql) => {
            let down = m.layer_linear(ts, d.h, ql, InputCast::FromNorm);
            k.model_flops += down.fwd.flops;
            k.unit("q_compressed", act(2.0 * ts * ql), down);
            ql
        }
        None => d.h,
    };
    let kv_down = m.layer_linear(ts, d.h, mla.kv_lora + mla.rope, InputCast::Elsewhere);
    k.model_flops += kv_down.fwd.flops;
    let q_up = m.layer_linear(t_full, q_in, heads * qk, InputCast::FromNorm);
    let kv_up_k = m.layer_linear(t_full, mla.kv_lora, heads * mla.nope, InputCast::FromNorm);
    let kv_up_v = m.layer_linear(t_full, mla.kv_lora, heads * mla.v, InputCast::Elsewhere);
    k.model_flops += q_up.fwd.flops + kv_up_k.fwd.flops + kv_up_v.fwd.flops;
    if mla.q_lora.is_some() {
        k.unit(
            "q_ln_out",
            linear_input(m, ts * q_in),
            latent_norm(m, d, q_in),
        );
    }
    k.collective(gather_latent(m, d, q_in, &q_up));
    k.unit(
        "kv_compressed",
        act(2.0 * ts * (mla.kv_lora + mla.rope)),
        kv_down,
    );
    k.unit(
        "kv_ln_out",
        linear_input(m, ts * mla.kv_lora),
        latent_norm(m, d, mla.kv_lora),
    );
    k.collective(gather_latent(
        m,
        d,
        mla.kv_lora + mla.rope,
        &(kv_up_k + kv_up_v),
    ));
    k.unit(
        "q_up",
        act(2.0 * t_full * heads * qk),
        q_up + rope(heads * mla.rope),
    );
    // The one rope key per token is rotated once and expanded to every head with k.
    let expand = m.elementwise(2.0 * t_full * heads * qk, 2.0 * t_full * heads * qk);
    k.unit(
        "k_up",
        act(2.0 * t_full * heads * qk),
        kv_up_k + rope(mla.rope) + expand,
    );
    k.unit("v_up", act(2.0 * t_full * heads * mla.v), kv_up_v);

    // Core attention: q and k heads of `qk`, v heads of `v`; the mean width carries both
    // products' FLOPs, and the K/V ring exchange (context parallelism) sends k and v.
    let attn = Dims {
        head_dim: (qk + mla.v) / 2.0,
        q_width: heads * qk,
        kv_width: heads * (qk + mla.v) / 2.0,
        ..*d
    };
    core_attention(k, m, &attn, heads * mla.v);
    let out = m.layer_linear(t_full, heads * mla.v, d.h, InputCast::Elsewhere);
    k.model_flops += out.fwd.flops;
    k.other += out;
    k.collective(tp_comm::reduce_out(m, d, &out));
    add_residual(k, m, d);
}
