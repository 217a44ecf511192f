//! Unit tests of `update`: one or more per action, on fixture solves run synchronously.

use crate::tui_common;

use pipescope::tui::{
    Action, Effect, Field, JobKind, JobResult, Mode, Reload, Theme, Viewport, fixture, update,
};
use pipescope::{ScheduleKind, Strategy};
use tui_common::{act, render, solved_app};

fn solve_job(effects: &[Effect]) -> &pipescope::tui::Job {
    match effects.first() {
        Some(Effect::Solve(job)) => job,
        other => panic!("expected a solve, got {other:?}"),
    }
}

#[test]
fn quit_returns_the_quit_effect() {
    let mut app = solved_app("gpt3");
    assert_eq!(update(&mut app, Action::Quit), vec![Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn help_toggles_and_close_closes_it_first() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::ToggleHelp);
    assert!(app.help);
    act(&mut app, Action::ToggleHelp);
    assert!(!app.help);
    act(&mut app, Action::ToggleHelp);
    act(&mut app, Action::ToggleCompare);
    act(&mut app, Action::Close);
    assert!(!app.help);
    assert!(matches!(app.mode, Mode::Compare));
    act(&mut app, Action::Close);
    assert_eq!(app.mode, Mode::Normal);
}

#[test]
fn field_navigation_wraps() {
    let mut app = solved_app("gpt3");
    app.field = Field::Model;
    act(&mut app, Action::PrevField);
    assert_eq!(app.field, *Field::shown_in(&app.scenario).last().unwrap());
    act(&mut app, Action::NextField);
    assert_eq!(app.field, Field::Model);
    act(&mut app, Action::SelectField(Field::Budget));
    assert_eq!(app.field, Field::Budget);
}

#[test]
fn increase_and_decrease_edit_and_resolve() {
    let mut app = solved_app("gpt3");
    app.field = Field::MicroBatches;
    let g = app.generation;
    let effects = update(&mut app, Action::Increase);
    assert_eq!(app.scenario.batch.micro_batches, 65);
    let job = solve_job(&effects);
    assert_eq!(job.generation, g + 1);
    assert_eq!(job.scenarios[0].batch.micro_batches, 65);
    assert!(app.solving);
    act(&mut app, Action::Decrease);
    assert_eq!(app.scenario.batch.micro_batches, 64);
}

#[test]
fn typing_a_number_sets_the_field_on_commit() {
    let mut app = solved_app("gpt3");
    app.field = Field::MicroBatches;
    for c in "128".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Backspace);
    assert_eq!(app.typing.as_deref(), Some("12"));
    act(&mut app, Action::Commit);
    assert_eq!(app.typing, None);
    assert_eq!(app.scenario.batch.micro_batches, 12);
    assert_eq!(
        app.solved
            .as_ref()
            .unwrap()
            .outcome
            .simulation
            .timeline
            .spans
            .iter()
            .filter(|s| s.device == 0 && s.kind == pipescope::SpanKind::F)
            .count(),
        12
    );
}

#[test]
fn invalid_typed_number_shows_an_error_and_keeps_the_outcome() {
    let mut app = solved_app("gpt3");
    let before = app.solved.clone();
    app.field = Field::Stages;
    act(&mut app, Action::Type('0'));
    let effects = update(&mut app, Action::Commit);
    assert!(effects.is_empty());
    assert!(app.error.as_deref().unwrap().contains("stages p"));
    assert_eq!(app.solved, before);
    // Non-numeric field: a note, no typing.
    app.field = Field::Model;
    act(&mut app, Action::Type('3'));
    assert_eq!(app.typing, None);
    assert!(app.note.is_some());
}

#[test]
fn a_failing_solve_keeps_the_previous_outcome() {
    let mut app = solved_app("gpt3");
    let before = app.solved.clone();
    app.field = Field::Stages;
    // 150 stages pass the scenario's checks (at most 2L = 192) but not the fixture solver's
    // one layer per stage.
    for c in "150".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    assert!(app.error.as_deref().unwrap().contains("parallel.pp"));
    assert_eq!(app.solved, before);
    assert!(render(&mut app, 80, 24).to_string().contains("parallel.pp"));
    // The rejected field is marked, and stays marked after Esc clears the message.
    assert!(app.unsolved(Field::Stages));
    assert!(!app.unsolved(Field::MicroBatches));
    act(&mut app, Action::Close);
    let screen = render(&mut app, 80, 24).to_string();
    assert!(screen.contains("✗ marked fields did not solve"), "{screen}");
    // Putting the value back clears the mark.
    for c in "8".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    assert!(!app.unsolved(Field::Stages));
    assert!(app.error.is_none());
}

