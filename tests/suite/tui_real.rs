//! The views on the real engine's solves of built-in presets: every mode renders at two
//! sizes with the figures the outcome holds (structural checks, not snapshots, so they do
//! not move with the engine's numbers; the snapshots use the fixture solver).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_common;

use pipescope::Catalog;
use pipescope::tui::{
    Action, App, Effect, Theme, choices_of, engine_solve, format, resolve, update,
};
use tui_common::render;

fn run(app: &mut App, effects: Vec<Effect>) {
    tui_common::run_effects_with(app, effects, engine_solve);
}

fn real_app(preset: &str) -> App {
    let catalog = Catalog::builtin();
    let scenario = catalog.scenario(preset).unwrap();
    let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
    app.show_solve_time = false;
    let effects = resolve(&mut app);
    run(&mut app, effects);
    app
}

/// One stage has no pipeline bubble: the header's figure leaves out the gradient reduction
/// and the optimizer step (idle for `bubble_rate`), as the stage line does.
#[test]
fn one_stage_shows_no_bubble_in_the_header() {
    let catalog = Catalog::builtin();
    let mut scenario = catalog.scenario("tiny-4x8").unwrap();
    scenario.parallel.pp = 1;
    scenario.parallel.dp = 4;
    // The whole GPU: one stage holds all the layers.
    scenario.keep_free(0).unwrap();
    let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
    app.show_solve_time = false;
    let effects = resolve(&mut app);
    run(&mut app, effects);
    assert_eq!(app.error, None);
    let o = app.solved.as_ref().unwrap().outcome.clone();
    assert!(o.feasible, "{:?}", o.infeasible_reason);
    assert!(
        o.bubble_rate > 0.001,
        "the end-of-iteration steps count as idle there"
    );
    assert!(o.pipeline_bubble_rate() < 1e-9);
    let screen = render(&mut app, 200, 60).to_string();
    let header = screen.lines().find(|l| l.contains("iter ")).unwrap();
    assert!(header.contains("bubble 0.0%"), "{header}");
}

#[test]
fn real_presets_render_their_figures_in_every_mode() {
    for preset in ["gpt3-175b-16k", "adapipe-llama2-70b"] {
        let mut app = real_app(preset);
        assert_eq!(app.error, None, "{preset}");
        let o = app.solved.as_ref().unwrap().outcome.clone();
        for (w, h) in [(80, 24), (160, 48)] {
            let screen = render(&mut app, w, h).to_string();
            assert!(
                screen.contains(&format::time(o.iteration_time_s)),
                "{preset} {w}x{h}\n{screen}"
            );
            assert!(
                screen.contains(&format::pct(o.pipeline_bubble_rate())),
                "{screen}"
            );
            assert!(screen.contains("s0 "), "{screen}");
            assert!(
                screen.contains("stage 0 units") || screen.contains("s0 units"),
                "{screen}"
            );
        }
        let effects = update(&mut app, Action::ToggleCompare);
        run(&mut app, effects);
        assert!(
            matches!(app.compare, Some(Ok(_))),
            "{preset}: {:?}",
            app.compare.as_ref().map(|c| c.as_ref().err())
        );
        let screen = render(&mut app, 160, 48).to_string();
        assert!(screen.contains("B (no change)"), "{screen}");
        let effects = update(&mut app, Action::ToggleStory);
        run(&mut app, effects);
        // Every step solves, except that PipeOffload's PO-F may be refused where its copies
        // cannot keep pace with compute (the story then says why).
        for (i, s) in app.story.iter().enumerate() {
            match s {
                Some(Ok(_)) => {}
                Some(Err(e)) if i + 1 == app.story.len() && e.contains("keep pace") => {}
                other => panic!("{preset} step {i}: {other:?}"),
            }
        }
        for i in 0..app.story.len() {
            let screen = render(&mut app, 160, 48).to_string();
            let said = if matches!(app.story[i], Some(Err(_))) {
                "is refused for this scenario, so the story ends without it"
            } else {
                "iteration"
            };
            assert!(screen.contains(said), "{screen}");
            update(&mut app, Action::StoryNext);
        }
    }
}

#[test]
fn invalid_edits_show_the_engines_message_and_keep_the_outcome() {
    let mut app = real_app("gpt3-175b-16k");
    let before = app.solved.clone();
    app.field = pipescope::tui::Field::Tp;
    for c in "7".chars() {
        update(&mut app, Action::Type(c));
    }
    let effects = update(&mut app, Action::Commit);
    run(&mut app, effects);
    let e = app.error.clone().expect("tp = 7 is invalid");
    assert!(e.contains("tp"), "{e}");
    assert_eq!(app.solved, before);
    assert!(render(&mut app, 120, 30).to_string().contains("✗"));
}

