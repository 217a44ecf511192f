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
    // ... with every key `plan --json` has: what was planned, batch and layout included.
    for k in [
        "scenario",
        "model",
        "gpu",
        "micro_batches",
        "micro_batch_size",
        "seq_len",
        "chunks",
        "sequence_parallel",
        "budget_bytes",
    ] {
        assert!(best.get(k).is_some(), "best lacks {k}");
    }
    assert_eq!(best["micro_batches"], ranked[0]["m"]);
    assert_eq!(best["micro_batch_size"], ranked[0]["b"]);
    assert_eq!(best["chunks"], ranked[0]["chunks"]);
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

/// The total order of DESIGN section 10 on two JSON entries.
fn total_order(a: &serde_json::Value, b: &serde_json::Value) -> std::cmp::Ordering {
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
    let s = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap().to_string();
    let bl = |v: &serde_json::Value, k: &str| v[k].as_bool().unwrap();
    f(a, "iteration_time_s")
        .total_cmp(&f(b, "iteration_time_s"))
        .then(f(a, "peak_memory_bytes").total_cmp(&f(b, "peak_memory_bytes")))
        .then(f(a, "t").total_cmp(&f(b, "t")))
        .then(f(a, "p").total_cmp(&f(b, "p")))
        .then(f(a, "d").total_cmp(&f(b, "d")))
        .then(f(a, "b").total_cmp(&f(b, "b")))
        .then(f(a, "m").total_cmp(&f(b, "m")))
        .then(f(a, "chunks").total_cmp(&f(b, "chunks")))
        .then(bl(a, "sp").cmp(&bl(b, "sp")))
        .then(bl(a, "distributed_optimizer").cmp(&bl(b, "distributed_optimizer")))
        .then(s(a, "schedule").cmp(&s(b, "schedule")))
        .then(s(a, "strategy").cmp(&s(b, "strategy")))
}

#[test]
fn json_is_in_the_total_order_and_the_table_merges_ties_into_one_line() {
    let args: Vec<&str> = SMALL
        .iter()
        .copied()
        .filter(|a| !a.starts_with("--top"))
        .chain(["--top=40"])
        .collect();
    let mut json_args = args.clone();
    json_args.push("--json");
    let (ok, out, err) = run(&json_args);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for list in ["ranked", "pareto"] {
        let entries = v[list].as_array().unwrap();
        for w in entries.windows(2) {
            // serde_json's parser may round the last bit: times one ulp apart can read the
            // same, and then only the exact times (which the tool sorts by) decide.
            let t = |e: &serde_json::Value| e["iteration_time_s"].as_f64().unwrap();
            let near = (t(&w[0]) - t(&w[1])).abs() <= 1e-15 * t(&w[0]).abs();
            assert!(
                total_order(&w[0], &w[1]) == std::cmp::Ordering::Less || near,
                "{list}: {} before {}",
                w[0],
                w[1]
            );
        }
    }
    // Ties that differ only in strategy: several JSON entries, one table line.
    let ranked = v["ranked"].as_array().unwrap();
    let key = |e: &serde_json::Value| {
        let mut e = e.clone();
        e.as_object_mut().unwrap().remove("strategy");
        e.to_string()
    };
    let mut lines = 0;
    let mut merged = None;
    for (i, e) in ranked.iter().enumerate() {
        if i == 0 || key(e) != key(&ranked[i - 1]) {
            lines += 1;
        } else {
            merged = Some((ranked[i - 1].clone(), e.clone()));
        }
    }
    let (first, second) = merged.expect("the small sweep has a tie (none and adapipe)");
    let (ok, table, err) = run(&args);
    assert!(ok, "{err}");
    let section: Vec<&str> = table
        .split("\nranked")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .skip(2)
        .collect();
    assert_eq!(section.len(), lines, "{table}");
    let both = format!(
        "{},{}",
        first["strategy"].as_str().unwrap(),
        second["strategy"].as_str().unwrap()
    );
    assert!(section.iter().any(|l| l.contains(&both)), "{both}\n{table}");
    assert!(
        table.contains(&format!("({} on {lines} lines", ranked.len())),
        "{table}"
    );
}

