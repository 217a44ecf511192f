//! Snapshots of whole screens on ratatui's TestBackend, drawn from fixture solves (the
//! synthetic solver in `pipescope::tui::fixture`), so they are deterministic and do not
//! move when the engine's numbers change. The solve time is hidden.

use crate::tui_common;

use insta::assert_snapshot;
use pipescope::Strategy;
use pipescope::tui::Action;
use tui_common::{act, render, solved_app};

#[test]
fn main_gpt3_80x24() {
    assert_snapshot!(render(&mut solved_app("gpt3-175b-16k"), 80, 24));
}

#[test]
fn main_gpt3_160x48() {
    assert_snapshot!(render(&mut solved_app("gpt3-175b-16k"), 160, 48));
}

#[test]
fn main_llama_80x24() {
    assert_snapshot!(render(&mut solved_app("llama2-70b-4k"), 80, 24));
}

#[test]
fn main_llama_160x48() {
    assert_snapshot!(render(&mut solved_app("llama2-70b-4k"), 160, 48));
}

#[test]
fn help_overlay_80x24() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleHelp);
    assert_snapshot!(render(&mut app, 80, 24));
}

#[test]
fn compare_mode_160x48() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleCompare);
    assert_snapshot!(render(&mut app, 160, 48));
}

#[test]
fn compare_mode_80x24() {
    let mut app = solved_app("llama2-70b-4k");
    act(&mut app, Action::ToggleCompare);
    let screen = render(&mut app, 80, 24);
    // Both sides keep their peak memory at 80 columns (the bubble rate goes first).
    let text = format!("{screen}");
    for row in text.lines().take(2) {
        assert!(row.contains("peak"), "{row}");
    }
    assert_snapshot!(screen);
}

#[test]
fn story_mode_160x48() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleStory);
    act(&mut app, Action::StoryNext);
    assert_snapshot!(render(&mut app, 160, 48));
}

#[test]
fn story_mode_80x24_last_step() {
    let mut app = solved_app("llama2-70b-4k");
    act(&mut app, Action::ToggleStory);
    for _ in 0..6 {
        act(&mut app, Action::StoryNext);
    }
    assert_snapshot!(render(&mut app, 80, 24));
}

/// The story's PipeOffload step: PO-H on the same scenario, its sentence and its copies.
#[test]
fn story_po_h_160x48() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleStory);
    for _ in 0..5 {
        act(&mut app, Action::StoryNext);
    }
    let screen = render(&mut app, 160, 48);
    let text = screen.to_string();
    assert!(
        text.contains("PO-H") && text.contains("story 6/7"),
        "{text}"
    );
    assert_snapshot!(screen);
}

#[test]
fn infeasible_scenario_100x30() {
    let mut app = solved_app("gpt3-175b-16k");
    while app.scenario.plan.strategy != Strategy::None {
        act(&mut app, Action::CycleStrategy(-1));
    }
    assert!(!app.solved.as_ref().unwrap().outcome.feasible);
    assert_snapshot!(render(&mut app, 100, 30));
}

#[test]
fn zoomed_in_shows_micro_batch_numbers() {
    let mut app = solved_app("llama2-70b-4k");
    for _ in 0..4 {
        act(&mut app, Action::ZoomIn);
    }
    act(&mut app, Action::PanLeft);
    assert_snapshot!(render(&mut app, 120, 30));
}

#[test]
fn too_small_terminal() {
    assert_snapshot!(render(&mut solved_app("gpt3-175b-16k"), 40, 12));
}

#[test]
fn every_size_renders_without_panic() {
    let mut app = solved_app("gpt3-175b-16k");
    for w in (1..=240).step_by(7) {
        for h in (1..=80).step_by(5) {
            render(&mut app, w, h);
        }
    }
    act(&mut app, Action::ToggleCompare);
    act(&mut app, Action::ToggleHelp);
    for w in (1..=240).step_by(11) {
        for h in (1..=80).step_by(7) {
            render(&mut app, w, h);
        }
    }
    // Story mode, zoomed in, with a filtered help and a rejected edit on screen.
    act(&mut app, Action::ToggleStory);
    for _ in 0..8 {
        act(&mut app, Action::ZoomIn);
    }
    act(&mut app, Action::FilterHelp);
    app.help_query = "no such key at all".into();
    app.field = pipescope::tui::Field::Stages;
    for c in "999".chars() {
        act(&mut app, Action::Type(c));
    }
    act(&mut app, Action::Commit);
    for w in (1..=240).step_by(13) {
        for h in (1..=80).step_by(9) {
            render(&mut app, w, h);
        }
    }
}

