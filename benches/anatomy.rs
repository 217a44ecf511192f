//! Speed of `Anatomy::build` (called on every solve) and of preset loading.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{Anatomy, Catalog, default_scenario};

fn bench(c: &mut Criterion) {
    let s = default_scenario();
    c.bench_function("anatomy_build_gpt3_175b_16k", |b| {
        b.iter(|| Anatomy::build(black_box(&s)))
    });
    let catalog = Catalog::builtin();
    let llama = catalog.scenario("adapipe-llama2-70b").unwrap_or(s);
    c.bench_function("anatomy_build_llama2_70b", |b| {
        b.iter(|| Anatomy::build(black_box(&llama)))
    });
    c.bench_function("scenario_clone", |b| b.iter(|| black_box(&llama).clone()));
    c.bench_function("catalog_builtin_scenario", |b| {
        b.iter(|| Catalog::builtin().scenario(black_box("gpt3-175b-16k")))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
