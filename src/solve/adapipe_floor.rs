//! A proven lower bound of the iteration time of every plan `adapipe` can make on a schedule,
//! known before its partition search runs: what lets a sweep drop such a configuration without
//! paying for the search (a few stage knapsacks per device count instead of one per device
//! and stage range).
//!
//! On a schedule whose every device runs `v` distinct chain stages (interleaved, ZB-V,
//! V-Half, ...), `adapipe` gives each chunk whole layers: the device-level search chooses
//! whole layers per device, and the even partition that competes with it (or replaces it)
//! gives whole layers to each stage when there are at least as many layers as stages. The
//! device layer counts add up to the chain's `L` layers. When every layer is alike, a device
//! holding `x` layers holds `x` of each of the layer's two blocks, and its stage knapsack runs
//! with at least its own least in-flight count: the planner's count for a device is at least
//! the request's (re-plans only raise it) and at least the time-coincident peak of its chunks
//! weighted by their sizes, which is no less than the largest, over the schedule's moments,
//! of the fewest micro-batches live in any of its chunks. The least recomputation of a stage
//! only grows with its blocks, its in-flight count and the logits it may hold (each removes
//! capacity or adds copies), so the knapsack on `x` layers at that count, without the
//! logits, is no more than that device's; where even it does not fit, that device recomputes
//! every optional unit (the planner's fallback), which costs no less than doing so on `x`
//! layers.
//!
//! On a single-chunk schedule (1F1B, ZB-H1, ...: device `d` holds chain stage `d` alone) the
//! search may cut anywhere in the chain, so the bound is taken over every split of the block
//! chain itself, each device's range at its own in-flight count (the planner's: the schedule's
//! peak in flight), with its end-of-iteration tail and its waits for the stages before it
//! ([`super::chain_floor`]); a range's recomputation is at least the stage knapsack's on the
//! whole layers it holds (as many as its fewer blocks of the two kinds), without the
//! logits.
//!
//! The simulator runs a device's ops one after another: every chunk's forward, backward
//! (with its recomputation on demand) and weight gradient at least as many times as the
//! fewest passes of any chunk of the schedule ([`super::floor::OpCounts::least_passes`]). So
//! a device's time is at least those passes times its work per micro-batch plus its
//! recomputation, a cost that never falls as it takes more units; the iteration is at least
//! the least, over every split of the chain's units over the devices, of the busiest device's
//! such cost ([`super::split_floor::least_largest`], each device at its own in-flight count).
//! After its pipeline work a device runs its end-of-iteration steps (`sim::job::finish`),
//! whose data-parallel collectives take at least a fixed time per parameter it holds
//! ([`super::tail_floor::tail_s_per_param`]; the tied embedding's all-reduce and the
//! optimizer step only add): each device's cost takes that tail on its layers too. The
//! device of the chain's first stage also works on the embedding and holds its parameters,
//! the device of its last stage the head, whatever the split.
//!
//! Below a peak (what the sweep's front test asks, [`AdapipeFloor::below_s`]) the bound is
//! the same at that budget; and on one chunk per device where the simulated peak is the
//! planner's own (every device holds at its busiest moment its planner's count of
//! micro-batches from forward to backward: 1F1B, GPipe), a plan whose peak is more than one
//! knapsack step under the budget adds no time on any device ([`saturation_bytes`]), so every
//! device keeps all its units whose recomputation takes time: the bound is then the least
//! over the splits whose every range keeps so within the peak, of the busiest device's work
//! (infinite where none does).
//!
//! Recomputation that may hide (`overlap_recompute`) and all-to-alls an overlapped pair may
//! hide are not bounded here (the bound is not given).

use crate::anatomy::BlockKind;
use crate::plan::Strategy;
use crate::plan::planner::PlanRequest;

use crate::scenario::Partition;
use crate::schedule::{Placement, Schedule, ScheduleKind};

use super::added_floor::LayerAdded;
use super::chain_floor::ChainFloor;
use super::floor::OpCounts;
use super::split_floor::least_largest;

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

