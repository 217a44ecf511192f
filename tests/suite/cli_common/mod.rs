//! Shared helper of the command-line tests: the `pipescope` binary run as a process.

#![allow(dead_code, clippy::unwrap_used)]

use std::process::Command;

/// Runs `pipescope args...` with no user config folder; returns (success, stdout, stderr).
pub fn pipescope(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent-pipescope-test")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
