//! Flags and outputs as a user meets them: an offload that copies nothing is refused, a
//! `po-f` that would run as `po-h` is refused, expert flags that do nothing are refused (or
//! noted), the JSON outputs say what they planned and in which unit, and the sweep refuses a
//! dense model's `--ep` up front and quotes its real `--gpus` limit.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

const DEEPSEEK: &[&str] = &[
    "--model",
    "deepseek-v3",
    "--gpu",
    "h100-80gb",
    "-p",
    "16",
    "-d",
    "64",
    "-t",
    "1",
    "--precision",
    "fp8",
    "-s",
    "4096",
    "-b",
    "1",
    "-m",
    "32",
    "--strategy",
    "full",
];

fn with(cmd: &str, base: &[&str], extra: &[&str]) -> (bool, String, String) {
    let mut all = vec![cmd];
    all.extend_from_slice(base);
    all.extend_from_slice(extra);
    pipescope(&all)
}

#[test]
fn an_offload_whose_copies_are_too_slow_for_every_gap_is_refused() {
    for (kind, extra) in [
        ("po-h", &[][..]),
        ("po-f", &[][..]),
        ("gis-offload", &["--offload-chunks", "2"][..]),
    ] {
        let mut args = vec![
            "simulate",
            "--schedule",
            kind,
            "-p",
            "4",
            "-m",
            "8",
            "--costs",
            "1,1,1",
            "--offload-cost",
            "100",
        ];
        args.extend_from_slice(extra);
        let (ok, _, err) = pipescope(&args);
        assert!(!ok, "{kind}");
        assert!(err.contains("no copy fits"), "{kind}: {err}");
        // A copy that fits still runs.
        let last = args.iter().position(|&a| a == "100").unwrap();
        args[last] = "0.5";
        let (ok, _, err) = pipescope(&args);
        assert!(ok, "{kind}: {err}");
    }
}

#[test]
fn po_f_that_could_only_offload_po_h_s_chunks_is_refused() {
    let (ok, _, err) = pipescope(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "po-f",
        "--strategy",
        "offload",
    ]);
    assert!(!ok);
    assert!(err.contains("po-f cannot offload every chunk"), "{err}");
    assert!(err.contains("k = "), "{err}");
    let (ok, _, err) = pipescope(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "po-h",
        "--strategy",
        "offload",
    ]);
    assert!(ok, "{err}");
}

#[test]
fn expert_flags_without_an_all_to_all_are_refused() {
    let (ok, _, err) = with("plan", DEEPSEEK, &["--ep", "1", "--deepep"]);
    assert!(!ok);
    assert!(err.contains("plan.deepep") && err.contains("ep 1"), "{err}");
    let (ok, _, err) = with(
        "plan",
        DEEPSEEK,
        &["--ep", "1", "--schedule", "dualpipe", "--moe-a2a-overlap"],
    );
    assert!(!ok);
    assert!(
        err.contains("plan.moe_a2a_overlap") && err.contains("ep 1"),
        "{err}"
    );
}

#[test]
fn deepep_inside_one_node_is_noted() {
    let (ok, out, err) = with("plan", DEEPSEEK, &["--ep", "8", "--deepep", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("fits inside one node")),
        "{notes:?}"
    );
    let (ok, out, _) = with("plan", DEEPSEEK, &["--ep", "64", "--deepep", "--json"]);
    assert!(ok);
    assert!(!out.contains("fits inside one node"));
}