/// A typed number that makes the scenario invalid (here through another field: global B sets
/// micro m) is refused at once: the message names the field typed into, the field keeps its
/// last good value, and each later edit reports its own result.
#[test]
fn an_invalid_typed_number_reverts_and_later_edits_answer_for_themselves() {
    let mut app = solved_app("gpt3");
    let before = app.scenario.clone();
    let per_step = app.scenario.batch.micro_batch_size * u64::from(app.scenario.parallel.dp);
    let huge = per_step * 2_000_000;
    app.field = Field::GlobalBatch;
    for c in huge.to_string().chars() {
        act(&mut app, Action::Type(c));
    }
    let effects = update(&mut app, Action::Commit);
    assert!(effects.is_empty(), "nothing to solve: {effects:?}");
    let error = app.error.clone().unwrap();
    assert!(
        error.starts_with(&format!("global B = '{huge}'")),
        "{error}"
    );
    assert!(error.contains("batch.micro_batches = 2000000"), "{error}");
    assert!(error.contains("global B stays"), "{error}");
    assert_eq!(app.scenario, before);
    assert!(!app.unsolved(Field::GlobalBatch));
    assert!(!app.unsolved(Field::MicroBatches));
    // The next edit is solved on its own and clears the message.
    app.field = Field::MicroBatches;
    act(&mut app, Action::Increase);
    assert_eq!(
        app.scenario.batch.micro_batches,
        before.batch.micro_batches + 1
    );
    assert_eq!(app.error, None);
    // Too many stages for the model: refused as stages p, which stays.
    app.field = Field::Stages;
    for c in "500".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    let error = app.error.clone().unwrap();
    assert!(error.starts_with("stages p = '500' refused"), "{error}");
    assert_eq!(app.scenario.parallel.pp, before.parallel.pp);
    assert!(!app.unsolved(Field::Stages));
}

#[test]
fn stale_results_are_dropped() {
    let mut app = solved_app("gpt3");
    app.field = Field::MicroBatches;
    let first = update(&mut app, Action::Increase);
    let second = update(&mut app, Action::Increase);
    let (j1, j2) = (solve_job(&first).clone(), solve_job(&second).clone());
    let result = |job: &pipescope::tui::Job| JobResult {
        generation: job.generation,
        kind: job.kind,
        results: job.scenarios.iter().map(fixture::solve).collect(),
    };
    update(&mut app, Action::Solved(result(&j1)));
    assert!(app.solving, "the stale result must not end the wait");
    assert_ne!(app.solved.as_ref().unwrap().outcome.stages[0].in_flight, 0);
    update(&mut app, Action::Solved(result(&j2)));
    assert!(!app.solving);
    let spans = &app
        .solved
        .as_ref()
        .unwrap()
        .outcome
        .simulation
        .timeline
        .spans;
    let f0 = spans
        .iter()
        .filter(|s| s.device == 0 && s.kind == pipescope::SpanKind::F)
        .count();
    assert_eq!(f0, 66);
}

#[test]
fn stage_selection_wraps_and_clamps() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::PrevStage);
    assert_eq!(app.stage, 7);
    act(&mut app, Action::NextStage);
    assert_eq!(app.stage, 0);
    act(&mut app, Action::SelectStage(99));
    assert_eq!(app.stage, 7);
}

#[test]
fn cycling_shortcuts_change_the_scenario() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::CycleSchedule(1));
    assert_eq!(app.scenario.plan.schedule, ScheduleKind::Interleaved);
    act(&mut app, Action::CycleStrategy(-1));
    assert_eq!(app.scenario.plan.strategy, Strategy::Adaptive);
    act(&mut app, Action::CycleModel(1));
    assert_eq!(app.scenario.model.name, "llama2-70b");
    act(&mut app, Action::CycleGpu(-1));
    assert_eq!(app.scenario.gpu.name, "h100-80gb");
    assert_eq!(app.field, Field::Gpu);
}

