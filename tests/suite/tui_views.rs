//! Snapshots and checks of the views that show every stage: every stage reachable, the
//! chunks of a V told apart, time bars, the details overlay, infeasible plans and
//! compare with a pinned side A. Each view at 80x24, 120x40 and 200x60, and in mono.

use crate::tui_common;

use insta::assert_snapshot;
use pipescope::tui::{Action, App, Details, Theme, resolve};
use pipescope::{ScheduleKind, Strategy};
use tui_common::{act, render, run_effects, solved_app};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// `app` with its scenario changed by `edit` and solved again.
fn edited(mut app: App, edit: impl FnOnce(&mut App)) -> App {
    edit(&mut app);
    let effects = resolve(&mut app);
    run_effects(&mut app, effects);
    app
}

fn mono(mut app: App) -> App {
    app.theme = Theme::builtin("mono");
    app
}

/// 16 stages (more than the rows at 80x24), the stage `s` selected.
fn many_stages(s: u32) -> App {
    let mut app = edited(solved_app("gpt3-175b-16k"), |a| a.scenario.parallel.pp = 16);
    for _ in 0..s {
        act(&mut app, Action::NextStage);
    }
    app
}

#[test]
fn the_selected_stage_scrolls_into_view_at_every_size() {
    for (w, h) in SIZES {
        let mut app = many_stages(13);
        let screen = render(&mut app, w, h).to_string();
        // The Gantt row and the memory row of s13 are drawn.
        assert!(screen.matches("s13 ").count() >= 2, "{w}x{h}\n{screen}");
        let mut app = many_stages(0);
        let screen = render(&mut app, w, h).to_string();
        assert!(screen.contains("s0 "), "{w}x{h}\n{screen}");
    }
}

#[test]
fn many_stages_scrolled_80x24() {
    assert_snapshot!(render(&mut many_stages(13), 80, 24));
}

#[test]
fn many_stages_scrolled_120x40_mono() {
    assert_snapshot!(render(&mut mono(many_stages(15)), 120, 40));
}

#[test]
fn clicking_a_scrolled_gantt_row_selects_that_stage() {
    let mut app = many_stages(13);
    let screen = render(&mut app, 80, 24).to_string();
    let row = screen
        .lines()
        .position(|l| l.contains("│s13 "))
        .expect("s13 drawn") as u16;
    act(&mut app, Action::NextStage);
    act(&mut app, Action::PrevStage);
    act(&mut app, Action::Click(40, row));
    assert_eq!(app.stage, 13);
}

fn v_shape() -> App {
    let mut app = edited(solved_app("llama2-70b-4k"), |a| {
        a.scenario.plan.schedule = ScheduleKind::ZbV;
    });
    for _ in 0..4 {
        act(&mut app, Action::ZoomIn);
    }
    app
}

#[test]
fn a_v_shape_shows_its_second_chunk_apart() {
    for (w, h) in SIZES {
        let mut app = mono(v_shape());
        let screen = render(&mut app, w, h).to_string();
        // Second-chunk ops: lower-part glyphs, lower-case labels where they fit.
        assert!(
            screen.contains('▆') || screen.contains('▄') || screen.contains('▂'),
            "{w}x{h}\n{screen}"
        );
    }
    let mut app = mono(v_shape());
    let screen = render(&mut app, 200, 60).to_string();
    assert!(screen.contains("f1") || screen.contains("b1"), "{screen}");
}

#[test]
fn v_shape_zoomed_120x40_mono() {
    assert_snapshot!(render(&mut mono(v_shape()), 120, 40));
}

#[test]
fn v_shape_zoomed_200x60() {
    assert_snapshot!(render(&mut v_shape(), 200, 60));
}

#[test]
fn time_bars_beside_memory_bars_200x60() {
    let mut app = solved_app("gpt3-175b-16k");
    let screen = render(&mut app, 200, 60).to_string();
    assert!(
        screen.contains("time: compute recomp comm idle"),
        "{screen}"
    );
    assert_snapshot!(screen);
}

#[test]
fn time_bars_120x40_mono() {
    assert_snapshot!(render(&mut mono(solved_app("gpt3-175b-16k")), 120, 40));
}

