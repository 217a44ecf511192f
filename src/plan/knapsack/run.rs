//! The exact solve, phase by phase: settle the cases that need no table, split the groups
//! into regular (dense table) and odd (sparse front) ones, try the pruned fronts where the
//! table would be huge, build the odd groups' front, fill the dense table over the cells the
//! combine step can read, combine the two, and trace the picks back.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

use super::bounds::bounds_on;
use super::dense::{Table, fill_table};
use super::scratch::Scratch;
use super::{Group, Selection, front, fronts_of, gcd};

/// One point of the sparse front: bytes, cost and the way back to its picks.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    pub(super) bytes: u64,
    pub(super) cost: f64,
    pub(super) parent: usize,
    pub(super) pick: usize,
}

/// The dense table's scale: bytes per cell and the last cell.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scale {
    /// Bytes per cell: the greatest common divisor of the regular groups' sizes.
    pub(super) unit: u64,
    /// The last cell: the capacity (or all the regular groups can take) in units.
    pub(super) cap_units: usize,
}

impl Scale {
    /// The cell that a sparse point leaves for the regular groups.
    fn left_of(self, capacity: u64, pt: &Point) -> usize {
        ((capacity - pt.bytes) / self.unit).min(self.cap_units as u64) as usize
    }
}

/// [`super::solve`] with the table size above which the pruned fronts are tried first.
pub(super) fn run_with(
    groups: &[Group],
    capacity: u64,
    want_picks: bool,
    dense_cells_max: usize,
    scratch: &mut Scratch,
) -> Option<Selection> {
    let fronts = fronts_of(groups);
    if let Some(settled) = settle_without_table(groups, &fronts, capacity) {
        return settled;
    }
    let (regular, odd) = split_groups(groups, &fronts, capacity);
    let scale = scale_of(groups, &fronts, &regular, capacity);
    if regular.len().saturating_mul(scale.cap_units + 1) > dense_cells_max
        && let Some(v) = try_fronts(groups, &fronts, &regular, scale, capacity, want_picks)
    {
        return v;
    }
    // The odd groups but the last form a Pareto front; the last one's choices are paired
    // with that front's points in `combine`, which needs no front of its own.
    let (last_odd, front_odd) = match odd.split_last() {
        Some((&g, rest)) => (Some(g), rest),
        None => (None, &odd[..]),
    };
    let levels = odd_front(groups, &fronts, front_odd, capacity);
    let pairs = Pairs {
        prev: levels.last().map(Vec::as_slice).unwrap_or(&[]),
        group: last_odd.map(|g| (&groups[g], fronts[g].as_slice())),
        capacity,
    };
    let need_lo = pairs
        .cheapest()
        .map_or(scale.cap_units, |pt| scale.left_of(capacity, &pt));
    let table = fill_table(
        groups, &fronts, &regular, scale, need_lo, want_picks, scratch,
    );
    let found = pairs.combine(&table.values, scale, need_lo);
    let selection = found.map(|(cost_s, point, cap)| {
        if !want_picks {
            return Selection {
                cost_s,
                bytes: 0,
                picks: Vec::new(),
            };
        }
        let (bytes, picks) = trace_back(
            groups,
            (front_odd, last_odd, &levels, point),
            (&regular, &table),
            scale,
            cap,
        );
        Selection {
            cost_s,
            bytes,
            picks,
        }
    });
    table.recycle(scratch);
    selection
}

/// The answer when no table is needed: `Some(None)` when even the smallest choices overflow
/// (or a group has none), `Some(selection)` when the largest (cheapest) ones all fit.
fn settle_without_table(
    groups: &[Group],
    fronts: &[Vec<usize>],
    capacity: u64,
) -> Option<Option<Selection>> {
    if fronts.iter().any(|f| f.is_empty()) {
        return Some(None);
    }
    let min_bytes: u64 = groups
        .iter()
        .zip(fronts)
        .map(|(g, f)| g.choices[f[0]].bytes)
        .sum();
    if min_bytes > capacity {
        return Some(None);
    }
    // Everything at its largest (cheapest) choice fits: no table needed.
    let max_bytes: u64 = groups
        .iter()
        .zip(fronts)
        .map(|(g, f)| f.last().map_or(0, |&c| g.choices[c].bytes))
        .sum();
    if max_bytes > capacity {
        return None;
    }
    let picks: Vec<usize> = fronts
        .iter()
        .map(|f| f.last().copied().unwrap_or(0))
        .collect();
    let cost_s = picks
        .iter()
        .zip(groups)
        .map(|(&c, g)| g.choices[c].cost_s)
        .sum();
    Some(Some(Selection {
        cost_s,
        bytes: max_bytes,
        picks,
    }))
}

