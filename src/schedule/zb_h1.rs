//! ZB-H1, the handcrafted zero-bubble schedule with 1F1B's memory, transcribed from the
//! zero-bubble repo's quick-start patch to Megatron (branch `zb-h1-quick-start`,
//! `megatron/core/pipeline_parallel/schedules.py`; docs/model.md).
//!
//! Device `d` runs 1F1B's `min(p - d - 1, m)` warm-up forwards. In the steady phase its
//! first `d` backwards and the last one are split (B now, W deferred to a FIFO), the others
//! fused; on the last steady step, when `i >= d`, one deferred W runs. In the cool-down every
//! backward is split and, once its micro-batch index reaches `d`, followed by the oldest
//! deferred W; the remaining W's close the device. Device 0 never splits (the source's
//! "variation of ZB-H1"). With F = B = W the bubble is `(p - 1)(F + B - W)` per device.

use std::collections::VecDeque;

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates ZB-H1's per-device op order (one chunk per device).
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let (p, m) = (input.p, input.m);
    let mut s = Schedule::empty(ScheduleKind::ZbH1, p, m, 1, Placement::Single);
    let mut pending: VecDeque<u32> = VecDeque::new();
    for (d, ops) in s.devices.iter_mut().enumerate() {
        let d = d as u32;
        let warmup = (p - d - 1).min(m);
        let rem = m - warmup;
        pending.clear();
        ops.reserve(3 * m as usize);
        ops.extend((0..warmup).map(|mb| Op::new(OpKind::F, mb, 0)));
        for i in 0..rem {
            let last = i + 1 == rem;
            ops.push(Op::new(OpKind::F, warmup + i, 0));
            if d > 0 && (i < d || last) {
                ops.push(Op::new(OpKind::B, i, 0));
                pending.push_back(i);
            } else {
                ops.push(Op::new(OpKind::BW, i, 0));
            }
            if last
                && d > 0
                && i >= d
                && let Some(w) = pending.pop_front()
            {
                ops.push(Op::new(OpKind::W, w, 0));
            }
        }
        for j in 0..warmup {
            let mb = rem + j;
            if d > 0 {
                ops.push(Op::new(OpKind::B, mb, 0));
                pending.push_back(mb);
                if mb >= d
                    && let Some(w) = pending.pop_front()
                {
                    ops.push(Op::new(OpKind::W, w, 0));
                }
            } else {
                ops.push(Op::new(OpKind::BW, mb, 0));
            }
        }
        ops.extend(pending.drain(..).map(|w| Op::new(OpKind::W, w, 0)));
    }
    Ok(s)
}
