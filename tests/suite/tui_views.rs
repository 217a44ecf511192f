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

/// DualPipe zoomed in: its overlapped F&B pairs carry one label each (`F5&b1`).
fn dualpipe() -> App {
    let mut app = edited(solved_app("llama2-70b-4k"), |a| {
        a.scenario.plan.schedule = ScheduleKind::DualPipe;
    });
    for _ in 0..4 {
        act(&mut app, Action::ZoomIn);
    }
    app
}

#[test]
fn dualpipe_draws_each_overlapped_pair_as_one_unit() {
    for (w, h) in SIZES {
        let mut app = dualpipe();
        assert!(app.error.is_none(), "{:?}", app.error);
        let screen = render(&mut app, w, h).to_string();
        assert!(screen.contains('&'), "{w}x{h}\n{screen}");
    }
}

#[test]
fn the_details_of_a_paired_op_name_the_other_half() {
    let mut app = dualpipe();
    let spans = app
        .solved
        .as_ref()
        .unwrap()
        .outcome
        .simulation
        .timeline
        .clone();
    let (f, b) = spans.pairs()[0];
    app.details = Some(Details::Op(spans.spans[b]));
    let screen = render(&mut app, 120, 40).to_string();
    let want = format!(
        "overlapped pair with the forward (F) of micro-batch {} (chunk {})",
        spans.spans[f].micro_batch, spans.spans[f].chunk
    );
    assert!(screen.contains(&want), "{want}\n{screen}");
    // An op that is not half of a pair says nothing of pairs.
    let lone = spans.spans.iter().find(|s| !s.paired).copied().unwrap();
    app.details = Some(Details::Op(lone));
    let screen = render(&mut app, 120, 40).to_string();
    assert!(!screen.contains("overlapped pair"), "{screen}");
}

#[test]
fn dualpipe_zoomed_200x60() {
    assert_snapshot!(render(&mut dualpipe(), 200, 60));
}

