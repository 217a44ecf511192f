//! The sweep view: its update flow (open, progress, answer, selection, load, cancellation
//! by an edit, the previous answer kept dimmed while the edited inputs are swept) with a
//! fixed sweep answer, snapshots at three sizes and in mono, an end to end run in tmux on the
//! fixture solver and the fixture's slow sweep, and one on the engine (Llama 3 70B on 64
//! H100s) edited several times in a row.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use insta::assert_snapshot;
use std::time::Duration;

use pipescope::tui::{Action, App, Effect, Field, SweepEvent, SweepInputs, Theme, fixture, update};

use crate::tmux_common::{Tmux, skip_without_tmux, temp_dir};
use crate::tui_common::{act, open_and_answer, render, solved_app, sweep_job};

#[test]
fn opening_sweeps_the_current_gpus_and_batch_and_enter_loads_a_configuration() {
    let mut app = solved_app("gpt3-175b-16k");
    let effects = update(&mut app, Action::OpenSweep);
    let (generation, inputs) = sweep_job(&effects).unwrap();
    assert_eq!((inputs.gpus, inputs.global_batch), (64, 64));
    assert!(app.sweep.open && app.sweep.running);
    // A stale report is dropped.
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Progress {
            generation: generation + 7,
            done: 3,
            total: 9,
        })),
    );
    assert_eq!(app.sweep.progress, (0, 0));
    let result = fixture::sweep::result(&inputs.base, 64, 64);
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation,
            result: Ok(Box::new(result.clone())),
        })),
    );
    assert!(!app.sweep.running);
    // Reopening for the same inputs keeps the answer (no new sweep).
    update(&mut app, Action::OpenSweep);
    assert!(sweep_job(&update(&mut app, Action::OpenSweep)).is_none());
    // ↓ twice, then Enter: the third fastest configuration becomes the scenario.
    let key = |c| Action::Key(crossterm::event::KeyEvent::from(c));
    act(&mut app, key(crossterm::event::KeyCode::Down));
    act(&mut app, key(crossterm::event::KeyCode::Char('j')));
    assert_eq!(app.sweep.selected, 2);
    let c = result.rows[result.ranked[2]].config;
    act(&mut app, key(crossterm::event::KeyCode::Enter));
    assert!(!app.sweep.open);
    let sc = &app.scenario;
    assert_eq!(
        (sc.parallel.tp, sc.parallel.pp, sc.parallel.dp),
        (c.t, c.p, c.d)
    );
    assert_eq!(
        (sc.batch.micro_batch_size, sc.batch.micro_batches),
        (c.b, c.m)
    );
    assert_eq!(sc.parallel.chunks, c.chunks);
    assert_eq!(sc.parallel.sequence_parallel, c.sp);
    assert_eq!(sc.parallel.distributed_optimizer, c.distributed_optimizer);
    assert_eq!(
        (sc.plan.schedule, sc.plan.strategy),
        (c.schedule, c.strategy)
    );
    let note = app.note.as_deref().unwrap();
    assert!(note.starts_with("loaded t"), "{note}");
    // The note names every enumerated dimension the config fixes: cp, zero, precision too.
    for part in [
        format!(" cp {} ", c.cp),
        format!(" zero {} ", c.zero.level()),
        format!(" {} ", c.precision.name()),
    ] {
        assert!(note.contains(&part), "{part:?} in {note}");
    }
    // Loading keeps the GPU count and batch: the answer still stands.
    assert!(app.sweep.answer().is_some());
}

