//! The exact per-stage knapsack: a multiple-choice ("group") knapsack where every group is one
//! unit kind of a stage and every option one way of splitting its copies between keep,
//! recompute, compress and offload, with the memory it costs and the time it adds.
//!
//! How the recomputation transient is handled exactly: the memory model charges, on top of the
//! kept copies times the in-flight count, one block's worth of every unit kind that the stage
//! drops at least one copy of. That charge depends only on the kind's own choice, so it is
//! folded into each option's memory (`in_flight x kept bytes + [some copy dropped] x size`):
//! the constraint becomes separable and a group knapsack solves it exactly, with no
//! enumeration of dropped-kind sets.
//!
//! Method: every option's bytes are divided by the greatest common divisor of the groups that
//! share a large one ("regular" groups), which makes the capacity a few hundred units, and a
//! dense table over that capacity is filled group by group. Groups whose sizes would shrink
//! the divisor too far (the fp32 log-sum-exp of `core_attn`, compressed sizes) are "odd":
//! their options are combined exactly as a sparse Pareto front of (bytes, time) pairs and each
//! front point looks up the dense table at the capacity it leaves. Nothing is rounded: the
//! dense table is indexed by `floor(remaining / gcd)`, which is exact because every regular
//! combination is a multiple of the gcd. When every dense group is a plain list of choices,
//! only the cells that can be read are filled (see `run`), with the same values. Where the
//! table would still be huge (compressed sizes carry per-block scales, which shrink the
//! divisor), every group is combined sparsely instead, as Pareto fronts pruned with the linear
//! relaxation (module `front`); also exact.
//!
//! [`bounds`] (the linear relaxation, and a rounding of it that fits) lets callers skip a
//! solve that cannot beat an answer they already hold, or settle "is the least cost below
//! this?" without one; it never changes an answer.

/// One way to treat all copies of one unit kind in a stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// Bytes this choice costs at the stage's peak (kept copies x in-flight + transient).
    pub bytes: u64,
    /// Time it adds per micro-batch (recomputation and codec time).
    pub cost_s: f64,
    /// Caller's tag (e.g. counts kept / compressed / offloaded), returned with the solution.
    pub tag: [u32; 3],
}

/// The options of one group; exactly one is chosen.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    /// Candidate choices (any order; dominated ones are pruned by the solver).
    pub choices: Vec<Choice>,
    /// Set when `choices[k]` (k in `0..=n`) is "keep k of n copies": bytes
    /// `k step + [k < n] charge`, cost `(n - k) unit_cost`; the dense table then fills the
    /// group in time linear in its capacity (a sliding-window minimum) instead of `n` passes.
    pub arith: Option<Arith>,
}

/// The keep-k-of-n structure of a recompute-only group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arith {
    /// Copies.
    pub n: u32,
    /// Bytes per kept copy (in-flight x size).
    pub step: u64,
    /// Bytes charged when at least one copy is dropped (the recomputation transient).
    pub charge: u64,
    /// Time added per dropped copy.
    pub unit_cost: f64,
}

impl Group {
    /// The keep-k-of-n group (`choices[k]` keeps k copies), with its fast path.
    pub fn keep_of(a: Arith, tag: impl Fn(u32) -> [u32; 3]) -> Self {
        let choices = (0..=a.n)
            .map(|k| Choice {
                bytes: u64::from(k) * a.step + if k < a.n { a.charge } else { 0 },
                cost_s: f64::from(a.n - k) * a.unit_cost,
                tag: tag(k),
            })
            .collect();
        Group {
            choices,
            arith: Some(a),
        }
    }
}