#[test]
fn dualpipe_zoomed_80x24_mono() {
    assert_snapshot!(render(&mut mono(dualpipe()), 80, 24));
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

/// A key press through the keymap, as the terminal sends it.
fn key(app: &mut App, code: crossterm::event::KeyCode) {
    act(app, Action::Key(crossterm::event::KeyEvent::from(code)));
}

#[test]
fn op_details_are_reached_and_stepped_from_the_keyboard() {
    use crossterm::event::KeyCode;
    let mut app = solved_app("llama2-70b-4k");
    let ops = |app: &App, d: u32| {
        let mut v: Vec<_> = app
            .solved
            .as_ref()
            .unwrap()
            .outcome
            .simulation
            .timeline
            .spans
            .iter()
            .filter(|s| s.device == d && s.lane == pipescope::Lane::Compute)
            .copied()
            .collect();
        v.sort_by(|a, b| a.start.total_cmp(&b.start));
        v
    };
    // Enter: the stage; → its first op, → the next, ← back.
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.details, Some(Details::Stage(0)));
    let field = app.field;
    let scenario = app.scenario.clone();
    key(&mut app, KeyCode::Right);
    assert_eq!(app.details, Some(Details::Op(ops(&app, 0)[0])));
    key(&mut app, KeyCode::Char('l'));
    assert_eq!(app.details, Some(Details::Op(ops(&app, 0)[1])));
    key(&mut app, KeyCode::Left);
    assert_eq!(app.details, Some(Details::Op(ops(&app, 0)[0])));
    // The arrows moved through ops, not the parameters.
    assert_eq!((app.field, &app.scenario), (field, &scenario));
    // ] moves to the op of the next stage nearest in time.
    key(&mut app, KeyCode::Char(']'));
    let Some(Details::Op(op)) = app.details else {
        panic!("{:?}", app.details)
    };
    assert_eq!(op.device, 1);
    let screen = render(&mut app, 80, 24).to_string();
    assert!(screen.contains("op on s1"), "{screen}");
    assert!(screen.contains("micro-batch"), "{screen}");
    // Zoomed in, stepping to the last op pans the Gantt to it.
    act(&mut app, Action::Close);
    for _ in 0..6 {
        act(&mut app, Action::ZoomIn);
    }
    let span = app.viewport.span;
    key(&mut app, KeyCode::Enter);
    for _ in 0..ops(&app, 1).len() {
        key(&mut app, KeyCode::Right);
    }
    let last = *ops(&app, 1).last().unwrap();
    assert_eq!(app.details, Some(Details::Op(last)));
    let m = app
        .solved
        .as_ref()
        .unwrap()
        .outcome
        .simulation
        .timeline
        .makespan;
    let vp = app.viewport;
    assert!((vp.span - span).abs() < 1e-12, "the zoom stays");
    assert!(vp.start * m <= last.start + 1e-9 && last.end <= (vp.start + vp.span) * m + 1e-9);
    assert_snapshot!(render(&mut app, 80, 24));
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

/// README: "The header gives the GPU count and global batch at every width", also for the
/// long "does not fit" header with large figures (a DeepSeek-V3 sized job) below 80 columns.
#[test]
fn an_infeasible_header_keeps_the_gpus_and_the_batch_at_every_width() {
    let mut app = infeasible();
    let o = &mut app.solved.as_mut().unwrap().outcome;
    o.gpus = 1024;
    o.global_batch = 4096;
    o.iteration_time_s = 24.92;
    for s in &mut o.stages {
        s.peak_memory_bytes = 118 * (1 << 30) + (1 << 29);
    }
    for w in [60, 64, 70, 75, 80, 100] {
        let screen = render(&mut app, w, 20).to_string();
        let header = screen.lines().next().unwrap();
        assert!(header.contains("does not fit"), "{w}: {header}");
        assert!(header.contains("GPUs 1024"), "{w}: {header}");
        assert!(header.contains("batch 4096"), "{w}: {header}");
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

/// The "B is ..." verdict for a pinned A and a B with the strategies given (fixture gpt3:
/// `none` does not fit the budget, `full` fits).
fn verdict_of(a: Strategy, b: Strategy) -> String {
    let mut app = edited(solved_app("gpt3-175b-16k"), |x| {
        x.scenario.plan.strategy = a
    });
    act(&mut app, Action::ToggleCompare);
    app.scenario.plan.strategy = b;
    let effects = resolve(&mut app);
    run_effects(&mut app, effects);
    assert_eq!(
        app.compare_solved().unwrap().outcome.feasible,
        a != Strategy::None
    );
    assert_eq!(app.shown().unwrap().outcome.feasible, b != Strategy::None);
    let screen = render(&mut app, 200, 60).to_string();
    let line = screen.lines().nth(1).unwrap();
    let at = line.find("B is ").unwrap_or_else(|| panic!("{line}"));
    line[at..]
        .trim_end()
        .trim_end_matches('"')
        .trim_end()
        .to_string()
}

#[test]
fn compare_verdict_names_the_side_that_fits_in_all_four_cases() {
    assert_eq!(
        verdict_of(Strategy::Full, Strategy::None),
        "B is infeasible, A fits"
    );
    assert_eq!(
        verdict_of(Strategy::None, Strategy::Full),
        "B is feasible, A is not"
    );
    assert_eq!(
        verdict_of(Strategy::None, Strategy::None),
        "B is infeasible, as A"
    );
    let both = verdict_of(Strategy::Full, Strategy::AdaPipe);
    assert!(both.ends_with("× faster"), "{both}");
    let both = verdict_of(Strategy::AdaPipe, Strategy::Full);
    assert!(both.ends_with("× slower"), "{both}");
}

#[test]
fn compare_starts_with_b_equal_to_a_and_says_so() {
    for strategy in [Strategy::Full, Strategy::AdaPipe, Strategy::None] {
        let mut app = edited(solved_app("gpt3-175b-16k"), |x| {
            x.scenario.plan.strategy = strategy;
        });
        let before = app.scenario.clone();
        act(&mut app, Action::ToggleCompare);
        assert_eq!(app.scenario, before, "B is the pinned A");
        assert_eq!(app.pinned.as_ref(), Some(&before));
        assert!(app.note.as_deref().unwrap().contains("B starts equal to A"));
        for (w, h) in SIZES {
            let screen = render(&mut app, w, h).to_string();
            assert!(screen.contains("B (no change)"), "{w}x{h}\n{screen}");
        }
    }
}

#[test]
fn the_compare_header_shows_each_side_layout_at_every_size() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleCompare);
    act(&mut app, Action::SelectField(pipescope::tui::Field::Dp));
    act(&mut app, Action::Increase);
    for (w, h) in SIZES {
        let screen = render(&mut app, w, h).to_string();
        let mut lines = screen.lines();
        let (a, b) = (lines.next().unwrap(), lines.next().unwrap());
        assert!(a.contains("t8 p8 d1 64 GPUs batch 64 "), "{w}x{h}: {a}");
        assert!(b.contains("t8 p8 d2 128 GPUs batch 128 "), "{w}x{h}: {b}");
    }
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
    assert!(screen.contains("strategy  adaptive"), "{screen}");
    act(&mut app, Action::StoryPrev);
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("strategy  full"), "{screen}");
}