#[test]
fn an_edit_cancels_the_running_sweep_and_the_open_view_sweeps_the_new_scenario() {
    let mut app = solved_app("gpt3-175b-16k");
    let (first, _) = sweep_job(&update(&mut app, Action::OpenSweep)).unwrap();
    // In the view, the model key still edits: the old sweep is replaced by a new one.
    let effects = update(&mut app, Action::CycleModel(1));
    let (second, inputs) = sweep_job(&effects).expect("a new sweep");
    assert!(second > first);
    assert_eq!(inputs.base.model.name, "llama2-70b");
    assert_eq!(app.sweep.cancelled, 1);
    // The old sweep's answer arrives late and is dropped.
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation: first,
            result: Err("late".into()),
        })),
    );
    assert!(app.sweep.running && app.sweep.result.is_none());
    // With the view closed, an edit of the GPU count cancels without sweeping again.
    act(&mut app, Action::Close);
    assert!(!app.sweep.open);
    act(&mut app, Action::SelectField(Field::Stages));
    let effects = update(&mut app, Action::Increase);
    assert!(effects.contains(&Effect::CancelSweep), "{effects:?}");
    assert!(!app.sweep.running);
    assert_eq!(app.sweep.cancelled, 2);
    // An edit that does not change what the sweep answers leaves it alone.
    let mut app = solved_app("gpt3-175b-16k");
    update(&mut app, Action::OpenSweep);
    let effects = update(&mut app, Action::CycleSchedule(1));
    assert!(sweep_job(&effects).is_none() && !effects.contains(&Effect::CancelSweep));
    assert_eq!(app.sweep.cancelled, 0);
}

fn answered(name: &str) -> App {
    let mut app = solved_app(name);
    open_and_answer(&mut app);
    act(&mut app, Action::SweepSelect(1));
    app
}

#[test]
fn sweep_view_80x24() {
    assert_snapshot!(render(&mut answered("gpt3-175b-16k"), 80, 24));
}

#[test]
fn sweep_view_120x40() {
    assert_snapshot!(render(&mut answered("gpt3-175b-16k"), 120, 40));
}

#[test]
fn sweep_view_200x60() {
    assert_snapshot!(render(&mut answered("llama2-70b-4k"), 200, 60));
}

#[test]
fn sweep_view_mono_120x40() {
    let mut app = answered("gpt3-175b-16k");
    app.theme = Theme::builtin("mono");
    let backend = render(&mut app, 120, 40);
    // Mono draws no colour at all: the selection is reversed, the front bold.
    let buf = backend.buffer();
    assert!(
        buf.content()
            .iter()
            .all(|c| c.fg == ratatui::style::Color::Reset)
    );
    assert_snapshot!(backend);
}

/// The gpt3 fixture with the sweep view open and its sweep 12 candidates of 40 in.
fn running_12_of_40() -> App {
    let mut app = solved_app("gpt3-175b-16k");
    let (generation, _) = sweep_job(&update(&mut app, Action::OpenSweep)).unwrap();
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Progress {
            generation,
            done: 12,
            total: 40,
        })),
    );
    app
}

#[test]
fn sweep_view_running_80x24() {
    let mut app = running_12_of_40();
    assert_snapshot!(render(&mut app, 80, 24));
}

/// The progress counts candidates (what the sweep decides), and says so on the bar and the
/// status line: it used to call them "configurations evaluated", the word the answer uses for
/// every layout enumerated, so the bar seemed to finish early against the answer's count.
#[test]
fn the_sweep_progress_names_what_it_counts() {
    let mut app = running_12_of_40();
    let screen = render(&mut app, 120, 40).to_string();
    assert!(screen.contains(" 12/40 candidates"), "{screen}");
    assert!(
        screen.contains("sweeping: 12/40 candidates decided · candidates: layouts whose memory"),
        "{screen}"
    );
    assert!(!screen.contains("configurations evaluated"), "{screen}");
}

/// Answers the view's sweep, then lowers the budget by 1 GiB: the new sweep has run 12 of 40
/// steps. Its generation.
fn edited_while_sweeping(app: &mut App) -> u64 {
    open_and_answer(app);
    act(app, Action::SweepSelect(1));
    act(app, Action::SelectField(Field::Budget));
    let (generation, _) = sweep_job(&update(app, Action::Decrease)).expect("the edit sweeps");
    update(
        app,
        Action::Sweep(Box::new(SweepEvent::Progress {
            generation,
            done: 12,
            total: 40,
        })),
    );
    generation
}

