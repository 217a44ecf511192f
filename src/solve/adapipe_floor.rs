//! A proven lower bound of the iteration time of every plan `adapipe` can make on a
//! multi-chunk schedule, known before its partition search runs: what lets a sweep drop such
//! a configuration without paying for the search (one stage knapsack instead of one per
//! device and layer count).
//!
//! On a schedule whose every device runs `v` distinct chain stages (interleaved, ZB-V,
//! V-Half, ...), `adapipe` gives each chunk whole layers: the device-level search chooses
//! whole layers per device, and the even partition that competes with it (or replaces it)
//! gives whole layers to each stage when there are at least as many layers as stages. The
//! device layer counts add up to the chain's `L` layers, so some device holds at least
//! `X = ceil(L / p)` layers. When every layer is alike, that device holds at least `X` of each
//! of the layer's two blocks, and its stage knapsack runs with at least the least in-flight
//! count any device can have: the planner's count for a device is at least the request's
//! (re-plans only raise it) and at least the time-coincident peak of its chunks weighted by
//! their sizes, which is no less than the largest, over the schedule's moments, of the
//! fewest micro-batches live in any of its chunks. The least recomputation of a stage only
//! grows with its blocks, its in-flight count and the logits it may hold (each removes
//! capacity or adds copies), so the knapsack on `X` layers at that count, without the
//! logits, is no more than that device's; where even it does not fit, that device recomputes
//! every optional unit (the planner's fallback), which costs no less than doing so on `X`
//! layers.
//!
//! The simulator runs a device's ops one after another: every chunk's forward, backward
//! (with its recomputation on demand) and weight gradient at least as many times as the
//! fewest passes of any chunk of the schedule ([`super::floor::OpCounts::least_passes`]). So
//! the iteration is at least those passes times that device's work per micro-batch plus its
//! recomputation. Recomputation that may hide (`overlap_recompute`) and all-to-alls an
//! overlapped pair may hide are not bounded here (the bound is not given).

use crate::plan::Strategy;
use crate::plan::planner::PlanRequest;
use crate::plan::stage::{self, BlockCounts, KnapsackMode, StageEnv};
use crate::scenario::Partition;
use crate::schedule::{Placement, Schedule};

use super::floor::OpCounts;

/// Relative slack for the order of floating-point additions.
const SLACK: f64 = 1e-9;

/// The fewest live micro-batches of any chunk at the moment of `vectors` where that is most:
/// no weighting of the chunks brings the device's time-coincident peak below it.
fn least_live(vectors: &[Vec<u32>]) -> u32 {
    vectors
        .iter()
        .map(|l| l.iter().copied().min().unwrap_or(0))
        .max()
        .unwrap_or(0)
}

/// The floor of one request, ready to be asked at several budgets: the layers `X` of the
/// busiest device, its work per micro-batch, the passes and the in-flight counts.
pub(crate) struct AdapipeFloor {
    /// `X` whole layers: the busiest device's blocks at least.
    counts: BlockCounts,
    /// Forward, backward and weight gradient of the `X` layers per micro-batch, seconds.
    work_s: f64,
    /// Recomputing every optional unit of the `X` layers, seconds per micro-batch.
    all_s: f64,
    /// The fewest passes of any chunk.
    passes: f64,
    /// The least in-flight count of any device's knapsack (the planner's count).
    in_flight: u32,
    /// The least, over the devices, of the most micro-batches every chunk holds at once from
    /// forward to backward (B or BW) in an order the search does not change; `None` where
    /// the search may change the order.
    held: Option<u32>,
}

impl AdapipeFloor {
    /// The floor of `req` (strategy, stage map, in-flight counts and live vectors of the
    /// first schedule `sched`), or `None` where it does not apply (another strategy, a
    /// single-chunk or two-copy schedule, half layers, unlike layers, a layout or the balanced
    /// partition, recomputation or all-to-alls that may hide).
    pub(crate) fn new(req: &PlanRequest, sched: &Schedule, may_hide: bool) -> Option<Self> {
        let anatomy = req.anatomy;
        let p = req.stage_of.len();
        let chunked = sched.v > 1
            && sched.placement != Placement::Chimera
            && req.stage_of.iter().all(|c| c.len() == sched.v as usize)
            && req.stage_of.iter().flatten().count() == req.stages;
        if req.strategy != Strategy::AdaPipe
            || may_hide
            || !chunked
            || p == 0
            || (anatomy.layers as usize) < req.stages
            || req.partition != Partition::Even
            || req.layout.is_some()
        {
            return None;
        }
        let kinds = anatomy.layer_kinds();
        let [layer] = kinds.as_slice() else {
            return None;
        };
        let x = anatomy.layers.div_ceil(p as u32);
        let mut counts = BlockCounts::default();
        counts.add_layers(layer.kinds, x);
        let in_flight = (0..p)
            .map(|d| {
                let own = req.in_flight.get(d).copied().unwrap_or(1).max(1);
                own.max(req.live.get(d).map_or(0, |v| least_live(v)))
            })
            .min()?;
        let per_layer = |f: &dyn Fn(&crate::anatomy::Block) -> f64| -> f64 {
            layer
                .kinds
                .iter()
                .map(|&k| f64::from(x) * f(anatomy.block_of(k)))
                .sum()
        };
        let all_s = per_layer(&|b| {
            b.units
                .iter()
                .filter(|u| !u.forced)
                .map(|u| u.forward_s)
                .sum::<f64>()
        });
        let work_s = per_layer(&|b| b.forward_s + b.backward_b_s + b.backward_w_s);
        let held = super::memory_floor::order_fixed_before_search(sched.kind)
            .then(|| {
                super::memory_floor::held_vectors(sched)
                    .iter()
                    .map(|h| least_live(h))
                    .min()
            })
            .flatten();
        Some(Self {
            counts,
            work_s,
            all_s,
            passes: f64::from(OpCounts::of(sched).least_passes()),
            in_flight,
            held,
        })
    }

