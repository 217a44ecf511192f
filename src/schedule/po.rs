//! PipeOffload's PO-H and PO-F (`po-h`, `po-f`): the zero-bubble repository's
//! `scheduler/group_interleaved_1f1b.py` order run as the paper runs it for offload.
//!
//! - **Uniform-repeating building block.** The GIS block (see `gis`) repeated unchanged for
//!   every group of g micro-batches, so every micro-batch-chunk of a chunk lives equally
//!   long; the group defaults to the smallest useful one (GIS-H: ceil(p/2), grown until a
//!   group's F+B+W covers a sweep through the devices), which shortens every lifespan.
//!   `--group-size` may set it from 1 to p, as for `gis`.
//! - **Split backward**: B and W are separate ops (zero-bubble).
//! - **Warm-up adjustment**: the block's warm-up holds `p v` chunk-activations at most (GIS's
//!   `g (v - 1) + p - d` on device d), not interleaved 1F1B's `p v + p - 1`.
//! - **Selective offload by lifespan.** On every device the chunks are ranked by their
//!   activations' lifespan (end of forward to start of backward, timed with the given
//!   durations, averaged over the micro-batches), longest first: PO-H offloads the
//!   longest-lived half (at least one chunk; chunk 0 at v = 2), PO-F every chunk. Since the
//!   longest-lived chunk is the one a device holds most copies of at its peak, half the
//!   offload removes more than half the peak.
//! - **One copy stream per device, interleaved with its partner.** The copies themselves are
//!   placed by the simulator (`crate::sim`'s paired copy slots), which needs devices in
//!   pairs (2k, 2k+1): p must be even.

use super::gis::{building_block_schedule, min_group};
use super::list_timing::time_schedule;
use super::search_input::check_basic;
use super::{OpKind, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Generates `po-h` or `po-f`.
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
    if !p.is_multiple_of(2) {
        return Err(unsupported(format!(
            "an even p: its copies interleave between devices (2k, 2k+1) that share a host \
             link (got p={p})"
        )));
    }
    if let Some(k) = input.offload_chunks {
        return Err(unsupported(format!(
            "no chunk count to offload (--offload-chunks, plan.offload_chunks; got {k}): \
             {kind} chooses its offloaded chunks by lifespan (po-h the longest-lived half, \
             po-f all); gis-offload takes a count"
        )));
    }
    let v = kind.chunks(input.v) as usize;
    let group = input.group_size.map_or(min_group(input, v), |g| g as usize);
    let mut s = building_block_schedule(kind, input, Some(group))?;
    let count = offloaded_chunks(kind, v);
    let lifespans = lifespans(&s, input).ok_or_else(|| {
        unsupported("an order the devices can run (the building block deadlocked)".into())
    })?;
    for (row, life) in s.offloaded.iter_mut().zip(&lifespans) {
        for c in longest_first(life).into_iter().take(count) {
            row[c] = true;
        }
    }
    Ok(s)
}

/// Chunks per device that `kind` offloads with `v` chunks: PO-H half (at least one), PO-F
/// all.
pub(crate) fn offloaded_chunks(kind: ScheduleKind, v: usize) -> usize {
    match kind {
        ScheduleKind::PoF => v,
        _ => (v / 2).max(1),
    }
}

/// Per device and chunk, the mean time from a micro-batch's forward end to its backward
/// start under `input`'s durations (`None` when the order cannot be timed).
fn lifespans(s: &Schedule, input: &ScheduleInput) -> Option<Vec<Vec<f64>>> {
    let times = time_schedule(s, input).ok()?;
    let v = s.v as usize;
    let m = s.m as usize;
    Some(
        s.devices
            .iter()
            .enumerate()
            .map(|(d, ops)| {
                let mut f_end = vec![0.0; v * m];
                let mut total = vec![0.0; v];
                for (i, op) in ops.iter().enumerate() {
                    let cell = op.chunk as usize * m + op.micro_batch as usize;
                    match op.kind {
                        OpKind::F => f_end[cell] = times.end[d][i],
                        OpKind::B | OpKind::BW => {
                            total[op.chunk as usize] += times.start[d][i] - f_end[cell];
                        }
                        OpKind::W => {}
                    }
                }
                total.iter().map(|t| t / m as f64).collect()
            })
            .collect(),
    )
}

/// Chunk indices by lifespan, longest first (equal lifespans: lower chunk first).
fn longest_first(life: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..life.len()).collect();
    order.sort_by(|&a, &b| life[b].total_cmp(&life[a]).then(a.cmp(&b)));
    order
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn input(p: u32, m: u32, v: u32) -> ScheduleInput {
        ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, 0.0)
    }

    #[test]
    fn po_h_offloads_the_longest_lived_half_po_f_everything() {
        for v in [2u32, 3, 4] {
            let h = generate(ScheduleKind::PoH, &input(8, 32, v)).unwrap();
            let f = generate(ScheduleKind::PoF, &input(8, 32, v)).unwrap();
            for row in &h.offloaded {
                // The block's first chunks live longest (their forwards come first and their
                // backwards last).
                let want: Vec<bool> = (0..v as usize).map(|c| c < (v as usize / 2)).collect();
                assert_eq!(row, &want, "v={v}");
            }
            assert!(f.offloaded.iter().flatten().all(|&x| x));
        }
    }

    #[test]
    fn the_group_defaults_to_the_smallest_useful_one() {
        let po = generate(ScheduleKind::PoH, &input(8, 32, 2)).unwrap();
        let mut gis_h = input(8, 32, 2);
        gis_h.group_size = Some(4);
        let gis = crate::schedule::generate(ScheduleKind::Gis, &gis_h).unwrap();
        assert_eq!(po.devices, gis.devices);
    }

    #[test]
    fn odd_p_and_a_chunk_count_are_refused() {
        let e = generate(ScheduleKind::PoF, &input(3, 6, 2)).unwrap_err();
        assert!(e.to_string().contains("even p"), "{e}");
        let mut i = input(4, 8, 2);
        i.offload_chunks = Some(1);
        let e = generate(ScheduleKind::PoH, &i).unwrap_err();
        assert!(e.to_string().contains("lifespan"), "{e}");
    }
}
