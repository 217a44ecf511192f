//! Session 9's review of the command line: a tensor-parallel group larger than a node is
//! noted (once in `compare`), and the other items of review 9.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

const NODE_NOTE: &str = "t 16 is more than a node's 8 GPUs";

/// `t` above the GPU preset's `node_gpus` is costed over the network; `plan` says so in its
/// notes, `compare` once for every strategy, and `t` inside a node says nothing.
#[test]
fn t_beyond_a_node_is_noted_in_plan_and_once_in_compare() {
    let (ok, out, err) = pipescope(&["plan", "--preset", "korthikanti-175b", "-t", "16", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains(NODE_NOTE)),
        "{notes:?}"
    );
    let (ok, out, err) = pipescope(&["plan", "--preset", "korthikanti-175b", "-t", "16"]);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("note: {NODE_NOTE}")), "{out}");
    let (ok, out, err) = pipescope(&["plan", "--preset", "korthikanti-175b", "-t", "8"]);
    assert!(ok, "{err}");
    assert!(!out.contains("more than a node"), "{out}");
    let (ok, out, err) = pipescope(&[
        "compare",
        "--preset",
        "korthikanti-175b",
        "-t",
        "16",
        "--strategies",
        "none,full,selective",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out.matches(NODE_NOTE).count(), 1, "{out}");
    assert!(out.contains(&format!("\nnote: {NODE_NOTE}")), "{out}");
}

/// A preset's refused value is placed at the value whichever check refuses it: the reader's
/// type check, a range, an unknown GPU name.
#[test]
fn preset_value_errors_point_at_the_value_whatever_refuses_it() {
    let dir = std::env::temp_dir().join(format!("pipescope-review9-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.toml");
    let head = "name = \"x\"\nmodel = \"gpt3-175b\"\n";
    for (body, place) in [
        ("gpu = \"a100-80gb\"\n[parallel]\npp = \"four\"\n", ":5:6: "),
        ("gpu = \"a100-80gb\"\n[parallel]\npp = 0\n", ":5:6: "),
        (
            "gpu = \"a100-80gb\"\n[parallel]\npp = 99999999999\n",
            ":5:6: ",
        ),
        ("gpu =  \"nope\"\n", ":3:8: "),
    ] {
        std::fs::write(&path, format!("{head}{body}")).unwrap();
        let file = path.to_str().unwrap();
        let (ok, _, err) = pipescope(&["plan", "--preset", file]);
        assert!(!ok);
        assert!(err.contains(&format!("x.toml{place}")), "{body}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A pasted huge value is quoted cut, with its length, not whole.
#[test]
fn a_huge_value_is_quoted_cut_with_its_length() {
    let long = "a".repeat(100_000);
    let (ok, _, err) = pipescope(&["plan", "--model", &long]);
    assert!(!ok);
    assert!(
        err.contains("… (100000 characters)"),
        "{}",
        &err[..200.min(err.len())]
    );
    assert!(err.len() < 2_000, "{} bytes", err.len());
    // A short one is quoted whole, an empty one as ''.
    let (_, _, err) = pipescope(&["plan", "--model", "nope"]);
    assert!(err.contains("= nope:"), "{err}");
    let (_, _, err) = pipescope(&["plan", "--model", ""]);
    assert!(err.contains("= '':"), "{err}");
}