#[test]
fn an_edit_keeps_the_previous_answer_dimmed_until_the_new_one_arrives() {
    let mut app = solved_app("gpt3-175b-16k");
    open_and_answer(&mut app);
    let before = app.sweep.answer().cloned().unwrap();
    act(&mut app, Action::SelectField(Field::Budget));
    let (second, inputs) = sweep_job(&update(&mut app, Action::Decrease)).unwrap();
    // The new sweep runs; the old answer stays on screen, labelled with the change.
    assert!(app.sweep.running && app.sweep.answer().is_none());
    assert_eq!(app.sweep.shown(), Some(&before));
    let previous = app.sweep.previous.clone().unwrap();
    assert_eq!(
        pipescope::tui::sweep_changes(&previous.inputs, &inputs),
        "budget 70.0 GiB → 69.0 GiB"
    );
    let screen = render(&mut app, 80, 24);
    let text = screen.to_string();
    assert!(
        text.contains("dimmed: the answer before budget 70.0 GiB → 69.0 GiB"),
        "{text}"
    );
    assert!(text.contains('◆') && text.contains("t×cp×p×d"), "{text}");
    // The old answer's lines are drawn dim; the status line is not.
    let buf = screen.buffer();
    let dim =
        |y: u16| (0..80).any(|x| buf[(x, y)].modifier.contains(ratatui::style::Modifier::DIM));
    let status_y = (0..24u16)
        .find(|&y| {
            (0..80u16)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("dimmed:")
        })
        .unwrap();
    assert!(!dim(status_y));
    assert!((status_y + 2..22).any(dim), "{text}");
    // Enter cannot load a configuration of the old answer.
    let scenario = app.scenario.clone();
    act(&mut app, Action::SweepLoad);
    assert_eq!(app.scenario, scenario);
    assert!(app.note.as_deref().unwrap().contains("old settings"));
    // A second edit while it runs: the same answer stays, named against both edits.
    let (third, inputs) = sweep_job(&update(&mut app, Action::Decrease)).unwrap();
    assert!(third > second);
    assert_eq!(app.sweep.shown(), Some(&before));
    assert_eq!(
        pipescope::tui::sweep_changes(&app.sweep.previous.clone().unwrap().inputs, &inputs),
        "budget 70.0 GiB → 68.0 GiB"
    );
    // The replaced sweep's answer is dropped; the newest one replaces the dimmed answer.
    let late = fixture::sweep::result(&inputs.base, 64, 64);
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation: second,
            result: Ok(Box::new(late.clone())),
        })),
    );
    assert!(app.sweep.answer().is_none() && app.sweep.previous.is_some());
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation: third,
            result: Ok(Box::new(late.clone())),
        })),
    );
    assert_eq!(app.sweep.answer(), Some(&late));
    assert!(app.sweep.previous.is_none());
    let text = render(&mut app, 80, 24).to_string();
    assert!(!text.contains("dimmed"), "{text}");
    // A sweep that reused earlier solves says how many (stale counts are dropped).
    let (fourth, _) = sweep_job(&update(&mut app, Action::Decrease)).unwrap();
    for generation in [third, fourth] {
        update(
            &mut app,
            Action::Sweep(Box::new(SweepEvent::Reused {
                generation,
                reused: 7 + generation as usize,
                solved: 3,
            })),
        );
    }
    assert_eq!(app.sweep.reused, Some((7 + fourth as usize, 3)));
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation: fourth,
            result: Ok(Box::new(late)),
        })),
    );
    let text = render(&mut app, 200, 60).to_string();
    assert!(
        text.contains(&format!("solved ({} from earlier sweeps)", 7 + fourth)),
        "{text}"
    );
}

#[test]
fn editing_back_restores_the_previous_answer_at_once() {
    let mut app = solved_app("gpt3-175b-16k");
    open_and_answer(&mut app);
    let before = app.sweep.answer().cloned().unwrap();
    act(&mut app, Action::SelectField(Field::Budget));
    assert!(sweep_job(&update(&mut app, Action::Decrease)).is_some());
    // Back to 70 GiB: the answer for it is the one on screen; the running sweep stops.
    let effects = update(&mut app, Action::Increase);
    assert!(sweep_job(&effects).is_none(), "{effects:?}");
    assert!(effects.contains(&Effect::CancelSweep), "{effects:?}");
    assert!(!app.sweep.running);
    assert_eq!(app.sweep.answer(), Some(&before));
    // Enter loads from it again.
    act(&mut app, Action::SweepLoad);
    assert!(app.note.as_deref().unwrap().starts_with("loaded t"));
}