#[test]
fn zoom_pan_and_fit_move_the_viewport() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::ZoomIn);
    assert!((app.viewport.span - 1.0 / 1.5).abs() < 1e-12);
    act(&mut app, Action::PanLeft);
    assert_eq!(app.viewport.start, 0.0);
    act(&mut app, Action::PanRight);
    assert!(app.viewport.start > 0.0);
    act(&mut app, Action::ZoomOut);
    act(&mut app, Action::ZoomOut);
    assert_eq!(app.viewport, Viewport::FIT);
    act(&mut app, Action::ZoomAt(0.0, 1));
    assert_eq!(app.viewport.start, 0.0);
    act(&mut app, Action::Fit);
    assert_eq!(app.viewport, Viewport::FIT);
}

#[test]
fn compare_mode_solves_both_sides() {
    let mut app = solved_app("gpt3");
    let effects = update(&mut app, Action::ToggleCompare);
    let job = solve_job(&effects);
    assert_eq!(job.kind, JobKind::Compare);
    // B (edited) first, the pinned A second; B starts as A.
    assert_eq!(job.scenarios[0], job.scenarios[1]);
    assert_eq!(job.scenarios[1].plan.strategy, Strategy::AdaPipe);
    tui_common::run_effects(&mut app, effects);
    assert!(app.compare_solved().is_some());
    act(&mut app, Action::CycleCompare);
    assert_eq!(app.mode, Mode::Compare);
    assert_eq!(app.scenario.plan.strategy, Strategy::Offload);
    // Any edit changes B only; A stays pinned and the change is listed.
    let effects = update(&mut app, Action::CycleSchedule(1));
    let job = solve_job(&effects);
    assert_ne!(
        job.scenarios[0].plan.schedule,
        job.scenarios[1].plan.schedule
    );
    assert_eq!(job.scenarios[1].plan.strategy, Strategy::AdaPipe);
    tui_common::run_effects(&mut app, effects);
    // B's Gantt names what changed against A.
    let screen = render(&mut app, 200, 60).to_string();
    assert!(screen.contains("strategy adapipe→offload"), "{screen}");
    assert!(screen.contains("schedule 1f1b→"), "{screen}");
    act(&mut app, Action::ToggleCompare);
    assert!(app.pinned.is_none());
    assert_eq!(app.mode, Mode::Normal);
    act(&mut app, Action::CycleCompare);
    assert!(app.note.is_some());
}

#[test]
fn story_mode_steps_through_the_chain() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::StoryNext);
    assert!(app.note.is_some());
    act(&mut app, Action::ToggleStory);
    assert_eq!(app.mode, Mode::Story { step: 0 });
    assert!(app.story.iter().all(|s| matches!(s, Some(Ok(_)))));
    assert_eq!(app.shown().unwrap().outcome.strategy, Strategy::None);
    for _ in 0..8 {
        act(&mut app, Action::StoryNext);
    }
    assert_eq!(app.mode, Mode::Story { step: 6 });
    assert_eq!(app.shown().unwrap().outcome.schedule, ScheduleKind::PoF);
    for _ in 0..2 {
        act(&mut app, Action::StoryPrev);
    }
    assert_eq!(app.mode, Mode::Story { step: 4 });
    assert_eq!(app.shown().unwrap().outcome.strategy, Strategy::Lynx);
    act(&mut app, Action::StoryPrev);
    assert_eq!(app.mode, Mode::Story { step: 3 });
    act(&mut app, Action::ToggleStory);
    assert_eq!(app.mode, Mode::Normal);
}

/// On a scenario whose schedule offloads by itself, the story's strategy steps run its
/// order without offload (`gis`), so "keep every activation" keeps them on the device; the
/// last two steps are PipeOffload's.
#[test]
fn the_story_keeps_on_the_device_what_its_strategy_steps_say() {
    for kind in [
        ScheduleKind::PoH,
        ScheduleKind::PoF,
        ScheduleKind::GisOffload,
    ] {
        let mut app = solved_app("gpt3");
        app.scenario.plan.schedule = kind;
        app.scenario.parallel.chunks = 2;
        let effects = update(&mut app, Action::ToggleStory);
        let [Effect::Solve(job)] = effects.as_slice() else {
            panic!("{effects:?}")
        };
        let kinds: Vec<ScheduleKind> = job.scenarios.iter().map(|s| s.plan.schedule).collect();
        assert_eq!(kinds[0], kind, "the scenario itself");
        assert!(
            kinds[1..6].iter().all(|&k| k == ScheduleKind::Gis),
            "{kinds:?}"
        );
        assert_eq!(&kinds[6..], &[ScheduleKind::PoH, ScheduleKind::PoF]);
    }
}

