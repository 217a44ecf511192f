//! Invariants of every schedule under random sizes and costs: every op exactly once,
//! dependencies respected, no overlap on a compute lane, memory back to static at the end,
//! and the simulator's in-flight peak equal to the order-only analysis.

use crate::sched_common;

use pipescope::{OpKind, ScheduleKind};
use proptest::prelude::*;
use sched_common::{OWN, check_invariants, run_uniform};

fn costs() -> impl Strategy<Value = [f64; 3]> {
    (0.25f64..3.0, 0.25f64..3.0, 0.25f64..3.0).prop_map(|(f, b, w)| [f, b, w])
}

fn check_all(p: u32, m: u32, v: u32, fbw: [f64; 3], comm: f64, must: &[ScheduleKind]) {
    for &kind in ScheduleKind::ALL {
        let Some((s, sim)) = run_uniform(kind, p, m, v, fbw, comm) else {
            assert!(
                !must.contains(&kind),
                "{kind} did not generate for p={p} m={m} v={v}"
            );
            continue;
        };
        check_invariants(&s, &sim, fbw, comm);
        assert_eq!(s.v, kind.chunks(v), "{kind}: chunks");
        if !kind.splits_backward() {
            let fused = s
                .devices
                .iter()
                .flatten()
                .all(|op| matches!(op.kind, OpKind::F | OpKind::BW));
            assert!(
                fused,
                "{kind}: a fused-backward schedule emits only F and BW"
            );
        }
        let peaks = s.peak_in_flight();
        let simulated: Vec<u32> = sim.devices.iter().map(|d| d.peak_in_flight).collect();
        if !s.offloaded.iter().flatten().any(|&x| x) {
            assert_eq!(peaks, simulated, "{kind}: in-flight order vs simulation");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Sizes every owned schedule supports (m a multiple of 2p).
    #[test]
    fn every_schedule_with_friendly_sizes(
        p in 1u32..=8, k in 1u32..=3, v in 2u32..=4, fbw in costs(), comm in 0.0f64..1.0,
    ) {
        let m = 2 * p * k;
        check_all(p, m, v, fbw, comm, &OWN);
    }

    /// Arbitrary sizes: the unconditional schedules must generate; others may refuse.
    #[test]
    fn every_schedule_with_any_sizes(
        p in 1u32..=9, m in 1u32..=24, v in 2u32..=3, fbw in costs(), comm in 0.0f64..1.0,
    ) {
        let must = [ScheduleKind::Gpipe, ScheduleKind::OneFOneB, ScheduleKind::ZbH1];
        check_all(p, m, v, fbw, comm, &must);
    }
}
