//! Workers that keep their stage knapsack answers from one solve to the next give the sweep
//! of workers that start every solve empty: the same best, ranked list, front and every
//! row's status, time and peak.

#![allow(clippy::unwrap_used)]

use proptest::prelude::{ProptestConfig, prop_assert_eq, proptest};
use proptest::sample::{select, subsequence};

use super::*;
use crate::scenario::{Catalog, ScheduleKind, Strategy};
use crate::sweep::SweepOptions;

fn tiny(budget_gib: f64) -> Scenario {
    let mut s = Catalog::builtin().scenario("tiny-4x8").unwrap();
    s.plan.memory_budget_bytes = (budget_gib * GIB) as u64;
    s
}

fn run(base: &Scenario, space: &SweepSpace, options: SweepOptions, share: bool) -> SweepResult {
    sweep_sharing(base, space, options, &|_, _| {}, &Cancel::never(), share).unwrap()
}

/// Every row's decision and figures (wall time left out), bit for bit.
type RowPrint = (Config, String, bool, u64, u64, u64, u64, u64);

fn rows(r: &SweepResult) -> Vec<RowPrint> {
    r.rows
        .iter()
        .map(|row| {
            (
                row.config,
                format!("{:?}", row.status),
                row.solved,
                row.iteration_time_s.to_bits(),
                row.peak_memory_bytes,
                row.mfu.to_bits(),
                row.time_bound_s.to_bits(),
                row.memory_bound_bytes,
            )
        })
        .collect()
}

/// The shared sweep and the unshared one agree on everything: every row, the ranked list,
/// the front and the best.
fn same(shared: &SweepResult, alone: &SweepResult) -> Result<(), String> {
    let (a, b) = (rows(shared), rows(alone));
    if a != b {
        let first = a.iter().zip(&b).find(|(x, y)| x != y);
        return Err(format!("rows differ: {first:?}"));
    }
    if shared.ranked != alone.ranked || shared.pareto != alone.pareto {
        return Err("ranked list or front differ".into());
    }
    if shared.best().map(|r| r.config) != alone.best().map(|r| r.config) {
        return Err("best differs".into());
    }
    Ok(())
}

/// Both the exhaustive sweep (every configuration solved, in parallel) and the pruned one on
/// a single worker (whose order of solves, and so its pruning, is fixed) with and without
/// sharing; the pruned one's answer is also the exhaustive one's.
fn check(base: &Scenario, space: &SweepSpace, top: usize) -> Result<(), String> {
    let all = SweepOptions {
        top,
        exhaustive: true,
    };
    let full = run(base, space, all, true);
    same(&full, &run(base, space, all, false))?;
    let pruned = SweepOptions {
        top,
        exhaustive: false,
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| e.to_string())?;
    let (fast, alone) = one.install(|| {
        (
            run(base, space, pruned, true),
            run(base, space, pruned, false),
        )
    });
    same(&fast, &alone)?;
    if fast.ranked != full.ranked || fast.pareto != full.pareto {
        return Err("pruning changed the answer".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// On random small spaces with every knapsack strategy (compression, offload and both
    /// ask other questions), schedules that plan on the split-backward anatomy among them,
    /// sharing changes nothing.
    #[test]
    fn sharing_knapsack_answers_changes_no_sweep(
        gpus in subsequence(vec![4u32, 8, 16], 1..=2),
        batch in select(vec![8u64, 16, 32]),
        tp in subsequence(vec![1u32, 2, 4], 1..=2),
        pp in subsequence(vec![2u32, 4, 8], 1..=2),
        mbs in subsequence(vec![1u64, 2], 1..=2),
        schedules in subsequence(
            vec![
                ScheduleKind::OneFOneB,
                ScheduleKind::Interleaved,
                ScheduleKind::ZbH1,
                ScheduleKind::ZbV,
                ScheduleKind::VHalf,
            ],
            2..=4,
        ),
        strategies in subsequence(
            vec![
                Strategy::Full,
                Strategy::AdaPipe,
                Strategy::Compress,
                Strategy::Offload,
                Strategy::Unified,
            ],
            1..=3,
        ),
        budget_gib in 2.0f64..24.0,
        top in 1usize..6,
    ) {
        let sp = SweepSpace {
            gpus,
            global_batch: batch,
            tp,
            pp,
            mbs,
            schedules,
            strategies,
            cp: vec![1],
            ..SweepSpace::default()
        };
        prop_assert_eq!(check(&tiny(budget_gib), &sp, top), Ok(()));
    }
}

/// A mixture of experts with the all-to-all overlap on: schedules with overlapped pairs plan
/// on the overlap's anatomy (a shorter MoE forward, its own store), the others on the
/// layout's, and sharing changes nothing.
#[test]
fn sharing_keeps_the_all_to_all_overlap_apart() {
    let c = Catalog::builtin();
    let mut base = tiny(40.0);
    base.model = c.model("qwen3-30b-a3b").unwrap().clone();
    base.gpu = c.gpu("h100-80gb").unwrap().clone();
    base.batch.seq_len = 2048;
    base.plan.memory_budget_bytes = 30 << 30;
    base.plan.moe_a2a_overlap = true;
    let sp = SweepSpace {
        gpus: vec![16],
        global_batch: 32,
        tp: vec![1],
        pp: vec![2, 4],
        mbs: vec![1],
        cp: vec![1],
        schedules: vec![
            ScheduleKind::OneFOneB,
            ScheduleKind::Interleaved,
            ScheduleKind::DualPipe,
        ],
        strategies: vec![Strategy::AdaPipe],
        ..SweepSpace::default()
    };
    let overlapped = enumerate(&base, &sp)
        .unwrap()
        .0
        .iter()
        .filter(|config| scenario_for(&base, config).plan.moe_a2a_overlap)
        .count();
    assert!(overlapped > 0, "no configuration overlaps its all-to-alls");
    check(&base, &sp, 3).unwrap();
}
