//! Checks that a schedule and its costs fit together before the timing pass: every
//! (stage, micro-batch) has exactly one F and one backward (B + W, or BW), every op names a
//! chunk its device holds, and every duration is finite and non-negative.

use crate::schedule::{OpKind, Schedule};

use super::types::{SimCosts, SimError};

/// Refuses durations whose sum overflows: the makespan is at most the sum of every op's and
/// every transfer's duration (a critical path visits each at most once), so a finite sum
/// keeps every end time finite.
fn check_total(sched: &Schedule, costs: &SimCosts) -> Result<(), SimError> {
    let (p, v, m) = (sched.p as usize, sched.v as usize, sched.m as f64);
    let bw = costs.host_bytes_per_s;
    let solo = costs.host_solo_bytes_per_s;
    let slowest = if solo > 0.0 { bw.min(solo) } else { bw };
    let copy = |c: &super::ChunkCosts| {
        if c.offload_bytes > 0 && slowest > 0.0 && slowest.is_finite() {
            c.offload_bytes.saturating_add(c.link_bytes) as f64 / slowest
        } else {
            0.0
        }
    };
    let ops: f64 = costs
        .chunks
        .iter()
        .take(p)
        .flat_map(|row| row.iter().take(v))
        .map(|c| c.f_s + c.b_s + c.w_s + c.r_s + 2.0 * copy(c))
        .sum();
    let comm = costs.comm_s.iter().fold(0.0, |a: f64, &x| a.max(x));
    let total_s = m * ops + 2.0 * f64::from(sched.stages()) * m * comm;
    if total_s.is_finite() {
        Ok(())
    } else {
        Err(SimError::TooLong { total_s })
    }
}

/// Returns a [`SimError::Shape`] naming the first mismatch, or [`SimError::TooLong`].
pub(crate) fn check(sched: &Schedule, costs: &SimCosts) -> Result<(), SimError> {
    let shape = |msg: String| Err(SimError::Shape(msg));
    let (p, v) = (sched.p as usize, sched.v as usize);
    if sched.devices.len() != p {
        return shape(format!(
            "the schedule has {} device op lists for p={p}",
            sched.devices.len()
        ));
    }
    if costs.chunks.len() < p {
        return shape(format!(
            "costs.chunks has {} devices, the schedule {p}",
            costs.chunks.len()
        ));
    }
    for (d, row) in costs.chunks.iter().take(p).enumerate() {
        if row.len() < v {
            return shape(format!(
                "costs.chunks[{d}] has {} chunks, the schedule {v}",
                row.len()
            ));
        }
        for (c, cc) in row.iter().take(v).enumerate() {
            for (name, x) in [
                ("f_s", cc.f_s),
                ("b_s", cc.b_s),
                ("w_s", cc.w_s),
                ("r_s", cc.r_s),
            ] {
                if !(x.is_finite() && x >= 0.0) {
                    return shape(format!(
                        "costs.chunks[{d}][{c}].{name} = {x}: must be finite and >= 0"
                    ));
                }
            }
            if cc.b_free_bytes > cc.act_bytes || cc.offload_bytes > cc.act_bytes {
                return shape(format!(
                    "costs.chunks[{d}][{c}]: b_free_bytes ({}) and offload_bytes ({}) must not \
                     exceed act_bytes ({})",
                    cc.b_free_bytes, cc.offload_bytes, cc.act_bytes
                ));
            }
        }
    }
    if let Some(x) = costs.comm_s.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
        return shape(format!("comm_s contains {x}: must be finite and >= 0"));
    }
    check_total(sched, costs)?;
    check_pairs(sched)?;
    sched.order_shape_kept(order_shape).map_err(SimError::Shape)
}

/// Every (stage, micro-batch) has exactly one F and one backward (B + W, or BW), each on the
/// device and chunk that hold its stage: the order alone decides it, so a schedule keeps
/// the answer (`order_facts`) for every run of it.
fn order_shape(sched: &Schedule) -> Result<(), String> {
    let (v, m) = (sched.v as usize, sched.m as usize);
    let stages = sched.stages() as usize;
    // Per (stage, micro-batch): forwards, input-gradient backwards, weight backwards.
    let mut seen = vec![[0u8; 3]; stages * m];
    for (d, ops) in sched.devices.iter().enumerate() {
        for op in ops {
            if op.micro_batch as usize >= m || op.chunk as usize >= v {
                return Err(format!(
                    "device {d} has {:?} of micro-batch {} chunk {} (m={m}, v={v})",
                    op.kind, op.micro_batch, op.chunk
                ));
            }
            let stage = sched.stage_of(d as u32, op.chunk, op.micro_batch);
            if stage as usize >= stages
                || sched.locate(stage, op.micro_batch) != (d as u32, op.chunk)
            {
                return Err(format!(
                    "device {d} does not hold chunk {} for micro-batch {}",
                    op.chunk, op.micro_batch
                ));
            }
            let cell = &mut seen[stage as usize * m + op.micro_batch as usize];
            let slots: &[usize] = match op.kind {
                OpKind::F => &[0],
                OpKind::B => &[1],
                OpKind::W => &[2],
                OpKind::BW => &[1, 2],
            };
            for &k in slots {
                cell[k] = cell[k].saturating_add(1);
            }
        }
    }
    for (i, cell) in seen.iter().enumerate() {
        if *cell != [1, 1, 1] {
            let (stage, mb) = (i / m.max(1), i % m.max(1));
            return Err(format!(
                "stage {stage} micro-batch {mb} has {} F, {} B (or BW) and {} W (or BW); \
                 exactly one each is needed",
                cell[0], cell[1], cell[2]
            ));
        }
    }
    Ok(())
}

/// Every overlapped pair is a forward followed by a backward (B or BW) of the same device,
/// and no op belongs to two pairs.
fn check_pairs(sched: &Schedule) -> Result<(), SimError> {
    if sched.pairs.len() > sched.devices.len() {
        return Err(SimError::Shape(format!(
            "pairs has {} devices, the schedule {}",
            sched.pairs.len(),
            sched.devices.len()
        )));
    }
    for (d, (starts, ops)) in sched.pairs.iter().zip(&sched.devices).enumerate() {
        let mut free_from = 0usize;
        for &i in starts {
            let i = i as usize;
            let forward = ops.get(i).map(|o| o.kind);
            let backward = ops.get(i + 1).map(|o| o.kind);
            let well_formed = i >= free_from
                && forward == Some(OpKind::F)
                && matches!(backward, Some(OpKind::B | OpKind::BW));
            if !well_formed {
                return Err(SimError::Shape(format!(
                    "device {d}: pair at op {i} is not a forward followed by a backward, or \
                     overlaps the pair before it (pairs must ascend)"
                )));
            }
            free_from = i + 2;
        }
    }
    Ok(())
}
