//! Lynx's optimal recomputation policy for one stage: per unit kind, how many copies to
//! keep, how many to recompute early in the device's communication windows ("overlap"),
//! and how many to recompute on demand right before their backward, charging only the
//! recomputation the windows do not hide.
//!
//! The windows of a device are, for each of its backwards, the idle time before it (the
//! wait for the gradient, as the schedule's timing has it) plus the tensor-parallel
//! collectives of that backward that no GEMM hides. Overlapped copies are recomputed before
//! the backward starts, so they are alive together: each costs its bytes once on top of the
//! kept copies (the on-demand copies of a kind cost one block's worth, as in the plain
//! knapsack). The time charged per micro-batch is the on-demand recomputation `d` plus the
//! mean over the device's backwards of what the overlapped recomputation `e` leaves
//! exposed, `g(e) = mean_j max(0, e - W_j)`.
//!
//! The memory constraint is separable per kind but the objective is not (`g` is convex
//! in the sum), so the groups are combined exactly as a Pareto front of (bytes, d, e)
//! points: a point is dropped only when another has no more of all three, or when its
//! cost so far (`d + g(e)`, which completing it can only raise) exceeds the plain on-demand
//! knapsack's answer (a feasible Lynx policy). Overlapped time beyond the largest window
//! is exposed at rate 1 wherever it lies, so it is moved into `d` (same cost for every
//! completion), which bounds `e`. Exact for the cost model (tests: brute force).

use crate::anatomy::Anatomy;

use super::formulate::formulate;
use super::{BlockCounts, KINDS, KindDecision, KnapsackMode, KnapsackPlan, StageEnv, keep_all};

/// A device's communication windows, one per backward, ascending, with their prefix sums.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Windows {
    sorted_s: Vec<f64>,
    prefix_s: Vec<f64>,
}

impl Windows {
    /// The windows `wait + collectives_s` for each wait before a backward of the device
    /// (at least one window: `collectives_s` alone when there is no wait).
    pub fn new(waits_s: &[f64], collectives_s: f64) -> Self {
        let mut sorted_s: Vec<f64> = if waits_s.is_empty() {
            vec![collectives_s.max(0.0)]
        } else {
            waits_s
                .iter()
                .map(|w| (w.max(0.0) + collectives_s).max(0.0))
                .collect()
        };
        sorted_s.sort_by(f64::total_cmp);
        let mut prefix_s = Vec::with_capacity(sorted_s.len() + 1);
        prefix_s.push(0.0);
        let mut sum = 0.0;
        for w in &sorted_s {
            sum += w;
            prefix_s.push(sum);
        }
        Self { sorted_s, prefix_s }
    }

    /// Mean exposed time of `e` seconds of overlapped recomputation per backward:
    /// `mean_j max(0, e - W_j)`.
    pub fn exposed_s(&self, e: f64) -> f64 {
        if e <= 0.0 {
            return 0.0;
        }
        let k = self.sorted_s.partition_point(|&w| w < e);
        (k as f64 * e - self.prefix_s[k]) / self.sorted_s.len() as f64
    }

    /// The rate at which [`Windows::exposed_s`] rises just above `e`: the share of windows
    /// no longer than `e`.
    pub fn slope(&self, e: f64) -> f64 {
        self.sorted_s.partition_point(|&w| w <= e) as f64 / self.sorted_s.len() as f64
    }

    /// The largest window (beyond it overlapped time is exposed at rate 1).
    pub fn max_s(&self) -> f64 {
        self.sorted_s.last().copied().unwrap_or(0.0)
    }

    /// The mean window.
    pub fn mean_s(&self) -> f64 {
        self.prefix_s.last().copied().unwrap_or(0.0) / self.sorted_s.len().max(1) as f64
    }
}

/// The tensor-parallel collectives of a stage's backward that no GEMM hides, per
/// micro-batch: of B only when W runs apart (`fused = false`), of B and W in a fused BW.
pub fn collectives_s(anatomy: &Anatomy, counts: BlockCounts, fused: bool) -> f64 {
    KINDS
        .iter()
        .map(|&k| {
            let b = anatomy.block_of(k);
            let mut c = b.backward_b_comm_s.min(b.backward_b_s);
            if fused {
                c += b.backward_w_comm_s.min(b.backward_w_s);
            }
            f64::from(counts.of(k)) * c
        })
        .sum()
}

