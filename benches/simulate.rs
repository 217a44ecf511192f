//! Generate + simulate 1F1B at p=8, m=64 (goal: under 100 us) and p=64, m=1024 (goal: under
//! 50 ms on the 2-core machine); and the figures-only run of a generated ZB-V order at p 8
//! with m 64 and m 1024, beside the full run (its cost should hardly grow with m), and at p 64
//! with m 1024 where the first device is the slowest, beside the full run: the sweep's large
//! case, where the run settles into its period only after about 3p to 4p periods (what a
//! start-up wave takes to cross the V's 2p stages down and back), all of which the
//! figures-only run simulates before it can prove the repeat (here about a third of the ops):
//! it took 47 ms against the full run's 42 ms (2026-12-07, the shared 2-core machine), so
//! at p 64 its cost is the start-up wave's, not m's.

use std::hint::black_box;

/// The binary's allocator (src/main.rs), so that the bench measures what users run (the
/// figures-only run grows its span lists as it goes, which the system allocator copies
/// over and over: about 140 ms there on the p 64 case below, 3x mimalloc's).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{
    Schedule, ScheduleInput, ScheduleKind, SimCosts, generate, simulate, simulate_figures,
};

fn run(p: u32, m: u32) -> f64 {
    let input = ScheduleInput::uniform(p, m, 1, 1.0, 1.0, 1.0, 0.0);
    let Ok(s) = generate(ScheduleKind::OneFOneB, &input) else {
        return f64::NAN;
    };
    let costs = SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, 0.0);
    simulate(&s, &costs).map_or(f64::NAN, |r| r.makespan)
}

/// A ZB-V order at p 8 with `m` micro-batches and unlike per-device costs.
fn zbv(m: u32) -> Option<(Schedule, SimCosts)> {
    zbv_on(8, m, 0.03)
}

/// A ZB-V order on `p` devices with `m` micro-batches, device `d`'s forwards `1 + step x d`
/// times the base (a negative `step`: the first device the slowest).
fn zbv_on(p: u32, m: u32, step: f64) -> Option<(Schedule, SimCosts)> {
    let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.1, 0.9, 0.05);
    let s = generate(ScheduleKind::ZbV, &input).ok()?;
    let mut costs = SimCosts::abstract_run(&s, 1.0, 1.1, 0.9, 0.05, 0.0);
    for (d, row) in costs.chunks.iter_mut().enumerate() {
        for c in row.iter_mut() {
            c.f_s *= 1.0 + step * d as f64;
        }
    }
    Some((s, costs))
}

fn bench(c: &mut Criterion) {
    let mut steady = c.benchmark_group("steady");
    steady.sample_size(20);
    for m in [64, 1024] {
        let Some((s, costs)) = zbv(m) else { continue };
        steady.bench_function(format!("zb-v p=8 m={m} simulate"), |b| {
            b.iter(|| simulate(black_box(&s), &costs).map_or(f64::NAN, |r| r.makespan))
        });
        steady.bench_function(format!("zb-v p=8 m={m} simulate_figures"), |b| {
            b.iter(|| simulate_figures(black_box(&s), &costs).map_or(f64::NAN, |r| r.makespan))
        });
    }
    if let Some((s, costs)) = zbv_on(64, 1024, -0.002) {
        steady.bench_function("zb-v p=64 m=1024, first device slowest, simulate", |b| {
            b.iter(|| simulate(black_box(&s), &costs).map_or(f64::NAN, |r| r.makespan))
        });
        steady.bench_function(
            "zb-v p=64 m=1024, first device slowest, simulate_figures",
            |b| b.iter(|| simulate_figures(black_box(&s), &costs).map_or(f64::NAN, |r| r.makespan)),
        );
    }
    steady.finish();
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