#[test]
fn the_best_stage_table_stays_aligned_with_two_ranges_per_stage() {
    let (ok, out, err) = run(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "zb-v",
        "-m",
        "8",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("stage"))
        .unwrap();
    let width = lines[header].len();
    let rows: Vec<&&str> = lines[header + 1..]
        .iter()
        .take_while(|l| !l.starts_with("note"))
        .collect();
    assert!(
        rows.iter().any(|l| l.contains(',')),
        "two ranges per stage: {out}"
    );
    for row in rows {
        assert_eq!(row.len(), width, "{out}");
    }
}

/// A mixture of experts' sweep shows each row's expert layout (`ep`, `ep x etp` where etp is
/// above 1); a dense model's table has no such column.
#[test]
fn the_table_shows_the_expert_layout_of_a_mixture_of_experts() {
    let (ok, out, err) = run(&[
        "sweep",
        "--model",
        "qwen3-30b-a3b",
        "--gpu",
        "h100-80gb",
        "--gpus",
        "8",
        "--global-batch",
        "64",
        "-s",
        "2048",
        "--pp",
        "1",
        "--tp",
        "1",
        "--ep",
        "4",
        "--etp",
        "1,2",
        "--schedules",
        "1f1b",
        "--strategies",
        "full",
        "--top=10",
    ]);
    assert!(ok, "{err}");
    let header = |text: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with('#'))
            .unwrap_or_default()
            .to_string()
    };
    assert!(header(&out).contains(" ep "), "{out}");
    assert!(out.contains("4x2"), "{out}");
    let (ok, dense, err) = run(&with(&[]));
    assert!(ok, "{err}");
    assert!(!header(&dense).contains(" ep "), "{dense}");
}

/// A GPU count given twice is swept once: the same configurations, header and JSON as
/// giving it once.
#[test]
fn a_repeated_gpu_count_is_swept_once() {
    let once = run(&with(&["--json"]));
    let mut twice_args = with(&["--json"]);
    let i = twice_args.iter().position(|a| *a == "--gpus").unwrap();
    twice_args[i + 1] = "8,8";
    let twice = run(&twice_args);
    assert!(once.0 && twice.0, "{} {}", once.2, twice.2);
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&once.1).unwrap(),
        serde_json::from_str(&twice.1).unwrap(),
    );
    assert_eq!(a["configs"], b["configs"]);
    assert_eq!(a["ranked"], b["ranked"]);
    twice_args.retain(|x| *x != "--json");
    let (ok, text, err) = run(&twice_args);
    assert!(ok, "{err}");
    assert!(!text.contains("8/8"), "{text}");
}

/// A number written in digits but too large for its flag's type says the range the sweep
/// allows, as 0 does, not that it is not written in digits.
#[test]
fn a_count_too_large_for_its_type_says_the_range_not_digits() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["sweep", "--gpus", "4294967296", "--global-batch", "8"],
            "whole numbers from 1 to 4294967295",
        ),
        (
            &[
                "sweep",
                "--gpus",
                "99999999999999999999",
                "--global-batch",
                "8",
            ],
            "whole numbers from 1 to 4294967295",
        ),
        (
            &[
                "sweep",
                "--gpus",
                "64",
                "--global-batch",
                "99999999999999999999",
            ],
            "a whole number of sequences from 1 to 68719476736",
        ),
        (
            &[
                "sweep",
                "--gpus",
                "64",
                "--global-batch",
                "8",
                "--mbs",
                "99999999999999999999",
            ],
            "whole numbers from 1 to 65536",
        ),
        (
            &[
                "sweep",
                "--gpus",
                "64",
                "--global-batch",
                "8",
                "--ep",
                "4294967296",
            ],
            "whole numbers from 1 to 65536",
        ),
    ];
    for (args, allowed) in cases {
        let (ok, _, err) = run(args);
        assert!(!ok, "{args:?}");
        assert!(err.contains(allowed), "{args:?}: {err}");
        assert!(!err.contains("written in digits"), "{args:?}: {err}");
    }
    // Not digits at all: that is what it says.
    let (ok, _, err) = run(&["sweep", "--gpus", "6.4e1", "--global-batch", "8"]);
    assert!(!ok);
    assert!(err.contains("written in digits"), "{err}");
    // Within the type but past the range: the sweep's check names the value.
    let (ok, _, err) = run(&["sweep", "--gpus", "64", "--global-batch", "68719476737"]);
    assert!(!ok);
    assert!(err.contains("--global-batch = 68719476737"), "{err}");
}
