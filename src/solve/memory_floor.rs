//! A proven lower bound of the highest device peak of every plan a knapsack strategy
//! (`uniform`, `adaptive`, `adapipe`) can make on a schedule, known before the partition
//! search runs: what lets a sweep drop a configuration that cannot fit, or whose memory
//! keeps it off the front, without paying for the search.
//!
//! The simulator walks a device's ops in order: a forward adds its chunk's kept bytes, a
//! backward frees them (a split backward's B frees all but the weight gradient's inputs, its W
//! the rest), and the device's peak is its static memory + the walk's highest level + its
//! transient bytes. A knapsack strategy never drops a layer's input (the attention block's
//! forced units: only a layer's other units, and the MLP's input by recomputing the whole
//! layer, can go), so at any moment the walk holds at least, for every micro-batch whose
//! forward has run and whose backward (B or fused BW) has not, the forced bytes of the
//! chunk's layers. Counting those micro-batches along the op order (the order is fixed before
//! the search for the kinds answered here: their generators read no durations, or the
//! regeneration is not tried) gives, for each device, vectors `held[c]` (per chunk, after
//! each forward) that any plan's walk passes through.
//!
//! * *One chunk per device* (1F1B, ZB-H1, GPipe). Device `d` holds chain stage `d` and, at
//!   its busiest moment, `n_d` micro-batches: its peak is at least the static bytes of its
//!   blocks plus `n_d` times their forced bytes. The partition is unknown, so the bound is the
//!   least, over every split of the block chain into `p` contiguous stages (empty ones
//!   allowed), of the largest device cost ([`least_largest_stage`]).
//! * *Several chunks* (`adapipe` on interleaved, V-Half, ...; the conditions of
//!   [`super::adapipe_floor`]): every device holds whole layers, `x_d >= v` of them (no chunk
//!   is left without one), split over its chunks as evenly as whole layers allow (each chunk
//!   at least `floor(x_d / v)`), the embedding with the chain's first stage and the head with
//!   its last. At its busiest moment a device holds `H_d` micro-batches over its chunks, so
//!   its peak is at least `x_d s + floor(x_d / v) H_d f`, `s` and `f` a layer's static and
//!   forced bytes, plus (where every chunk holds one at such a moment) a layer's other units
//!   once: each kind is kept in every copy (held then) or recomputed in some (its buffer is
//!   then transient); and for any shares `lambda_c` of its layers over the chunks, at the moment
//!   of `held` that is highest for them, at least `x_d (s + f g_d)`, `g_d` the least over
//!   every share vector of the largest `held . lambda` ([`least_weighted_peak`]). The bound
//!   is the least over every split of the `L` layers into such `x_d` of the largest cost
//!   ([`least_largest_share`]).
//!
//! Every device also holds the anatomy's `device_bytes`. The transient bytes and the offload
//! copies only add.

use crate::anatomy::Anatomy;
use crate::plan::Strategy;
use crate::plan::planner::PlanRequest;
use crate::schedule::{Placement, Schedule, ScheduleKind};

/// The most share vectors per device the exact least weighted peak looks at; beyond it the
/// bound takes the largest of the per-moment minima (never more than the exact value).
const MAX_EXACT: usize = 48;

/// Whether `kind`'s op order is known before the search and is the one simulated: its
/// generator reads no durations (or ignores them), and its peaks follow the order alone.
pub(crate) fn order_fixed_before_search(kind: ScheduleKind) -> bool {
    matches!(
        kind,
        ScheduleKind::Gpipe
            | ScheduleKind::OneFOneB
            | ScheduleKind::Interleaved
            | ScheduleKind::ZbH1
            | ScheduleKind::VHalf
            | ScheduleKind::VMin
    )
}

/// Per device, the micro-batches of each chunk held from their forward to their backward (B
/// or BW) right after each forward, keeping only the vectors no other one covers
/// ([`Schedule::held_vectors`], kept with the schedule once worked out).
pub(crate) fn held_vectors(sched: &Schedule) -> Vec<Vec<Vec<u32>>> {
    sched.held_vectors_kept().to_vec()
}

