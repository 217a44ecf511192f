//! ZB-H2 and ZB-auto (zero-bubble heuristic of zb.py): completeness, dependency-consistent
//! order, memory limits, and the closed form of docs/model.md.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::{ScheduleError, ScheduleKind, generate};
use proptest::prelude::*;
use search_util::{assert_complete, peaks, time, uniform, varied};

#[test]
fn zb_h2_closed_form_equal_costs() {
    // ZB-H2 down to the last device's start-up: (p - 1) F + m (F + B + W), m >= 2p - 1.
    for p in 2..=8u32 {
        for m in [2 * p - 1, 2 * p, 3 * p + 1, 4 * p] {
            let input = uniform(p, m, 1, 1.0, 1.0, 1.0, 0.0);
            let s = generate(ScheduleKind::ZbH2, &input).unwrap();
            assert_complete(&s, true);
            let t = time(&s, &input);
            let want = (p - 1) as f64 + 3.0 * m as f64;
            assert_eq!(t.makespan, want, "p={p} m={m}");
            assert!(peaks(&s).iter().all(|&x| x <= 2 * p as i64), "p={p} m={m}");
        }
    }
}

#[test]
fn zb_auto_respects_default_limit_p() {
    for p in 2..=8u32 {
        for m in [1, p, 3 * p] {
            let input = uniform(p, m, 1, 1.0, 1.1, 0.9, 0.0);
            let s = generate(ScheduleKind::ZbAuto, &input).unwrap();
            assert_complete(&s, true);
            time(&s, &input);
            assert!(peaks(&s).iter().all(|&x| x <= p as i64), "p={p} m={m}");
        }
    }
}

#[test]
fn zb_auto_rejects_a_limit_below_one() {
    let mut input = uniform(4, 8, 1, 1.0, 1.0, 1.0, 0.0);
    input.mem_limit = Some(0.5);
    assert!(matches!(
        generate(ScheduleKind::ZbAuto, &input),
        Err(ScheduleError::NoFit { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn zb_invariants_unequal_costs(
        p in 1u32..7,
        m in 1u32..24,
        costs in prop::collection::vec((0.2f64..3.0, 0.2f64..3.0, 0.2f64..3.0), 1..4),
        comm in prop_oneof![Just(0.0), 0.0f64..1.0],
        limit in 1u32..16,
        h2 in any::<bool>(),
    ) {
        let mut input = varied(p, m, 1, &costs, comm);
        let kind = if h2 { ScheduleKind::ZbH2 } else { ScheduleKind::ZbAuto };
        input.mem_limit = Some(limit as f64);
        let s = generate(kind, &input).unwrap();
        assert_complete(&s, true);
        time(&s, &input);
        let cap = if h2 { 2 * p as i64 } else { limit as i64 };
        prop_assert!(peaks(&s).iter().all(|&x| x <= cap.max(1)));
    }
}