/// One option of one unit kind: copies kept, overlapped and on demand.
#[derive(Debug, Clone, Copy)]
struct Option3 {
    bytes: u64,
    d: f64,
    e: f64,
    keep: u32,
    overlap: u32,
}

/// A partial combination of the first groups.
#[derive(Debug, Clone, Copy)]
struct Point {
    bytes: u64,
    d: f64,
    e: f64,
    parent: u32,
    option: u32,
}

/// Lynx's least exposed recomputation for the stage under its budget, with its decisions
/// (`overlap` copies among the recomputed ones), or `None` when even recomputing every
/// optional unit does not fit. `added_s` is the exposed time per micro-batch.
pub fn lynx_knapsack(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    windows: &Windows,
) -> Option<KnapsackPlan> {
    let base = keep_all(anatomy, counts);
    let plain = KnapsackMode::default();
    let (_, owners, capacity) = formulate(anatomy, counts, env, plain, &base, &vec![0; base.len()]);
    let capacity = capacity?;
    let plain_plan = super::knapsack(anatomy, counts, env, plain)?;
    let i = u64::from(env.in_flight);
    // Groups with the most recomputation time first: their choices decide most, so the
    // bounds below prune early.
    let mut kinds: Vec<Kind> = owners
        .iter()
        .map(|&k| {
            let d = &base[k];
            let u = d.block.map(|b| &anatomy.block_of(b).units[d.unit]);
            let (size, f) = u.map_or((0, 0.0), |u| (u.size_bytes, u.forward_s));
            Kind {
                owner: k,
                n: d.count,
                size,
                f,
            }
        })
        .collect();
    kinds.sort_by(|a, b| (f64::from(b.n) * b.f).total_cmp(&(f64::from(a.n) * a.f)));
    let groups: Vec<Vec<Option3>> = kinds.iter().map(|k| options(k.n, i, k.size, k.f)).collect();
    let rest = Relaxation::of_suffixes(&kinds, i);
    // A Lynx policy to beat: the plain answer with its recomputed copies moved into the
    // windows while memory allows.
    let upper =
        greedy_cost(&kinds, &plain_plan.decisions, i, capacity, windows).min(plain_plan.added_s);
    // A beam search (the best few partial policies per group by their bound) finds a
    // good policy fast; its cost prunes the exact search, which keeps every point that can
    // still beat it.
    let mut upper = upper;
    for width in BEAMS {
        if let Some((_, _, c)) = sweep(&groups, &rest, capacity, windows, upper, Some(width)) {
            upper = upper.min(c);
        }
    }
    let (levels, best, cost) = sweep(&groups, &rest, capacity, windows, upper, None)?;
    let mut decisions = base.clone();
    let mut at = best;
    for g in (0..groups.len()).rev() {
        let p = levels[g + 1][at];
        let o = groups[g][p.option as usize];
        let kd = &mut decisions[kinds[g].owner];
        kd.keep = o.keep;
        kd.overlap = o.overlap;
        kd.recompute = kd.count - o.keep;
        at = p.parent as usize;
    }
    Some(KnapsackPlan {
        decisions,
        added_s: cost,
    })
}

/// Partial policies kept per group by the beam searches that seed the exact one.
const BEAMS: [usize; 2] = [32, 512];

