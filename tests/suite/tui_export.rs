//! The TUI's `e` key: the shown outcome in the four export formats, written to files whose
//! paths the status line gives.

use crate::tui_common;

use pipescope::tui::{Action, Effect, action_for, update, write_files};
use tui_common::{act, solved_app};

#[test]
fn e_exports_what_is_shown_and_says_where() {
    let key = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('e'));
    assert_eq!(action_for(key), Some(Action::Export));
    let mut app = solved_app("gpt3");
    let effects = update(&mut app, Action::Export);
    let [Effect::Export(files)] = effects.as_slice() else {
        panic!("expected one export effect, got {effects:?}");
    };
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let outcome = &app.shown().unwrap().outcome;
    let stem = format!("pipescope-{}-{}", outcome.schedule, outcome.strategy);
    assert_eq!(names[0], format!("{stem}.svg"));
    assert!(names.contains(&format!("{stem}.trace.json").as_str()));
    assert!(names.contains(&format!("{stem}.megatron.sh").as_str()));
    let trace = &files.iter().find(|(n, _)| n.ends_with(".json")).unwrap().1;
    let json: serde_json::Value = serde_json::from_str(trace).unwrap();
    let slices = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    assert_eq!(slices, outcome.simulation.timeline.spans.len());
    assert!(files[0].1.contains("<rect class=\"op "));
    // Written into a folder: the status line lists the paths.
    let dir = std::env::temp_dir().join(format!("pipescope-tui-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let written = write_files(&dir, files).unwrap();
    assert_eq!(written.len(), files.len());
    assert!(written.iter().all(|p| p.is_file()));
    act(&mut app, Action::Exported(Ok(written.clone())));
    let note = app.note.clone().unwrap();
    assert!(note.starts_with("exported ") && note.contains(&*written[0].to_string_lossy()));
    act(&mut app, Action::Exported(Err("disk full".into())));
    assert!(app.error.as_deref().unwrap().contains("disk full"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A schedule some formats cannot express: `e` writes the others and names those it left out
/// and why.
#[test]
fn e_names_the_formats_it_left_out() {
    let mut app = solved_app("gpt3");
    app.scenario.plan.schedule = pipescope::ScheduleKind::PoH;
    let effects = pipescope::tui::resolve(&mut app);
    tui_common::run_effects(&mut app, effects);
    assert_eq!(
        app.shown().unwrap().outcome.schedule,
        pipescope::ScheduleKind::PoH
    );
    let effects = update(&mut app, Action::Export);
    let [Effect::Export(files)] = effects.as_slice() else {
        panic!("expected one export effect, got {effects:?}");
    };
    assert!(files.iter().all(|(n, _)| !n.ends_with(".torchtitan.csv")));
    act(&mut app, Action::Exported(Ok(Vec::new())));
    let note = app.note.clone().unwrap();
    assert!(
        note.contains("left out: ")
            && note.contains("torchtitan (PipeOffload's host copies have no torch action)"),
        "{note}"
    );
}

#[test]
fn e_never_replaces_an_earlier_export_and_names_the_new_files() {
    let mut app = solved_app("gpt3");
    let effects = update(&mut app, Action::Export);
    let [Effect::Export(files)] = effects.as_slice() else {
        panic!("expected one export effect, got {effects:?}");
    };
    let dir =
        std::env::temp_dir().join(format!("pipescope-tui-export-again-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A file of the user's with the export's first name, and a first export.
    let svg = dir.join(&files[0].0);
    std::fs::write(&svg, "mine").unwrap();
    let first = write_files(&dir, files).unwrap();
    let second = write_files(&dir, files).unwrap();
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "mine");
    let name = |p: &std::path::PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    let stem = files[0].0.split_once('.').unwrap().0;
    // One number for the whole set: -2 (the user's file took the plain name), then -3.
    for (written, n) in [(&first, 2), (&second, 3)] {
        assert_eq!(written.len(), files.len());
        for (p, (f, text)) in written.iter().zip(files) {
            let rest = f.split_once('.').unwrap().1;
            assert_eq!(name(p), format!("{stem}-{n}.{rest}"));
            assert_eq!(&std::fs::read_to_string(p).unwrap(), text);
            assert!(p.is_absolute(), "{}", p.display());
        }
    }
    // Nothing was replaced: the user's file and two complete sets, no temporary files.
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1 + 2 * files.len()
    );
    act(&mut app, Action::Exported(Ok(second.clone())));
    let note = app.note.clone().unwrap();
    for p in &second {
        assert!(note.contains(&*p.to_string_lossy()), "{note}");
    }
    assert!(
        note.contains("earlier exports of these names kept"),
        "{note}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
