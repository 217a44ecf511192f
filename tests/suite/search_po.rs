//! PipeOffload's `po-h` and `po-f` against the source: the per-device peaks below come from
//! running the zero-bubble repository's own scheduler (`group_interleaved_1f1b.py` with
//! `offloading.py`'s `add_offload`, unit costs, group ceil(p/2), PO-H offloading
//! `max(1, v/2)` chunks, PO-F all, `--offload-time` r with one copy `3 r`) outside this
//! repository and reading its `get_peak_memory` before and after the pass. Also the
//! invariants every schedule keeps, the pair's interleaving and the cases the source
//! refuses.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::ScheduleKind::{PoF, PoH};
use pipescope::{
    Lane, Schedule, ScheduleInput, ScheduleKind, SimCosts, SimError, Simulation, SpanKind,
    generate, simulate,
};
use search_util::{assert_complete, peaks, time, uniform};

/// (p, v, m, kind, one copy, peak per device after the pass, before it).
type Golden = (
    u32,
    u32,
    u32,
    ScheduleKind,
    f64,
    &'static [u32],
    &'static [u32],
);

const GOLDEN: [Golden; 36] = [
    (4, 2, 8, PoH, 0.75, &[4, 3, 3, 3], &[6, 5, 4, 3]),
    (4, 2, 8, PoH, 1.0, &[4, 3, 3, 2], &[6, 5, 4, 3]),
    (4, 2, 8, PoF, 0.75, &[3, 3, 3, 3], &[6, 5, 4, 3]),
    (4, 2, 8, PoF, 1.0, &[3, 3, 3, 2], &[6, 5, 4, 3]),
    (4, 2, 16, PoH, 0.75, &[4, 3, 3, 3], &[6, 5, 4, 3]),
    (4, 2, 16, PoH, 1.0, &[4, 3, 3, 2], &[6, 5, 4, 3]),
    (4, 2, 16, PoF, 0.75, &[3, 3, 3, 3], &[6, 5, 4, 3]),
    (4, 2, 16, PoF, 1.0, &[3, 3, 3, 2], &[6, 5, 4, 3]),
    (
        6,
        2,
        12,
        PoH,
        0.75,
        &[6, 5, 4, 3, 3, 3],
        &[9, 8, 7, 6, 5, 4],
    ),
    (6, 2, 12, PoH, 1.0, &[5, 5, 4, 3, 3, 3], &[9, 8, 7, 6, 5, 4]),
    (
        6,
        2,
        12,
        PoF,
        0.75,
        &[3, 3, 3, 3, 3, 3],
        &[9, 8, 7, 6, 5, 4],
    ),
    (6, 2, 12, PoF, 1.0, &[3, 3, 3, 3, 3, 3], &[9, 8, 7, 6, 5, 4]),
    (
        8,
        2,
        16,
        PoH,
        0.75,
        &[7, 7, 6, 5, 4, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        16,
        PoH,
        1.0,
        &[7, 6, 6, 5, 4, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        16,
        PoF,
        0.75,
        &[4, 3, 3, 3, 3, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        16,
        PoF,
        1.0,
        &[3, 3, 3, 3, 3, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        32,
        PoH,
        0.75,
        &[7, 7, 6, 5, 4, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        32,
        PoH,
        1.0,
        &[7, 6, 6, 5, 4, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        32,
        PoF,
        0.75,
        &[4, 3, 3, 3, 3, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        2,
        32,
        PoF,
        1.0,
        &[3, 3, 3, 3, 3, 3, 3, 3],
        &[12, 11, 10, 9, 8, 7, 6, 5],
    ),
    (
        8,
        3,
        24,
        PoH,
        0.75,
        &[11, 11, 10, 9, 8, 7, 6, 5],
        &[16, 15, 14, 13, 12, 11, 10, 9],
    ),
    (
        8,
        3,
        24,
        PoH,
        1.0,
        &[11, 10, 10, 9, 8, 7, 6, 5],
        &[16, 15, 14, 13, 12, 11, 10, 9],
    ),
    (
        8,
        3,
        24,
        PoF,
        0.75,
        &[3, 3, 3, 3, 3, 3, 3, 3],
        &[16, 15, 14, 13, 12, 11, 10, 9],
    ),
    (
        8,
        3,
        24,
        PoF,
        1.0,
        &[3, 3, 3, 3, 3, 3, 3, 3],
        &[16, 15, 14, 13, 12, 11, 10, 9],
    ),
    (
        8,
        4,
        32,
        PoH,
        0.75,
        &[11, 11, 10, 9, 8, 7, 6, 5],
        &[20, 19, 18, 17, 16, 15, 14, 13],
    ),
    (
        8,
        4,
        32,
        PoH,
        1.0,
        &[11, 10, 10, 9, 8, 7, 6, 5],
        &[20, 19, 18, 17, 16, 15, 14, 13],
    ),
    (
        8,
        4,
        32,
        PoF,
        0.75,
        &[4, 4, 3, 3, 3, 3, 3, 3],
        &[20, 19, 18, 17, 16, 15, 14, 13],
    ),
    (
        8,
        4,
        32,
        PoF,
        1.0,
        &[3, 3, 3, 3, 3, 3, 3, 3],
        &[20, 19, 18, 17, 16, 15, 14, 13],
    ),
    (4, 3, 12, PoH, 0.75, &[6, 5, 4, 3], &[8, 7, 6, 5]),
    (4, 3, 12, PoH, 1.0, &[6, 5, 4, 3], &[8, 7, 6, 5]),
    (4, 3, 12, PoF, 0.75, &[3, 3, 3, 3], &[8, 7, 6, 5]),
    (4, 3, 12, PoF, 1.0, &[3, 3, 3, 3], &[8, 7, 6, 5]),
    (4, 4, 16, PoH, 0.75, &[6, 5, 4, 3], &[10, 9, 8, 7]),
    (4, 4, 16, PoH, 1.0, &[6, 5, 4, 3], &[10, 9, 8, 7]),
    (4, 4, 16, PoF, 0.75, &[3, 3, 3, 3], &[10, 9, 8, 7]),
    (4, 4, 16, PoF, 1.0, &[3, 3, 3, 3], &[10, 9, 8, 7]),
];

fn run(
    kind: ScheduleKind,
    p: u32,
    v: u32,
    m: u32,
    copy: f64,
    group: Option<u32>,
) -> Result<Simulation, SimError> {
    let mut input = uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
    input.group_size = group;
    let s = generate(kind, &input).unwrap();
    assert_complete(&s, true);
    time(&s, &input);
    simulate(&s, &SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, copy))
}

/// Peak chunk-activations on each device (resident ones only: copies that reached the host
/// do not count).
fn resident_peaks(sim: &Simulation) -> Vec<u32> {
    sim.devices
        .iter()
        .map(|d| d.peak_activation_bytes as u32)
        .collect()
}

#[test]
fn peaks_match_the_source_before_and_after_its_offload_pass() {
    for (p, v, m, kind, copy, after, before) in GOLDEN {
        let tag = format!("{kind} p={p} v={v} m={m} copy={copy}");
        let s = generate(kind, &uniform(p, m, v, 1.0, 1.0, 1.0, 0.0)).unwrap();
        let order: Vec<u32> = peaks(&s).iter().map(|&x| x as u32).collect();
        assert_eq!(order, before, "{tag}: before the pass");
        let sim = run(kind, p, v, m, copy, None).unwrap();
        assert_eq!(resident_peaks(&sim), after, "{tag}: after the pass");
    }
}

#[test]
fn copies_never_delay_compute() {
    for (p, v, m, kind, copy, _, _) in GOLDEN {
        let with = run(kind, p, v, m, copy, None).unwrap();
        let mut input = uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
        input.group_size = Some(p.div_ceil(2));
        let gis = generate(ScheduleKind::Gis, &input).unwrap();
        let plain = simulate(&gis, &SimCosts::abstract_run(&gis, 1.0, 1.0, 1.0, 0.0, 0.0)).unwrap();
        assert_eq!(with.makespan, plain.makespan, "{kind} p={p} v={v} m={m}");
    }
}

/// One copy stream per device (its copies never overlap), and within a pair (2k, 2k+1) no
/// two copies of the same direction overlap: while one device sends, its partner reloads.
#[test]
fn one_stream_per_device_and_the_pair_takes_turns_on_each_direction() {
    for (p, v, m, kind, copy, _, _) in GOLDEN {
        let sim = run(kind, p, v, m, copy, None).unwrap();
        let copies = |d: u32, kind: Option<SpanKind>| -> Vec<(f64, f64)> {
            let mut c: Vec<(f64, f64)> = sim
                .timeline
                .spans
                .iter()
                .filter(|s| {
                    s.lane == Lane::Copy && s.device == d && kind.is_none_or(|k| s.kind == k)
                })
                .map(|s| (s.start, s.end))
                .collect();
            c.sort_by(|a, b| a.0.total_cmp(&b.0));
            c
        };
        let disjoint = |mut a: Vec<(f64, f64)>| {
            a.sort_by(|x, y| x.0.total_cmp(&y.0));
            a.windows(2).all(|w| w[0].1 <= w[1].0 + 1e-12)
        };
        for d in 0..p {
            assert!(
                !copies(d, None).is_empty(),
                "{kind} p={p} device {d} copies nothing"
            );
            assert!(
                disjoint(copies(d, None)),
                "{kind} p={p} device {d}: one stream"
            );
        }
        for first in (0..p).step_by(2) {
            for dir in [SpanKind::D2H, SpanKind::H2D] {
                let mut both = copies(first, Some(dir));
                both.extend(copies(first + 1, Some(dir)));
                assert!(
                    disjoint(both),
                    "{kind} p={p} pair {first}: {dir:?} overlaps"
                );
            }
        }
    }
}

#[test]
fn memory_returns_to_nothing_and_every_copy_comes_back() {
    for (p, v, m, kind, copy, _, _) in GOLDEN {
        let sim = run(kind, p, v, m, copy, None).unwrap();
        for curve in &sim.memory {
            assert_eq!(curve.points.last().map(|x| x.1), Some(0), "{kind} p={p}");
            assert_eq!(
                curve.host_points.last().map_or(0, |x| x.1),
                0,
                "{kind} p={p}"
            );
        }
        let count = |k: SpanKind| sim.timeline.spans.iter().filter(|s| s.kind == k).count();
        assert_eq!(count(SpanKind::D2H), count(SpanKind::H2D));
    }
}

/// The source refuses both (AssertionError "Unable to schedule offload"): PO-F with the full
/// group p (lifespans too long for one stream at r = 0.25), and PO-H with r = 1 (a round
/// trip of 6 against a micro-batch-chunk's F + B + W of 3, k = 2).
#[test]
fn what_the_source_cannot_schedule_is_refused() {
    let e = run(PoF, 8, 2, 32, 0.75, Some(8)).unwrap_err();
    assert!(matches!(e, SimError::OffloadUnschedulable { .. }), "{e}");
    let e = run(PoH, 8, 2, 32, 3.0, None).unwrap_err();
    assert!(e.to_string().contains("offload cannot be scheduled"), "{e}");
}

/// What pipescope refuses before the copy pass: an odd p (the copies interleave within
/// pairs of devices), and a chunk count to offload (they choose by lifespan), named by its
/// flag and field.
#[test]
fn odd_p_and_a_chunk_count_are_refused() {
    for kind in [PoH, PoF] {
        let e = generate(kind, &uniform(5, 10, 2, 1.0, 1.0, 1.0, 0.0)).unwrap_err();
        assert!(e.to_string().contains("an even p"), "{e}");
        let mut input = uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        input.offload_chunks = Some(1);
        let e = generate(kind, &input).unwrap_err().to_string();
        assert!(
            e.contains("--offload-chunks") && e.contains("plan.offload_chunks"),
            "{e}"
        );
    }
}

/// Selective offload removes more than its share: PO-H offloads half the stages (chunk 0 of
/// every device at v = 2) and, counting what it leaves resident, keeps a quarter of GIS's
/// peak (4 of 16 at p = 8) and a sixth of interleaved 1F1B's (4 of 23); offloading half the
/// stages of GIS with the full group p keeps half of it (8 of 16, linear).
#[test]
fn selective_offload_of_the_longest_lived_half_is_better_than_linear() {
    let (p, m, v) = (8u32, 32u32, 2u32);
    let input = uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
    let po_h = generate(PoH, &input).unwrap();
    let resident = |s: &Schedule| {
        let weights: Vec<Vec<u64>> = s
            .offloaded
            .iter()
            .map(|row| row.iter().map(|&off| u64::from(!off)).collect())
            .collect();
        s.peak_weighted_in_flight(&weights)
            .into_iter()
            .max()
            .unwrap()
    };
    let all = |s: &Schedule| peaks(s).into_iter().max().unwrap() as u64;
    let gis = generate(ScheduleKind::Gis, &input).unwrap();
    let interleaved = generate(ScheduleKind::Interleaved, &input).unwrap();
    assert_eq!((all(&gis), all(&interleaved)), (16, 23));
    assert_eq!(resident(&po_h), 4);
    let mut gis_off = input.clone();
    gis_off.offload_chunks = Some(1);
    let gis_off = generate(ScheduleKind::GisOffload, &gis_off).unwrap();
    assert_eq!(resident(&gis_off), 8);
}

/// PipeOffload's "uniform repeating vs interleaving: 4 vs 3 activations", in units of one
/// micro-batch's activations of a whole device (two chunk-activations at v = 2; 1F1B's
/// first device holds p of them): with the copies really placed (one copy half a forward),
/// PO-H on interleaving's full group p holds 8 of them at the peak and leaves 4; on the
/// uniform repeating block (GIS-H) it holds 6 and leaves 3, about a quarter of interleaved
/// 1F1B's 11.5.
#[test]
fn uniform_repeating_leaves_three_activations_where_interleaving_leaves_four() {
    let (p, v, m) = (8u32, 2u32, 32u32);
    let input = uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
    let device0 = |group: Option<u32>| {
        let mut input = input.clone();
        input.group_size = group;
        let gis = generate(ScheduleKind::Gis, &input).unwrap();
        let before = peaks(&gis)[0];
        let after = resident_peaks(&run(PoH, p, v, m, 0.5, group).unwrap())[0];
        (before, after)
    };
    assert_eq!(device0(Some(p)), (16, 8));
    assert_eq!(device0(Some(p / 2)), (12, 6));
    let interleaved = generate(ScheduleKind::Interleaved, &input).unwrap();
    assert_eq!(peaks(&interleaved)[0], 23);
}

#[test]
fn the_lesson_sizes_and_odd_sizes() {
    // Every even p from 2 with m from 1: generated, complete, timed; the paired pass at one
    // forward's copy either places the copies or refuses them (a reload too early, no copy
    // fitting at all, or po-f fitting only po-h's chunks), never anything else.
    for p in (2u32..=8).step_by(2) {
        for m in 1u32..=12 {
            for kind in [PoH, PoF] {
                let input: ScheduleInput = uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
                let s = generate(kind, &input).unwrap();
                assert_complete(&s, true);
                time(&s, &input);
                match simulate(&s, &SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, 1.0)) {
                    Ok(_)
                    | Err(
                        SimError::OffloadUnschedulable { .. }
                        | SimError::NothingOffloaded { .. }
                        | SimError::FullOffloadUnplaced { .. },
                    ) => {}
                    Err(e) => panic!("{kind} p={p} m={m}: {e}"),
                }
            }
        }
    }
}
