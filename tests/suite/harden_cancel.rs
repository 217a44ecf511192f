//! A solve can be cancelled ([`SolveOptions::cancel`]); it then returns `Cancelled` soon
//! instead of running to its end (the TUI cancels the running solve when a newer edit
//! arrives, and a sweep the solves of a cancelled sweep).

use pipescope::{Cancel, Catalog, Scenario, ScheduleKind, SolveError, SolveOptions, solve_with};
use std::time::{Duration, Instant};

fn solve_cancellable(
    scenario: &Scenario,
    cancel: &Cancel,
) -> Result<pipescope::Outcome, SolveError> {
    let options = SolveOptions {
        cancel: cancel.clone(),
        ..SolveOptions::default()
    };
    solve_with(scenario, &options)
}

/// A scenario whose solve runs V-ZB's search at a large size it accepts.
fn long_scenario() -> Scenario {
    let mut sc = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
    sc.plan.schedule = ScheduleKind::VZb;
    sc.parallel.pp = 16;
    sc.batch.micro_batches = 128;
    sc
}

#[test]
fn a_token_set_before_the_call_stops_the_solve_at_once() {
    let cancel = Cancel::new();
    cancel.cancel();
    let err = solve_cancellable(&long_scenario(), &cancel).unwrap_err();
    assert!(matches!(err, SolveError::Cancelled(_)), "{err}");
}

#[test]
fn a_token_set_during_a_long_solve_stops_it_soon() {
    let sc = long_scenario();
    let cancel = Cancel::new();
    let setter = cancel.clone();
    let at = Instant::now();
    let thread = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        setter.cancel();
        Instant::now()
    });
    let result = solve_cancellable(&sc, &cancel);
    let returned = Instant::now();
    let set = thread.join().unwrap();
    let err = result.expect_err("the solve outlived its token");
    assert!(matches!(err, SolveError::Cancelled(_)), "{err}");
    // Checks sit between schedule candidates (milliseconds each in release); a debug
    // build is slower, so the bound here is loose.
    assert!(
        returned.duration_since(set) < Duration::from_secs(2),
        "returned {:?} after the token was set ({:?} in all)",
        returned.duration_since(set),
        at.elapsed()
    );
}

#[test]
fn a_never_token_solves_as_solve_does() {
    let sc = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
    let a = pipescope::solve(&sc).unwrap();
    let b = solve_cancellable(&sc, &Cancel::never()).unwrap();
    assert_eq!(a.iteration_time_s, b.iteration_time_s);
}
