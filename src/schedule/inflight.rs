//! In-flight analysis from an op order alone (no timing).
//!
//! Convention of the sources (docs/model.md, docs/model.md for
//! abstract runs): a micro-batch-chunk becomes live at its `F` and stops being live at its
//! `W` or `BW`; a `B` frees nothing. A device runs its ops one at a time in order, so the
//! peak over its op sequence equals the peak over time in any simulation of that order
//! (frees before allocations at equal times). In the overlapped pairs of Megatron's combined
//! 1F1B the backward counts first: its layers free as the paired forward's fill
//! (`TransformerLayerSchedulePlan.run` releases each backward layer's state as it goes), so
//! the pair holds about one of the two micro-batch-chunks, not both.

use super::{OpKind, Schedule};

/// Peak live micro-batch-chunks, per device and per (device, chunk).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InFlight {
    /// Per device: the maximum over its op sequence of all its live micro-batch-chunks.
    pub per_device: Vec<u32>,
    /// Per device and local chunk: the maximum over the sequence of that chunk's live
    /// micro-batches (the peaks of different chunks need not coincide in time).
    pub per_chunk: Vec<Vec<u32>>,
}

/// Change of the live count caused by an op of `kind`.
fn delta(kind: OpKind) -> i64 {
    match kind {
        OpKind::F => 1,
        OpKind::B => 0,
        OpKind::W | OpKind::BW => -1,
    }
}

impl Schedule {
    /// Per device and chunk, the peak number of live micro-batch-chunks, and the per-device
    /// time-coincident peak.
    pub fn in_flight(&self) -> InFlight {
        analyze(self)
    }

    /// Per device, the peak number of live micro-batch-chunks (all chunks together).
    pub fn peak_in_flight(&self) -> Vec<u32> {
        analyze(self).per_device
    }

    /// Per device, the maximum over its op sequence of the sum of its live
    /// micro-batch-chunks, each weighted by `weights[device][chunk]` (for example the
    /// chunk's blocks, or its bytes per micro-batch). This is the device's time-coincident
    /// peak that the planner budgets for. A missing weight counts as 0.
    pub fn peak_weighted_in_flight(&self, weights: &[Vec<u64>]) -> Vec<u64> {
        peak_weighted(self, weights)
    }

    /// Per device, the live micro-batches of each chunk at every moment that can set a
    /// weighted peak (after each F), keeping only the vectors no other one covers: for any
    /// non-negative chunk weights, the device's [`Schedule::peak_weighted_in_flight`] is the
    /// largest weighted sum of one of them. The planner sizes chunks with them.
    pub fn live_vectors(&self) -> Vec<Vec<Vec<u32>>> {
        live_vectors(self)
    }

    /// Per device, the micro-batches of each chunk held from their forward to their
    /// backward (B or BW) right after each forward, in the listed order, keeping only the
    /// vectors no other one covers (what a memory floor may count as never freed before
    /// the backward, whatever the plan recomputes).
    pub fn held_vectors(&self) -> Vec<Vec<Vec<u32>>> {
        held_vectors(self)
    }
}

/// Device `d`'s ops in the order their memory changes: as listed, except that each
/// overlapped pair of Megatron's combined 1F1B counts its backward before its forward.
fn memory_order(schedule: &Schedule, d: usize) -> impl Iterator<Item = &super::Op> {
    let ops = schedule.devices.get(d).map_or(&[][..], Vec::as_slice);
    let starts = if schedule.kind.runs_combined_1f1b() {
        schedule.pair_starts(d as u32)
    } else {
        &[]
    };
    let mut next = 0usize;
    (0..ops.len()).filter_map(move |j| {
        while starts.get(next).is_some_and(|&s| (s as usize) + 1 < j) {
            next += 1;
        }
        let swapped = match starts.get(next).map(|&s| s as usize) {
            Some(s) if s == j && j + 1 < ops.len() => j + 1,
            Some(s) if s + 1 == j => j - 1,
            _ => j,
        };
        ops.get(swapped)
    })
}

/// Calls `f` on device `d`'s ops in [`memory_order`]: a plain pass over the list when the
/// schedule swaps no pair (every schedule but Megatron's combined 1F1B), which the walks
/// below take on every solve.
fn each_in_memory_order<'a>(schedule: &'a Schedule, d: usize, mut f: impl FnMut(&'a super::Op)) {
    let swaps = schedule.kind.runs_combined_1f1b() && !schedule.pair_starts(d as u32).is_empty();
    if swaps {
        memory_order(schedule, d).for_each(f);
    } else {
        let ops = schedule.devices.get(d).map_or(&[][..], Vec::as_slice);
        ops.iter().for_each(&mut f);
    }
}

fn analyze(schedule: &Schedule) -> InFlight {
    let v = schedule.v as usize;
    let mut out = InFlight {
        per_device: Vec::with_capacity(schedule.devices.len()),
        per_chunk: Vec::with_capacity(schedule.devices.len()),
    };
    let mut live = vec![0i64; v];
    let mut peak = vec![0i64; v];
    for d in 0..schedule.devices.len() {
        live.iter_mut().for_each(|x| *x = 0);
        peak.iter_mut().for_each(|x| *x = 0);
        let (mut total, mut total_peak) = (0i64, 0i64);
        each_in_memory_order(schedule, d, |op| {
            let c = (op.chunk as usize).min(v.saturating_sub(1));
            let dlt = delta(op.kind);
            live[c] += dlt;
            total += dlt;
            peak[c] = peak[c].max(live[c]);
            total_peak = total_peak.max(total);
        });
        out.per_device.push(clamp_u32(total_peak));
        out.per_chunk
            .push(peak.iter().map(|&x| clamp_u32(x)).collect());
    }
    out
}

