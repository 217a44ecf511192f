//! The engine's overlapped forward-backward pairs (DualPipe, DualPipe-V, Megatron's
//! combined 1F1B on interleaved and one-device 1F1B): where a pair
//! starts, when both its inputs are there, marking its two spans, and what the pairs hide of
//! their all-to-alls.

use super::super::op_costs::{OpCosts, pair_hidden_s};
use super::super::types::SimCosts;
use super::Engine;
use crate::schedule::{OpKind, Schedule};

/// Per device of `sched`, the all-to-all seconds its overlapped pairs hide in one iteration
/// under `costs` (zero without pairs or without the all-to-all overlap's times): what comes
/// off the exposed expert-parallel communication of its breakdown.
pub fn a2a_hidden_s(sched: &Schedule, costs: &SimCosts) -> Vec<f64> {
    let v = sched.v as usize;
    let (table, _) = OpCosts::table(costs, sched.p as usize, v);
    let at = |d: usize, chunk: u32| table.get(d * v + chunk as usize).copied();
    let per_layer = sched.kind.runs_combined_1f1b();
    sched
        .devices
        .iter()
        .enumerate()
        .map(|(d, ops)| {
            let starts = sched.pairs.get(d).map_or(&[][..], Vec::as_slice);
            starts
                .iter()
                .filter_map(|&i| {
                    let (f, b) = (ops.get(i as usize)?, ops.get(i as usize + 1)?);
                    let (fc, bc) = (at(d, f.chunk)?, at(d, b.chunk)?);
                    let b_dur = match b.kind {
                        OpKind::BW => bc.b + bc.w,
                        _ => bc.b,
                    };
                    Some(pair_hidden_s(&fc, &bc, b_dur, per_layer))
                })
                .sum()
        })
        .collect()
}

impl Engine<'_> {
    /// Whether the op device `di` is at opens its next overlapped pair.
    pub(super) fn pair_starts_here(&self, di: usize) -> bool {
        let next = self
            .sched
            .pairs
            .get(di)
            .and_then(|starts| starts.get(self.next_pair[di]));
        next.is_some_and(|&i| i as usize == self.ptr[di])
    }

    /// When the inputs of op `index` of device `d` (a pair's backward) are there.
    pub(super) fn partner_ready(&self, d: u32, index: usize) -> f64 {
        match self.sched.devices[d as usize].get(index) {
            Some(op) => {
                let stage = self.sched.stage_of(d, op.chunk, op.micro_batch);
                self.ready_at(d, op.kind, stage, op.micro_batch)
            }
            None => 0.0,
        }
    }

    /// Marks device `di`'s last compute span as one half of an overlapped pair.
    pub(super) fn mark_paired(&mut self, di: usize) {
        if let Some(span) = self.runs[di].compute.last_mut() {
            span.paired = true;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use crate::schedule::{self, ScheduleInput, ScheduleKind};
    use crate::sim::{SimCosts, a2a_hidden_s, simulate};

    /// DualPipe on 2 devices (its pairs run a forward with a fused BW), every op F = B = W = 1 and free transfers, each forward
    /// carrying `a2a_f` and each backward `a2a_b` seconds of all-to-all that a pair may hide.
    fn run(a2a_f: f64, a2a_b: f64) -> (Vec<f64>, f64, Vec<f64>) {
        let input = ScheduleInput::uniform(2, 8, 2, 1.0, 1.0, 1.0, 0.0);
        let sched = schedule::generate(ScheduleKind::DualPipe, &input).unwrap();
        let mut costs = SimCosts::abstract_run(&sched, 1.0, 1.0, 1.0, 0.0, 0.0);
        for c in costs.chunks.iter_mut().flatten() {
            c.a2a_f_s = a2a_f;
            c.a2a_b_s = a2a_b;
        }
        let sim = simulate(&sched, &costs).unwrap();
        let t = &sim.timeline;
        let pairs: Vec<f64> = t
            .pairs()
            .iter()
            .map(|&(f, b)| t.spans[b].end - t.spans[f].start)
            .collect();
        (pairs, sim.makespan, a2a_hidden_s(&sched, &costs))
    }

    #[test]
    fn a_pair_hides_each_halfs_all_to_all_under_the_others_compute() {
        let (plain, plain_makespan, none) = run(0.0, 0.0);
        assert!(!plain.is_empty());
        // Without all-to-all time to hide a pair is its forward and its fused backward.
        assert!(plain.iter().all(|&d| (d - 3.0).abs() < 1e-12), "{plain:?}");
        assert!(none.iter().all(|&h| h == 0.0));
        // F = 1 with 0.4 of all-to-all, BW = 2 with 0.6: min(0.4, 2 - 0.6) + min(0.6, 1 - 0.4)
        // = 1.0 comes off every pair.
        let (hidden, makespan, per_device) = run(0.4, 0.6);
        assert_eq!(hidden.len(), plain.len());
        assert!(
            hidden.iter().all(|&d| (d - 2.0).abs() < 1e-12),
            "{hidden:?}"
        );
        assert!(makespan < plain_makespan);
        // Per device: one second per pair.
        let sched = schedule::generate(
            ScheduleKind::DualPipe,
            &ScheduleInput::uniform(2, 8, 2, 1.0, 1.0, 1.0, 0.0),
        )
        .unwrap();
        for (d, h) in per_device.iter().enumerate() {
            assert!((h - sched.pairs[d].len() as f64).abs() < 1e-12);
        }
        // The bound: the forward's 0.9 hides under only 2 - 1.8 = 0.2 of the backward's
        // compute, the backward's 1.8 under 1 - 0.9 = 0.1 of the forward's.
        let (bounded, _, _) = run(0.9, 1.8);
        assert!(
            bounded.iter().all(|&d| (d - 2.7).abs() < 1e-12),
            "{bounded:?}"
        );
    }
}
