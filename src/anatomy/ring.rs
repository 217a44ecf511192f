//! Context parallelism's core attention (docs/model.md, "Context parallelism"): Transformer
//! Engine's ring attention with load-balanced causal chunks, the p2p variant Megatron runs by
//! default (`AttnFuncWithCPAndKVP2P` in `transformer_engine/pytorch/attention/
//! dot_product_attention/context_parallel.py`).
//!
//! Each sequence is cut into `2 cp` chunks; rank `r` holds chunks `r` and `2cp - 1 - r`, so
//! every rank owns `s/cp` tokens and the same share of the causal work. Attention runs in `cp`
//! steps: the diagonal (local queries on local keys, causal) and `cp - 1` steps on the keys
//! and values of another rank (half of the local queries on all of them, or all queries on
//! half of them), each the FLOPs of one causal attention of `s/cp` tokens. Between steps the
//! keys and values move one hop round the ring (`t` ranks apart in Megatron's rank order):
//! - forward: the exchange for step `i + 1` runs under step `i`'s kernel (`cp - 1` sends of
//!   the local K and V, `U` bytes each);
//! - backward: step `i` sends its K and V with the accumulated gradient of the previous
//!   rank's (2 U; only K and V at the first step, only their gradient at the last) and waits
//!   for it before the step ends, so only its own kernel hides it.
//!
//! Only what the kernels cannot hide is added to the block. After the steps, Transformer
//! Engine corrects the output with each step's log-sum-exp in fp32 (memory-bound passes) and,
//! in the backward, accumulates the query and key/value gradients step by step.

use super::cost::{Machine, Piece, Work};
use super::units::Dims;

/// Core attention of one micro-batch on one context-parallel rank.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RingAttention {
    /// The rank's kernels and corrections, with the exchange's exposed time.
    pub piece: Piece,
    /// Link time of the K/V exchange per pass (hidden or not).
    pub wire: Piece,
    /// The exchange's time that no kernel hides (inside `piece`).
    pub exposed: Piece,
}

fn secs(s: f64) -> Work {
    Work {
        s,
        ..Work::default()
    }
}

/// The bytes of one ring step: the rank's keys and values in bf16 (`2 x tokens x kv_width x
/// 2`), as Transformer Engine sends them outside its fp8 attention.
pub fn step_bytes(d: &Dims) -> f64 {
    2.0 * d.tokens * d.kv_width * 2.0
}

/// Core attention on `d`'s rank: the diagonal step costs `diagonal` (FlashAttention's causal
/// kernels for the rank's `s/cp` tokens) and each of the `cp - 1` others `off` (the same FLOPs
/// without a mask); without context parallelism, `diagonal` itself.
pub fn ring_attention(m: &Machine, d: &Dims, diagonal: Piece, off: Piece) -> RingAttention {
    let cp = d.cp;
    if cp <= 1.0 {
        return RingAttention {
            piece: diagonal,
            ..RingAttention::default()
        };
    }
    let others = cp - 1.0;
    // Output corrections: the first step's output into an fp32 buffer (read 2, write 4 bytes
    // an element), each later one folded in (read 2 and its log-sum-exp, read and write the
    // fp32 output: 10), on all or half of the local queries (3/4 on average over the ranks),
    // the result cast back to bf16 (read 4, write 2); the log-sum-exp corrections (fp32).
    let out = d.tokens * d.q_width;
    let lse = d.heads * d.tokens;
    let fwd_fix = m.mem(6.0 * out + others * (0.75 * 10.0 * out + 12.0 * lse) + 6.0 * out);
    // Backward: each later step's query and key/value gradients added to the accumulated
    // ones (read both, write one: 6 bytes an element, on 3/4 of them on average).
    let grads = d.tokens * (d.q_width + 2.0 * d.kv_width);
    let bwd_fix = m.mem(others * 0.75 * 6.0 * grads);
    let u = if d.cp_ring_bytes_per_s > 0.0 {
        step_bytes(d) / d.cp_ring_bytes_per_s
    } else {
        0.0
    };
    let wire = Piece {
        fwd: secs(others * u),
        b: secs(2.0 * others * u),
        w: Work::default(),
    };
    // The diagonal step runs first: its kernel hides the first exchange, the off-diagonal
    // ones the rest (forward); in the backward the first (diagonal) and the last step send
    // one U, the middle ones two.
    let (fd, bd) = (diagonal.fwd.s, diagonal.b.s);
    let (fo, bo) = (off.fwd.s, off.b.s);
    let exposed = Piece {
        fwd: secs((u - fd).max(0.0) + (others - 1.0) * (u - fo).max(0.0)),
        b: secs((u - bd).max(0.0) + (u - bo).max(0.0) + (cp - 2.0) * (2.0 * u - bo).max(0.0)),
        w: Work::default(),
    };
    let piece = Piece {
        fwd: diagonal.fwd + off.fwd * others + fwd_fix + exposed.fwd,
        b: diagonal.b + off.b * others + bwd_fix + exposed.b,
        w: diagonal.w + off.w * others,
    };
    RingAttention {
        piece,
        wire,
        exposed,
    }
}
