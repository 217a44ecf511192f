//! The linear relaxation of the group knapsack and a rounding of it that fits: bounds on the
//! least cost without filling a table, used by callers to skip solves that cannot win.

use super::{Arith, Group, fronts_of};

/// A lower bound of [`min_cost`](super::min_cost) (infinity when nothing fits): the linear relaxation, each
/// group's choices replaced by their lower convex hull and bytes shed at the least cost per
/// byte first. Cheap (no table); used to skip solves that cannot win.
pub fn lower_bound(groups: &[Group], capacity: u64) -> f64 {
    bounds(groups, capacity).lower_s
}

/// Both sides of [`min_cost`](super::min_cost) without the table: see [`bounds`].
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

/// [`bounds`] with the groups' fronts already computed.
pub(super) fn bounds_on(groups: &[Group], fronts: &[Vec<usize>], capacity: u64) -> Bounds {
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
pub(super) fn hull_segments(
    groups: &[Group],
    j: usize,
    front: &[usize],
    out: &mut Vec<(f64, f64)>,
) {
    let mut hull = Vec::with_capacity(front.len());
    hull_of(&groups[j], front, &mut hull);
    for w in hull.windows(2) {
        let shed = w[1].0 - w[0].0;
        if shed > 0.0 {
            out.push(((w[0].1 - w[1].1) / shed, shed));
        }
    }
}

/// [`bounds_keep_in`] with a chord list of its own.
#[cfg(test)]
pub fn bounds_keep(groups: &[Arith], capacity: u64) -> Bounds {
    bounds_keep_in(groups, capacity, &mut Vec::new())
}

/// [`bounds`] for keep-k-of-n groups alone, without building their choice lists, with a
/// tighter upper bound. A keep-k-of-n group's lower convex hull is the single chord from
/// "keep none" (`charge` bytes, `n unit_cost`) to "keep all" (`n step`, 0): the points in
/// between lie on a line through "keep none" that ends above "keep all". The group cut
/// mid-chord by the relaxation is rounded to the fewest dropped copies that shed what is left
/// instead of to "keep none".
/// Its chord list is kept in `chords` (a buffer reused from call to call).
pub fn bounds_keep_in(groups: &[Arith], capacity: u64, chords: &mut Vec<(f64, usize)>) -> Bounds {
    if groups.iter().any(|a| a.step < a.charge) {
        let general: Vec<Group> = groups
            .iter()
            .map(|&a| Group::keep_of(a, |_| [0; 4]))
            .collect();
        return bounds(&general, capacity);
    }
    let mut min_bytes = 0u64;
    let mut base_bytes = 0u64;
    // (cost per byte shed, group) of every chord that sheds bytes.
    chords.clear();
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
    // The order of a stable sort by slope (pushed in group order), without its buffer.
    chords.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut need = base_bytes - capacity;
    let mut whole = 0.0f64; // cost of the chords taken whole
    for &(slope, i) in chords.iter() {
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