/// The status bar's text (every row under the body), joined with single spaces.
fn status_text(screen: &str, rows: usize) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    lines[lines.len() - rows..]
        .iter()
        .map(|l| l.trim_matches('"'))
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text inside the overlay whose top border starts with `title`, rows joined with
/// single spaces.
fn overlay_text(screen: &str, title: &str) -> String {
    let lines: Vec<Vec<char>> = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().collect())
        .collect();
    let title: Vec<char> = title.chars().collect();
    let (top, x) = lines
        .iter()
        .enumerate()
        .find_map(|(y, l)| {
            l.windows(title.len())
                .position(|w| w == title.as_slice())
                .map(|x| (y, x))
        })
        .unwrap_or_else(|| panic!("no overlay\n{screen}"));
    let right = x + lines[top][x..].iter().position(|&c| c == '┐').unwrap();
    let mut text = Vec::new();
    for l in &lines[top + 1..] {
        if l[x] == '└' {
            break;
        }
        text.push(l[x + 1..right].iter().collect::<String>());
    }
    text.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn no_word_is_cut_in_the_status_bar_at_80_columns() {
    let mut app = solved_app("gpt3-175b-16k");
    let msg = "invalid parallel.pp = 400: at most 96 (one layer per stage) for this model";
    app.error = Some(msg.into());
    let screen = render(&mut app, 80, 24).to_string();
    assert!(status_text(&screen, 2).contains(msg), "{screen}");
}

/// A reload error as serde and the preset reader write it (the path, the location, the
/// fields expected and the suggestion).
fn reload_error() -> String {
    "/home/someone/.config/pipescope/presets/trial.toml:20:1: unknown field `micro_batchs`, \
     expected one of `description`, `seq_len`, `micro_batch_size`, `micro_batches`; did you \
     mean `micro_batches`?"
        .to_string()
}

#[test]
fn a_reload_error_is_shown_whole_at_80_and_160_columns() {
    for (w, h) in [(80, 24), (160, 48), (200, 60)] {
        let mut app = solved_app("gpt3-175b-16k");
        app.reload_errors
            .insert("/x/trial.toml".into(), reload_error());
        let screen = render(&mut app, w, h).to_string();
        let status = status_text(&screen, 4);
        for piece in [
            "presets/trial.toml:20:1: unknown field `micro_batchs`",
            "did you mean `micro_batches`? (last good version kept)",
        ] {
            assert!(status.contains(piece), "{w}x{h}: {piece}\n{screen}");
        }
        assert!(screen.contains("q quit"), "{w}x{h}\n{screen}");
    }
}

#[test]
fn a_message_too_long_for_the_status_bar_ends_in_an_ellipsis_and_shows_whole_with_bang() {
    let mut app = solved_app("gpt3-175b-16k");
    let long: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    let long = long.join(" ");
    app.error = Some(long.clone());
    let screen = render(&mut app, 80, 24).to_string();
    // At most a sixth of the height (4 rows at 24), the last ending in the pointer to `!`.
    let status = status_text(&screen, 5);
    assert!(status.contains("… ! shows all"), "{screen}");
    assert!(!status.contains("word59"), "{screen}");
    act(&mut app, Action::ToggleMessages);
    let screen = render(&mut app, 80, 24).to_string();
    let overlay = overlay_text(&screen, "┌ messages");
    assert!(overlay.contains(&format!("✗ {long}")), "{screen}");
    act(&mut app, Action::Close);
    assert!(!app.messages);
}

