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

    /// One device, 1F1B as Megatron's combined 1F1B, three micro-batches of one chunk of
    /// `layers` MoE layers: each layer's attention forward 1, expert forward 2, dispatch and
    /// combine forward 1 each; attention backward 2, expert backward 4, dispatch and combine
    /// backward 1.5 each (chunk totals scale with `layers`). Of the backwards, the weight
    /// gradients are `attn_w` and `mlp_w` a layer.
    fn combined(layers: u32) -> (f64, Vec<f64>, crate::schedule::Schedule) {
        combined_with_w(layers, 0.0, 0.0)
    }

    fn combined_with_w(
        layers: u32,
        attn_w: f64,
        mlp_w: f64,
    ) -> (f64, Vec<f64>, crate::schedule::Schedule) {
        let mut input = ScheduleInput::uniform(1, 3, 1, 1.0, 1.0, 0.0, 0.0);
        input.combined_1f1b = true;
        let sched = schedule::generate(ScheduleKind::OneFOneB, &input).unwrap();
        let n = f64::from(layers);
        let mut costs = SimCosts::abstract_run(&sched, 5.0 * n, 9.0 * n, 0.0, 0.0, 0.0);
        for c in costs.chunks.iter_mut().flatten() {
            c.a2a_f_s = 2.0 * n;
            c.a2a_b_s = 3.0 * n;
            c.moe_split = crate::sim::MoeLayerSplit {
                layers,
                attn_f_s: n,
                attn_bw_s: 2.0 * n,
                mlp_f_s: 2.0 * n,
                mlp_bw_s: 4.0 * n,
                attn_w_s: attn_w * n,
                mlp_w_s: mlp_w * n,
                a2a_sm_share: 0.0,
            };
        }
        let sim = simulate(&sched, &costs).unwrap();
        (sim.makespan, a2a_hidden_s(&sched, &costs), sched)
    }

    #[test]
    fn megatrons_combined_pair_hides_layer_by_layer_in_four_steps() {
        for layers in [1, 2, 5] {
            let (makespan, hidden, sched) = combined(layers);
            assert_eq!(sched.pairs[0], [1, 3]);
            // Per layer: min(c_B 1.5, a_F 1) + min(m_B 4, d_F 1) + min(m_F 2, d_B 1.5)
            // + min(c_F 1, a_B 2) = 4.5 of the 2 + 3 all-to-all seconds.
            let per_pair = 4.5 * f64::from(layers);
            assert!((hidden[0] - 2.0 * per_pair).abs() < 1e-9, "{hidden:?}");
            // F0, (F1 B0), (F2 B1), B2: 5 + 2 (5 + 9 - 4.5) + 9 per layer.
            let want = f64::from(layers) * (5.0 + 2.0 * (14.0 - 4.5) + 9.0);
            assert!((makespan - want).abs() < 1e-9, "{makespan} {want}");
        }
    }

    #[test]
    fn delayed_weight_gradients_run_beside_the_backwards_own_all_to_alls() {
        // Attention W 1 of its backward 2, expert W 2 of its 4. Per layer pair: step 2 keeps
        // the expert B (4 - 2 = 2) beside d_F 1: 1; step 3 the expert W and forward (2 + 2)
        // beside d_B 1.5: 1.5; step 4 the attention B (2 - 1 = 1) beside c_F 1: 1; step 1
        // the attention forward 1, after the first layer pair with the previous layer's
        // attention W (1 + 1), beside c_B 1.5: 1, then 1.5.
        for layers in [1u32, 2, 5] {
            let (makespan, hidden, sched) = combined_with_w(layers, 1.0, 2.0);
            assert_eq!(sched.pairs[0], [1, 3]);
            let n = f64::from(layers);
            let per_pair = n * (1.0 + 1.5 + 1.0) + 1.0 + (n - 1.0) * 1.5;
            assert!((hidden[0] - 2.0 * per_pair).abs() < 1e-9, "{hidden:?}");
            let want = n * (5.0 + 9.0) * 3.0 - 2.0 * per_pair;
            assert!((makespan - want).abs() < 1e-9, "{makespan} {want}");
            // One layer: the same 4.5 as without delayed W; more layers hide more.
            let (_, plain, _) = combined(layers);
            assert!(hidden[0] >= plain[0] - 1e-9);
            assert_eq!(layers == 1, (hidden[0] - plain[0]).abs() < 1e-9);
        }
    }

    #[test]
    fn a_pair_never_hides_more_than_its_all_to_alls_or_the_compute_beside_them() {
        use super::super::super::op_costs::{OpCosts, pair_hidden_s};
        use crate::anatomy::hidden_beside;
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 4.0
        };
        for _ in 0..2000 {
            // The all-to-alls hold up to half the multiprocessors.
            let share = next() / 8.0;
            let (wa, wm) = (next() / 4.0, next() / 4.0);
            let split = |n: u32, a: f64, m: f64, b: f64, c: f64| crate::sim::MoeLayerSplit {
                layers: n,
                attn_f_s: a,
                mlp_f_s: m,
                attn_bw_s: b,
                mlp_bw_s: c,
                // The W parts of the backwards (clamped to them where larger).
                attn_w_s: wa * b,
                mlp_w_s: wm * c,
                a2a_sm_share: share,
            };
            let (lf, lb) = (1 + (next() as u32), 1 + (next() as u32));
            let f = OpCosts {
                a2a_f: next(),
                split: split(lf, next(), next(), 0.0, 0.0),
                ..OpCosts::default()
            };
            let f = OpCosts {
                f: f.a2a_f + f.split.attn_f_s + f.split.mlp_f_s,
                ..f
            };
            let b = OpCosts {
                a2a_b: next(),
                split: split(lb, 0.0, 0.0, next(), next()),
                ..OpCosts::default()
            };
            let b_dur = b.a2a_b + b.split.attn_bw_s + b.split.mlp_bw_s;
            let h = pair_hidden_s(&f, &b, b_dur, true);
            let compute = f.split.attn_f_s + f.split.mlp_f_s + b.split.attn_bw_s + b.split.mlp_bw_s;
            assert!(h >= 0.0);
            assert!(h <= (1.0 - share) * (f.a2a_f + b.a2a_b) + 1e-12);
            assert!(h <= compute + 1e-12);
            assert!(h <= b_dur + 1e-12);
            // Never more than the whole-op bound DualPipe's pairs use, once the backward's
            // own weight gradients (which delayed W runs beside its all-to-alls) count as
            // compute beside the backward's all-to-alls too.
            let w = b.split.attn_w_s + b.split.mlp_w_s;
            let whole = hidden_beside(f.a2a_f, b_dur - b.a2a_b, share)
                + hidden_beside(b.a2a_b, f.f - f.a2a_f + w, share);
            assert!(h <= whole + 1e-12, "{h} {whole}");
        }
    }
}
