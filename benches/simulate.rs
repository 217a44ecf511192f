//! Generate + simulate 1F1B at p=8, m=64 (goal: under 100 us) and p=64, m=1024 (goal: under
//! 50 ms on the 2-core machine).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{ScheduleInput, ScheduleKind, SimCosts, generate, simulate};

fn run(p: u32, m: u32) -> f64 {
    let input = ScheduleInput::uniform(p, m, 1, 1.0, 1.0, 1.0, 0.0);
    let Ok(s) = generate(ScheduleKind::OneFOneB, &input) else {
        return f64::NAN;
    };
    let costs = SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, 0.0);
    simulate(&s, &costs).map_or(f64::NAN, |r| r.makespan)
}

fn bench(c: &mut Criterion) {
    c.bench_function("1f1b p=8 m=64 generate+simulate", |b| {
        b.iter(|| run(black_box(8), black_box(64)))
    });
    let mut slow = c.benchmark_group("large");
    slow.sample_size(20);
    slow.bench_function("1f1b p=64 m=1024 generate+simulate", |b| {
        b.iter(|| run(black_box(64), black_box(1024)))
    });
    slow.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
