//! Orders checked against the source: each expected order below was produced by running a
//! line-by-line Python transliteration of the zero-bubble repo's generator (zb.py,
//! zbv.py, zbv_greedy.py, v_auto_schedule.py, group_interleaved_1f1b.py) outside this
//! repository (the GIS orders with groups below the smallest useful one by running
//! group_interleaved_1f1b.py itself). Notation per device: `F`/`f` forward of chunk 0/1,
//! `B`/`b` input-gradient backward of chunk 1/0, `W`/`w` weight-gradient of chunk 1/0, then
//! the micro-batch; with one chunk per device plain `F`, `B`, `W`; for GIS `KIND mb.chunk`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use crate::search_util;

use pipescope::{OpKind, Placement, Schedule, ScheduleKind, generate};
use search_util::{assert_complete, time, uniform};

fn notation(s: &Schedule) -> Vec<String> {
    s.devices
        .iter()
        .map(|ops| {
            ops.iter()
                .map(|o| match s.placement {
                    Placement::Looped => format!("{:?}{}.{}", o.kind, o.micro_batch, o.chunk),
                    Placement::Single => format!("{:?}{}", o.kind, o.micro_batch),
                    _ => {
                        let c = match (o.kind, o.chunk) {
                            (OpKind::F, 0) => 'F',
                            (OpKind::F, _) => 'f',
                            (OpKind::B, 1) => 'B',
                            (OpKind::B, _) => 'b',
                            (OpKind::W, 1) => 'W',
                            (OpKind::W, _) => 'w',
                            _ => '?',
                        };
                        format!("{c}{}", o.micro_batch)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn check(
    kind: ScheduleKind,
    mut input: pipescope::ScheduleInput,
    limit: Option<f64>,
    group: Option<u32>,
    want: &[&str],
) {
    input.mem_limit = limit;
    input.group_size = group;
    let s = generate(kind, &input).unwrap();
    assert_complete(&s, true);
    time(&s, &input);
    assert_eq!(notation(&s), want);
}

#[test]
fn v_half_p4_m8() {
    let want = [
        "F0 F1 F2 F3 F4 f0 B0 W0 f1 B1 W1 f2 b0 B2 W2 f3 w0 F5 b1 B3 W3 f4 w1 F6 b2 B4 W4 f5 w2 F7 b3 B5 W5 f6 B6 W6 b4 w3 w4 f7 B7 b5 W7 b6 w5 w6 b7 w7",
        "F0 F1 F2 F3 f0 f1 B0 W0 f2 B1 W1 b0 w0 F4 f3 B2 W2 b1 w1 F5 f4 B3 W3 b2 w2 F6 f5 B4 W4 b3 F7 w3 f6 B5 W5 b4 B6 W6 f7 w4 b5 B7 b6 W7 w5 w6 b7 w7",
        "F0 F1 F2 f0 f1 f2 B0 W0 F3 B1 b0 W1 w0 f3 F4 b1 B2 W2 f4 w1 F5 b2 B3 W3 f5 w2 F6 b3 B4 W4 f6 w3 F7 b4 B5 W5 f7 B6 b5 W6 b6 B7 W7 w4 b7 w5 w6 w7",
        "F0 f0 F1 f1 F2 f2 B0 W0 b0 w0 F3 f3 B1 W1 b1 w1 F4 f4 B2 W2 b2 w2 F5 f5 B3 W3 b3 F6 w3 f6 B4 b4 W4 F7 w4 f7 B5 b5 B6 b6 W5 W6 B7 b7 W7 w5 w6 w7",
    ];
    check(
        ScheduleKind::VHalf,
        uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
        None,
        None,
        &want,
    );
}

#[test]
fn v_min_p4_m8() {
    let want = [
        "F0 F1 F2 f0 B0 W0 f1 B1 W1 b0 w0 F3 f2 B2 b1 W2 w1 F4 f3 B3 b2 W3 w2 F5 f4 B4 b3 W4 w3 F6 f5 B5 b4 W5 w4 F7 f6 B6 b5 W6 w5 f7 B7 b6 W7 w6 b7 w7",
        "F0 F1 f0 f1 B0 W0 F2 b0 B1 W1 w0 f2 F3 b1 B2 W2 w1 f3 F4 b2 B3 W3 w2 f4 F5 b3 B4 W4 w3 f5 F6 b4 B5 W5 w4 f6 F7 b5 B6 W6 w5 f7 b6 B7 W7 w6 b7 w7",
        "F0 F1 f0 f1 B0 W0 F2 b0 w0 B1 f2 W1 b1 F3 w1 B2 f3 W2 b2 F4 w2 B3 f4 W3 b3 F5 w3 B4 f5 W4 b4 F6 w4 B5 f6 W5 b5 F7 w5 B6 f7 W6 b6 w6 B7 W7 b7 w7",
        "F0 f0 F1 f1 B0 b0 W0 w0 F2 f2 B1 b1 W1 w1 F3 f3 B2 b2 W2 w2 F4 f4 B3 b3 W3 w3 F5 f5 B4 b4 W4 w4 F6 f6 B5 b5 W5 w5 F7 f7 B6 b6 W6 w6 B7 b7 W7 w7",
    ];
    check(
        ScheduleKind::VMin,
        uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
        None,
        None,
        &want,
    );
}

#[test]
fn zb_h2_p4_m8() {
    let want = [
        "F0 F1 F2 F3 F4 F5 F6 B0 F7 W0 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7",
        "F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 F7 B3 W0 B4 W1 B5 W2 B6 W3 B7 W4 W5 W6 W7",
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 W0 B6 W1 B7 W2 W3 W4 W5 W6 W7",
        "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 W0 W1 W2 W3 W4 W5 W6 W7",
    ];
    check(
        ScheduleKind::ZbH2,
        uniform(4, 8, 1, 1.0, 1.0, 1.0, 0.0),
        None,
        None,
        &want,
    );
}

#[test]
fn zb_auto_p4_m8_limit3() {
    let want = [
        "F0 F1 F2 B0 W0 F3 B1 W1 F4 B2 W2 F5 B3 W3 F6 B4 W4 F7 B5 W5 B6 W6 B7 W7",
        "F0 F1 B0 F2 W0 B1 F3 W1 B2 F4 W2 B3 F5 W3 B4 F6 W4 B5 F7 W5 B6 W6 B7 W7",
        "F0 B0 F1 W0 B1 F2 W1 B2 F3 W2 B3 F4 W3 B4 F5 W4 B5 F6 W5 B6 F7 W6 B7 W7",
        "F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5 F6 B6 W6 F7 B7 W7",
    ];
    check(
        ScheduleKind::ZbAuto,
        uniform(4, 8, 1, 1.0, 2.0, 0.5, 0.3),
        Some(3.0),
        None,
        &want,
    );
}

#[test]
fn zb_v_p4_m8() {
    let want = [
        "F0 F1 F2 F3 F4 F5 F6 f0 B0 W0 f1 B1 W1 f2 B2 W2 f3 B3 W3 F7 b0 w0 f4 B4 W4 b1 w1 f5 B5 W5 b2 w2 f6 B6 W6 b3 w3 f7 B7 b4 W7 b5 w4 b6 w5 b7 w6 w7",
        "F0 F1 F2 F3 F4 f0 F5 f1 B0 W0 f2 B1 W1 f3 B2 W2 F6 b0 w0 f4 B3 W3 F7 b1 w1 f5 B4 W4 b2 w2 f6 B5 W5 b3 w3 f7 B6 b4 B7 b5 W6 b6 w4 b7 W7 w5 w6 w7",
        "F0 F1 F2 f0 F3 f1 F4 f2 B0 W0 f3 B1 W1 F5 b0 w0 f4 B2 W2 F6 b1 w1 f5 B3 W3 F7 b2 w2 f6 B4 W4 b3 w3 f7 B5 b4 B6 b5 B7 b6 W5 b7 w4 W6 w5 W7 w6 w7",
        "F0 f0 F1 f1 F2 f2 F3 f3 B0 W0 F4 b0 w0 f4 B1 W1 F5 b1 w1 f5 B2 W2 F6 b2 w2 f6 B3 W3 F7 b3 w3 f7 B4 b4 B5 b5 B6 b6 B7 b7 W4 w4 W5 w5 W6 w6 W7 w7",
    ];
    check(
        ScheduleKind::ZbV,
        uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
        None,
        None,
        &want,
    );
}

#[test]
fn v_zb_p4_m8_limit6() {
    let want = [
        "F0 F1 F2 F3 F4 f0 B0 W0 f1 B1 W1 f2 B2 W2 b0 w0 F5 f3 B3 b1 W3 w1 F6 f4 B4 b2 W4 w2 F7 f5 B5 b3 W5 w3 f6 B6 b4 W6 w4 f7 B7 W7 b5 w5 b6 w6 b7 w7",
        "F0 F1 F2 F3 f0 f1 B0 W0 f2 B1 W1 F4 b0 w0 B2 W2 f3 F5 b1 w1 B3 W3 f4 F6 b2 w2 B4 W4 f5 F7 b3 w3 B5 W5 f6 b4 w4 B6 f7 W6 b5 B7 w5 b6 W7 w6 b7 w7",
        "F0 F1 F2 f0 f1 f2 B0 W0 F3 B1 b0 W1 w0 F4 f3 B2 b1 W2 w1 F5 f4 B3 b2 W3 w2 F6 f5 B4 b3 W4 w3 F7 f6 B5 b4 W5 w4 f7 B6 b5 W6 b6 B7 w5 w6 b7 W7 w7",
        "F0 f0 F1 f1 F2 f2 B0 W0 b0 F3 w0 B1 f3 W1 b1 F4 w1 B2 f4 W2 b2 F5 w2 B3 f5 W3 b3 F6 w3 B4 f6 W4 b4 F7 w4 f7 B5 b5 B6 b6 W5 w5 B7 b7 W6 w6 W7 w7",
    ];
    check(
        ScheduleKind::VZb,
        uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
        Some(6.0),
        None,
        &want,
    );
}

#[test]
fn gis_p4_m8_v2_g2() {
    let want = [
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 B0.1 W0.1 F2.1 B1.1 W1.1 F3.1 B0.0 W0.0 F4.0 B1.0 W1.0 F5.0 B2.1 W2.1 F4.1 B3.1 W3.1 F5.1 B2.0 W2.0 F6.0 B3.0 W3.0 F7.0 B4.1 W4.1 F6.1 B5.1 W5.1 F7.1 B4.0 W4.0 B5.0 W5.0 B6.1 W6.1 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
        "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 W0.1 F3.0 B1.1 W1.1 F2.1 B0.0 W0.0 F3.1 B1.0 W1.0 F4.0 B2.1 W2.1 F5.0 B3.1 W3.1 F4.1 B2.0 W2.0 F5.1 B3.0 W3.0 F6.0 B4.1 W4.1 F7.0 B5.1 W5.1 F6.1 B4.0 W4.0 F7.1 B5.0 W5.0 B6.1 W6.1 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
        "F0.0 F1.0 F0.1 F1.1 B0.1 W0.1 F2.0 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B1.0 W1.0 F3.1 B2.1 W2.1 F4.0 B3.1 W3.1 F5.0 B2.0 W2.0 F4.1 B3.0 W3.0 F5.1 B4.1 W4.1 F6.0 B5.1 W5.1 F7.0 B4.0 W4.0 F6.1 B5.0 W5.0 F7.1 B6.1 W6.1 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
        "F0.0 F1.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F2.0 B0.0 W0.0 F3.0 B1.0 W1.0 F2.1 B2.1 W2.1 F3.1 B3.1 W3.1 F4.0 B2.0 W2.0 F5.0 B3.0 W3.0 F4.1 B4.1 W4.1 F5.1 B5.1 W5.1 F6.0 B4.0 W4.0 F7.0 B5.0 W5.0 F6.1 B6.1 W6.1 F7.1 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
    ];
    check(
        ScheduleKind::Gis,
        uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
        None,
        Some(2),
        &want,
    );
}

/// A group smaller than the smallest useful one (min_k = ceil(min_group / g) groups apart
/// per chunk) is kept as the source keeps it, not raised to min_group.
#[test]
fn gis_p4_m8_v2_g1() {
    let want = [
        "F0.0 F1.0 F0.1 F2.0 F1.1 F3.0 B0.1 W0.1 F2.1 F4.0 B1.1 W1.1 F3.1 B0.0 W0.0 F5.0 B2.1 W2.1 F4.1 B1.0 W1.0 F6.0 B3.1 W3.1 F5.1 B2.0 W2.0 F7.0 B4.1 W4.1 F6.1 B3.0 W3.0 B5.1 W5.1 F7.1 B4.0 W4.0 B6.1 W6.1 B5.0 W5.0 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
        "F0.0 F1.0 F0.1 F2.0 F1.1 B0.1 W0.1 F3.0 F2.1 B1.1 W1.1 F4.0 B0.0 W0.0 F3.1 B2.1 W2.1 F5.0 B1.0 W1.0 F4.1 B3.1 W3.1 F6.0 B2.0 W2.0 F5.1 B4.1 W4.1 F7.0 B3.0 W3.0 F6.1 B5.1 W5.1 B4.0 W4.0 F7.1 B6.1 W6.1 B5.0 W5.0 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
        "F0.0 F1.0 F0.1 F2.0 B0.1 W0.1 F1.1 F3.0 B1.1 W1.1 F2.1 B0.0 W0.0 F4.0 B2.1 W2.1 F3.1 B1.0 W1.0 F5.0 B3.1 W3.1 F4.1 B2.0 W2.0 F6.0 B4.1 W4.1 F5.1 B3.0 W3.0 F7.0 B5.1 W5.1 F6.1 B4.0 W4.0 B6.1 W6.1 F7.1 B5.0 W5.0 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
        "F0.0 F1.0 F0.1 B0.1 W0.1 F2.0 F1.1 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B2.1 W2.1 F4.0 B1.0 W1.0 F3.1 B3.1 W3.1 F5.0 B2.0 W2.0 F4.1 B4.1 W4.1 F6.0 B3.0 W3.0 F5.1 B5.1 W5.1 F7.0 B4.0 W4.0 F6.1 B6.1 W6.1 B5.0 W5.0 F7.1 B7.1 W7.1 B6.0 W6.0 B7.0 W7.0",
    ];
    check(
        ScheduleKind::Gis,
        uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
        None,
        Some(1),
        &want,
    );
}

/// A group smaller than the smallest useful one (min_k = ceil(min_group / g) groups apart
/// per chunk) is kept as the source keeps it, not raised to min_group.
#[test]
fn gis_p5_m7_v3_g2() {
    let want = [
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F0.2 F1.2 F2.1 F3.1 F4.0 B0.2 W0.2 F5.0 B1.2 W1.2 F2.2 F3.2 F4.1 B0.1 W0.1 F5.1 B1.1 W1.1 F6.0 B2.2 W2.2 B3.2 W3.2 F4.2 B0.0 W0.0 F5.2 B1.0 W1.0 F6.1 B2.1 W2.1 B3.1 W3.1 B4.2 W4.2 B5.2 W5.2 F6.2 B2.0 W2.0 B3.0 W3.0 B4.1 W4.1 B5.1 W5.1 B6.2 W6.2 B4.0 W4.0 B5.0 W5.0 B6.1 W6.1 B6.0 W6.0",
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F0.2 F1.2 F2.1 F3.1 B0.2 W0.2 F4.0 B1.2 W1.2 F5.0 F2.2 F3.2 B0.1 W0.1 F4.1 B1.1 W1.1 F5.1 B2.2 W2.2 F6.0 B3.2 W3.2 B0.0 W0.0 F4.2 B1.0 W1.0 F5.2 B2.1 W2.1 F6.1 B3.1 W3.1 B4.2 W4.2 B5.2 W5.2 B2.0 W2.0 F6.2 B3.0 W3.0 B4.1 W4.1 B5.1 W5.1 B6.2 W6.2 B4.0 W4.0 B5.0 W5.0 B6.1 W6.1 B6.0 W6.0",
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F0.2 F1.2 F2.1 B0.2 W0.2 F3.1 B1.2 W1.2 F4.0 F5.0 F2.2 B0.1 W0.1 F3.2 B1.1 W1.1 F4.1 B2.2 W2.2 F5.1 B3.2 W3.2 F6.0 B0.0 W0.0 B1.0 W1.0 F4.2 B2.1 W2.1 F5.2 B3.1 W3.1 F6.1 B4.2 W4.2 B5.2 W5.2 B2.0 W2.0 B3.0 W3.0 F6.2 B4.1 W4.1 B5.1 W5.1 B6.2 W6.2 B4.0 W4.0 B5.0 W5.0 B6.1 W6.1 B6.0 W6.0",
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F0.2 F1.2 B0.2 W0.2 F2.1 B1.2 W1.2 F3.1 F4.0 F5.0 B0.1 W0.1 F2.2 B1.1 W1.1 F3.2 B2.2 W2.2 F4.1 B3.2 W3.2 F5.1 B0.0 W0.0 F6.0 B1.0 W1.0 B2.1 W2.1 F4.2 B3.1 W3.1 F5.2 B4.2 W4.2 F6.1 B5.2 W5.2 B2.0 W2.0 B3.0 W3.0 B4.1 W4.1 F6.2 B5.1 W5.1 B6.2 W6.2 B4.0 W4.0 B5.0 W5.0 B6.1 W6.1 B6.0 W6.0",
        "F0.0 F1.0 F0.1 F1.1 F2.0 F3.0 F0.2 B0.2 W0.2 F1.2 B1.2 W1.2 F2.1 F3.1 F4.0 B0.1 W0.1 F5.0 B1.1 W1.1 F2.2 B2.2 W2.2 F3.2 B3.2 W3.2 F4.1 B0.0 W0.0 F5.1 B1.0 W1.0 F6.0 B2.1 W2.1 B3.1 W3.1 F4.2 B4.2 W4.2 F5.2 B5.2 W5.2 F6.1 B2.0 W2.0 B3.0 W3.0 B4.1 W4.1 B5.1 W5.1 F6.2 B6.2 W6.2 B4.0 W4.0 B5.0 W5.0 B6.1 W6.1 B6.0 W6.0",
    ];
    check(
        ScheduleKind::Gis,
        uniform(5, 7, 3, 1.0, 1.0, 1.0, 0.0),
        None,
        Some(2),
        &want,
    );
}
