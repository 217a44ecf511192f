//! The preset picker (`P`): scenario presets (the current one marked, none for a scenario
//! made from flags alone), model and GPU presets in their own sections; typing filters,
//! Enter loads (a scenario whole, a model or a GPU alone), Esc closes. Snapshots at 80x24
//! and 200x60 (the end to end run in tmux is in `tui_e2e.rs`).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;

use pipescope::tui::{Action, App, PresetChoice, action_for, fixture, update};

use crate::tui_common::{render, run_effects, solved_app};

/// The gpt3 fixture made from flags alone, with the two fixture scenarios as presets.
fn app() -> App {
    let mut app = solved_app("gpt3");
    app.presets = ["gpt3", "llama"]
        .iter()
        .map(|n| {
            let scenario = fixture::scenario(n);
            PresetChoice {
                name: scenario.name.clone(),
                description: format!("{} on {}", scenario.model.name, scenario.gpu.name),
                scenario,
                source: None,
            }
        })
        .collect();
    app
}

fn key(app: &mut App, code: KeyCode) {
    let effects = update(app, Action::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    run_effects(app, effects);
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn marked(screen: &str, name: &str) -> bool {
    screen.lines().any(|l| l.contains(&format!("● {name} ")))
}

#[test]
fn p_lists_the_presets_and_marks_none_for_a_scenario_from_flags() {
    assert_eq!(
        action_for(KeyEvent::new(KeyCode::Char('P'), KeyModifiers::SHIFT)),
        Some(Action::OpenPresets)
    );
    let mut app = app();
    key(&mut app, KeyCode::Char('P'));
    assert!(app.preset_picker.is_some());
    let screen = render(&mut app, 120, 40).to_string();
    for s in [
        "scenarios",
        "models (changes only the model)",
        "GPUs (changes only the GPU)",
    ] {
        assert!(screen.contains(s), "{s}\n{screen}");
    }
    // From flags alone: no scenario preset is marked, though the name is the default's.
    assert!(!marked(&screen, "gpt3-175b-16k"), "{screen}");
    assert!(marked(&screen, "gpt3-175b"), "{screen}");
    assert!(marked(&screen, "a100-80gb"), "{screen}");
    key(&mut app, KeyCode::Esc);
    assert!(app.preset_picker.is_none());
}

#[test]
fn enter_loads_a_scenario_and_the_picker_then_marks_it() {
    let mut app = app();
    key(&mut app, KeyCode::Char('P'));
    type_text(&mut app, "llama2-70b-4k");
    key(&mut app, KeyCode::Enter);
    assert!(app.preset_picker.is_none());
    assert_eq!(app.scenario, fixture::scenario("llama"));
    assert_eq!(app.preset_name.as_deref(), Some("llama2-70b-4k"));
    assert!(app.solved.is_some() && !app.solving);
    key(&mut app, KeyCode::Char('P'));
    let screen = render(&mut app, 120, 40).to_string();
    assert!(marked(&screen, "llama2-70b-4k"), "{screen}");
    assert!(!marked(&screen, "gpt3-175b-16k"), "{screen}");
}

#[test]
fn a_model_or_a_gpu_changes_only_that() {
    let mut app = app();
    let before = app.scenario.clone();
    key(&mut app, KeyCode::Char('P'));
    // The filter keeps the llama scenario and the llama model: the second is the model.
    type_text(&mut app, "LLAMA2-70B");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.scenario.model, fixture::model_llama70());
    let mut expected = before.clone();
    expected.model = fixture::model_llama70();
    assert_eq!(app.scenario, expected);
    key(&mut app, KeyCode::Char('P'));
    type_text(&mut app, "h100");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.scenario.gpu.name, "h100-80gb");
    assert_eq!(app.scenario.model, fixture::model_llama70());
    assert_eq!(app.scenario.parallel, before.parallel);
    // A filter that keeps nothing says so; Enter then loads nothing.
    key(&mut app, KeyCode::Char('P'));
    type_text(&mut app, "zzz");
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("no preset matches 'zzz'"), "{screen}");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.scenario.gpu.name, "h100-80gb");
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    assert_eq!(app.preset_picker.as_ref().unwrap().query, "");
}

fn opened(w: u16, h: u16) -> ratatui::backend::TestBackend {
    let mut app = app();
    app.preset_name = Some("gpt3-175b-16k".into());
    key(&mut app, KeyCode::Char('P'));
    key(&mut app, KeyCode::Down);
    render(&mut app, w, h)
}

#[test]
fn preset_picker_80x24() {
    assert_snapshot!(opened(80, 24));
}

#[test]
fn preset_picker_200x60() {
    assert_snapshot!(opened(200, 60));
}
