//! GIS and GIS-offload (group_interleaved_1f1b.py + offloading.py): completeness,
//! dependency-consistent order, group size and memory, offload marks and requirements.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::{Placement, ScheduleError, ScheduleKind, generate};
use proptest::prelude::*;
use search_util::{assert_complete, peaks, time, uniform, varied};

fn gis_input(p: u32, m: u32, v: u32, g: Option<u32>) -> pipescope::ScheduleInput {
    let mut input = uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
    input.group_size = g;
    input
}

#[test]
fn smaller_groups_hold_less() {
    for p in [4u32, 6, 8] {
        for v in [2u32, 3] {
            let m = 4 * p;
            let full = generate(ScheduleKind::Gis, &gis_input(p, m, v, None)).unwrap();
            let half =
                generate(ScheduleKind::Gis, &gis_input(p, m, v, Some(p.div_ceil(2)))).unwrap();
            assert_eq!(full.placement, Placement::Looped);
            let (pf, ph) = (peaks(&full), peaks(&half));
            assert!(
                pf.iter().zip(&ph).all(|(a, b)| b <= a),
                "p={p} v={v}: {pf:?} vs {ph:?}"
            );
            assert!(ph[0] < pf[0], "p={p} v={v}: {pf:?} vs {ph:?}");
        }
    }
}

#[test]
fn offload_marks_the_first_chunks() {
    for k in 1..=3u32 {
        let mut input = gis_input(4, 8, 3, None);
        input.offload_chunks = Some(k);
        let s = generate(ScheduleKind::GisOffload, &input).unwrap();
        let plain = generate(ScheduleKind::Gis, &input).unwrap();
        assert_eq!(s.devices, plain.devices);
        time(&s, &input);
        for row in &s.offloaded {
            let want: Vec<bool> = (0..3).map(|c| c < k).collect();
            assert_eq!(row, &want);
        }
        assert!(plain.offloaded.iter().flatten().all(|&x| !x));
    }
}

#[test]
fn offload_requirements() {
    let err = generate(ScheduleKind::GisOffload, &gis_input(3, 6, 2, None)).unwrap_err();
    assert!(matches!(err, ScheduleError::Unsupported { .. }));
    assert!(err.to_string().contains("even p"), "{err}");
    let mut input = gis_input(4, 8, 2, None);
    input.offload_chunks = Some(3);
    let err = generate(ScheduleKind::GisOffload, &input).unwrap_err();
    assert!(err.to_string().contains("offload_chunks"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn gis_invariants(
        p in 1u32..9,
        m in 1u32..30,
        v in 1u32..5,
        g in prop::option::of(1u32..10),
        costs in prop::collection::vec((0.2f64..3.0, 0.2f64..3.0, 0.2f64..3.0), 1..4),
        comm in prop_oneof![Just(0.0), 0.0f64..1.0],
    ) {
        let mut input = varied(p, m, v, &costs, comm);
        input.group_size = g;
        let s = generate(ScheduleKind::Gis, &input).unwrap();
        prop_assert_eq!(s.v, v.max(2));
        assert_complete(&s, true);
        time(&s, &input);
    }
}