fn stage_details() -> App {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::NextStage);
    act(&mut app, Action::Commit);
    assert_eq!(app.details, Some(Details::Stage(1)));
    app
}

#[test]
fn enter_shows_the_stage_breakdown_at_every_size() {
    for (w, h) in SIZES {
        let screen = render(&mut stage_details(), w, h).to_string();
        for needle in [
            "stage s1",
            "static",
            "kept activations",
            "compute",
            "bubble",
        ] {
            assert!(screen.contains(needle), "{needle} at {w}x{h}\n{screen}");
        }
    }
    let mut app = stage_details();
    act(&mut app, Action::NextStage);
    assert_eq!(app.details, Some(Details::Stage(2)));
    act(&mut app, Action::Close);
    assert_eq!(app.details, None);
}

#[test]
fn stage_details_80x24() {
    assert_snapshot!(render(&mut stage_details(), 80, 24));
}

#[test]
fn stage_details_120x40_mono() {
    assert_snapshot!(render(&mut mono(stage_details()), 120, 40));
}

#[test]
fn a_click_on_an_op_shows_its_details() {
    let mut app = solved_app("llama2-70b-4k");
    let screen = render(&mut app, 120, 40).to_string();
    let row = screen.lines().position(|l| l.contains("│s1 ")).unwrap() as u16;
    // Columns from the middle of the Gantt until one hits an op (idle cells hit nothing).
    for x in 60..110 {
        act(&mut app, Action::Click(x, row));
        if app.details.is_some() {
            break;
        }
    }
    let Some(Details::Op(span)) = app.details else {
        panic!("no op under row s1: {:?}", app.details)
    };
    assert_eq!(span.device, 1);
    let screen = render(&mut app, 120, 40).to_string();
    for needle in [
        "micro-batch",
        "chunk",
        "start",
        "end",
        "duration",
        "recompute",
    ] {
        assert!(screen.contains(needle), "{needle}\n{screen}");
    }
    assert_snapshot!(screen);
}

fn infeasible() -> App {
    edited(solved_app("gpt3-175b-16k"), |a| {
        a.scenario.plan.strategy = Strategy::None;
    })
}

#[test]
fn an_infeasible_plan_says_why_not_how_fast() {
    for (w, h) in SIZES {
        let mut app = infeasible();
        assert!(!app.solved.as_ref().unwrap().outcome.feasible);
        let screen = render(&mut app, w, h).to_string();
        let header = screen.lines().next().unwrap();
        assert!(header.contains("does not fit"), "{header}");
        assert!(!header.contains("MFU"), "{header}");
        assert!(!header.contains("vs 1F1B"), "{header}");
    }
}

#[test]
fn compare_between_two_infeasible_plans_claims_no_speed_up() {
    let mut app = infeasible();
    act(&mut app, Action::ToggleCompare);
    // B: also keep everything, with a different schedule.
    app.scenario.plan.strategy = Strategy::None;
    act(&mut app, Action::CycleSchedule(1));
    assert!(!app.shown().unwrap().outcome.feasible);
    assert!(!app.compare_solved().unwrap().outcome.feasible);
    for (w, h) in SIZES {
        let screen = render(&mut app, w, h).to_string();
        assert!(!screen.contains("faster"), "{w}x{h}\n{screen}");
        assert!(!screen.contains("slower"), "{w}x{h}\n{screen}");
    }
    let screen = render(&mut app, 200, 60).to_string();
    assert!(screen.contains("infeasible, as A"), "{screen}");
    assert!(screen.contains("schedule 1f1b→"), "{screen}");
}

#[test]
fn compare_pinned_a_edited_b_200x60() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleCompare);
    act(&mut app, Action::NextField);
    act(&mut app, Action::NextField);
    act(&mut app, Action::NextField);
    act(&mut app, Action::NextField);
    act(&mut app, Action::NextField);
    act(&mut app, Action::Increase);
    assert_snapshot!(render(&mut app, 200, 60));
}

