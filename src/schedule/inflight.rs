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

/// Calls `step` on `state` with device `d`'s ops in [`memory_order`], once through each
/// period of the device's repeated stretch (`Schedule::repeats_kept`) where the first
/// period leaves `key(state)` as it found it: the periods after it then walk the same
/// levels, and are skipped. `step` must read nothing of an op but its kind and chunk, and
/// `key` must hold all of the state that a step reads. A schedule that swaps pairs (only
/// Megatron's combined 1F1B) is walked in full.
fn each_in_memory_order<'a, S, K: PartialEq>(
    schedule: &'a Schedule,
    d: usize,
    state: &mut S,
    key: impl Fn(&S) -> K,
    mut step: impl FnMut(&mut S, &'a super::Op),
) {
    let swaps = schedule.kind.runs_combined_1f1b() && !schedule.pair_starts(d as u32).is_empty();
    if swaps {
        memory_order(schedule, d).for_each(|op| step(state, op));
        return;
    }
    schedule.walk_repeats_once(d, state, key, step);
}

impl Schedule {
    /// Calls `step` on `state` with device `d`'s ops in their listed order, once through
    /// each period of the device's repeated stretch (`Schedule::repeats_kept`) where the
    /// first period leaves `key(state)` as it found it: the periods after it walk the same
    /// levels, so a walk that keeps their highest (or anything else that depends only on
    /// the levels) ends as the full walk does. `step` must read nothing of an op but its
    /// kind and chunk, and `key` must hold all of the state that decides the levels the
    /// next ops walk. What a solve's memory walks take on every solve instead of all `m`
    /// micro-batches' ops.
    pub(crate) fn walk_repeats_once<'a, S, K: PartialEq>(
        &'a self,
        d: usize,
        state: &mut S,
        key: impl Fn(&S) -> K,
        step: impl FnMut(&mut S, &'a super::Op),
    ) {
        let ops = self.devices.get(d).map_or(&[][..], Vec::as_slice);
        let repeat = self.repeats_kept().get(d).copied().flatten();
        walk_once(ops, repeat, state, key, step);
    }
}

/// Calls `step` on `state` with every op of `ops`, skipping the periods of `repeat` after
/// the first when the first leaves `key(state)` as it found it (see
/// [`each_in_memory_order`]).
fn walk_once<'a, S, K: PartialEq>(
    ops: &'a [super::Op],
    repeat: Option<super::order_facts::Repeat>,
    state: &mut S,
    key: impl Fn(&S) -> K,
    mut step: impl FnMut(&mut S, &'a super::Op),
) {
    let mut rest = ops;
    if let Some(r) = repeat {
        let (before, stretch) = ops.split_at(r.start);
        before.iter().for_each(|op| step(state, op));
        let at_start = key(state);
        stretch[..r.len].iter().for_each(|op| step(state, op));
        rest = if key(state) == at_start {
            &stretch[r.count * r.len..]
        } else {
            &stretch[r.len..]
        };
    }
    rest.iter().for_each(|op| step(state, op));
}

fn analyze(schedule: &Schedule) -> InFlight {
    let v = schedule.v as usize;
    let mut out = InFlight {
        per_device: Vec::with_capacity(schedule.devices.len()),
        per_chunk: Vec::with_capacity(schedule.devices.len()),
    };
    for d in 0..schedule.devices.len() {
        // Live and peak per chunk, then all chunks' live and peak.
        let mut walk = (vec![0i64; v], vec![0i64; v], 0i64, 0i64);
        each_in_memory_order(
            schedule,
            d,
            &mut walk,
            |w| w.0.clone(),
            |(live, peak, total, total_peak), op| {
                let c = (op.chunk as usize).min(v.saturating_sub(1));
                let dlt = delta(op.kind);
                live[c] += dlt;
                *total += dlt;
                peak[c] = peak[c].max(live[c]);
                *total_peak = (*total_peak).max(*total);
            },
        );
        let (_, peak, _, total_peak) = walk;
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
            // Live, peak.
            let mut walk = (0u64, 0u64);
            each_in_memory_order(
                schedule,
                d,
                &mut walk,
                |w| w.0,
                |(live, peak), op| {
                    let wc = w.get(op.chunk as usize).copied().unwrap_or(0);
                    match op.kind {
                        OpKind::F => {
                            *live += wc;
                            *peak = (*peak).max(*live);
                        }
                        OpKind::B => {}
                        OpKind::W | OpKind::BW => *live = live.saturating_sub(wc),
                    }
                },
            );
            walk.1
        })
        .collect()
}

