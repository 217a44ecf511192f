//! The sweep's feasible count is that of the configurations it solved: with pruned (never
//! solved) configurations the table says so, and the UI marks the count as a lower bound.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::cli_common::pipescope;

#[test]
fn the_table_says_the_feasible_count_is_among_the_solved_when_it_pruned() {
    let args = [
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "4",
        "--global-batch",
        "8",
    ];
    let (ok, out, err) = pipescope(&args);
    assert!(ok, "{err}");
    let head = out.lines().nth(1).unwrap();
    assert!(
        head.contains("of them feasible") && head.contains("pruned unsolved"),
        "{head}"
    );
    let mut exhaustive = args.to_vec();
    exhaustive.push("--exhaustive");
    let (ok, out, err) = pipescope(&exhaustive);
    assert!(ok, "{err}");
    let head = out.lines().nth(1).unwrap();
    assert!(
        head.contains(" feasible, ") && !head.contains("pruned"),
        "{head}"
    );
}

#[cfg(feature = "tui")]
#[test]
fn the_ui_marks_the_feasible_count_as_a_lower_bound_when_it_pruned() {
    use pipescope::SweepStatus;
    use pipescope::tui::{Action, Effect, SweepEvent, fixture, update};

    let mut app = crate::tui_common::solved_app("gpt3-175b-16k");
    let effects = update(&mut app, Action::OpenSweep);
    let (generation, inputs) = effects
        .iter()
        .find_map(|e| match e {
            Effect::Sweep(job) => Some((job.generation, job.inputs.clone())),
            _ => None,
        })
        .unwrap();
    let mut result = fixture::sweep::result(&inputs.base, inputs.gpus, inputs.global_batch);
    let feasible = result.feasible();
    // One configuration outside the answer was left unsolved.
    let last = result
        .rows
        .iter()
        .rposition(|r| !r.feasible())
        .expect("an infeasible row");
    result.rows[last].status = SweepStatus::Pruned;
    result.rows[last].solved = false;
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation,
            result: Ok(Box::new(result)),
        })),
    );
    let screen = crate::tui_common::render(&mut app, 200, 60).to_string();
    assert!(
        screen.contains(&format!("≥ {feasible} feasible")),
        "{screen}"
    );
}
