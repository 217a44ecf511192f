#![allow(clippy::unwrap_used)]
use std::sync::Mutex;

use proptest::prelude::{prop_assert, prop_assert_eq, proptest};

use super::*;
use crate::plan::Strategy;
use crate::scenario::ScheduleKind;
use crate::solve::{SolveOptions, run_until};

/// The least largest stage cost by trying every split (stages may be empty).
fn brute_split(
    n: usize,
    p: usize,
    cost: &dyn Fn(usize, usize) -> u64,
    from: usize,
    d: usize,
) -> u64 {
    if from == n {
        return 0;
    }
    if d == p {
        return u64::MAX;
    }
    (from..=n)
        .map(|e| {
            let own: u64 = (from..e).map(|i| cost(i, d)).sum();
            own.max(brute_split(n, p, cost, e, d + 1))
        })
        .min()
        .unwrap_or(u64::MAX)
}

proptest! {
    /// The greedy bisection finds the least largest stage cost of every split, with costs
    /// that differ per device.
    #[test]
    fn least_largest_stage_is_the_brute_force_minimum(
        n in 0usize..8,
        p in 1usize..5,
        base in proptest::collection::vec(0u64..50, 8),
        weight in proptest::collection::vec(0u64..6, 5),
        kept in proptest::collection::vec(0u64..20, 8),
    ) {
        let cost = |i: usize, d: usize| base[i] + weight[d] * kept[i];
        let got = least_largest_stage(n, p, cost);
        prop_assert_eq!(got, brute_split(n, p, &cost, 0, 0));
    }

    /// The least weighted peak of two-chunk vectors is the minimum over a fine grid of
    /// shares (up to the grid's step), and never below the largest per-vector minimum.
    #[test]
    fn least_weighted_peak_is_the_least_over_the_shares(
        vectors in proptest::collection::vec(proptest::collection::vec(0u32..12, 2), 1..8),
    ) {
        let got = least_weighted_peak(&vectors);
        let grid = (0..=1000)
            .map(|k| {
                let l = f64::from(k) / 1000.0;
                vectors
                    .iter()
                    .map(|h| (1.0 - l) * f64::from(h[0]) + l * f64::from(h[1]))
                    .fold(0.0f64, f64::max)
            })
            .fold(f64::INFINITY, f64::min);
        prop_assert!(got <= grid + 1e-9, "{} above the grid's {}", got, grid);
        prop_assert!(got >= grid - 0.02, "{} far below the grid's {}", got, grid);
        let floor = vectors.iter().map(|h| h[0].min(h[1])).max().unwrap_or(0);
        prop_assert!(got >= f64::from(floor));
    }
}

/// The split into whole layers: the least largest cost by trying every split with at least
/// `least` layers per device, with costs that grow with the layers at a rate of each
/// device's own.
#[test]
fn least_largest_share_is_the_brute_force_minimum() {
    let mut next = crate::solve::testcase::rng(3);
    for _ in 0..400 {
        let layers = next(9);
        let devices = 1 + next(3) as usize;
        let least = next(3);
        let rate: Vec<u64> = (0..devices).map(|_| next(20)).collect();
        let base: Vec<u64> = (0..devices).map(|_| next(10)).collect();
        let cost = |d: usize, x: u64| base[d] + rate[d] * x + (x / 2) * rate[(d + 1) % devices];
        let mut best = u64::MAX;
        let mut x = vec![0u64; devices];
        loop {
            if x.iter().sum::<u64>() == layers && x.iter().all(|&a| a >= least) {
                let worst = x.iter().enumerate().map(|(d, &a)| cost(d, a)).max();
                best = best.min(worst.unwrap_or(0));
            }
            let mut i = 0;
            while i < x.len() {
                x[i] += 1;
                if x[i] <= layers {
                    break;
                }
                x[i] = 0;
                i += 1;
            }
            if i == x.len() {
                break;
            }
        }
        let got = least_largest_share(layers, devices, least, cost);
        assert_eq!(got, best, "{layers} {least} {rate:?} {base:?}");
    }
}

/// On random small instances (the kinds whose order is fixed before the search, the
/// knapsack strategies, budgets from hardly more than the static memory to roomy, tensor
/// parallelism, two models), the bounds a solve gives its caller's stop before the search
/// (this memory floor among them) never exceed the simulated iteration and highest peak,
/// and the memory floor is given, often within a quarter of the peak.
#[test]
fn the_memory_floor_never_exceeds_the_simulated_peak() {
    let mut next = crate::solve::testcase::rng(17);
    let kinds = [
        ScheduleKind::OneFOneB,
        ScheduleKind::ZbH1,
        ScheduleKind::Gpipe,
        ScheduleKind::Interleaved,
        ScheduleKind::VHalf,
    ];
    let strategies = [Strategy::AdaPipe, Strategy::Uniform, Strategy::Adaptive];
    let (mut checked, mut given, mut close, mut over) = (0, 0, 0, 0);
    for case in 0..150 {
        let kind = kinds[next(kinds.len() as u64) as usize];
        let strategy = strategies[next(3) as usize];
        let (s, anatomy) =
            crate::solve::testcase::small(case % 3 == 0, (kind, strategy), &mut next);
        let asked = Mutex::new(Vec::new());
        let stop = |t: f64, peak: u64| {
            asked.lock().unwrap().push((t, peak));
            false
        };
        let Ok(run) = run_until(
            &s,
            &anatomy,
            (kind, strategy),
            &SolveOptions::default(),
            Some(&stop),
        ) else {
            continue;
        };
        let peak = crate::solve::testcase::peak_bytes(&run.simulation);
        let asked = asked.into_inner().unwrap();
        let Some(&(t, floor)) = asked.first() else {
            continue;
        };
        assert!(
            t <= run.simulation.makespan,
            "{kind} {strategy} case {case}: time {t} above {}",
            run.simulation.makespan
        );
        assert!(
            floor <= peak,
            "{kind} {strategy} case {case}: floor {floor} above the peak {peak}"
        );
        if floor > 0 {
            given += 1;
            if floor as f64 >= 0.75 * peak as f64 {
                close += 1;
            }
            if floor > s.plan.memory_budget_bytes {
                over += 1;
            }
        }
        checked += 1;
    }
    assert!(checked >= 100, "{checked}");
    assert!(given >= 80, "the floor was given {given} times");
    assert!(close >= 20, "the floor was within 25 % {close} times");
    assert!(over >= 2, "the floor ruled out {over} configurations");
}
