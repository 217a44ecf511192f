//! Presets: every built-in file loads and resolves, errors name file:line:column, unknown
//! keys suggest the nearest known key, scenarios round-trip through `to_toml`, and the
//! user's directory layers on top of the built-in presets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pipescope::{Anatomy, Catalog, PresetKind, ScenarioOverrides, default_scenario, to_toml};

const MODELS: [&str; 14] = [
    "gpt3-175b",
    "megatron-22b",
    "mt-nlg-530b",
    "megatron-1t",
    "llama2-7b",
    "llama2-13b",
    "llama2-70b",
    "llama3-8b",
    "llama3-70b",
    "llama3-405b",
    "gpt-9.6b",
    "gpt-21b",
    "gpt-38.5b",
    "gpt-98.5b",
];

#[test]
fn every_builtin_preset_loads() {
    let c = Catalog::builtin();
    assert!(c.errors().is_empty(), "{:?}", c.errors());
    for m in MODELS {
        assert!(c.model(m).is_some(), "missing model {m}");
    }
    let gib = |name: &str| c.gpu(name).unwrap().memory_gib;
    assert_eq!(gib("a100-40gb"), 40.0);
    assert_eq!(gib("a100-80gb"), 80.0);
    assert_eq!(gib("h100-80gb"), 79.6);
    assert_eq!(gib("h200-141gb"), 140.4);
    assert!(c.gpu("ascend-910b").is_some());
    for info in c.scenarios() {
        assert!(
            !info.description.is_empty(),
            "{} lacks a description",
            info.name
        );
        let s = c.scenario(&info.name).unwrap();
        Anatomy::build(&s).unwrap();
    }
    for info in c.models().iter().chain(c.gpus().iter()) {
        assert!(
            !info.description.is_empty(),
            "{} lacks a description",
            info.name
        );
    }
    for name in [
        "gpt3-175b-16k",
        "adapipe-llama2-70b",
        "korthikanti-22b",
        "korthikanti-175b",
        "korthikanti-530b",
        "korthikanti-1t",
        "tiny-4x8",
    ] {
        c.scenario(name).unwrap();
    }
}

#[test]
fn default_scenario_is_the_16k_preset() {
    let s = default_scenario();
    assert_eq!(s.name, "gpt3-175b-16k");
    assert_eq!((s.parallel.pp, s.parallel.tp), (8, 8));
    assert_eq!(s.batch.seq_len, 16384);
    assert_eq!(s.plan.memory_budget_bytes, 70 << 30);
}

#[test]
fn every_scenario_round_trips_through_to_toml() {
    let c = Catalog::builtin();
    for name in c.scenario_names() {
        let s = c.scenario(name).unwrap();
        let text = to_toml(&s);
        let back = Catalog::empty()
            .scenario_from_text("saved.toml", &text)
            .unwrap();
        assert_eq!(back, s, "{name}:\n{text}");
    }
}

#[test]
fn a_saved_preset_holds_the_chunks_its_schedule_runs() {
    // The TUI keeps a chunk count a single-chunk schedule ignores (zb-h1 with 2 runs 1);
    // saving it writes 1, which the command line accepts, and the plan is the same.
    let mut s = Catalog::builtin().scenario("tiny-4x8").unwrap();
    s.plan.schedule = pipescope::ScheduleKind::ZbH1;
    s.parallel.chunks = 2;
    let text = to_toml(&s);
    assert!(text.contains("chunks = 1\n"), "{text}");
    assert!(!text.contains("chunks = 2"), "{text}");
    let back = Catalog::empty()
        .scenario_from_text("saved.toml", &text)
        .unwrap();
    assert_eq!(back.parallel.chunks, 1);
    let before = pipescope::solve(&s).unwrap();
    let after = pipescope::solve(&back).unwrap();
    assert_eq!(
        format!("{:?}", before.iteration_time_s),
        format!("{:?}", after.iteration_time_s)
    );
    // A schedule that takes the count keeps it.
    s.plan.schedule = pipescope::ScheduleKind::Interleaved;
    assert!(to_toml(&s).contains("chunks = 2\n"));
}

#[test]
fn syntax_error_names_file_line_and_column() {
    let mut c = Catalog::builtin();
    let text = "[model]\nname = \"x\"\nlayers = = 3\n";
    let e = c.add_text("models/x.toml", text).unwrap_err();
    assert_eq!(e.file, "models/x.toml");
    assert_eq!(e.line, Some(3));
    assert!(e.column.is_some());
    assert!(e.to_string().starts_with("models/x.toml:3:"), "{e}");
}

#[test]
fn unknown_key_suggests_the_nearest() {
    let mut c = Catalog::builtin();
    let text = "[model]\nname = \"x\"\nlayers = 2\nhiden = 64\nheads = 4\nvocab = 100\n";
    let e = c.add_text("x.toml", text).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("hiden"), "{msg}");
    assert!(msg.contains("did you mean `hidden`"), "{msg}");
    assert_eq!(e.line, Some(4), "{msg}");

    let text = "name = \"s\"\nmodel = \"gpt3-175b\"\n[parallel]\npp = 2\nstgaes = 3\n";
    let e = c.add_text("s.toml", text).unwrap_err();
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.to_string().contains("unknown field `stgaes`"), "{e}");
}

