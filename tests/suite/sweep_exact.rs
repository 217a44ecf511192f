//! The sweep (docs/cli.md): its bounds never exceed what `solve` reports, a bound
//! that rules a configuration out is never wrong, and pruning leaves the answer (best,
//! ranked, front) exactly as solving every configuration gives it.

use pipescope::{
    Catalog, Scenario, ScheduleKind, Strategy, SweepOptions, SweepResult, SweepSpace, SweepStatus,
    Zero, solve, sweep, sweep_scenario,
};

fn tiny(budget_gib: f64) -> Scenario {
    let mut s = Catalog::builtin().scenario("tiny-4x8").unwrap();
    s.plan.memory_budget_bytes = (budget_gib * (1u64 << 30) as f64) as u64;
    s
}

fn run(base: &Scenario, space: &SweepSpace, top: usize, exhaustive: bool) -> SweepResult {
    let options = SweepOptions { top, exhaustive };
    sweep(
        base,
        space,
        options,
        &|_, _| {},
        &pipescope::Cancel::never(),
    )
    .unwrap()
}

fn space(gpus: &[u32], batch: u64) -> SweepSpace {
    SweepSpace {
        gpus: gpus.to_vec(),
        global_batch: batch,
        tp: vec![1, 2, 4],
        pp: vec![1, 2, 4, 8],
        mbs: vec![1, 2],
        ..SweepSpace::default()
    }
}

/// Every solved configuration's figures are at least its bounds; every one the memory bound
/// ruled out is infeasible when solved.
fn check_bounds(r: &SweepResult) -> usize {
    let mut checked = 0;
    for row in r.rows.iter().filter(|row| row.solved) {
        if matches!(row.status, SweepStatus::Invalid(_)) {
            continue;
        }
        assert!(
            row.time_bound_s <= row.iteration_time_s,
            "{:?}: time bound {} above {}",
            row.config,
            row.time_bound_s,
            row.iteration_time_s
        );
        assert!(
            row.memory_bound_bytes <= row.peak_memory_bytes,
            "{:?}: memory bound {} above {}",
            row.config,
            row.memory_bound_bytes,
            row.peak_memory_bytes
        );
        checked += 1;
    }
    checked
}

#[test]
fn bounds_hold_over_many_configurations() {
    let mut checked = 0;
    // Every strategy and a spread of schedules, generous and tight budgets.
    let mut all = space(&[8], 32);
    all.strategies = Strategy::ALL.to_vec();
    all.schedules = vec![
        ScheduleKind::Gpipe,
        ScheduleKind::OneFOneB,
        ScheduleKind::Interleaved,
        ScheduleKind::ZbH1,
        ScheduleKind::ZbH2,
        ScheduleKind::ZbV,
        ScheduleKind::VHalf,
        ScheduleKind::VMin,
        ScheduleKind::Chimera,
        ScheduleKind::Gis,
        ScheduleKind::GisOffload,
    ];
    all.mbs = vec![1];
    all.tp = vec![1, 2];
    for budget in [40.0, 3.0] {
        let r = run(&tiny(budget), &all, 5, true);
        checked += check_bounds(&r);
    }
    let mut lynx = tiny(40.0);
    lynx.plan.overlap_recompute = true;
    checked += check_bounds(&run(&lynx, &space(&[8], 16), 5, true));
    // Overlapped gradient reduction: only the parameter all-gather is a sure tail.
    let mut overlapped = tiny(40.0);
    overlapped.plan.overlap_grad_reduce = true;
    checked += check_bounds(&run(&overlapped, &space(&[16], 32), 5, true));
    let mut flashless = tiny(6.0);
    flashless.plan.flash_attention = false;
    checked += check_bounds(&run(&flashless, &space(&[16], 32), 5, true));
    // Context parallelism, every ZeRO stage and both overlaps, over a slow network (the
    // collectives show through), generous and tight budgets.
    for budget in [40.0, 4.0] {
        let mut sharded = tiny(budget);
        sharded.gpu.inter_node_gbps = 2.0;
        sharded.plan.overlap_grad_reduce = true;
        sharded.plan.overlap_param_gather = true;
        sharded.plan.tp_comm_overlap = true;
        let mut sp = space(&[16], 32);
        sp.cp = vec![1, 2, 4];
        sp.zero = vec![Zero::Off, Zero::Optimizer, Zero::Full];
        checked += check_bounds(&run(&sharded, &sp, 5, true));
    }
    assert!(checked > 500, "only {checked} configurations checked");
}