/// The floor of one request, ready to be asked at several budgets: each device's in-flight
/// counts, a layer's work and the passes.
pub(crate) struct AdapipeFloor {
    /// The blocks of one layer (every layer is alike).
    kinds: [BlockKind; 2],
    /// Layers of the chain.
    layers: u32,
    /// Forward, backward and weight gradient of one layer per micro-batch, seconds.
    work_s: f64,
    /// Recomputing every optional unit of one layer, seconds per micro-batch.
    all_s: f64,
    /// On one chunk per device, the chain's blocks (the bound is taken over its splits).
    chain: Option<ChainFloor>,
    /// On one chunk per device, how many blocks of the layer's two kinds the chain holds
    /// before each block (entry `i` counts blocks `0..i`).
    pairs: Vec<(u32, u32)>,
    /// Per device, the work per pass and the tail of the embedding and the head it holds (the
    /// chain's first stage holds the embedding, its last the head).
    ends: Vec<(f64, f64)>,
    /// End-of-iteration seconds per layer a device holds (its data-parallel collectives,
    /// proportional to its parameters).
    tail_s: f64,
    /// The fewest passes of any chunk.
    passes: f64,
    /// Per device, the least in-flight count of its knapsack (the planner's count).
    in_flight: Vec<u32>,
    /// Per device, the most micro-batches every chunk holds at once from forward to backward
    /// (B or BW) in an order the search does not change; `None` where the search may change
    /// the order.
    held: Option<Vec<u32>>,
    /// Where a plan's simulated peak is its planner's own (one chunk per device, every
    /// backward fused: 1F1B, GPipe), the peak below which every device of the plan keeps
    /// whatever it can without added time ([`saturation_bytes`]); `None` elsewhere.
    keep_all_below: Option<u64>,
}

