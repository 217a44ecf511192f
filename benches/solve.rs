//! Cold `solve()` (no cache kept between solves): GPT-3 175B on A100 80 GB, s 16384, p 8,
//! t 8, d 1, m 64, 1f1b, adapipe, budget 70 GiB (goal < 2 ms median); Llama 3 405B on H100,
//! s 8192, p 16, t 8, m 128, 1f1b, adapipe (goal < 10 ms); the first on `interleaved` (v 2),
//! where adapipe searches the layers per device; one `compare` of every strategy
//! on the first, sequentially (goal < 20 ms); and one solve at the size limit
//! (`schedule::MAX_CELLS` micro-batch-chunks: tiny-4x8 at p 4, m 32768), which the limit keeps
//! within about a second.

use std::hint::black_box;

/// The binary's allocator (src/main.rs), so that the bench measures what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{Catalog, Scenario, ScenarioOverrides, Strategy, solve};

fn gpt3() -> Option<Scenario> {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").ok()?;
    let o = ScenarioOverrides {
        model: Some("gpt3-175b".into()),
        gpu: Some("a100-80gb".into()),
        pp: Some(8),
        tp: Some(8),
        dp: Some(1),
        seq_len: Some(16384),
        micro_batches: Some(64),
        budget_gib: Some(70.0),
        strategy: Some(Strategy::AdaPipe),
        ..ScenarioOverrides::default()
    };
    o.apply(&mut s, &c).ok()?;
    Some(s)
}

fn llama() -> Option<Scenario> {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").ok()?;
    let o = ScenarioOverrides {
        model: Some("llama3-405b".into()),
        gpu: Some("h100-80gb".into()),
        pp: Some(16),
        tp: Some(8),
        dp: Some(1),
        seq_len: Some(8192),
        micro_batches: Some(128),
        budget_gib: Some(79.6),
        strategy: Some(Strategy::AdaPipe),
        ..ScenarioOverrides::default()
    };
    o.apply(&mut s, &c).ok()?;
    Some(s)
}

fn bench(c: &mut Criterion) {
    let (Some(g), Some(l)) = (gpt3(), llama()) else {
        eprintln!("presets missing: nothing to bench");
        return;
    };
    c.bench_function("solve gpt3-175b s16k p8 m64 adapipe", |b| {
        b.iter(|| solve(black_box(&g)).map(|o| o.iteration_time_s))
    });
    c.bench_function("solve llama3-405b s8k p16 m128 adapipe", |b| {
        b.iter(|| solve(black_box(&l)).map(|o| o.iteration_time_s))
    });
    let mut interleaved = g.clone();
    interleaved.plan.schedule = pipescope::ScheduleKind::Interleaved;
    c.bench_function("solve gpt3-175b s16k p8 m64 interleaved adapipe", |b| {
        b.iter(|| solve(black_box(&interleaved)).map(|o| o.iteration_time_s))
    });
    let mut group = c.benchmark_group("compare");
    group.sample_size(10);
    group.bench_function("compare all strategies gpt3-175b s16k", |b| {
        b.iter(|| {
            Strategy::ALL
                .iter()
                .map(|&k| {
                    let mut s = g.clone();
                    s.plan.strategy = k;
                    solve(black_box(&s)).map_or(0.0, |o| o.iteration_time_s)
                })
                .sum::<f64>()
        })
    });
    group.finish();
    let mut group = c.benchmark_group("size limit");
    group.sample_size(10);
    if let Some(big) = at_the_size_limit() {
        group.bench_function("solve tiny-4x8 p4 m32768 adapipe", |b| {
            b.iter(|| solve(black_box(&big)).map(|o| o.iteration_time_s))
        });
    }
    group.finish();
}

/// tiny-4x8 with as many micro-batches as `schedule::MAX_CELLS` allows on its 4 stages.
fn at_the_size_limit() -> Option<Scenario> {
    let mut s = Catalog::builtin().scenario("tiny-4x8").ok()?;
    let cells = pipescope::MAX_CELLS / u64::from(s.parallel.pp);
    s.batch.micro_batches = u32::try_from(cells).ok()?;
    Some(s)
}

criterion_group!(benches, bench);
criterion_main!(benches);