#[test]
fn save_without_a_toml_writer_reports_or_saves() {
    let mut app = solved_app("gpt3");
    let effects = update(&mut app, Action::SavePreset);
    match effects.as_slice() {
        [Effect::Save { file_name, text }] => {
            assert_eq!(file_name, "my-gpt3-175b-16k.toml");
            assert!(!text.is_empty());
        }
        [] => assert!(app.error.is_some()),
        other => panic!("unexpected {other:?}"),
    }
    act(&mut app, Action::Saved(Ok("/tmp/x.toml".into())));
    assert_eq!(app.note.as_deref(), Some("saved /tmp/x.toml"));
    act(&mut app, Action::Saved(Err("disk full".into())));
    assert!(app.error.as_deref().unwrap().contains("disk full"));
}

/// The text the `w` key would save.
fn saved_text(app: &mut pipescope::tui::App) -> String {
    match update(app, Action::SavePreset).as_slice() {
        [Effect::Save { text, .. }] => text.clone(),
        other => panic!("expected a save, got {other:?}"),
    }
}

#[test]
fn a_typed_budget_stays_typed_when_the_gpu_cycles_and_is_saved_as_typed() {
    let mut app = solved_app("gpt3");
    app.field = Field::Budget;
    for c in "60".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    assert_eq!(app.scenario.plan.memory_budget_bytes, 60 << 30);
    act(&mut app, Action::CycleGpu(1));
    assert_eq!(app.scenario.gpu.name, "h100-80gb");
    // The budget is the one typed, and the reserve says so (it is not a reserve of 0).
    assert_eq!(app.scenario.plan.memory_budget_bytes, 60 << 30);
    assert_eq!(app.scenario.plan.reserve_bytes, None);
    assert_eq!(Field::Reserve.value(&app.scenario), "– (budget)");
    let text = saved_text(&mut app);
    assert!(text.contains("memory_budget_gib = 60.0"), "{text}");
    assert!(!text.contains("reserve_gib"), "{text}");
    let saved: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(saved["plan"]["memory_budget_gib"].as_float(), Some(60.0));
    let screen = format!("{}", render(&mut app, 80, 24));
    assert!(
        screen.contains("60.0 GiB") && screen.contains("(budget)"),
        "{screen}"
    );
}

#[test]
fn a_reserve_follows_the_gpu_and_is_saved_as_a_reserve() {
    let mut app = solved_app("gpt3");
    app.field = Field::Reserve;
    for c in "12".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    act(&mut app, Action::CycleGpu(1));
    let memory = app.scenario.gpu.memory_bytes();
    assert_eq!(app.scenario.plan.reserve_bytes, Some(12 << 30));
    assert_eq!(app.scenario.plan.memory_budget_bytes, memory - (12 << 30));
    let text = saved_text(&mut app);
    assert!(text.contains("reserve_gib = 12.0"), "{text}");
    assert!(!text.contains("memory_budget_gib"), "{text}");
}

#[test]
fn a_reload_keeps_the_edited_reserve_and_its_budget_together() {
    let mut app = solved_app("gpt3");
    let path = std::path::PathBuf::from("/cfg/pipescope/presets/mine.toml");
    let mut file = fixture::scenario("gpt3");
    file.keep_free(10 << 30).unwrap();
    app.scenario = file.clone();
    app.preset_source = Some(path.clone());
    app.preset_base = Some(file.clone());
    // The user keeps 12 GiB free; the file then changes the sequence length.
    app.field = Field::Reserve;
    for c in "12".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    let mut changed = file;
    changed.batch.seq_len /= 2;
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Preset(
            path,
            Ok(Box::new(parsed(changed))),
        ))),
    );
    let plan = &app.scenario.plan;
    assert_eq!(plan.reserve_bytes, Some(12 << 30));
    assert_eq!(
        plan.memory_budget_bytes,
        app.scenario.gpu.memory_bytes() - (12 << 30)
    );
    assert_eq!(app.scenario.batch.seq_len, 8192);
}

