//! Scenario files that cannot be planned as written: one without a model is refused (not
//! planned as some default model under the file's name), a layout that does not fit the
//! file's own model is reported at its character in the file, an empty `--profile` is refused.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

const TINY: &str = include_str!("../../presets/scenarios/tiny-4x8.toml");

/// `TINY` with its `[model]` table (up to the next table) removed.
fn without_model() -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in TINY.lines() {
        if line.starts_with('[') {
            skipping = line.trim() == "[model]";
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(
        !out.contains("[model]") && !out.contains("\nmodel ="),
        "{out}"
    );
    out
}

#[test]
fn a_scenario_without_a_model_is_refused() {
    let err = pipescope::Catalog::builtin()
        .scenario_from_text("nomodel.toml", &without_model())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("nomodel.toml: ") && err.contains("no model") && err.contains("[model]"),
        "{err}"
    );
}

#[test]
fn a_scenario_without_a_gpu_is_refused() {
    let text: String = TINY
        .lines()
        .filter(|l| !l.starts_with("gpu ="))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(text, TINY, "the fixture names its GPU");
    let err = pipescope::Catalog::builtin()
        .scenario_from_text("nogpu.toml", &text)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("nogpu.toml: ") && err.contains("no GPU") && err.contains("gpu = "),
        "{err}"
    );
}

#[test]
fn a_bad_layout_in_a_file_is_reported_at_its_character() {
    let text = TINY.replace("[plan]\n", "[plan]\nlayout = \"Et*2|t*2|t*3|t*2L\"\n");
    let line_no = text
        .lines()
        .position(|l| l.starts_with("layout ="))
        .unwrap()
        + 1;
    let err = pipescope::Catalog::builtin()
        .scenario_from_text("layoutbad.toml", &text)
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("plan.layout"), "{message}");
    // The column the grammar names, counted inside the string, is the file's column.
    let (_, after) = message.split_once(": column ").unwrap();
    let inside: usize = after.split(':').next().unwrap().parse().unwrap();
    let quote = "layout = \"".len();
    assert_eq!(err.line, Some(line_no), "{message}");
    assert_eq!(err.column, Some(quote + inside), "{message}");
    // And from the command line: the file's place, not the --layout flag (never given).
    let dir = std::env::temp_dir().join(format!("pipescope-layoutbad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("layoutbad.toml");
    std::fs::write(&file, &text).unwrap();
    let (ok, _, err) = pipescope(&["plan", "--preset", file.to_str().unwrap()]);
    assert!(!ok, "{err}");
    assert!(
        err.contains(&format!("layoutbad.toml:{line_no}:{}", quote + inside))
            && !err.contains("--layout"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_empty_profile_is_refused() {
    let dir = std::env::temp_dir().join(format!("pipescope-emptyprof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("empty.toml");
    std::fs::write(&file, "").unwrap();
    let path = file.to_str().unwrap();
    let (ok, _, err) = pipescope(&["plan", "--preset", "tiny-4x8", "--profile", path]);
    assert!(
        !ok && err.contains("empty.toml") && err.contains("measures nothing"),
        "{err}"
    );
    std::fs::write(&file, "source = \"nothing measured\"\n").unwrap();
    let (ok, _, err) = pipescope(&["plan", "--preset", "tiny-4x8", "--profile", path]);
    assert!(!ok && err.contains("measures nothing"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
