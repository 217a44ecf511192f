//! The fixed-rule strategies (`none`, `full`, `selective`, `uniform`) and the knapsack ones
//! for one device with a fixed set of blocks.

use crate::anatomy::{Anatomy, BlockKind};

use super::layout::{assign_blocks, count_blocks};
use super::memo::KnapsackCache;
use super::stage::{
    self, BlockCounts, KindDecision, KnapsackMode, RecomputeRule, StageCosts, StageEnv, Windows,
};
use super::{Decision, Strategy};

/// Per-block decisions of a device: `(block index, kind, one decision per unit)`.
pub type BlockPlan = Vec<(usize, BlockKind, Vec<Decision>)>;

/// One device's decisions and what they cost.
#[derive(Debug, Clone, PartialEq)]
pub struct DevicePlan {
    /// Device index.
    pub device: usize,
    /// `(first, last)` block of each of its chunks, in local chunk order.
    pub ranges: Vec<(usize, usize)>,
    /// Blocks held, all chunks together.
    pub counts: BlockCounts,
    /// In-flight count, budget and logits flag used.
    pub env: StageEnv,
    /// Per unit kind counts.
    pub decisions: Vec<KindDecision>,
    /// Per block decisions.
    pub blocks: BlockPlan,
    /// How its recomputation time is counted (`full`: the forward of every layer block;
    /// `selective`: Megatron's core-attention checkpoint).
    pub rule: RecomputeRule,
    /// Memory and time per micro-batch (all chunks together).
    pub costs: StageCosts,
    /// Whether the planner's memory model fits the budget.
    pub fits: bool,
}

/// The `full` strategy's per-block decisions: attention blocks keep only their input; MLP
/// blocks recompute everything, their input included, unless the block opens a chunk (its
/// input then arrives from the previous stage and is kept).
fn full_blocks(anatomy: &Anatomy, ranges: &[(usize, usize)]) -> BlockPlan {
    let mut out = Vec::new();
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    for &(a, e) in &sorted {
        for i in a..=e {
            let kind = anatomy.kind_of(i);
            let units = &anatomy.block_of(kind).units;
            let decs = units
                .iter()
                .map(|u| match kind {
                    BlockKind::Attention if u.forced => Decision::Keep,
                    BlockKind::Mlp if u.forced && i == a => Decision::Keep,
                    BlockKind::Attention | BlockKind::Mlp => Decision::Recompute,
                    _ => Decision::Keep,
                })
                .collect();
            out.push((i, kind, decs));
        }
    }
    out
}

/// Decisions of one device under a fixed-rule or knapsack strategy (`uniform` is decided
/// across devices in `planner`; here it means "keep all"). A knapsack that finds nothing
/// falls back to recomputing every optional unit and reports `fits = false`. Repeated
/// knapsack questions are answered from `cache`.
pub fn decide_in(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    device: usize,
    ranges: &[(usize, usize)],
    env: StageEnv,
    strategy: Strategy,
    mode: KnapsackMode,
) -> DevicePlan {
    let counts = ranges.iter().fold(BlockCounts::default(), |c, &(a, e)| {
        c.plus(BlockCounts::of_range(anatomy, a, e))
    });
    let mut rule = RecomputeRule::Units;
    let (decisions, blocks) = match strategy {
        Strategy::Full => {
            rule = RecomputeRule::WholeLayer;
            let blocks = full_blocks(anatomy, ranges);
            (count_blocks(anatomy, counts, &blocks), blocks)
        }
        Strategy::None | Strategy::Uniform => {
            let d = stage::keep_all(anatomy, counts);
            let b = assign_blocks(anatomy, ranges, &d);
            (d, b)
        }
        Strategy::Selective => {
            rule = RecomputeRule::CoreAttention;
            let mut d = stage::keep_all(anatomy, counts);
            for k in d.iter_mut() {
                let Some(kind) = k.block else { continue };
                let u = &anatomy.block_of(kind).units[k.unit];
                if u.core_attention {
                    k.keep = 0;
                    k.recompute = k.count;
                }
            }
            let b = assign_blocks(anatomy, ranges, &d);
            (d, b)
        }
        Strategy::Named => {
            let mut d = stage::keep_all(anatomy, counts);
            for k in d.iter_mut() {
                let Some(kind) = k.block else { continue };
                let u = &anatomy.block_of(kind).units[k.unit];
                if u.named && !u.forced {
                    k.keep = 0;
                    k.recompute = k.count;
                }
            }
            let b = assign_blocks(anatomy, ranges, &d);
            (d, b)
        }
        _ => {
            let d = match stage::knapsack_in(cache, anatomy, counts, &env, mode) {
                Some(k) => k.decisions,
                None => drop_all(anatomy, counts),
            };
            let b = assign_blocks(anatomy, ranges, &d);
            (d, b)
        }
    };
    let costs = stage::costs(anatomy, counts, &env, &decisions, rule);
    let fits = costs.peak_bytes <= env.budget_bytes;
    DevicePlan {
        device,
        ranges: ranges.to_vec(),
        counts,
        env,
        decisions,
        blocks,
        rule,
        costs,
        fits,
    }
}