/// What a stage knapsack's optimum at least fills of its budget when it adds time: the most
/// one step of its choices can add, at `in_flight` micro-batches, over `anatomy`'s blocks.
///
/// A stage's decisions are the exact optimum of its knapsack (least added time within the
/// budget; the planner's fallback, where nothing fits, exceeds the budget). Say it adds time:
/// it then recomputes some copy of a unit whose forward takes time, or some layer whole.
/// Keeping that copy instead adds its bytes at every micro-batch in flight (`in_flight x`
/// its size; the recomputation buffer of its kind only goes away), and recomputing one
/// layer fewer whole keeps that layer's units at most (`in_flight x` the layer's units;
/// the buffers of whole layers only go away): either is strictly faster, so it does not fit.
/// The stage's peak is therefore above its budget less that step, and a step is at most
/// `in_flight x` the larger of one layer's units and the largest unit of any block.
pub(crate) fn saturation_bytes(anatomy: &crate::anatomy::Anatomy, in_flight: u32) -> u64 {
    let layer = anatomy
        .layer_kinds()
        .iter()
        .map(|l| {
            l.kinds
                .iter()
                .map(|&k| anatomy.block_of(k).all_units_bytes())
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    let unit = (0..anatomy.num_blocks())
        .map(|i| anatomy.block(i))
        .chain([&anatomy.embedding, &anatomy.head])
        .flat_map(|b| b.units.iter().map(|u| u.size_bytes))
        .max()
        .unwrap_or(0);
    u64::from(in_flight).saturating_mul(layer.max(unit))
}

/// The block kinds of the chain's one kind of layer where `adapipe` gives every chunk of a
/// multi-chunk schedule whole layers alike, the case both multi-chunk floors (time here, memory
/// in [`super::memory_floor`]) answer: `adapipe`, several distinct chain stages on every device
/// (not Chimera's replicas), at least as many layers as stages, the even partition, no layout,
/// and every layer of one kind; `None` otherwise.
pub(crate) fn whole_layer_kinds(req: &PlanRequest, sched: &Schedule) -> Option<[BlockKind; 2]> {
    let chunked = sched.v > 1
        && sched.placement != Placement::Chimera
        && req.stage_of.iter().all(|c| c.len() == sched.v as usize)
        && req.stage_of.iter().flatten().count() == req.stages;
    if !chunked || (req.anatomy.layers as usize) < req.stages {
        return None;
    }
    adapipe_layer_kinds(req)
}

/// The block kinds of the chain's one kind of layer where `adapipe` searches the partition of
/// a single-chunk schedule: device `d` holds chain stage `d` alone, the even partition, no
/// layout, every layer of one kind; `None` otherwise.
fn single_chunk_kinds(req: &PlanRequest, sched: &Schedule) -> Option<[BlockKind; 2]> {
    let single = sched.v == 1
        && sched.placement == Placement::Single
        && req.stages == req.stage_of.len()
        && req.stage_of.iter().enumerate().all(|(d, s)| s == &[d]);
    if !single {
        return None;
    }
    adapipe_layer_kinds(req)
}

/// The layer's two block kinds where the request is `adapipe` with the even partition, no
/// layout, at least one stage and every layer of one kind.
fn adapipe_layer_kinds(req: &PlanRequest) -> Option<[BlockKind; 2]> {
    if req.strategy != Strategy::AdaPipe
        || req.stage_of.is_empty()
        || req.partition != Partition::Even
        || req.layout.is_some()
    {
        return None;
    }
    match req.anatomy.layer_kinds().as_slice() {
        [layer] => Some(layer.kinds),
        _ => None,
    }
}

/// A device's least added time per pass from `bound`, a lower bound of its knapsack's least
/// (infinite where nothing fits): with `fallback`, never more than `all`, the planner's
/// fallback of recomputing every optional unit, which it also takes where nothing fits.
fn with_fallback(bound: f64, all: f64, fallback: bool) -> f64 {
    if fallback { bound.min(all) } else { bound }
}

impl AdapipeFloor {
    /// The floor of `req` (strategy, stage map, in-flight counts and live vectors of the
    /// first schedule `sched`), or `None` where it does not apply (another strategy, a
    /// two-copy schedule, half layers on several chunks, unlike layers, a layout or the
    /// balanced partition, recomputation or all-to-alls that may hide).
    /// `tail_s_per_param` is what a device spends per parameter after its pipeline work
    /// ([`super::tail_floor::tail_s_per_param`]).
    pub(crate) fn new(
        req: &PlanRequest,
        sched: &Schedule,
        may_hide: bool,
        tail_s_per_param: f64,
    ) -> Option<Self> {
        if may_hide {
            return None;
        }
        let anatomy = req.anatomy;
        let p = req.stage_of.len();
        let (layer, single) = match whole_layer_kinds(req, sched) {
            Some(l) => (l, false),
            None => (single_chunk_kinds(req, sched)?, true),
        };
        let in_flight = (0..p)
            .map(|d| {
                let own = req.in_flight.get(d).copied().unwrap_or(1).max(1);
                own.max(req.live.get(d).map_or(0, |v| least_live(v)))
            })
            .collect();
        let per_layer = |f: &dyn Fn(&crate::anatomy::Block) -> f64| -> f64 {
            layer.iter().map(|&k| f(anatomy.block_of(k))).sum()
        };
        let all_s = per_layer(&|b| {
            b.units
                .iter()
                .filter(|u| !u.forced)
                .map(|u| u.forward_s)
                .sum::<f64>()
        });
        let passes = f64::from(OpCounts::of(sched).least_passes());
        let block_work = |b: &crate::anatomy::Block| b.forward_s + b.backward_b_s + b.backward_w_s;
        let work_s = per_layer(&block_work);
        let beta = tail_s_per_param.max(0.0);
        let mut ends = vec![(0.0, 0.0); p];
        let last = req.stages.saturating_sub(1);
        for (d, stages) in req.stage_of.iter().enumerate() {
            for (stage, block) in [(0, &anatomy.embedding), (last, &anatomy.head)] {
                if stages.contains(&stage) {
                    ends[d].0 += block_work(block);
                    ends[d].1 += beta * block.params as f64;
                }
            }
        }
        let tail_s = beta * per_layer(&|b| b.params as f64);
        let blocks = if single { anatomy.num_blocks() } else { 0 };
        let mut pairs = vec![(0u32, 0u32)];
        for i in 0..blocks {
            let (mut a, mut b) = pairs[i];
            let kind = anatomy.kind_of(i);
            a += u32::from(kind == layer[0]);
            b += u32::from(kind == layer[1]);
            pairs.push((a, b));
        }
        let chain = single.then(|| {
            let figures: Vec<(f64, f64, f64)> = (0..blocks)
                .map(|i| {
                    let b = anatomy.block(i);
                    (block_work(b), b.forward_s, beta * b.params as f64)
                })
                .collect();
            // Fill and drain where every device ends on a fused backward.
            let drain = matches!(sched.kind, ScheduleKind::OneFOneB | ScheduleKind::Gpipe);
            ChainFloor::new(&figures, passes, drain)
        });
        let held: Option<Vec<u32>> = super::memory_floor::order_fixed_before_search(sched.kind)
            .then(|| {
                super::memory_floor::held_vectors(sched)
                    .iter()
                    .map(|h| least_live(h))
                    .collect()
            });
        // One chunk per device, where every device holds at its busiest moment as many
        // micro-batches from forward to backward as its planner's count: a device's simulated
        // peak is then at least its planner's own (static + in-flight x kept + transient),
        // and its knapsack's optimum fills the budget less one step wherever it adds time.
        let keep_all_below = held
            .as_ref()
            .filter(|h| {
                single
                    && h.len() == req.in_flight.len()
                    && h.iter().zip(&req.in_flight).all(|(&h, &n)| h >= n)
            })
            .map(|_| {
                let most = req.in_flight.iter().copied().max().unwrap_or(1);
                req.budget_bytes
                    .saturating_sub(saturation_bytes(anatomy, most))
            });
        Some(Self {
            keep_all_below,
            kinds: layer,
            layers: anatomy.layers,
            work_s,
            all_s,
            chain,
            pairs,
            ends,
            tail_s,
            passes,
            in_flight,
            held,
        })
    }

    /// A device's least time over the passes holding `x` whole layers at `n` in flight under
    /// `budget`: its work and its stage knapsack's least added time on those layers (with
    /// `fallback`, the planner's own fallback when nothing fits, every optional unit
    /// recomputed, and never more than it, which keeps the cost growing with `x`; without,
    /// infinite when nothing fits).
    fn device_s(&self, req: &PlanRequest, added: &mut LayerAdded, x: u32, fallback: bool) -> f64 {
        let all = f64::from(x) * self.all_s;
        let added = with_fallback(added.at(req, x), all, fallback);
        self.passes * (f64::from(x) * self.work_s + added)
    }

    /// The least, over every split of the chain over the devices, of the busiest device's
    /// time with device `d` at `counts[d]` in flight, with its tail (and on one chunk per
    /// device its waits for the stages before it, [`super::chain_floor`]).
    fn least_busiest(&self, req: &PlanRequest, counts: &[u32], budget: u64, fallback: bool) -> f64 {
        let p = counts.len();
        if let Some(chain) = &self.chain {
            // A range holds at least as many whole layers as its fewer blocks of the two
            // kinds; devices at the same count share their knapsacks.
            let mut classes: Vec<u32> = Vec::new();
            let class_of: Vec<usize> = counts
                .iter()
                .map(|&n| match classes.iter().position(|&c| c == n) {
                    Some(i) => i,
                    None => {
                        classes.push(n);
                        classes.len() - 1
                    }
                })
                .collect();
            let mut added: Vec<LayerAdded> = classes
                .iter()
                .map(|&n| LayerAdded::new(self.kinds, n, budget))
                .collect();
            let pairs = &self.pairs;
            return chain.least_time(p, &mut |d, s, e| {
                let (Some(&class), Some(to), Some(from)) =
                    (class_of.get(d), pairs.get(e), pairs.get(s))
                else {
                    return f64::INFINITY;
                };
                let x = (to.0 - from.0).min(to.1 - from.1);
                let bound = added[class].at(req, x);
                with_fallback(bound, f64::from(x) * self.all_s, fallback)
            });
        }
        // Devices at the same count share their bounds.
        let mut added: Vec<(u32, LayerAdded)> = Vec::new();
        least_largest(p, self.layers, &mut |d, x| {
            let n = counts.get(d).copied().unwrap_or(0);
            let at = match added.iter().position(|a| a.0 == n) {
                Some(i) => i,
                None => {
                    added.push((n, LayerAdded::new(self.kinds, n, budget)));
                    added.len() - 1
                }
            };
            let (work, tail) = self.ends.get(d).copied().unwrap_or((0.0, 0.0));
            let own = self.device_s(req, &mut added[at].1, x, fallback);
            own + self.passes * work + tail + f64::from(x) * self.tail_s
        })
    }

    /// The lower bound of the module docs at `req`'s budget: of every plan the planner makes
    /// for `req`, whatever its peak.
    pub(crate) fn at_budget_s(&self, req: &PlanRequest) -> f64 {
        self.least_busiest(req, &self.in_flight, req.budget_bytes, true) * (1.0 - SLACK)
    }

    /// A lower bound of the iteration of every plan the planner makes for `req` whose
    /// simulated highest peak is at most `peak_bytes` (infinite where none can be; `None`
    /// where the search may change the op order). A device holds, at the moment its chunks'
    /// held counts are least at their most, at least `held` micro-batches of each chunk with
    /// all their kept bytes, so its simulated peak is at least its stage's peak at `held` in
    /// flight (static + `held` x kept + transient): its decisions fit the stage knapsack at
    /// `held` and `peak_bytes`, and cost no less than that knapsack's least on its whole
    /// layers (where nothing fits, no plan reaches that peak). The bound is the least over
    /// every split of the chain of the busiest device's such time.
    ///
    /// Where a plan's simulated peak is its planner's own (1F1B, GPipe), below
    /// `keep_all_below` no device of the plan adds time ([`saturation_bytes`]: one that does
    /// peaks above it), so each device's knapsack at `held` and `peak_bytes` has a plan that
    /// adds none: the split's ranges whose bound is above 0 are ruled out.
    pub(crate) fn below_s(&self, req: &PlanRequest, peak_bytes: u64) -> Option<f64> {
        let held = self.held.as_ref()?;
        let time = match (&self.chain, self.keep_all_below) {
            (Some(chain), Some(t)) if peak_bytes < t => {
                self.least_busiest_keeping(req, chain, held, peak_bytes)
            }
            _ => self.least_busiest(req, held, peak_bytes, false),
        };
        Some(time * (1.0 - SLACK))
    }

    /// On one chunk per device, the least over every split of the chain of the busiest
    /// device's time when no device adds time and each one's plan, at `counts[d]` in flight,
    /// stays within `peak_bytes`: a device then keeps every unit whose recomputation takes
    /// time (the forced ones too: no layer is recomputed whole), so a range of `x` whole
    /// layers needs `x` times a layer's static bytes and those units at `counts[d]` in
    /// flight, plus the device's own bytes. A range needing more is ruled out (its time is
    /// infinite); the others cost their work alone.
    fn least_busiest_keeping(
        &self,
        req: &PlanRequest,
        chain: &ChainFloor,
        counts: &[u32],
        peak_bytes: u64,
    ) -> f64 {
        let anatomy = req.anatomy;
        let (mut stat, mut kept) = (0u64, 0u64);
        for &k in &self.kinds {
            let b = anatomy.block_of(k);
            stat = stat.saturating_add(b.static_bytes);
            kept = kept.saturating_add(
                b.units
                    .iter()
                    .filter(|u| u.forced || u.forward_s > 0.0)
                    .map(|u| u.size_bytes)
                    .sum(),
            );
        }
        let room = peak_bytes.checked_sub(anatomy.device_bytes);
        // Per device, the most whole layers it can keep so (`None`: not even none).
        let most: Vec<Option<u64>> = counts
            .iter()
            .map(|&n| {
                let per_layer = stat.saturating_add(u64::from(n).saturating_mul(kept));
                room.map(|r| r.checked_div(per_layer).unwrap_or(u64::MAX))
            })
            .collect();
        let pairs = &self.pairs;
        chain.least_time(counts.len(), &mut |d, s, e| {
            let (Some(&Some(most)), Some(to), Some(from)) =
                (most.get(d), pairs.get(e), pairs.get(s))
            else {
                return f64::INFINITY;
            };
            let x = (to.0 - from.0).min(to.1 - from.1);
            if u64::from(x) > most {
                f64::INFINITY
            } else {
                0.0
            }
        })
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
        for case in 0..100 {
            let kind = [
                ScheduleKind::Interleaved,
                ScheduleKind::ZbV,
                ScheduleKind::VHalf,
                ScheduleKind::OneFOneB,
                ScheduleKind::ZbH1,
            ][next(5) as usize];
            let small =
                crate::solve::testcase::small(case % 3 == 0, (kind, Strategy::AdaPipe), &mut next);
            let (s, anatomy) = crate::solve::testcase::with_data_parallel(small, &mut next);
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
        assert!(checked >= 70, "{checked}");
        assert!(
            early >= 50,
            "the floor before the search was given {early} times"
        );
        assert!(close >= 5, "the floor was within 20 % {close} times");
    }
}

#[cfg(test)]
mod below_tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Mutex;

    use crate::scenario::ScheduleKind;
    use crate::solve::{SolveOptions, run_until_front};

    use super::*;

    /// On random small instances (the multi-chunk kinds whose order is fixed, budgets from
    /// tight to roomy, two models), the curve a solve hands its caller's front test is a
    /// lower bound: at every peak no lower than the simulated one it is at most the simulated
    /// iteration (and infinite nowhere there), and it rises above the floor at the budget
    /// below some peaks.
    #[test]
    fn the_floor_below_a_peak_bounds_every_plan_that_peaks_lower() {
        let mut next = crate::solve::testcase::rng(23);
        let (mut checked, mut steeper) = (0, 0);
        for case in 0..120 {
            let kind = [
                ScheduleKind::Interleaved,
                ScheduleKind::VHalf,
                ScheduleKind::OneFOneB,
                ScheduleKind::ZbH1,
            ][next(4) as usize];
            let small =
                crate::solve::testcase::small(case % 3 == 0, (kind, Strategy::AdaPipe), &mut next);
            let (s, anatomy) = crate::solve::testcase::with_data_parallel(small, &mut next);
            let budget = s.plan.memory_budget_bytes;
            let curve = Mutex::new(Vec::new());
            let stop = |_: f64, _: u64| false;
            let front = |t: f64, _: u64, below: &mut dyn FnMut(u64) -> f64| {
                let mut curve = curve.lock().unwrap();
                curve.push((budget, t));
                for k in 1..=32u64 {
                    let peak = budget / 32 * k;
                    curve.push((peak, below(peak)));
                }
                false
            };
            let Ok(run) = run_until_front(
                &s,
                &anatomy,
                (kind, Strategy::AdaPipe),
                &SolveOptions::default(),
                (Some(&stop), Some(&front)),
            ) else {
                continue;
            };
            let time = run.simulation.makespan;
            let peak = crate::solve::testcase::peak_bytes(&run.simulation);
            let curve = curve.into_inner().unwrap();
            if curve.is_empty() {
                continue;
            }
            let at_budget = curve[0].1;
            for &(p, t) in &curve {
                if p >= peak {
                    assert!(
                        t <= time,
                        "{kind} case {case}: {t} at {p} bytes above {time} (peak {peak})"
                    );
                }
            }
            if curve[1..].iter().any(|&(_, t)| t > at_budget) {
                steeper += 1;
            }
            checked += 1;
        }
        assert!(checked >= 40, "{checked}");
        assert!(
            steeper >= 10,
            "the curve rose above the budget's floor {steeper} times"
        );
    }
}

#[cfg(test)]
#[path = "adapipe_floor_tests.rs"]
mod saturation_tests;
