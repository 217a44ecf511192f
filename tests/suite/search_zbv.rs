//! ZB-V (zbv.py's greedy): completeness, dependency-consistent order, memory limit, closed
//! form of docs/model.md, unequal costs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::{ScheduleError, ScheduleKind, generate};
use proptest::prelude::*;
use search_util::{assert_complete, peaks, time, uniform, varied};

#[test]
fn zb_v_closed_form_equal_costs() {
    // Per-chunk costs F = B = W = 1: the last device starts after (p - 1) F and then runs
    // its 2m micro-batch-chunks without a bubble: (p - 1) F + 2 m (F + B + W).
    for p in 2..=8u32 {
        for m in [2 * p - 1, 2 * p, 3 * p + 1, 4 * p] {
            let input = uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
            let s = generate(ScheduleKind::ZbV, &input).unwrap();
            assert_complete(&s, true);
            let t = time(&s, &input);
            let want = (p - 1) as f64 + 6.0 * m as f64;
            assert_eq!(t.makespan, want, "p={p} m={m}");
            assert!(peaks(&s).iter().all(|&x| x <= 2 * p as i64), "p={p} m={m}");
        }
    }
}

#[test]
fn one_device_is_unsupported() {
    let err = generate(ScheduleKind::ZbV, &uniform(1, 4, 2, 1.0, 1.0, 1.0, 0.0)).unwrap_err();
    assert!(err.to_string().contains("p >= 2"), "{err}");
}

#[test]
fn too_small_a_limit_does_not_fit() {
    let mut input = uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
    input.mem_limit = Some(1.0);
    assert!(matches!(
        generate(ScheduleKind::ZbV, &input),
        Err(ScheduleError::NoFit { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn zb_v_invariants_unequal_costs(
        p in 2u32..8,
        m in 1u32..30,
        f in 0.2f64..3.0,
        b in 0.2f64..3.0,
        w in 0.2f64..3.0,
        comm in prop_oneof![Just(0.0), 0.0f64..1.0],
        extra in 0u32..8,
    ) {
        let mut input = uniform(p, m, 2, f, b, w, comm);
        let limit = 2 * p + extra;
        input.mem_limit = Some(limit as f64);
        let s = generate(ScheduleKind::ZbV, &input).unwrap();
        assert_complete(&s, true);
        time(&s, &input);
        prop_assert!(peaks(&s).iter().all(|&x| x <= limit as i64));
    }

    #[test]
    fn zb_v_per_device_costs(
        p in 2u32..7,
        m in 1u32..24,
        costs in prop::collection::vec((0.2f64..3.0, 0.2f64..3.0, 0.2f64..3.0), 1..4),
    ) {
        let input = varied(p, m, 2, &costs, 0.0);
        let s = generate(ScheduleKind::ZbV, &input).unwrap();
        assert_complete(&s, true);
        time(&s, &input);
        prop_assert!(peaks(&s).iter().all(|&x| x <= 2 * p as i64));
    }
}
