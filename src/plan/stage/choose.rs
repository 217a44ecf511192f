//! A stage's least-added-time decisions: the exact knapsack on the stage's groups, answered
//! from the request's cache, with host offload tried where the mode allows it.

use crate::anatomy::Anatomy;
use crate::plan::knapsack;
use crate::plan::memo::KnapsackCache;

use super::formulate::{KeepBuffers, formulate_with, keep_bounds_in};
use super::full_layers::FullLayers;
use super::offload_search::{cannot_beat, improve_offload, offload_bound, rank_offload};
use super::{BlockCounts, KindDecision, StageEnv, keep_all};

/// What the knapsack may do with a stage's copies.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KnapsackMode {
    /// Allow keeping copies compressed.
    pub compress: bool,
    /// Host-link capacity per micro-batch for offloaded bytes (0: no offload).
    pub offload_capacity_bytes: u64,
}

/// The knapsack's answer for one stage.
#[derive(Debug, Clone, PartialEq)]
pub struct KnapsackPlan {
    /// Decisions per unit kind.
    pub decisions: Vec<KindDecision>,
    /// Added time per micro-batch (recomputation + codec).
    pub added_s: f64,
}

/// The least added time only (what the partition DP needs), answering repeated questions
/// from `cache`. The plain knapsack's decisions are built and stored all the same (they cost
/// little more than the value), so the plans built from the partitions the search keeps find
/// their stages' decisions in `cache`; offload assignments are ranked by value only.
pub fn knapsack_added_in(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
) -> Option<f64> {
    knapsack_impl(cache, anatomy, counts, env, mode, false).map(|k| k.added_s)
}

/// Least added time decisions for the stage under its budget, or `None` when even dropping
/// every optional unit does not fit (forced units are kept), answering repeated questions
/// from `cache`.
pub fn knapsack_in(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
) -> Option<KnapsackPlan> {
    knapsack_impl(cache, anatomy, counts, env, mode, true)
}

/// The knapsack, with offload where the mode allows it; without `want_decisions` the
/// returned plan may carry only `added_s` (no decisions are built where none are needed).
fn knapsack_impl(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    want_decisions: bool,
) -> Option<KnapsackPlan> {
    let base = keep_all(anatomy, counts);
    let offload = mode.offload_capacity_bytes > 0 && env.in_flight > 2;
    // The plain answer with its decisions: they seed one of the offload orders, and a plan
    // built later on the same stage reads them from the cache instead of solving again.
    let best = solve_with_offload(
        cache,
        anatomy,
        counts,
        env,
        mode,
        &base,
        &vec![0; base.len()],
        true,
    );
    if !offload {
        return best;
    }
    if best.as_ref().is_some_and(|b| b.added_s == 0.0) {
        return best;
    }
    // Offload (a second resource, host-link time): greedy pre-assignments, then the exact
    // knapsack on what is left; the best of the orders tried (documented gap: see tests).
    let recomputed: Vec<u32> = best.as_ref().map_or_else(
        || vec![0; base.len()],
        |b| b.decisions.iter().map(|d| d.recompute).collect(),
    );
    // The offload assignments are ranked with the fast keep/recompute knapsack; with
    // compression allowed, only the best assignment is then solved with compression too.
    let plain = KnapsackMode {
        compress: false,
        ..mode
    };
    let mut ranked = rank_offload(cache, anatomy, counts, env, plain, &base, &recomputed);
    // On the plans that are kept (not inside the partition search), refine the winning
    // assignment by single-copy moves.
    if want_decisions && let Some((value, off)) = ranked {
        ranked = Some(improve_offload(
            cache, anatomy, counts, env, plain, &base, value, off,
        ));
    }
    let mut best = best;
    if let Some((_, off)) = ranked
        && !best.as_ref().is_some_and(|b| {
            cannot_beat(
                offload_bound(anatomy, counts, env, mode, &base, &off),
                b.added_s,
            )
        })
        && let Some(p) = solve_with_offload(
            cache,
            anatomy,
            counts,
            env,
            mode,
            &base,
            &off,
            want_decisions,
        )
        && best.as_ref().is_none_or(|b| p.added_s < b.added_s)
    {
        best = Some(p);
    }
    best
}

/// The exact knapsack with `offload` copies per kind pre-assigned to the host, answered
/// from `cache` when the same question was asked before.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_with_offload(
    cache: &KnapsackCache,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    base: &[KindDecision],
    offload: &[u32],
    want_decisions: bool,
) -> Option<KnapsackPlan> {
    if let Some(v) = cache.get(counts, env, mode.compress, offload, want_decisions) {
        return v;
    }
    let v = solve_uncached(
        &mut cache.scratch(),
        anatomy,
        counts,
        env,
        mode,
        (base, offload),
        want_decisions,
    );
    cache.put(counts, env, mode.compress, offload, want_decisions, &v);
    v
}

