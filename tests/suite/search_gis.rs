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

/// With equal costs the smallest useful group is ceil(p/2) (PipeOffload's GIS-H). From it
/// up to p (GIS), device d holds at its peak `g (v - 1) + p - d` micro-batch-chunks once
/// m >= p: each group adds v - 1 chunks' worth of in-flight micro-batches, and the
/// warm-up's p - d forwards of chunk 0 come on top (GIS, g = p: p v - d).
#[test]
fn group_memory_closed_form() {
    for p in 2..=10u32 {
        for v in 2..=5u32 {
            for g in p.div_ceil(2)..=p {
                for m in [p, 2 * p + 1, 3 * p] {
                    let s = generate(ScheduleKind::Gis, &gis_input(p, m, v, Some(g))).unwrap();
                    let want: Vec<i64> = (0..p).map(|d| i64::from(g * (v - 1) + p - d)).collect();
                    assert_eq!(peaks(&s), want, "p={p} v={v} g={g} m={m}");
                }
            }
        }
    }
}

/// Peak in-flight micro-batch-chunks per device, counted from the building block's slots
/// written out whole (PipeOffload's group-interleaved block: with `G = min_k g`,
/// `F(c, j)` at `3 G c + 3 j + d + 3 g e(c)` with `e(c) = c / (v / gcd(v, min_k))`, the
/// backward of chunk `v - 1 - c` and its W `3 G c + 3 j + 3 g e(c)` (and one) after device
/// d's first backward slot, every micro-batch `j + g r` moved `3 g v r` slots on).
fn block_peaks(p: u32, m: u32, v: u32, g: u32, min_group: u32) -> Vec<i64> {
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let min_k = min_group.div_ceil(g);
    let e = |c: u32| c / (v / gcd(v, min_k));
    let big_g = min_k * g;
    (0..p)
        .map(|d| {
            let last_f = 3 * big_g * (v - 1) + d + 3 * g * e(v - 1);
            let first_b = last_f + 3 * (p - 1 - d) + 1;
            let mut events: Vec<(u32, i64)> = Vec::new();
            for mb in 0..m {
                let (j, shift) = (mb % g, 3 * g * v * (mb / g));
                for c in 0..v {
                    events.push((3 * big_g * c + 3 * j + d + 3 * g * e(c) + shift, 1));
                    let w = first_b + 3 * big_g * c + 3 * j + 3 * g * e(c) + 1;
                    events.push((w + shift, -1));
                }
            }
            events.sort_unstable();
            let (mut live, mut peak) = (0, 0);
            for (_, delta) in events {
                live += delta;
                peak = i64::max(peak, live);
            }
            peak
        })
        .collect()
}

/// A group smaller than ceil(p/2) is kept as the source keeps it (each chunk's forwards
/// spaced min_k = ceil(min_group / g) groups apart), not raised to ceil(p/2): its order
/// differs, its memory is the block's, and it never holds less than the smallest useful
/// group (it buys no memory; the source uses it with recomputation).
#[test]
fn groups_below_half_are_kept_with_the_blocks_memory() {
    let mut checked = 0;
    for p in 3..=9u32 {
        let min_group = p.div_ceil(2);
        for v in 2..=4u32 {
            for m in [1, 2, p - 1, p, 2 * p + 1, 3 * p] {
                let smallest =
                    generate(ScheduleKind::Gis, &gis_input(p, m, v, Some(min_group))).unwrap();
                for g in 1..min_group {
                    let input = gis_input(p, m, v, Some(g));
                    let s = generate(ScheduleKind::Gis, &input).unwrap();
                    assert_complete(&s, true);
                    time(&s, &input);
                    let got = peaks(&s);
                    assert_eq!(got, block_peaks(p, m, v, g, min_group), "p={p} v={v} g={g}");
                    if m >= p {
                        assert_ne!(s.devices, smallest.devices, "p={p} v={v} g={g} m={m}");
                        let floor = peaks(&smallest);
                        assert!(got.iter().zip(&floor).all(|(a, b)| a >= b), "p={p} v={v}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 200, "{checked}");
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
