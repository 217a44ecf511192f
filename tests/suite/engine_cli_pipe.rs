//! A reader that closes its end early (`pipescope ... | head -1`) must not make the binary
//! panic: the commands write through `cli::output::emit`, which treats a broken pipe as done.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Runs `pipescope args`, reads one line of its stdout, closes the pipe and returns whether
/// it exited successfully and what it wrote to stderr.
fn read_one_line_then_close(args: &[&str]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent-pipescope-test")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    // The reader (and with it the pipe's read end) is dropped here.
    assert!(!line.is_empty());
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn simulate_json_ops_into_a_closed_pipe_does_not_panic() {
    // Several MB of JSON: far more than a pipe buffer holds.
    let (ok, err) = read_one_line_then_close(&[
        "simulate",
        "--schedule",
        "1f1b",
        "-p",
        "8",
        "-m",
        "2000",
        "--json",
        "--ops",
    ]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(ok, "{err}");
}

#[test]
fn simulate_text_into_a_closed_pipe_does_not_panic() {
    let (ok, err) =
        read_one_line_then_close(&["simulate", "--schedule", "gpipe", "-p", "64", "-m", "2000"]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(ok, "{err}");
}

#[test]
fn reports_into_a_closed_pipe_do_not_panic() {
    for args in [
        &["units"][..],
        &["units", "--json"],
        &["presets"],
        &["presets", "--json"],
        &["plan", "--json"],
        &["compare", "--json"],
    ] {
        let (ok, err) = read_one_line_then_close(args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(ok, "{args:?}: {err}");
    }
}
