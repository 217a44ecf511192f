//! What a hostile or careless user meets: long and hostile preset names, escape sequences,
//! flag errors that say what is allowed, utilisation never above 1.

use std::process::Command;

use crate::cli_common::pipescope;
use pipescope::Catalog;

fn with_config(tag: &str, files: &[(&str, String)], args: &[&str]) -> (bool, String, String) {
    let home = std::env::temp_dir().join(format!("pipescope-hs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let presets = home.join("pipescope").join("presets");
    std::fs::create_dir_all(&presets).unwrap();
    for (name, text) in files {
        std::fs::write(presets.join(name), text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
        .args(args)
        .env("XDG_CONFIG_HOME", &home)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&home);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_long_name_and_escape_sequences_are_listed_safely() {
    let long = "x".repeat(65_536);
    let files = [
        (
            "long.toml",
            format!("[gpu]\nname = \"{long}\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 2039\n"),
        ),
        (
            "esc.toml",
            "[gpu]\nname = \"evil\"\ndescription = \"\\u001b[2J\\u001b]0;pwned\\u0007 \\u009b31m\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 2039\n".to_string(),
        ),
    ];
    let (ok, out, err) = with_config("long", &files, &["presets"]);
    assert!(ok, "{err}");
    assert!(out.contains("evil"), "{out}");
    assert!(
        !out.chars().any(|c| c.is_control() && c != '\n'),
        "no control characters reach the terminal"
    );
    assert!(out.contains("\\u001b[2J"), "shown escaped");
    let (ok, out, _) = with_config("long-json", &files, &["presets", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
    assert!(v["gpus"].as_array().unwrap().len() >= 2);
}

#[test]
fn echoed_values_are_sanitized_and_flag_errors_say_what_is_allowed() {
    let (ok, _, err) = pipescope(&["plan", "--preset", "\u{1b}[31mred"]);
    assert!(!ok);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("\\u001b"), "{err}");
    let (ok, _, err) = pipescope(&["plan", "--budget-gib", "70GiB"]);
    assert!(!ok);
    assert!(err.contains("without a unit, like 70"), "{err}");
}

#[cfg(feature = "tui")]
#[test]
fn a_control_character_glyph_is_refused_with_its_location() {
    let err = pipescope::tui::Theme::parse(
        "name = \"t\"\n[glyphs]\nforward = \"\\u001b\"\n",
        std::path::Path::new("t.toml"),
    )
    .unwrap_err();
    assert!(
        err.contains("t.toml:3:11") && err.contains("printable"),
        "{err}"
    );
}

#[test]
fn a_profile_faster_than_the_hardware_never_gives_mfu_above_one() {
    let profile = "source = \"too fast\"\n[attention]\nforward_s = 1e-9\nbackward_s = 2e-9\n[mlp]\nforward_s = 1e-9\nbackward_s = 2e-9\n";
    let mut sc = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
    sc.profile = Some(pipescope::MeasuredProfile::from_toml_str("p.toml", profile).unwrap());
    let out = pipescope::solve(&sc).unwrap();
    // Never a value above 1: null (with a note) when the times beat the hardware.
    assert!(
        out.mfu.is_none_or(|x| (0.0..=1.0).contains(&x)),
        "mfu {:?}",
        out.mfu
    );
    assert!(
        out.hfu.is_none_or(|x| (0.0..=1.0).contains(&x)),
        "hfu {:?}",
        out.hfu
    );
    assert!(
        out.notes.iter().any(|n| n.contains("MFU/HFU not reported")),
        "{:?}",
        out.notes
    );
}

#[test]
fn preset_value_errors_carry_line_and_column() {
    let text = "name = \"x\"\nmodel = \"gpt3-175b\"\ngpu = \"a100-80gb\"\n[parallel]\n  pp = 0\n[batch]\nmicro_batches = 8\n";
    let err = Catalog::builtin()
        .add_text("x.toml", text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("x.toml:5:8: "), "{err}");
    assert!(err.contains("parallel.pp"), "{err}");
    let model = "[model]\nname = \"m\"\nlayers = 0\nhidden = 256\nheads = 4\nvocab = 1000\n";
    let err = Catalog::builtin()
        .add_text("m.toml", model)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("m.toml:3:10: "), "{err}");
}

#[test]
fn no_fit_names_the_flag_and_the_smallest_limit_that_works() {
    let base = ["simulate", "--schedule", "zb-auto", "-p", "4", "-m", "8"];
    let mut args = base.to_vec();
    args.extend(["--mem-limit", "0"]);
    let (ok, _, err) = pipescope(&args);
    assert!(!ok);
    assert!(err.contains("--mem-limit"), "{err}");
    let smallest = err
        .split("the smallest limit that fits is ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .expect("the smallest limit is named")
        .to_string();
    let mut args = base.to_vec();
    args.extend(["--mem-limit", &smallest]);
    let (ok, _, err) = pipescope(&args);
    assert!(ok, "{smallest}: {err}");
    let below = (smallest.parse::<u32>().unwrap() - 1).to_string();
    let mut args = base.to_vec();
    args.extend(["--mem-limit", &below]);
    let (ok, _, _) = pipescope(&args);
    assert!(!ok, "{below} should not fit");
}
