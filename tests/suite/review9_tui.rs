//! Session 9's review of the TUI on the real engine: a tensor-parallel group larger than a
//! node is noted on the status bar.

#![allow(clippy::unwrap_used)]

use crate::tui_common;

use pipescope::Catalog;
use pipescope::tui::{App, Theme, choices_of, engine_solve, resolve};
use tui_common::render;

fn real_app(scenario: pipescope::Scenario) -> App {
    let catalog = Catalog::builtin();
    let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
    app.show_solve_time = false;
    let effects = resolve(&mut app);
    tui_common::run_effects_with(&mut app, effects, engine_solve);
    app
}

/// Typed past the node (the `t` field's arrows stop there), `t 16` on 8-GPU nodes is
/// solved and the status bar says that its collectives cross the network.
#[test]
fn t_beyond_a_node_is_noted_on_the_status_bar() {
    let mut scenario = Catalog::builtin().scenario("korthikanti-175b").unwrap();
    scenario.parallel.tp = 16;
    let mut app = real_app(scenario);
    assert_eq!(app.error, None);
    let screen = render(&mut app, 200, 50).to_string();
    let last: Vec<&str> = screen.lines().rev().take(3).collect();
    assert!(
        last.iter()
            .any(|l| l.contains("t 16 is more than a node's 8 GPUs")),
        "{screen}"
    );
}
