//! The command line's rules as a user meets them (docs/cli.md): the budget of a scenario given
//! by flags, one scenario parser for every command (the sweep included), no flag accepted and
//! silently ignored, and error messages that name the flag, the value and what is allowed.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

fn json(args: &[&str]) -> serde_json::Value {
    let (ok, out, err) = pipescope(args);
    assert!(ok, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn refused(args: &[&str]) -> String {
    let (ok, out, err) = pipescope(args);
    assert!(!ok, "{args:?} was accepted: {out}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

const GIB: u64 = 1 << 30;

#[test]
fn flags_without_a_preset_keep_nothing_free() {
    // An 80 GB H100 reports 79.6 GiB: all of it is the budget without --preset.
    let v = json(&[
        "plan",
        "--model",
        "llama3-8b",
        "--gpu",
        "h100-80gb",
        "-p",
        "2",
        "-s",
        "4096",
        "--json",
    ]);
    let budget = v["stages"][0]["budget_bytes"].as_u64().unwrap();
    assert_eq!(budget, (79.6 * GIB as f64).round() as u64);
    // The default scenario's flags alone: the A100's whole 80 GiB.
    let v = json(&["plan", "-m", "16", "--json"]);
    assert_eq!(v["stages"][0]["budget_bytes"].as_u64().unwrap(), 80 * GIB);
    // The same preset named brings its own 10 GiB reserve, kept when the GPU changes.
    let v = json(&["plan", "--preset", "gpt3-175b-16k", "-m", "16", "--json"]);
    assert_eq!(v["stages"][0]["budget_bytes"].as_u64().unwrap(), 70 * GIB);
    let v = json(&[
        "plan",
        "--preset",
        "gpt3-175b-16k",
        "--gpu",
        "h200-141gb",
        "-m",
        "16",
        "--json",
    ]);
    let h200 = (140.4 * GIB as f64).round() as u64;
    assert_eq!(
        v["stages"][0]["budget_bytes"].as_u64().unwrap(),
        h200 - 10 * GIB
    );
}

#[test]
fn a_preset_budget_that_a_new_gpu_cannot_hold_is_refused_by_the_gpu_flag() {
    let dir = std::env::temp_dir().join(format!("pipescope-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("abs.toml");
    std::fs::write(
        &file,
        "name = \"abs\"\nmodel = \"gpt3-175b\"\ngpu = \"a100-80gb\"\n[plan]\nmemory_budget_gib = 60\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let err = refused(&["plan", "--preset", path, "--gpu", "a100-40gb"]);
    assert!(err.contains("--gpu") && err.contains("60.0 GiB"), "{err}");
    // Given with a budget of its own, the new GPU is taken.
    let (ok, _, err) = pipescope(&[
        "plan",
        "--preset",
        path,
        "--gpu",
        "a100-40gb",
        "--budget-gib",
        "30",
    ]);
    assert!(ok, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The settings flags both the sweep and `plan` are given below.
const SETTINGS: [&str; 13] = [
    "--partition",
    "balanced",
    "--no-overlap-grad-reduce",
    "--grad-bytes",
    "2",
    "--objective",
    "adapipe",
    "--reserve-gib",
    "20",
    "--no-flash",
    "-s",
    "2048",
    "--overlap-recompute",
];

#[test]
fn the_sweep_takes_every_setting_flag_and_keeps_it() {
    // One layout (t 1, p 4, d 1, b 1, m 8, no sp, no distributed optimizer), two strategies.
    let mut args = vec![
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "4",
        "--global-batch",
        "8",
        "--tp",
        "1",
        "--pp",
        "4",
        "--mbs",
        "1",
        "--schedules",
        "1f1b",
        // Strategies that search the partition, which `--objective` steers.
        "--strategies",
        "adapipe,unified",
        "--json",
    ];
    args.extend_from_slice(&SETTINGS);
    let v = json(&args);
    let best = &v["best"];
    let stage = &best["stages"][0];
    // 16-bit gradients: as many gradient bytes as weight bytes.
    assert_eq!(stage["grads_bytes"], stage["weights_bytes"]);
    assert_eq!(stage["budget_bytes"].as_u64().unwrap(), 20 * GIB);
    // The best configuration planned alone with the same flags gives the same answer: the
    // sweep started from the scenario `plan` builds.
    let strategy = best["strategy"].as_str().unwrap();
    let mut args = vec![
        "plan",
        "--preset",
        "tiny-4x8",
        "-p",
        "4",
        "-t",
        "1",
        "-d",
        "1",
        "-m",
        "8",
        "-b",
        "1",
        "--no-sp",
        "--schedule",
        "1f1b",
        "--strategy",
        strategy,
        "--json",
    ];
    args.extend_from_slice(&SETTINGS);
    let plan = json(&args);
    assert_eq!(best["iteration_time_s"], plan["iteration_time_s"]);
    assert_eq!(best["stages"], plan["stages"]);
}

#[test]
fn the_sweep_refuses_what_it_enumerates_with_what_to_give_instead() {
    let base = [
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "4",
        "--global-batch",
        "8",
    ];
    let with = |extra: &[&'static str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        refused(&a)
    };
    let err = with(&["-m", "4"]);
    assert!(
        err.contains("-m/--microbatches") && err.contains("m = B / (b x d)"),
        "{err}"
    );
    let err = with(&["-d", "2"]);
    assert!(err.contains("-d/--dp") && err.contains("--gpus"), "{err}");
    let err = with(&["--no-sp"]);
    assert!(err.contains("--sp/--no-sp"), "{err}");
    let err = with(&["--group-size", "2"]);
    assert!(
        err.contains("--group-size 2") && err.contains("gis"),
        "{err}"
    );
    // The layout flags of `plan` are the sweep's lists: `-p 2` is `--pp 2`.
    let (ok, _, err) = pipescope(&[
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "4",
        "--global-batch",
        "8",
        "-p",
        "2",
        "-t",
        "1",
        "--schedule",
        "1f1b",
        "--strategy",
        "none",
        "--json",
    ]);
    assert!(ok, "{err}");
}

#[test]
fn schedule_flags_a_schedule_does_not_use_are_refused() {
    let abs = |extra: &[&'static str]| {
        let mut a = vec!["simulate", "-p", "4", "-m", "8"];
        a.extend_from_slice(extra);
        refused(&a)
    };
    let err = abs(&["--schedule", "1f1b", "--chunks", "3"]);
    assert!(
        err.contains("--chunks 3") && err.contains("interleaved"),
        "{err}"
    );
    let err = abs(&["--schedule", "gpipe", "--chunks", "2"]);
    assert!(err.contains("--chunks 2"), "{err}");
    // DualPipe's (and Chimera's) two chunks are two copies of the same p stages: even the
    // chunk count they run is refused, since it reads as a model cut into 2p stages.
    for schedule in ["dualpipe", "chimera"] {
        let err = abs(&["--schedule", schedule, "--chunks", "2"]);
        assert!(
            err.contains("--chunks 2") && err.contains("two copies"),
            "{err}"
        );
    }
    let err = refused(&["plan", "--schedule", "dualpipe", "--chunks", "2"]);
    assert!(err.contains("--chunks 2"), "{err}");
    let err = abs(&["--schedule", "interleaved", "--offload-chunks", "1"]);
    assert!(
        err.contains("--offload-chunks 1") && err.contains("gis-offload"),
        "{err}"
    );
    let err = abs(&["--schedule", "interleaved", "--offload-cost", "2"]);
    assert!(
        err.contains("--offload-cost") && err.contains("gis-offload"),
        "{err}"
    );
    let err = abs(&["--schedule", "1f1b", "--group-size", "2"]);
    assert!(
        err.contains("--group-size 2") && err.contains("gis"),
        "{err}"
    );
    let err = abs(&["--schedule", "zb-h2", "--mem-limit", "5"]);
    assert!(
        err.contains("--mem-limit 5") && err.contains("zb-auto"),
        "{err}"
    );
    // A planned scenario too, and an abstract run given a model it cannot use.
    let err = refused(&["plan", "--schedule", "1f1b", "--chunks", "4"]);
    assert!(err.contains("--chunks 4"), "{err}");
    let err = refused(&[
        "export",
        "svg",
        "--costs",
        "1,1,1",
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--model",
        "llama3-8b",
    ]);
    assert!(err.contains("--model") && err.contains("--costs"), "{err}");
    // The flags still work where they are used.
    for args in [
        &[
            "--schedule",
            "gis-offload",
            "--offload-chunks",
            "1",
            "--offload-cost",
            "2",
        ][..],
        &["--schedule", "gis", "--group-size", "2"],
        &["--schedule", "zb-auto", "--mem-limit", "5"],
        &["--schedule", "interleaved", "--chunks", "4"],
    ] {
        let mut a = vec!["simulate", "-p", "4", "-m", "8"];
        a.extend_from_slice(args);
        let (ok, _, err) = pipescope(&a);
        assert!(ok, "{a:?}: {err}");
    }
}

#[test]
fn a_simulation_that_turns_planned_says_so() {
    let (ok, out, err) = pipescope(&["simulate", "--schedule", "1f1b", "-p", "4"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("planned scenario") && err.contains("-m"),
        "{err}"
    );
    assert!(out.contains(" s  bubble"), "{out}");
    // A complete abstract run says nothing.
    let (ok, _, err) = pipescope(&["simulate", "--schedule", "1f1b", "-p", "4", "-m", "8"]);
    assert!(ok && err.is_empty(), "{err}");
}

#[test]
fn bad_numbers_name_the_flag_and_what_is_allowed() {
    for (flag, allowed) in [
        ("--mem-limit", "chunk-activations"),
        ("--comm", "cost units"),
        ("--offload-cost", "cost units"),
        ("--reserve-gib", "GiB"),
    ] {
        let err = refused(&[
            "simulate",
            "--schedule",
            "zb-auto",
            "-p",
            "4",
            "-m",
            "8",
            flag,
            "x",
        ]);
        assert!(
            err.contains(flag) && err.contains("'x'") && err.contains(allowed),
            "{err}"
        );
        assert!(!err.contains("invalid float literal"), "{err}");
    }
}

#[test]
fn unknown_names_suggest_the_nearest() {
    let err = refused(&["plan", "--model", "llama3-7b"]);
    assert!(
        err.contains("did you mean 'llama2-7b'") || err.contains("did you mean 'llama3-8b'"),
        "{err}"
    );
    let err = refused(&["plan", "--gpu", "h100"]);
    assert!(err.contains("did you mean 'h100-80gb'"), "{err}");
    // Case is ignored when looking for the nearest name, for every enum alike.
    let err = refused(&["plan", "--strategy", "ADAPIPE"]);
    assert!(err.contains("did you mean 'adapipe'"), "{err}");
    let err = refused(&["plan", "--precision", "FP8"]);
    assert!(err.contains("did you mean 'fp8'"), "{err}");
}

#[test]
fn an_empty_value_is_shown_quoted() {
    let err = refused(&["plan", "--model", ""]);
    assert!(err.contains("(--model) = '':"), "{err}");
    assert!(!err.contains("= :"), "{err}");
}

#[test]
fn plan_names_the_smallest_memory_limit_that_fits() {
    let err = refused(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "v-zb",
        "--mem-limit",
        "2",
    ]);
    assert!(
        err.contains("--mem-limit") && err.contains("the smallest limit that fits is"),
        "{err}"
    );
    let smallest = err
        .split("the smallest limit that fits is ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap()
        .to_string();
    let (ok, _, err) = pipescope(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "v-zb",
        "--mem-limit",
        &smallest,
    ]);
    assert!(ok, "{smallest}: {err}");
}

#[test]
fn huge_numbers_are_printed_short() {
    for args in [
        &["plan", "--budget-gib", "1e308"][..],
        &["plan", "--reserve-gib", "1e308"],
        &["plan", "--schedule", "zb-auto", "--mem-limit", "1e308"],
    ] {
        let err = refused(args);
        assert!(err.contains("1e308") && err.len() < 300, "{err}");
    }
}

/// A GiB past what an f64 holds is quoted as given, not as `inf`, with the range allowed.
#[test]
fn gib_beyond_f64_is_quoted_as_given_with_its_range() {
    for (flag, text, range) in [
        ("--budget-gib", "1e309", "greater than 0 and at most 1e9"),
        ("--budget-gib", "-1e309", "greater than 0 and at most 1e9"),
        (
            "--reserve-gib",
            "1e309",
            "at least 0 and less than the GPU's memory",
        ),
        ("--budget-gib", "nan", "greater than 0 and at most 1e9"),
    ] {
        let err = refused(&["plan", flag, text]);
        assert!(
            err.contains(&format!("'{text}'")) && err.contains(flag) && err.contains(range),
            "{err}"
        );
        assert!(!err.contains("= inf"), "{err}");
    }
}

#[test]
fn sizes_beyond_the_named_limit_are_refused_by_every_command() {
    // The default scenario has p 8: 8 x 16,385 micro-batch-chunks is past MAX_CELLS (2^17).
    for cmd in ["plan", "compare", "simulate"] {
        let err = refused(&[cmd, "--preset", "gpt3-175b-16k", "-m", "16385"]);
        assert!(
            err.contains("MAX_CELLS") && err.contains("131072"),
            "{cmd}: {err}"
        );
    }
    let err = refused(&["simulate", "--schedule", "zb-v", "-p", "4", "-m", "16385"]);
    assert!(
        err.contains("MAX_CELLS") && err.contains("4 x 16385 x 2"),
        "{err}"
    );
    // At the limit it runs.
    let (ok, _, err) = pipescope(&["simulate", "--schedule", "1f1b", "-p", "8", "-m", "16384"]);
    assert!(ok, "{err}");
}

#[test]
fn ops_without_json_is_refused() {
    let err = refused(&[
        "simulate",
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--ops",
    ]);
    assert!(err.contains("--json"), "{err}");
}

#[test]
fn the_all_to_all_overlap_is_refused_where_it_would_do_nothing() {
    // A dense model has no all-to-alls to hide.
    let e = refused(&[
        "plan",
        "--preset",
        "tiny-4x8",
        "--schedule",
        "dualpipe",
        "--moe-a2a-overlap",
    ]);
    assert!(
        e.contains("--moe-a2a-overlap") && e.contains("dense"),
        "{e}"
    );
    // A sweep does not apply it: over schedules that never pair it names those that do and
    // what to run instead; over the default schedules (1f1b and interleaved pair under
    // Megatron's combined 1F1B) it is refused for the dense model.
    let e = refused(&[
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "4",
        "--global-batch",
        "8",
        "--schedules",
        "gpipe,zb-h1",
        "--moe-a2a-overlap",
    ]);
    assert!(
        e.contains("--moe-a2a-overlap") && e.contains("dualpipe-v") && e.contains("interleaved"),
        "{e}"
    );
    let e = refused(&[
        "sweep",
        "--preset",
        "tiny-4x8",
        "--gpus",
        "4",
        "--global-batch",
        "8",
        "--moe-a2a-overlap",
    ]);
    assert!(
        e.contains("--moe-a2a-overlap") && e.contains("dense"),
        "{e}"
    );
    // An abstract simulation has no model to overlap.
    let e = refused(&[
        "simulate",
        "--schedule",
        "dualpipe",
        "-p",
        "4",
        "-m",
        "8",
        "--costs",
        "1,1,1",
        "--moe-a2a-overlap",
    ]);
    assert!(e.contains("--moe-a2a-overlap"), "{e}");
}
