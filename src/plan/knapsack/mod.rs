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
//! combination is a multiple of the gcd. Only the cells that can be read are filled (see
//! `dense`), with the same values as a full fill. Where the
//! table would still be huge (compressed sizes carry per-block scales, which shrink the
//! divisor), every group is combined sparsely instead, as Pareto fronts pruned with the linear
//! relaxation (module `front`); also exact.
//!
//! [`bounds`] (the linear relaxation, and a rounding of it that fits) lets callers skip a
//! solve that cannot beat an answer they already hold, or settle "is the least cost below
//! this?" without one; it never changes an answer.
//!
//! Files: `bounds` (the linear relaxation), `run` (the exact solve in named phases), `dense`
//! (the dense table over the regular groups), `front` (the pruned Pareto fronts), `scratch`
//! (the table's buffers, reused from one solve to the next).

mod bounds;
mod dense;
mod front;
mod run;
mod scratch;

#[cfg(test)]
pub use bounds::bounds_keep;
pub use bounds::{Bounds, bounds, bounds_keep_in, lower_bound};
pub use scratch::Scratch;

/// One way to treat all copies of one unit kind in a stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// Bytes this choice costs at the stage's peak (kept copies x in-flight + transient).
    pub bytes: u64,
    /// Time it adds per micro-batch (recomputation and codec time).
    pub cost_s: f64,
    /// Caller's tag (e.g. counts kept / compressed / offloaded and the codec), returned with
    /// the solution.
    pub tag: [u32; 4],
}

/// The options of one group; exactly one is chosen.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    /// Candidate choices (any order; dominated ones are pruned by the solver).
    pub choices: Vec<Choice>,
    /// Set when `choices[k]` (k in `0..=n`) is "keep k of n copies": bytes
    /// `k step + [k < n] charge`, cost `(n - k) unit_cost`; with many copies the dense table
    /// then fills the group in time linear in its capacity (a sliding-window minimum) instead
    /// of one pass per choice.
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
    pub fn keep_of(a: Arith, tag: impl Fn(u32) -> [u32; 4]) -> Self {
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

/// Solves the group knapsack exactly: one choice per group, total bytes at most `capacity`,
/// least total cost. `None` when no combination fits.
#[cfg(test)]
pub fn solve(groups: &[Group], capacity: u64) -> Option<Selection> {
    solve_in(&mut Scratch::default(), groups, capacity)
}

/// The exact solve (see [`solve`]) with its table's buffers taken from (and given back to) `scratch`.
pub fn solve_in(scratch: &mut Scratch, groups: &[Group], capacity: u64) -> Option<Selection> {
    run::run_with(groups, capacity, true, DENSE_CELLS_MAX, scratch)
}

/// The least total cost only (no picks kept: less memory traffic, same answer).
#[cfg(test)]
pub fn min_cost(groups: &[Group], capacity: u64) -> Option<f64> {
    min_cost_in(&mut Scratch::default(), groups, capacity)
}

/// The least total cost only (see [`min_cost`]) with its table's buffers taken from (and given back to) `scratch`.
pub fn min_cost_in(scratch: &mut Scratch, groups: &[Group], capacity: u64) -> Option<f64> {
    run::run_with(groups, capacity, false, DENSE_CELLS_MAX, scratch).map(|s| s.cost_s)
}

/// [`solve`] by the dense table (and sparse odd groups) alone, to check the pruned fronts
/// against it on real instances.
#[cfg(test)]
pub(super) fn solve_dense(groups: &[Group], capacity: u64) -> Option<Selection> {
    run::run_with(groups, capacity, true, usize::MAX, &mut Scratch::default())
}

/// Greatest common divisor (`gcd(0, b) = b`).
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

    /// A keep-k-of-n group tagged with the copies kept.
    fn keep_group(n: u32, step: u64, charge: u64, unit_cost: f64) -> Group {
        Group::keep_of(
            Arith {
                n,
                step,
                charge,
                unit_cost,
            },
            |k| [k, 0, 0, 0],
        )
    }

    fn group_strategy(scale: u64) -> impl Strategy<Value = Group> {
        prop::collection::vec((0u64..40, 0.0f64..10.0), 1..5).prop_map(move |v| Group {
            choices: v
                .into_iter()
                .map(|(b, c)| Choice {
                    bytes: b * scale,
                    cost_s: c,
                    tag: [0; 4],
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
                .map(|(n, step, charge, r)| keep_group(n, step, charge, r))
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
        fn many_copies_with_odd_groups_match_brute_force(
            spec in prop::collection::vec((20u32..34, 1u64..4, 0u64..3, 0.0f64..3.0), 1..3),
            odd in prop::collection::vec(group_strategy(7), 0..3),
            cap in 0u64..500,
        ) {
            // Keep groups in fours fill the dense table (over 24 choices by the sliding
            // window, fewer by passes) from the least cell the odd groups' pairs read.
            let mut groups: Vec<Group> = spec
                .into_iter()
                .map(|(n, step, charge, r)| keep_group(n, 4 * step, 4 * charge, r))
                .collect();
            groups.extend(odd);
            let got = solve(&groups, cap);
            let want = brute(&groups, cap);
            prop_assert_eq!(got.is_some(), want.is_some());
            prop_assert_eq!(min_cost(&groups, cap).is_some(), want.is_some());
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
            groups.extend(spec.into_iter().map(|(n, step, charge, r)| keep_group(n, step, charge, r)));
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