#[test]
fn unknown_model_name_suggests_the_nearest() {
    let c = Catalog::builtin();
    let e = c
        .scenario_from_text("s.toml", "name = \"s\"\nmodel = \"llama2-70\"\n")
        .unwrap_err();
    assert!(e.to_string().contains("did you mean 'llama2-70b'"), "{e}");
}

#[test]
fn a_bad_reload_keeps_the_last_good_preset() {
    let mut c = Catalog::builtin();
    let good = "[model]\nname = \"mine\"\nlayers = 2\nhidden = 64\nheads = 4\nvocab = 100\n";
    let info = c.add_text("mine.toml", good).unwrap();
    assert_eq!(info.kind, PresetKind::Model);
    let bad = "[model]\nname = \"mine\"\nlayers = 0\nhidden = 64\nheads = 4\nvocab = 100\n";
    let e = c.add_text("mine.toml", bad).unwrap_err();
    assert!(e.to_string().contains("model.layers"), "{e}");
    assert_eq!(c.model("mine").unwrap().layers, 2);
}

#[test]
fn user_dir_layers_on_top() {
    let dir = std::env::temp_dir().join(format!("pipescope-presets-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::write(
        dir.join("a-scenario.toml"),
        "name = \"mine\"\ndescription = \"d\"\nmodel = \"small\"\ngpu = \"a100-80gb\"\n[parallel]\npp = 2\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("models/small.toml"),
        "[model]\nname = \"small\"\nlayers = 4\nhidden = 256\nheads = 4\nvocab = 1000\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.toml"), "[gpu\n").unwrap();
    // Themes live beside the presets in the config dir and are not presets.
    std::fs::create_dir_all(dir.join("themes")).unwrap();
    std::fs::write(
        dir.join("themes/mine.toml"),
        "name = \"mine\"\n[colors]\nforward = \"#ffffff\"\n",
    )
    .unwrap();
    let c = Catalog::with_user_dir(&dir);
    assert_eq!(c.errors().len(), 1, "{:?}", c.errors());
    assert!(c.errors()[0].file.ends_with("broken.toml"));
    let s = c.scenario("mine").unwrap();
    assert_eq!(s.model.name, "small");
    assert!(c.scenario("gpt3-175b-16k").is_ok());
    let file = dir.join("a-scenario.toml");
    let by_path = c.scenario(file.to_str().unwrap()).unwrap();
    assert_eq!(by_path.name, "mine");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn overrides_apply_and_refuse_bad_values() {
    let c = Catalog::builtin();
    let mut s = default_scenario();
    let o = ScenarioOverrides {
        model: Some("llama2-70b".into()),
        gpu: Some("h100-80gb".into()),
        tp: Some(4),
        seq_len: Some(4096),
        ..Default::default()
    };
    o.apply(&mut s, &c).unwrap();
    assert_eq!(s.model.name, "llama2-70b");
    // The preset keeps 10 GiB free: the budget follows the new GPU, the reserve stays.
    assert_eq!(s.plan.reserve_bytes, Some(10 << 30));
    assert_eq!(
        s.plan.memory_budget_bytes,
        s.gpu.memory_bytes() - (10 << 30)
    );

    let mut k = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        gpu: Some("h200-141gb".into()),
        ..Default::default()
    }
    .apply(&mut k, &c)
    .unwrap();
    // The budget was the GPU's memory: it follows the new GPU.
    assert_eq!(k.plan.memory_budget_bytes, k.gpu.memory_bytes());

    for (o, field) in [
        (
            ScenarioOverrides {
                tp: Some(7),
                ..Default::default()
            },
            "parallel.tp",
        ),
        (
            ScenarioOverrides {
                pp: Some(1000),
                ..Default::default()
            },
            "parallel.pp",
        ),
        (
            ScenarioOverrides {
                budget_gib: Some(0.0),
                ..Default::default()
            },
            "budget_gib",
        ),
        (
            ScenarioOverrides {
                micro_batches: Some(0),
                ..Default::default()
            },
            "batch.micro_batches",
        ),
        (
            ScenarioOverrides {
                model: Some("nope".into()),
                ..Default::default()
            },
            "model",
        ),
    ] {
        let mut s = default_scenario();
        let e = o.apply(&mut s, &c).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    // kv heads must divide among tensor-parallel ranks.
    let mut s = default_scenario();
    let e = ScenarioOverrides {
        model: Some("llama2-70b".into()),
        tp: Some(16),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err();
    assert_eq!(e.field, "parallel.tp");
    assert!(e.allowed.contains("kv_heads"), "{e}");
}

#[test]
fn an_unmeetable_budget_is_not_an_error() {
    let c = Catalog::builtin();
    let mut s = default_scenario();
    ScenarioOverrides {
        budget_gib: Some(0.5),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s.validate().unwrap();
}

#[test]
fn every_table_may_carry_a_description() {
    let text = r#"
name = "d"
description = "top"
model = "gpt3-175b"
gpu = "a100-80gb"
[parallel]
description = "layout"
pp = 8
tp = 8
[batch]
description = "batch"
[plan]
description = "plan"
"#;
    Catalog::builtin()
        .scenario_from_text("d.toml", text)
        .unwrap();
}
