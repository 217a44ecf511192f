//! Session 13's review of the command line as a user finds it: `--gpus N` gives the job's
//! GPU count to `plan` and the UI as it does to `sweep`, and a refused input exits 2 (as
//! clap's own usage errors do) whichever check refuses it.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use crate::cli_common::pipescope;

/// Runs `pipescope args...` with no user config folder; returns (exit code, stderr).
fn exit_code(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent-pipescope-test")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `--gpus N` sets d = N / (t x cp x p): the plan is `-d`'s, the JSON says the GPUs.
#[test]
fn gpus_sets_the_data_parallel_size() {
    let base = [
        "plan",
        "--model",
        "llama3.1-405b",
        "--gpu",
        "h100-80gb",
        "--cp",
        "2",
        "--precision",
        "fp8",
        "--json",
    ];
    let (ok, by_gpus, err) = pipescope(&[&base[..], &["--gpus", "1024"]].concat());
    assert!(ok, "{err}");
    let (ok, by_dp, err) = pipescope(&[&base[..], &["-d", "8"]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&by_gpus).unwrap();
    assert_eq!(v["gpus"], 1024);
    assert_eq!(v["dp"], 8);
    let w: serde_json::Value = serde_json::from_str(&by_dp).unwrap();
    assert_eq!(v["iteration_time_s"], w["iteration_time_s"]);
    // With -d agreeing it is accepted.
    let (ok, _, err) = pipescope(&[&base[..], &["--gpus", "1024", "-d", "8"]].concat());
    assert!(ok, "{err}");
}

/// A GPU count that t x cp x p does not divide, or one that disagrees with -d, is refused
/// naming both and what is allowed.
#[test]
fn gpus_that_do_not_divide_or_disagree_are_refused() {
    let (code, err) = exit_code(&["plan", "-t", "8", "-p", "8", "--gpus", "100"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--gpus"), "{err}");
    assert!(err.contains("100"), "{err}");
    assert!(err.contains("8 x 1 x 8 = 64"), "{err}");
    let (code, err) = exit_code(&["plan", "-t", "8", "-p", "8", "--gpus", "128", "-d", "4"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--gpus 128") && err.contains("-d 4"), "{err}");
    assert!(err.contains("128 / 64 = 2"), "{err}");
    // Past the largest d.
    let (code, err) = exit_code(&["plan", "-t", "1", "-p", "1", "--gpus", "100000"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--gpus") && err.contains("65536"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Zero GPUs is named as typed, not as the data-parallel size it would give.
    let (code, err) = exit_code(&["plan", "-t", "8", "-p", "8", "--gpus", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--gpus = 0") && !err.contains("--dp"), "{err}");
    assert!(err.contains("8 x 1 x 8 = 64"), "{err}");
}

/// The UI takes `--gpus` as `plan` does (refused the same way, before a terminal is asked
/// for): the brief's `pipescope --model llama3.1-405b ... --gpus 1024` opens.
#[test]
fn the_ui_takes_gpus_as_plan_does() {
    let (code, err) = exit_code(&["-t", "8", "-p", "8", "--gpus", "100"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("8 x 1 x 8 = 64"), "{err}");
    let (_, err) = exit_code(&[
        "--model",
        "llama3.1-405b",
        "--gpu",
        "h100-80gb",
        "--gpus",
        "1024",
        "--cp",
        "2",
        "--precision",
        "fp8",
    ]);
    assert!(err.contains("needs a terminal"), "{err}");
}

/// A refused input exits 2 whichever check refuses it: `--budget-gib nan` (the flag's
/// parser) exited 2 and `--budget-gib -1` (the scenario's check) 1.
#[test]
fn a_refused_input_exits_2_whichever_check_refuses_it() {
    let refused: &[&[&str]] = &[
        &["plan", "--budget-gib", "nan"],
        &["plan", "--budget-gib", "-1"],
        &["plan", "-d", "0"],
        &["plan", "--layout", "junk", "--strategy", "none"],
        &["plan", "--preset", "/nonexistent/mine.toml"],
        &["plan", "--zero", "1", "--no-distributed-optimizer"],
        &["sweep", "--gpus", "0", "--global-batch", "64"],
        &[
            "simulate",
            "--schedule",
            "1f1b",
            "-p",
            "4",
            "-m",
            "8",
            "--comm",
            "-1",
        ],
        &["export", "svg", "--theme", "nosuchtheme"],
        &["--preset", "gpt3-175b-16k", "plan"],
        &["plan", "--bogus"],
    ];
    for args in refused {
        let (code, err) = exit_code(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error:"), "{args:?}: {err}");
    }
    // A plan that does not fit is an answer, not an error.
    let (code, err) = exit_code(&["plan", "--strategy", "none"]);
    assert_eq!(code, Some(0), "{err}");
}

/// A failure while running (the output cannot be written) exits 1.
#[test]
fn a_failure_while_running_exits_1() {
    let (code, err) = exit_code(&[
        "export",
        "svg",
        "--schedule",
        "1f1b",
        "-p",
        "2",
        "-m",
        "4",
        "--costs",
        "1,1,1",
        "-o",
        "/proc/pipescope-test.svg",
    ]);
    assert_eq!(code, Some(1), "{err}");
}

/// A file name that is not UTF-8 is refused naming the flag and what to do (clap's own
/// "invalid UTF-8 was detected in one or more arguments" named neither), exit status 2.
#[test]
fn a_path_that_is_not_utf8_is_refused_naming_its_flag() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bad = OsStr::from_bytes(b"/tmp/pipescope-\xff\xfe.toml");
    let cases: [(&[&str], &str); 4] = [
        (&["plan", "--preset"], "--preset"),
        (&["plan", "--profile"], "--profile"),
        (
            &[
                "export",
                "svg",
                "--schedule",
                "1f1b",
                "-p",
                "2",
                "-m",
                "4",
                "--costs",
                "1,1,1",
                "-o",
            ],
            "--output",
        ),
        (&["export", "svg", "--theme"], "--theme"),
    ];
    for (args, flag) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
            .args(args)
            .arg(bad)
            .env("XDG_CONFIG_HOME", "/nonexistent-pipescope-test")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            err.contains("UTF-8") && err.contains("rename"),
            "{args:?}: {err}"
        );
        assert!(err.contains("pipescope-"), "the value, shown: {err}");
    }
    // -o's own rule still reads as before.
    let (code, err) = exit_code(&["export", "svg", "-o", ""]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a file name, or - for standard output"),
        "{err}"
    );
}

/// A sweep's `--ep` that divides not the experts is refused up front, as `plan` refuses it
/// (`--ep 3` for DeepSeek-V3 answered "0 configurations" with exit status 0).
#[test]
fn a_sweep_ep_that_divides_not_the_experts_is_refused() {
    let (code, err) = exit_code(&[
        "sweep",
        "--model",
        "deepseek-v3",
        "--gpus",
        "8",
        "--global-batch",
        "8",
        "--ep",
        "8,3",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--ep = 3") && err.contains("256"), "{err}");
}