#[test]
fn pruning_gives_the_same_answer_as_solving_everything() {
    let mut sharded = tiny(5.0);
    sharded.gpu.inter_node_gbps = 2.0;
    sharded.plan.overlap_grad_reduce = true;
    sharded.plan.overlap_param_gather = true;
    let mut sharded_space = space(&[16], 32);
    sharded_space.cp = vec![1, 2, 4];
    sharded_space.zero = vec![Zero::Off, Zero::Optimizer, Zero::Full];
    let cases: Vec<(Scenario, SweepSpace, usize)> = vec![
        (tiny(40.0), space(&[8], 32), 5),
        (tiny(3.5), space(&[8], 32), 3),
        (tiny(6.0), space(&[8, 16], 64), 4),
        (tiny(20.0), space(&[4], 8), 1),
        (sharded, sharded_space, 4),
    ];
    let mut pruned = 0;
    let mut fixed_peaks = 0;
    let mut stopped = 0;
    for (base, sp, top) in cases {
        let fast = run(&base, &sp, top, false);
        let full = run(&base, &sp, top, true);
        // Ruled out by their exact peak (fixed strategies): infeasible when solved.
        for (a, b) in fast.rows.iter().zip(&full.rows) {
            if a.status
                .reason()
                .is_some_and(|r| r.contains("op order are fixed"))
            {
                assert!(!b.feasible(), "{:?} ruled out but feasible", a.config);
                assert!(
                    a.memory_bound_bytes <= b.peak_memory_bytes,
                    "{:?}",
                    a.config
                );
                fixed_peaks += 1;
            }
        }
        assert_eq!(fast.configs(), full.configs());
        assert_eq!(full.solved(), full.configs());
        assert!(!full.ranked.is_empty(), "{sp:?}: nothing feasible");
        assert_eq!(fast.ranked, full.ranked, "{sp:?}");
        assert_eq!(fast.pareto, full.pareto, "{sp:?}");
        for &i in fast.ranked.iter().chain(&fast.pareto) {
            let (a, b) = (&fast.rows[i], &full.rows[i]);
            assert_eq!(a.config, b.config);
            assert_eq!(a.iteration_time_s, b.iteration_time_s);
            assert_eq!(a.peak_memory_bytes, b.peak_memory_bytes);
            assert_eq!(a.mfu, b.mfu);
        }
        pruned += fast.configs() - fast.solved();
        // Solves stopped part-way, once the floor their plans gave kept them out: solved in
        // full, none of them is in the answer (the lists above are equal).
        for (i, row) in fast.rows.iter().enumerate() {
            if row.status == SweepStatus::Pruned && row.solve_time_s > 0.0 {
                assert!(!row.solved);
                assert!(!full.ranked.contains(&i) && !full.pareto.contains(&i));
                stopped += 1;
            }
        }
    }
    assert!(pruned > 0, "the bounds never pruned anything");
    assert!(stopped > 0, "no solve was stopped part-way");
    assert!(
        fixed_peaks > 0,
        "no configuration was ruled out by its exact peak"
    );
}

