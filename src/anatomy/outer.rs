//! The embedding and head blocks (blocks 0 and 2L+1) and their units.

use super::cost::{Machine, Piece, Work};
use super::units::{Builder, Dims, norm_then_gather, raw};
use super::{Block, BlockKind};
use crate::scenario::ModelStyle;

/// The embedding (block 0): token ids kept (int64), the vocabulary-parallel lookup and its
/// all-reduce (reduce-scatter with SP), GPT's position add and dropout (mask kept). Its
/// whole backward is weight gradient (W): nothing upstream needs an input gradient.
pub fn embedding(m: &Machine, d: &Dims, params: u64, static_bytes: u64) -> Block {
    let mut k = Builder::new(m, d, BlockKind::Embedding);
    k.input("tokens", 8.0 * d.tokens);
    let out = 2.0 * d.tokens * d.h;
    let e = d.tokens_sp * d.h;
    let lookup = m.mem(out + 8.0 * d.tokens);
    let coll = if d.sp {
        m.gather(out)
    } else {
        m.all_reduce(out)
    };
    let back_coll = if d.sp { m.gather(out) } else { Work::default() };
    let scatter_grad = m.mem(2.0 * out + 8.0 * d.tokens);
    match d.style {
        ModelStyle::Gpt => {
            k.other += Piece {
                fwd: lookup + coll,
                b: Work::default(),
                w: back_coll + scatter_grad,
            };
            let drop = Piece {
                fwd: m.mem(6.0 * e) + m.mem(5.0 * e),
                b: Work::default(),
                w: m.mem(5.0 * e),
            };
            k.unit("dropout_mask", raw(e), drop);
        }
        ModelStyle::Llama => {
            k.other += Piece {
                fwd: lookup + coll,
                b: Work::default(),
                w: back_coll + scatter_grad,
            };
        }
    }
    k.finish(params, static_bytes)
}

/// The head (the last block): final norm (its input kept), the output projection (its input
/// kept; gathered first with SP) and the vocabulary-parallel cross-entropy, `losses` times
/// (1 + the model's MTP layers). The logits themselves are the transient
/// `Anatomy::logits_transient_bytes`.
pub fn head(m: &Machine, d: &Dims, losses: f64, params: u64, static_bytes: u64) -> Block {
    let mut k = Builder::new(m, d, BlockKind::Head);
    let x = 2.0 * d.tokens_sp * d.h;
    k.input("input", x);
    let proj = m.linear(d.tokens, d.h, d.vocab);
    norm_then_gather(&mut k, m, d, "norm_out", &proj, false);
    k.model_flops += losses * proj.fwd.flops;
    let logits = d.tokens * d.vocab;
    let loss = m.elementwise(2.0 * logits + 4.0 * logits + 8.0 * logits, 6.0 * logits);
    // Each multi-token-prediction layer adds one more projection through the shared output
    // head and one more loss, run one after the other (their logits are not alive at once).
    k.other += (proj + loss) * losses;
    k.finish(params, static_bytes)
}