#[test]
fn an_edit_that_changes_nothing_says_why_on_the_status_line() {
    let mut app = solved_app("gpt3");
    // Chunks on a one-chunk schedule.
    app.field = Field::Chunks;
    for c in "200".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    let note = app.note.clone().unwrap_or_default();
    assert!(
        note.contains("changes nothing") && note.contains("1f1b"),
        "{note}"
    );
    let screen = format!("{}", render(&mut app, 200, 60));
    assert!(screen.contains("changes nothing"), "{screen}");
    act(&mut app, Action::Increase);
    assert!(
        app.note
            .clone()
            .unwrap_or_default()
            .contains("changes nothing")
    );
    // A number typed on the GPU field.
    app.field = Field::Gpu;
    act(&mut app, Action::Type('4'));
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("gpu takes no number"), "{note}");
    // + on the tensor size at the node size.
    app.field = Field::Tp;
    app.scenario.parallel.tp = 8;
    act(&mut app, Action::Increase);
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("node size"), "{note}");
    assert_eq!(app.scenario.parallel.tp, 8);
}

#[test]
fn theme_cycles_through_the_builtins() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::CycleTheme);
    assert_eq!(app.theme.name, "light");
    for _ in 0..3 {
        act(&mut app, Action::CycleTheme);
    }
    assert_eq!(app.theme.name, "dark");
}

#[test]
fn mouse_clicks_select_fields_and_stages_and_wheel_zooms() {
    let mut app = solved_app("gpt3");
    render(&mut app, 160, 48);
    // Two header lines; params panel: border at row 2, fields from row 3.
    act(&mut app, Action::Click(3, 3 + 9));
    assert_eq!(app.field, Field::SeqLen);
    // Gantt: two rows per device from row 3 (the fixture has no visible transfers, so the
    // second lane is the memory sparkline); device 3 at row 3 + 3 * 2.
    act(&mut app, Action::Click(60, 3 + 3 * 2));
    assert_eq!(app.stage, 3);
    act(&mut app, Action::Scroll(60, 3 + 3 * 2, 1));
    assert!(app.viewport.span < 1.0);
    act(&mut app, Action::Scroll(60, 3 + 3, -1));
    assert_eq!(app.viewport, Viewport::FIT);
    // Outside anything: nothing changes, nothing to redraw.
    app.dirty = false;
    act(&mut app, Action::Click(159, 47));
    assert!(!app.dirty);
}

#[test]
fn the_parameters_panel_scrolls_to_the_selected_field_and_clicks_follow_it() {
    let mut app = solved_app("gpt3");
    // At 80x24 the panel has fewer rows than fields: the last field scrolls into view.
    app.field = Field::Model;
    act(&mut app, Action::PrevField);
    let fields = Field::shown_in(&app.scenario);
    let last = *fields.last().unwrap();
    assert_eq!(app.field, last);
    let screen = render(&mut app, 80, 24).to_string();
    assert!(screen.contains(last.label()), "{screen}");
    assert!(screen.contains("more ┐"), "{screen}");
    assert!(!screen.contains("model "), "{screen}");
    // Every field is reachable, and shown when selected.
    for f in fields.iter().copied() {
        act(&mut app, Action::SelectField(f));
        let screen = render(&mut app, 80, 24).to_string();
        let row = screen
            .lines()
            .find(|l| l.contains(&format!("│{}", f.label())))
            .unwrap_or_else(|| panic!("{f:?}\n{screen}"));
        assert!(row.contains(&f.value(&app.scenario)), "{row}");
    }
    // A click on the first row selects the first field shown, not the first of the list.
    act(&mut app, Action::SelectField(last));
    render(&mut app, 80, 24);
    let rows = usize::from(
        pipescope::tui::regions(ratatui::layout::Rect::new(0, 0, 80, 24), &app)
            .params
            .height
            - 2,
    );
    let first = pipescope::tui::first_shown(&fields, last, rows);
    assert!(first > 0);
    act(&mut app, Action::Click(3, 3));
    assert_eq!(app.field, fields[first]);
}

#[test]
fn resize_records_the_size() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::Resize(100, 40));
    assert_eq!(app.size, (100, 40));
}

fn parsed(scenario: pipescope::Scenario) -> pipescope::tui::ParsedPreset {
    pipescope::tui::ParsedPreset {
        scenario: Some(scenario),
        choices: pipescope::tui::Choices::default(),
    }
}

