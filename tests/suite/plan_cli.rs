//! `pipescope plan` and `pipescope compare` as processes: the JSON fields of docs/architecture.md
//! section 6, text tables, and errors on stderr with a non-zero exit.

#![allow(clippy::unwrap_used)]

use crate::cli_common;

use cli_common::pipescope as run;

const TOP: [&str; 12] = [
    "feasible",
    "infeasible_reason",
    "iteration_time_s",
    "bubble_rate",
    "mfu",
    "hfu",
    "strategy",
    "schedule",
    "baseline_iteration_time_s",
    "speedup",
    "solve_time_s",
    "stages",
];

const STAGE: [&str; 16] = [
    "stage",
    "first_block",
    "last_block",
    "ranges",
    "attention_blocks",
    "mlp_blocks",
    "static_bytes",
    "activation_bytes",
    "peak_memory_bytes",
    "budget_bytes",
    "in_flight",
    "forward_s",
    "backward_s",
    "recompute_s",
    "units",
    "offload_bytes",
];

fn check_plan(v: &serde_json::Value) {
    for k in TOP {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    // What was planned, so that a saved plan describes itself.
    for k in [
        "chunks",
        "sequence_parallel",
        "flash_attention",
        "overlap_grad_reduce",
        "overlap_param_gather",
        "budget_bytes",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    let stages = v["stages"].as_array().unwrap();
    assert!(!stages.is_empty());
    for st in stages {
        for k in STAGE {
            assert!(st.get(k).is_some(), "missing stages[].{k}");
        }
        for u in st["units"].as_array().unwrap() {
            for k in [
                "name",
                "size_bytes",
                "keep",
                "recompute",
                "compress",
                "offload",
            ] {
                assert!(u.get(k).is_some(), "missing units[].{k}");
            }
        }
    }
}

#[test]
fn plan_json_has_the_contract_fields() {
    let (ok, out, err) = run(&["plan", "--preset", "tiny-4x8", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    check_plan(&v);
    assert_eq!(v["strategy"], "adapipe");
    assert_eq!(v["schedule"], "1f1b");
    assert!(v["infeasible_reason"].is_null());
}

#[test]
fn plan_reports_infeasibility_as_json_not_an_error() {
    let (ok, out, err) = run(&["plan", "--strategy", "none", "--budget-gib", "30", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["feasible"], false);
    let reason = v["infeasible_reason"].as_str().unwrap();
    assert!(reason.contains("stage 0 needs"), "{reason}");
    assert!(reason.contains("budget 30.0 GiB"), "{reason}");
}

#[test]
fn compare_json_is_an_array_in_the_order_asked() {
    let (ok, out, err) = run(&[
        "compare",
        "--preset",
        "tiny-4x8",
        "--strategies",
        "none,full,adapipe",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 3);
    for (o, name) in a.iter().zip(["none", "full", "adapipe"]) {
        check_plan(o);
        assert_eq!(o["strategy"], name);
    }
}

#[test]
fn text_tables_and_errors() {
    let (ok, out, _) = run(&["plan", "--preset", "tiny-4x8"]);
    assert!(ok);
    assert!(out.contains("stage") && out.contains("peak GiB"), "{out}");
    let (ok, out, _) = run(&["compare", "--preset", "tiny-4x8"]);
    assert!(ok);
    for k in [
        "none",
        "full",
        "selective",
        "uniform",
        "adaptive",
        "adapipe",
        "offload",
        "compress",
        "unified",
    ] {
        assert!(out.contains(k), "{k} missing in\n{out}");
    }
    // Every row of the table fits an 80-column terminal whole, its peak included.
    for row in out.lines().skip(2).take_while(|l| !l.starts_with("note")) {
        assert!(
            row.chars().count() <= 80,
            "{} columns: {row}",
            row.chars().count()
        );
        assert!(row.contains(" GiB "), "{row}");
    }
    // Without units to recompute, `named` would repeat `none`'s row: the default leaves it out.
    let (ok, out, err) = run(&["compare", "--preset", "tiny-4x8", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["strategy"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"none") && !names.contains(&"named"),
        "{names:?}"
    );
    let (ok, out, err) = run(&[
        "compare",
        "--preset",
        "tiny-4x8",
        "--strategy",
        "named",
        "--recompute-units",
        "fc1_out,gelu_out",
        "--json",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("\"named\""), "{out}");
    let (ok, out, err) = run(&["compare", "--strategies", "none,bogus"]);
    assert!(!ok);
    assert!(out.is_empty());
    assert!(err.contains("bogus"), "{err}");
}

/// A `--recompute-units` name the model refuses is quoted as typed: the short form
/// (`attn.zz`) is not shown as the full name it maps to (`attention.zz`), for `plan` and
/// `sweep` alike.
#[test]
fn a_refused_unit_name_is_quoted_as_typed() {
    let plan = ["plan", "--strategy", "named"];
    let sweep = [
        "sweep",
        "--gpus",
        "4",
        "--global-batch",
        "8",
        "--strategies",
        "named",
    ];
    for command in [&plan[..], &sweep[..]] {
        let units = [
            "--preset",
            "tiny-4x8",
            "--recompute-units",
            "attn.zz,mlp.fc1_out",
        ];
        let (ok, out, err) = run(&[command, &units[..]].concat());
        let command = command[0];
        assert!(!ok, "{out}");
        assert!(err.contains("= attn.zz:"), "{command}: {err}");
        assert!(!err.contains("attention.zz"), "{command}: {err}");
    }
}

/// A plan that offloads shows, per stage, what sits on the host and the copies' `k` (JSON:
/// `offload_bytes`, `copy_ratio`); one that offloads nothing has neither column.
#[test]
fn the_text_table_shows_the_host_side_of_offload() {
    let (ok, out, err) = run(&["plan", "--preset", "pipeoffload-38.5b-po-h"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let header = lines.iter().find(|l| l.contains("peak GiB")).unwrap();
    assert!(header.ends_with("host GiB      k"), "{header}");
    // Stage 1: a layer in each chunk, chunk 0 offloaded, k below 1 (docs/model.md, "k").
    let row: Vec<&str> = lines
        .iter()
        .find(|l| l.split_whitespace().next() == Some("1"))
        .unwrap()
        .split_whitespace()
        .collect();
    let host: f64 = row[row.len() - 2].parse().unwrap();
    let k: f64 = row[row.len() - 1].parse().unwrap();
    assert!(host > 1.0, "{row:?}");
    assert!(k > 0.5 && k < 1.0, "{row:?}");
    let (ok, json, _) = run(&["plan", "--preset", "pipeoffload-38.5b-po-h", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let st = &v["stages"][1];
    assert!((st["copy_ratio"].as_f64().unwrap() - k).abs() < 0.01);
    assert!((st["offload_bytes"].as_f64().unwrap() / (1u64 << 30) as f64 - host).abs() < 0.01);

    let (ok, out, _) = run(&["plan", "--preset", "pipeoffload-38.5b-1f1b-i-tp8"]);
    assert!(ok);
    assert!(!out.contains("host GiB"), "{out}");
    let (_, json, _) = run(&["plan", "--preset", "pipeoffload-38.5b-1f1b-i-tp8", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["stages"][0].get("copy_ratio").is_none());
}

/// `--device-max-connections` is a setting of every command's one parser: above 1 the
/// backward's tensor-parallel collectives are exposed (more `tp_comm`, a longer iteration),
/// and a count outside 1 to 32 is refused naming the flag, the key and the range.
#[test]
fn device_max_connections_exposes_the_backward_collectives() {
    let tp_comm = |n: &str| {
        let args = [
            "plan",
            "--preset",
            "pipeoffload-38.5b-1f1b-i-tp8",
            "--device-max-connections",
            n,
            "--json",
        ];
        let (ok, json, err) = run(&args);
        assert!(ok, "{err}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        (
            v["time_breakdown_s"]["tp_comm"].as_f64().unwrap(),
            v["iteration_time_s"].as_f64().unwrap(),
        )
    };
    let (hidden, fast) = tp_comm("1");
    let (exposed, slow) = tp_comm("8");
    assert!(exposed > hidden * 1.2 && slow > fast, "{hidden} {exposed}");
    for cmd in ["plan", "compare"] {
        let (ok, _, err) = run(&[cmd, "--device-max-connections", "33"]);
        assert!(!ok);
        assert!(
            err.contains("plan.device_max_connections (--device-max-connections) = 33")
                && err.contains("1 to 32"),
            "{err}"
        );
    }
}

/// A whole-number flag says its range from the one ranges table whatever the bad text
/// (`-1`, `1e99`, `nan`, `x`), and a group size above p is run as p with a note that says so.
#[test]
fn count_flags_say_their_range_and_a_large_group_is_noted() {
    for (flag, range) in [
        ("--mtp-layers", "a whole number from 0 to 64"),
        ("--device-max-connections", "a whole number from 1 to 32"),
        ("-s", "a whole number from 1 to 16777216"),
        ("-m", "a whole number from 1 to 1048576"),
        ("-b", "a whole number from 1 to 65536"),
        ("-p", "a whole number from 1 to 65536"),
        ("--group-size", "a whole number from 1 to 65536"),
    ] {
        for bad in ["-1", "1e99", "nan", "x"] {
            let (ok, out, err) = run(&["plan", "--preset", "tiny-4x8", flag, bad]);
            assert!(!ok && out.is_empty(), "{flag} {bad}");
            assert!(err.contains(range), "{flag} {bad}: {err}");
        }
    }
    let (ok, _, err) = run(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "gis",
        "--chunks",
        "2",
        "-m",
        "8",
        "--group-size",
        "9",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("note: group size 9 is above p (4)"), "{err}");
    let (ok, _, err) = run(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "gis",
        "--chunks",
        "2",
        "-m",
        "8",
        "--group-size",
        "4",
    ]);
    assert!(ok, "{err}");
    assert!(!err.contains("group size"), "{err}");
}

/// The knapsack strategies can recompute a layer whole, so they reach `full`'s memory: where
/// `full` fits (GPT-3 175B at s 16384 on Ascend 910B, 56 GiB) `adaptive` and `uniform` fit
/// too, and `adaptive` is no slower.
#[test]
fn knapsack_strategies_fit_wherever_full_recomputation_fits() {
    let plan = |strategy: &str| -> serde_json::Value {
        let (ok, out, err) = run(&[
            "plan",
            "--preset",
            "gpt3-175b-16k",
            "--gpu",
            "ascend-910b",
            "--schedule",
            "1f1b",
            "--budget-gib",
            "56",
            "--strategy",
            strategy,
            "--json",
        ]);
        assert!(ok, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let full = plan("full");
    assert_eq!(full["feasible"], true);
    let full_s = full["iteration_time_s"].as_f64().unwrap();
    for strategy in ["adaptive", "uniform"] {
        let v = plan(strategy);
        assert_eq!(
            v["feasible"], true,
            "{strategy}: {}",
            v["infeasible_reason"]
        );
        if strategy == "adaptive" {
            let s = v["iteration_time_s"].as_f64().unwrap();
            assert!(s <= full_s, "adaptive {s} s, full {full_s} s");
        }
    }
}

/// A routing imbalance above experts / top-k is refused by its own check, naming the flag,
/// before the activation-size check it would otherwise trip (which blamed `--seq`).
#[test]
fn routing_imbalance_beyond_experts_over_top_k_names_its_own_flag() {
    for x in ["1000000", "1e9", "33"] {
        let (ok, _, err) = run(&[
            "plan",
            "--model",
            "deepseek-v3",
            "--gpu",
            "h100-80gb",
            "-t",
            "1",
            "-p",
            "16",
            "-d",
            "64",
            "--ep",
            "64",
            "--routing-imbalance",
            x,
        ]);
        assert!(!ok, "{x}");
        assert!(err.contains("--routing-imbalance"), "{x}: {err}");
        assert!(
            err.contains("at most experts / experts_per_token (256 / 8 = 32)"),
            "{x}: {err}"
        );
        assert!(!err.contains("seq"), "{x}: {err}");
    }
}

/// On DualPipe (one split serves both directions) `adapipe` tries the even and the balanced
/// partition: it is no slower than `adaptive` on either, and its note says so.
#[test]
fn adapipe_on_dualpipe_keeps_the_better_of_even_and_balanced() {
    let plan = |strategy: &str, partition: &str| -> serde_json::Value {
        let (ok, out, err) = run(&[
            "plan",
            "--model",
            "deepseek-v3",
            "--gpu",
            "h100-80gb",
            "-t",
            "1",
            "-p",
            "16",
            "-d",
            "128",
            "--ep",
            "64",
            "--zero",
            "1",
            "-s",
            "4096",
            "--global-batch",
            "15360",
            "--schedule",
            "dualpipe",
            "--precision",
            "fp8",
            "--strategy",
            strategy,
            "--partition",
            partition,
            "--json",
        ]);
        assert!(ok, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let time = |v: &serde_json::Value| v["iteration_time_s"].as_f64().unwrap();
    let searched = plan("adapipe", "even");
    for partition in ["even", "balanced"] {
        let fixed = plan("adaptive", partition);
        assert!(
            time(&searched) <= time(&fixed) * (1.0 + 1e-9),
            "adapipe {} adaptive --partition {partition} {}",
            time(&searched),
            time(&fixed)
        );
    }
    let notes = searched["notes"].to_string();
    assert!(notes.contains("even and the balanced partition"), "{notes}");
    assert!(!notes.contains("Chimera's replicated"), "{notes}");
}

/// The baseline is 1F1B with full recomputation on the scenario's own split (docs/cli.md):
/// with `--partition balanced` it is that plan's iteration time.
#[test]
fn the_baseline_runs_on_the_scenarios_split() {
    let plan = |strategy: &str, schedule: &str| -> serde_json::Value {
        let (ok, out, err) = run(&[
            "plan",
            "--preset",
            "tiny-4x8",
            "--partition",
            "balanced",
            "--schedule",
            schedule,
            "--strategy",
            strategy,
            "--json",
        ]);
        assert!(ok, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let full = plan("full", "1f1b");
    let other = plan("adaptive", "zb-h1");
    assert_eq!(other["baseline_iteration_time_s"], full["iteration_time_s"]);
}

/// Interleaved's "m a multiple of p", where m came from --global-batch, names that flag,
/// how m follows from it, and the nearest global batches that work.
#[test]
fn interleaved_refuses_a_global_batch_with_the_nearest_valid_ones() {
    let (ok, _, err) = run(&[
        "plan",
        "--model",
        "llama3.1-8b",
        "--gpu",
        "h100-80gb",
        "-p",
        "16",
        "-d",
        "128",
        "--global-batch",
        "15360",
        "--schedule",
        "interleaved",
        "--chunks",
        "2",
    ]);
    assert!(!ok);
    assert!(err.contains("--global-batch"), "{err}");
    assert!(err.contains("15360 / (1 x 128) = 120"), "{err}");
    assert!(err.contains("14336 or 16384"), "{err}");
}

/// A layout's own mistakes are named before the stage count: an empty stage at its `|`, an
/// `E` that is not first or repeated at the `E`; a wrong count says which stage is too many.
#[test]
fn layout_errors_name_the_mistake_before_the_stage_count() {
    let refusal = |layout: &str| -> String {
        let (ok, _, err) = run(&[
            "plan",
            "--strategy",
            "adaptive",
            "-p",
            "8",
            "--layout",
            layout,
        ]);
        assert!(!ok, "{layout}");
        err
    };
    let e = refusal("Et*12||t*12|t*12|t*12|t*12|t*12|t*12L");
    assert!(e.contains("column 6: stage 2 is empty"), "{e}");
    let e = refusal("LEt*96");
    assert!(
        e.contains("column 1: the first layer must be the embedding"),
        "{e}"
    );
    let e = refusal("(Et*12|)*8L");
    assert!(e.contains("must appear exactly once"), "{e}");
    let e = refusal("Et*12|(t*12|)*7L");
    assert!(e.contains("stage 9 is the first too many"), "{e}");
}

/// The headline quotes the planner's one-chunk estimate only where every device holds one
/// chunk (for interleaved it read as a large model/simulation disagreement).
#[test]
fn the_headline_estimate_is_shown_for_single_chunk_schedules_only() {
    let headline = |schedule: &str| -> String {
        let (ok, out, err) = run(&["plan", "--preset", "tiny-4x8", "--schedule", schedule]);
        assert!(ok, "{err}");
        out.lines().next().unwrap_or_default().to_string()
    };
    assert!(headline("1f1b").contains("(estimate "));
    assert!(!headline("interleaved").contains("(estimate "));
}