#[test]
fn plan_json_says_what_was_planned_and_simulate_json_its_unit() {
    let (ok, out, err) = pipescope(&["plan", "--preset", "tiny-4x8", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["scenario"], "tiny-4x8");
    assert_eq!(v["model"], "gpt-tiny");
    assert_eq!(v["gpu"], "a100-40gb");
    assert_eq!(v["micro_batches"], 8);
    assert_eq!(v["micro_batch_size"], 1);
    assert_eq!(v["seq_len"], 4096);
    let (ok, out, _) = pipescope(&["simulate", "--preset", "tiny-4x8", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["units"], "s");
    assert_eq!(v["makespan_s"], v["makespan"]);
    let (ok, out, _) = pipescope(&[
        "simulate",
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--json",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["units"], "cost units");
    assert!(v.get("makespan_s").is_none());
}

#[test]
fn huge_costs_print_in_scientific_notation() {
    let (ok, out, _) = pipescope(&[
        "simulate",
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--costs",
        "1e300,1e300,1e300",
    ]);
    assert!(ok);
    let head = out.lines().next().unwrap();
    assert!(head.contains("makespan 3.300e301"), "{head}");
}

#[test]
fn sweep_refuses_a_dense_model_s_ep_and_quotes_its_gpu_limit() {
    let (ok, _, err) = pipescope(&[
        "sweep",
        "--model",
        "llama3-8b",
        "--gpu",
        "h100-80gb",
        "--gpus",
        "16",
        "--global-batch",
        "64",
        "--ep",
        "2",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--ep = 2") && err.contains("dense model"),
        "{err}"
    );
    let (ok, _, err) = pipescope(&[
        "sweep",
        "--model",
        "llama3-8b",
        "--gpu",
        "h100-80gb",
        "--gpus",
        "0",
        "--global-batch",
        "64",
    ]);
    assert!(!ok);
    assert!(err.contains("from 1 to 4294967295"), "{err}");
}

/// Scenario flags before the subcommand are the TUI's: with a subcommand they are refused,
/// not silently dropped for the default scenario.
#[test]
fn scenario_flags_before_a_subcommand_are_refused_not_ignored() {
    let (ok, _, err) = pipescope(&["--preset", "/nonexistent.toml", "plan"]);
    assert!(!ok);
    assert!(
        err.contains("before the subcommand") && err.contains("plan --preset"),
        "{err}"
    );
    let (ok, _, err) = pipescope(&["-p", "4", "presets"]);
    assert!(!ok, "{err}");
    // After the subcommand they apply as usual.
    let (ok, out, err) = pipescope(&["plan", "--preset", "tiny-4x8", "--json"]);
    assert!(ok && out.contains("\"stages\""), "{err}");
}

/// `plan`'s first line gives a mixture of experts' expert layout beside `t x cp x p x d`; a
/// dense model's has none.
#[test]
fn the_plan_headline_gives_ep_and_etp_for_a_mixture_of_experts() {
    let (ok, out, err) = pipescope(&[
        "plan",
        "--model",
        "qwen3-30b-a3b",
        "--gpu",
        "h100-80gb",
        "-p",
        "2",
        "-t",
        "1",
        "-d",
        "8",
        "--ep",
        "8",
    ]);
    assert!(ok, "{err}");
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("(t1 x cp1 x p2 x d8, ep8 x etp1)"),
        "{first}"
    );
    let (ok, out, _) = pipescope(&["plan", "-p", "4", "-m", "8"]);
    assert!(ok && !out.lines().next().unwrap().contains(", ep"), "{out}");
}

/// `named` with no units to recompute would run as `none`: plan, compare and sweep refuse it,
/// naming the flag and what to give; with units it runs.
#[test]
fn named_without_units_is_refused() {
    for (args, flag) in [
        (
            &["plan", "-p", "4", "-m", "8", "--strategy", "named"][..],
            "--strategy named",
        ),
        (
            &[
                "compare",
                "-p",
                "4",
                "-m",
                "8",
                "--strategies",
                "named,full",
            ][..],
            "--strategies named",
        ),
        (
            &[
                "sweep",
                "--gpus",
                "8",
                "--global-batch",
                "8",
                "--strategies",
                "full,named",
            ][..],
            "--strategies named",
        ),
    ] {
        let (ok, _, err) = pipescope(args);
        assert!(!ok, "{args:?}");
        assert!(
            err.contains(flag) && err.contains("--recompute-units"),
            "{args:?}: {err}"
        );
    }
    let (ok, _, err) = pipescope(&[
        "plan",
        "-p",
        "4",
        "-m",
        "8",
        "--strategy",
        "named",
        "--recompute-units",
        "core_attn",
    ]);
    assert!(ok, "{err}");
}