#[test]
fn reloads_apply_good_files_and_keep_the_last_good_on_errors() {
    let mut app = solved_app("gpt3");
    let path = std::path::PathBuf::from("/cfg/pipescope/presets/mine.toml");
    app.preset_source = Some(path.clone());
    let mut edited = fixture::scenario("gpt3");
    edited.batch.micro_batches = 7;
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Preset(
            path.clone(),
            Ok(Box::new(parsed(edited))),
        ))),
    );
    assert_eq!(app.scenario.batch.micro_batches, 7);
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Preset(
            path.clone(),
            Err("mine.toml:3:9: expected a number".into()),
        ))),
    );
    assert_eq!(app.scenario.batch.micro_batches, 7);
    let screen = render(&mut app, 120, 30).to_string();
    assert!(screen.contains("mine.toml:3:9"), "{screen}");
    let mut fixed = fixture::scenario("gpt3");
    fixed.batch.micro_batches = 9;
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Preset(
            path.clone(),
            Ok(Box::new(parsed(fixed))),
        ))),
    );
    assert!(app.reload_errors.is_empty());
    assert_eq!(app.scenario.batch.micro_batches, 9);
    // Themes: the active one is replaced in place.
    let mut t = Theme::builtin("dark");
    t.colors.forward = ratatui::style::Color::Red;
    act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Theme(
            "/t/dark.toml".into(),
            Ok(Box::new(t)),
        ))),
    );
    assert_eq!(app.theme.colors.forward, ratatui::style::Color::Red);
}

fn key(c: char) -> Action {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    Action::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

fn code(code: crossterm::event::KeyCode) -> Action {
    use crossterm::event::{KeyEvent, KeyModifiers};
    Action::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// PgDn past the end of the help stops there, so one PgUp scrolls back at once.
#[test]
fn help_scrolling_stops_at_the_end() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::ToggleHelp);
    let title = |app: &mut pipescope::tui::App| {
        render(app, 80, 24)
            .to_string()
            .lines()
            .find(|l| l.contains(" help "))
            .unwrap_or_default()
            .to_string()
    };
    for _ in 0..30 {
        act(&mut app, Action::HelpScroll(10));
    }
    let end = title(&mut app);
    assert!(end.contains('↑') && !end.contains('↓'), "{end}");
    act(&mut app, Action::HelpScroll(-10));
    let back = title(&mut app);
    assert_ne!(back, end);
    assert!(back.contains('↓'), "{back}");
}

/// The help filter filters the notes and glossary under the keys too.
#[test]
fn help_filter_hides_the_glossary_lines_that_do_not_match() {
    let mut app = solved_app("gpt3");
    act(&mut app, key('?'));
    act(&mut app, key('/'));
    for c in "sweep".chars() {
        act(&mut app, key(c));
    }
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.to_lowercase().contains("sweep"), "{screen}");
    for note in ["1F1B-R:", "MFU:", "Gantt: █", "Parameters (", "Theme "] {
        assert!(!screen.contains(note), "{note}\n{screen}");
    }
    // A word of the glossary alone shows its line.
    act(&mut app, code(crossterm::event::KeyCode::Esc));
    act(&mut app, key('/'));
    for c in "baseline".chars() {
        act(&mut app, key(c));
    }
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("1F1B-R:"), "{screen}");
    assert!(!screen.contains("no key matches"), "{screen}");
}

/// Keys wider than the help's key column (the layout editor's) keep their description on
/// their own row.
#[test]
fn help_rows_with_long_keys_start_their_description_beside_them() {
    let mut app = solved_app("gpt3");
    act(&mut app, key('?'));
    act(&mut app, key('/'));
    for c in "layout editor".chars() {
        act(&mut app, key(c));
    }
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = render(&mut app, w, h).to_string();
        let row = screen
            .lines()
            .find(|l| l.contains("Home ^A"))
            .unwrap_or_default();
        assert!(row.contains("Layout editor"), "{w}x{h}\n{screen}");
    }
}

#[test]
fn help_filter_takes_typed_keys_and_hides_other_lines() {
    use crossterm::event::KeyCode;
    let mut app = solved_app("gpt3");
    act(&mut app, key('?'));
    act(&mut app, key('/'));
    assert!(app.help_typing);
    // 'q' and 'z' are typed into the filter, not taken as quit / zoom.
    for c in "zoom".chars() {
        act(&mut app, key(c));
    }
    assert!(!app.quit);
    assert_eq!(app.help_query, "zoom");
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("Gantt: zoom in"), "{screen}");
    assert!(!screen.contains("Quit pipescope"), "{screen}");
    act(&mut app, code(KeyCode::Enter));
    assert!(!app.help_typing);
    assert_eq!(app.help_query, "zoom");
    // With the filter kept, keys work again: q quits.
    act(&mut app, key('x'));
    assert_eq!(app.help_query, "zoom");
    act(&mut app, key('/'));
    act(&mut app, key('q'));
    act(&mut app, code(KeyCode::Backspace));
    act(&mut app, key('y'));
    assert_eq!(app.help_query, "zoomy");
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("no key matches 'zoomy'"), "{screen}");
    act(&mut app, code(KeyCode::Esc));
    assert!(app.help_query.is_empty() && !app.help_typing && app.help);
    act(&mut app, code(KeyCode::Esc));
    assert!(!app.help);
    act(&mut app, key('q'));
    assert!(app.quit);
}