/// Fills `next`/`pick` for an arithmetic group from `table` (all in `unit`s).
fn fill_arith(a: &Arith, unit: u64, table: &[f64], next: &mut [f64], pick: &mut [u32]) {
    let cap = table.len() - 1;
    let n = a.n as usize;
    let full = (u64::from(a.n) * a.step / unit) as usize;
    let step = (a.step / unit) as usize;
    let charge = (a.charge / unit) as usize;
    // Keep all n: no charge, no cost.
    for c in full..=cap {
        if table[c - full] < next[c] {
            next[c] = table[c - full];
            if let Some(p) = pick.get_mut(c) {
                *p = a.n;
            }
        }
    }
    if n == 0 {
        return;
    }
    let r = a.unit_cost;
    if step == 0 {
        // Every partial choice weighs `charge`; the best keeps n - 1.
        for c in charge..=cap {
            let v = table[c - charge] + r;
            if v < next[c] {
                next[c] = v;
                if let Some(p) = pick.get_mut(c) {
                    *p = a.n - 1;
                }
            }
        }
        return;
    }
    // Partial: keep k < n. For c' = c - charge in residue class rho (mod step), position q:
    // min over t in [q - n + 1, q] of table[rho + t step] + t r, plus (n - q) r.
    let mut deque: Vec<(usize, f64)> = Vec::with_capacity(n + 1);
    for rho in 0..step.min(cap + 1) {
        deque.clear();
        let mut head = 0usize;
        let mut q = 0usize;
        loop {
            let cp = rho + q * step;
            if cp + charge > cap {
                break;
            }
            let v = table[cp] + q as f64 * r;
            if v.is_finite() {
                while deque.len() > head && deque[deque.len() - 1].1 >= v {
                    deque.pop();
                }
                deque.push((q, v));
            }
            while deque.len() > head && deque[head].0 + n <= q {
                head += 1;
            }
            if deque.len() > head {
                let (t, best) = deque[head];
                let val = best + (n as f64 - q as f64) * r;
                let c = cp + charge;
                if val < next[c] {
                    next[c] = val;
                    if let Some(p) = pick.get_mut(c) {
                        *p = u32::try_from(q - t).unwrap_or(0);
                    }
                }
            }
            q += 1;
        }
    }
}

/// `next[j] = min(next[j], src[j] + cost)` for every `j`, recording `tag` in `pick[j + off]`
/// where it improves (strictly, so earlier choices win ties, as before). Branch-free so it
/// vectorises; the same additions and comparisons as a plain loop, so the same table.
fn relax(src: &[f64], cost: f64, next: &mut [f64], pick: &mut [u32], off: usize, tag: u32) {
    if pick.is_empty() {
        for (n, &t) in next.iter_mut().zip(src) {
            let v = t + cost;
            *n = if v < *n { v } else { *n };
        }
        return;
    }
    let pick = &mut pick[off..];
    for ((n, p), &t) in next.iter_mut().zip(pick.iter_mut()).zip(src) {
        let v = t + cost;
        let better = v < *n;
        *n = if better { v } else { *n };
        *p = if better { tag } else { *p };
    }
}

mod front;

/// Above this many dense-table cells (groups x capacity units) the pruned Pareto fronts of
/// [`front`] are used instead: compressed sizes shrink the divisor and widen the table.
const DENSE_CELLS_MAX: usize = 50_000;

/// An optimal selection: least total cost within the capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Total added time.
    pub cost_s: f64,
    /// Total bytes of the chosen options.
    pub bytes: u64,
    /// Index into each group's `choices` (the caller's order).
    pub picks: Vec<usize>,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A group's choices sorted by bytes with strictly falling cost (the rest can never win),
/// as indices into the original list.
fn pareto(group: &Group) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..group.choices.len()).collect();
    idx.sort_unstable_by(|&a, &b| {
        let (x, y) = (&group.choices[a], &group.choices[b]);
        x.bytes
            .cmp(&y.bytes)
            .then(x.cost_s.total_cmp(&y.cost_s))
            .then(a.cmp(&b))
    });
    let mut out: Vec<usize> = Vec::with_capacity(idx.len());
    let mut best = f64::INFINITY;
    for i in idx {
        if group.choices[i].cost_s < best {
            best = group.choices[i].cost_s;
            out.push(i);
        }
    }
    out
}

/// One point of the sparse front: bytes, cost and the way back to its picks.
#[derive(Debug, Clone, Copy)]
struct Point {
    bytes: u64,
    cost: f64,
    parent: usize,
    pick: usize,
}

