//! Hostile config folders (FIFOs, huge files, links out of the folder and in
//! loops), silent loss of broken presets, and a reload that keeps the user's edits.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use pipescope::Catalog;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pipescope-hf-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const MODEL: &str = "[model]\nname = \"tiny\"\nlayers = 4\nhidden = 256\nheads = 4\nvocab = 1000\n";

/// Loads `dir` on a thread: a hang (the FIFO case) fails the test instead of blocking it.
fn load_within(dir: &Path, secs: u64) -> Catalog {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(Catalog::with_user_dir(&dir));
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("loading the config folder finished in time")
}

fn errors(c: &Catalog) -> String {
    c.errors()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(unix)]
#[test]
fn a_fifo_is_not_read_and_the_rest_loads() {
    let dir = temp_dir("fifo");
    std::fs::write(dir.join("a.toml"), MODEL).unwrap();
    let ok = Command::new("mkfifo")
        .arg(dir.join("b.toml"))
        .status()
        .unwrap();
    assert!(ok.success());
    let c = load_within(&dir, 10);
    assert!(c.model("tiny").is_some());
    let e = errors(&c);
    assert!(
        e.contains("b.toml") && e.contains("not a regular file"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_huge_file_is_refused_with_the_limit_named() {
    let dir = temp_dir("huge");
    let mut big = String::from("# padding\n");
    big.push_str(&"#".repeat(2 << 20));
    std::fs::write(dir.join("big.toml"), big).unwrap();
    let c = load_within(&dir, 10);
    let e = errors(&c);
    assert!(e.contains("big.toml") && e.contains("1 MiB"), "{e}");
    // `--profile /dev/zero` and `--preset` of a device: refused at once, not read forever.
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(["plan", "--profile", "/dev/zero", "--json"])
        .env("XDG_CONFIG_HOME", "/nonexistent-pipescope-test")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a regular file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn links_out_of_the_folder_are_not_followed_and_loops_load_once() {
    let dir = temp_dir("links");
    let presets = dir.join("presets");
    std::fs::create_dir_all(&presets).unwrap();
    std::fs::write(presets.join("bad.toml"), "[model]\nname = 3\n").unwrap();
    std::fs::write(presets.join("good.toml"), MODEL).unwrap();
    std::os::unix::fs::symlink("/", presets.join("root")).unwrap();
    std::os::unix::fs::symlink(".", presets.join("self")).unwrap();
    std::os::unix::fs::symlink(&presets, presets.join("again")).unwrap();
    let c = load_within(&dir, 10);
    assert!(c.model("tiny").is_some());
    let e = errors(&c);
    assert!(e.contains("leads outside the config folder"), "{e}");
    // The broken file is reported once (a `self -> .` link loaded each file 41 times).
    assert_eq!(e.matches("bad.toml").count(), 1, "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_deep_folder_is_cut_at_the_depth_limit() {
    let dir = temp_dir("deep");
    let mut deep = dir.clone();
    for i in 0..(pipescope::MAX_DEPTH + 3) {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("m.toml"), MODEL).unwrap();
    let c = load_within(&dir, 10);
    let e = errors(&c);
    assert!(e.contains("folders deep"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plan_warns_about_a_broken_user_preset_with_its_location() {
    let home = temp_dir("warn");
    let presets = home.join("pipescope").join("presets");
    std::fs::create_dir_all(&presets).unwrap();
    // A typo in an override of a built-in model: it used to fall back to the built-in silently.
    std::fs::write(
        presets.join("gpt3.toml"),
        "[model]\nname = \"gpt3-175b\"\nlayers = \"ninety-six\"\nhidden = 12288\nheads = 96\nvocab = 50257\n",
    )
    .unwrap();
    for cmd in [&["plan", "--json"][..], &["units", "--json"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
            .args(cmd)
            .env("XDG_CONFIG_HOME", &home)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("warning") && err.contains("gpt3.toml:3:"),
            "{cmd:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&home);
}

#[cfg(feature = "tui")]
#[test]
fn a_reload_keeps_the_fields_edited_since_and_says_so() {
    use pipescope::tui::{Action, Reload, fixture};
    let mut app = crate::tui_common::solved_app("gpt3");
    let path = PathBuf::from("/cfg/pipescope/presets/mine.toml");
    app.preset_source = Some(path.clone());
    app.preset_base = Some(app.scenario.clone());
    // The user edits micro-batches; the file then changes the stages.
    app.scenario.batch.micro_batches += 3;
    let edited_mb = app.scenario.batch.micro_batches;
    let mut file = fixture::scenario("gpt3");
    file.parallel.pp += 1;
    let file_pp = file.parallel.pp;
    let parsed = pipescope::tui::ParsedPreset {
        scenario: Some(file),
        choices: pipescope::tui::Choices::default(),
    };
    crate::tui_common::act(
        &mut app,
        Action::Reloaded(Box::new(Reload::Preset(path, Ok(Box::new(parsed))))),
    );
    assert_eq!(app.scenario.batch.micro_batches, edited_mb, "edit kept");
    assert_eq!(app.scenario.parallel.pp, file_pp, "file change applied");
    let note = app.note.clone().unwrap_or_default();
    assert!(note.contains("kept your edits: micro m"), "{note}");
}
