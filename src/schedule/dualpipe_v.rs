//! DualPipe-V (deepseek-ai/DualPipe `dualpipe/dualpipev.py`, `DualPipeV.step()`;
//! docs/model.md), V-shape placement: chunk 0 of device `r` is stage `r`, chunk 1
//! is stage `2p - 1 - r`.
//!
//! Device `r` of `p` runs eight steps; `F0`/`F1` are forwards of chunk 0/1 and `B0`/`B1`
//! backwards, each chunk taking its micro-batches in ascending order. A backward "with zero
//! bubble" is a B whose W goes to a FIFO, which `W` pops; otherwise it is a fused BW. The
//! source's overlapped F&B pairs run here as two ops in sequence, forward first.
//!
//! ```text
//! 1: 2(p-r-1)     x F0
//! 2: (r+1)        x [F0, F1]
//! 3: (p-r-1)      x [B1 (zero bubble), W, F1]
//! 4: (m-2p+r+1)   x [F0, B1, F1, B0]
//! 5: (p-r-1)      x [B1, F1, B0]
//! 6: (r+1)        x [B1, B0]; zero bubble from step i = (r+1) div 2 on: before that B1 when
//!                   r is odd, before that B0 when r is even
//! 7: (p-r-1)      x [W, B0 (zero bubble)]
//! 8: (r+1)        x W
//! ```
//! The source asserts `m >= 2p`.

use std::collections::VecDeque;

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// One device's op list under construction, with the source's per-chunk counters.
struct Rank<'a> {
    ops: &'a mut Vec<Op>,
    next_f: [u32; 2],
    next_b: [u32; 2],
    weights: VecDeque<(u32, u32)>,
}

impl Rank<'_> {
    fn f(&mut self, chunk: u32) {
        let mb = self.next_f[chunk as usize];
        self.next_f[chunk as usize] += 1;
        self.ops.push(Op::new(OpKind::F, mb, chunk));
    }

    fn b(&mut self, chunk: u32, zero_bubble: bool) {
        let mb = self.next_b[chunk as usize];
        self.next_b[chunk as usize] += 1;
        if zero_bubble {
            self.ops.push(Op::new(OpKind::B, mb, chunk));
            self.weights.push_back((mb, chunk));
        } else {
            self.ops.push(Op::new(OpKind::BW, mb, chunk));
        }
    }

    fn w(&mut self) {
        if let Some((mb, chunk)) = self.weights.pop_front() {
            self.ops.push(Op::new(OpKind::W, mb, chunk));
        }
    }
}

/// Generates DualPipe-V's per-device op order; needs `m >= 2p`.
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let kind = ScheduleKind::DualPipeV;
    let (p, m) = (input.p, input.m);
    if m < 2 * p {
        return Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!("m >= 2p micro-batches (got p={p}, m={m})"),
        });
    }
    let mut s = Schedule::empty(kind, p, m, 2, Placement::VShape);
    for (r, ops) in s.devices.iter_mut().enumerate() {
        let r = r as u32;
        ops.reserve(6 * m as usize);
        let mut k = Rank {
            ops,
            next_f: [0; 2],
            next_b: [0; 2],
            weights: VecDeque::new(),
        };
        for _ in 0..2 * (p - r - 1) {
            k.f(0);
        }
        for _ in 0..r + 1 {
            k.f(0);
            k.f(1);
        }
        for _ in 0..p - r - 1 {
            k.b(1, true);
            k.w();
            k.f(1);
        }
        for _ in 0..m - 2 * p + r + 1 {
            k.f(0);
            k.b(1, false);
            k.f(1);
            k.b(0, false);
        }
        for _ in 0..p - r - 1 {
            k.b(1, false);
            k.f(1);
            k.b(0, false);
        }
        let steps = r + 1;
        let mut zero_bubble = false;
        for i in 0..steps {
            if i == steps / 2 && !r.is_multiple_of(2) {
                zero_bubble = true;
            }
            k.b(1, zero_bubble);
            if i == steps / 2 && r.is_multiple_of(2) {
                zero_bubble = true;
            }
            k.b(0, zero_bubble);
        }
        for _ in 0..p - r - 1 {
            k.w();
            k.b(0, true);
        }
        for _ in 0..r + 1 {
            k.w();
        }
    }
    Ok(s)
}