#[test]
fn sweep_view_previous_dimmed_80x24() {
    let mut app = solved_app("gpt3-175b-16k");
    edited_while_sweeping(&mut app);
    assert_snapshot!(render(&mut app, 80, 24));
}

/// At 60 columns the status names the edit whole (what is dimmed and why), not the start
/// of the long form cut after "budget".
#[test]
fn sweep_view_previous_dimmed_60x18() {
    let mut app = solved_app("gpt3-175b-16k");
    edited_while_sweeping(&mut app);
    let screen = render(&mut app, 60, 18);
    assert!(
        format!("{screen}").contains("dimmed · budget → "),
        "{screen}"
    );
    assert_snapshot!(screen);
}

#[test]
fn sweep_view_previous_dimmed_200x60() {
    let mut app = solved_app("llama2-70b-4k");
    edited_while_sweeping(&mut app);
    assert_snapshot!(render(&mut app, 200, 60));
}

#[test]
fn help_scrolls_to_its_end_at_80x24() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::ToggleHelp);
    let top = render(&mut app, 80, 24);
    for _ in 0..80 {
        act(&mut app, Action::HelpScroll(1));
    }
    let end = format!("{}", render(&mut app, 80, 24));
    assert_ne!(format!("{top}"), end);
    // The last line of the help is reachable.
    assert!(end.contains("Shift-drag"), "{end}");
    assert_snapshot!(end);
}

// ---- end to end in tmux ----

