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
use super::lynx_search::{BEAMS, Best, Kind, Relaxation, Split, greedy_cost, options, sweep};
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

    /// The largest window (beyond it overlapped time is exposed at rate 1).
    pub fn max_s(&self) -> f64 {
        self.sorted_s.last().copied().unwrap_or(0.0)
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
    let plain_plan = super::knapsack_in(
        &crate::plan::memo::KnapsackCache::default(),
        anatomy,
        counts,
        env,
        plain,
    )?;
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
    let groups: Vec<Vec<Split>> = kinds.iter().map(|k| options(k.n, i, k.size, k.f)).collect();
    let rest = Relaxation::of_suffixes(&kinds, i);
    // A Lynx policy to beat: the plain answer with its recomputed copies moved into the
    // windows while memory allows.
    let upper =
        greedy_cost(&kinds, &plain_plan.decisions, i, capacity, windows).min(plain_plan.added_s);
    // A beam search (the best few partial policies per group by their bound) finds a
    // good policy fast; its cost prunes the exact search, which keeps every point that can
    // still beat it.
    let mut best = Best {
        cost_s: upper,
        recompute_s: f64::INFINITY,
    };
    for width in BEAMS {
        if let Some((_, _, found)) = sweep(&groups, &rest, capacity, windows, best, Some(width))
            && found.better_than(&best)
        {
            best = found;
        }
    }
    let out = sweep(&groups, &rest, capacity, windows, best, None);
    let (levels, best, found) = out?;
    let cost = found.cost_s;
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

/// Cheap bounds of [`lynx_knapsack`]'s answer from the plain knapsack's bounds: it is at
/// most the plain answer (every plain policy is a Lynx policy) and at least `g` of the
/// plain answer's lower bound (turning overlapped copies into on-demand ones never needs
/// more memory, so a policy recomputes at least the plain answer, and hiding all of it
/// costs least because `g` rises at a rate of at most 1).
pub fn lynx_bounds(
    anatomy: &Anatomy,
    counts: BlockCounts,
    env: &StageEnv,
    windows: &Windows,
) -> crate::plan::knapsack::Bounds {
    // Lynx's policies recompute units, never whole layers: the plain knapsack without them.
    let b = super::knapsack_added_bounds(
        anatomy,
        counts.without_layers(),
        env,
        KnapsackMode::default(),
    );
    crate::plan::knapsack::Bounds {
        lower_s: if b.lower_s.is_finite() {
            windows.exposed_s(b.lower_s)
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
            if !crate::plan::stage::next_choice(&mut idx, &opts) {
                return best;
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
            let counts = BlockCounts { embedding: e, attention: att, mlp, head: h, ..BlockCounts::default() };
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
