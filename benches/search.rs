//! Speed of the searched schedules' generators (issue 3's goals against the zero-bubble
//! repo's Python generators: V-Half 0.84 s at p=8, m=64 and 4.5 s at p=16, m=128; the ZB
//! search 0.21 s at p=16, m=128 with costs 1, 1.1, 0.9).

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::schedule::{ScheduleInput, ScheduleKind, generate};
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

criterion_group!(benches, searches);
criterion_main!(benches);
