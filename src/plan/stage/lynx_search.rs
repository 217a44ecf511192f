//! The search behind [`lynx_knapsack`](super::lynx_knapsack): every unit kind's
//! (keep, overlap, on-demand) options combined group by group as a front of (bytes, `d`,
//! `e`) points, pruned by a dominance that holds for every completion and by a lower bound
//! of the completion against the best policy known (which beam searches find first).

use super::KindDecision;
use super::lynx::Windows;

/// One option of one unit kind: copies kept, overlapped and on demand.
#[derive(Debug, Clone, Copy)]
pub(super) struct Split {
    pub(super) bytes: u64,
    pub(super) d: f64,
    pub(super) e: f64,
    pub(super) keep: u32,
    pub(super) overlap: u32,
}

/// A partial combination of the first groups.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    pub(super) bytes: u64,
    pub(super) d: f64,
    pub(super) e: f64,
    pub(super) parent: u32,
    pub(super) option: u32,
}

/// Partial policies kept per group by the beam searches that seed the exact one.
pub(super) const BEAMS: [usize; 3] = [16, 64, 256];

/// A policy's cost and total recomputation: the least cost wins, and of equal costs
/// (recomputation the windows hide entirely costs nothing) the least recomputation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Best {
    pub(super) cost_s: f64,
    pub(super) recompute_s: f64,
}

impl Best {
    /// Costs closer than this are equal (the sums add the same times in other orders).
    fn tie(&self) -> f64 {
        self.cost_s.abs() * 1e-9 + 1e-15
    }

    pub(super) fn better_than(&self, o: &Best) -> bool {
        let tie = o.tie();
        self.cost_s < o.cost_s - tie
            || (self.cost_s <= o.cost_s + tie && self.recompute_s < o.recompute_s)
    }
}

/// Combines the groups in order, keeping the points that can still beat or tie `bound`
/// (all of them, or with `beam` only that many, the least bound first); returns every
/// level's points, the best final point and its figures, or `None` when nothing fits.
pub(super) fn sweep(
    groups: &[Vec<Split>],
    rest: &Relaxation,
    capacity: u64,
    windows: &Windows,
    bound: Best,
    beam: Option<usize>,
) -> Option<(Vec<Vec<Point>>, usize, Best)> {
    let tie = bound.tie();
    let w_max = windows.max_s();
    let mut levels: Vec<Vec<Point>> = Vec::with_capacity(groups.len() + 1);
    levels.push(vec![Point {
        bytes: 0,
        d: 0.0,
        e: 0.0,
        parent: 0,
        option: 0,
    }]);
    for (g, opts) in groups.iter().enumerate() {
        let cur = &levels[g];
        let mut next = Vec::with_capacity(cur.len() * opts.len().min(64));
        let mut keys = Vec::new();
        for (pi, p) in cur.iter().enumerate() {
            for (oi, o) in opts.iter().enumerate() {
                let bytes = p.bytes + o.bytes;
                let Some(left) = capacity.checked_sub(bytes) else {
                    continue;
                };
                let (mut d, mut e) = (p.d + o.d, p.e + o.e);
                if e > w_max {
                    d += e - w_max;
                    e = w_max;
                }
                // The other groups recompute at least the plain relaxation's `r` seconds
                // within the bytes left; as `g` rises at a rate of at most 1, the cheapest
                // way to place them is to overlap them all: the cost is at least
                // `d + g(e + r)`, and the recomputation at least `d + e + r`.
                let r = rest.least_s(g + 1, left);
                if !r.is_finite() {
                    continue;
                }
                let lower = d + windows.exposed_s(e + r);
                if lower > bound.cost_s + tie
                    || (lower >= bound.cost_s - tie
                        && d + e + r > bound.recompute_s * (1.0 + 1e-12))
                {
                    continue;
                }
                next.push(Point {
                    bytes,
                    d,
                    e,
                    parent: pi as u32,
                    option: oi as u32,
                });
                if beam.is_some() {
                    keys.push(lower);
                }
            }
        }
        if let Some(width) = beam
            && next.len() > width
        {
            let mut idx: Vec<usize> = (0..next.len()).collect();
            idx.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
            next = idx[..width].iter().map(|&k| next[k]).collect();
        }
        levels.push(pareto(next));
    }
    let mut found: Option<(usize, Best)> = None;
    for (k, p) in levels.last()?.iter().enumerate() {
        let b = Best {
            cost_s: p.d + windows.exposed_s(p.e),
            recompute_s: p.d + p.e,
        };
        if found.as_ref().is_none_or(|(_, f)| b.better_than(f)) {
            found = Some((k, b));
        }
    }
    let (best, b) = found?;
    Some((levels, best, b))
}