/// Lynx's decisions for one device: `policy` when given (the heuristic's shared policy),
/// else the device's own optimal one ([`stage::lynx_knapsack`]); costed with the device's
/// own `windows` (the part of the recomputation they hide is `costs.hidden_s`). A policy
/// that finds nothing falls back to recomputing every optional unit on demand.
pub fn decide_lynx(
    anatomy: &Anatomy,
    device: usize,
    ranges: &[(usize, usize)],
    env: StageEnv,
    windows: &Windows,
    policy: Option<&[KindDecision]>,
) -> DevicePlan {
    let counts = ranges.iter().fold(BlockCounts::default(), |c, &(a, e)| {
        c.plus(BlockCounts::of_range(anatomy, a, e))
    });
    let decisions = match policy {
        Some(p) => p.to_vec(),
        None => stage::lynx_knapsack(anatomy, counts, &env, windows)
            .map_or_else(|| drop_all(anatomy, counts), |k| k.decisions),
    };
    let blocks = assign_blocks(anatomy, ranges, &decisions);
    let mut costs = stage::costs(anatomy, counts, &env, &decisions, RecomputeRule::Units);
    costs.hidden_s = (costs.recompute_s - stage::exposed_s(anatomy, &decisions, windows)).max(0.0);
    DevicePlan {
        device,
        ranges: ranges.to_vec(),
        counts,
        env,
        fits: costs.peak_bytes <= env.budget_bytes,
        decisions,
        blocks,
        rule: RecomputeRule::Units,
        costs,
    }
}

/// Every optional unit recomputed: the least memory without compression or offload.
pub fn drop_all(anatomy: &Anatomy, counts: BlockCounts) -> Vec<KindDecision> {
    let mut d = stage::keep_all(anatomy, counts);
    for k in d.iter_mut() {
        let Some(kind) = k.block else { continue };
        if !anatomy.block_of(kind).units[k.unit].forced {
            k.keep = 0;
            k.recompute = k.count;
        }
    }
    d
}

/// Applies a uniform keep set (bit `i` set: optional unit kind `i` of `optional` is kept) to a
/// device.
pub fn with_keep_set(
    anatomy: &Anatomy,
    plan: &DevicePlan,
    optional: &[(BlockKind, usize)],
    keep_mask: u64,
) -> DevicePlan {
    let mut d = stage::keep_all(anatomy, plan.counts);
    for k in d.iter_mut() {
        let Some(kind) = k.block else { continue };
        if let Some(bit) = optional.iter().position(|&o| o == (kind, k.unit))
            && keep_mask & (1 << bit) == 0
        {
            k.keep = 0;
            k.recompute = k.count;
        }
    }
    let blocks = assign_blocks(anatomy, &plan.ranges, &d);
    let costs = stage::costs(anatomy, plan.counts, &plan.env, &d, RecomputeRule::Units);
    DevicePlan {
        fits: costs.peak_bytes <= plan.env.budget_bytes,
        decisions: d,
        blocks,
        costs,
        rule: RecomputeRule::Units,
        ..plan.clone()
    }
}