fn peak_weighted(schedule: &Schedule, weights: &[Vec<u64>]) -> Vec<u64> {
    (0..schedule.devices.len())
        .map(|d| {
            let w = weights.get(d).map(Vec::as_slice).unwrap_or(&[]);
            let (mut live, mut peak) = (0u64, 0u64);
            each_in_memory_order(schedule, d, |op| {
                let wc = w.get(op.chunk as usize).copied().unwrap_or(0);
                match op.kind {
                    OpKind::F => {
                        live += wc;
                        peak = peak.max(live);
                    }
                    OpKind::B => {}
                    OpKind::W | OpKind::BW => live = live.saturating_sub(wc),
                }
            });
            peak
        })
        .collect()
}

fn live_vectors(schedule: &Schedule) -> Vec<Vec<Vec<u32>>> {
    let v = schedule.v as usize;
    (0..schedule.devices.len())
        .map(|d| {
            let mut live = vec![0u32; v];
            let mut out: Vec<Vec<u32>> = Vec::new();
            // The vector that covered the last covered F: in a steady state the same one
            // covers F after F, so it is asked first (whether any covers is the same answer).
            let mut last = 0usize;
            each_in_memory_order(schedule, d, |op| {
                let c = (op.chunk as usize).min(v.saturating_sub(1));
                match op.kind {
                    OpKind::F => {
                        live[c] += 1;
                        if out.get(last).is_some_and(|o| covers(o, &live)) {
                            return;
                        }
                        if let Some(i) = out.iter().position(|o| covers(o, &live)) {
                            last = i;
                        } else {
                            keep_maximal(&mut out, &live);
                        }
                    }
                    OpKind::B => {}
                    OpKind::W | OpKind::BW => live[c] = live[c].saturating_sub(1),
                }
            });
            out
        })
        .collect()
}

fn held_vectors(sched: &Schedule) -> Vec<Vec<Vec<u32>>> {
    let v = sched.v.max(1) as usize;
    sched
        .devices
        .iter()
        .map(|ops| {
            let mut held = vec![0u32; v];
            let mut out: Vec<Vec<u32>> = Vec::new();
            for op in ops {
                let c = (op.chunk as usize).min(v - 1);
                match op.kind {
                    OpKind::F => {
                        held[c] += 1;
                        if !out.iter().any(|o| covers(o, &held)) {
                            keep_maximal(&mut out, &held);
                        }
                    }
                    OpKind::B | OpKind::BW => held[c] = held[c].saturating_sub(1),
                    OpKind::W => {}
                }
            }
            out
        })
        .collect()
}

/// Whether vector `o` is at least `now` in every chunk.
fn covers(o: &[u32], now: &[u32]) -> bool {
    o.iter().zip(now).all(|(a, b)| a >= b)
}

/// Adds `now`, which no kept vector covers, to the maximal vectors `out`, dropping those it
/// covers.
fn keep_maximal(out: &mut Vec<Vec<u32>>, now: &[u32]) {
    out.retain(|o| !covers(now, o));
    out.push(now.to_vec());
}

fn clamp_u32(x: i64) -> u32 {
    u32::try_from(x.max(0)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schedule::{ScheduleInput, ScheduleKind, generate};

    /// [`live_vectors`] as first written: every F's vector is checked against every kept one.
    fn plain_live_vectors(schedule: &Schedule) -> Vec<Vec<Vec<u32>>> {
        let v = schedule.v as usize;
        (0..schedule.devices.len())
            .map(|d| {
                let mut live = vec![0u32; v];
                let mut out: Vec<Vec<u32>> = Vec::new();
                memory_order(schedule, d).for_each(|op| {
                    let c = (op.chunk as usize).min(v.saturating_sub(1));
                    match op.kind {
                        OpKind::F => {
                            live[c] += 1;
                            let covered = |o: &Vec<u32>| o.iter().zip(&live).all(|(a, b)| a >= b);
                            if !out.iter().any(covered) {
                                out.retain(|o| !o.iter().zip(&live).all(|(a, b)| a <= b));
                                out.push(live.clone());
                            }
                        }
                        OpKind::B => {}
                        OpKind::W | OpKind::BW => live[c] = live[c].saturating_sub(1),
                    }
                });
                out
            })
            .collect()
    }

    /// The kept vectors (and their order) are the plain walk's on every kind, with one to
    /// four chunks, short and long runs, and unlike durations for the searched schedules.
    #[test]
    fn live_vectors_are_the_plain_walks() {
        let mut checked = 0;
        for &kind in ScheduleKind::ALL {
            for (p, m, v) in [(2, 3, 2), (4, 8, 2), (4, 37, 3), (3, 64, 4), (6, 50, 2)] {
                let mut input = ScheduleInput::uniform(p, m, v, 1.0, 1.3, 0.7, 0.05);
                for (d, row) in input.f.iter_mut().enumerate() {
                    row[0] *= 1.0 + 0.1 * d as f64;
                }
                let Ok(s) = generate(kind, &input) else {
                    continue;
                };
                assert_eq!(
                    s.live_vectors(),
                    plain_live_vectors(&s),
                    "{kind} p {p} m {m} v {v}"
                );
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} schedules");
    }
}