#[test]
fn the_front_is_not_dominated_and_the_best_is_what_plan_says() {
    let base = tiny(6.0);
    let r = run(&base, &space(&[8, 16], 64), 5, false);
    let best = r.best().unwrap();
    let outcome = solve(&sweep_scenario(&base, &best.config)).unwrap();
    assert!(outcome.feasible);
    assert_eq!(outcome.iteration_time_s, best.iteration_time_s);
    assert_eq!(outcome.max_peak_memory_bytes(), best.peak_memory_bytes);
    // Ranked is sorted, the best is on the front, nothing feasible dominates a front entry.
    for w in r.ranked.windows(2) {
        assert!(r.rows[w[0]].iteration_time_s <= r.rows[w[1]].iteration_time_s);
    }
    assert!(r.pareto.contains(&r.ranked[0]));
    for &i in &r.pareto {
        let a = &r.rows[i];
        for b in r.rows.iter().filter(|b| b.feasible()) {
            let dominates = b.iteration_time_s <= a.iteration_time_s
                && b.peak_memory_bytes <= a.peak_memory_bytes
                && b.config.gpus <= a.config.gpus
                && (b.iteration_time_s < a.iteration_time_s
                    || b.peak_memory_bytes < a.peak_memory_bytes
                    || b.config.gpus < a.config.gpus);
            assert!(!dominates, "{:?} dominated by {:?}", a.config, b.config);
        }
    }
    // With two GPU counts, the front holds the fewer-GPU configuration that is cheapest.
    assert!(r.pareto.iter().any(|&i| r.rows[i].config.gpus == 8));
}

/// Random small spaces: the pruned sweep's answer is the exhaustive one.
mod random_spaces {
    use super::*;
    use proptest::prelude::{ProptestConfig, prop_assert_eq, proptest};
    use proptest::sample::{select, subsequence};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// On random spaces (GPU counts, batch, t, p, micro-batch sizes, schedules,
        /// strategies), budgets and list lengths, pruning leaves the best, the ranked list,
        /// the front and their figures exactly as solving every configuration gives them.
        #[test]
        fn pruning_equals_solving_everything_on_random_spaces(
            gpus in subsequence(vec![4u32, 8, 16], 1..=2),
            batch in select(vec![8u64, 16, 32]),
            tp in subsequence(vec![1u32, 2, 4], 1..=2),
            pp in subsequence(vec![1u32, 2, 4, 8], 1..=3),
            mbs in subsequence(vec![1u64, 2, 4], 1..=2),
            schedules in subsequence(
                vec![
                    ScheduleKind::OneFOneB,
                    ScheduleKind::Interleaved,
                    ScheduleKind::ZbH1,
                    ScheduleKind::ZbV,
                    ScheduleKind::VHalf,
                ],
                1..=3,
            ),
            strategies in subsequence(
                vec![Strategy::None, Strategy::Full, Strategy::Selective, Strategy::AdaPipe],
                1..=3,
            ),
            budget_gib in 2.0f64..24.0,
            top in 1usize..6,
        ) {
            let base = tiny(budget_gib);
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
            let fast = run(&base, &sp, top, false);
            let full = run(&base, &sp, top, true);
            prop_assert_eq!(fast.configs(), full.configs());
            prop_assert_eq!(&fast.ranked, &full.ranked);
            prop_assert_eq!(&fast.pareto, &full.pareto);
            for &i in fast.ranked.iter().chain(&fast.pareto) {
                let (a, b) = (&fast.rows[i], &full.rows[i]);
                prop_assert_eq!(a.config, b.config);
                prop_assert_eq!(a.iteration_time_s, b.iteration_time_s);
                prop_assert_eq!(a.peak_memory_bytes, b.peak_memory_bytes);
                prop_assert_eq!(a.mfu.to_bits(), b.mfu.to_bits());
                prop_assert_eq!(&a.status, &b.status);
            }
            prop_assert_eq!(
                fast.best().map(|r| r.config),
                full.best().map(|r| r.config)
            );
        }
    }
}

