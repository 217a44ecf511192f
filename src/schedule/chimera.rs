//! Chimera (Li and Hoefler, SC'21): two 1F1B pipelines in opposite directions, weights
//! replicated (chunk 0 of every device holds the "down" replica, chunk 1 the "up" one).
//!
//! The exact rule implemented here:
//! - micro-batches `0..m/2` run down: stage `s` is chunk 0 of device `s`; micro-batches
//!   `m/2..m` run up: stage `s` is chunk 1 of device `p - 1 - s` (`Placement::Chimera`);
//! - each direction on its own is DAPPLE's 1F1B over its `m/2` micro-batches (stage `s`
//!   runs `min(p - s - 1, m/2)` warm-up forwards, then one forward / one fused backward,
//!   then the remaining backwards);
//! - each device merges its two op lists by the slot every op gets in the Chimera authors'
//!   slot model (`Shigangli/Chimera`, `chimera_pipeline_rank.py`): one slot per forward and
//!   per backward, a new micro-batch entering each direction's first stage every two slots,
//!   both directions starting at slot 0; the down op first on equal slots. Every op's slot
//!   is later than its dependencies' slots, so the merged order cannot deadlock.
//!
//! For `m = p` with `p` even this is the authors' basic unit, op for op (their generator
//! gives the same per-device order); at F = B its bubble is Chimera's `(p - 2)/(2m + p - 2)`.
//! For `m > p` each direction stays one 1F1B pipeline of `m/2` micro-batches, where the
//! authors' generator instead starts a new unit of `p/2` micro-batches per direction each
//! time a micro-batch of a running unit completes. The order does not depend on the
//! actual durations. It needs `m` even (any `p`).

use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates Chimera's per-device op order; needs `m` even.
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let kind = ScheduleKind::Chimera;
    let (p, m) = (input.p, input.m);
    if m % 2 != 0 {
        return Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement: format!("an even m, half the micro-batches per direction (got m={m})"),
        });
    }
    let half = m / 2;
    let timed = one_direction_times(p, half);
    let mut s = Schedule::empty(kind, p, m, 2, Placement::Chimera);
    for (d, ops) in s.devices.iter_mut().enumerate() {
        // Down: device d is stage d. Up: device d is stage p - 1 - d.
        let down = &timed[d];
        let up = &timed[p as usize - 1 - d];
        ops.reserve(2 * m as usize);
        let (mut i, mut j) = (0, 0);
        while i < down.len() || j < up.len() {
            let take_down = j >= up.len() || (i < down.len() && down[i].1 <= up[j].1);
            if take_down {
                ops.push(down[i].0);
                i += 1;
            } else {
                let op = up[j].0;
                ops.push(Op::new(op.kind, op.micro_batch + half, 1));
                j += 1;
            }
        }
    }
    Ok(s)
}

/// Per stage of one direction's 1F1B over `n` micro-batches: its ops (chunk 0, micro-batches
/// `0..n`) with their slots: forward and backward one slot each, micro-batch `k` entering
/// stage 0 no earlier than slot `2k`.
fn one_direction_times(p: u32, n: u32) -> Vec<Vec<(Op, u32)>> {
    let pu = p as usize;
    let orders: Vec<Vec<Op>> = (0..p)
        .map(|s| {
            let warmup = (p - s - 1).min(n);
            let mut ops: Vec<Op> = (0..warmup).map(|mb| Op::new(OpKind::F, mb, 0)).collect();
            for i in 0..n - warmup {
                ops.push(Op::new(OpKind::F, warmup + i, 0));
                ops.push(Op::new(OpKind::BW, i, 0));
            }
            ops.extend((n - warmup..n).map(|mb| Op::new(OpKind::BW, mb, 0)));
            ops
        })
        .collect();
    let nu = n as usize;
    // End times per (stage, mb); u32::MAX while not run.
    let mut f_end = vec![u32::MAX; pu * nu];
    let mut b_end = vec![u32::MAX; pu * nu];
    let mut out: Vec<Vec<(Op, u32)>> = orders.iter().map(|o| Vec::with_capacity(o.len())).collect();
    let mut free = vec![0u32; pu];
    let mut progressed = true;
    while progressed {
        progressed = false;
        for s in 0..pu {
            while let Some(&op) = orders[s].get(out[s].len()) {
                let mb = op.micro_batch as usize;
                let ready = match op.kind {
                    OpKind::F if s == 0 => 2 * op.micro_batch,
                    OpKind::F => f_end[(s - 1) * nu + mb],
                    _ if s + 1 == pu => f_end[s * nu + mb],
                    _ => b_end[(s + 1) * nu + mb],
                };
                if ready == u32::MAX {
                    break;
                }
                let start = free[s].max(ready);
                let end = if op.kind == OpKind::F {
                    let e = start + 1;
                    f_end[s * nu + mb] = e;
                    e
                } else {
                    let e = start + 1;
                    b_end[s * nu + mb] = e;
                    e
                };
                free[s] = end;
                out[s].push((op, start));
                progressed = true;
            }
        }
    }
    out
}
