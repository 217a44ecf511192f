//! Session 9's review of the TUI: a tensor-parallel group larger than a node is noted on the
//! status bar (real engine); compare rows keep their batch at 80 columns; the preset picker
//! marks the default preset the UI opens on without flags.

#![allow(clippy::unwrap_used)]

use crate::tui_common;

use pipescope::Catalog;
use pipescope::tui::{Action, App, Field, Theme, choices_of, engine_solve, resolve};
use tui_common::{act, render};

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

/// At 80 columns each compare row heads with its side's batch (it used to be the first
/// figure to go), so two sides of different batches say so.
#[test]
fn compare_rows_name_each_side_s_batch_at_80_columns() {
    let mut app = tui_common::solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleCompare);
    act(&mut app, Action::SelectField(Field::MicroBatches));
    act(&mut app, Action::Increase);
    let (a, b) = (
        app.pinned
            .as_ref()
            .unwrap()
            .batch
            .global_batch(app.pinned.as_ref().unwrap().parallel.dp),
        app.scenario.batch.global_batch(app.scenario.parallel.dp),
    );
    assert_ne!(a, b);
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = render(&mut app, w, h).to_string();
        let rows: Vec<&str> = screen.lines().collect();
        let (ra, rb) = (rows[0].trim_matches('"'), rows[1].trim_matches('"'));
        assert!(
            ra.starts_with(" A ") && ra.contains(&format!("batch {a} ")),
            "{screen}"
        );
        assert!(
            rb.starts_with(" B ") && rb.contains(&format!("batch {b} ")),
            "{screen}"
        );
        assert_eq!(ra.matches("batch").count(), 1, "{screen}");
        // B's iteration change still shows beside its head.
        assert!(rb.contains("iter"), "{screen}");
    }
    // The peak memory stays on both rows at 80 columns with times of four figures.
    if let Some(Ok(a)) = app.compare.as_mut() {
        a.outcome.iteration_time_s = 18.22;
    }
    if let Some(b) = app.solved.as_mut() {
        b.outcome.iteration_time_s = 17.99;
    }
    let screen = render(&mut app, 80, 24).to_string();
    let rows: Vec<&str> = screen.lines().collect();
    assert!(
        rows[0].contains("18.22 s") && rows[0].contains("peak"),
        "{screen}"
    );
    assert!(
        rows[1].contains("17.99 s") && rows[1].contains("peak"),
        "{screen}"
    );
}

/// Opened with no flag at all, the UI shows the default preset as it is, and the preset
/// picker (`P`) marks it; with a flag that changes it, none (a scenario from flags).
#[test]
fn the_picker_marks_the_default_preset_opened_without_flags() {
    use crate::tmux_common::{Tmux, skip_without_tmux, temp_dir};
    if skip_without_tmux() {
        return;
    }
    let home = temp_dir("review9-default-mark");
    let home_s = home.display().to_string();
    let env = [
        ("XDG_CONFIG_HOME", home_s.as_str()),
        ("PIPESCOPE_FIXTURE", "1"),
    ];
    let marked = |s: &str| s.lines().any(|l| l.contains("● gpt3-175b-16k "));
    let t = Tmux::start(&[], &env, 120, 40);
    t.wait_text("q quit");
    t.keys(&["P"]);
    let screen = t.wait_text("scenarios");
    assert!(marked(&screen), "{screen}");
    drop(t);
    let t = Tmux::start(&["-p", "4"], &env, 120, 40);
    t.wait_text("q quit");
    t.keys(&["P"]);
    let screen = t.wait_text("scenarios");
    assert!(!marked(&screen), "{screen}");
}

/// A failed export's error no longer hides the next save's or export's success on the
/// status bar (an error goes before a note); a solve's error is not touched by it.
#[test]
fn a_success_after_a_failed_export_or_save_is_shown() {
    let mut app = tui_common::solved_app("gpt3-175b-16k");
    let status = |app: &mut App| {
        let screen = render(app, 120, 40).to_string();
        screen.lines().rev().take(3).collect::<Vec<_>>().join("\n")
    };
    act(
        &mut app,
        Action::Exported(Err("/proc/nope/x.svg: cannot write it".into())),
    );
    assert!(status(&mut app).contains("could not export"));
    act(
        &mut app,
        Action::Saved(Ok(std::path::PathBuf::from("/tmp/presets/my-x.toml"))),
    );
    let s = status(&mut app);
    assert!(
        s.contains("saved /tmp/presets/my-x.toml") && !s.contains("could not"),
        "{s}"
    );
    act(&mut app, Action::Saved(Err("disk full".into())));
    assert!(status(&mut app).contains("could not save the preset: disk full"));
    act(
        &mut app,
        Action::Exported(Ok(vec![std::path::PathBuf::from("/tmp/x.svg")])),
    );
    let s = status(&mut app);
    assert!(
        s.contains("exported /tmp/x.svg") && !s.contains("could not"),
        "{s}"
    );
    // Another error (a solve's) stays.
    app.error = Some("the scenario did not solve".into());
    act(
        &mut app,
        Action::Exported(Ok(vec![std::path::PathBuf::from("/tmp/x.svg")])),
    );
    assert_eq!(app.error.as_deref(), Some("the scenario did not solve"));
}

/// The preset picker follows the user's files while the UI runs: a scenario file created
/// after start is offered, an edited one loads its new version, a removed one leaves.
#[test]
fn the_picker_follows_preset_files_created_edited_and_removed() {
    use pipescope::tui::{ParsedPreset, Reload, fixture};
    let mut app = tui_common::solved_app("gpt3");
    let path = std::path::PathBuf::from("/home/u/.config/pipescope/presets/mine.toml");
    let mut mine = fixture::scenario("llama");
    mine.name = "mine".into();
    let reload = |scenario: &pipescope::Scenario| {
        Action::Reloaded(Box::new(Reload::Preset(
            path.clone(),
            Ok(Box::new(ParsedPreset {
                scenario: Some(scenario.clone()),
                choices: tui_common::choices(),
            })),
        )))
    };
    let offered = |app: &App| {
        app.presets
            .iter()
            .filter(|c| c.name == "mine")
            .map(|c| c.scenario.parallel.pp)
            .collect::<Vec<_>>()
    };
    assert!(offered(&app).is_empty());
    act(&mut app, reload(&mine));
    assert_eq!(offered(&app), [mine.parallel.pp]);
    mine.parallel.pp += 1;
    act(&mut app, reload(&mine));
    assert_eq!(offered(&app), [mine.parallel.pp], "the new version, once");
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Removed(path.clone(), None))),
    );
    assert!(offered(&app).is_empty());
}
