//! DualPipe (deepseek-ai/DualPipe `dualpipe/dualpipe.py`, `DualPipe.step()`; docs/model.md):
//! two copies of the `p` stages traversed in opposite directions. Device `r` holds stage
//! `r` as chunk 0 and stage `p - 1 - r` as chunk 1 (`Placement::Chimera`, the placement
//! Chimera uses too). Micro-batches `0..m/2` run the forward direction (they enter at
//! device 0 and run on chunk 0), micro-batches `m/2..m` the reverse one (they enter at
//! device `p - 1`, which holds stage 0 as chunk 1).
//!
//! Device `r` runs the eight steps of [`super::dual_steps`] as "half rank"
//! `h = min(r, p - 1 - r)` of `p/2`, over `m/2` micro-batches per phase. On the first half
//! of the devices phase 0 is the forward direction and phase 1 the reverse one; the second
//! half swaps them (the source's `phase ^= is_in_second_half`), so device `r` and its
//! mirror `p - 1 - r` run the same steps with the directions exchanged. The two middle
//! devices run their first step-4 forward and backward unpaired.
//!
//! The source asserts p even, m even and `m >= 2p` (`m/2 >= p` micro-batches per
//! direction); each is refused here with its rule.

use super::dual_steps::{self, Phase};
use super::{Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates DualPipe's per-device op order; needs p even, m even and `m >= 2p`.
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let kind = ScheduleKind::DualPipe;
    let (p, m) = (input.p, input.m);
    let refuse = |requirement: String| {
        Err(ScheduleError::Unsupported {
            schedule: kind,
            requirement,
        })
    };
    if !p.is_multiple_of(2) {
        return refuse(format!(
            "an even p: device r and its mirror p - 1 - r hold the same two stages (got p={p})"
        ));
    }
    if !m.is_multiple_of(2) {
        return refuse(format!(
            "an even m: half the micro-batches enter from each end (got m={m})"
        ));
    }
    if m < 2 * p {
        return refuse(format!(
            "m >= 2p micro-batches, m/2 >= p from each end (got p={p}, m={m})"
        ));
    }
    let (half_p, half_m) = (p / 2, m / 2);
    let forward = Phase { chunk: 0, first: 0 };
    let reverse = Phase {
        chunk: 1,
        first: half_m,
    };
    let mut s = Schedule::empty(kind, p, m, 2, Placement::Chimera);
    for (r, (ops, pairs)) in s.devices.iter_mut().zip(&mut s.pairs).enumerate() {
        let r = r as u32;
        let phases = if r < half_p {
            [forward, reverse]
        } else {
            [reverse, forward]
        };
        ops.reserve(3 * m as usize);
        dual_steps::build(half_p, r.min(p - 1 - r), half_m, phases, ops, pairs);
    }
    Ok(s)
}
