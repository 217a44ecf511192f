//! Held-out end-to-end check with data parallelism: Narayanan et al. (2021), "Efficient
//! Large-Scale Language Model Training on GPU Clusters", Table 1 (weak scaling on A100s,
//! t 8, s 2048, vocabulary 51200, full recomputation, fp16 with 16-bit gradient reduction,
//! gradient all-reduce after the backward). These runs were not used to calibrate the GPU
//! figures (docs/model.md, "Calibration"); the published time per iteration is the paper's
//! FLOPs (`96 B s L h^2 (1 + s/(6h) + V/(16 L h))`) over the GPUs' achieved TFLOP/s. Run with
//! `--nocapture` to see the table.

use pipescope::scenario::{Catalog, ModelSpec, ScenarioOverrides, ScheduleKind, Strategy};
use pipescope::solve;

/// (layers, hidden, heads, p, GPUs, global batch, published TFLOP/s per GPU). The micro-batch
/// is 1 sequence and the schedule non-interleaved 1F1B (assumed: the table does not say).
const TABLE1: [(u32, u64, u64, u32, u32, u64, f64); 5] = [
    (60, 10240, 80, 4, 1024, 1792, 140.0),
    (80, 12288, 96, 8, 1536, 2304, 148.0),
    (96, 16384, 128, 16, 1920, 2160, 155.0),
    (105, 20480, 128, 35, 2520, 2520, 163.0),
    (128, 25600, 160, 64, 3072, 3072, 163.0),
];

/// (label, model s, published s, signed relative error) per run.
fn heldout_errors() -> Vec<(String, f64, f64, f64)> {
    let c = Catalog::builtin();
    let mut out = Vec::new();
    for (layers, hidden, heads, p, gpus, batch, tflops) in TABLE1 {
        let mut s = c.scenario("korthikanti-175b").unwrap();
        s.model = ModelSpec {
            name: format!("narayanan-{layers}l-{hidden}h"),
            layers,
            hidden,
            heads,
            kv_heads: heads,
            ffn: 4 * hidden,
            vocab: 51200,
            max_positions: None,
            tied_embeddings: true,
            ..s.model.clone()
        };
        let d = gpus / (8 * p);
        ScenarioOverrides {
            tp: Some(8),
            pp: Some(p),
            dp: Some(d),
            sp: Some(false),
            chunks: Some(1),
            schedule: Some(ScheduleKind::OneFOneB),
            strategy: Some(Strategy::Full),
            micro_batch_size: Some(1),
            micro_batches: Some(u32::try_from(batch / u64::from(d)).unwrap()),
            grad_bytes: Some(2),
            distributed_optimizer: Some(false),
            overlap_grad_reduce: Some(false),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        let (sq, h, l, v) = (2048.0, hidden as f64, f64::from(layers), 51200.0);
        let flops =
            96.0 * batch as f64 * sq * l * h * h * (1.0 + sq / (6.0 * h) + v / (16.0 * l * h));
        let want = flops / (f64::from(gpus) * tflops * 1e12);
        let got = solve(&s).unwrap().iteration_time_s;
        let label = format!("{:.0}B p{p} d{d}", 12.0 * l * h * h / 1e9);
        out.push((label, got, want, (got - want) / want));
    }
    out
}

#[test]
fn narayanan_table1_held_out() {
    let rows = heldout_errors();
    let mut sum = 0.0;
    for (name, got, want, err) in &rows {
        println!(
            "{name:18} published {want:8.2} s  model {got:8.2} s  error {:+.1} %",
            100.0 * err
        );
        sum += err.abs();
        assert!(err.abs() < 0.10, "{name}: error {err}");
    }
    let mean = sum / rows.len() as f64;
    println!("mean |error| {:.2} %", 100.0 * mean);
    assert!(mean < 0.05, "mean error {mean}");
}
