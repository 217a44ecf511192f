//! `pipescope export` and `pipescope simulate` with scenario flags, as processes: files
//! written atomically with `-o`, stdout with `-o -`, the planned scenario's op timeline in
//! seconds.

#![allow(clippy::unwrap_used)]

use crate::cli_common::pipescope;

#[test]
fn simulate_takes_a_real_scenario() {
    let (ok, out, err) = pipescope(&["simulate", "-p", "4", "-m", "8", "--json", "--ops"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (ok, plan, _) = pipescope(&["plan", "-p", "4", "-m", "8", "--json"]);
    assert!(ok);
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    // The same run as `plan`: seconds, not cost units.
    let makespan = v["makespan"].as_f64().unwrap();
    assert!((makespan - plan["iteration_time_s"].as_f64().unwrap()).abs() < 1e-9);
    let ops = v["ops"].as_array().unwrap();
    let compute = ops
        .iter()
        .filter(|o| ["F", "BW"].contains(&o["kind"].as_str().unwrap()))
        .count();
    assert_eq!(compute, 2 * 4 * 8);
    let f = ops.iter().find(|o| o["kind"] == "F").unwrap();
    let dur = f["end"].as_f64().unwrap() - f["start"].as_f64().unwrap();
    assert!(dur > 0.0 && dur < 10.0 && dur != 1.0, "{dur}");
    assert_eq!(v["devices"][0]["peak_in_flight"], 4);
    // A scenario flag besides --schedule makes it planned, as does --schedule without -p
    // and -m; --schedule with -p and -m stays abstract.
    let (ok, out, _) = pipescope(&["simulate", "--schedule", "zb-v"]);
    assert!(ok && out.starts_with("zb-v: p=8"), "{out}");
    let (ok, out, _) = pipescope(&["simulate", "--schedule", "1f1b", "-p", "4", "-m", "8"]);
    assert!(ok && out.contains("makespan 33.000"), "{out}");
    let (ok, out, _) = pipescope(&[
        "simulate",
        "--schedule",
        "zb-v",
        "--model",
        "llama2-7b",
        "-p",
        "4",
        "-m",
        "8",
    ]);
    assert!(ok && out.starts_with("zb-v: p=4"), "{out}");
    assert!(!out.contains("makespan 33.000"));
}

#[test]
fn output_file_is_written_atomically_and_dash_is_stdout() {
    let dir = std::env::temp_dir().join(format!("pipescope-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("trace.json");
    std::fs::write(&file, "old").unwrap();
    let path = file.to_str().unwrap();
    let args = |o: &'static str| {
        vec![
            "export",
            "perfetto",
            "--schedule",
            "1f1b",
            "-p",
            "2",
            "-m",
            "2",
            "--costs",
            "1,1,1",
            "-o",
            o,
        ]
    };
    let mut with_file = args("-");
    let (ok, stdout_text, _) = pipescope(&with_file);
    assert!(ok && stdout_text.starts_with('{'));
    *with_file.last_mut().unwrap() = path;
    let (ok, out, err) = pipescope(&with_file);
    assert!(ok, "{err}");
    assert!(out.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout_text);
    // Only the file itself: the temporary file was renamed.
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(entries.len(), 1);
    // A folder that does not exist: an error naming -o, nothing written.
    let missing = dir.join("no/such/dir/x.json");
    *with_file.last_mut().unwrap() = missing.to_str().unwrap();
    let (ok, _, err) = pipescope(&with_file);
    assert!(!ok && err.contains("-o"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_format_from_the_planned_scenario() {
    for format in ["perfetto", "svg", "megatron", "torchtitan"] {
        let (ok, out, err) = pipescope(&["export", format, "-p", "4", "-m", "8"]);
        assert!(ok, "{format}: {err}");
        assert!(!out.is_empty());
    }
    let (ok, _, err) = pipescope(&["export", "svg", "--theme", "sepia"]);
    assert!(!ok && err.contains("--theme sepia"), "{err}");
}

/// A theme path that is no regular file, costs that are not above 0 and an `-o` folder that
/// takes no files are refused in words that say so.
#[test]
fn odd_paths_and_costs_are_refused_clearly() {
    let (ok, _, err) = pipescope(&["export", "svg", "--theme", "/dev/zero"]);
    assert!(
        !ok && err.contains("--theme /dev/zero") && err.contains("not a regular file"),
        "{err}"
    );
    for (costs, named) in [("0,1,1", "F = 0"), ("1,-2,1", "B = -2"), ("1,1,0", "W = 0")] {
        let (ok, _, err) = pipescope(&[
            "export",
            "perfetto",
            "--schedule",
            "1f1b",
            "-p",
            "2",
            "-m",
            "2",
            "--costs",
            costs,
        ]);
        assert!(
            !ok && err.contains(named) && err.contains("above 0"),
            "{costs}: {err}"
        );
    }
    // An empty name (an unset variable) says what is allowed, quoting the value.
    let (ok, _, err) = pipescope(&["export", "svg", "-p", "4", "-m", "8", "-o", ""]);
    assert!(
        !ok && err.contains("invalid value '' for '--output <FILE>'")
            && err.contains("a file name, or - for standard output"),
        "{err}"
    );
    #[cfg(target_os = "linux")]
    {
        let (ok, _, err) = pipescope(&["export", "svg", "-p", "4", "-m", "8", "-o", "/proc/x.svg"]);
        assert!(
            !ok && err.contains("the folder /proc takes no new files"),
            "{err}"
        );
    }
}

/// A theme file with 256-colour indices and `reset` draws with xterm's RGB values and its
/// base's colours, on its base's page.
#[test]
fn svg_theme_with_indexed_colours_and_a_dark_base() {
    let dir = std::env::temp_dir().join(format!("pipescope-svg-theme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let theme = dir.join("indexed.toml");
    std::fs::write(
        &theme,
        "base = \"dark\"\n[colors]\nforward = \"208\"\nbackward = \"reset\"\nidle = \"240\"\n",
    )
    .unwrap();
    let path = theme.to_str().unwrap();
    let (ok, out, err) = pipescope(&["export", "svg", "-p", "4", "-m", "8", "--theme", path]);
    assert!(ok, "{err}");
    assert!(out.contains("#ff8700"), "forward as xterm 208");
    assert!(out.contains("#0d1117"), "the dark base's page");
    assert!(out.contains("#009e73"), "reset: the dark base's backward");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-o` keeps what the user named: a symbolic link stays a link (its target gets the text),
/// and `/dev/full` (no space left) is an error, not a quiet success that replaced the device
/// with a file. (`/dev/stdout` as standard output is pinned by `is_stdout_alias`'s test: no
/// test writes to a real `/dev` path but `/dev/full`.)
#[cfg(target_os = "linux")]
#[test]
fn output_through_links_and_devices_keeps_them() {
    use std::os::unix::fs::FileTypeExt;
    let dir = std::env::temp_dir().join(format!("pipescope-export-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let real = dir.join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let run = |o: &str| {
        pipescope(&[
            "export",
            "perfetto",
            "--schedule",
            "1f1b",
            "-p",
            "2",
            "-m",
            "2",
            "--costs",
            "1,1,1",
            "-o",
            o,
        ])
    };
    let (ok, stdout_text, err) = run("-");
    assert!(ok && stdout_text.starts_with('{'), "{err}");
    let (ok, _, err) = run(link.to_str().unwrap());
    assert!(ok, "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), stdout_text);
    let full_is_device =
        || std::fs::symlink_metadata("/dev/full").is_ok_and(|m| m.file_type().is_char_device());
    if full_is_device() {
        let (ok, _, err) = run("/dev/full");
        assert!(!ok && err.starts_with("error: -o /dev/full: "), "{err}");
        assert!(full_is_device());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
