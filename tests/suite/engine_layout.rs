//! Hand-written pipeline layouts (`--layout`, Megatron's grammar): the split each stage runs,
//! what the outcome and the Megatron export say about it, and the refusals.

use pipescope::{PipelineLayout, Scenario, ScenarioOverrides, Strategy, default_scenario, solve};

/// The default scenario with a layout whose first stage holds one layer fewer and whose last
/// one more than the even split, and the layout's text.
fn uneven() -> (Scenario, String) {
    let mut s = default_scenario();
    let (l, p) = (s.model.layers, s.parallel.pp);
    let per = l / p;
    assert!(l % p == 0 && per >= 2);
    let mut stages = vec![format!("Et*{}", per - 1)];
    stages.extend((1..p - 1).map(|_| format!("t*{per}")));
    stages.push(format!("t*{}L", per + 1));
    let text = stages.join("|");
    ScenarioOverrides {
        strategy: Some(Strategy::Full),
        layout: Some(text.clone()),
        ..Default::default()
    }
    .apply(&mut s, &pipescope::Catalog::builtin())
    .unwrap();
    (s, text)
}

#[test]
fn stages_hold_the_layers_the_layout_gives_them() {
    let (s, text) = uneven();
    let out = solve(&s).unwrap();
    let want = PipelineLayout::parse(&text)
        .unwrap()
        .chain(s.model.layers, 0, s.parallel.pp as usize)
        .unwrap();
    let got: Vec<(usize, usize)> = out
        .stages
        .iter()
        .map(|st| (st.first_block, st.last_block))
        .collect();
    assert_eq!(got, want);
    assert_ne!(got[0], (0, 2 * (s.model.layers / s.parallel.pp) as usize));
    assert_eq!(out.layout.as_deref(), Some(text.as_str()));
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["layout"], text.as_str());
    assert_eq!(json["p2p"], "overlapped");
}

#[test]
fn megatron_export_writes_the_layout_it_ran() {
    let (s, text) = uneven();
    let out = solve(&s).unwrap();
    let script = pipescope::megatron_args(&s, &out).unwrap();
    let written = script
        .split_whitespace()
        .skip_while(|w| *w != "--pipeline-model-parallel-layout")
        .nth(1)
        .expect("the export writes a layout")
        .trim_matches(|c| c == '"' || c == '\'' || c == '\\');
    let stages = s.parallel.pp as usize;
    let chain = |t: &str| {
        PipelineLayout::parse(t)
            .unwrap()
            .chain(s.model.layers, 0, stages)
            .unwrap()
    };
    assert_eq!(chain(written), chain(&text), "{written}");
}

#[test]
fn layouts_that_do_not_fit_are_refused_with_the_column() {
    let (mut s, _) = uneven();
    s.plan.layout = Some(PipelineLayout::parse("Et*2|t*2L").unwrap());
    let e = solve(&s).unwrap_err().to_string();
    assert!(e.contains("layout") && e.contains("column 10"), "{e}");
    let (mut s, _) = uneven();
    s.plan.strategy = Strategy::AdaPipe;
    let e = solve(&s).unwrap_err().to_string();
    assert!(e.contains("layout") && e.contains("adapipe"), "{e}");
    let mut s = default_scenario();
    let err = ScenarioOverrides {
        layout: Some("Et*3|(tt".into()),
        ..Default::default()
    }
    .apply(&mut s, &pipescope::Catalog::builtin())
    .unwrap_err();
    assert!(err.to_string().contains("column 6"), "{err}");
}

#[test]
fn lynx_on_one_stage_per_device_refuses_a_layout_and_a_sweep_drops_it() {
    let (mut s, _) = uneven();
    s.plan.strategy = Strategy::Lynx;
    let e = solve(&s).unwrap_err().to_string();
    assert!(e.contains("plan.layout") && e.contains("lynx"), "{e}");
    // A preset's layout fixes its own stages; the sweep gives every configuration its own.
    let (s, _) = uneven();
    assert!(pipescope::sweep_starting_scenario(&s).plan.layout.is_none());
}

/// The command line's answer to `args`: its JSON on success, its error otherwise.
fn cli(args: &[&str]) -> Result<serde_json::Value, String> {
    let (ok, out, err) = crate::cli_common::pipescope(args);
    assert!(!err.contains("panicked"), "{err}");
    if ok {
        Ok(serde_json::from_str(&out).unwrap_or(serde_json::Value::String(out)))
    } else {
        Err(err)
    }
}

