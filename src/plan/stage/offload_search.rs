//! Host offload for one stage: offloaded copies are assigned greedily in a few orders (and
//! shares of the host-link capacity), ranked with the plain keep/recompute knapsack, and the
//! winner refined by single-copy moves while the exact knapsack improves.

use crate::anatomy::Anatomy;
use crate::plan::knapsack;
use crate::plan::memo::KnapsackCache;
use crate::plan::offload::{OffloadOrder, assign_offload};

use super::choose::solve_with_offload;
use super::formulate::formulate;
use super::{BlockCounts, KindDecision, KnapsackMode, StageEnv};

/// Moves the offload local search takes at most: on GPT-3 175B at s 16384 eight reach
/// within 0.03% of letting it run to a local optimum, at a fraction of the solves.
const OFFLOAD_MOVES: usize = 8;

/// Local search from an offload assignment: while some single move (one more or one fewer
/// copy of one kind on the host, within the host-link capacity) lowers the exact knapsack's
/// added time, take the best such move, for at most [`OFFLOAD_MOVES`] moves (each round
/// solves up to two knapsacks per unit kind). Returns the value and assignment reached.
#[allow(clippy::too_many_arguments)]
pub(super) fn improve_offload(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    base: &[KindDecision],
    mut value: f64,
    mut off: Vec<u32>,
) -> (f64, Vec<u32>) {
    let size = |k: usize| {
        base[k]
            .block
            .map_or(0, |b| anatomy.block_of(b).units[base[k].unit].size_bytes)
    };
    let offloadable = |k: usize| {
        base[k]
            .block
            .is_some_and(|b| !anatomy.block_of(b).units[base[k].unit].forced)
            && size(k) > 0
    };
    for _ in 0..OFFLOAD_MOVES {
        let host: u64 = (0..base.len()).map(|k| u64::from(off[k]) * size(k)).sum();
        let mut step: Option<(f64, Vec<u32>)> = None;
        for k in (0..base.len()).filter(|&k| offloadable(k)) {
            for up in [true, false] {
                let mut next = off.clone();
                if up {
                    if off[k] >= base[k].count || host + size(k) > mode.offload_capacity_bytes {
                        continue;
                    }
                    next[k] += 1;
                } else {
                    if off[k] == 0 {
                        continue;
                    }
                    next[k] -= 1;
                }
                let bar = step.as_ref().map_or(value, |(v, _)| *v);
                if cannot_beat(offload_bound(anatomy, counts, env, mode, base, &next), bar) {
                    continue;
                }
                if let Some(p) =
                    solve_with_offload(cache, anatomy, counts, env, mode, base, &next, false)
                    && p.added_s < bar
                {
                    step = Some((p.added_s, next));
                }
            }
        }
        match step {
            Some((v, next)) => {
                value = v;
                off = next;
            }
            None => break,
        }
    }
    (value, off)
}

/// A lower bound of [`solve_with_offload`]'s added time (infinity when nothing fits).
pub(super) fn offload_bound(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    base: &[KindDecision],
    offload: &[u32],
) -> f64 {
    let (groups, _, capacity) = formulate(anatomy, counts, env, mode, base, offload);
    capacity.map_or(f64::INFINITY, |c| knapsack::lower_bound(&groups, c))
}

/// Whether a solve whose lower bound is `bound` can not beat `best` (strictly less is needed
/// to win; the margin covers rounding in the bound).
pub(super) fn cannot_beat(bound: f64, best: f64) -> bool {
    bound > best + 1e-9 * best.abs() + 1e-12
}

/// The best offload assignment found by the greedy orders (recompute time per byte, size,
/// and what the plain knapsack recomputes first), each at the full host-link capacity and at
/// 1/2 to 1/16 of it, ranked by the exact knapsack under `mode`: its added time and the
/// copies per kind it offloads. `None` when no assignment fits.
pub(super) fn rank_offload(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    base: &[KindDecision],
    recomputed: &[u32],
) -> Option<(f64, Vec<u32>)> {
    let mut ranked: Option<(f64, Vec<u32>)> = None;
    for order in [
        OffloadOrder::CostDensity,
        OffloadOrder::Size,
        OffloadOrder::Recomputed(recomputed),
    ] {
        // Offloading more than needed costs staging memory: try shrinking shares too.
        for halvings in 0..5u32 {
            let cap = mode.offload_capacity_bytes >> halvings;
            let off = assign_offload(anatomy, base, cap, order);
            if ranked.as_ref().is_some_and(|(b, _)| {
                cannot_beat(offload_bound(anatomy, counts, env, mode, base, &off), *b)
            }) {
                continue;
            }
            if let Some(p) =
                solve_with_offload(cache, anatomy, counts, env, mode, base, &off, false)
                && ranked.as_ref().is_none_or(|(b, _)| p.added_s < *b)
            {
                ranked = Some((p.added_s, off));
            }
        }
    }
    ranked
}
