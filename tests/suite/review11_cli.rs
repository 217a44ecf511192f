//! Session 11's review of the command line as a user finds it: the terminal UI refuses the
//! flags `plan` refuses, the same way and before it asks for a terminal.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

/// A unit the model does not have (`--recompute-units attention.qq`) is refused by the TUI
/// with `plan`'s message, naming the flag and the unit it meant, and not with the "needs a
/// terminal" refusal (which comes only for flags that would open).
#[test]
fn the_tui_refuses_the_flags_plan_refuses() {
    let flags = ["--strategy", "named", "--recompute-units", "attention.qq"];
    let (ok, _, plan_err) = pipescope(&[&["plan"][..], &flags[..]].concat());
    assert!(!ok);
    let (ok, _, tui_err) = pipescope(&flags);
    assert!(!ok);
    assert!(tui_err.contains("--recompute-units"), "{tui_err}");
    assert!(tui_err.contains("did you mean 'attention.q'"), "{tui_err}");
    assert!(!tui_err.contains("terminal"), "{tui_err}");
    assert_eq!(tui_err, plan_err);
    // Flags `plan` accepts reach the terminal check.
    let (ok, _, err) = pipescope(&["--strategy", "named", "--recompute-units", "attn.q"]);
    assert!(!ok);
    assert!(err.contains("needs a terminal"), "{err}");
}

/// The units panel names units `attn.q` (its column is narrow); `--recompute-units` takes
/// that name as the full `attention.q`: the same plan.
#[test]
fn recompute_units_take_the_units_panel_s_short_names() {
    let plan = |units: &str| {
        let (ok, out, err) = pipescope(&[
            "plan",
            "--model",
            "llama2-7b",
            "--strategy",
            "named",
            "--recompute-units",
            units,
            "--json",
        ]);
        assert!(ok, "{units}: {err}");
        let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["solve_time_s"] = serde_json::Value::Null;
        v
    };
    assert_eq!(plan("attn.q,mlp.gate_up"), plan("attention.q,mlp.gate_up"));
}
