//! Speed of the searched schedules' generators, against the zero-bubble repo's Python
//! generators they port (V-Half 0.84 s at p=8, m=64 and 4.5 s at p=16, m=128; the ZB
//! search 0.21 s at p=16, m=128 with costs 1, 1.1, 0.9): a planner that runs them inside
//! every solve must be at least as fast as the tool users would otherwise run.

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{ScheduleInput, ScheduleKind, generate};
use std::hint::black_box;

fn bench(c: &mut Criterion, name: &str, kind: ScheduleKind, input: ScheduleInput) {
    c.bench_function(name, |b| {
        b.iter(|| generate(kind, black_box(&input)).map(|s| s.devices.len()))
    });
}

fn searches(c: &mut Criterion) {
    let unit = |p, m, v| ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
    bench(c, "v-half p=8 m=64", ScheduleKind::VHalf, unit(8, 64, 2));
    bench(
        c,
        "v-half p=16 m=128",
        ScheduleKind::VHalf,
        unit(16, 128, 2),
    );
    bench(c, "v-min p=16 m=128", ScheduleKind::VMin, unit(16, 128, 2));
    let zb = ScheduleInput::uniform(16, 128, 1, 1.0, 1.1, 0.9, 0.0);
    bench(
        c,
        "zb-auto p=16 m=128 costs 1,1.1,0.9",
        ScheduleKind::ZbAuto,
        zb.clone(),
    );
    bench(
        c,
        "zb-h2 p=16 m=128 costs 1,1.1,0.9",
        ScheduleKind::ZbH2,
        zb,
    );
}

/// V-ZB's building-block search (the Python source takes 74 s at p=8, m=64). With unit
/// costs it stops at the first zero-bubble candidate; with other costs it builds every
/// block and gives up on each candidate once it cannot beat the best so far (the last
/// cases, up to the V-shape paper's largest pure-pipeline run, p=40 with m=160, and the
/// size limit's widest corner, p=50).
fn v_zb(c: &mut Criterion) {
    let mut group = c.benchmark_group("v-zb");
    group.sample_size(10);
    for (p, m) in [(8, 64), (16, 128)] {
        let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
        group.bench_function(format!("p={p} m={m}"), |b| {
            b.iter(|| generate(ScheduleKind::VZb, black_box(&input)).map(|s| s.devices.len()))
        });
    }
    // Durations that are not exact binary fractions: no early stop, every block is tried.
    // m=2p costs as much as any m up to 2p (fewer micro-batches are ordered as 2p).
    for (p, m) in [(16, 128), (32, 64), (32, 128), (40, 160), (50, 100)] {
        let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.1, 0.9, 0.0);
        group.bench_function(format!("p={p} m={m} costs 1,1.1,0.9"), |b| {
            b.iter(|| generate(ScheduleKind::VZb, black_box(&input)).map(|s| s.devices.len()))
        });
    }
    group.finish();
}

/// The zero-bubble repo's greedy V-shape (`zb-v`), as a sweep generates it for every
/// configuration: its cost grows with the micro-batch count (a few runs of the greedy over
/// every op), so it is measured at the micro-batch counts of a large global batch.
fn schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    group.sample_size(10);
    for (p, m) in [(8, 512), (8, 4096), (32, 1024)] {
        let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.1, 0.9, 0.05);
        group.bench_function(format!("zb-v p={p} m={m} costs 1,1.1,0.9"), |b| {
            b.iter(|| generate(ScheduleKind::ZbV, black_box(&input)).map(|s| s.devices.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, searches, v_zb, schedule);
criterion_main!(benches);
