//! Proven lower bounds of a configuration's iteration time and highest device peak, from its
//! anatomy alone (no plan, no schedule, no simulation).
//!
//! **Time.** The sim runs every op of a device one after another, each at least as long as
//! the anatomy's blocks say (recomputation, compression and transfers only add), and every
//! block of the chain runs its forward and backward (B + W) for every micro-batch on some
//! device. Recomputation that a strategy always does (every layer's forward for `full`, core
//! attention for `selective`; none under Lynx, where it may hide) is part of that work. After
//! its pipeline work, each device reduces its gradients over the data-parallel group (unless
//! the reduction overlaps the backward, where it can still end no earlier than the pipeline
//! work) and, with the distributed optimizer, gathers its updated parameters: both ring
//! collectives whose time is proportional to the device's parameters, so each block adds
//! `beta x params` to the device that holds it (`beta` from the cluster's links; the tied
//! embedding's all-reduce, the optimizer step and the two-copy schedules' gradient exchange
//! between mirror devices only add). Three bounds follow, the largest
//! is kept:
//!
//! 1. *Average.* The devices' work and tails add up to `m x W + beta x N` (`W` the
//!    per-micro-batch work of the chain, `N` its parameters; Chimera's replicas split the
//!    micro-batches and hold the parameters twice, so its total is no smaller); the busiest
//!    device has at least a `1/p` share. The device holding the head works at least `m x` the
//!    head's work (Chimera: one of its two head replicas runs at least half the
//!    micro-batches).
//! 2. *Fill* (one stage per device: 1F1B, GPipe, ZB-H1/H2/auto). Device `d` holds stage `d`
//!    alone; its first op is some micro-batch's forward, which needs that micro-batch's
//!    forward on every earlier stage first, one after another. So device `d` ends no earlier
//!    than `Fpre(d) + m x work(d) + tail(d)`, `Fpre(d)` the forward of stages `0..d` for one
//!    micro-batch. The partition is unknown, so the bound is the minimum over every split of
//!    the block chain into at most `p` contiguous stages of the largest such end ([`min_max`]).
//! 3. *Fill and drain* (1F1B and GPipe, whose every device ends with a fused backward BW of
//!    some micro-batch: a test checks the orders). After device `d`'s last op, the backward of
//!    that micro-batch still runs on every earlier stage, each after the next one's, each at
//!    least its B + W: `T >= Fpre(d) + m x work(d) + BWpre(d)`, minimised over splits the
//!    same way.
//!
//! **Memory.** Every device holds its blocks' static memory (weights, gradients, optimizer
//! state) for the whole iteration; just before the first backward of micro-batch 0 on a device,
//! every chunk it holds still keeps micro-batch 0's tensors (a backward needs every later
//! stage's forward first, and backwards of earlier stages follow it). So the highest peak is at
//! least the average over devices of static + one micro-batch's minimum kept bytes, where
//! the minimum is what the strategy can never drop (all units for `none`, all but core attention
//! for `selective`, the attention input for `full` and the knapsack strategies, nothing for the
//! offloading and compressing ones or under `gis-offload`). The device with the head also
//! holds the head's static memory and the logits transient at the loss.
//!
//! With the MoE all-to-all overlap (only on schedules with overlapped forward-backward
//! pairs), a pair runs in no less than its two halves without their all-to-alls (the hidden
//! time is at most both halves' all-to-alls), so every bound above takes each block's work
//! without its all-to-alls (`ep_comm`'s added times).
//!
//! The anatomy is the one the configuration is solved on: for the schedules that split the
//! backward, the one with the backward's hidden collectives exposed (the sweep passes it).
//!
//! The sweep test checks both bounds against `solve` over many configurations.

use crate::anatomy::{Anatomy, Block, BlockKind};
use crate::plan::stage::BlockCounts;
use crate::scenario::{Scenario, ScheduleKind, Strategy};
use crate::schedule::Placement;

use super::Config;

/// Relative slack for floating-point summation order (the simulator adds the same durations
/// in another order).
const TIME_SLACK: f64 = 1e-9;

/// The bounds of one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Lower bound of the iteration time, seconds.
    pub time_s: f64,
    /// Lower bound of the highest device peak, bytes.
    pub peak_bytes: u64,
}

fn work(b: &Block) -> f64 {
    b.forward_s + b.backward_b_s + b.backward_w_s
}

/// Bytes of one micro-batch that `strategy` never drops from a layer block.
fn min_kept(block: &Block, strategy: Strategy, attention: bool) -> u64 {
    match strategy {
        Strategy::None => block.all_units_bytes(),
        Strategy::Selective => block
            .units
            .iter()
            .filter(|u| !u.core_attention)
            .map(|u| u.size_bytes)
            .sum(),
        Strategy::Full
        | Strategy::Uniform
        | Strategy::Adaptive
        | Strategy::AdaPipe
        | Strategy::Lynx
        | Strategy::LynxHeuristic => {
            if attention {
                block.forced_bytes()
            } else {
                0
            }
        }
        // `named` keeps what the user does not name; its names are not known here, so 0.
        Strategy::Offload | Strategy::Compress | Strategy::Unified | Strategy::Named => 0,
    }
}

