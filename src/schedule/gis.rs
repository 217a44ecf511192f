//! GIS (group-interleaved 1F1B) and GIS with PipeOffload's offload pass: the zero-bubble
//! repo's `scheduler/group_interleaved_1f1b.py` and `scheduler/offloading.py`.
//!
//! A building block of `3 g v` slots per device (g the group size, v chunks) places
//! `F(chunk c, member j)` at `3 min_k g c + 3 j + d` (plus `3 g` per completed
//! `v / gcd(v, min_k)` chunks) and, after device d's first backward slot, `B(v-1-c, j)` and
//! its `W` right after at the same offsets; the block is repeated every `3 g v` slots with
//! the micro-batches advanced by g, micro-batches `>= m` are dropped, and each device runs
//! its ops in slot order (the source's later shift and squeeze only move ops in time).
//! Placement is looped (stage `c p + d`), B/W split.
//!
//! The group size g runs from 1 to p (a larger one is reset to p, as the source does).
//! `min_group` is the smallest useful group: ceil(p/2) (PipeOffload's GIS-H), grown until
//! one group's F+B+W covers a forward or backward sweep through all devices. From it up to
//! p, `min_k = 1` and device d holds `g (v - 1) + p - d` micro-batch-chunks at its peak once
//! m >= p (GIS, g = p: `p v - d`). A smaller group is kept, as the source keeps it: each
//! chunk's forwards then lie `min_k = ceil(min_group / g)` groups apart, so that a
//! micro-batch's next chunk still starts after its previous chunk has passed every device,
//! and such a group holds no less than `min_group` does.
//!
//! `gis-offload` runs the same order and marks the first `offload_chunks` chunks (default 1)
//! of every device as offloaded: chunk 0's activations live longest. The source needs an
//! even p (it pairs devices that share a host link). Its `postpone_forward_in_warmup` only
//! moves warm-up forwards later in time to place the copies, not in order; the copies
//! themselves are simulated by `crate::sim` from the per-chunk offload bytes.

