//! V-ZB (v_auto_schedule.py's building-block search): completeness, dependency-consistent
//! order, memory limit, the zero-bubble case at the default limit, and never slower than
//! V-Half.

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

/// Costs drawn from a fixed xorshift sequence: equal costs, then transfer times, then
/// other equal F/B/W, then per-device and per-chunk spread (the uneven costs that make the
/// source's winner end later than V-Half's order at fewer than 2p micro-batches).
fn drawn_inputs(p: u32, m: u32, state: &mut u64) -> Vec<pipescope::ScheduleInput> {
    let mut draw = |lo: f64, hi: f64| {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        lo + (hi - lo) * (*state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = vec![uniform(p, m, 2, 1.0, 1.1, 0.9, 0.0)];
    for round in 1..6 {
        let comm = draw(0.0, 0.5);
        let mut input = if round >= 2 {
            let (f, b, w) = (draw(0.3, 3.0), draw(0.3, 3.0), draw(0.3, 3.0));
            uniform(p, m, 2, f, b, w, comm)
        } else {
            uniform(p, m, 2, 1.0, 1.1, 0.9, comm)
        };
        if round >= 4 {
            for grid in [&mut input.f, &mut input.b, &mut input.w] {
                for cost in grid.iter_mut().flatten() {
                    *cost *= draw(0.7, 1.4);
                }
            }
        }
        out.push(input);
    }
    out
}

/// On a grid of sizes and costs, V-ZB's makespan is never above V-Half's (its order is
/// taken where the search's winner ends later), and the grid reaches cases where it is.
/// There, a limit below V-Half's peak keeps V-Half's order out.
#[test]
fn never_slower_than_v_half() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let (mut compared, mut half_taken) = (0, 0);
    for p in 2..=8u32 {
        for m in [1, 2, 3, p / 2 + 1, p + 1, 2 * p - 1, 2 * p] {
            for mut input in drawn_inputs(p, m, &mut state) {
                let half = generate(ScheduleKind::VHalf, &input).unwrap();
                let zb = generate(ScheduleKind::VZb, &input).unwrap();
                assert_eq!(zb.kind, ScheduleKind::VZb);
                assert_complete(&zb, true);
                let (th, tz) = (time(&half, &input).makespan, time(&zb, &input).makespan);
                assert!(
                    tz <= th * (1.0 + 1e-12),
                    "p={p} m={m}: v-zb {tz} > v-half {th}"
                );
                assert!(peaks(&zb).iter().all(|&x| x <= 2 * p as i64));
                compared += 1;
                if zb.devices != half.devices {
                    continue;
                }
                half_taken += 1;
                let half_peak = *peaks(&half).iter().max().unwrap();
                input.mem_limit = Some(half_peak as f64 - 0.5);
                match generate(ScheduleKind::VZb, &input) {
                    Ok(zb) => assert!(peaks(&zb).iter().all(|&x| x < half_peak)),
                    Err(e) => assert!(matches!(e, ScheduleError::NoFit { .. }), "{e}"),
                }
            }
        }
    }
    assert!(compared >= 250, "{compared}");
    assert!(half_taken >= 3, "V-Half's order taken {half_taken} times");
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