/// The dense table's scale for the regular groups.
fn scale_of(groups: &[Group], fronts: &[Vec<usize>], regular: &[usize], capacity: u64) -> Scale {
    let unit = regular
        .iter()
        .flat_map(|&g| fronts[g].iter().map(move |&c| groups[g].choices[c].bytes))
        .fold(0, gcd)
        .max(1);
    let max_regular: u64 = regular
        .iter()
        .map(|&g| groups[g].choices[*fronts[g].last().unwrap_or(&0)].bytes)
        .sum();
    Scale {
        unit,
        cap_units: (capacity.min(max_regular) / unit) as usize,
    }
}

/// The pruned Pareto fronts, given a work limit of a quarter of the dense table's cell
/// updates (each partial selection costs several: a push, a sort, a filter). `None` when
/// they gave up; the dense table answers then.
fn try_fronts(
    groups: &[Group],
    fronts: &[Vec<usize>],
    regular: &[usize],
    scale: Scale,
    capacity: u64,
    want_picks: bool,
) -> Option<Option<Selection>> {
    let dense_work: usize = regular
        .iter()
        .map(|&g| fronts[g].len().saturating_mul(scale.cap_units + 1))
        .fold(0, usize::saturating_add);
    let upper = bounds_on(groups, fronts, capacity).upper_s;
    front::solve(groups, fronts, capacity, upper, want_picks, dense_work / 4).ok()
}

/// The sparse Pareto front over the odd groups, one level per group (level 0: nothing
/// chosen), each point pointing back into the level before.
fn odd_front(
    groups: &[Group],
    fronts: &[Vec<usize>],
    odd: &[usize],
    capacity: u64,
) -> Vec<Vec<Point>> {
    let mut levels: Vec<Vec<Point>> = vec![vec![Point {
        bytes: 0,
        cost: 0.0,
        parent: 0,
        pick: 0,
    }]];
    for &g in odd {
        let prev = levels.last().map(Vec::as_slice).unwrap_or(&[]);
        let front = merge_level(prev, &groups[g], &fronts[g], capacity);
        levels.push(front);
    }
    levels
}

/// The next level of the odd front: every point of `prev` with every choice of the group's
/// `front` that fits, in (bytes, cost) order with ties in the order "point of `prev`, then
/// position in `front`", each kept only when it costs strictly less than every point kept
/// before it. `prev` rises strictly in bytes, so each choice's points come in byte order
/// and a k-way merge of them gives that order without sorting.
fn merge_level(prev: &[Point], group: &Group, front: &[usize], capacity: u64) -> Vec<Point> {
    // (bytes, cost in total order, point of prev, position in front), smallest first.
    type Head = Reverse<(u64, i64, usize, usize)>;
    let head = |pi: usize, j: usize| -> Option<Head> {
        let (p, ch) = (prev.get(pi)?, &group.choices[front[j]]);
        let bytes = p.bytes + ch.bytes;
        (bytes <= capacity).then(|| Reverse((bytes, total_key(p.cost + ch.cost_s), pi, j)))
    };
    let mut heap: BinaryHeap<Head> = (0..front.len()).filter_map(|j| head(0, j)).collect();
    let mut out: Vec<Point> = Vec::with_capacity(prev.len() + front.len());
    // The least head is replaced by its cursor's next point in place (one sift), or removed.
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((bytes, _, pi, j)) = *top;
        match head(pi + 1, j) {
            Some(h) => *top = h,
            None => {
                PeekMut::pop(top);
            }
        }
        let c = front[j];
        let cost = prev[pi].cost + group.choices[c].cost_s;
        if out.last().is_none_or(|l| cost < l.cost) {
            out.push(Point {
                bytes,
                cost,
                parent: pi,
                pick: c,
            });
        }
    }
    out
}

/// `x`'s bits as an integer whose order is [`f64::total_cmp`]'s.
fn total_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// The last odd group's choices paired with the front of the odd groups before it (or, with
/// no odd group, the empty selection alone), in the order of a merged front: bytes, then
/// point of `prev`, then position in the group's front.
struct Pairs<'a> {
    /// The front of the odd groups before the last (level 0 alone when there are none).
    prev: &'a [Point],
    /// The last odd group and its Pareto front, if any.
    group: Option<(&'a Group, &'a [usize])>,
    /// The knapsack's capacity: pairs above it do not fit.
    capacity: u64,
}

