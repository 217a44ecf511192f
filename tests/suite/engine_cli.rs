//! `pipescope units` and `pipescope presets` as docs/cli.md names them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_common;

use cli_common::pipescope as run;

#[test]
fn units_json_adds_up_to_the_layer_formula() {
    let (ok, out, err) = run(&[
        "units",
        "--preset",
        "korthikanti-175b",
        "-p",
        "8",
        "-t",
        "8",
        "-s",
        "2048",
        "-b",
        "1",
        "--sp",
        "--no-flash",
        "--schedule",
        "1f1b",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let blocks = &v["blocks"];
    for kind in ["embedding", "attention", "mlp", "head"] {
        let units = blocks[kind].as_array().unwrap();
        assert!(!units.is_empty(), "{kind}");
        for u in units {
            for key in [
                "name",
                "size_bytes",
                "forced",
                "forward_flops",
                "forward_s",
                "backward_s",
            ] {
                assert!(u.get(key).is_some(), "{kind} lacks {key}");
            }
        }
    }
    let total = |kind: &str| -> u64 {
        blocks[kind]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["size_bytes"].as_u64().unwrap())
            .sum()
    };
    // TP + SP: sbh/t (34 + 5as/h).
    let (s, h, a, t) = (2048u64, 12288u64, 96u64, 8u64);
    assert_eq!(
        total("attention") + total("mlp"),
        (34 * s * h + 5 * a * s * s) / t
    );
}

#[test]
fn units_table_and_flags() {
    let (ok, out, err) = run(&["units", "--model", "llama2-70b", "-t", "4", "-p", "8"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("gate_up") && out.contains("swiglu_out"),
        "{out}"
    );
    let (ok, _, err) = run(&["units", "-t", "7"]);
    assert!(!ok);
    assert!(err.contains("parallel.tp") && err.contains("7"), "{err}");
    let (ok, _, err) = run(&["units", "--preset", "no-such-preset"]);
    assert!(!ok);
    assert!(err.contains("no-such-preset"), "{err}");
    assert!(
        err.contains("error: preset: unknown scenario preset"),
        "{err}"
    );
    let (ok, _, err) = run(&["units", "--budget-gib", "-1"]);
    assert!(!ok, "{err}");
}

#[test]
fn presets_json_lists_models_gpus_and_scenarios() {
    let (ok, out, err) = run(&["presets", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for (list, name) in [
        ("models", "gpt3-175b"),
        ("gpus", "h200-141gb"),
        ("scenarios", "gpt3-175b-16k"),
    ] {
        let entries = v[list].as_array().unwrap();
        assert!(entries.iter().any(|e| e["name"] == name), "{list}");
        for e in entries {
            assert!(e["description"].as_str().is_some_and(|d| !d.is_empty()));
        }
    }
}

/// Each field is within its own limit but their product overflowed the u64 byte counts
/// (`s^2 b a` of materialised attention; 10^5 layers of width 2^24): now refused, naming
/// the field and the value.
#[test]
fn sizes_too_large_together_are_refused_not_a_panic() {
    let (ok, _, err) = run(&[
        "units",
        "-s",
        "16777216",
        "-b",
        "65536",
        "--no-flash",
        "--no-sp",
        "-t",
        "1",
        "-p",
        "1",
    ]);
    assert!(!ok);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("batch.seq_len (-s/--seq) = 16777216"), "{err}");
    let (ok, _, err) = run(&[
        "plan",
        "--preset",
        "korthikanti-22b",
        "-m",
        "1048576",
        "-s",
        "65536",
        "-b",
        "16",
    ]);
    assert!(!ok);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("batch.micro_batches (-m/--microbatches) = 1048576"),
        "{err}"
    );
}

/// Count flags that do not parse say what is allowed (clap's own message only said
/// "invalid digit found in string"; a negative value was an "unexpected argument").
#[test]
fn count_flags_that_do_not_parse_say_what_is_allowed() {
    for (flag, value) in [("-s", "1e12"), ("-p", "-1"), ("-b", "2.5"), ("-m", "x")] {
        let (ok, out, err) = run(&["units", flag, value]);
        assert!(!ok && out.is_empty(), "{flag} {value}");
        assert!(err.contains(&format!("'{value}'")), "{flag} {value}: {err}");
        assert!(err.contains("a whole number"), "{flag} {value}: {err}");
    }
}

#[test]
fn a_flag_and_its_negation_together_are_refused() {
    for (on, off) in [
        ("--sp", "--no-sp"),
        ("--flash", "--no-flash"),
        ("--distributed-optimizer", "--no-distributed-optimizer"),
    ] {
        let (ok, _, err) = run(&["plan", on, off]);
        assert!(!ok, "{on} {off} accepted");
        assert!(err.contains(on) && err.contains(off), "{err}");
    }
}

#[test]
fn an_infeasible_plan_prints_no_mfu_and_no_speedup() {
    let (ok, out, _) = run(&["plan", "--strategy", "none"]);
    assert!(ok);
    let head = out.lines().next().unwrap_or_default();
    assert!(head.contains("MFU –") && !head.contains("NaN"), "{head}");
}
