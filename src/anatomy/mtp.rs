//! A multi-token-prediction layer's first block (DeepSeek-V3's MTP module; Megatron-Core's
//! `MultiTokenPredictionLayer`; docs/model.md, "Multi-token prediction"): the next token's
//! embedding looked up in the layer's copy of the input embedding, the RMSNorms of that
//! embedding (`enorm`) and of the incoming hidden state (`hnorm`), the projection of their
//! concatenation `2h -> h` (`eh_proj`, column-parallel), then an attention sub-layer. The
//! layer's MLP (dense or MoE) is the next block; its extra loss through the shared output
//! head is charged to the head block.
//!
//! Kept for the backward, per token: the block's input (2h, SP), the two normed halves that
//! `eh_proj` reads (2h each, SP; gathered over `t` with SP as a column-parallel input), and
//! the projection's output (2h, SP), which is the attention sub-layer's input.

use super::cost::{InputCast, Machine};
use super::tp_comm;
use super::units::{Builder, Dims, act, attention_body, norm};
use super::{Block, BlockKind};

/// An MTP layer's projection and attention sub-layer.
pub fn mtp(m: &Machine, d: &Dims, params: u64, static_bytes: u64) -> Block {
    let mut k = Builder::new(m, d, BlockKind::Mtp);
    let x = 2.0 * d.tokens_sp * d.h;
    k.input("input", x);
    // The embedding lookup of the shifted tokens: a gather of `h/t` wide rows (and the
    // tensor-parallel reduction of the vocabulary-parallel embedding, as for the input).
    let lookup = m.elementwise(x, 2.0 * x);
    k.other += lookup;
    k.unit("enorm_out", act(x), norm(m, d));
    k.unit("hnorm_out", act(x), norm(m, d));
    let wide = Dims { h: 2.0 * d.h, ..*d };
    let proj = m.layer_linear(d.tokens, 2.0 * d.h, d.h / m.tp(), InputCast::FromNorm);
    k.collective(tp_comm::gather_in(m, &wide, &proj, true));
    k.model_flops += proj.fwd.flops;
    k.unit("eh_proj_out", act(x), proj);
    attention_body(&mut k, m, d);
    k.finish(params, static_bytes)
}
