//! Solves sharing a memo of generated schedules ([`SolveOptions::memo`], as `compare` runs
//! its strategies) give exactly what separate solves give.

use pipescope::{Catalog, ScheduleKind, ScheduleMemo, SolveOptions, Strategy, solve, solve_with};

#[test]
fn shared_solves_equal_separate_ones() {
    let mut compared = 0;
    for (kind, p, m) in [
        (ScheduleKind::OneFOneB, 4, 8),
        (ScheduleKind::ZbV, 4, 8),
        (ScheduleKind::VZb, 4, 8),
        (ScheduleKind::Interleaved, 4, 8),
    ] {
        let memo = ScheduleMemo::default();
        // Twice over, so that the second round is answered from the memo.
        for _ in 0..2 {
            for &strategy in Strategy::ALL {
                let mut sc = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
                sc.plan.schedule = kind;
                sc.plan.strategy = strategy;
                sc.parallel.pp = p;
                sc.batch.micro_batches = m;
                let options = SolveOptions {
                    memo: Some(&memo),
                    ..SolveOptions::default()
                };
                let (alone, shared) = (solve(&sc), solve_with(&sc, &options));
                let strip = |r: Result<pipescope::Outcome, _>| {
                    r.map(|mut o| {
                        o.solve_time_s = 0.0;
                        serde_json::to_string(&o).unwrap()
                    })
                    .map_err(|e: pipescope::SolveError| e.to_string())
                };
                assert_eq!(strip(alone), strip(shared), "{kind} {strategy}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 40, "{compared}");
}

/// Without the baseline run the outcome is the same but for the baseline (NaN) and the
/// speed-up (none).
#[test]
fn a_solve_without_the_baseline_differs_only_there() {
    let sc = Catalog::builtin().scenario("tiny-4x8").unwrap();
    let mut full = solve(&sc).unwrap();
    let options = SolveOptions {
        skip_baseline: true,
        ..SolveOptions::default()
    };
    let mut bare = solve_with(&sc, &options).unwrap();
    assert!(bare.baseline_iteration_time_s.is_nan() && bare.speedup.is_none());
    assert!(full.speedup.is_some());
    for o in [&mut full, &mut bare] {
        o.solve_time_s = 0.0;
        o.baseline_iteration_time_s = 0.0;
        o.speedup = None;
    }
    assert_eq!(full, bare);
}
