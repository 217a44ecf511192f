//! V-Half and V-Min (zbv_greedy.py): completeness, dependency-consistent order, peak
//! activation closed forms, unequal costs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::{ScheduleError, ScheduleKind, generate, simulate};
use proptest::prelude::*;
use search_util::{assert_complete, peaks, sim_costs, time, uniform, varied};

/// Peak activation in device-stage units (two chunk-activations), rounded up.
fn peak_device_stages(kind: ScheduleKind, p: u32, m: u32) -> i64 {
    let input = uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
    let s = generate(kind, &input).unwrap();
    assert_complete(&s, true);
    time(&s, &input);
    let max = peaks(&s).into_iter().max().unwrap();
    // The simulator's memory curve agrees with the order's running count.
    let sim = simulate(&s, &sim_costs(&s, &input)).unwrap();
    let sim_max = sim.devices.iter().map(|d| d.peak_in_flight).max().unwrap();
    assert_eq!(i64::from(sim_max), max, "{kind} p={p} m={m}");
    (max + 1) / 2
}

#[test]
fn v_half_peak_is_p_plus_2_div_2() {
    for p in 2..=16u32 {
        for m in [2 * p, 3 * p + 1, 4 * p] {
            let want = (p as i64 + 2) / 2;
            assert_eq!(
                peak_device_stages(ScheduleKind::VHalf, p, m),
                want,
                "p={p} m={m}"
            );
        }
    }
}

#[test]
fn v_min_peak_is_p_plus_4_div_3() {
    for p in 2..=16u32 {
        for m in [2 * p, 3 * p + 1, 4 * p] {
            let want = (p as i64 + 4) / 3;
            assert_eq!(
                peak_device_stages(ScheduleKind::VMin, p, m),
                want,
                "p={p} m={m}"
            );
        }
    }
}

#[test]
fn one_device_is_unsupported() {
    let input = uniform(1, 4, 2, 1.0, 1.0, 1.0, 0.0);
    for kind in [ScheduleKind::VHalf, ScheduleKind::VMin] {
        let err = generate(kind, &input).unwrap_err();
        assert!(matches!(err, ScheduleError::Unsupported { .. }));
        assert!(err.to_string().contains("p >= 2"), "{err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn v_greedy_invariants_unequal_costs(
        p in 2u32..10,
        m in 1u32..40,
        costs in prop::collection::vec((0.2f64..3.0, 0.2f64..3.0, 0.2f64..3.0), 1..4),
        comm in prop_oneof![Just(0.0), 0.0f64..1.0],
        half in any::<bool>(),
    ) {
        let kind = if half { ScheduleKind::VHalf } else { ScheduleKind::VMin };
        let input = varied(p, m, 2, &costs, comm);
        let s = generate(kind, &input).unwrap();
        assert_complete(&s, true);
        time(&s, &input);
        // The order does not depend on the costs (the source uses unit costs).
        let unit = generate(kind, &uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0)).unwrap();
        prop_assert_eq!(&s.devices, &unit.devices);
    }
}