/// Combines the groups in order, keeping the points that can still cost at most `upper`
/// (all of them, or with `beam` only that many, the least bound first); returns every
/// level's points, the best final point and its cost, or `None` when nothing fits.
fn sweep(
    groups: &[Vec<Option3>],
    rest: &Relaxation,
    capacity: u64,
    windows: &Windows,
    upper: f64,
    beam: Option<usize>,
) -> Option<(Vec<Vec<Point>>, usize, f64)> {
    let slack = upper * 1e-9 + 1e-15;
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
        let mut bound = Vec::new();
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
                // What the other groups add at least: their recomputation (at least the
                // plain relaxation's `r`) costs at least the slope of `g` here per second,
                // and all of it but what the windows still hold.
                let r = rest.least_s(g + 1, left);
                if !r.is_finite() {
                    continue;
                }
                let slope = windows.slope(e);
                let more = (slope * r).max(r - (1.0 - slope) * (w_max - e)).max(0.0);
                let lower = d + windows.exposed_s(e) + more;
                if lower > upper + slack {
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
                    bound.push(lower);
                }
            }
        }
        if let Some(width) = beam
            && next.len() > width
        {
            let mut idx: Vec<usize> = (0..next.len()).collect();
            idx.sort_by(|&a, &b| bound[a].total_cmp(&bound[b]));
            next = idx[..width].iter().map(|&k| next[k]).collect();
        }
        levels.push(pareto(next));
    }
    // The least cost; of equal costs (recomputation the windows hide entirely costs
    // nothing), the least recomputation.
    let (best, cost, _) = levels
        .last()?
        .iter()
        .enumerate()
        .map(|(k, p)| (k, p.d + windows.exposed_s(p.e), p.d + p.e))
        .min_by(|a, b| {
            let tie = 1e-12 * a.1.abs().max(b.1.abs());
            if (a.1 - b.1).abs() <= tie {
                a.2.total_cmp(&b.2)
            } else {
                a.1.total_cmp(&b.1)
            }
        })?;
    Some((levels, best, cost))
}

/// One optional unit kind of the stage.
#[derive(Debug, Clone, Copy)]
struct Kind {
    /// Its index in the stage's decisions.
    owner: usize,
    /// Copies.
    n: u32,
    /// Bytes of one copy.
    size: u64,
    /// Recomputation time of one copy.
    f: f64,
}