/// The exact knapsack over every whole-layer choice: none first, then the counts of
/// complete layers recomputed whole that can still beat the best answer so far; the answer
/// is the least added time, among equal ones the first in [`FullLayers::options`]'s order
/// (none before all). With copies pre-assigned to the host (the offload heuristic's
/// candidates) no layer is recomputed whole: the plain answer, which the offload search
/// keeps when nothing beats it, already has them. The answer is that of
/// [`tests::solve_reference`], which formulates every count in order.
fn solve_uncached(
    scratch: &mut knapsack::Scratch,
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    mode: KnapsackMode,
    (base, offload): (&[KindDecision], &[u32]),
    want_decisions: bool,
) -> Option<KnapsackPlan> {
    let formulate =
        |full: FullLayers| formulate_with(anatomy, counts, env, mode, base, offload, full);
    let mut solve = |full: FullLayers, formulated| {
        solve_formulated(scratch, anatomy, formulated, base, want_decisions, full)
    };
    let none = solve(FullLayers::NONE, formulate(FullLayers::NONE));
    if offload.iter().any(|&o| o > 0) {
        return none;
    }
    let mut best = none;
    if mode.compress {
        // The bound needs the formulated groups: counts in order, each formulated once.
        for full in FullLayers::options(counts) {
            let floor = full.cost_s(anatomy);
            if best.as_ref().is_some_and(|b| b.added_s <= floor) {
                continue;
            }
            let formulated = formulate(full);
            let Some(c) = formulated.2 else { continue };
            if let Some(b) = &best
                && cannot_beat(floor + knapsack::lower_bound(&formulated.0, c), b.added_s)
            {
                continue;
            }
            if let Some(p) = solve(full, formulated)
                && best.as_ref().is_none_or(|b| p.added_s < b.added_s)
            {
                best = Some(p);
            }
        }
        return best;
    }
    // Without compression the bound needs no choice lists (`keep_bounds_in`: infinite exactly
    // when the count cannot fit). The counts that can fit are solved in the order of their
    // bounds, so the best answer comes early and the first count whose bound cannot beat it
    // ends the search; a tie goes to the count first in `options`' order (index), as in the
    // plain loop.
    // Counts whose own time cannot beat the best are left out (with none as the best, a tie
    // goes to none).
    let cutoff = best.as_ref().map_or(f64::INFINITY, |b| b.added_s);
    let mut buffers = KeepBuffers::default();
    let mut order: Vec<(f64, usize, FullLayers)> = FullLayers::options(counts)
        .enumerate()
        .filter_map(|(index, full)| {
            let floor = full.cost_s(anatomy);
            if floor >= cutoff {
                return None;
            }
            let lower_s = keep_bounds_in(&mut buffers, anatomy, counts, env, full).lower_s;
            lower_s
                .is_finite()
                .then_some((floor + lower_s, index, full))
        })
        .collect();
    order.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    // The best answer and its index (none: before every count).
    let mut best_index: Option<usize> = None;
    for (bound, index, full) in order {
        if best.as_ref().is_some_and(|b| cannot_beat(bound, b.added_s)) {
            break;
        }
        let Some(p) = solve(full, formulate(full)) else {
            continue;
        };
        let wins = best.as_ref().is_none_or(|b| {
            p.added_s < b.added_s
                || (p.added_s == b.added_s && best_index.is_some_and(|i| index < i))
        });
        if wins {
            best = Some(p);
            best_index = Some(index);
        }
    }
    best
}

/// The exact knapsack of a stage that [`formulate_with`] formulated for `full`: its groups,
/// the base decision each group belongs to, and the capacity left for them.
fn solve_formulated(
    scratch: &mut knapsack::Scratch,
    anatomy: &Anatomy,
    (groups, owners, capacity): (Vec<knapsack::Group>, Vec<usize>, Option<u64>),
    base: &[KindDecision],
    want_decisions: bool,
    full: FullLayers,
) -> Option<KnapsackPlan> {
    let capacity = capacity?;
    let layers_s = full.cost_s(anatomy);
    if !want_decisions {
        let added_s = knapsack::min_cost_in(scratch, &groups, capacity)? + layers_s;
        return Some(KnapsackPlan {
            decisions: Vec::new(),
            added_s,
        });
    }
    let sel = knapsack::solve_in(scratch, &groups, capacity)?;
    let mut decisions = base.to_vec();
    for d in decisions.iter_mut() {
        // Copies that no group decides (forced units: never offloaded) are kept, but the
        // MLP or MoE inputs of the layers recomputed whole.
        let whole = d.block.map_or(0, |kind| {
            let u = &anatomy.block_of(kind).units[d.unit];
            if u.forced { full.copies(kind, true) } else { 0 }
        });
        d.keep = d.count - whole;
        d.recompute = whole;
    }
    for (g, &k) in owners.iter().enumerate() {
        let [keep, comp, off, codec] = groups[g].choices[sel.picks[g]].tag;
        let d = &mut decisions[k];
        d.keep = keep;
        d.compress = comp;
        d.codec = if comp > 0 { codec } else { 0 };
        d.offload = off;
        d.recompute = d.count - keep - comp - off;
    }
    Some(KnapsackPlan {
        decisions,
        added_s: sel.cost_s + layers_s,
    })
}

#[cfg(test)]
#[path = "choose_tests.rs"]
mod tests;