#[test]
fn in_tmux_the_sweep_runs_is_cancelled_by_an_edit_and_enter_loads_a_configuration() {
    if skip_without_tmux() {
        return;
    }
    let home = temp_dir("sweep-e2e");
    let home_s = home.display().to_string();
    let t = Tmux::start(
        &[],
        &[
            ("XDG_CONFIG_HOME", &home_s),
            ("PIPESCOPE_FIXTURE", "1"),
            // 40 steps of 150 ms: the sweep lasts 6 s, so the edit below lands while it runs
            // even when a loaded machine takes a second or more to show a screen.
            ("PIPESCOPE_FIXTURE_STEP_MS", "150"),
        ],
        120,
        40,
    );
    t.wait_for("the first solve", |s| {
        s.contains("stages p") && s.contains("iter")
    });
    // An edit while the sweep runs: a new model, so the sweep starts again for it. The edit
    // goes once the first sweep's progress is on screen: sent with `o` in one burst, on a
    // loaded machine both keys could be handled before that sweep began, and nothing was
    // cancelled.
    t.keys(&["o"]);
    t.wait_for("the running sweep", |s| s.contains(" candidates"));
    t.keys(&["m"]);
    t.wait_for("the cancelled sweep", |s| {
        s.contains("┌ sweep · ")
            && !s.contains("sweep · gpt3-175b")
            && s.contains("1 earlier sweep cancelled")
    });
    let done = t.wait_for("the answer", |s| {
        s.contains("feasible ·") && s.contains("◆")
    });
    assert!(done.contains("t×cp×p×d"), "{done}");
    t.keys(&["j", "Enter"]);
    let loaded = t.wait_for("the loaded configuration", |s| {
        s.contains("loaded t") && !s.contains("┌ sweep")
    });
    assert!(loaded.contains("gantt"), "{loaded}");
    t.keys(&["q"]);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn ties_share_a_line_and_close_times_get_the_figures_that_tell_them_apart() {
    use pipescope::Strategy;
    let mut app = solved_app("gpt3-175b-16k");
    open_and_answer(&mut app);
    let Some(Ok(r)) = app.sweep.result.as_mut() else {
        panic!("no answer")
    };
    // A second strategy with the fastest one's exact time and memory (adapipe finding
    // nothing to recompute), and a third line 0.002 s slower than the first.
    let first = r.ranked[0];
    let mut twin = r.rows[first].clone();
    twin.config.strategy = Strategy::None;
    assert!(twin.config.strategy.name() > r.rows[first].config.strategy.name());
    r.rows.push(twin);
    r.ranked.insert(1, r.rows.len() - 1);
    let second = r.ranked[2];
    r.rows[second].iteration_time_s = r.rows[first].iteration_time_s + 0.002;
    let ranked = r.ranked.clone();
    let rows = r.rows.clone();
    assert_eq!(app.sweep.lines().len(), ranked.len() - 1);
    let screen = render(&mut app, 120, 40).to_string();
    let both = format!("{},none", rows[first].config.strategy.name());
    let line = screen
        .lines()
        .find(|l| l.contains(&both))
        .unwrap_or_else(|| panic!("{both}\n{screen}"));
    // Times 0.002 s apart around 47 s: five figures tell them apart (four would not).
    let sig = |t: f64, n| pipescope::tui::format::time_sig(t, n);
    let (a, b) = (rows[first].iteration_time_s, rows[second].iteration_time_s);
    assert_eq!(sig(a, 4), sig(b, 4), "the test needs a tie at four figures");
    let (t1, t2) = (sig(a, 5), sig(b, 5));
    assert_ne!(t1, t2);
    assert!(line.contains(&t1), "{t1}: {line}");
    assert!(screen.contains(&t2), "{t2}\n{screen}");
    // The merged line is one selection: the next one down is the third configuration.
    act(&mut app, Action::SweepSelect(1));
    assert_eq!(app.sweep.selected_row().unwrap(), &rows[second]);
    act(&mut app, Action::SweepSelect(-1));
    act(&mut app, Action::SweepLoad);
    let note = app.note.clone().unwrap();
    assert!(note.contains("as fast and as small: none"), "{note}");
}

/// Llama 3 70B on 64 H100s (t 8, p 8, global batch 512, s 8192) on the engine: the sweep
/// view answers, then the budget is typed four times in a row and lowered twice by key while
/// the sweeps run. At every look the view shows an answer (the previous one dimmed, with the
/// progress, or the new one), never a blank list; the last answer is for the last budget.
#[test]
fn in_tmux_the_engine_sweep_follows_edits_without_blanking() {
    if skip_without_tmux() {
        return;
    }
    let home = temp_dir("sweep-edits");
    let home_s = home.display().to_string();
    let args = [
        "--model",
        "llama3-70b",
        "--gpu",
        "h100-80gb",
        "-t",
        "8",
        "-p",
        "8",
        "-d",
        "1",
        "-m",
        "512",
        "-s",
        "8192",
        "--strategy",
        "full",
    ];
    let t = Tmux::start(&args, &[("XDG_CONFIG_HOME", &home_s)], 120, 40);
    // The debug build's engine is slow, and the machine may be busy: generous waits.
    let long = Duration::from_secs(600);
    t.wait_for_within("the first solve", long, |s| {
        s.contains("stages p") && s.contains("iter")
    });
    // The budget field (from `stages p`, the first one focused, eight down), then the view
    // (where the arrows and j/k pick a configuration; typing and h/l still edit).
    t.keys(&["j", "j", "j", "j", "j", "j", "j", "j", "o"]);
    let first = t.wait_for_within("the first answer", long, |s| {
        s.contains("feasible ·") && s.contains('◆')
    });
    assert!(first.contains("sweep · llama3-70b on 64"), "{first}");
    // Edits in a row: typed values and key presses.
    let shows_an_answer = |s: &str| s.contains("t×cp×p×d") && s.contains('◆');
    for typed in ["70", "66", "62", "58"] {
        let mut keys: Vec<&str> = typed.split("").filter(|k| !k.is_empty()).collect();
        keys.push("Enter");
        t.keys(&keys);
        let screen = t.capture();
        assert!(
            shows_an_answer(&screen),
            "blank after typing {typed}:\n{screen}"
        );
    }
    t.keys(&["h", "h"]);
    let dimmed = t.capture();
    assert!(shows_an_answer(&dimmed), "{dimmed}");
    // While it sweeps: the old answer dimmed and labelled, the progress under it; every look
    // until the answer shows one.
    let saw_dimmed = std::cell::Cell::new(dimmed.contains("dimmed: the answer before budget"));
    let last = t.wait_for_within("the answer for 56 GiB", long, |s| {
        assert!(shows_an_answer(s), "blank during the sweep:\n{s}");
        if s.contains("dimmed: the answer before budget") {
            // Labelled with the change since the answer shown, the progress under it.
            assert!(s.contains(" GiB → "), "{s}");
            assert!(s.contains("░") || s.contains('█'), "no progress:\n{s}");
            saw_dimmed.set(true);
        }
        !s.contains("dimmed:") && s.contains("feasible ·")
    });
    assert!(saw_dimmed.get(), "never saw the dimmed answer:\n{dimmed}");
    assert!(
        last.contains("56.0 GiB"),
        "the parameters show the last budget:\n{last}"
    );
    // The new answer is for less memory: fewer configurations fit.
    let status = |s: &str| {
        s.lines()
            .find(|l| l.contains("feasible ·"))
            .map(str::to_string)
    };
    assert_ne!(
        status(&first),
        status(&last),
        "the answer did not change:\n{last}"
    );
    t.keys(&["q"]);
    let quit = t.wait_exit(Duration::from_secs(20));
    assert!(quit < Duration::from_secs(20), "q took {quit:?}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn enter_drops_a_hand_written_layout_and_says_so() {
    let mut app = solved_app("gpt3-175b-16k");
    // 96 layers on the fixture's 8 stages: a valid layout for the scenario as it starts.
    let text = format!("Et*12|{}t*12L", "t*12|".repeat(6));
    app.scenario.plan.layout = Some(pipescope::PipelineLayout::parse(&text).unwrap());
    open_and_answer(&mut app);
    let result = app.sweep.answer().unwrap().clone();
    let c = result.rows[result.ranked[0]].config;
    let key = |c| Action::Key(crossterm::event::KeyEvent::from(c));
    act(&mut app, key(crossterm::event::KeyCode::Enter));
    // The sweep timed the line on its own split: the layout goes (it would otherwise be
    // refused wherever p x chunks differs, and no key clears it), and the note says so.
    assert_eq!(app.scenario.plan.layout, None);
    assert_eq!(app.scenario.parallel.pp, c.p);
    let note = app.note.as_deref().unwrap();
    assert!(note.starts_with("loaded t"), "{note}");
    assert!(note.contains("layout dropped"), "{note}");
}

/// The inputs the update asks the worker to sweep ahead, if it asked.
fn ahead(effects: &[Effect]) -> Option<Vec<SweepInputs>> {
    effects.iter().find_map(|e| match e {
        Effect::SweepAhead(list) => Some(list.clone()),
        _ => None,
    })
}

/// The scenario with the budget stepped by `delta` as ← → step it.
fn budget_stepped(app: &App, delta: i32) -> SweepInputs {
    let mut probe = App::new(
        app.scenario.clone(),
        app.choices.clone(),
        Theme::builtin("dark"),
    );
    probe.field = Field::Budget;
    update(
        &mut probe,
        if delta > 0 {
            Action::Increase
        } else {
            Action::Decrease
        },
    );
    SweepInputs::of(&probe.scenario)
}

/// With the view open, the worker is asked to sweep ahead what the next keystroke most
/// likely asks for: the focused parameter's next and previous values, then (after an edit)
/// the inputs before it. Fields that leave the sweep's inputs as they are add nothing;
/// typing a number or closing the view stops it; an unchanged list is not sent again.
#[test]
fn the_open_view_sweeps_ahead_the_focused_parameter_s_neighbours_and_the_undo() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::SelectField(Field::Strategy));
    let effects = update(&mut app, Action::OpenSweep);
    // The strategy is enumerated by the sweep: no neighbour changes its inputs.
    assert!(
        ahead(&effects).is_none_or(|l| l.is_empty()),
        "{:?}",
        ahead(&effects)
    );
    let effects = update(&mut app, Action::SelectField(Field::Budget));
    let start = SweepInputs::of(&app.scenario);
    let (up, down) = (budget_stepped(&app, 1), budget_stepped(&app, -1));
    assert_ne!(up, start);
    assert_eq!(ahead(&effects), Some(vec![up.clone(), down.clone()]));
    // A progress report changes nothing: nothing is sent again.
    let generation = app.sweep.generation;
    let effects = update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Progress {
            generation,
            done: 1,
            total: 40,
        })),
    );
    assert_eq!(ahead(&effects), None);
    // ← steps the budget down: the next guesses are one further down, back up (the undo
    // is that same step back, named once).
    let effects = update(&mut app, Action::Decrease);
    assert_eq!(sweep_job(&effects).map(|j| j.1), Some(down.clone()));
    let further = budget_stepped(&app, -1);
    assert_eq!(ahead(&effects), Some(vec![start.clone(), further]));
    // Typing a number: nothing is guessed.
    let effects = update(&mut app, Action::Type('7'));
    assert!(app.typing.is_some());
    assert_eq!(ahead(&effects), Some(Vec::new()));
    let effects = update(&mut app, Action::Backspace);
    assert_eq!(ahead(&effects), None, "unchanged, not sent again");
    app.typing = None;
    let effects = update(&mut app, Action::SelectField(Field::Budget));
    assert_eq!(ahead(&effects).map(|l| l.len()), Some(2));
    let effects = update(&mut app, Action::OpenSweep);
    assert!(!app.sweep.open);
    assert_eq!(ahead(&effects), Some(Vec::new()));
}