/// Solves the group knapsack exactly: one choice per group, total bytes at most `capacity`,
/// least total cost. `None` when no combination fits.
pub fn solve(groups: &[Group], capacity: u64) -> Option<Selection> {
    run(groups, capacity, true)
}

/// The least total cost only (no picks kept: less memory traffic, same answer).
pub fn min_cost(groups: &[Group], capacity: u64) -> Option<f64> {
    run(groups, capacity, false).map(|s| s.cost_s)
}

/// A lower bound of [`min_cost`] (infinity when nothing fits): the linear relaxation, each
/// group's choices replaced by their lower convex hull and bytes shed at the least cost per
/// byte first. Cheap (no table); used to skip solves that cannot win.
pub fn lower_bound(groups: &[Group], capacity: u64) -> f64 {
    bounds(groups, capacity).lower_s
}

/// Both sides of [`min_cost`] without the table: see [`bounds`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The linear relaxation's value: no selection costs less.
    pub lower_s: f64,
    /// The cost of a selection that fits (the relaxation rounded to hull vertices): the
    /// optimum costs no more. Infinity exactly when nothing fits.
    pub upper_s: f64,
}

/// The linear relaxation of the group knapsack and a rounding of it. Every group's choices
/// are replaced by their lower convex hull; starting from every group at its largest
/// (cheapest) choice, bytes are shed along hull segments at the least cost per byte first
/// (within a group the segments come in that order, by convexity). Stopping mid-segment gives
/// the lower bound. For the upper bound the group cut mid-segment takes instead its cheapest
/// choice that sheds what is left (at worst the segment's far end), every other group staying
/// at a hull vertex: a selection that fits.
pub fn bounds(groups: &[Group], capacity: u64) -> Bounds {
    bounds_on(groups, &fronts_of(groups), capacity)
}

/// Every group's Pareto choices in byte order (see [`pareto`]).
fn fronts_of(groups: &[Group]) -> Vec<Vec<usize>> {
    groups
        .iter()
        .map(|g| match g.arith {
            // Keep-k-of-n choices: k = 0 is the smallest and k = n the largest (a kept copy
            // weighs in-flight x size >= the transient charge); no pruning needed.
            Some(a) if a.step >= a.charge => (0..g.choices.len()).collect(),
            _ => pareto(g),
        })
        .collect()
}

/// [`bounds`] with the groups' fronts already computed.
fn bounds_on(groups: &[Group], fronts: &[Vec<usize>], capacity: u64) -> Bounds {
    let none = Bounds {
        lower_s: f64::INFINITY,
        upper_s: f64::INFINITY,
    };
    /// One hull segment, shed from its right (larger) end.
    struct Seg {
        slope: f64,
        shed: u64,
        added: f64,
        group: usize,
        right_bytes: u64,
        right_cost: f64,
    }
    let mut base_cost = 0.0f64;
    let mut base_bytes = 0u64;
    let mut min_bytes = 0u64;
    let mut segs: Vec<Seg> = Vec::new();
    let mut hull: Vec<(f64, f64)> = Vec::new();
    for ((gi, g), front) in groups.iter().enumerate().zip(fronts) {
        let (Some(&first), Some(&last)) = (front.first(), front.last()) else {
            return none;
        };
        min_bytes += g.choices[first].bytes;
        base_bytes += g.choices[last].bytes;
        base_cost += g.choices[last].cost_s;
        hull_of(g, front, &mut hull);
        for w in hull.windows(2) {
            let (left, right) = (w[0].0 as u64, w[1].0 as u64);
            if right > left {
                let shed = right - left;
                segs.push(Seg {
                    slope: (w[0].1 - w[1].1) / shed as f64,
                    shed,
                    added: w[0].1 - w[1].1,
                    group: gi,
                    right_bytes: right,
                    right_cost: w[1].1,
                });
            }
        }
    }
    if min_bytes > capacity {
        return none;
    }
    if base_bytes <= capacity {
        return Bounds {
            lower_s: base_cost,
            upper_s: base_cost,
        };
    }
    let mut need = base_bytes - capacity;
    segs.sort_by(|a, b| a.slope.total_cmp(&b.slope));
    let mut whole = base_cost; // after the segments taken whole
    for seg in segs {
        if seg.shed >= need {
            // The cheapest choice of this group at most `right_bytes - need` bytes: on a
            // front costs fall as bytes rise, so the largest such choice.
            let g = &groups[seg.group];
            let limit = seg.right_bytes - need;
            let cut = fronts[seg.group]
                .iter()
                .rev()
                .find(|&&c| g.choices[c].bytes <= limit)
                .map_or(seg.added, |&c| g.choices[c].cost_s - seg.right_cost);
            return Bounds {
                lower_s: whole + seg.slope * need as f64,
                upper_s: whole + cut,
            };
        }
        whole += seg.added;
        need -= seg.shed;
    }
    // Unreachable when min_bytes <= capacity (shedding every segment reaches min_bytes).
    Bounds {
        lower_s: whole,
        upper_s: whole,
    }
}