#[test]
fn the_messages_overlay_lists_every_stage_that_does_not_fit() {
    let mut app = infeasible();
    act(&mut app, Action::ToggleMessages);
    let o = app.solved.as_ref().unwrap().outcome.clone();
    let screen = render(&mut app, 80, 24).to_string();
    for part in o.infeasible_reason.as_deref().unwrap().split("; ") {
        assert!(screen.contains(part), "{part}\n{screen}");
    }
    assert!(screen.contains("messages"), "{screen}");
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

/// The text of the lesson's narration panel on `screen`, rows joined with single spaces.
fn narration_text(screen: &str) -> String {
    overlay_text(screen, "┌ lesson ")
}

#[test]
fn the_lesson_narration_is_never_cut_it_scrolls_when_it_is_taller_than_its_panel() {
    use pipescope::tui::{LESSON, textbook};
    for (w, h) in SIZES {
        for step in 0..LESSON.len() {
            let mut app = lesson_at(step);
            let t = textbook(step, 4, 8);
            // Scroll through the whole narration (PgDn), collecting what is shown.
            let mut seen = String::new();
            for _ in 0..10 {
                let screen = render(&mut app, w, h).to_string();
                seen.push(' ');
                seen.push_str(&narration_text(&screen));
                act(&mut app, Action::LessonScroll(3));
            }
            let seen = seen.split_whitespace().collect::<Vec<_>>().join(" ");
            for piece in [t.why, t.bubble.0, t.peak.0, "simulated", "textbook"] {
                // Each piece's words, in order, across the rows (a long formula may wrap).
                let words: Vec<&str> = piece.split_whitespace().collect();
                let mut at = 0;
                for word in words {
                    let found = seen[at..].find(word);
                    assert!(
                        found.is_some(),
                        "{w}x{h} step {step}: {word} of {piece}\n{seen}"
                    );
                    at += found.unwrap_or(0) + word.len();
                }
            }
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
    // The lesson's fields are p and m alone: one step down is m.
    act(&mut app, Action::NextField);
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
fn lesson_dualpipe_120x40_shows_its_pairs_and_formulas() {
    let mut app = lesson_at(9);
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains("lesson 10/12: dualpipe"), "{screen}");
    // p 4, m 8: (p-2)/(3m+p-2) = 2/26 and p+1 = 5 stage-activations, simulated alike.
    assert!(screen.contains("= 7.7% · simulated 7.7%"), "{screen}");
    assert!(screen.contains("(one copy's stages) = 5.0 ·"), "{screen}");
    assert!(screen.contains("simulated 5.0"), "{screen}");
    assert!(screen.contains('&'), "a pair's one label\n{screen}");
    assert_snapshot!(screen);
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
fn cycling_keys_say_what_they_changed_and_the_gpu_keeps_the_reserve() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::CycleSchedule(1));
    let note = app.note.clone().unwrap_or_default();
    assert!(note.starts_with("schedule → "), "{note}");
    app.scenario.keep_free(10 << 30).unwrap();
    act(&mut app, Action::CycleGpu(1));
    let note = app.note.clone().unwrap_or_default();
    assert!(note.starts_with("gpu → "), "{note}");
    assert!(note.contains("less the 10.0 GiB reserve"), "{note}");
    assert_eq!(app.scenario.plan.reserve_bytes, Some(10 << 30));
    assert_eq!(
        app.scenario.gpu.memory_bytes() - app.scenario.plan.memory_budget_bytes,
        10 << 30,
        "{note}"
    );
}

#[test]
fn the_header_gives_gpus_and_batch_and_the_footer_o_i_e_at_every_size() {
    for (w, h) in [(80, 24), (100, 30), (120, 40), (160, 48), (200, 60)] {
        for mut app in [solved_app("gpt3-175b-16k"), infeasible()] {
            let o = app.solved.as_ref().unwrap().outcome.clone();
            let screen = render(&mut app, w, h).to_string();
            let header = screen.lines().next().unwrap();
            assert!(
                header.contains(&format!("GPUs {}", o.gpus)),
                "{w}x{h}: {header}"
            );
            assert!(
                header.contains(&format!("batch {}", o.global_batch)),
                "{w}x{h}: {header}"
            );
            let footer = screen.lines().last().unwrap();
            for hint in ["o sweep", "i lesson", "e export", "? help", "q quit"] {
                assert!(footer.contains(hint), "{w}x{h}: {footer}");
            }
        }
    }
}

#[test]
fn the_unit_grid_at_80x24_cuts_only_with_an_ellipsis() {
    use pipescope::tui::regions;
    let mut app = solved_app("gpt3-175b-16k");
    let screen = render(&mut app, 80, 24).to_string();
    let r = regions(ratatui::layout::Rect::new(0, 0, 80, 24), &app).units;
    let lines: Vec<Vec<char>> = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().collect())
        .collect();
    let (x0, x1) = (usize::from(r.x), usize::from(r.right()) - 1);
    // The title: whole, or ending in "…".
    let top: String = lines[usize::from(r.y)][x0..=x1].iter().collect();
    assert!(
        top.contains("stage 0 units") || top.contains("s0 units"),
        "{top}"
    );
    for y in r.y + 1..r.bottom() - 1 {
        let row = &lines[usize::from(y)][x0 + 1..x1];
        let last = row.iter().rev().find(|c| **c != ' ').copied();
        let full = row.last().is_some_and(|c| *c != ' ');
        // A row that reaches the border is either grid glyphs or cut with "…".
        if full {
            assert!(
                matches!(last, Some('…' | 'K' | 'R' | 'C' | 'O')),
                "row {y}: {}",
                row.iter().collect::<String>()
            );
        }
        let text: String = row.iter().collect();
        let name = text.split_whitespace().next().unwrap_or("");
        // Unit names longer than their column end in "…".
        if name.contains('.') && !name.ends_with('…') {
            assert!(
                ["emb.", "attn.", "mlp.", "head."]
                    .iter()
                    .any(|k| name.starts_with(k)),
                "{name}"
            );
        }
    }
}