fn live_vectors(schedule: &Schedule) -> Vec<Vec<Vec<u32>>> {
    let v = schedule.v as usize;
    (0..schedule.devices.len())
        .map(|d| {
            // Live per chunk, the kept vectors, and the one that covered the last covered
            // F: in a steady state the same one covers F after F, so it is asked first
            // (whether any covers is the same answer). A repeated period that starts from
            // the live vector its first period started from meets only vectors already
            // covered, so the kept ones are the full walk's.
            let mut walk = (vec![0u32; v], Vec::<Vec<u32>>::new(), 0usize);
            each_in_memory_order(
                schedule,
                d,
                &mut walk,
                |w| w.0.clone(),
                |(live, out, last), op| {
                    let c = (op.chunk as usize).min(v.saturating_sub(1));
                    match op.kind {
                        OpKind::F => {
                            live[c] += 1;
                            if out.get(*last).is_some_and(|o| covers(o, live)) {
                                return;
                            }
                            if let Some(i) = out.iter().position(|o| covers(o, live)) {
                                *last = i;
                            } else {
                                keep_maximal(out, live);
                            }
                        }
                        OpKind::B => {}
                        OpKind::W | OpKind::BW => live[c] = live[c].saturating_sub(1),
                    }
                },
            );
            walk.1
        })
        .collect()
}

