//! The group knapsack by Pareto fronts pruned with the linear relaxation: exact, and fast
//! where the dense table would be huge (compressed sizes, whose greatest common divisor is
//! small, make it tens of thousands of cells wide).
//!
//! Groups are added one at a time to a front of partial selections `(bytes, cost)`, keeping
//! only those no other partial selection beats on both. A partial selection is also dropped
//! when its cost plus a lower bound of what the remaining groups must add (their linear
//! relaxation at the capacity it leaves) exceeds the cost of a selection known to fit (the
//! relaxation's rounding): it cannot be part of an optimum. Every optimal selection's prefix
//! survives both tests (or one that beats it does), so the answer is the optimum.

use super::bounds::hull_segments;
use super::{Group, Selection};

/// The linear relaxation of a suffix of the groups as a function of the capacity it gets.
struct Relaxation {
    /// Least bytes of the suffix (every group at its smallest choice).
    min_bytes: u64,
    /// Bytes with every group at its largest (cheapest) choice.
    base_bytes: u64,
    /// Cost with every group at its largest choice.
    base_cost: f64,
    /// Hull segments (cost per byte, bytes shed) in shedding order, with running totals of
    /// bytes shed and cost added after each.
    slope: Vec<f64>,
    shed_to: Vec<f64>,
    cost_to: Vec<f64>,
}

impl Relaxation {
    fn new(segs: &mut [(f64, f64)], min_bytes: u64, base_bytes: u64, base_cost: f64) -> Self {
        segs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut shed, mut cost) = (0.0, 0.0);
        let mut r = Relaxation {
            min_bytes,
            base_bytes,
            base_cost,
            slope: Vec::with_capacity(segs.len()),
            shed_to: Vec::with_capacity(segs.len()),
            cost_to: Vec::with_capacity(segs.len()),
        };
        for &(s, b) in segs.iter() {
            shed += b;
            cost += s * b;
            r.slope.push(s);
            r.shed_to.push(shed);
            r.cost_to.push(cost);
        }
        r
    }

    /// A lower bound of the suffix's least cost within `capacity` (infinity when even its
    /// smallest choices do not fit).
    fn at(&self, capacity: u64) -> f64 {
        if capacity < self.min_bytes {
            return f64::INFINITY;
        }
        if capacity >= self.base_bytes {
            return self.base_cost;
        }
        let need = (self.base_bytes - capacity) as f64;
        // The first segment whose running total reaches `need`.
        let i = self.shed_to.partition_point(|&s| s < need);
        let Some(&slope) = self.slope.get(i) else {
            return self.base_cost + self.cost_to.last().copied().unwrap_or(0.0);
        };
        let (shed_before, cost_before) = if i == 0 {
            (0.0, 0.0)
        } else {
            (self.shed_to[i - 1], self.cost_to[i - 1])
        };
        self.base_cost + cost_before + slope * (need - shed_before)
    }
}

/// One partial selection: bytes, cost, and the way back to its picks.
#[derive(Debug, Clone, Copy)]
struct Point {
    bytes: u64,
    cost: f64,
    parent: u32,
    pick: u32,
}

/// The fronts grew past the work allowed: the caller uses another method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TooMuchWork;