impl Pairs<'_> {
    /// Every pair that fits, as a point (its parent in `prev`, its pick in the group).
    fn each(&self, mut f: impl FnMut(Point)) {
        for (pi, p) in self.prev.iter().enumerate() {
            let Some((group, front)) = self.group else {
                f(*p);
                continue;
            };
            for &c in front {
                let ch = &group.choices[c];
                let bytes = p.bytes + ch.bytes;
                if bytes > self.capacity {
                    break;
                }
                f(Point {
                    bytes,
                    cost: p.cost + ch.cost_s,
                    parent: pi,
                    pick: c,
                });
            }
        }
    }

    /// The first pair (in merged order) of least cost: the last point a merged front would
    /// keep, and the one that leaves the regular groups the least room.
    fn cheapest(&self) -> Option<Point> {
        let mut best: Option<Point> = None;
        self.each(|pt| {
            if best.is_none_or(|b| pt.cost < b.cost || (pt.cost == b.cost && pt.bytes < b.bytes)) {
                best = Some(pt);
            }
        });
        best
    }

    /// Every pair with the best regular fill of what it leaves: the least total cost, the
    /// pair and the cell it reads; among equal totals the first in merged order. Pairs
    /// leaving less than `need_lo` cells are skipped: each costs no less than the cheapest
    /// pair, which leaves `need_lo` and comes before it, and the table below `need_lo` is
    /// not filled. (The pairs a merged front drops are never better either: each has a
    /// kept point before it with no more bytes and no more cost.) `None` when nothing fits.
    fn combine(&self, table: &[f64], scale: Scale, need_lo: usize) -> Option<(f64, Point, usize)> {
        let mut best: Option<(f64, Point, usize)> = None;
        self.each(|pt| {
            let left = scale.left_of(self.capacity, &pt);
            if left < need_lo {
                return;
            }
            let v = pt.cost + table[left];
            let better = best.is_none_or(|(b, q, _)| {
                v < b || (v == b && (pt.bytes, pt.parent, pt.pick) < (q.bytes, q.parent, q.pick))
            });
            if v.is_finite() && better {
                best = Some((v, pt, left));
            }
        });
        best
    }
}

/// The picks of the optimum (index per group) and their bytes: the odd groups from the
/// front's parent links, the regular ones from the table's picks, last group first.
fn trace_back(
    groups: &[Group],
    (odd, last_odd, levels, point): (&[usize], Option<usize>, &[Vec<Point>], Point),
    (regular, table): (&[usize], &Table),
    scale: Scale,
    mut cap: usize,
) -> (u64, Vec<usize>) {
    let mut out = vec![0usize; groups.len()];
    let mut bytes = 0u64;
    let mut idx = point.parent;
    if let Some(g) = last_odd {
        out[g] = point.pick;
        bytes += groups[g].choices[point.pick].bytes;
    }
    for (lvl, &g) in odd.iter().enumerate().rev() {
        let pt = levels[lvl + 1][idx];
        out[g] = pt.pick;
        bytes += groups[g].choices[pt.pick].bytes;
        idx = pt.parent;
    }
    for (k, &g) in regular.iter().enumerate().rev() {
        let c = table.pick(k, &groups[g], scale.unit, cap).unwrap_or(0);
        out[g] = c;
        let ch = &groups[g].choices[c];
        bytes += ch.bytes;
        cap -= (ch.bytes / scale.unit) as usize;
    }
    (bytes, out)
}

/// their common gcd) and the rest (sparse); the split with the least estimated work wins:
/// dense groups x table size + the product of the sparse groups' choice counts.
fn split_groups(
    groups: &[Group],
    fronts: &[Vec<usize>],
    capacity: u64,
) -> (Vec<usize>, Vec<usize>) {
    let group_gcd: Vec<u64> = fronts
        .iter()
        .zip(groups)
        .map(|(f, g)| f.iter().map(|&c| g.choices[c].bytes).fold(0, gcd))
        .collect();
    let group_max: Vec<u64> = fronts
        .iter()
        .zip(groups)
        .map(|(f, g)| f.last().map_or(0, |&c| g.choices[c].bytes))
        .collect();
    let all = group_gcd.iter().copied().fold(0, gcd);
    let mut distinct: Vec<u64> = group_gcd.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let mut candidates: Vec<u64> = distinct.clone();
    for (i, &a) in distinct.iter().enumerate() {
        for &b in &distinct[i + 1..] {
            candidates.push(gcd(a, b));
        }
    }
    candidates.push(all);
    candidates.sort_unstable();
    candidates.dedup();
    let dense_of = |g: usize, u: u64| u == 0 || group_gcd[g].is_multiple_of(u);
    let mut best: Option<(f64, u64)> = None;
    for &u in &candidates {
        let (mut unit, mut span, mut count, mut sparse, mut any_odd) =
            (0u64, 0u64, 0usize, 1.0f64, false);
        for g in 0..groups.len() {
            if dense_of(g, u) {
                unit = gcd(unit, group_gcd[g]);
                span += group_max[g];
                count += 1;
            } else {
                sparse *= fronts[g].len() as f64;
                any_odd = true;
            }
        }
        let table = (capacity.min(span) / unit.max(1)) as f64 + 1.0;
        let work = count as f64 * table + if any_odd { sparse } else { 0.0 };
        if best.is_none_or(|(w, _)| work < w) {
            best = Some((work, u));
        }
    }
    let u = best.map_or(0, |(_, u)| u);
    (0..groups.len()).partition(|&g| dense_of(g, u))
}
