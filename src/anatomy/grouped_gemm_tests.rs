//! The routed experts' grouped GEMMs against their kernel measurements (docs/model.md,
//! "Mixture of experts", grouped GEMMs): the H100 and H200 presets' `grouped_matrix` steps
//! reproduce Transformer Engine PR 2045's grouped-GEMM benchmark, a grouped GEMM never runs
//! faster per FLOP with fewer rows, the GPUs without a grouped measurement keep the `matrix`
//! steps, and a preset's out-of-range `grouped_matrix` is refused at its place in the file.

use crate::anatomy::cost::Machine;
use crate::scenario::{Catalog, GpuSpec};

/// Kernels in a training step run at this fraction of their isolated rate (the presets'
/// in-training factor, as in `calibration_h100_tests.rs`).
const IN_TRAINING: f64 = 0.89;

/// Transformer Engine PR 2045 (NVIDIA/TransformerEngine#2045, the maintainers' benchmark of
/// `general_grouped_gemm`, multi-stream cuBLAS, TE 2.7 and CUDA 12.9, H100 SXM, BF16):
/// (groups, rows of each group, output columns, inner dimension, measured TFLOP/s).
const TE_2_7: [(f64, f64, f64, f64, f64); 2] = [
    (8.0, 4096.0, 768.0, 2048.0, 627.903),
    (16.0, 2048.0, 768.0, 2048.0, 553.945),
];

fn gpu(name: &str) -> GpuSpec {
    Catalog::builtin().gpu(name).unwrap().clone()
}

/// The fraction of the bf16 peak a grouped GEMM of `groups` experts of `rows` rows each
/// (`[rows, k] x [k, n]`) runs at in the model, in a training step.
fn grouped_rate(m: &Machine, gpu: &GpuSpec, groups: f64, rows: f64, n: f64, k: f64) -> f64 {
    let flops = 2.0 * groups * rows * n * k;
    flops / (m.grouped_gemm(groups * rows, k, n, groups).s * gpu.bf16_tflops * 1e12)
}

#[test]
fn grouped_gemms_reproduce_transformer_engine_s_measurements_on_h100_and_h200() {
    for name in ["h100-80gb", "h200-141gb"] {
        let g = gpu(name);
        let m = Machine::new(&g, 1);
        for (groups, rows, n, k, tflops) in TE_2_7 {
            let flops = 2.0 * groups * rows * n * k;
            let model = m.grouped_gemm(groups * rows, k, n, groups).s * IN_TRAINING;
            let measured = flops / (tflops * 1e12);
            let err = (model - measured) / measured;
            println!(
                "{name} grouped {groups} x {rows} x {n} x {k}: measured {:.1} us, model {:.1} us, \
                 error {:+.1} %",
                measured * 1e6,
                model * 1e6,
                100.0 * err
            );
            assert!(err.abs() < 0.02, "{name} {groups} x {rows}: {err}");
        }
    }
}

#[test]
fn fewer_rows_never_run_a_grouped_gemm_faster_per_flop() {
    let names = [
        "h100-80gb",
        "h200-141gb",
        "a100-80gb",
        "b200-180gb",
        "gb200-186gb",
    ];
    // (output columns, inner dimension) of the presets' experts' fc1 and fc2 and the
    // measured shape.
    let shapes = [
        (768.0, 2048.0),
        (1536.0, 2048.0),
        (2048.0, 768.0),
        (3072.0, 4096.0),
        (4096.0, 1536.0),
        (4096.0, 7168.0),
    ];
    for name in names {
        let g = gpu(name);
        let m = Machine::new(&g, 1);
        for (n, k) in shapes {
            for groups in [1.0, 4.0, 8.0, 16.0, 32.0] {
                let mut previous = f64::INFINITY;
                // From 64k rows an expert down to 1, in steps of 2^(1/8).
                for i in 0..=128 {
                    let rows = 65536.0 * 2f64.powf(-f64::from(i) / 8.0);
                    let rate = grouped_rate(&m, &g, groups, rows, n, k);
                    assert!(
                        rate <= previous * (1.0 + 1e-12),
                        "{name} {groups} x {rows} x {n} x {k}: {rate} above {previous}"
                    );
                    previous = rate;
                }
            }
        }
    }
}

#[test]
fn gpus_without_a_grouped_measurement_keep_the_matrix_steps() {
    for name in ["a100-40gb", "a100-80gb", "b200-180gb", "gb200-186gb"] {
        let eff = gpu(name).efficiency;
        assert!(eff.grouped_matrix.is_none(), "{name}");
        for i in 0..=64 {
            let flops = 1e6 * 10f64.powf(f64::from(i) / 8.0);
            assert_eq!(
                eff.grouped_at(flops),
                eff.matrix_at(flops),
                "{name} {flops}"
            );
        }
    }
}

#[test]
fn an_out_of_range_grouped_matrix_is_refused_at_its_place() {
    let base = "[gpu]\nname = \"g\"\nmemory_gib = 80\nbf16_tflops = 989\nhbm_gbps = 3350\n\
                [gpu.efficiency]\n";
    for (steps, expected) in [
        (
            "[[1e9, 1.5], [0.0, 0.1]]",
            "g.toml:7:18: invalid gpu.efficiency.grouped_matrix[0]",
        ),
        (
            "[[1e9, 0.5], [1e12, 0.6]]",
            "g.toml:7:18: invalid gpu.efficiency.grouped_matrix[1]",
        ),
        ("[]", "g.toml:7:18: invalid gpu.efficiency.grouped_matrix"),
    ] {
        let text = format!("{base}grouped_matrix = {steps}\n");
        let e = Catalog::builtin()
            .add_text("g.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(expected), "{steps}: {e}");
    }
}