/// Solves the group knapsack exactly over each group's `fronts` (its Pareto choices in byte
/// order), given an `upper` bound of the optimum (the cost of some selection that fits).
/// `Ok(None)` when nothing fits; `Err` once more than `max_work` partial selections have been
/// formed (the fronts do not stay small on this instance).
pub(super) fn solve(
    groups: &[Group],
    fronts: &[Vec<usize>],
    capacity: u64,
    upper: f64,
    want_picks: bool,
    max_work: usize,
) -> Result<Option<Selection>, TooMuchWork> {
    let g = groups.len();
    let Some(suffix) = suffix_relaxations(groups, fronts) else {
        return Ok(None);
    };
    let bar = upper + 1e-9 * upper.abs() + 1e-12;

    let mut levels: Vec<Vec<Point>> = Vec::with_capacity(g + 1);
    levels.push(vec![Point {
        bytes: 0,
        cost: 0.0,
        parent: 0,
        pick: 0,
    }]);
    let mut cand: Vec<Point> = Vec::new();
    let mut work = 0usize;
    for j in 0..g {
        let rest = &suffix[j + 1];
        let prev = &levels[j];
        cand.clear();
        for (pi, p) in prev.iter().enumerate() {
            for &c in &fronts[j] {
                let ch = &groups[j].choices[c];
                let bytes = p.bytes + ch.bytes;
                if bytes > capacity || capacity - bytes < rest.min_bytes {
                    break; // the front is in byte order: later choices are larger
                }
                let cost = p.cost + ch.cost_s;
                if cost + rest.at(capacity - bytes) > bar {
                    continue;
                }
                cand.push(Point {
                    bytes,
                    cost,
                    parent: pi as u32,
                    pick: c as u32,
                });
            }
        }
        work += cand.len();
        if work > max_work {
            return Err(TooMuchWork);
        }
        let front = pareto_front(&mut cand);
        if front.is_empty() {
            return Ok(None);
        }
        levels.push(front);
    }
    let Some(last) = levels.last() else {
        return Ok(None);
    };
    // The least cost (the front's costs fall with bytes: its last point).
    let Some(best) = last.len().checked_sub(1) else {
        return Ok(None);
    };
    let cost_s = last[best].cost;
    if !want_picks {
        return Ok(Some(Selection {
            cost_s,
            bytes: last[best].bytes,
            picks: Vec::new(),
        }));
    }
    let mut picks = vec![0usize; g];
    let mut idx = best;
    for j in (0..g).rev() {
        let pt = levels[j + 1][idx];
        picks[j] = pt.pick as usize;
        idx = pt.parent as usize;
    }
    Ok(Some(Selection {
        cost_s,
        bytes: last[best].bytes,
        picks,
    }))
}

/// The linear relaxation of every suffix `j..g` of the groups (`[j]` for groups `j..g`, the
/// last one empty). `None` when some group has no choice.
fn suffix_relaxations(groups: &[Group], fronts: &[Vec<usize>]) -> Option<Vec<Relaxation>> {
    let g = groups.len();
    let mut suffix: Vec<Relaxation> = Vec::with_capacity(g + 1);
    let mut segs: Vec<(f64, f64)> = Vec::new();
    let (mut min_b, mut base_b, mut base_c) = (0u64, 0u64, 0.0f64);
    suffix.push(Relaxation::new(&mut [], 0, 0, 0.0));
    for j in (0..g).rev() {
        let (Some(&first), Some(&last)) = (fronts[j].first(), fronts[j].last()) else {
            return None;
        };
        let ch = &groups[j].choices;
        min_b += ch[first].bytes;
        base_b += ch[last].bytes;
        base_c += ch[last].cost_s;
        hull_segments(groups, j, &fronts[j], &mut segs);
        suffix.push(Relaxation::new(&mut segs.clone(), min_b, base_b, base_c));
    }
    suffix.reverse();
    Some(suffix)
}

/// The partial selections of `cand` that no other beats on both bytes and cost, in byte
/// order (ties broken by the way back, so the result does not depend on `cand`'s order).
fn pareto_front(cand: &mut [Point]) -> Vec<Point> {
    cand.sort_unstable_by(|a, b| {
        a.bytes
            .cmp(&b.bytes)
            .then(a.cost.total_cmp(&b.cost))
            .then(a.parent.cmp(&b.parent))
            .then(a.pick.cmp(&b.pick))
    });
    let mut front: Vec<Point> = Vec::with_capacity(cand.len());
    for &pt in cand.iter() {
        if front.last().is_none_or(|l| pt.cost < l.cost) {
            front.push(pt);
        }
    }
    front
}