use super::search_input::{check_basic, cost, op, schedule};
use super::{OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates `gis` or `gis-offload`.
pub(crate) fn generate(
    kind: ScheduleKind,
    input: &ScheduleInput,
) -> Result<Schedule, ScheduleError> {
    check_basic(kind, input)?;
    let unsupported = |requirement: String| ScheduleError::Unsupported {
        schedule: kind,
        requirement,
    };
    let p = input.p as usize;
    let v = kind.chunks(input.v) as usize;
    if kind == ScheduleKind::GisOffload && !p.is_multiple_of(2) {
        return Err(unsupported(format!(
            "an even p: the offload pass pairs devices (2k, 2k+1) that share a host link (got p={p})"
        )));
    }
    let offload_chunks = input.offload_chunks.unwrap_or(1) as usize;
    if kind == ScheduleKind::GisOffload && !(1..=v).contains(&offload_chunks) {
        return Err(unsupported(format!(
            "offload_chunks between 1 and v={v} (got {offload_chunks})"
        )));
    }
    let mut s = building_block_schedule(kind, input, input.group_size.map(|g| g as usize))?;
    if kind == ScheduleKind::GisOffload {
        for row in &mut s.offloaded {
            for (c, off) in row.iter_mut().enumerate() {
                *off = c < offload_chunks;
            }
        }
    }
    Ok(s)
}

/// The smallest useful group of the building block: ceil(p/2) (PipeOffload's GIS-H), grown
/// until one group's F+B+W covers a forward or backward sweep through all devices.
pub(super) fn min_group(input: &ScheduleInput, v: usize) -> usize {
    let p = input.p as usize;
    let mean =
        |grid: &[Vec<f64>], d: usize| (0..v).map(|c| cost(grid, d, c)).sum::<f64>() / v as f64;
    let per_dev = |grid: &[Vec<f64>]| (0..p).map(|d| mean(grid, d)).collect::<Vec<f64>>();
    let (f, b, w) = (per_dev(&input.f), per_dev(&input.b), per_dev(&input.w));
    let max_fbw = (0..p).map(|d| f[d] + b[d] + w[d]).fold(0.0, f64::max);
    let sweep = f.iter().sum::<f64>().max(b.iter().sum::<f64>());
    let mut min_group = p.div_ceil(2);
    while max_fbw * (min_group as f64) < sweep && min_group < p {
        min_group += 1;
    }
    min_group
}

/// The building block's order for `kind` with group size `group` (`None`: p), nothing
/// offloaded yet. The input must have passed `check_basic`.
pub(super) fn building_block_schedule(
    kind: ScheduleKind,
    input: &ScheduleInput,
    group: Option<usize>,
) -> Result<Schedule, ScheduleError> {
    let unsupported = |requirement: String| ScheduleError::Unsupported {
        schedule: kind,
        requirement,
    };
    let (p, m) = (input.p as usize, input.m as usize);
    let v = kind.chunks(input.v) as usize;
    let min_group = min_group(input, v);
    // A group larger than p is reset to p, as the source does; a smaller group than
    // min_group spaces each chunk's forwards min_k = ceil(min_group / g) groups apart.
    let g = group.unwrap_or(p).clamp(1, p);
    let devices = gis_order(p, m, v, g, min_group).ok_or_else(|| {
        unsupported(format!(
            "a group size and chunk count whose building block has no slot conflict \
             (got p={p}, v={v}, group size {g})"
        ))
    })?;
    Ok(schedule(kind, input, v as u32, Placement::Looped, devices))
}

/// One pass of the building block: kind, chunk, group member, unwrapped slot.
#[derive(Debug, Clone, Copy)]
struct Pass {
    kind: OpKind,
    chunk: usize,
    member: usize,
    offset: usize,
}

/// Each device's ops in slot order, or `None` when two passes of the block collide.
fn gis_order(
    p: usize,
    m: usize,
    v: usize,
    g: usize,
    min_group: usize,
) -> Option<Vec<Vec<super::Op>>> {
    let (f_offset, b_offset) = (1, 2);
    let min_k = min_group.div_ceil(g);
    let gcd_kv = gcd(v, min_k);
    let bb_len = 3 * g * v;
    let extra = |c: usize| 3 * g * (c / (v / gcd_kv));
    let mut block: Vec<Vec<Option<Pass>>> = vec![vec![None; bb_len]; p];
    let mut last_f_before_b = vec![0; p];
    let place = |d: usize, pass: Pass, block: &mut [Vec<Option<Pass>>]| {
        let slot = &mut block[d][pass.offset % bb_len];
        if slot.is_some() {
            return false;
        }
        *slot = Some(pass);
        true
    };
    for c in 0..v {
        for j in 0..g {
            for (d, last) in last_f_before_b.iter_mut().enumerate() {
                let offset = 3 * min_k * g * c + 3 * j + d * f_offset + extra(c);
                let pass = Pass {
                    kind: OpKind::F,
                    chunk: c,
                    member: j,
                    offset,
                };
                if !place(d, pass, &mut block) {
                    return None;
                }
                if c == v - 1 && j == 0 {
                    *last = offset;
                }
            }
        }
    }
    for c in 0..v {
        for j in 0..g {
            for (d, &last) in last_f_before_b.iter().enumerate() {
                let first_b = last + (p - 1 - d) * f_offset + 1 + (p - 1 - d) * b_offset;
                let b_index = first_b + 3 * min_k * g * c + 3 * j + extra(c);
                for (kind, offset) in [(OpKind::B, b_index), (OpKind::W, b_index + 1)] {
                    let pass = Pass {
                        kind,
                        chunk: v - 1 - c,
                        member: j,
                        offset,
                    };
                    if !place(d, pass, &mut block) {
                        return None;
                    }
                }
            }
        }
    }
    // Repeat the unrolled block: copy r sits `bb_len r` slots later with micro-batches + g r.
    let groups = m.div_ceil(g);
    Some(
        block
            .iter()
            .map(|row| {
                let mut passes: Vec<(usize, Pass, usize)> = Vec::with_capacity(row.len() * groups);
                for pass in row.iter().flatten() {
                    for r in 0..groups {
                        let mb = pass.member + r * g;
                        if mb < m {
                            passes.push((pass.offset + bb_len * r, *pass, mb));
                        }
                    }
                }
                passes.sort_unstable_by_key(|&(slot, _, _)| slot);
                passes
                    .into_iter()
                    .map(|(_, pass, mb)| op(pass.kind, mb, pass.chunk as u32))
                    .collect()
            })
            .collect(),
    )
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}