#[test]
fn slash_outside_help_explains_itself() {
    let mut app = solved_app("gpt3");
    act(&mut app, key('/'));
    assert!(app.note.as_deref().unwrap().contains("press ?"));
}

#[test]
fn mouse_toggle_and_suspend_ask_the_runner() {
    let mut app = solved_app("gpt3");
    assert!(app.mouse);
    assert_eq!(update(&mut app, key('v')), vec![Effect::Mouse(false)]);
    assert!(!app.mouse);
    assert!(app.note.as_deref().unwrap().contains("released"));
    assert_eq!(update(&mut app, key('v')), vec![Effect::Mouse(true)]);
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let ctrl_z = KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(update(&mut app, Action::Key(ctrl_z)), vec![Effect::Suspend]);
}

#[test]
fn a_long_error_wraps_above_the_hints() {
    let mut app = solved_app("gpt3");
    app.error = Some(format!(
        "invalid parallel.pp = 9999: {} END",
        "y".repeat(30)
    ));
    let screen = render(&mut app, 100, 30).to_string();
    let mut lines = screen
        .lines()
        .rev()
        .filter(|l| !l.trim_matches('"').trim().is_empty());
    let last = lines.next().unwrap();
    let above = lines.next().unwrap();
    assert!(last.contains("q quit"), "{last}");
    assert!(above.contains("END") && above.contains("9999"), "{above}");
}

#[test]
fn typing_replaces_the_last_error_with_a_hint() {
    let mut app = solved_app("gpt3");
    app.field = Field::MicroBatchSize;
    act(&mut app, Action::Type('.'));
    act(&mut app, Action::Commit);
    assert!(app.error.as_deref().unwrap().contains("mb size"));
    act(&mut app, Action::Type('2'));
    assert!(app.error.is_none());
    let screen = render(&mut app, 100, 30).to_string();
    assert!(screen.contains("typing mb size: Enter applies"), "{screen}");
    for _ in 0..12 {
        act(&mut app, Action::Type('9'));
    }
    assert!(
        render(&mut app, 100, 30)
            .to_string()
            .contains("number too long")
    );
}

#[test]
fn cycling_the_compare_side_skips_side_a_strategy() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::ToggleCompare);
    let a = app.pinned.as_ref().unwrap().plan.strategy;
    for _ in 0..2 * Strategy::ALL.len() {
        act(&mut app, Action::CycleCompare);
        assert_eq!(app.mode, Mode::Compare);
        assert_ne!(app.scenario.plan.strategy, a);
    }
}

#[test]
fn panning_the_full_view_says_how_to_zoom() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::PanRight);
    assert_eq!(app.viewport, Viewport::FIT);
    assert!(app.note.as_deref().unwrap().contains("z zooms in"));
}

#[test]
fn a_note_lasts_until_the_next_action() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::CycleTheme);
    assert!(app.note.is_some());
    act(&mut app, Action::Resize(120, 40));
    assert!(app.note.is_some());
    act(&mut app, Action::NextStage);
    assert!(app.note.is_none());
}

/// Types `text` into the selected field and applies it.
fn type_in(app: &mut pipescope::tui::App, text: &str) {
    for c in text.chars() {
        act(app, Action::Type(c));
    }
    act(app, Action::Commit);
}

