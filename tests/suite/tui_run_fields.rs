//! The run-option fields (attention backend, Adam moment bytes, the fp8 activation-input
//! store) on a TestBackend: an edit changes the scenario and is solved again; a refused value
//! names the field and keeps the last good one.

use crate::tui_common;

use pipescope::AttentionBackend;
use pipescope::tui::{Action, Field};
use tui_common::{act, render, solved_app};

/// Types `text` into `field` and commits it.
fn type_in(app: &mut pipescope::tui::App, field: Field, text: &str) {
    act(app, Action::SelectField(field));
    for c in text.chars() {
        act(app, Action::Type(c));
    }
    act(app, Action::Commit);
}

#[test]
fn an_attention_backend_edit_is_solved_again() {
    let mut app = solved_app("gpt3-175b-16k");
    act(&mut app, Action::SelectField(Field::AttentionBackend));
    act(&mut app, Action::Increase);
    assert_eq!(
        app.scenario.plan.attention_backend,
        AttentionBackend::Flash2
    );
    let solved = app.solved_scenario.as_ref().unwrap();
    assert_eq!(solved.plan.attention_backend, AttentionBackend::Flash2);
    let screen = render(&mut app, 120, 40).to_string();
    assert!(
        screen.contains("attn") && screen.contains("flash2"),
        "{screen}"
    );
}

#[test]
fn moment_bytes_take_2_or_4_and_a_3_names_the_field() {
    let mut app = solved_app("gpt3-175b-16k");
    type_in(&mut app, Field::MomentBytes, "2");
    assert_eq!(app.scenario.parallel.moment_bytes, 2);
    assert_eq!(
        app.solved_scenario.as_ref().unwrap().parallel.moment_bytes,
        2
    );
    type_in(&mut app, Field::MomentBytes, "3");
    let err = app.error.clone().unwrap_or_default();
    assert!(
        err.contains("adam mom = '3'") && err.contains("2 (bf16"),
        "{err}"
    );
    assert_eq!(app.scenario.parallel.moment_bytes, 2);
}

#[test]
fn the_fp8_store_row_is_shown_for_swiglu_and_solved_again() {
    let mut app = solved_app("gpt3-175b-16k");
    assert!(!Field::shown_in(&app.scenario).contains(&Field::Fp8InputStore));
    let mut app2 = solved_app("llama2-70b-4k");
    assert!(Field::shown_in(&app2.scenario).contains(&Field::Fp8InputStore));
    act(&mut app2, Action::SelectField(Field::Fp8InputStore));
    act(&mut app2, Action::Increase);
    assert!(app2.scenario.plan.activation_func_fp8_input_store);
    let solved = app2.solved_scenario.as_ref().unwrap();
    assert!(solved.plan.activation_func_fp8_input_store);
    // A GeLU model refuses it in the engine's words, naming the field.
    app.field = Field::Fp8InputStore;
    act(&mut app, Action::Increase);
    let said = format!("{:?} {:?}", app.note, app.error);
    assert!(
        said.contains("plan.activation_func_fp8_input_store"),
        "{said}"
    );
    assert!(!app.scenario.plan.activation_func_fp8_input_store);
}