#[test]
fn story_shows_the_step_strategy_and_names_the_compute_imbalance() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleStory);
    act(&mut app, Action::StoryNext);
    act(&mut app, Action::StoryNext);
    let screen = render(&mut app, 200, 60).to_string();
    assert!(screen.contains("compute imbalance"), "{screen}");
    assert!(screen.contains("strategy adaptive"), "{screen}");
    act(&mut app, Action::StoryPrev);
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("strategy full"), "{screen}");
}

#[test]
fn no_word_is_cut_in_the_status_bar_at_80_columns() {
    let mut app = solved_app("gpt3-175b-16k");
    app.error =
        Some("invalid parallel.pp = 400: at most 96 (one layer per stage) for this model".into());
    let screen = render(&mut app, 80, 24).to_string();
    let status = screen.lines().last().unwrap().trim_matches('"').trim_end();
    assert!(
        status.ends_with('…') || status.ends_with("model"),
        "{status}"
    );
}

fn lesson_at(step: usize) -> App {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleLesson);
    for _ in 0..step {
        act(&mut app, Action::StoryNext);
    }
    app
}

#[test]
fn the_lesson_shows_formulas_beside_the_simulation_at_every_size() {
    for (w, h) in SIZES {
        for step in 0..pipescope::tui::LESSON.len() {
            let mut app = lesson_at(step);
            let screen = render(&mut app, w, h).to_string();
            assert!(
                screen.contains(&format!(
                    "lesson {}/{}",
                    step + 1,
                    pipescope::tui::LESSON.len()
                )),
                "{w}x{h}\n{screen}"
            );
            assert!(screen.contains("textbook"), "{w}x{h}\n{screen}");
            assert!(screen.contains("simulated"), "{w}x{h}\n{screen}");
        }
    }
}

#[test]
fn lesson_p_and_m_are_edited_in_the_lesson() {
    let mut app = lesson_at(1);
    assert_eq!(app.field, pipescope::tui::Field::Stages);
    act(&mut app, Action::Increase);
    assert_eq!(app.lesson_size, (5, 8));
    // 1F1B: (p-1)/(m+p-1) = 4/12.
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("33.3%"), "{screen}");
    for _ in 0..4 {
        act(&mut app, Action::NextField);
    }
    act(&mut app, Action::Type('2'));
    act(&mut app, Action::Type('0'));
    act(&mut app, Action::Commit);
    assert_eq!(app.lesson_size, (5, 20));
    // The scenario itself is untouched.
    assert_eq!(app.scenario.batch.micro_batches, 64);
    act(&mut app, Action::Close);
    assert!(app.lesson.is_none());
}

#[test]
fn lesson_gpipe_80x24() {
    assert_snapshot!(render(&mut lesson_at(0), 80, 24));
}

#[test]
fn lesson_zb_h2_120x40() {
    assert_snapshot!(render(&mut lesson_at(4), 120, 40));
}

/// PipeOffload's PO-H in the lesson: the copy lane between each device's compute row and
/// its memory sparkline.
#[test]
fn lesson_po_h_120x40() {
    let step = pipescope::tui::LESSON
        .iter()
        .position(|&k| k == ScheduleKind::PoH)
        .unwrap();
    let screen = render(&mut lesson_at(step), 120, 40);
    let text = screen.to_string();
    assert!(text.contains("po-h") && text.contains('⇄'), "{text}");
    assert_snapshot!(screen);
}

#[test]
fn lesson_zb_v_200x60_mono() {
    assert_snapshot!(render(&mut mono(lesson_at(5)), 200, 60));
}

#[test]
fn cycling_keys_say_what_they_changed_and_the_gpu_keeps_the_headroom() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::CycleSchedule(1));
    let note = app.note.clone().unwrap_or_default();
    assert!(note.starts_with("schedule → "), "{note}");
    let gpu_bytes = app.scenario.gpu.memory_bytes();
    let headroom = gpu_bytes - app.scenario.plan.memory_budget_bytes;
    assert!(headroom > 0);
    act(&mut app, Action::CycleGpu(1));
    let note = app.note.clone().unwrap_or_default();
    assert!(note.starts_with("gpu → "), "{note}");
    assert_eq!(
        app.scenario.gpu.memory_bytes() - app.scenario.plan.memory_budget_bytes,
        headroom,
        "{note}"
    );
}