/// The cost of the plain `decisions` with recomputed copies moved into the windows, the
/// most time per byte first, while the capacity holds them.
fn greedy_cost(
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
struct Relaxation {
    /// Per suffix: bytes when all is kept, least bytes, and the shedding segments' cumulative
    /// (bytes shed, time added), cheapest per byte first.
    suffixes: Vec<(u64, u64, Vec<(u64, f64)>)>,
}

impl Relaxation {
    fn of_suffixes(kinds: &[Kind], i: u64) -> Self {
        let mut suffixes = vec![(0, 0, Vec::new()); kinds.len() + 1];
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
            suffixes[g] = (full, least, cum);
        }
        Self { suffixes }
    }

    /// A lower bound of the recomputation time groups `g..` need within `capacity` bytes
    /// (infinite when they cannot fit).
    fn least_s(&self, g: usize, capacity: u64) -> f64 {
        let (full, least, cum) = &self.suffixes[g];
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
fn options(n: u32, i: u64, size: u64, f: f64) -> Vec<Option3> {
    let mut out = Vec::new();
    for keep in 0..=n {
        for overlap in 0..=(n - keep) {
            let demand = n - keep - overlap;
            out.push(Option3 {
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
fn pareto(mut pts: Vec<Point>) -> Vec<Point> {
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

/// Cheap bounds of [`lynx_knapsack`]'s answer from the plain knapsack's bounds: it is at
/// most the plain answer (every plain policy is a Lynx policy) and at least the plain
/// answer less the mean window (turning overlapped copies into on-demand ones never needs
/// more memory, and `g(e) >= e - mean W` by convexity).
pub fn lynx_bounds(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    windows: &Windows,
) -> crate::plan::knapsack::Bounds {
    let b = super::knapsack_added_bounds(anatomy, counts, env, KnapsackMode::default());
    crate::plan::knapsack::Bounds {
        lower_s: if b.lower_s.is_finite() {
            (b.lower_s - windows.mean_s()).max(0.0)
        } else {
            b.lower_s
        },
        upper_s: b.upper_s,
    }
}

/// The exposed recomputation per micro-batch of `decisions` under `windows`: on-demand
/// copies in full, overlapped ones as [`Windows::exposed_s`] leaves them.
pub fn exposed_s(anatomy: &Anatomy, decisions: &[KindDecision], windows: &Windows) -> f64 {
    let (mut d, mut e) = (0.0, 0.0);
    for k in decisions {
        let Some(kind) = k.block else { continue };
        let f = anatomy.block_of(kind).units[k.unit].forward_s;
        d += f64::from(k.recompute - k.overlap) * f;
        e += f64::from(k.overlap) * f;
    }
    d + windows.exposed_s(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::stage::{RecomputeRule, costs};
    use crate::plan::testkit;
    use proptest::prelude::*;

    /// The least exposed time over every (keep, overlap, on-demand) split of every kind.
    fn brute(a: &Anatomy, counts: BlockCounts, env: &StageEnv, w: &Windows) -> Option<f64> {
        let base = keep_all(a, counts);
        let opts: Vec<Vec<(u32, u32)>> = base
            .iter()
            .map(|d| {
                let u = &a.block_of(d.block.unwrap()).units[d.unit];
                if u.forced {
                    return vec![(d.count, 0)];
                }
                let mut v = Vec::new();
                for keep in 0..=d.count {
                    for overlap in 0..=(d.count - keep) {
                        v.push((keep, overlap));
                    }
                }
                v
            })
            .collect();
        let mut idx = vec![0usize; base.len()];
        let mut best: Option<f64> = None;
        loop {
            let mut d = base.clone();
            for (k, dd) in d.iter_mut().enumerate() {
                let (keep, overlap) = opts[k][idx[k]];
                dd.keep = keep;
                dd.overlap = overlap;
                dd.recompute = dd.count - keep;
            }
            let c = costs(a, counts, env, &d, RecomputeRule::Units);
            if c.peak_bytes <= env.budget_bytes {
                let t = exposed_s(a, &d, w);
                if best.is_none_or(|b| t < b) {
                    best = Some(t);
                }
            }
            let mut k = 0;
            loop {
                if k == idx.len() {
                    return best;
                }
                idx[k] += 1;
                if idx[k] < opts[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    #[test]
    fn windows_expose_the_mean_excess() {
        let w = Windows::new(&[0.0, 1.0, 3.0], 0.5);
        assert_eq!(w.exposed_s(0.0), 0.0);
        assert_eq!(w.exposed_s(0.5), 0.0);
        assert!((w.exposed_s(1.0) - 0.5 / 3.0).abs() < 1e-12);
        assert!((w.exposed_s(2.0) - (1.5 + 0.5) / 3.0).abs() < 1e-12);
        assert!((w.exposed_s(5.0) - (4.5 + 3.5 + 1.5) / 3.0).abs() < 1e-12);
        assert_eq!(Windows::new(&[], 0.25).max_s(), 0.25);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// The Pareto search against every split, with random windows (including none and
        /// windows longer than any recomputation).
        #[test]
        fn lynx_knapsack_matches_enumeration(
            x in 1u64..40,
            st in 0u64..16,
            att in 0u32..=2,
            mlp in 0u32..=2,
            e in 0u32..2,
            h in 0u32..2,
            i in 1u32..6,
            budget in 0u64..300,
            waits in proptest::collection::vec(0.0f64..3.0, 0..5),
            tp in 0.0f64..1.5,
        ) {
            let x = x << 10;
            let a = testkit::small(4, x, st * x);
            let counts = BlockCounts { embedding: e, attention: att, mlp, head: h };
            let env = StageEnv { in_flight: i, budget_bytes: budget * x, logits: h > 0 };
            let w = Windows::new(&waits, tp);
            let got = lynx_knapsack(&a, counts, &env, &w);
            let want = brute(&a, counts, &env, &w);
            prop_assert_eq!(got.is_some(), want.is_some());
            if let (Some(g), Some(want)) = (got, want) {
                prop_assert!((g.added_s - want).abs() < 1e-9, "{} vs {}", g.added_s, want);
                let c = costs(&a, counts, &env, &g.decisions, RecomputeRule::Units);
                prop_assert!(c.peak_bytes <= env.budget_bytes);
                prop_assert!((exposed_s(&a, &g.decisions, &w) - g.added_s).abs() < 1e-9);
                let b = lynx_bounds(&a, counts, &env, &w);
                prop_assert!(b.lower_s <= want + 1e-12 && want <= b.upper_s + 1e-12);
                // Never worse than recomputing on demand.
                let plain = crate::plan::stage::knapsack(&a, counts, &env, KnapsackMode::default()).unwrap();
                prop_assert!(g.added_s <= plain.added_s + 1e-12);
            }
        }
    }
}