/// One optional unit kind of the stage.
#[derive(Debug, Clone, Copy)]
pub(super) struct Kind {
    /// Its index in the stage's decisions.
    pub(super) owner: usize,
    /// Copies.
    pub(super) n: u32,
    /// Bytes of one copy.
    pub(super) size: u64,
    /// Recomputation time of one copy.
    pub(super) f: f64,
}

/// The cost of the plain `decisions` with recomputed copies moved into the windows, the
/// most time per byte first, while the capacity holds them.
pub(super) fn greedy_cost(
    kinds: &[Kind],
    decisions: &[KindDecision],
    i: u64,
    capacity: u64,
    windows: &Windows,
) -> f64 {
    let mut used = 0u64;
    let mut recomputed: Vec<(Kind, u32)> = Vec::new();
    for k in kinds {
        let keep = decisions[k.owner].keep;
        let r = k.n - keep;
        used += i * u64::from(keep) * k.size + if r > 0 { k.size } else { 0 };
        if r > 0 {
            recomputed.push((*k, r));
        }
    }
    recomputed.sort_by(|a, b| {
        let ra = a.0.f / a.0.size.max(1) as f64;
        let rb = b.0.f / b.0.size.max(1) as f64;
        rb.total_cmp(&ra)
    });
    let (mut d, mut e) = (0.0, 0.0);
    for (k, r) in recomputed {
        // Overlapping `o` of `r` copies takes min(o + 1, r) copies' bytes, one of which is
        // already counted.
        let mut o = 0;
        while o < r && e < windows.max_s() {
            let extra = if o + 1 >= r { 0 } else { k.size };
            if used + extra > capacity {
                break;
            }
            used += extra;
            o += 1;
            e += k.f;
        }
        d += f64::from(r - o) * k.f;
    }
    d + windows.exposed_s(e)
}

/// The plain keep-or-recompute knapsack's linear relaxation over each suffix of the
/// groups: the least recomputation time the suffix needs at a capacity.
pub(super) struct Relaxation {
    suffixes: Vec<Suffix>,
}

/// One suffix of the groups, relaxed.
#[derive(Debug, Clone, Default)]
pub(super) struct Suffix {
    /// Bytes when every copy is kept.
    full: u64,
    /// The least bytes.
    least: u64,
    /// The shedding segments' cumulative (bytes shed, time added), cheapest per byte first.
    cum: Vec<(u64, f64)>,
}

impl Relaxation {
    pub(super) fn of_suffixes(kinds: &[Kind], i: u64) -> Self {
        let mut suffixes = vec![Suffix::default(); kinds.len() + 1];
        let mut segs: Vec<(f64, u64, f64)> = Vec::new();
        let (mut full, mut least) = (0u64, 0u64);
        for g in (0..kinds.len()).rev() {
            let k = kinds[g];
            if k.n > 0 {
                // Keep j of n: bytes j i size + [j < n] size, time (n - j) f; its lower hull
                // from j = 0 to j = n is one segment when i > 1 (or when i = 1, j = n - 1 to
                // n saves nothing); as a relaxation, one straight segment is a lower bound.
                let top = u64::from(k.n) * i * k.size;
                let bottom = k.size.min(top);
                full += top;
                least += bottom;
                if top > bottom {
                    let shed = top - bottom;
                    let added = f64::from(k.n) * k.f;
                    segs.push((added / shed as f64, shed, added));
                }
            }
            let mut sorted = segs.clone();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut cum = Vec::with_capacity(sorted.len());
            let (mut b, mut t) = (0u64, 0.0);
            for (_, shed, added) in sorted {
                b += shed;
                t += added;
                cum.push((b, t));
            }
            suffixes[g] = Suffix { full, least, cum };
        }
        Self { suffixes }
    }

