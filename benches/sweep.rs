//! `sweep` (docs/cli.md): the teaching model's default space on 16 GPUs, and
//! GPT-3 175B on 1,024 A100s (global batch 1,536, s 2048) with t 8 and the single-chunk
//! schedules, both exact (pruned by proven bounds). The whole default space of the latter is
//! timed with the release binary (`time pipescope sweep ...`), not here: it runs for
//! longer than a benchmark sample should.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{
    Catalog, Scenario, ScenarioOverrides, ScheduleKind, SweepOptions, SweepSpace, sweep,
};

/// The binary's allocator (src/main.rs), so that the bench measures what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn scenario(name: &str, o: ScenarioOverrides) -> Option<Scenario> {
    let c = Catalog::builtin();
    let mut s = c.scenario(name).ok()?;
    o.apply(&mut s, &c).ok()?;
    Some(s)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sweep");
    g.sample_size(10);
    let one = ScenarioOverrides {
        pp: Some(1),
        tp: Some(1),
        dp: Some(1),
        ..ScenarioOverrides::default()
    };
    if let Some(tiny) = scenario("tiny-4x8", one.clone()) {
        let space = SweepSpace {
            gpus: vec![16],
            global_batch: 64,
            ..SweepSpace::default()
        };
        g.bench_function("tiny-4x8 default space, 16 GPUs", |b| {
            b.iter(|| {
                sweep(
                    black_box(&tiny),
                    &space,
                    SweepOptions::default(),
                    &|_, _| {},
                    &pipescope::Cancel::never(),
                )
            })
        });
    }
    let gpt = ScenarioOverrides {
        model: Some("gpt3-175b".into()),
        gpu: Some("a100-80gb".into()),
        seq_len: Some(2048),
        ..one
    };
    if let Some(gpt3) = scenario("gpt3-175b-16k", gpt) {
        let space = SweepSpace {
            gpus: vec![1024],
            global_batch: 1536,
            tp: vec![8],
            pp: vec![4, 8, 16],
            schedules: vec![ScheduleKind::OneFOneB, ScheduleKind::ZbH1],
            ..SweepSpace::default()
        };
        g.bench_function("gpt3-175b 1024 GPUs, t 8, p 4-16, 1f1b + zb-h1", |b| {
            b.iter(|| {
                sweep(
                    black_box(&gpt3),
                    &space,
                    SweepOptions::default(),
                    &|_, _| {},
                    &pipescope::Cancel::never(),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
