//! A proven lower bound of a plan's simulated iteration time, from its op costs and the
//! schedule's op counts alone (no simulation): what lets a solve skip simulating a plan that
//! cannot beat the one it already has, and a sweep stop a solve that cannot enter its answer.
//!
//! The simulator runs a device's compute ops one after another, each at least as long as
//! its costs say: a forward `f`, a backward `r + b` (recomputation on demand first; with
//! `overlap_recompute` the recomputation may hide, so it counts 0), a weight gradient `w`, a
//! fused backward `r + b + w`; Lynx's windowed recomputation may hide and counts 0. An
//! overlapped forward-backward pair hides at most its forward's and its backward's
//! all-to-alls, and every pair has one forward and one backward, so subtracting every
//! forward's and every backward's all-to-all time only lowers the sum. Offload copies and
//! transfers only add. After its pipeline work a device runs its end-of-iteration steps
//! (`sim::job::finish`): the gradient reduction (hidden only when overlapped), the tied
//! embedding's all-reduce, the optimizer step and the parameter all-gather, one after
//! another. So the iteration is at least, for every device, its busy time plus that tail.

use crate::schedule::Schedule;
use crate::sim::SimCosts;
use crate::sim::job::JobCosts;

/// Relative slack for the order of floating-point additions (the simulator adds the same
/// durations along its timeline).
const SLACK: f64 = 1e-9;

/// How many forwards, backwards (B or fused BW) and weight gradients (W or fused BW) each
/// (device, chunk) of a schedule runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OpCounts<'a> {
    /// Per device, per local chunk: `[forwards, backwards, weight gradients, fused]`.
    counts: &'a [Vec<[u32; 4]>],
}

impl<'a> OpCounts<'a> {
    /// The counts of `sched`'s op lists (counted once per schedule and kept with it:
    /// `Schedule::op_counts_kept`).
    pub(crate) fn of(sched: &'a Schedule) -> Self {
        Self {
            counts: sched.op_counts_kept(),
        }
    }
}

impl OpCounts<'_> {
    /// The fewest passes of any (device, chunk): forwards, backwards (B or fused) and weight
    /// gradients (W or fused), the least of the three over every chunk of every device.
    pub(crate) fn least_passes(&self) -> u32 {
        self.counts
            .iter()
            .flatten()
            .map(|&[f, b, w, bw]| f.min(b + bw).min(w + bw))
            .min()
            .unwrap_or(0)
    }
}

/// The proven lower bound of the iteration time that `sim::simulate` then `sim::job::finish`
/// give for `costs` and `job` on a schedule with these op counts (module docs).
pub(crate) fn iteration_floor_s(counts: &OpCounts<'_>, costs: &SimCosts, job: &JobCosts) -> f64 {
    let mut floor = 0.0f64;
    for (d, row) in counts.counts.iter().enumerate() {
        let Some(chunks) = costs.chunks.get(d) else {
            continue;
        };
        let mut busy = 0.0f64;
        for (c, &[nf, nb, nw, nbw]) in row.iter().enumerate() {
            let Some(cc) = chunks.get(c) else { continue };
            let r = if costs.overlap_recompute {
                0.0
            } else {
                cc.r_s.max(0.0)
            };
            let a2a_f = cc.a2a_f_s.clamp(0.0, cc.f_s.max(0.0));
            let a2a_b = cc.a2a_b_s.clamp(0.0, (cc.b_s + cc.w_s).max(0.0));
            let forward = (cc.f_s - a2a_f).max(0.0);
            let backward = (r + cc.b_s - a2a_b).max(0.0);
            let fused = (r + cc.b_s + cc.w_s - a2a_b).max(0.0);
            busy += f64::from(nf) * forward
                + f64::from(nb) * backward
                + f64::from(nw) * cc.w_s.max(0.0)
                + f64::from(nbw) * fused;
        }
        let tail = job.devices.get(d).map_or(0.0, |j| {
            let grad = if job.overlap_grad_reduce && j.grad_reduce_s > 0.0 {
                0.0
            } else {
                j.grad_reduce_s
            };
            grad.max(0.0) + j.tied_s.max(0.0) + j.optimizer_s.max(0.0) + j.param_gather_s.max(0.0)
        });
        floor = floor.max(busy + tail);
    }
    floor * (1.0 - SLACK)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::scenario::ScheduleKind;
    use crate::schedule::{self, ScheduleInput};
    use crate::sim::job::DeviceJob;

    /// A small deterministic generator of values in `[0, 1)`.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % 10_000) as f64 / 10_000.0
        }
    }

    /// For every schedule kind and random per-chunk costs (recomputation on demand and in
    /// the windows, tensor-parallel collectives, all-to-alls an overlapped pair may hide,
    /// overlapped or exposed recomputation) and end-of-iteration steps (gradient reduction
    /// overlapped or not, tied embedding, optimizer, gather), the floor never exceeds the
    /// simulated iteration, and it is close to it when the pipeline has little bubble.
    #[test]
    fn the_floor_never_exceeds_the_simulated_iteration() {
        let mut rng = Lcg(11);
        let mut checked = 0;
        for &kind in ScheduleKind::ALL {
            for (p, m) in [(1, 4), (2, 4), (4, 8), (4, 16), (8, 16)] {
                let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.05);
                let Ok(sched) = schedule::generate(kind, &input) else {
                    continue;
                };
                for case in 0..4 {
                    let mut costs = SimCosts::abstract_run(&sched, 1.0, 1.0, 1.0, 0.05, 0.0);
                    costs.overlap_recompute = case == 3;
                    for c in costs.chunks.iter_mut().flatten() {
                        c.f_s = 0.5 + rng.next();
                        c.b_s = 0.5 + 2.0 * rng.next();
                        c.w_s = rng.next();
                        c.r_s = if case >= 1 { rng.next() } else { 0.0 };
                        c.r_overlap_s = if case == 2 { rng.next() } else { 0.0 };
                        c.tp_b_s = 0.2 * rng.next();
                        c.a2a_f_s = if case == 2 { 0.3 * rng.next() } else { 0.0 };
                        c.a2a_b_s = if case == 2 { 0.3 * rng.next() } else { 0.0 };
                    }
                    let job = JobCosts {
                        devices: (0..p)
                            .map(|_| DeviceJob {
                                grad_reduce_s: rng.next(),
                                param_gather_s: 0.1 * rng.next(),
                                buckets: 4,
                                tied_s: 0.1 * rng.next(),
                                optimizer_s: 0.1 * rng.next(),
                                ..DeviceJob::default()
                            })
                            .collect(),
                        overlap_grad_reduce: case % 2 == 1,
                        m,
                        chunk_shares: Vec::new(),
                    };
                    let floor = iteration_floor_s(&OpCounts::of(&sched), &costs, &job);
                    let mut sim = crate::sim::simulate(&sched, &costs).unwrap();
                    crate::sim::job::finish(&mut sim, &job);
                    assert!(
                        floor <= sim.makespan,
                        "{kind} p {p} m {m} case {case}: floor {floor} above {}",
                        sim.makespan
                    );
                    assert!(floor > 0.0, "{kind} p {p} m {m} case {case}");
                    if p == 1 && case == 0 {
                        // One device, nothing hidden: the floor is the iteration.
                        assert!(floor >= sim.makespan * (1.0 - 1e-6), "{kind}");
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
