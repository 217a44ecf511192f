//! Shared helpers of the schedule and simulator tests: an independent checker of a
//! simulation against its schedule.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use pipescope::{
    Lane, OpKind, Schedule, ScheduleError, ScheduleInput, ScheduleKind, SimCosts, SimError,
    Simulation, SpanKind, generate, simulate,
};
use std::collections::HashMap;

/// Schedules whose generators this test suite's owner writes (must always generate when
/// their stated requirements hold).
pub const OWN: [ScheduleKind; 2] = [ScheduleKind::Gpipe, ScheduleKind::OneFOneB];

/// Generates `kind` with uniform costs; `None` when the generator says the input is
/// unsupported or does not fit.
pub fn gen_uniform(
    kind: ScheduleKind,
    p: u32,
    m: u32,
    v: u32,
    fbw: [f64; 3],
    comm: f64,
) -> Option<Schedule> {
    let input = ScheduleInput::uniform(p, m, kind.chunks(v), fbw[0], fbw[1], fbw[2], comm);
    // Unsupported sizes and unmet memory limits are both refusals here.
    let result: Result<Schedule, ScheduleError> = generate(kind, &input);
    result.ok()
}

/// Generates and simulates `kind` as `pipescope simulate` does.
pub fn run_uniform(
    kind: ScheduleKind,
    p: u32,
    m: u32,
    v: u32,
    fbw: [f64; 3],
    comm: f64,
) -> Option<(Schedule, Simulation)> {
    let s = gen_uniform(kind, p, m, v, fbw, comm)?;
    let costs = SimCosts::abstract_run(&s, fbw[0], fbw[1], fbw[2], comm, fbw[0]);
    match simulate(&s, &costs) {
        // PipeOffload's paired copies refuse copies too slow for the gaps (k > 1).
        Err(SimError::OffloadUnschedulable { .. }) if kind.pairs_host_copies() => None,
        // Copies too slow for every gap, or (po-f) fitting only po-h's chunks, are refused
        // rather than run as another schedule.
        Err(SimError::NothingOffloaded { .. } | SimError::FullOffloadUnplaced { .. })
            if s.offloaded.iter().flatten().any(|&x| x) =>
        {
            None
        }
        made => Some((s, made.expect("simulation of a generated schedule"))),
    }
}

const EPS: f64 = 1e-9;

/// Checks the invariants of `sim` against `s` with per-op costs `fbw` and transfer `comm`:
/// every op exactly once with its duration, dependencies respected, no overlap on a compute
/// lane, ops in the schedule's order, and memory back to zero at the end. Panics on failure.
pub fn check_invariants(s: &Schedule, sim: &Simulation, fbw: [f64; 3], comm: f64) {
    let tag = format!("{} p={} m={} v={}", s.kind, s.p, s.m, s.v);
    let expected: usize = s.devices.iter().map(Vec::len).sum();
    let compute: Vec<_> = sim
        .timeline
        .spans
        .iter()
        .filter(|x| x.lane == Lane::Compute && x.kind != SpanKind::R)
        .collect();
    assert_eq!(compute.len(), expected, "{tag}: op count");
    // (stage, mb, kind) -> (device, start, end)
    let mut at: HashMap<(u32, u32, u8), (u32, f64, f64)> = HashMap::new();
    for sp in &compute {
        let stage = s.stage_of(sp.device, sp.chunk, sp.micro_batch);
        let k = match sp.kind {
            SpanKind::F => 0,
            SpanKind::B | SpanKind::BW => 1,
            SpanKind::W => 2,
            other => panic!("{tag}: unexpected compute span {other:?}"),
        };
        let dur = match sp.kind {
            SpanKind::F => fbw[0],
            SpanKind::B => fbw[1],
            SpanKind::W => fbw[2],
            _ => fbw[1] + fbw[2],
        };
        assert!(
            ((sp.end - sp.start) - dur).abs() < EPS,
            "{tag}: duration of {sp:?}"
        );
        let prev = at.insert((stage, sp.micro_batch, k), (sp.device, sp.start, sp.end));
        assert!(prev.is_none(), "{tag}: duplicate {sp:?}");
        if sp.kind == SpanKind::BW {
            assert!(
                at.insert((stage, sp.micro_batch, 2), (sp.device, sp.start, sp.end))
                    .is_none(),
                "{tag}: BW and W of {sp:?}"
            );
        }
    }
    let stages = s.stages();
    for mb in 0..s.m {
        for st in 0..stages {
            let f = at[&(st, mb, 0)];
            let b = at[&(st, mb, 1)];
            let w = at[&(st, mb, 2)];
            let hop = |a: u32, b: u32| if a == b { 0.0 } else { comm };
            if st > 0 {
                let pf = at[&(st - 1, mb, 0)];
                assert!(
                    f.1 + EPS >= pf.2 + hop(pf.0, f.0),
                    "{tag}: F dep s{st} mb{mb}"
                );
            }
            if st + 1 < stages {
                let nb = at[&(st + 1, mb, 1)];
                assert!(
                    b.1 + EPS >= nb.2 + hop(nb.0, b.0),
                    "{tag}: B dep s{st} mb{mb}"
                );
            } else {
                assert!(b.1 + EPS >= f.2, "{tag}: last B after F mb{mb}");
            }
            assert!(w.1 + EPS >= b.2 || w == b, "{tag}: W after B s{st} mb{mb}");
            assert_eq!(f.0, b.0, "{tag}: F and B on one device");
        }
    }
    // Compute lanes: no overlap, schedule order.
    for (d, ops) in s.devices.iter().enumerate() {
        let lane: Vec<_> = compute.iter().filter(|x| x.device == d as u32).collect();
        assert_eq!(lane.len(), ops.len(), "{tag}: device {d} op count");
        for (i, (sp, op)) in lane.iter().zip(ops).enumerate() {
            let kind = match op.kind {
                OpKind::F => SpanKind::F,
                OpKind::B => SpanKind::B,
                OpKind::W => SpanKind::W,
                OpKind::BW => SpanKind::BW,
            };
            assert_eq!(
                (sp.kind, sp.micro_batch, sp.chunk),
                (kind, op.micro_batch, op.chunk),
                "{tag}: device {d} op {i} out of order"
            );
            if i > 0 {
                assert!(sp.start + EPS >= lane[i - 1].end, "{tag}: overlap on {d}");
            }
        }
    }
    for curve in &sim.memory {
        let last = curve.points.last().map_or(0, |x| x.1);
        assert_eq!(last, 0, "{tag}: device {} memory not freed", curve.device);
        let host = curve.host_points.last().map_or(0, |x| x.1);
        assert_eq!(
            host, 0,
            "{tag}: device {} host memory not freed",
            curve.device
        );
    }
    let busy: f64 = sim.devices.iter().map(|d| d.busy).sum();
    let rate = 1.0 - busy / (f64::from(s.p) * sim.makespan);
    assert!((rate - sim.bubble_rate).abs() < 1e-9, "{tag}: bubble rate");
}
