//! `pipescope sweep` as a process: the JSON fields of docs/cli.md, one CSV row per
//! configuration, the table, and errors that name the flag.

#![allow(clippy::unwrap_used)]

use crate::cli_common;

use cli_common::pipescope as run;

const SMALL: [&str; 12] = [
    "sweep",
    "--preset",
    "tiny-4x8",
    "--gpus",
    "8",
    "--global-batch",
    "16",
    "--pp",
    "1,2,4",
    "--tp",
    "1,2",
    "--top=3",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    SMALL.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn json_has_the_contract_fields() {
    let (ok, out, err) = run(&with(&["--json"]));
    assert!(ok, "{err}");
    assert!(err.is_empty(), "progress on a non-terminal stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for k in ["configs", "feasible", "solved", "best", "ranked", "pareto"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    let configs = v["configs"].as_u64().unwrap();
    assert!(configs > 0 && v["solved"].as_u64().unwrap() <= configs);
    let ranked = v["ranked"].as_array().unwrap();
    assert_eq!(ranked.len(), 3);
    for k in [
        "t",
        "p",
        "d",
        "b",
        "m",
        "chunks",
        "sp",
        "distributed_optimizer",
        "schedule",
        "strategy",
        "iteration_time_s",
        "tokens_per_s_per_gpu",
        "mfu",
        "peak_memory_bytes",
    ] {
        assert!(ranked[0].get(k).is_some(), "ranked entry lacks {k}");
    }
    // best is the plan --json object of the first ranked entry.
    let best = &v["best"];
    assert_eq!(best["iteration_time_s"], ranked[0]["iteration_time_s"]);
    assert!(best["stages"].as_array().is_some());
    // tokens/s/GPU = global batch x s / time / GPUs.
    let t = ranked[0]["iteration_time_s"].as_f64().unwrap();
    let tps = ranked[0]["tokens_per_s_per_gpu"].as_f64().unwrap();
    assert!((tps - 16.0 * 4096.0 / t / 8.0).abs() < 1e-6 * tps);
    let p = &v["pareto"].as_array().unwrap();
    assert!(!p.is_empty());
}

#[test]
fn csv_has_one_row_per_configuration_with_reasons() {
    let (ok, out, err) = run(&with(&["--csv", "--budget-gib", "3"]));
    assert!(ok, "{err}");
    let (_, json, _) = run(&with(&["--json", "--budget-gib", "3"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len() as u64, v["configs"].as_u64().unwrap() + 1);
    assert!(lines[0].starts_with("gpus,t,p,d,b,m,chunks,sp,distributed_optimizer"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("does-not-fit") && l.contains("GiB")),
        "no configuration ruled out by memory at 3 GiB"
    );
}

#[test]
fn table_shows_counts_reasons_and_the_front() {
    let (ok, out, err) = run(&with(&[]));
    assert!(ok, "{err}");
    assert!(out.contains("configurations"), "{out}");
    assert!(out.contains("rejected:"), "{out}");
    assert!(out.contains("Pareto front"), "{out}");
    assert!(out.contains("best:"), "{out}");
}

#[test]
fn bad_values_name_the_flag() {
    let (ok, _, err) = run(&["sweep", "--gpus", "0", "--global-batch", "8"]);
    assert!(!ok);
    assert!(err.contains("--gpus"), "{err}");
    let (ok, _, err) = run(&with(&["--reserve-gib", "500"]));
    assert!(!ok);
    assert!(err.contains("--reserve-gib"), "{err}");
    let (ok, _, err) = run(&with(&["--reserve-gib", "1", "--budget-gib", "3"]));
    assert!(!ok);
    assert!(
        err.contains("--reserve-gib") || err.contains("--budget-gib"),
        "{err}"
    );
    let (ok, _, err) = run(&["sweep", "--gpus", "8"]);
    assert!(!ok);
    assert!(err.contains("--global-batch"), "{err}");
}