/// The least, over every share vector `lambda` (non-negative, adding up to 1), of the largest
/// `held . lambda` over `vectors`: exact for up to two chunks (the minimum of a convex
/// piecewise-linear function lies at an end or where two of its pieces cross), otherwise the
/// largest per-vector minimum (a lower bound of it).
pub(crate) fn least_weighted_peak(vectors: &[Vec<u32>]) -> f64 {
    let floor = vectors
        .iter()
        .map(|h| h.iter().copied().min().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let two = vectors.iter().all(|h| h.len() == 2);
    if !two || vectors.len() > MAX_EXACT {
        return f64::from(floor);
    }
    // f(l) = max over vectors of (1 - l) h[0] + l h[1], for l in [0, 1].
    let at = |l: f64| {
        vectors
            .iter()
            .map(|h| (1.0 - l) * f64::from(h[0]) + l * f64::from(h[1]))
            .fold(0.0f64, f64::max)
    };
    let mut best = at(0.0).min(at(1.0));
    for (i, a) in vectors.iter().enumerate() {
        for b in &vectors[i + 1..] {
            // (1 - l) a0 + l a1 = (1 - l) b0 + l b1  <=>  l (da1 - da0) = -da0.
            let (d0, d1) = (
                f64::from(a[0]) - f64::from(b[0]),
                f64::from(a[1]) - f64::from(b[1]),
            );
            let slope = d1 - d0;
            if slope != 0.0 {
                let l = -d0 / slope;
                if (0.0..=1.0).contains(&l) {
                    best = best.min(at(l));
                }
            }
        }
    }
    // Never below the per-vector minima (rounding); their largest is a proven bound too.
    best.max(f64::from(floor))
}

/// The least, over every split of the chain of blocks into `p` contiguous stages (stage `d`
/// on device `d`, empty stages allowed), of the largest stage cost, where block `i` costs
/// `cost(i, d)` on device `d` (non-negative). Greedy: for a largest cost `t`, each stage takes
/// as many blocks as fit; after `k` stages it has covered at least as many blocks as any split
/// within `t` (a stage starting no later reaches no less far, costs being additive), so `t` is
/// achievable exactly when the greedy covers the chain. Bisection on `t`.
pub(crate) fn least_largest_stage(n: usize, p: usize, cost: impl Fn(usize, usize) -> u64) -> u64 {
    let covers = |t: u64| {
        let mut at = 0;
        for d in 0..p {
            let mut acc = 0u64;
            while at < n {
                let next = acc.saturating_add(cost(at, d));
                if next > t {
                    break;
                }
                acc = next;
                at += 1;
            }
        }
        at == n
    };
    let mut hi = (0..n)
        .map(|i| (0..p).map(|d| cost(i, d)).max().unwrap_or(0))
        .fold(0u64, u64::saturating_add);
    if n == 0 || p == 0 || covers(0) {
        return 0;
    }
    if !covers(hi) {
        return hi;
    }
    let mut lo = 0u64; // not covered
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if covers(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The least, over every split of `layers` whole layers into counts `x_d >= least` (one per
/// device of `devices`), of the largest `cost(d, x_d)`, each `cost(d, .)` non-decreasing;
/// `u64::MAX` where no such split exists. A largest cost `t` is reached exactly when every
/// device fits `least` layers within it and the most each fits add up to `layers` (fewer
/// layers on a device never cost more). Bisection on `t`, and on `x` for each device.
pub(crate) fn least_largest_share(
    layers: u64,
    devices: usize,
    least: u64,
    cost: impl Fn(usize, u64) -> u64,
) -> u64 {
    if least.saturating_mul(devices as u64) > layers || devices == 0 {
        return u64::MAX;
    }
    let most = |d: usize, t: u64| -> Option<u64> {
        if cost(d, least) > t {
            return None;
        }
        let (mut ok, mut bad) = (least, layers + 1);
        while bad - ok > 1 {
            let mid = ok + (bad - ok) / 2;
            if cost(d, mid) <= t {
                ok = mid;
            } else {
                bad = mid;
            }
        }
        Some(ok)
    };
    let holds = |t: u64| {
        let mut sum = 0u64;
        for d in 0..devices {
            match most(d, t) {
                Some(x) => sum = sum.saturating_add(x),
                None => return false,
            }
        }
        sum >= layers
    };
    let mut hi = (0..devices).map(|d| cost(d, layers)).max().unwrap_or(0);
    if holds(0) {
        return 0;
    }
    let mut lo = 0u64;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Bytes of one micro-batch a knapsack strategy can never drop from `i`'s block: the forced
/// units of a block that opens a layer.
fn never_dropped(anatomy: &Anatomy, i: usize) -> u64 {
    let b = anatomy.block(i);
    if b.kind.opens_layer() {
        b.forced_bytes()
    } else {
        0
    }
}

/// The lower bound of the module docs for `req` (its strategy, stage map and anatomy) on the
/// first schedule `sched`, or `None` where it does not apply (another strategy, a kind whose
/// order the search may change, copies to the host, two-copy placements, the all-to-all
/// overlap's pairs, or on several chunks the cases [`super::adapipe_floor`] leaves out).
pub(crate) fn memory_floor_bytes(
    req: &PlanRequest,
    sched: &Schedule,
    a2a_overlap: bool,
) -> Option<u64> {
    let knapsack = matches!(
        req.strategy,
        Strategy::Uniform | Strategy::Adaptive | Strategy::AdaPipe
    );
    if !knapsack
        || a2a_overlap
        || !order_fixed_before_search(sched.kind)
        || sched.placement == Placement::Chimera
        || sched.offloaded.iter().flatten().any(|&o| o)
    {
        return None;
    }
    let anatomy = req.anatomy;
    let p = sched.devices.len();
    let held = held_vectors(sched);
    if sched.v == 1 {
        if sched.placement != Placement::Single
            || req.stage_of.len() != p
            || req.stage_of.iter().enumerate().any(|(d, s)| s != &[d])
        {
            return None;
        }
        let n_held: Vec<u64> = held
            .iter()
            .map(|h| {
                h.iter()
                    .filter_map(|x| x.first())
                    .copied()
                    .max()
                    .unwrap_or(0)
            })
            .map(u64::from)
            .collect();
        let blocks = anatomy.num_blocks();
        let cost = |i: usize, d: usize| {
            anatomy.block(i).static_bytes.saturating_add(
                n_held
                    .get(d)
                    .copied()
                    .unwrap_or(0)
                    .saturating_mul(never_dropped(anatomy, i)),
            )
        };
        let stages = least_largest_stage(blocks, p, cost);
        return Some(stages.saturating_add(anatomy.device_bytes));
    }
    // Several chunks: whole layers per device, as `adapipe`'s search and its even partition
    // give them.
    let layer = super::adapipe_floor::whole_layer_kinds(req, sched)?;
    let (stat, forced) = layer.iter().fold((0u64, 0u64), |(s, f), &k| {
        let b = anatomy.block_of(k);
        let f_k = if k.opens_layer() { b.forced_bytes() } else { 0 };
        (s + b.static_bytes, f + f_k)
    });
    let v = u64::from(sched.v);
    let last = req.stages.saturating_sub(1);
    // A layer's units a plan may drop (all but the layer input): each kind is kept in every
    // copy, or recomputed in some (then its buffer is transient).
    let optional: u64 = layer
        .iter()
        .map(|&k| {
            let b = anatomy.block_of(k);
            let dropped = if k.opens_layer() { b.forced_bytes() } else { 0 };
            b.all_units_bytes().saturating_sub(dropped)
        })
        .sum();
    let per_device: Vec<(u64, f64, u64, bool)> = held
        .iter()
        .enumerate()
        .map(|(d, h)| {
            let chunks = req.stage_of.get(d).map_or(&[][..], Vec::as_slice);
            let ends = u64::from(chunks.contains(&0)) * anatomy.embedding.static_bytes
                + u64::from(chunks.contains(&last)) * anatomy.head.static_bytes;
            let sum = |x: &Vec<u32>| x.iter().map(|&c| u64::from(c)).sum::<u64>();
            let most = h.iter().map(sum).max().unwrap_or(0);
            // At a busiest moment every chunk holds a micro-batch: the kept copies count.
            let all = h
                .iter()
                .any(|x| sum(x) == most && x.iter().all(|&c| c >= 1));
            (ends, least_weighted_peak(h), most, all)
        })
        .collect();
    let cost = |d: usize, x: u64| {
        let (ends, g, most, all) = per_device[d];
        // Rounded down: never above the exact product.
        let shares = (forced as f64 * x as f64 * g * (1.0 - 1e-12)).floor();
        let shares = if shares > 0.0 { shares as u64 } else { 0 };
        let kept_or_transient = if all && x >= 1 { optional } else { 0 };
        let even = (x / v)
            .saturating_mul(most)
            .saturating_mul(forced)
            .saturating_add(kept_or_transient);
        x.saturating_mul(stat)
            .saturating_add(shares.max(even))
            .saturating_add(ends)
    };
    let shares = least_largest_share(u64::from(anatomy.layers), p, v, cost);
    (shares < u64::MAX).then(|| shares.saturating_add(anatomy.device_bytes))
}

#[cfg(test)]
#[path = "memory_floor_tests.rs"]
mod tests;