    /// A lower bound of the recomputation time groups `g..` need within `capacity` bytes
    /// (infinite when they cannot fit).
    pub(super) fn least_s(&self, g: usize, capacity: u64) -> f64 {
        let Suffix { full, least, cum } = &self.suffixes[g];
        if capacity >= *full {
            return 0.0;
        }
        if capacity < *least {
            return f64::INFINITY;
        }
        let need = full - capacity;
        let k = cum.partition_point(|&(b, _)| b < need);
        let (prev_b, prev_t) = if k == 0 { (0, 0.0) } else { cum[k - 1] };
        match cum.get(k) {
            Some(&(b, t)) => prev_t + (t - prev_t) * (need - prev_b) as f64 / (b - prev_b) as f64,
            None => prev_t,
        }
    }
}

/// Every (keep, overlap, on-demand) split of `n` copies of a unit of `size` bytes whose
/// recomputation takes `f` seconds, at `i` micro-batches in flight, Pareto-pruned.
pub(super) fn options(n: u32, i: u64, size: u64, f: f64) -> Vec<Split> {
    let mut out = Vec::new();
    for keep in 0..=n {
        for overlap in 0..=(n - keep) {
            let demand = n - keep - overlap;
            out.push(Split {
                bytes: i * u64::from(keep) * size
                    + u64::from(overlap) * size
                    + if demand > 0 { size } else { 0 },
                d: f64::from(demand) * f,
                e: f64::from(overlap) * f,
                keep,
                overlap,
            });
        }
    }
    let pts: Vec<Point> = out
        .iter()
        .enumerate()
        .map(|(k, o)| Point {
            bytes: o.bytes,
            d: o.d,
            e: o.e,
            parent: 0,
            option: k as u32,
        })
        .collect();
    pareto(pts)
        .into_iter()
        .map(|p| out[p.option as usize])
        .collect()
}

/// The points that can still be part of an optimum: `A` makes `B` useless when it takes no
/// more bytes and, for every completion, costs no more. Because `g` rises at a rate between
/// 0 and 1, that holds when `d_B >= d_A + max(0, e_A - e_B)`: with no less overlapped time
/// `B` needs no less on-demand time, and with less overlapped time `B` must save at least
/// the difference in on-demand time. Points are swept by bytes; of equal points the first in
/// (bytes, d, e) order stays.
pub(super) fn pareto(mut pts: Vec<Point>) -> Vec<Point> {
    pts.sort_by(|a, b| {
        a.bytes
            .cmp(&b.bytes)
            .then(a.d.total_cmp(&b.d))
            .then(a.e.total_cmp(&b.e))
    });
    // `low`: kept (e, d) with e ascending and d strictly descending, so the last entry with
    // e_A <= e holds the least d among them. `high`: kept (e, d + e) with e ascending and
    // d + e strictly ascending, so the first entry with e_A > e holds the least d + e among
    // them.
    let mut low: Vec<(f64, f64)> = Vec::new();
    let mut high: Vec<(f64, f64)> = Vec::new();
    let mut out = Vec::with_capacity(pts.len());
    for p in pts {
        let k = low.partition_point(|s| s.0 <= p.e);
        if k > 0 && low[k - 1].1 <= p.d {
            continue;
        }
        let h = high.partition_point(|s| s.0 <= p.e);
        if h < high.len() && high[h].1 - p.e <= p.d {
            continue;
        }
        // Insert into `low` (drop entries at e' >= e with d' >= d).
        let mut end = k;
        while end < low.len() && low[end].1 >= p.d {
            end += 1;
        }
        low.splice(k..end, [(p.e, p.d)]);
        // Insert into `high` (drop entries at e' <= e with d' + e' >= d + e).
        let total = p.d + p.e;
        let mut start = h;
        while start > 0 && high[start - 1].1 >= total {
            start -= 1;
        }
        high.splice(start..h, [(p.e, total)]);
        out.push(p);
    }
    out
}