/// `(first, last)` block of every stage of a `plan --json` answer.
fn stage_blocks(v: &serde_json::Value) -> Vec<(u64, u64)> {
    v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["first_block"].as_u64().unwrap(),
                s["last_block"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn plan_json_and_the_megatron_export_round_trip_a_layout() {
    let (s, text) = uneven();
    let p = s.parallel.pp.to_string();
    let base = ["--strategy", "full", "-p", p.as_str()];
    let plan = |layout: &str| {
        let mut args = vec!["plan", "--json", "--layout", layout];
        args.extend(base);
        cli(&args).unwrap()
    };
    let first = plan(&text);
    assert_eq!(first["layout"], text.as_str());
    // What `plan --json` says it ran, given back, runs the same.
    let again = plan(first["layout"].as_str().unwrap());
    assert_eq!(stage_blocks(&again), stage_blocks(&first));
    assert_eq!(again["iteration_time_s"], first["iteration_time_s"]);
    // The export's layout (folded into Megatron's groups) decodes to the same stages.
    let mut args = vec!["export", "megatron", "-o", "-", "--layout", text.as_str()];
    args.extend(base);
    let script = cli(&args).unwrap();
    let script = script.as_str().unwrap();
    let written = script
        .split_whitespace()
        .skip_while(|w| *w != "--pipeline-model-parallel-layout")
        .nth(1)
        .unwrap()
        .trim_matches(|c| c == '\'' || c == '"');
    assert_ne!(written, text, "the export folds the runs");
    let exported = plan(written);
    assert_eq!(stage_blocks(&exported), stage_blocks(&first));
    assert_eq!(exported["iteration_time_s"], first["iteration_time_s"]);
}

#[test]
fn hostile_layouts_are_refused_with_the_flag_the_column_and_the_reason() {
    let refused = |layout: &str, extra: &[&str]| {
        let mut args = vec!["plan", "--strategy", "full", "--layout", layout];
        args.extend(extra);
        cli(&args).unwrap_err()
    };
    // Megatron's unrolling of `(t|)*3` ends in an empty stage, named before the count.
    let e = refused("E|(t|)*3", &[]);
    assert!(
        e.contains("--layout") && e.contains("stage 5 is empty"),
        "{e}"
    );
    let e = refused("E|(t*24|)*3t*24L", &[]);
    assert!(e.contains("5 stages") && e.contains("runs 8"), "{e}");
    let e = refused("E(t*4|", &[]);
    assert!(e.contains("column 2") && e.contains("(...)*N"), "{e}");
    let e = refused("Et*24|t*24|t*24|t*24|t*24L", &["-p", "4"]);
    assert!(e.contains("column 21") && e.contains("5 stages"), "{e}");
    let e = refused(
        "Et*12|t*12|t*12|t*12|t*12|t*12|t*12|t*12L",
        &["--partition", "even"],
    );
    assert!(
        e.contains("--partition even") && e.contains("--layout"),
        "{e}"
    );
    // The sweep chooses every configuration's split: it says so instead of ignoring it.
    let e = cli(&[
        "sweep",
        "--gpus",
        "64",
        "--global-batch",
        "64",
        "--layout",
        "Et*48|t*48L",
    ])
    .unwrap_err();
    assert!(
        e.contains("--layout Et*48|t*48L") && e.contains("sweep chooses"),
        "{e}"
    );
}

#[test]
fn compare_with_a_layout_leaves_out_the_strategies_that_search_their_own_split() {
    let (s, text) = uneven();
    let p = s.parallel.pp.to_string();
    let (ok, out, err) =
        crate::cli_common::pipescope(&["compare", "--json", "-p", &p, "--layout", &text]);
    assert!(ok, "{err}");
    assert!(err.contains("leaves out adapipe, unified, lynx"), "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(rows.iter().all(|r| r["layout"] == text.as_str()));
    assert!(rows.iter().all(|r| r["strategy"] != "adapipe"), "{out}");
    // Named, they are refused with the flag.
    let e = cli(&[
        "compare",
        "--strategies",
        "full,adapipe",
        "-p",
        &p,
        "--layout",
        &text,
    ])
    .unwrap_err();
    assert!(e.contains("adapipe") && e.contains("(--layout)"), "{e}");
}
