//! The eight steps every rank runs in deepseek-ai/DualPipe's `DualPipe.step()` and
//! `DualPipeV.step()` (docs/model.md): the two schedules differ only in their sizes and in
//! what the rank's two phases mean, so both generators build their ranks here.
//!
//! A rank `h` of `n` runs its two phases (0 and 1), each over `count` micro-batches taken
//! in ascending order. `F0`/`F1` are forwards of phase 0/1, `B0`/`B1` backwards; a backward
//! "with zero bubble" is a B whose W goes to a FIFO that `W` pops, otherwise a fused BW;
//! `(Fx & By)` is one of the source's overlapped forward-backward pairs (`By` a fused BW),
//! recorded in the schedule's `pairs` and run as two ops in sequence, forward first.
//!
//! ```text
//! 1: 2(n-h-1)          x F0
//! 2: (h+1)             x [F0, F1]
//! 3: (n-h-1)           x [B1 (zero bubble), W, F1]
//! 4: (count-2n+h+1)    x [(F0 & B1), (F1 & B0)]; on rank n-1 the first F0 and B1 run
//!                        unpaired (the source: "to further reduce bubble size")
//! 5: (n-h-1)           x [B1, (F1 & B0)]
//! 6: (h+1)             x [B1, B0]; zero bubble from step i = (h+1) div 2 on: before that
//!                        B1 when h is odd, before that B0 when h is even
//! 7: (n-h-1)           x [W, B0 (zero bubble)]
//! 8: (h+1)             x W
//! ```
//! Step 4 needs `count >= 2n - h - 1`; the callers ask for `count >= 2n`, as the source does.

use std::collections::VecDeque;

use super::{Op, OpKind};

/// What one phase of a rank is: the local chunk its ops run on and the number of its first
/// micro-batch (the phase's `k`-th micro-batch is `first + k`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Phase {
    /// Local chunk.
    pub chunk: u32,
    /// Micro-batch of the phase's first op.
    pub first: u32,
}

/// One rank's op list under construction, with the source's per-phase counters and its
/// FIFO of deferred weight gradients.
struct Rank<'a> {
    ops: &'a mut Vec<Op>,
    pairs: &'a mut Vec<u32>,
    phases: [Phase; 2],
    next_f: [u32; 2],
    next_b: [u32; 2],
    weights: VecDeque<Op>,
}

impl Rank<'_> {
    fn f(&mut self, phase: usize) {
        let Phase { chunk, first } = self.phases[phase];
        self.ops
            .push(Op::new(OpKind::F, first + self.next_f[phase], chunk));
        self.next_f[phase] += 1;
    }

    fn b(&mut self, phase: usize, zero_bubble: bool) {
        let Phase { chunk, first } = self.phases[phase];
        let mb = first + self.next_b[phase];
        self.next_b[phase] += 1;
        if zero_bubble {
            self.ops.push(Op::new(OpKind::B, mb, chunk));
            self.weights.push_back(Op::new(OpKind::W, mb, chunk));
        } else {
            self.ops.push(Op::new(OpKind::BW, mb, chunk));
        }
    }

    fn w(&mut self) {
        if let Some(op) = self.weights.pop_front() {
            self.ops.push(op);
        }
    }

    /// An overlapped pair: the forward of `f_phase`, then the fused backward of `b_phase`.
    fn pair(&mut self, f_phase: usize, b_phase: usize) {
        let at = u32::try_from(self.ops.len()).unwrap_or(u32::MAX);
        self.pairs.push(at);
        self.f(f_phase);
        self.b(b_phase, false);
    }
}

/// Appends rank `h` of `n`'s eight steps over `count` micro-batches per phase to `ops`, and
/// the positions of its overlapped pairs to `pairs`. Needs `h < n` and `count >= 2n`.
pub(super) fn build(
    n: u32,
    h: u32,
    count: u32,
    phases: [Phase; 2],
    ops: &mut Vec<Op>,
    pairs: &mut Vec<u32>,
) {
    let mut k = Rank {
        ops,
        pairs,
        phases,
        next_f: [0; 2],
        next_b: [0; 2],
        weights: VecDeque::new(),
    };
    let rest = n - h - 1;
    for _ in 0..2 * rest {
        k.f(0);
    }
    for _ in 0..=h {
        k.f(0);
        k.f(1);
    }
    for _ in 0..rest {
        k.b(1, true);
        k.w();
        k.f(1);
    }
    for i in 0..(count + h + 1).saturating_sub(2 * n) {
        if i == 0 && h == n - 1 {
            k.f(0);
            k.b(1, false);
        } else {
            k.pair(0, 1);
        }
        k.pair(1, 0);
    }
    for _ in 0..rest {
        k.b(1, false);
        k.pair(1, 0);
    }
    let steps = h + 1;
    let mut zero_bubble = false;
    for i in 0..steps {
        if i == steps / 2 && !h.is_multiple_of(2) {
            zero_bubble = true;
        }
        k.b(1, zero_bubble);
        if i == steps / 2 && h.is_multiple_of(2) {
            zero_bubble = true;
        }
        k.b(0, zero_bubble);
    }
    for _ in 0..rest {
        k.w();
        k.b(0, true);
    }
    for _ in 0..steps {
        k.w();
    }
}