/// Recomputation per micro-batch of `block` that `strategy` always does, whatever the
/// budget: the whole forward of a layer block for `full`, core attention for `selective`
/// (Megatron's checkpoint: attention x V too; none when recomputation overlaps the wait for
/// the gradient, where it may hide).
fn fixed_recompute_s(block: &Block, strategy: Strategy, overlap_recompute: bool) -> f64 {
    let layer = block.kind.is_layer();
    if overlap_recompute || !layer {
        return 0.0;
    }
    match strategy {
        // The recomputed forward, less what it hides of the backward's ZeRO-3 collectives.
        Strategy::Full => {
            let (rerun, saved) = crate::plan::simcosts::whole_layer_rerun(block);
            rerun - saved
        }
        Strategy::Selective => block
            .units
            .iter()
            .filter(|u| u.core_attention || u.selective_rerun)
            .map(|u| u.forward_s)
            .sum(),
        _ => 0.0,
    }
}

/// The least, over every split of a chain of blocks into at most `p` contiguous stages, of
/// the largest stage cost, where a stage from block `s` to block `e` (exclusive) costs
/// `lead[0..s].sum() + load[s..e].sum()` (what must run before the stage can start, then the
/// stage's own work). Needs `load[i] >= lead[i] >= 0` for every block.
///
/// Returned as a value the true minimum is proven to exceed (or equal, for an empty chain):
/// the bisection keeps the largest cost found infeasible. Feasibility of a cost `T` is
/// decided greedily, each stage taking as many blocks as fit: since `load >= lead`, starting
/// a stage later never lets it reach less far, so after `k` stages the greedy has covered at
/// least as many blocks as any split within `T` has (induction on `k`), and it covers the
/// chain with `p` stages whenever some split does.
pub fn min_max(lead: &[f64], load: &[f64], p: u32) -> f64 {
    let n = lead.len().min(load.len());
    let mut lead_pre = Vec::with_capacity(n + 1);
    let mut load_pre = Vec::with_capacity(n + 1);
    let (mut a, mut b) = (0.0f64, 0.0f64);
    lead_pre.push(0.0);
    load_pre.push(0.0);
    for i in 0..n {
        a += lead[i];
        b += load[i];
        lead_pre.push(a);
        load_pre.push(b);
    }
    let feasible = |t: f64| -> bool {
        let mut at = 0;
        for _ in 0..p {
            if at == n {
                return true;
            }
            let start = at;
            while at < n && lead_pre[start] + (load_pre[at + 1] - load_pre[start]) <= t {
                at += 1;
            }
            if at == start {
                return false;
            }
        }
        at == n
    };
    let (mut lo, mut hi) = (0.0f64, a + b);
    if n == 0 || !hi.is_finite() || feasible(lo) {
        return 0.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if feasible(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

/// Whether every device of `kind` ends its pipeline work with a fused backward (BW) of some
/// micro-batch, on its only stage (the drain bound's premise; a test checks the orders).
pub fn ends_with_backward(kind: ScheduleKind) -> bool {
    matches!(kind, ScheduleKind::OneFOneB | ScheduleKind::Gpipe)
}

/// The time bound of `config` (module docs): the average, fill and drain bounds.
fn time_bound(config: &Config, anatomy: &Anatomy, scenario: &Scenario) -> f64 {
    let overlap_recompute = scenario.plan.overlap_recompute;
    let p = config.p.max(1);
    let m = f64::from(config.m);
    let beta = crate::solve::tail_s_per_param(scenario);
    let n = anatomy.num_blocks();
    let mut fwd = Vec::with_capacity(n);
    let mut bwd = Vec::with_capacity(n);
    let mut load = Vec::with_capacity(n);
    let mut work_only = Vec::with_capacity(n);
    // With the MoE all-to-all overlap, an overlapped pair may hide each half's all-to-alls
    // whole (never more): a block's work is at least its work without them.
    let a2a = |b: &Block| -> (f64, f64) {
        if scenario.plan.moe_a2a_overlap {
            (b.ep_comm.forward_added_s, b.ep_comm.backward_added_s)
        } else {
            (0.0, 0.0)
        }
    };
    for i in 0..n {
        let b = anatomy.block(i);
        let (a_f, a_b) = a2a(b);
        let own = work(b) - a_f - a_b;
        let w = m * (own + fixed_recompute_s(b, config.strategy, overlap_recompute));
        fwd.push(b.forward_s - a_f);
        bwd.push(own);
        work_only.push(w);
        load.push(w + beta * b.params as f64);
    }
    let total: f64 = load.iter().sum();
    // Chimera's two head replicas split the micro-batches: one of them runs at least half.
    let head_mbs = if config.schedule.placement() == Placement::Chimera {
        config.m.div_ceil(2)
    } else {
        config.m
    };
    let mut time = (total / f64::from(p)).max(f64::from(head_mbs) * work(&anatomy.head));
    if config.m >= 1 && config.schedule.placement() == Placement::Single {
        time = time.max(min_max(&fwd, &load, p));
        if ends_with_backward(config.schedule) {
            time = time.max(min_max(&bwd, &work_only, p));
        }
    }
    time
}

/// The bounds of `config` with `anatomy` (built for its t, p, d, b, sp and optimizer) and
/// `scenario` (the configuration's own, for its links, optimizer and overlap settings).
pub fn bounds(config: &Config, anatomy: &Anatomy, scenario: &Scenario) -> Bounds {
    let time = time_bound(config, anatomy, scenario);
    let p = u64::from(config.p.max(1));
    // Blocks of each kind in the chain (dense and MoE MLPs, attention and MTP blocks).
    let counts = BlockCounts::of_range(anatomy, 0, anatomy.num_blocks().saturating_sub(1));
    let per_kind = |f: &dyn Fn(&Block) -> u64| -> u64 {
        BlockKind::ALL
            .iter()
            .map(|&k| u64::from(counts.of(k)) * f(anatomy.block_of(k)))
            .sum()
    };
    let statics = per_kind(&|b| b.static_bytes);
    let kept = if config.schedule.offloads() {
        0
    } else {
        per_kind(&|b| {
            if b.kind.is_layer() {
                min_kept(b, config.strategy, b.kind.opens_layer())
            } else {
                0
            }
        })
    };
    // Every device also holds the anatomy's `device_bytes` (ZeRO-3's gathered layers).
    let average = (statics + kept).div_ceil(p) + anatomy.device_bytes;
    let head = anatomy.head.static_bytes + anatomy.logits_transient_bytes + anatomy.device_bytes;
    let largest = BlockKind::ALL
        .iter()
        .filter(|&&k| k != BlockKind::Head && counts.of(k) > 0)
        .map(|&k| anatomy.block_of(k).static_bytes)
        .max()
        .unwrap_or(0)
        + anatomy.device_bytes;
    Bounds {
        time_s: time * (1.0 - TIME_SLACK),
        peak_bytes: average.max(head).max(largest),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schedule::{self, OpKind, ScheduleInput};

    /// The smallest largest stage cost over every split into at most `p` stages, by trying
    /// them all.
    fn brute(lead: &[f64], load: &[f64], p: u32, from: usize) -> f64 {
        let n = lead.len();
        if from == n {
            return 0.0;
        }
        if p == 0 {
            return f64::INFINITY;
        }
        let before: f64 = lead[..from].iter().sum();
        (from + 1..=n)
            .map(|e| {
                let own = before + load[from..e].iter().sum::<f64>();
                own.max(brute(lead, load, p - 1, e))
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn min_max_is_the_least_largest_stage_over_every_split() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % 1000) as f64 / 100.0
        };
        for case in 0..300 {
            let n = 1 + case % 9;
            let lead: Vec<f64> = (0..n).map(|_| next()).collect();
            let load: Vec<f64> = lead.iter().map(|&l| l * (1.0 + next() / 3.0)).collect();
            for p in 1..=5 {
                let exact = brute(&lead, &load, p, 0);
                let got = min_max(&lead, &load, p);
                // Prefix sums and the brute force add in different orders (a few ulps).
                assert!(
                    got <= exact * (1.0 + 1e-12),
                    "{lead:?} {load:?} p {p}: {got} > {exact}"
                );
                assert!(
                    got >= exact * (1.0 - 1e-9),
                    "{lead:?} {load:?} p {p}: {got} < {exact}"
                );
            }
        }
        assert_eq!(min_max(&[], &[], 3), 0.0);
    }

    /// The drain bound's premise: with these kinds every device's last op is a fused
    /// backward.
    #[test]
    fn the_drain_kinds_end_every_device_with_a_fused_backward() {
        for kind in [ScheduleKind::OneFOneB, ScheduleKind::Gpipe] {
            assert!(ends_with_backward(kind));
            assert_eq!(kind.placement(), Placement::Single);
            for (p, m) in [(1, 1), (2, 1), (2, 5), (4, 3), (4, 8), (8, 8), (8, 20)] {
                let input = ScheduleInput::uniform(p, m, 1, 1.0, 2.0, 1.0, 0.1);
                let s = schedule::generate(kind, &input).unwrap();
                for ops in &s.devices {
                    let last = ops.last().unwrap();
                    assert_eq!(last.kind, OpKind::BW, "{kind} p {p} m {m}");
                    assert_eq!(last.chunk, 0);
                }
            }
        }
    }
}
