//! DualPipe-V (deepseek-ai/DualPipe `dualpipe/dualpipev.py`, `DualPipeV.step()`;
//! docs/model.md), V-shape placement: chunk 0 of device `r` is stage `r`, chunk 1
//! is stage `2p - 1 - r`.
//!
//! Device `r` of `p` runs the eight steps of [`super::dual_steps`] as rank `r` of `p`, its
//! phase 0 being chunk 0 and phase 1 chunk 1, each over all `m` micro-batches; the last
//! device runs its first step-4 forward and backward unpaired. The source asserts `m >= 2p`.

use super::dual_steps::{self, Phase};
use super::{Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

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
    let phases = [Phase { chunk: 0, first: 0 }, Phase { chunk: 1, first: 0 }];
    for (r, (ops, pairs)) in s.devices.iter_mut().zip(&mut s.pairs).enumerate() {
        ops.reserve(6 * m as usize);
        dual_steps::build(p, r as u32, m, phases, ops, pairs);
    }
    Ok(s)
}
