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

/// The `full` strategy's per-block decisions: the blocks that open a layer (attention, MTP)
/// keep only their input; MLP and MoE blocks recompute everything, their input included,
/// unless the block opens a chunk (its input then arrives from the previous stage and is
/// kept).
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
                    k if k.opens_layer() && u.forced => Decision::Keep,
                    BlockKind::Mlp | BlockKind::Moe if u.forced && i == a => Decision::Keep,
                    k if k.is_layer() => Decision::Recompute,
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

/// Every optional unit of the layer blocks recomputed and every complete layer recomputed
/// whole (its MLP or MoE input too): `full`'s activations.
pub fn with_whole_layers(anatomy: &Anatomy, plan: &DevicePlan) -> DevicePlan {
    let mut d = drop_all(anatomy, plan.counts);
    for k in d.iter_mut() {
        if k.block.is_some_and(|b| !b.is_layer()) {
            k.keep = k.count;
            k.recompute = 0;
        }
        let whole = match k.block {
            Some(BlockKind::Mlp) => plan.counts.mlp_layers,
            Some(BlockKind::Moe) => plan.counts.moe_layers,
            _ => 0,
        };
        let Some(kind) = k.block else { continue };
        if anatomy.block_of(kind).units[k.unit].forced && whole > 0 {
            k.keep = k.count - whole;
            k.recompute = whole;
        }
    }
    with_decisions(anatomy, plan, d)
}

/// `plan`'s device with per-kind decisions `d` (unit recomputation), its blocks and costs.
fn with_decisions(anatomy: &Anatomy, plan: &DevicePlan, d: Vec<KindDecision>) -> DevicePlan {
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
    with_decisions(anatomy, plan, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testkit;
    use proptest::prelude::{ProptestConfig, prop_assert, prop_assert_eq, proptest};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// AdaPipe's premise: the per-stage knapsack's space holds full recomputation, so on
        /// any block range, in-flight count and budget `adaptive` fits whenever `full` does,
        /// and then recomputes no longer; `uniform`'s space holds it too.
        #[test]
        fn adaptive_is_never_less_feasible_or_slower_than_full(
            layers in 1u32..6,
            ends in (0usize..64, 0usize..64),
            x in 1u64..40,
            st in 0u64..8,
            in_flight in 1u32..7,
            budget in 0u64..600,
        ) {
            let x = x << 10;
            let a = testkit::gpt_like(layers, x, st * x);
            let n = a.num_blocks();
            let (lo, hi) = (ends.0 % n, ends.1 % n);
            let range = [(lo.min(hi), lo.max(hi))];
            let env = StageEnv {
                in_flight,
                budget_bytes: budget * x,
                logits: range[0].1 == n - 1,
            };
            let cache = KnapsackCache::default();
            let plan = |s: super::Strategy| {
                decide_in(&cache, &a, 0, &range, env, s, KnapsackMode::default())
            };
            let full = plan(super::Strategy::Full);
            let adaptive = plan(super::Strategy::Adaptive);
            if full.fits {
                prop_assert!(adaptive.fits, "full {} adaptive {} budget {}",
                    full.costs.peak_bytes, adaptive.costs.peak_bytes, env.budget_bytes);
                prop_assert!(adaptive.costs.recompute_s <= full.costs.recompute_s + 1e-9,
                    "adaptive {} full {}", adaptive.costs.recompute_s, full.costs.recompute_s);
                let whole = with_whole_layers(&a, &plan(super::Strategy::Uniform));
                prop_assert!(whole.fits && whole.costs.peak_bytes <= full.costs.peak_bytes);
            }
            // The per-block decisions say what the per-kind counts say.
            let back = crate::plan::layout::count_blocks(&a, adaptive.counts, &adaptive.blocks);
            prop_assert_eq!(back, adaptive.decisions.clone());
            // A block that opens the range keeps the input it receives.
            prop_assert!(adaptive.blocks.first().is_none_or(|(_, _, d)| d[0] == Decision::Keep));
        }
    }
}