#[test]
fn the_command_line_settings_are_fields_of_the_panel() {
    use pipescope::{Objective, Partition};
    let mut app = solved_app("gpt3");
    // Two data-parallel ranks: the gradient overlap has a reduction to hide (at d 1 on 1f1b
    // it is refused, as on the command line).
    app.scenario.parallel.dp = 2;
    let before = app.scenario.clone();
    // Each toggle or cycle changes its setting and solves again.
    for (field, check) in [
        (
            Field::Flash,
            (|a, b| a.plan.flash_attention != b.plan.flash_attention)
                as fn(&pipescope::Scenario, &pipescope::Scenario) -> bool,
        ),
        (Field::Partition, |a, b| {
            a.plan.partition != b.plan.partition
        }),
        (Field::Objective, |a, b| {
            a.plan.objective != b.plan.objective
        }),
        (Field::OverlapGradReduce, |a, b| {
            a.plan.overlap_grad_reduce != b.plan.overlap_grad_reduce
        }),
        (Field::GradBytes, |a, b| {
            a.parallel.grad_bytes != b.parallel.grad_bytes
        }),
    ] {
        act(&mut app, Action::SelectField(field));
        let effects = update(&mut app, Action::Increase);
        assert!(
            check(&solve_job(&effects).scenarios[0], &before),
            "{field:?}"
        );
        tui_common::run_effects(&mut app, effects);
    }
    assert_eq!(app.scenario.plan.partition, Partition::Balanced);
    assert_eq!(app.scenario.plan.objective, Objective::AdaPipe);
    assert_eq!(app.scenario.parallel.grad_bytes, 2);
    assert_eq!(Field::GradBytes.value(&app.scenario), "2 bytes");
    // Typed numbers: gradient bytes are 2 or 4.
    type_in(&mut app, "4");
    assert_eq!(app.scenario.parallel.grad_bytes, 4);
    type_in(&mut app, "3");
    let e = app.error.clone().unwrap();
    assert!(
        e.contains("grad size = '3'") && e.contains("2 (16-bit"),
        "{e}"
    );
    // The global batch sets m = B / (b x d), and refuses a B that is not a multiple.
    app.scenario.plan.overlap_grad_reduce = false;
    app.scenario.parallel.dp = 1;
    act(&mut app, Action::SelectField(Field::GlobalBatch));
    app.scenario.batch.micro_batch_size = 2;
    type_in(&mut app, "96");
    assert_eq!(app.scenario.batch.micro_batches, 48);
    assert_eq!(Field::GlobalBatch.value(&app.scenario), "96");
    type_in(&mut app, "97");
    let e = app.error.clone().unwrap();
    assert!(
        e.contains("global B = '97'") && e.contains("multiple"),
        "{e}"
    );
    assert_eq!(app.scenario.batch.micro_batches, 48);
    // A step moves m by one and says so.
    act(&mut app, Action::Increase);
    assert_eq!(app.scenario.batch.micro_batches, 49);
    let note = app.note.clone().unwrap();
    assert!(note.contains("global B 98 = m 49 x b 2 x d 1"), "{note}");
}

fn press(app: &mut pipescope::tui::App, code: crossterm::event::KeyCode) {
    act(app, Action::Key(crossterm::event::KeyEvent::from(code)));
}

#[test]
fn the_units_picker_makes_the_named_strategy_usable() {
    use crossterm::event::KeyCode;
    let mut app = solved_app("gpt3");
    // Cycling onto `named` says how to pick its units.
    act(&mut app, Action::SelectField(Field::Strategy));
    while app.scenario.plan.strategy != Strategy::Named {
        act(&mut app, Action::Increase);
    }
    assert!(app.note.as_deref().unwrap().contains("u"), "{:?}", app.note);
    act(&mut app, Action::SelectField(Field::Strategy));
    act(&mut app, Action::Decrease);
    let before = app.scenario.plan.strategy;
    assert_ne!(before, Strategy::Named);
    // u opens the picker; the arrows move in it, space picks a unit.
    press(&mut app, KeyCode::Char('u'));
    assert_eq!(app.picker, Some(0));
    let field = app.field;
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.picker, Some(2));
    assert_eq!(
        app.field, field,
        "the arrows move the picker, not the fields"
    );
    let entries = pipescope::tui::picker_entries(app.solved.as_ref().unwrap());
    let effects = update(&mut app, Action::Key(KeyCode::Char(' ').into()));
    let job = solve_job(&effects);
    assert_eq!(job.scenarios[0].plan.strategy, Strategy::Named);
    assert_eq!(
        job.scenarios[0].plan.recompute_units,
        vec![entries[2].qualified()]
    );
    tui_common::run_effects(&mut app, effects);
    let note = app.note.clone().unwrap();
    assert!(
        note.contains(&format!("strategy {before} → named")),
        "the switch is said: {note}"
    );
    let screen = render(&mut app, 80, 24).to_string();
    assert!(
        screen.contains(&format!("[R] {}", entries[2].qualified())),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
    // Enter toggles too; the unit is kept again.
    press(&mut app, KeyCode::Enter);
    assert!(app.scenario.plan.recompute_units.is_empty());
    assert!(app.note.as_deref().unwrap().ends_with("kept"));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.picker, None);
}