/// The header's second line and the stage details overlay show one time split of the
/// selected stage (the engine's, computed once with the outcome): every part the header
/// names, with its value, is in the overlay too. They once came from two computations
/// (the engine's per-device breakdown, and one read off the timeline that counted waits on
/// transfers apart from the bubble) and disagreed.
#[test]
fn the_header_and_the_stage_details_give_one_time_split() {
    let mut app = real_app("tiny-4x8");
    act_real(&mut app, Action::NextStage);
    act_real(&mut app, Action::Commit);
    let screen = render(&mut app, 200, 60).to_string();
    let header = screen
        .lines()
        .find(|l| l.contains("stage 1 time:"))
        .unwrap_or_else(|| panic!("no stage line\n{screen}"));
    let o = &app.solved.as_ref().unwrap().outcome;
    let t = o.stages[1].time_breakdown_s;
    let parts = [
        ("compute", t.compute),
        ("recompute", t.recompute),
        ("bubble", t.bubble),
        ("tp_comm", t.tp_comm),
        ("pp_comm", t.pp_comm),
        ("dp_comm", t.dp_comm),
        ("optimizer", t.optimizer),
    ];
    let details: String = screen
        .lines()
        .skip_while(|l| !l.contains("stage s1"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!details.is_empty(), "no details overlay\n{screen}");
    for (name, value) in parts {
        let item = format!("{name} {}", format::time(value));
        assert!(header.contains(&item), "header lacks {item}: {header}");
        // The overlay leaves out the parts that are zero.
        assert!(
            value == 0.0 || details.contains(&item),
            "details lack {item}\n{details}"
        );
    }
}

fn act_real(app: &mut App, action: Action) {
    let effects = update(app, action);
    run(app, effects);
}

#[test]
fn a_mixture_of_experts_shows_its_experts_segment_all_to_alls_and_legend() {
    let catalog = Catalog::builtin();
    let mut scenario = catalog.scenario("gpt3-175b-16k").unwrap();
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
    let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
    app.show_solve_time = false;
    let effects = resolve(&mut app);
    run(&mut app, effects);
    assert_eq!(app.error, None);
    let screen = render(&mut app, 200, 60).to_string();
    assert!(screen.contains('▤'), "no experts segment\n{screen}");
    assert!(
        screen.contains('⇄'),
        "no all-to-all on the transfer lane\n{screen}"
    );
    assert!(
        screen.contains("experts") && screen.contains("all-to-all"),
        "{screen}"
    );
    assert!(screen.contains("ep_comm"), "{screen}");
}

/// Jobs with context parallelism and ZeRO-3 on the real engine: the header gives the GPUs
/// as t x cp x p x d and the stage's K/V exchange (`cp_comm`), the parameters show the
/// three new fields, and the Gantt's transfer lane draws the K/V exchange (cp 2), the
/// gathers and the reduce-scatters (zero 3) inside the ops, with their glyphs in the legend.
#[test]
fn context_parallelism_and_zero_3_show_in_the_header_the_fields_and_the_gantt() {
    let catalog = Catalog::builtin();
    for (zero, field, glyphs) in [
        (
            pipescope::Zero::Optimizer,
            "zero      1 dist opt",
            &['≈'][..],
        ),
        (pipescope::Zero::Full, "zero      3 full", &['▾', '▴'][..]),
    ] {
        let mut scenario = catalog.scenario("gpt3-175b-16k").unwrap();
        scenario.parallel.dp = 2;
        scenario.parallel.cp = 2;
        scenario.parallel.set_zero(zero);
        let mut app = App::new(scenario, choices_of(&catalog), Theme::builtin("dark"));
        app.show_solve_time = false;
        let effects = resolve(&mut app);
        run(&mut app, effects);
        assert_eq!(app.error, None);
        let screen = render(&mut app, 200, 60).to_string();
        assert!(screen.contains("GPUs 256 = t8×cp2×p8×d2"), "{screen}");
        assert!(screen.contains("cp_comm "), "{screen}");
        for field in [field, "ctx cp    2", "prec      bf16"] {
            assert!(screen.contains(field), "no {field:?}\n{screen}");
        }
        // The Gantt's rows (right of the parameters and the legend).
        let gantt: String = screen
            .lines()
            .filter_map(|l| l.split("││").nth(1))
            .collect();
        for glyph in glyphs {
            assert!(gantt.contains(*glyph), "no {glyph} on the Gantt\n{screen}");
        }
        for name in ["≈ K/V", "▾ gather", "▴ scatter"] {
            assert!(screen.contains(name), "legend lacks {name}\n{screen}");
        }
    }
}

#[test]
fn a_unit_picked_for_the_named_strategy_is_recomputed_by_the_engine() {
    let mut app = real_app("gpt3-175b-16k");
    let entries = pipescope::tui::picker_entries(app.solved.as_ref().unwrap());
    let gelu = entries
        .iter()
        .position(|e| e.qualified() == "mlp.gelu_out")
        .expect("gelu_out is offered");
    assert!(entries.iter().all(|e| e.unit != "input"), "inputs are kept");
    let effects = update(&mut app, Action::TogglePicker);
    run(&mut app, effects);
    for _ in 0..gelu {
        let effects = update(&mut app, Action::PickerMove(1));
        run(&mut app, effects);
    }
    let effects = update(&mut app, Action::PickerToggle);
    run(&mut app, effects);
    assert_eq!(app.error, None);
    let o = &app.solved.as_ref().unwrap().outcome;
    assert_eq!(o.strategy, pipescope::Strategy::Named);
    let gelus = o
        .stages
        .iter()
        .flat_map(|st| &st.units)
        .filter(|u| u.name == "mlp.gelu_out" && u.recompute > 0)
        .count();
    assert_eq!(gelus, o.stages.len(), "every stage recomputes it");
    for st in &o.stages {
        for u in &st.units {
            if u.name == "mlp.gelu_out" {
                assert_eq!(u.keep, 0, "stage {}: {u:?}", st.stage);
            } else if u.name.starts_with("mlp.") || u.name.starts_with("attention.") {
                assert_eq!(u.recompute, 0, "stage {}: {u:?}", st.stage);
            }
        }
    }
}