/// The fixture app in a shell that prints its exit status, the budget focused (eight down
/// from `stages p`), the view opened and answered; sweeps of 40 steps of `step_ms`.
fn fixture_in_shell(tag: &str, step_ms: &str) -> (Tmux, std::path::PathBuf) {
    let home = temp_dir(tag);
    let home_s = home.display().to_string();
    // `\$?`: the shell tmux starts expands `$?` inside the double quotes otherwise.
    let line = format!("'{}'; echo exit=\\$?; sleep 60", crate::tmux_common::bin());
    let t = Tmux::launch_sized(
        &format!("sh -c \"{line}\""),
        &[
            ("XDG_CONFIG_HOME", &home_s),
            ("PIPESCOPE_FIXTURE", "1"),
            ("PIPESCOPE_FIXTURE_STEP_MS", step_ms),
        ],
        80,
        24,
    );
    t.wait_for("the first solve", |s| {
        s.contains("stages p") && s.contains("iter")
    });
    t.keys(&["j", "j", "j", "j", "j", "j", "j", "j", "o"]);
    (t, home)
}

/// The pid of the app (the shell's child).
fn app_pid(t: &Tmux) -> String {
    let shell = t.pane("pane_pid");
    let out = std::process::Command::new("ps")
        .args(["-o", "pid=", "--ppid", &shell])
        .output()
        .expect("ps");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `q` while the view sweeps ahead (each sweep 8 s here) leaves at once: nothing waits for
/// the sweep thread.
#[test]
fn in_tmux_quitting_while_sweeping_ahead_exits_at_once() {
    if skip_without_tmux() {
        return;
    }
    let (t, home) = fixture_in_shell("sweep-ahead-quit", "50");
    t.wait_for("the answer", |s| s.contains("feasible ·"));
    // The answer is in: the view now sweeps the budget's neighbours ahead.
    std::thread::sleep(Duration::from_millis(300));
    let asked = std::time::Instant::now();
    t.keys(&["q"]);
    let out = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(out.contains("exit=0"), "{out}");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// SIGTERM while a sweep runs: exit status 143 and the terminal restored (no alternate
/// screen, the line discipline back to canonical with echo).
#[test]
fn in_tmux_sigterm_mid_sweep_exits_143_with_the_terminal_restored() {
    if skip_without_tmux() {
        return;
    }
    let (t, home) = fixture_in_shell("sweep-sigterm", "200");
    t.wait_for("the running sweep", |s| s.contains(" candidates"));
    let pid = app_pid(&t);
    assert!(!pid.is_empty());
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = t.wait_for("the exit", |s| s.contains("exit="));
    assert!(out.contains("exit=143"), "{out}");
    assert_eq!(t.pane("alternate_on"), "0");
    let modes = t.stty();
    assert!(
        modes.contains(" icanon") && modes.contains(" echo "),
        "{modes}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

// ---- the front as it forms ----

/// The front so far of the running sweep of `app`'s current inputs: two points of the
/// fixture's answer for them (the fastest and the smallest of its front).
fn forming_of(app: &mut App, generation: u64) {
    let inputs = app.sweep.inputs.clone().expect("a sweep runs");
    let answer = fixture::sweep::result(&inputs.base, inputs.gpus, inputs.global_batch);
    let front: Vec<_> = [answer.pareto.first(), answer.pareto.last()]
        .into_iter()
        .flatten()
        .map(|&i| answer.rows[i].clone())
        .collect();
    assert!(front.len() == 2, "the fixture's front has two ends");
    update(
        app,
        Action::Sweep(Box::new(SweepEvent::Forming { generation, front })),
    );
}

/// An edit while an answer is on screen: the new sweep 12 of 40 in, its front so far over
/// the dimmed previous answer.
fn forming_over_previous() -> App {
    let mut app = solved_app("gpt3-175b-16k");
    let generation = edited_while_sweeping(&mut app);
    forming_of(&mut app, generation);
    app
}

#[test]
fn sweep_view_forming_60x18() {
    let mut app = forming_over_previous();
    let screen = render(&mut app, 60, 18);
    assert!(format!("{screen}").contains("forming · 30 %"), "{screen}");
    assert_snapshot!(screen);
}

#[test]
fn sweep_view_forming_120x40() {
    let mut app = forming_over_previous();
    let backend = render(&mut app, 120, 40);
    let screen = format!("{backend}");
    assert!(screen.contains("forming · 30 %"), "{screen}");
    assert!(
        screen.contains("forming · 30 % · provisional front so far"),
        "{screen}"
    );
    // Where the status line has the room, it counts the points too.
    let wide = format!("{}", render(&mut app, 240, 40));
    assert!(
        wide.contains("forming: the front of 2 points so far, provisional"),
        "{wide}"
    );
    // The points forming are drawn in the normal style: some chart cell is not dimmed.
    let buf = backend.buffer();
    let bright = buf
        .content()
        .iter()
        .any(|c| c.symbol() == "•" && !c.modifier.contains(ratatui::style::Modifier::DIM));
    assert!(bright, "{screen}");
    assert_snapshot!(backend);
}

/// The first sweep has no previous answer: its front so far is drawn alone, marked.
#[test]
fn sweep_view_forming_first_sweep_80x24() {
    let mut app = running_12_of_40();
    let generation = app.sweep.generation;
    forming_of(&mut app, generation);
    let screen = render(&mut app, 80, 24);
    assert!(format!("{screen}").contains("forming · 30 %"), "{screen}");
    assert_snapshot!(screen);
}

/// Nothing provisional outlives its sweep: the answer replaces the front forming, a stale
/// generation's front is dropped, and an edit starting another sweep clears it.
#[test]
fn the_answer_replaces_the_front_forming() {
    let mut app = forming_over_previous();
    assert_eq!(app.sweep.forming.len(), 2);
    let generation = app.sweep.generation;
    let inputs = app.sweep.inputs.clone().unwrap();
    let answer = fixture::sweep::result(&inputs.base, inputs.gpus, inputs.global_batch);
    update(
        &mut app,
        Action::Sweep(Box::new(SweepEvent::Done {
            generation,
            result: Ok(Box::new(answer)),
        })),
    );
    assert!(app.sweep.forming.is_empty());
    let screen = format!("{}", render(&mut app, 120, 40));
    assert!(!screen.contains("forming"), "{screen}");
    // A late report of the finished sweep is dropped.
    forming_of(&mut app, generation);
    assert!(app.sweep.forming.is_empty());
    // An edit: the new sweep starts with nothing forming; the old generation's is dropped.
    act(&mut app, Action::SelectField(Field::Budget));
    let (next, _) = sweep_job(&update(&mut app, Action::Decrease)).expect("the edit sweeps");
    assert!(next > generation);
    forming_of(&mut app, generation);
    assert!(app.sweep.forming.is_empty());
    forming_of(&mut app, next);
    assert_eq!(app.sweep.forming.len(), 2);
}
