//! V-ZB (v_auto_schedule.py's building-block search): completeness, dependency-consistent
//! order, memory limit, and the zero-bubble case at the default limit.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::{ScheduleError, ScheduleKind, generate};
use proptest::prelude::*;
use search_util::{assert_complete, peaks, time, uniform, varied};

#[test]
fn zero_bubble_at_the_default_limit() {
    // At 2p chunk-activations V-ZB runs every device without a bubble once m >= 2p: the
    // last device starts after (p - 1) F and then works 2 m (F + B + W).
    for p in 2..=6u32 {
        for m in [2 * p, 3 * p] {
            let input = uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
            let s = generate(ScheduleKind::VZb, &input).unwrap();
            assert_complete(&s, true);
            let t = time(&s, &input);
            assert_eq!(t.makespan, (p - 1) as f64 + 6.0 * m as f64, "p={p} m={m}");
            assert!(peaks(&s).iter().all(|&x| x <= 2 * p as i64));
        }
    }
}

#[test]
fn lower_limits_are_respected_or_do_not_fit() {
    let mut fits = 0;
    for p in 2..=5u32 {
        for limit in p..=2 * p {
            let mut input = uniform(p, 3 * p, 2, 1.0, 1.0, 1.0, 0.0);
            input.mem_limit = Some(limit as f64);
            match generate(ScheduleKind::VZb, &input) {
                Ok(s) => {
                    assert_complete(&s, true);
                    time(&s, &input);
                    assert!(
                        peaks(&s).iter().all(|&x| x <= limit as i64),
                        "p={p} {limit}"
                    );
                    fits += usize::from(limit < 2 * p);
                }
                Err(e) => assert!(matches!(e, ScheduleError::NoFit { .. }), "{e}"),
            }
        }
    }
    // Memory below 2p trades for bubbles (p=4 fits down to 4 chunk-activations).
    assert!(fits >= 8, "only {fits} limits below 2p fit");
    let mut input = uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
    input.mem_limit = Some(1.0);
    let err = generate(ScheduleKind::VZb, &input).unwrap_err();
    assert!(matches!(err, ScheduleError::NoFit { .. }), "{err}");
}

#[test]
fn one_device_is_unsupported() {
    let err = generate(ScheduleKind::VZb, &uniform(1, 4, 2, 1.0, 1.0, 1.0, 0.0)).unwrap_err();
    assert!(err.to_string().contains("p >= 2"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn v_zb_invariants_unequal_costs(
        p in 2u32..6,
        m in 1u32..14,
        costs in prop::collection::vec((0.2f64..3.0, 0.2f64..3.0, 0.2f64..3.0), 1..4),
        comm in prop_oneof![Just(0.0), 0.0f64..1.0],
        extra in 0u32..3,
    ) {
        let mut input = varied(p, m, 2, &costs, comm);
        let limit = 2 * p + extra;
        input.mem_limit = Some(limit as f64);
        let s = generate(ScheduleKind::VZb, &input).unwrap();
        assert_complete(&s, true);
        time(&s, &input);
        prop_assert!(peaks(&s).iter().all(|&x| x <= limit as i64));
    }
}
