//! Every schedule's per-device breakdown says what the device really spent: its compute,
//! recomputation and in-op communication keys add up to its busy time, and the communication
//! inside the ops counts each chunk once per micro-batch that passes through it (a two-copy
//! schedule, DualPipe or Chimera, passes half of them through each copy), so a device's
//! compute matches 1F1B's for the same stages.

use pipescope::{Catalog, Outcome, Scenario, ScenarioOverrides, ScheduleKind, Strategy, solve};

/// Llama 3 8B at t 8 (a quarter of each op is tensor-parallel communication), p 4, m 8.
fn scenario(kind: ScheduleKind) -> Option<Scenario> {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some("llama3-8b".into()),
        gpu: Some("h100-80gb".into()),
        tp: Some(8),
        pp: Some(4),
        dp: Some(1),
        micro_batches: Some(8),
        strategy: Some(Strategy::None),
        schedule: Some(kind),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .ok()?;
    s.validate().ok()?;
    Some(s)
}

/// Per device and local chunk, the micro-batches that pass through it (its forwards).
fn passes(o: &Outcome) -> Vec<Vec<f64>> {
    o.op_order
        .devices
        .iter()
        .map(|ops| {
            let mut n = vec![0.0; o.op_order.v as usize];
            for op in ops.iter().filter(|op| op.kind == pipescope::OpKind::F) {
                n[op.chunk as usize] += 1.0;
            }
            n
        })
        .collect()
}

#[test]
fn each_device_s_keys_add_up_to_its_busy_time_and_match_1f1b_on_the_same_stages() {
    let base = solve(&scenario(ScheduleKind::OneFOneB).unwrap()).unwrap();
    let m = 8.0;
    // 1F1B's compute per micro-batch of each stage, by its block range.
    let per_mb: Vec<((usize, usize), f64)> = base
        .stages
        .iter()
        .map(|st| {
            let r = st.ranges[0];
            ((r[0], r[1]), st.time_breakdown_s.compute / m)
        })
        .collect();
    let mut compared = Vec::new();
    for &kind in ScheduleKind::ALL {
        let Some(s) = scenario(kind) else { continue };
        let Ok(o) = solve(&s) else { continue };
        let job = o.simulation.job.as_ref().unwrap();
        let n = passes(&o);
        for (d, st) in o.stages.iter().enumerate() {
            let b = &job.devices[d];
            let busy = o.simulation.devices[d].busy;
            let keys = b.compute + b.recompute + b.tp_comm + b.cp_comm + b.ep_comm;
            assert!(
                (keys - busy).abs() <= 1e-9 * busy,
                "{kind} device {d}: keys {keys} busy {busy}"
            );
            assert!(b.compute > 0.0, "{kind} device {d}: {b:?}");
            // Where every chunk of the device is a 1F1B stage, its compute is 1F1B's per
            // micro-batch of those stages times the micro-batches through each chunk.
            let want: Option<f64> = st
                .ranges
                .iter()
                .enumerate()
                .map(|(c, r)| {
                    per_mb
                        .iter()
                        .find(|(range, _)| *range == (r[0], r[1]))
                        .map(|(_, x)| x * n[d][c])
                })
                .sum();
            if let Some(want) = want {
                assert!(
                    (b.compute - want).abs() <= 1e-6 * want,
                    "{kind} device {d}: compute {} where 1F1B's stages give {want}",
                    b.compute
                );
                compared.push(kind);
            }
        }
    }
    for kind in [ScheduleKind::DualPipe, ScheduleKind::Chimera] {
        assert!(
            compared.contains(&kind),
            "{kind} was not compared: {compared:?}"
        );
    }
}

/// At d = 1 the two copies of every stage (DualPipe and Chimera) still sum their gradients
/// before the step, as DualPipe's own example does between rank r and rank p - 1 - r: each
/// device sends its whole gradient to its mirror once, over NVLink on one node.
#[test]
fn two_copy_schedules_sum_their_copies_gradients_with_the_mirror_at_d_1() {
    let c = Catalog::builtin();
    for kind in [ScheduleKind::DualPipe, ScheduleKind::Chimera] {
        let mut s = c.scenario("tiny-4x8").unwrap();
        ScenarioOverrides {
            schedule: Some(kind),
            strategy: Some(Strategy::Full),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        assert_eq!(s.parallel.dp, 1);
        let o = solve(&s).unwrap();
        let job = o.simulation.job.as_ref().unwrap();
        let bw = s.gpu.link_gbps * 1e9 * s.gpu.efficiency.link;
        for (d, st) in o.stages.iter().enumerate() {
            let want = st.grads_bytes as f64 / bw;
            let got = job.devices[d].dp_comm;
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{kind} device {d}: dp_comm {got}, want {want}"
            );
        }
        // 1F1B at d = 1 reduces nothing.
        s.plan.schedule = ScheduleKind::OneFOneB;
        let one = solve(&s).unwrap();
        assert!(
            one.stages
                .iter()
                .all(|st| st.time_breakdown_s.dp_comm == 0.0)
        );
    }
}
