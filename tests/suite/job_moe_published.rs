//! Published Megatron-Core MoE runs on H100 (BF16, forced-balanced routing, s 4096), as
//! checks of the model (nothing is fitted to them; docs/model.md, "Mixtures of experts"):
//! - Qwen3-235B-A22B on 256 GPUs, GBS 2048, t 2 (SP), p 8, interleaved v 4, ep 32, DeepEP,
//!   recompute of the norms and the experts' activation: 19.7 s a step without all-to-all
//!   overlap (Megatron-MoE-ModelZoo, best_practice/qwen3/readme.md);
//! - Qwen3-30B-A3B on 16 GPUs, GBS 1024, ep 16, HybridEP, no overlap: 24.714 s a step
//!   (Megatron-Bridge, skills/nemo-mbridge-perf-moe-comm-overlap).
//!
//! Both run DeepEP-style dispatch (`--deepep`); each stays within 15 %.

#![allow(clippy::unwrap_used)]

use pipescope::{Catalog, ScenarioOverrides, ScheduleKind, Strategy, Zero};

fn step_s(o: ScenarioOverrides) -> f64 {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    ScenarioOverrides {
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        zero: Some(Zero::Optimizer),
        overlap_grad_reduce: Some(true),
        deepep: Some(true),
        flash: Some(true),
        budget_gib: Some(79.0),
        ..o
    }
    .apply(&mut s, &c)
    .unwrap();
    let out = pipescope::solve(&s).unwrap();
    assert!(out.feasible, "{:?}", out.infeasible_reason);
    out.iteration_time_s
}

#[test]
fn deepep_runs_of_qwen3_are_within_15_percent() {
    let big = step_s(ScenarioOverrides {
        model: Some("qwen3-235b-a22b".into()),
        tp: Some(2),
        sp: Some(true),
        pp: Some(8),
        dp: Some(16),
        ep: Some(32),
        global_batch: Some(2048),
        schedule: Some(ScheduleKind::Interleaved),
        chunks: Some(4),
        strategy: Some(Strategy::Named),
        recompute_units: Some(vec!["layernorm".into(), "moe_act".into()]),
        ..Default::default()
    });
    let small = step_s(ScenarioOverrides {
        model: Some("qwen3-30b-a3b".into()),
        tp: Some(1),
        pp: Some(1),
        dp: Some(16),
        ep: Some(16),
        global_batch: Some(1024),
        schedule: Some(ScheduleKind::OneFOneB),
        strategy: Some(Strategy::None),
        ..Default::default()
    });
    for (got, want, name) in [(big, 19.7, "qwen3-235b"), (small, 24.714, "qwen3-30b")] {
        let err = (got - want) / want;
        assert!(
            err.abs() <= 0.15,
            "{name}: {got:.2} s vs {want} s ({err:+.3})"
        );
    }
}
