//! Exports of the default scenario (GPT-3 175B, 16k, p 8, m 64, 1f1b, adapipe): the
//! Perfetto trace (goal < 50 ms), the SVG figure and the torchtitan CSV, from the schedule
//! and simulation the outcome carries. The solve itself is outside the timed loop.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pipescope::{Palette, Run, default_scenario, perfetto_trace, svg_figure, torchtitan_csv};

fn bench(c: &mut Criterion) {
    let scenario = default_scenario();
    let Ok(outcome) = pipescope::solve(&scenario) else {
        return;
    };
    let run = Run::planned(&outcome);
    let mut g = c.benchmark_group("export");
    g.sample_size(20);
    g.bench_function("perfetto_default", |b| {
        b.iter(|| black_box(perfetto_trace(&run)));
    });
    let palette = Palette::light();
    g.bench_function("svg_default", |b| {
        b.iter(|| black_box(svg_figure(&run, &palette)));
    });
    g.bench_function("torchtitan_default", |b| {
        b.iter(|| black_box(torchtitan_csv(&outcome.op_order)));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
