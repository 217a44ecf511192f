//! Session 11's review of the command line as a user finds it: the terminal UI refuses the
//! flags `plan` refuses, the same way and before it asks for a terminal.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

/// `--recompute-units attn.q` (the panel's short name before it showed full ones) is refused
/// by the TUI with `plan`'s message, naming the flag and the unit it meant, and not with
/// the "needs a terminal" refusal (which comes only for flags that would open).
#[test]
fn the_tui_refuses_the_flags_plan_refuses() {
    let flags = ["--strategy", "named", "--recompute-units", "attn.q"];
    let (ok, _, plan_err) = pipescope(&[&["plan"][..], &flags[..]].concat());
    assert!(!ok);
    let (ok, _, tui_err) = pipescope(&flags);
    assert!(!ok);
    assert!(tui_err.contains("--recompute-units"), "{tui_err}");
    assert!(tui_err.contains("did you mean 'attention.q'"), "{tui_err}");
    assert!(!tui_err.contains("terminal"), "{tui_err}");
    assert_eq!(tui_err, plan_err);
    // Flags `plan` accepts reach the terminal check.
    let (ok, _, err) = pipescope(&["--strategy", "named", "--recompute-units", "attention.q"]);
    assert!(!ok);
    assert!(err.contains("needs a terminal"), "{err}");
}
