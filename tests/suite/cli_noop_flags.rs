//! Job flags that the scenario's layout gives nothing to act on are refused, naming the flag,
//! the value and why (docs/cli.md): a sharding ZeRO stage or a data-parallel overlap with
//! `d x cp = 1`, `--p2p` on one stage; the sweep counts a ZeRO stage it cannot use among its
//! rejection reasons; under zero 3 the overlaps are noted as what Megatron-FSDP does anyway.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

fn refused(args: &[&str]) -> String {
    let (ok, out, err) = pipescope(args);
    assert!(!ok, "{args:?} was accepted: {out}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn accepted(args: &[&str]) -> String {
    let (ok, _, err) = pipescope(args);
    assert!(ok, "{args:?}: {err}");
    err
}

const LLAMA: &[&str] = &[
    "plan",
    "--model",
    "llama3.1-8b",
    "--gpu",
    "h100-80gb",
    "-t",
    "2",
    "-m",
    "8",
    "-s",
    "8192",
    "--strategy",
    "full",
    "-p",
    "2",
    "--json",
];

fn llama(extra: &[&str]) -> Vec<&'static str> {
    let mut args = LLAMA.to_vec();
    for e in extra {
        args.push(Box::leak(e.to_string().into_boxed_str()));
    }
    args
}

#[test]
fn a_sharding_zero_with_one_data_parallel_rank_is_refused() {
    for (flags, named) in [
        (&["-d", "1", "--zero", "1"][..], "--zero 1"),
        (&["-d", "1", "--zero", "3"][..], "--zero 3"),
        (
            &["-d", "1", "--distributed-optimizer"][..],
            "--distributed-optimizer",
        ),
    ] {
        let err = refused(&llama(flags));
        assert!(
            err.contains(named) && err.contains("d x cp = 1 x 1 = 1") && err.contains("nothing"),
            "{flags:?}: {err}"
        );
    }
    // With two data-parallel ranks, or two context-parallel ones, there is something to shard.
    accepted(&llama(&["-d", "2", "--zero", "1"]));
    accepted(&llama(&["-d", "1", "--cp", "2", "--zero", "3"]));
    // Zero 0 on one rank is what the job does anyway, and is not a sharding flag.
    accepted(&llama(&["-d", "1", "--zero", "0"]));
}

#[test]
fn data_parallel_overlaps_with_one_rank_are_refused() {
    let err = refused(&llama(&["-d", "1", "--overlap-grad-reduce"]));
    assert!(
        err.contains("--overlap-grad-reduce") && err.contains("d x cp = 1"),
        "{err}"
    );
    accepted(&llama(&["-d", "2", "--overlap-grad-reduce"]));
    accepted(&llama(&[
        "-d",
        "2",
        "--zero",
        "1",
        "--overlap-grad-reduce",
        "--overlap-param-gather",
    ]));
}

#[test]
fn p2p_on_one_stage_is_refused_but_a_presets_value_is_kept() {
    let one_stage = ["plan", "--preset", "tiny-4x8", "-p", "1", "--json"];
    let mut args = one_stage.to_vec();
    args.extend(["--p2p", "blocking"]);
    let err = refused(&args);
    assert!(
        err.contains("--p2p blocking") && err.contains("p 1"),
        "{err}"
    );
    accepted(&one_stage);
    accepted(&[
        "plan", "--preset", "tiny-4x8", "--p2p", "blocking", "--json",
    ]);
    // korthikanti-22b records Megatron's blocking sends on its one stage: it loads as it is.
    accepted(&["plan", "--preset", "korthikanti-22b", "--json"]);
    let err = refused(&[
        "plan",
        "--preset",
        "korthikanti-22b",
        "--p2p",
        "overlapped",
        "--json",
    ]);
    assert!(err.contains("--p2p overlapped"), "{err}");
}

#[test]
fn overlaps_under_zero_3_are_noted_as_what_fsdp_does_anyway() {
    let err = accepted(&llama(&[
        "-d",
        "2",
        "--zero",
        "3",
        "--overlap-grad-reduce",
        "--overlap-param-gather",
    ]));
    assert!(
        err.contains("note: --overlap-grad-reduce --overlap-param-gather: zero 3"),
        "{err}"
    );
    let err = accepted(&llama(&["-d", "2", "--zero", "1", "--overlap-grad-reduce"]));
    assert!(!err.contains("note"), "{err}");
}

#[test]
fn the_sweep_names_a_zero_stage_no_layout_can_use() {
    let args = [
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "8",
        "--global-batch",
        "8",
        "--zero",
        "1",
        "--cp",
        "1",
        "-t",
        "8",
        "-p",
        "1",
    ];
    let (ok, out, err) = pipescope(&args);
    assert!(ok, "{err}");
    assert!(out.contains("0 configurations"), "{out}");
    assert!(out.contains("zero 1 or 3 needs d x cp > 1 (1)"), "{out}");
    assert!(!out.contains("by status: \n"), "{out}");
}

