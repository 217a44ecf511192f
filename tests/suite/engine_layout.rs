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