    /// The lower bound of the module docs at `req`'s budget: of every plan the planner makes
    /// for `req`, whatever its peak.
    pub(crate) fn at_budget_s(&self, req: &PlanRequest) -> f64 {
        let env = StageEnv {
            in_flight: self.in_flight,
            budget_bytes: req.budget_bytes,
            logits: false,
        };
        // Nothing fits: the planner recomputes every optional unit.
        let added = stage::knapsack_added_in(
            &req.cache,
            req.anatomy,
            self.counts,
            &env,
            KnapsackMode::default(),
        )
        .unwrap_or(self.all_s);
        self.passes * (self.work_s + added) * (1.0 - SLACK)
    }

    /// Whether [`AdapipeFloor::below_s`] answers (the search leaves the op order as it is).
    pub(crate) fn below_known(&self) -> bool {
        self.held.is_some()
    }

    /// A lower bound of the iteration of every plan the planner makes for `req` whose
    /// simulated highest peak is at most `peak_bytes` (infinite where none can be; `None`
    /// where the search may change the op order). The device holding `X` layers or more
    /// holds, at the moment its chunks' held counts are least at their most, at least
    /// `held` micro-batches of each chunk with all their kept bytes, so its simulated peak is
    /// at least its stage's peak at `held` in flight (static + `held` x kept + transient):
    /// its decisions fit the stage knapsack at `held` and `peak_bytes`, and cost no less than
    /// that knapsack's least on `X` layers (where nothing fits, no plan reaches that peak).
    pub(crate) fn below_s(&self, req: &PlanRequest, peak_bytes: u64) -> Option<f64> {
        let held = self.held?;
        if held == 0 {
            return Some(self.passes * self.work_s * (1.0 - SLACK));
        }
        let env = StageEnv {
            in_flight: held,
            budget_bytes: peak_bytes,
            logits: false,
        };
        Some(
            match stage::knapsack_added_in(
                &req.cache,
                req.anatomy,
                self.counts,
                &env,
                KnapsackMode::default(),
            ) {
                Some(added) => self.passes * (self.work_s + added) * (1.0 - SLACK),
                None => f64::INFINITY,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;

    use crate::scenario::ScheduleKind;
    use crate::solve::{SolveOptions, run_until};

    use super::*;

    /// On random small instances (schedule, pipeline size, micro-batches, budget, tensor
    /// parallelism, model), every bound a solve reports to its caller's stop (this floor
    /// before the search among them) is at most the iteration the solve then simulates, and
    /// the floor is reached before the search on the multi-chunk schedules.
    #[test]
    fn the_floor_before_the_search_never_exceeds_the_simulated_iteration() {
        let mut next = crate::solve::testcase::rng(5);
        let (mut early, mut checked, mut close) = (0, 0, 0);
        for case in 0..60 {
            let kind = [
                ScheduleKind::Interleaved,
                ScheduleKind::ZbV,
                ScheduleKind::VHalf,
            ][next(3) as usize];
            let (s, anatomy) =
                crate::solve::testcase::small(case % 3 == 0, (kind, Strategy::AdaPipe), &mut next);
            let asked = Mutex::new(Vec::new());
            // The bounds of the whole solve (the first, before the search, may come with a
            // memory floor; the later ones with peak 0); a candidate plan's own floor and
            // exact peak (asked once the plans are made) bound that candidate only.
            let stop = |t: f64, peak: u64| {
                let mut asked = asked.lock().unwrap();
                if peak == 0 || asked.is_empty() {
                    asked.push(t);
                }
                false
            };
            let Ok(run) = run_until(
                &s,
                &anatomy,
                (kind, Strategy::AdaPipe),
                &SolveOptions::default(),
                Some(&stop),
            ) else {
                continue;
            };
            let got = run.simulation.makespan;
            let asked = asked.into_inner().unwrap();
            for &t in &asked {
                assert!(t <= got, "{kind} case {case}: bound {t} above {got}");
            }
            if asked.len() >= 2 {
                early += 1;
                if asked[0] >= 0.8 * got {
                    close += 1;
                }
            }
            checked += 1;
        }
        assert!(checked >= 40, "{checked}");
        assert!(
            early >= 30,
            "the floor before the search was given {early} times"
        );
        assert!(close >= 5, "the floor was within 20 % {close} times");
    }
}