#[test]
fn with_experts_the_bounds_hold_and_pruning_keeps_the_answer() {
    // Qwen3-30B-A3B on 16 H100s: every expert-parallel size of t x cp x d that divides its
    // 128 experts, etp 1 and 2, ZeRO 1 and 3, the budget tight enough that some layouts do
    // not fit.
    let c = Catalog::builtin();
    let mut base = tiny(40.0);
    base.model = c.model("qwen3-30b-a3b").unwrap().clone();
    base.gpu = c.gpu("h100-80gb").unwrap().clone();
    base.batch.seq_len = 2048;
    base.plan.memory_budget_bytes = 40 << 30;
    let sp = SweepSpace {
        gpus: vec![16],
        global_batch: 32,
        tp: vec![1, 2],
        pp: vec![2, 4],
        mbs: vec![1],
        cp: vec![1],
        schedules: vec![ScheduleKind::OneFOneB, ScheduleKind::ZbH1],
        strategies: vec![Strategy::Full, Strategy::AdaPipe],
        // ZeRO-3 shards the experts over their own data-parallel group.
        zero: vec![Zero::Optimizer, Zero::Full],
        etp: vec![1, 2],
        ..SweepSpace::default()
    };
    let fast = run(&base, &sp, 3, false);
    let full = run(&base, &sp, 3, true);
    assert!(check_bounds(&full) > 20);
    assert!(full.rows.iter().any(|r| r.config.ep > 1 && r.feasible()));
    assert!(
        full.rows
            .iter()
            .any(|r| r.config.ep > 1 && r.config.zero == Zero::Full && r.feasible())
    );
    assert!(full.rows.iter().any(|r| r.config.etp == 2 && r.feasible()));
    assert!(!full.ranked.is_empty());
    assert_eq!(fast.ranked, full.ranked);
    assert_eq!(fast.pareto, full.pareto);
}

/// Sweeps `schedules` with `adapipe`, `full` and `none` at budgets from tight to roomy, pruned
/// and exhaustively: the answers (ranked, front and their figures) are the same, and the floors
/// known before the partition search stop at least one solve before its search.
fn floors_keep_the_answer(schedules: &[ScheduleKind]) {
    let mut stopped = 0;
    for budget_gib in [3.0, 3.5, 4.5, 6.0, 40.0] {
        let base = tiny(budget_gib);
        let sp = SweepSpace {
            schedules: schedules.to_vec(),
            strategies: vec![Strategy::AdaPipe, Strategy::Full, Strategy::None],
            ..space(&[8, 16], 32)
        };
        let fast = run(&base, &sp, 3, false);
        let full = run(&base, &sp, 3, true);
        assert_eq!(fast.ranked, full.ranked, "{budget_gib} GiB");
        assert_eq!(fast.pareto, full.pareto, "{budget_gib} GiB");
        for &i in fast.ranked.iter().chain(&fast.pareto) {
            let (a, b) = (&fast.rows[i], &full.rows[i]);
            assert_eq!(a.config, b.config);
            assert_eq!(a.iteration_time_s, b.iteration_time_s);
            assert_eq!(a.peak_memory_bytes, b.peak_memory_bytes);
        }
        stopped += fast
            .rows
            .iter()
            .filter(|r| r.status == SweepStatus::Pruned && r.solve_time_s > 0.0)
            .count();
    }
    assert!(stopped > 0, "no solve was stopped part-way");
}

/// `adapipe` on the multi-chunk schedules: the floors known before the partition search (time
/// at each peak, memory from the micro-batches every chunk holds) and the second pass they put
/// solves off to leave the answer as solving everything gives it.
#[test]
fn floors_before_the_search_keep_the_answer_on_multi_chunk_adapipe() {
    floors_keep_the_answer(&[
        ScheduleKind::Interleaved,
        ScheduleKind::VHalf,
        ScheduleKind::ZbV,
        ScheduleKind::OneFOneB,
    ]);
}

/// On single-chunk schedules (1F1B, ZB-H1), the `adapipe` floors before the partition search
/// (time at each peak, split in blocks over the devices, each at its own in-flight count)
/// leave the answer as solving everything gives it.
#[test]
fn floors_before_the_search_keep_the_answer_on_single_chunk_adapipe() {
    floors_keep_the_answer(&[ScheduleKind::OneFOneB, ScheduleKind::ZbH1]);
}
