//! The rules of preset files and the configuration folder (docs/cli.md, "Presets"; ranges in
//! docs/model.md): every number in its physical range, type errors that name the key and its
//! range, names without control characters, `config.toml` not a preset, and a broken or
//! duplicate user preset that makes its name unusable instead of falling back.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use pipescope::{Catalog, PresetKind};

const GPU: &str = "name = \"g\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 2039\n";

fn gpu_error(extra: &str) -> String {
    let text = format!("[gpu]\n{GPU}{extra}");
    Catalog::builtin()
        .add_text("g.toml", &text)
        .unwrap_err()
        .to_string()
}

#[test]
fn rates_out_of_their_physical_range_are_refused_with_their_place() {
    let text = "[gpu]\nname = \"g\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 5e-324\n";
    let e = Catalog::builtin().add_text("g.toml", text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "g.toml:5:12: invalid gpu.hbm_gbps = 5e-324: a number from 10 to 1000000 GB/s"
    );
    for key in [
        "memory_gib",
        "bf16_tflops",
        "hbm_gbps",
        "link_gbps",
        "inter_node_gbps",
        "host_gbps",
    ] {
        let text = format!(
            "[gpu]\nname = \"g\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 2039\n{key} = 1e300\n"
        )
        .replacen(&format!("\n{key} = 80\n"), "\n", 1)
        .replacen(&format!("\n{key} = 312\n"), "\n", 1)
        .replacen(&format!("\n{key} = 2039\n"), "\n", 1);
        let e = Catalog::builtin()
            .add_text("g.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("gpu.{key} = 1e300")), "{e}");
        assert!(e.starts_with("g.toml:") && e.contains(" to "), "{e}");
    }
    let e = gpu_error("[gpu.efficiency]\nlink = 2\n");
    assert!(e.contains("gpu.efficiency.link = 2"), "{e}");
    let e = gpu_error("[gpu.codec]\ngbps = 1e300\n");
    assert!(e.contains("gpu.codec.gbps = 1e300"), "{e}");
}

#[test]
fn unsorted_efficiency_tables_are_refused() {
    let e = gpu_error("[gpu.efficiency]\nmatrix = [[1e9, 0.5], [1e12, 0.9]]\n");
    assert!(
        e.contains("gpu.efficiency.matrix[1]") && e.contains("largest threshold"),
        "{e}"
    );
    assert!(e.starts_with("g.toml:7:"), "{e}");
}

#[test]
fn type_errors_name_the_key_and_its_range() {
    let c = Catalog::builtin();
    for (text, expected) in [
        (
            "name = \"a\"\n[parallel]\npp = 5000000000\n",
            "a.toml:3:6: invalid parallel.pp = 5000000000: a whole number from 1 to 65536",
        ),
        (
            "name = \"a\"\n[batch]\nseq_len = -5\n",
            "a.toml:3:11: invalid batch.seq_len = -5: a whole number from 1 to 16777216",
        ),
        (
            "[model]\nname = \"m\"\nlayers = 24\nhidden = 99999999999999999999\nheads = 4\nvocab = 10\n",
            "a.toml:4:10: invalid model.hidden = 99999999999999999999: a whole number from 1 to 16777216",
        ),
        (
            "name = \"a\"\n[plan]\nflash_attention = \"yes\"\n",
            "a.toml:3:19: invalid plan.flash_attention = \"yes\": true or false",
        ),
    ] {
        let e = c.clone().add_text("a.toml", text).unwrap_err().to_string();
        assert_eq!(e, expected);
    }
    let deep = format!("name = \"a\"\n[plan]\ndescription = {}\n", "[".repeat(300));
    let e = c.clone().add_text("a.toml", &deep).unwrap_err().to_string();
    assert!(
        e.contains("invalid plan.description") && e.contains("nested less deeply"),
        "{e}"
    );
    let huge = "name = \"a\"\n[plan]\nreserve_gib = 1e308\n";
    let e = c.clone().add_text("a.toml", huge).unwrap_err().to_string();
    assert!(e.contains("= 1e308:") && e.len() < 200, "{e}");
}

#[test]
fn names_with_control_characters_are_refused() {
    let e = Catalog::builtin()
        .add_text(
            "g.toml",
            "[gpu]\nname = \"a\\nb\"\nmemory_gib = 80\nbf16_tflops = 312\nhbm_gbps = 2039\n",
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("g.toml:2:8: invalid gpu.name = \"a\\nb\""),
        "{e}"
    );
    let e = Catalog::builtin()
        .add_text("s.toml", "name = \"x\\ty\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("control characters"), "{e}");
}

/// A config folder holding `files` (paths relative to `pipescope/`), removed on drop.
struct Config(PathBuf);

impl Config {
    fn new(tag: &str, files: &[(&str, &str)]) -> Self {
        let home =
            std::env::temp_dir().join(format!("pipescope-rules-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        for (path, text) in files {
            let file = home.join("pipescope").join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        Self(home)
    }

    fn dir(&self) -> PathBuf {
        self.0.join("pipescope")
    }

    fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_pipescope"))
            .args(args)
            .env("XDG_CONFIG_HOME", &self.0)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn config_toml_is_not_a_preset() {
    let cfg = Config::new("settings", &[("config.toml", "export_dir = \"/tmp\"\n")]);
    assert!(Catalog::with_user_dir(&cfg.dir()).errors().is_empty());
    let (ok, _, err) = cfg.run(&["plan", "-m", "16"]);
    assert!(ok && err.is_empty(), "{err}");
    // A preset called config.toml deeper down is still a preset.
    let cfg = Config::new(
        "settings-deep",
        &[(
            "presets/config.toml",
            "[model]\nname = \"c\"\nlayers = 2\nhidden = 64\nheads = 2\nvocab = 10\n",
        )],
    );
    assert!(Catalog::with_user_dir(&cfg.dir()).model("c").is_some());
}

#[test]
fn a_broken_user_preset_named_like_a_builtin_is_refused_not_replaced() {
    let cfg = Config::new(
        "broken",
        &[
            (
                "presets/tiny.toml",
                "name = \"tiny-4x8\"\n[parallel]\npp = \"x\"\n",
            ),
            (
                "presets/gpt3.toml",
                "[model]\nname = \"gpt3-175b\"\nlayers = \"ninety-six\"\nhidden = 12288\nheads = 96\nvocab = 50257\n",
            ),
            ("presets/a100-80gb.toml", "[gpu\n"),
        ],
    );
    let (ok, _, err) = cfg.run(&["plan", "--preset", "tiny-4x8"]);
    assert!(!ok, "the built-in tiny-4x8 was used: {err}");
    assert!(
        err.contains("tiny.toml:3:6") && err.contains("'tiny-4x8' is not used"),
        "{err}"
    );
    let (ok, _, err) = cfg.run(&["plan", "--model", "gpt3-175b"]);
    assert!(!ok && err.contains("gpt3.toml:3:"), "{err}");
    let (ok, _, err) = cfg.run(&["plan", "--gpu", "a100-80gb"]);
    assert!(!ok && err.contains("a100-80gb.toml:1:"), "{err}");
    // Names nobody asks for cost a warning only; the built-in scenario keeps its built-ins.
    let (ok, _, err) = cfg.run(&["plan", "-m", "16"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("warning") && err.contains("gpt3.toml:3:"),
        "{err}"
    );
    // A file named by its path is used.
    let good = cfg.dir().join("good.toml");
    std::fs::write(
        &good,
        "name = \"tiny-4x8\"\nmodel = \"llama2-7b\"\ngpu = \"h100-80gb\"\n[parallel]\npp = 2\n",
    )
    .unwrap();
    let (ok, _, err) = cfg.run(&["plan", "--preset", &path_str(&good)]);
    assert!(ok, "{err}");
}

#[test]
fn a_valid_user_model_override_does_not_break_the_default_scenario() {
    // 12 heads: the default scenario's t = 8 does not divide them.
    let cfg = Config::new(
        "override",
        &[(
            "presets/gpt3.toml",
            "[model]\nname = \"gpt3-175b\"\nlayers = 48\nhidden = 12288\nheads = 12\nvocab = 50257\n",
        )],
    );
    let (ok, _, err) = cfg.run(&["plan", "-m", "16", "--json"]);
    assert!(ok && err.is_empty(), "{err}");
    // Named, the user's model is used (and its error names the flag, not a built-in file).
    let (ok, _, err) = cfg.run(&["plan", "--model", "gpt3-175b", "-m", "16"]);
    assert!(
        !ok && err.contains("parallel.tp") && !err.contains("builtin:"),
        "{err}"
    );
    let (ok, out, err) = cfg.run(&[
        "plan",
        "--model",
        "gpt3-175b",
        "-t",
        "4",
        "-m",
        "16",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let last = v["stages"].as_array().unwrap().last().unwrap()["last_block"].clone();
    assert_eq!(last, 2 * 48 + 1);
}

#[test]
fn two_user_presets_with_one_name_are_said_and_the_name_is_not_used() {
    let model = |layers: u32| {
        format!(
            "[model]\nname = \"twin\"\nlayers = {layers}\nhidden = 256\nheads = 4\nvocab = 1000\n"
        )
    };
    let (a, b) = (model(4), model(8));
    let cfg = Config::new("twins", &[("presets/a.toml", &a), ("presets/b.toml", &b)]);
    let c = Catalog::with_user_dir(&cfg.dir());
    let e = c
        .errors()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        e.contains("b.toml") && e.contains("a.toml") && e.contains("'twin' again"),
        "{e}"
    );
    assert!(c.unusable(PresetKind::Model, "twin").is_some());
    let (ok, _, err) = cfg.run(&["plan", "--model", "twin"]);
    assert!(!ok && err.contains("'twin' again"), "{err}");
    let (ok, out, err) = cfg.run(&["presets"]);
    assert!(ok && err.contains("'twin' again"), "{err}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("twin"))
        .unwrap();
    assert!(line.contains("not used"), "{out}");
}

#[test]
fn preset_values_suggest_the_nearest_name() {
    let c = Catalog::builtin();
    for (text, hint) in [
        (
            "name = \"x\"\n[plan]\nschedule = \"1f1bb\"\n",
            "did you mean '1f1b'",
        ),
        (
            "name = \"x\"\n[plan]\nstrategy = \"adapip\"\n",
            "did you mean 'adapipe'",
        ),
        (
            "name = \"x\"\n[plan]\npartition = \"balance\"\n",
            "did you mean 'balanced'",
        ),
        (
            "name = \"x\"\nmodel = \"llama3-7b\"\n",
            "did you mean 'llama",
        ),
        ("name = \"x\"\ngpu = \"h100\"\n", "did you mean 'h100-80gb'"),
        (
            "[model]\nname = \"m\"\nstyle = \"lama\"\nlayers = 2\nhidden = 64\nheads = 2\nvocab = 10\nffn = 128\n",
            "did you mean \"llama\"",
        ),
    ] {
        let e = c.clone().add_text("x.toml", text).unwrap_err().to_string();
        assert!(e.contains(hint), "{text}: {e}");
    }
    let mut s = c.scenario("tiny-4x8").unwrap();
    s.plan.strategy = pipescope::Strategy::Named;
    s.plan.recompute_units = vec!["ln_ot".into()];
    let e = pipescope::solve(&s).unwrap_err().to_string();
    assert!(e.contains("did you mean") && e.contains("ln_out"), "{e}");
}

#[test]
fn huge_whole_numbers_and_overflowing_floats_are_shown_as_written() {
    let c = Catalog::builtin();
    let e = c
        .clone()
        .add_text(
            "v.toml",
            "name = \"x\"\n[batch]\nseq_len = 9223372036854775807\n",
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("= 9223372036854775807:"), "{e}");
    let e = c
        .clone()
        .add_text("v.toml", "name = \"x\"\n[plan]\nmem_limit = 1e400\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("v.toml:3:13: invalid plan.mem_limit = 1e400:"),
        "{e}"
    );
}

/// A scenario file that shards or overlaps over one data-parallel rank (`d x cp = 1`) is
/// refused at the key, with the rule the command line gives its flags; with `dp = 2` the
/// same file loads.
#[test]
fn sharding_and_overlaps_over_one_data_parallel_rank_are_refused_in_files() {
    let head = "name = \"x\"\nmodel = \"gpt-9.6b\"\ngpu = \"a100-80gb\"\n[parallel]\npp = 2\n";
    for (body, place, key) in [
        ("zero = 3\n", "x.toml:6:8", "parallel.zero = 3"),
        ("zero = 1\n", "x.toml:6:8", "parallel.zero = 1"),
        (
            "distributed_optimizer = true\n",
            "x.toml:6:25",
            "parallel.distributed_optimizer = true",
        ),
        (
            "[plan]\noverlap_grad_reduce = true\n",
            "x.toml:7:23",
            "plan.overlap_grad_reduce = true",
        ),
    ] {
        let text = format!("{head}{body}");
        let e = Catalog::builtin()
            .add_text("x.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("{place}: invalid {key}: ")), "{e}");
        assert!(e.contains("d x cp = 1 x 1 = 1"), "{e}");
        let with_d = text.replace("pp = 2\n", "pp = 2\ndp = 2\n");
        assert!(
            Catalog::builtin().add_text("x.toml", &with_d).is_ok(),
            "{with_d}"
        );
    }
}
