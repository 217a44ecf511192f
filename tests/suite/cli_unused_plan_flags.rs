//! Flags that the chosen strategy, tensor-parallel size, export format or swept lists give
//! nothing to act on are refused, naming the flag, the value and what would make it apply
//! (docs/cli.md: no flag is accepted and silently ignored); `sweep --top 0` is refused.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

fn refused(args: &[&str]) -> String {
    let (ok, out, err) = pipescope(args);
    assert!(!ok, "{args:?} was accepted: {out}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn accepted(args: &[&str]) {
    let (ok, _, err) = pipescope(args);
    assert!(ok, "{args:?}: {err}");
}

const TINY: &[&str] = &["plan", "--preset", "tiny-4x8", "--json"];

fn tiny(more: &[&str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = TINY.to_vec();
    for m in more {
        v.push(Box::leak(m.to_string().into_boxed_str()));
    }
    v
}

#[test]
fn strategy_flags_off_their_strategies_are_refused() {
    let e = refused(&tiny(&[
        "--strategy",
        "full",
        "--recompute-units",
        "ln_out",
    ]));
    assert!(
        e.contains("--recompute-units ln_out") && e.contains("--strategy named"),
        "{e}"
    );
    accepted(&tiny(&[
        "--strategy",
        "named",
        "--recompute-units",
        "ln_out",
    ]));
    let e = refused(&tiny(&["--strategy", "none", "--objective", "adapipe"]));
    assert!(
        e.contains("--objective adapipe") && e.contains("adapipe, unified, lynx"),
        "{e}"
    );
    accepted(&tiny(&["--strategy", "adapipe", "--objective", "adapipe"]));
    let e = refused(&tiny(&["--strategy", "none", "--overlap-recompute"]));
    assert!(
        e.contains("--overlap-recompute") && e.contains("recomputes nothing"),
        "{e}"
    );
    accepted(&tiny(&["--strategy", "full", "--overlap-recompute"]));
}

#[test]
fn device_connections_without_tensor_parallelism_are_refused() {
    let e = refused(&[
        "plan",
        "--model",
        "llama3.1-8b",
        "--gpu",
        "h100-80gb",
        "-t",
        "1",
        "-p",
        "2",
        "-s",
        "8192",
        "-m",
        "8",
        "--device-max-connections",
        "8",
    ]);
    assert!(
        e.contains("--device-max-connections 8") && e.contains("-t/--tp above 1"),
        "{e}"
    );
}

#[test]
fn export_theme_is_refused_off_svg() {
    for format in ["megatron", "perfetto", "torchtitan"] {
        let e = refused(&[
            "export",
            format,
            "--preset",
            "tiny-4x8",
            "--schedule",
            "1f1b",
            "--theme",
            "dark",
        ]);
        assert!(
            e.contains("--theme dark") && e.contains(format) && e.contains("svg"),
            "{e}"
        );
    }
}

const SWEEP: &[&str] = &[
    "sweep",
    "--preset",
    "tiny-4x8",
    "--gpus",
    "4",
    "--global-batch",
    "8",
];

fn sweep(more: &[&str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = SWEEP.to_vec();
    for m in more {
        v.push(Box::leak(m.to_string().into_boxed_str()));
    }
    v
}

#[test]
fn sweep_values_no_configuration_uses_are_refused() {
    let e = refused(&sweep(&["--chunks", "1", "--schedules", "interleaved"]));
    assert!(e.contains("--chunks 1") && e.contains("interleaved"), "{e}");
    let e = refused(&sweep(&["--pp", "5"]));
    assert!(e.contains("--pp 5") && e.contains("--gpus 4"), "{e}");
    let e = refused(&sweep(&["--recompute-units", "ln_out"]));
    assert!(e.contains("--recompute-units ln_out"), "{e}");
    let e = refused(&sweep(&["--top", "0"]));
    assert!(
        e.contains("--top") && e.contains("'0'") && e.contains("from 1"),
        "{e}"
    );
}