fn held_vectors(sched: &Schedule) -> Vec<Vec<Vec<u32>>> {
    let v = sched.v.max(1) as usize;
    let repeats = sched.repeats_kept();
    sched
        .devices
        .iter()
        .enumerate()
        .map(|(d, ops)| {
            // Held per chunk and the kept vectors (a repeated period that starts where its
            // first started meets only covered vectors, as in `live_vectors`).
            let mut walk = (vec![0u32; v], Vec::<Vec<u32>>::new());
            let repeat = repeats.get(d).copied().flatten();
            walk_once(
                ops,
                repeat,
                &mut walk,
                |w| w.0.clone(),
                |(held, out), op| {
                    let c = (op.chunk as usize).min(v - 1);
                    match op.kind {
                        OpKind::F => {
                            held[c] += 1;
                            if !out.iter().any(|o| covers(o, held)) {
                                keep_maximal(out, held);
                            }
                        }
                        OpKind::B | OpKind::BW => held[c] = held[c].saturating_sub(1),
                        OpKind::W => {}
                    }
                },
            );
            walk.1
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
    use crate::schedule::{Op, ScheduleInput, ScheduleKind, generate};

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

    /// [`analyze`], [`peak_weighted`] and [`held_vectors`] as first written: every op of
    /// every device walked, in memory order.
    fn plain_walks(
        schedule: &Schedule,
        weights: &[Vec<u64>],
    ) -> (InFlight, Vec<u64>, Vec<Vec<Vec<u32>>>) {
        let v = schedule.v as usize;
        let mut flight = InFlight::default();
        let mut weighted = Vec::new();
        let mut held_all = Vec::new();
        for d in 0..schedule.devices.len() {
            let (mut live, mut peak) = (vec![0i64; v], vec![0i64; v]);
            let (mut total, mut total_peak) = (0i64, 0i64);
            let (mut wlive, mut wpeak) = (0u64, 0u64);
            let w = weights.get(d).map(Vec::as_slice).unwrap_or(&[]);
            for op in memory_order(schedule, d) {
                let c = (op.chunk as usize).min(v.saturating_sub(1));
                live[c] += delta(op.kind);
                total += delta(op.kind);
                peak[c] = peak[c].max(live[c]);
                total_peak = total_peak.max(total);
                let wc = w.get(op.chunk as usize).copied().unwrap_or(0);
                match op.kind {
                    OpKind::F => {
                        wlive += wc;
                        wpeak = wpeak.max(wlive);
                    }
                    OpKind::B => {}
                    OpKind::W | OpKind::BW => wlive = wlive.saturating_sub(wc),
                }
            }
            flight.per_device.push(clamp_u32(total_peak));
            flight
                .per_chunk
                .push(peak.iter().map(|&x| clamp_u32(x)).collect());
            weighted.push(wpeak);
            let mut held = vec![0u32; v.max(1)];
            let mut out: Vec<Vec<u32>> = Vec::new();
            for op in &schedule.devices[d] {
                let c = (op.chunk as usize).min(v.max(1) - 1);
                match op.kind {
                    OpKind::F => {
                        held[c] += 1;
                        if !out.iter().any(|o| covers(o, &held)) {
                            out.retain(|o| !covers(&held, o));
                            out.push(held.clone());
                        }
                    }
                    OpKind::B | OpKind::BW => held[c] = held[c].saturating_sub(1),
                    OpKind::W => {}
                }
            }
            held_all.push(out);
        }
        (flight, weighted, held_all)
    }

    /// Whether the live-count walk of some device of `s` skips repeated periods.
    fn skips_live(s: &Schedule) -> bool {
        let v = s.v as usize;
        s.repeats_kept().iter().zip(&s.devices).any(|(r, ops)| {
            let Some(r) = r.filter(|r| r.count > 2) else {
                return false;
            };
            let walk = |live: &mut Vec<u32>, ops: &[Op]| {
                for op in ops {
                    let c = op.chunk as usize;
                    match op.kind {
                        OpKind::F => live[c] += 1,
                        OpKind::B => {}
                        OpKind::W | OpKind::BW => live[c] = live[c].saturating_sub(1),
                    }
                }
            };
            let mut live = vec![0u32; v];
            walk(&mut live, &ops[..r.start]);
            let before = live.clone();
            walk(&mut live, &ops[r.start..r.start + r.len]);
            before == live
        })
    }

    /// The walks that skip a device's repeated periods give the full walks' answers, on
    /// every kind with random sizes (m up to 1024), chunk counts, durations and chunk
    /// weights, and on a few hand-made orders whose repeated periods do not leave the
    /// levels as they found them (a leak per period) or only do after a while.
    #[test]
    fn walks_that_skip_repeats_are_the_full_walks() {
        let mut next = crate::schedule::test_draws(0x51ed_5eed_0042);
        let mut schedules = Vec::new();
        for case in 0..120 {
            let kind = ScheduleKind::ALL[case % ScheduleKind::ALL.len()];
            let p = 2 + next(7) as u32;
            let m = match next(3) {
                0 => p + next(20) as u32,
                1 => 8 * p + next(64) as u32,
                _ => 256 + next(769) as u32,
            };
            let v = 1 + next(3) as u32;
            let mut input = ScheduleInput::uniform(p, m, v, 1.0, 1.3, 0.7, 0.05);
            for row in input.f.iter_mut().chain(input.w.iter_mut()) {
                for x in row.iter_mut() {
                    *x *= 0.5 + next(100) as f64 / 50.0;
                }
            }
            input.combined_1f1b = case % 5 == 0;
            if let Ok(s) = generate(kind, &input) {
                schedules.push(s);
            }
        }
        // A leak: every period of F F B W frees one forward less than it allocates (the
        // stretch repeats, its levels climb); and a stretch that settles after a while.
        let mut leak = Schedule::empty(
            ScheduleKind::OneFOneB,
            1,
            64,
            1,
            crate::schedule::Placement::Single,
        );
        let mut climb = Schedule::empty(
            ScheduleKind::OneFOneB,
            1,
            64,
            1,
            crate::schedule::Placement::Single,
        );
        for mb in 0..32u32 {
            leak.devices[0].extend([
                Op::new(OpKind::F, 2 * mb, 0),
                Op::new(OpKind::F, 2 * mb + 1, 0),
                Op::new(OpKind::B, mb, 0),
                Op::new(OpKind::W, mb, 0),
            ]);
        }
        for mb in 0..64u32 {
            climb.devices[0].extend([Op::new(OpKind::W, mb, 0), Op::new(OpKind::F, mb, 0)]);
        }
        schedules.push(leak);
        schedules.push(climb);
        let mut skipped = 0;
        for s in &schedules {
            let weights: Vec<Vec<u64>> = (0..s.p)
                .map(|_| (0..s.v).map(|_| 1 + next(1 << 20)).collect())
                .collect();
            let (flight, weighted, held) = plain_walks(s, &weights);
            let what = format!("{} p {} m {} v {}", s.kind, s.p, s.m, s.v);
            assert_eq!(s.in_flight(), flight, "{what}");
            assert_eq!(s.peak_weighted_in_flight(&weights), weighted, "{what}");
            assert_eq!(s.live_vectors(), plain_live_vectors(s), "{what}");
            assert_eq!(s.held_vectors(), held, "{what}");
            // A byte walk as the solve's fixed peak takes it (B frees part of a forward's
            // bytes, W the rest), skipping repeats, against the full walk.
            let bytes = |op: &Op| {
                let act = i128::from(weights[0][(op.chunk as usize).min(weights[0].len() - 1)]);
                match op.kind {
                    OpKind::F => act,
                    OpKind::B => -act / 3,
                    OpKind::W => -(act - act / 3),
                    OpKind::BW => -act,
                }
            };
            for d in 0..s.devices.len() {
                let mut walk = (0i128, 0i128);
                s.walk_repeats_once(
                    d,
                    &mut walk,
                    |w| w.0,
                    |(live, peak), op| {
                        *live += bytes(op);
                        *peak = (*peak).max(*live);
                    },
                );
                let full = s.devices[d].iter().scan(0i128, |live, op| {
                    *live += bytes(op);
                    Some(*live)
                });
                assert_eq!(walk.1, full.fold(0, i128::max), "{what} device {d}");
            }
            skipped += usize::from(skips_live(s));
        }
        assert!(schedules.len() > 80, "only {} schedules", schedules.len());
        assert!(
            skipped > 60,
            "only {skipped} schedules whose live walk skips periods"
        );
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