/// A mixture of experts (qwen3-30b-a3b on H100s, t 1 x d 8, ep 8): the parameters end with
/// its expert fields, ep 8, the routing imbalance and the all-to-all overlap.
#[test]
fn main_moe_qwen3_160x48() {
    let catalog = pipescope::Catalog::builtin();
    let mut scenario = pipescope::tui::fixture::scenario("gpt3-175b-16k");
    pipescope::ScenarioOverrides {
        model: Some("qwen3-30b-a3b".into()),
        gpu: Some("h100-80gb".into()),
        pp: Some(4),
        tp: Some(1),
        dp: Some(8),
        ep: Some(8),
        seq_len: Some(4096),
        micro_batches: Some(32),
        ..Default::default()
    }
    .apply(&mut scenario, &catalog)
    .unwrap();
    let mut app = pipescope::tui::App::new(
        scenario,
        tui_common::choices(),
        pipescope::tui::Theme::builtin("dark"),
    );
    app.show_solve_time = false;
    let effects = pipescope::tui::resolve(&mut app);
    tui_common::run_effects(&mut app, effects);
    assert_eq!(app.error, None);
    let screen = render(&mut app, 160, 48);
    let text = screen.to_string();
    for field in ["expert ep 8", "imbalance 1.00", "a2a ovl   off"] {
        assert!(text.contains(field), "no {field:?}\n{text}");
    }
    assert_snapshot!(screen);
}

/// The job fields the command line has as flags (sends, connections, the two overlaps) in
/// the panel, the selected one scrolled into view at 80x24; a refused switch says the
/// engine's reason on the status line.
#[test]
fn job_fields_80x24() {
    let mut app = solved_app("llama2-70b-4k");
    act(
        &mut app,
        Action::SelectField(pipescope::tui::Field::DeviceConnections),
    );
    act(&mut app, Action::Increase);
    act(
        &mut app,
        Action::SelectField(pipescope::tui::Field::ParamGather),
    );
    act(&mut app, Action::Increase);
    let screen = render(&mut app, 80, 24);
    let text = format!("{screen}");
    for label in ["p2p", "dev conns 2", "param ag", "tp ovl"] {
        assert!(text.contains(label), "{label} missing:\n{text}");
    }
    assert_snapshot!(screen);
}

/// The same fields at 200x60, where the panel shows every field.
#[test]
fn job_fields_200x60() {
    let mut app = solved_app("llama2-70b-4k");
    act(&mut app, Action::SelectField(pipescope::tui::Field::P2p));
    act(&mut app, Action::Increase);
    let screen = render(&mut app, 200, 60);
    let text = format!("{screen}");
    for label in ["p2p       blocking", "dev conns", "param ag", "tp ovl"] {
        assert!(text.contains(label), "{label} missing:\n{text}");
    }
    assert_snapshot!(screen);
}

/// The story at the smallest size (60x20) keeps at least one stage row in its Gantt: the
/// narration gives way first.
#[test]
fn the_story_at_60x20_keeps_a_stage_row_in_its_gantt() {
    let mut app = solved_app("gpt3");
    act(&mut app, Action::ToggleStory);
    for (w, h) in [(60, 18), (60, 20), (70, 20), (80, 24)] {
        let screen = render(&mut app, w, h).to_string();
        let lines: Vec<&str> = screen.lines().collect();
        let top = lines
            .iter()
            .position(|l| l.contains("gantt ·"))
            .unwrap_or_else(|| panic!("{w}x{h}: no Gantt\n{screen}"));
        assert!(
            lines.get(top + 1).is_some_and(|l| l.contains("│s0 ")),
            "{w}x{h}\n{screen}"
        );
    }
}

/// At the smallest size the units panel shows every unit name whole (`attn.core_attn`,
/// never `attn…`): the memory bars give it room (peaks alone) and a unit's equal decisions
/// across the blocks read as one run (`K×10`) when the glyphs do not fit.
#[test]
fn units_names_whole_60x18() {
    let mut app = solved_app("llama2-70b-4k");
    let screen = render(&mut app, 60, 18);
    let text = format!("{screen}");
    assert!(!text.contains(".…"), "{text}");
    assert!(text.contains("attn.input"), "{text}");
    assert_snapshot!(screen);
}