#[test]
fn the_sweep_json_counts_the_pruned_configurations() {
    let (ok, out, err) = pipescope(&[
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "8",
        "--global-batch",
        "16",
        "-t",
        "1,2",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pruned = v["pruned"].as_u64().expect("a top-level pruned count");
    assert_eq!(pruned, v["statuses"]["pruned"].as_u64().unwrap_or(0));
}

#[test]
fn a_negative_zero_stage_says_the_allowed_stages() {
    for cmd in [
        &["plan", "--zero", "-1"][..],
        &[
            "sweep",
            "--gpus",
            "8",
            "--global-batch",
            "8",
            "--zero",
            "-1",
        ][..],
    ] {
        let err = refused(cmd);
        assert!(
            err.contains("--zero") && err.contains("expected one of 0, 1, 3"),
            "{cmd:?}: {err}"
        );
    }
}

#[test]
fn simulate_help_says_the_op_limit_as_a_number() {
    let (ok, out, _) = pipescope(&["simulate", "--help"]);
    assert!(ok);
    assert!(
        !out.contains("MAX_CELLS") && out.contains("131072"),
        "{out}"
    );
}

#[test]
fn the_compare_header_names_the_model_and_the_rows_align() {
    let (ok, out, err) = pipescope(&[
        "compare",
        "--preset",
        "tiny-4x8",
        "--model",
        "llama3.1-8b",
        "--gpu",
        "h100-80gb",
        "-s",
        "4096",
        "--strategies",
        "none,lynx-heuristic",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("tiny-4x8: llama3.1-8b on h100-80gb ("),
        "{out}"
    );
    // Every row's "fits" column ends where the header's does.
    let col = lines[1].find("fits").unwrap();
    for row in &lines[2..4] {
        let after_name = row.split_whitespace().nth(1).unwrap();
        let at = row.find(after_name).unwrap();
        assert_eq!(at + after_name.len(), col + "fits".len(), "{out}");
    }
}

/// `tiny-4x8` with `extra` added to its `[parallel]` table, written to a file of its own.
fn tiny_with(tag: &str, parallel: &str, plan: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/scenarios/tiny-4x8.toml"),
    )
    .unwrap()
    .replace("name = \"tiny-4x8\"", &format!("name = \"tiny-{tag}\""))
    .replace("[parallel]\n", &format!("[parallel]\n{parallel}\n"))
    .replace("[plan]\n", &format!("[plan]\n{plan}\n"));
    let path =
        std::env::temp_dir().join(format!("pipescope-noop-{tag}-{}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// The flags override the preset, then the merged scenario follows the files' rule: a preset's
/// zero 1 brought to one data-parallel rank by `-d 1` is refused as a file with `dp = 1` and
/// zero 1 is (it used to be accepted, as only a `--zero` flag was checked).
#[test]
fn a_presets_zero_brought_to_one_rank_by_the_flags_is_refused_as_a_files_is() {
    let two = tiny_with("zero-d2", "dp = 2\nzero = 1", "");
    let file = two.to_str().unwrap();
    accepted(&["plan", "--preset", file, "--json"]);
    let err = refused(&["plan", "--preset", file, "-d", "1", "--json"]);
    assert!(
        err.contains("parallel.zero = 1")
            && err.contains("-d/--dp 1")
            && err.contains("d x cp = 1 x 1 = 1")
            && err.contains("--zero 0"),
        "{err}"
    );
    // Giving --zero 0 with it is the way out; --cp 2 keeps something to shard.
    accepted(&["plan", "--preset", file, "-d", "1", "--zero", "0", "--json"]);
    accepted(&["plan", "--preset", file, "-d", "1", "--cp", "2", "--json"]);
    // The file with dp = 1 and zero 1 is refused at its line, by the same rule.
    let one = tiny_with("zero-d1", "dp = 1\nzero = 1", "");
    let err = refused(&["plan", "--preset", one.to_str().unwrap(), "--json"]);
    assert!(
        err.contains("parallel.zero") && err.contains("d x cp = 1 x 1 = 1"),
        "{err}"
    );
    let _ = std::fs::remove_file(two);
    let _ = std::fs::remove_file(one);
}

/// At d x cp = 1 the two-copy schedules still sum each stage's two copies' gradients (the
/// mirror exchange), so the gradient overlap has something to hide there and is accepted;
/// elsewhere it is refused with the reason, naming the schedules that take it.
#[test]
fn the_gradient_overlap_at_one_rank_is_taken_by_the_two_copy_schedules() {
    for schedule in ["dualpipe", "chimera"] {
        let (ok, with, err) = crate::cli_common::pipescope(&llama(&[
            "-d",
            "1",
            "--schedule",
            schedule,
            "--overlap-grad-reduce",
        ]));
        assert!(ok, "{schedule}: {err}");
        let (_, without, _) =
            crate::cli_common::pipescope(&llama(&["-d", "1", "--schedule", schedule]));
        let time = |json: &str| -> f64 {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            v["iteration_time_s"].as_f64().unwrap()
        };
        // The overlap hides part of the mirror exchange: never slower.
        assert!(time(&with) <= time(&without), "{schedule}");
    }
    let err = refused(&llama(&["-d", "1", "--overlap-grad-reduce"]));
    assert!(
        err.contains("--overlap-grad-reduce")
            && err.contains("d x cp = 1")
            && err.contains("dualpipe, chimera"),
        "{err}"
    );
    // One stage has no mirror.
    let mut args = llama(&["--schedule", "dualpipe", "-d", "1", "--overlap-grad-reduce"]);
    let p = args.iter().position(|a| *a == "-p").unwrap();
    args[p + 1] = "1";
    let err = refused(&args);
    assert!(err.contains("no mirror copy"), "{err}");
}
