//! `pipescope simulate` as a process: JSON fields of docs/cli.md, errors on stderr
//! with a non-zero exit.

#![allow(clippy::unwrap_used)]

use crate::cli_common;

fn simulate(args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    cli_common::pipescope(&all)
}

#[test]
fn json_of_1f1b() {
    let (ok, out, _) = simulate(&[
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--json",
        "--ops",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["makespan"], 33.0);
    let rate = v["bubble_rate"].as_f64().unwrap();
    assert!((rate - 3.0 / 11.0).abs() < 1e-12);
    let devices = v["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 4);
    for (d, dev) in devices.iter().enumerate() {
        assert_eq!(dev["device"], d as u64);
        assert_eq!(dev["busy"], 24.0);
        assert_eq!(dev["peak_in_flight"], 4 - d as u64);
        assert_eq!(dev["peak_activation"], (4 - d) as f64);
    }
    let ops = v["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 64);
    for op in ops {
        for key in ["device", "kind", "micro_batch", "chunk", "start", "end"] {
            assert!(op.get(key).is_some(), "{op}");
        }
        assert!(["F", "BW"].contains(&op["kind"].as_str().unwrap()));
    }
}

#[test]
fn costs_comm_and_chunks() {
    let (ok, out, _) = simulate(&[
        "--schedule",
        "interleaved",
        "-p",
        "4",
        "-m",
        "8",
        "--chunks",
        "3",
        "--costs",
        "1,2,0.5",
        "--json",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["makespan"], (3.0 * 8.0 + 3.0) * 3.5);
    assert!(v.get("ops").is_none());
    // Peak activation in units of the device's layers: chunk-activations / v.
    let peak0 = v["devices"][0]["peak_activation"].as_f64().unwrap();
    let in_flight0 = v["devices"][0]["peak_in_flight"].as_f64().unwrap();
    assert_eq!(peak0, in_flight0 / 3.0);
    let (ok, out, _) = simulate(&[
        "--schedule",
        "1f1b",
        "-p",
        "2",
        "-m",
        "1",
        "--comm",
        "0.5",
        "--json",
        "--ops",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["makespan"], 7.0);
    let sends = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "SEND")
        .count();
    assert_eq!(sends, 2);
}

#[test]
fn zb_h1_splits_and_gpipe_holds_m() {
    let (ok, out, _) = simulate(&[
        "--schedule",
        "zb-h1",
        "-p",
        "4",
        "-m",
        "8",
        "--json",
        "--ops",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["makespan"], 27.0);
    let kinds: Vec<&str> = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"B") && kinds.contains(&"W") && kinds.contains(&"BW"));
    let (ok, out, _) = simulate(&["--schedule", "gpipe", "-p", "3", "-m", "5", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["devices"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["peak_activation"] == 5.0)
    );
}

#[test]
fn text_output_has_a_gantt_and_a_table() {
    let (ok, out, _) = simulate(&["--schedule", "dualpipe-v", "-p", "4", "-m", "8"]);
    assert!(ok);
    assert!(out.contains("makespan"));
    assert!(
        out.lines().filter(|l| l.contains('|')).count() >= 4,
        "{out}"
    );
    assert!(out.contains("in-flight"));
}

#[test]
fn unsupported_combinations_fail_on_stderr() {
    for args in [
        vec!["--schedule", "interleaved", "-p", "4", "-m", "6"],
        vec!["--schedule", "dualpipe-v", "-p", "4", "-m", "7"],
        vec!["--schedule", "chimera", "-p", "4", "-m", "7"],
        vec!["--schedule", "1f1b", "-p", "4", "-m", "8", "--costs", "1,2"],
        vec!["--schedule", "1f1b", "-p", "4", "-m", "8", "--comm", "-1"],
        vec!["--schedule", "1f1b", "-p", "0", "-m", "8"],
        vec!["--schedule", "nope", "-p", "4", "-m", "8"],
        vec![
            "--schedule",
            "interleaved",
            "-p",
            "4",
            "-m",
            "8",
            "--chunks",
            "4000000000",
        ],
        vec!["--schedule", "1f1b", "-p", "4", "-m", "4000000000"],
    ] {
        let (ok, out, err) = simulate(&args);
        assert!(!ok, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(!err.is_empty());
    }
    let (_, _, err) = simulate(&["--schedule", "interleaved", "-p", "4", "-m", "6", "--json"]);
    assert!(err.contains("multiple of p"), "{err}");
}

/// Odd values a user may type: each is refused on stderr with the flag and the value, never
/// a panic, a clap "unexpected argument" for a negative number, or a bogus deadlock.
#[test]
fn odd_values_are_refused_with_the_flag_and_value() {
    let base = ["--schedule", "1f1b", "-p", "4", "-m", "8"];
    for (extra, needle) in [
        (&["--comm", "-1"][..], "--comm -1"),
        (&["--costs", "-1,1,1"], "--costs '-1,1,1'"),
        (&["--costs", "1,x,1"], "--costs '1,x,1'"),
        (&["--offload-cost", "-2"], "--offload-cost -2"),
        (&["--mem-limit", "-1"], "--mem-limit -1"),
        (&["--group-size", "0"], "--group-size 0"),
        (&["--offload-chunks", "0"], "--offload-chunks 0"),
        (&["--costs", "1e308,1e308,1e308"], "durations too large"),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let (ok, out, err) = simulate(&args);
        assert!(!ok, "{extra:?} was accepted");
        assert!(out.is_empty(), "{extra:?}: {out}");
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
    }
}