/// The lower convex hull (bytes rising, cost falling) of a group's `front` (its Pareto
/// choices in byte order), as `(bytes, cost)` points in `hull`.
fn hull_of(g: &Group, front: &[usize], hull: &mut Vec<(f64, f64)>) {
    hull.clear();
    for &c in front {
        let p = (g.choices[c].bytes as f64, g.choices[c].cost_s);
        while hull.len() >= 2 {
            let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            // b is not below the segment a-p: drop it.
            if (b.1 - a.1) * (p.0 - a.0) >= (p.1 - a.1) * (b.0 - a.0) {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(p);
    }
}

/// Appends group `j`'s hull segments as `(cost per byte shed, bytes shed)` to `out`.
fn hull_segments(groups: &[Group], j: usize, front: &[usize], out: &mut Vec<(f64, f64)>) {
    let mut hull = Vec::with_capacity(front.len());
    hull_of(&groups[j], front, &mut hull);
    for w in hull.windows(2) {
        let shed = w[1].0 - w[0].0;
        if shed > 0.0 {
            out.push(((w[0].1 - w[1].1) / shed, shed));
        }
    }
}

/// [`bounds`] for keep-k-of-n groups alone, without building their choice lists, with a
/// tighter upper bound. A keep-k-of-n group's lower convex hull is the single chord from
/// "keep none" (`charge` bytes, `n unit_cost`) to "keep all" (`n step`, 0): the points in
/// between lie on a line through "keep none" that ends above "keep all". The group cut
/// mid-chord by the relaxation is rounded to the fewest dropped copies that shed what is left
/// instead of to "keep none".
pub fn bounds_keep(groups: &[Arith], capacity: u64) -> Bounds {
    if groups.iter().any(|a| a.step < a.charge) {
        let general: Vec<Group> = groups
            .iter()
            .map(|&a| Group::keep_of(a, |_| [0; 3]))
            .collect();
        return bounds(&general, capacity);
    }
    let mut min_bytes = 0u64;
    let mut base_bytes = 0u64;
    // (cost per byte shed, group) of every chord that sheds bytes.
    let mut chords: Vec<(f64, usize)> = Vec::with_capacity(groups.len());
    for (i, a) in groups.iter().enumerate() {
        if a.n == 0 {
            continue;
        }
        let all = u64::from(a.n) * a.step;
        min_bytes += a.charge;
        base_bytes += all;
        if all > a.charge {
            chords.push((f64::from(a.n) * a.unit_cost / (all - a.charge) as f64, i));
        }
    }
    if min_bytes > capacity {
        return Bounds {
            lower_s: f64::INFINITY,
            upper_s: f64::INFINITY,
        };
    }
    if base_bytes <= capacity {
        return Bounds {
            lower_s: 0.0,
            upper_s: 0.0,
        };
    }
    chords.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut need = base_bytes - capacity;
    let mut whole = 0.0f64; // cost of the chords taken whole
    for (slope, i) in chords {
        let a = &groups[i];
        let shed = u64::from(a.n) * a.step - a.charge;
        if shed >= need {
            // Drop d copies with d step - charge >= need (d <= n as shed >= need).
            let d = (need + a.charge).div_ceil(a.step);
            return Bounds {
                lower_s: whole + slope * need as f64,
                upper_s: whole + d as f64 * a.unit_cost,
            };
        }
        whole += f64::from(a.n) * a.unit_cost;
        need -= shed;
    }
    // Unreachable when min_bytes <= capacity (shedding every chord reaches min_bytes).
    Bounds {
        lower_s: whole,
        upper_s: whole,
    }
}

fn run(groups: &[Group], capacity: u64, want_picks: bool) -> Option<Selection> {
    run_with(groups, capacity, want_picks, DENSE_CELLS_MAX)
}

/// [`solve`] by the dense table (and sparse odd groups) alone, to check the pruned fronts
/// against it on real instances.
#[cfg(test)]
pub(super) fn solve_dense(groups: &[Group], capacity: u64) -> Option<Selection> {
    run_with(groups, capacity, true, usize::MAX)
}

/// [`run`] with the table size above which the pruned fronts are tried first.
fn run_with(
    groups: &[Group],
    capacity: u64,
    want_picks: bool,
    dense_cells_max: usize,
) -> Option<Selection> {
    let fronts = fronts_of(groups);
    if fronts.iter().any(|f| f.is_empty()) {
        return None;
    }
    let min_bytes: u64 = groups
        .iter()
        .zip(&fronts)
        .map(|(g, f)| g.choices[f[0]].bytes)
        .sum();
    if min_bytes > capacity {
        return None;
    }
    // Everything at its largest (cheapest) choice fits: no table needed.
    let max_bytes: u64 = groups
        .iter()
        .zip(&fronts)
        .map(|(g, f)| f.last().map_or(0, |&c| g.choices[c].bytes))
        .sum();
    if max_bytes <= capacity {
        let picks: Vec<usize> = fronts
            .iter()
            .map(|f| f.last().copied().unwrap_or(0))
            .collect();
        let cost_s = picks
            .iter()
            .zip(groups)
            .map(|(&c, g)| g.choices[c].cost_s)
            .sum();
        return Some(Selection {
            cost_s,
            bytes: max_bytes,
            picks,
        });
    }
    let (regular, odd) = split_groups(groups, &fronts, capacity);
    let unit = regular
        .iter()
        .flat_map(|&g| fronts[g].iter().map(move |&c| groups[g].choices[c].bytes))
        .fold(0, gcd)
        .max(1);
    let max_regular: u64 = regular
        .iter()
        .map(|&g| groups[g].choices[*fronts[g].last().unwrap_or(&0)].bytes)
        .sum();
    let cap_units = (capacity.min(max_regular) / unit) as usize;
    if regular.len().saturating_mul(cap_units + 1) > dense_cells_max {
        // The dense table's work in cell updates; the fronts may take a quarter of it in
        // partial selections (each costs several cell updates: a push, a sort, a filter).
        let dense_work: usize = regular
            .iter()
            .map(|&g| fronts[g].len().saturating_mul(cap_units + 1))
            .fold(0, usize::saturating_add);
        let upper = bounds_on(groups, &fronts, capacity).upper_s;
        if let Ok(v) = front::solve(groups, &fronts, capacity, upper, want_picks, dense_work / 4) {
            return v;
        }
    }

    // Sparse Pareto front over the odd groups.
    let mut levels: Vec<Vec<Point>> = vec![vec![Point {
        bytes: 0,
        cost: 0.0,
        parent: 0,
        pick: 0,
    }]];
    for &g in &odd {
        let prev = levels.last().map(Vec::as_slice).unwrap_or(&[]);
        let mut cand: Vec<Point> = Vec::with_capacity(prev.len() * fronts[g].len());
        for (pi, p) in prev.iter().enumerate() {
            for &c in &fronts[g] {
                let ch = &groups[g].choices[c];
                let bytes = p.bytes + ch.bytes;
                if bytes <= capacity {
                    cand.push(Point {
                        bytes,
                        cost: p.cost + ch.cost_s,
                        parent: pi,
                        pick: c,
                    });
                }
            }
        }
        cand.sort_by(|a, b| a.bytes.cmp(&b.bytes).then(a.cost.total_cmp(&b.cost)));
        let mut front: Vec<Point> = Vec::with_capacity(cand.len());
        for pt in cand {
            if front.last().is_none_or(|l| pt.cost < l.cost) {
                front.push(pt);
            }
        }
        levels.push(front);
    }

    // Which table cells are ever read. Only when every regular group is a plain list of
    // choices (no keep-k-of-n fast path, whose sliding window reads every cell): cells above
    // the sum of the groups' largest sizes so far hold the value (and pick) of that sum,
    // because every choice there reads the previous table in its own constant region; cells
    // below the least capacity the combine step asks for, minus what the later groups can
    // take, are never read. Skipping both computes the same values at every cell read.
    let last = levels.last().map(Vec::as_slice).unwrap_or(&[]);
    let left_of = |pt: &Point| ((capacity - pt.bytes) / unit).min(cap_units as u64) as usize;
    let widths: Vec<usize> = regular
        .iter()
        .map(|&g| (groups[g].choices[*fronts[g].last().unwrap_or(&0)].bytes / unit) as usize)
        .collect();
    let plain_lists = regular.iter().all(|&g| groups[g].arith.is_none());
    let need_lo = last.iter().map(left_of).min().unwrap_or(cap_units);
    let mut suffix: usize = widths.iter().sum();
    let mut prefix = 0usize;

    // Dense table over the regular groups, with the pick of every group at every capacity.
    let mut table = vec![0.0f64; cap_units + 1];
    let mut picks: Vec<Vec<u32>> = Vec::with_capacity(regular.len());
    let mut tops: Vec<usize> = Vec::with_capacity(regular.len());
    let mut next = vec![f64::INFINITY; cap_units + 1];
    let mut top = 0usize;
    for (k, &g) in regular.iter().enumerate() {
        suffix -= widths[k];
        prefix += widths[k];
        let (lo, hi) = if plain_lists {
            (need_lo.saturating_sub(suffix), prefix.min(cap_units))
        } else {
            (0, cap_units)
        };
        // The previous table's constant region, written out up to `hi`.
        if top < hi {
            let v = table[top];
            table[top + 1..=hi].fill(v);
        }
        let mut pick = if want_picks {
            vec![u32::MAX; cap_units + 1]
        } else {
            Vec::new()
        };
        if let Some(a) = &groups[g].arith {
            next.fill(f64::INFINITY);
            fill_arith(a, unit, &table, &mut next, &mut pick);
            std::mem::swap(&mut table, &mut next);
            picks.push(pick);
            tops.push(cap_units);
            top = cap_units;
            continue;
        }
        if lo <= hi {
            next[lo..=hi].fill(f64::INFINITY);
        }
        for &c in &fronts[g] {
            let ch = &groups[g].choices[c];
            let w = (ch.bytes / unit) as usize;
            let from = lo.max(w);
            if from > hi {
                break;
            }
            relax(
                &table[from - w..=hi - w],
                ch.cost_s,
                &mut next[from..=hi],
                &mut pick,
                from,
                c as u32,
            );
        }
        std::mem::swap(&mut table, &mut next);
        picks.push(pick);
        tops.push(hi);
        top = hi;
    }
    if top < cap_units {
        let v = table[top];
        table[top + 1..].fill(v);
    }

    // Combine: every odd front point with the best regular fill of what it leaves.
    let mut best: Option<(f64, usize, usize)> = None;
    for (i, pt) in last.iter().enumerate() {
        let left = left_of(pt);
        let v = pt.cost + table[left];
        if v.is_finite() && best.is_none_or(|(b, _, _)| v < b) {
            best = Some((v, i, left));
        }
    }
    let (cost_s, point, mut cap) = best?;
    if !want_picks {
        return Some(Selection {
            cost_s,
            bytes: 0,
            picks: Vec::new(),
        });
    }
    let mut out = vec![0usize; groups.len()];
    let mut bytes = 0u64;
    let mut idx = point;
    for (lvl, &g) in odd.iter().enumerate().rev() {
        let pt = levels[lvl + 1][idx];
        out[g] = pt.pick;
        bytes += groups[g].choices[pt.pick].bytes;
        idx = pt.parent;
    }
    for (k, &g) in regular.iter().enumerate().rev() {
        let c = picks[k][cap.min(tops[k])] as usize;
        out[g] = c;
        let ch = &groups[g].choices[c];
        bytes += ch.bytes;
        cap -= (ch.bytes / unit) as usize;
    }
    Some(Selection {
        cost_s,
        bytes,
        picks: out,
    })
}

/// Chooses which groups go to the dense table. Every candidate divisor (each group's own
/// gcd, the gcd of each pair, and the gcd of all) splits the groups into those whose sizes it divides (dense, at
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(groups: &[Group], capacity: u64) -> Option<f64> {
        let mut best: Option<f64> = None;
        let mut idx = vec![0usize; groups.len()];
        loop {
            let bytes: u64 = idx
                .iter()
                .zip(groups)
                .map(|(&i, g)| g.choices[i].bytes)
                .sum();
            let cost: f64 = idx
                .iter()
                .zip(groups)
                .map(|(&i, g)| g.choices[i].cost_s)
                .sum();
            if bytes <= capacity && best.is_none_or(|b| cost < b) {
                best = Some(cost);
            }
            let mut k = 0;
            loop {
                if k == groups.len() {
                    return best;
                }
                idx[k] += 1;
                if idx[k] < groups[k].choices.len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    /// An optimal selection's cost is `want`, and its picks fit and add up to what it says.
    fn check_selection(
        groups: &[Group],
        cap: u64,
        got: &Selection,
        want: f64,
    ) -> Result<(), TestCaseError> {
        prop_assert!(
            (got.cost_s - want).abs() < 1e-9,
            "{} vs {}",
            got.cost_s,
            want
        );
        let bytes: u64 = got
            .picks
            .iter()
            .zip(groups)
            .map(|(&i, g)| g.choices[i].bytes)
            .sum();
        let cost: f64 = got
            .picks
            .iter()
            .zip(groups)
            .map(|(&i, g)| g.choices[i].cost_s)
            .sum();
        prop_assert!(bytes <= cap);
        prop_assert_eq!(bytes, got.bytes);
        prop_assert!((cost - want).abs() < 1e-9);
        Ok(())
    }

    fn group_strategy(scale: u64) -> impl Strategy<Value = Group> {
        prop::collection::vec((0u64..40, 0.0f64..10.0), 1..5).prop_map(move |v| Group {
            choices: v
                .into_iter()
                .map(|(b, c)| Choice {
                    bytes: b * scale,
                    cost_s: c,
                    tag: [0; 3],
                })
                .collect(),
            arith: None,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn matches_brute_force(groups in prop::collection::vec(group_strategy(1), 1..5), cap in 0u64..120) {
            let got = solve(&groups, cap);
            let want = brute(&groups, cap);
            prop_assert_eq!(got.is_some(), want.is_some());
            prop_assert_eq!(min_cost(&groups, cap).is_some(), want.is_some());
            if let Some(w) = want {
                let b = bounds(&groups, cap);
                prop_assert!(b.lower_s <= w + 1e-9, "bound {} above {}", b.lower_s, w);
                prop_assert!(b.upper_s >= w - 1e-9, "upper bound {} below {}", b.upper_s, w);
            } else {
                prop_assert_eq!(bounds(&groups, cap).upper_s, f64::INFINITY);
            }
            if let (Some(g), Some(w)) = (got, want) {
                prop_assert!((g.cost_s - w).abs() < 1e-9, "{} vs {}", g.cost_s, w);
                prop_assert!((min_cost(&groups, cap).unwrap_or(f64::NAN) - w).abs() < 1e-9);
                prop_assert!(g.bytes <= cap);
                let c: f64 = g.picks.iter().zip(&groups).map(|(&i, gr)| gr.choices[i].cost_s).sum();
                prop_assert!((c - g.cost_s).abs() < 1e-9);
            }
        }

        #[test]
        fn arithmetic_groups_match_brute_force(
            spec in prop::collection::vec((0u32..6, 0u64..6, 0u64..5, 0.0f64..3.0), 1..5),
            other in prop::collection::vec(group_strategy(1), 0..2),
            cap in 0u64..90,
        ) {
            let mut groups: Vec<Group> = spec
                .into_iter()
                .map(|(n, step, charge, r)| Group::keep_of(Arith { n, step, charge, unit_cost: r }, |k| [k, 0, 0]))
                .collect();
            groups.extend(other);
            let got = solve(&groups, cap);
            let want = brute(&groups, cap);
            prop_assert_eq!(got.is_some(), want.is_some());
            let keep_only: Vec<Arith> = groups.iter().filter_map(|g| g.arith).collect();
            let only_keep = keep_only.len() == groups.len();
            if let Some(w) = want {
                let b = bounds(&groups, cap);
                prop_assert!(b.lower_s <= w + 1e-9);
                prop_assert!(b.upper_s >= w - 1e-9 && b.upper_s.is_finite());
                if only_keep {
                    let k = bounds_keep(&keep_only, cap);
                    prop_assert!(k.lower_s <= w + 1e-9, "keep bound {} above {}", k.lower_s, w);
                    prop_assert!(k.upper_s >= w - 1e-9 && k.upper_s.is_finite(), "keep upper {} below {}", k.upper_s, w);
                    prop_assert!(k.upper_s <= b.upper_s + 1e-9);
                }
            } else {
                prop_assert_eq!(bounds(&groups, cap).upper_s, f64::INFINITY);
                if only_keep {
                    prop_assert_eq!(bounds_keep(&keep_only, cap).upper_s, f64::INFINITY);
                }
            }
            if let (Some(g), Some(w)) = (got, want) {
                check_selection(&groups, cap, &g, w)?;
            }
        }

        #[test]
        fn pruned_fronts_match_brute_force(
            plain in prop::collection::vec(group_strategy(3), 1..4),
            spec in prop::collection::vec((0u32..6, 0u64..9, 0u64..5, 0.0f64..3.0), 0..3),
            cap in 0u64..200,
        ) {
            let mut groups = plain;
            groups.extend(spec.into_iter().map(|(n, step, charge, r)| {
                Group::keep_of(Arith { n, step, charge, unit_cost: r }, |k| [k, 0, 0])
            }));
            let fronts: Vec<Vec<usize>> = groups.iter().map(pareto).collect();
            let upper = bounds(&groups, cap).upper_s;
            let got = front::solve(&groups, &fronts, cap, upper, true, usize::MAX).unwrap();
            let want = brute(&groups, cap);
            prop_assert_eq!(got.is_some(), want.is_some());
            let cost_only = front::solve(&groups, &fronts, cap, upper, false, usize::MAX).unwrap();
            prop_assert_eq!(cost_only.is_some(), want.is_some());
            // With no work allowed it gives up or answers the same.
            if let Ok(v) = front::solve(&groups, &fronts, cap, upper, false, 0) {
                prop_assert_eq!(v.map(|s| s.cost_s), cost_only.map(|s| s.cost_s));
            }
            if let (Some(g), Some(w)) = (got, want) {
                check_selection(&groups, cap, &g, w)?;
            }
        }

        #[test]
        fn matches_brute_force_with_odd_sizes(
            regular in prop::collection::vec(group_strategy(1 << 20), 1..4),
            odd in prop::collection::vec(group_strategy((1 << 20) + 7), 1..3),
            cap in 0u64..(160u64 << 20),
        ) {
            // Large byte sizes with a coprime group force the sparse side.
            let groups: Vec<Group> = regular.into_iter().chain(odd).collect();
            let got = solve(&groups, cap);
            let want = brute(&groups, cap);
            prop_assert_eq!(got.is_some(), want.is_some());
            if let (Some(g), Some(w)) = (got, want) {
                prop_assert!((g.cost_s - w).abs() < 1e-9, "{} vs {}", g.cost_s, w);
                prop_assert!(g.bytes <= cap);
            }
        }
    }
}
