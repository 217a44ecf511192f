//! Held-out end-to-end checks with data parallelism: published A100 training runs that were
//! not used to calibrate the GPU figures (docs/model.md, "Calibration"). Run with
//! `--nocapture` to see the table.
//!
//! - Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
//!   Clusters", Table 1 (weak scaling, Megatron-LM): t 8, s 2048, vocabulary 51200, full
//!   recomputation, fp16 with 16-bit gradients all-reduced after the backward. The published
//!   time per iteration is the paper's FLOPs, `96 B s L h^2 (1 + s/(6h) + V/(16 L h))`, over
//!   the achieved TFLOP/s per GPU. Micro-batch sizes and interleaving as in the published
//!   scripts (Megatron-LM `examples/sc21`): 39B micro-batch 4 and 1T micro-batch 1 on plain
//!   1F1B; 76B and 146B micro-batch 2, 310B and 530B micro-batch 1, interleaved with 3, 2, 2
//!   and 3 chunks. Stage-to-stage sends block as that Megatron's did (`p2p = "blocking"`, from
//!   the `korthikanti-175b` preset the runs start from).
//! - Runs on DeepSpeed's pipeline engine (Megatron-DeepSpeed), printed beside them: MT-NLG
//!   530B (Smith et al. 2022; t 8, p 35, ZeRO-1, global batch 1920, iteration times on 280,
//!   350 and 420 nodes) and BLOOM-176B (BigScience 2022; t 4, p 12, d 8, micro-batch 2,
//!   global batch 2048, ZeRO-1, bf16; about 150 TFLOP/s per GPU by the same FLOPs formula).
//!   pipescope is about 20 % optimistic on them: that engine's costs (blocking stage-to-stage
//!   transfers, gradient accumulation outside the GEMM) are not modelled, so they are held to
//!   a looser bound.

use crate::scenario_common::read_back;
use pipescope::{
    Anatomy, Catalog, ModelSpec, Partition, ScenarioOverrides, ScheduleKind, Strategy, solve,
};

/// One published run.
struct Run {
    label: &'static str,
    /// (layers, hidden, heads, vocabulary)
    shape: (u32, u64, u64, u64),
    /// (t, p, d)
    layout: (u32, u32, u32),
    /// (micro-batch size, global batch)
    batch: (u64, u64),
    /// Virtual chunks per device (1: plain 1F1B; more: Megatron's interleaved schedule).
    chunks: u32,
    /// Distributed optimizer (ZeRO-1) and gradient bytes.
    zero1: bool,
    grad_bytes: u32,
    /// Whether the weight-gradient GEMMs accumulate the gradient themselves (false: a
    /// separate pass per micro-batch, as Megatron-LM of 2021 ran it).
    gradient_accumulation_fusion: bool,
    partition: Partition,
    /// Published seconds per iteration, or `None` to derive them from `tflops`.
    seconds: Option<f64>,
    /// Published TFLOP/s per GPU (Narayanan's FLOPs formula).
    tflops: f64,
}

/// A row of Narayanan et al.'s Table 1: (layers, hidden, heads), (p, GPUs, global batch) and
/// the published TFLOP/s per GPU.
const fn narayanan(
    label: &'static str,
    shape: (u32, u64, u64),
    run: (u32, u32, u64),
    config: (u64, u32),
    tflops: f64,
) -> Run {
    let (l, h, a) = shape;
    let (p, gpus, batch) = run;
    let (b, chunks) = config;
    Run {
        label,
        shape: (l, h, a, 51200),
        layout: (8, p, gpus / (8 * p)),
        batch: (b, batch),
        chunks,
        zero1: false,
        grad_bytes: 2,
        // Megatron-LM of August 2021 (the sc21 scripts' commit 6985e58938) has no gradient
        // accumulation fusion (added in February 2022, 83b1e42f30); with `--DDP-impl local`
        // and no contiguous buffers, autograd accumulates `param.grad` in fp16.
        gradient_accumulation_fusion: false,
        partition: Partition::Even,
        seconds: None,
        tflops,
    }
}

const fn mt_nlg(label: &'static str, d: u32, seconds: f64) -> Run {
    Run {
        label,
        shape: (105, 20480, 128, 51200),
        layout: (8, 35, d),
        batch: (1, 1920),
        chunks: 1,
        zero1: true,
        grad_bytes: 4,
        gradient_accumulation_fusion: true,
        partition: Partition::Even,
        seconds: Some(seconds),
        tflops: 0.0,
    }
}

/// Megatron-LM runs (Narayanan et al. 2021, Table 1) with the micro-batch sizes and
/// interleaving of their published scripts (Megatron-LM's `examples/sc21`).
const MEGATRON: [Run; 6] = [
    narayanan(
        "39B, 512 GPUs",
        (48, 8192, 64),
        (2, 512, 1536),
        (4, 1),
        138.0,
    ),
    narayanan(
        "76B, 1024 GPUs",
        (60, 10240, 80),
        (4, 1024, 1792),
        (2, 3),
        140.0,
    ),
    narayanan(
        "146B, 1536 GPUs",
        (80, 12288, 96),
        (8, 1536, 2304),
        (2, 2),
        148.0,
    ),
    narayanan(
        "310B, 1920 GPUs",
        (96, 16384, 128),
        (16, 1920, 2160),
        (1, 2),
        155.0,
    ),
    narayanan(
        "530B, 2520 GPUs",
        (105, 20480, 128),
        (35, 2520, 2520),
        (1, 3),
        163.0,
    ),
    narayanan(
        "1T, 3072 GPUs",
        (128, 25600, 160),
        (64, 3072, 3072),
        (1, 1),
        163.0,
    ),
];

/// DeepSpeed pipeline-engine runs.
const DEEPSPEED: [Run; 4] = [
    mt_nlg("MT-NLG, 2240 GPUs", 8, 60.1),
    mt_nlg("MT-NLG, 2800 GPUs", 10, 50.2),
    mt_nlg("MT-NLG, 3360 GPUs", 12, 44.4),
    Run {
        label: "BLOOM, 384 GPUs",
        shape: (70, 14336, 112, 250880),
        layout: (4, 12, 8),
        batch: (2, 2048),
        chunks: 1,
        zero1: true,
        grad_bytes: 4,
        gradient_accumulation_fusion: true,
        partition: Partition::Balanced,
        seconds: None,
        tflops: 150.0,
    },
];

/// (model s, published s, signed relative error) of one run.
fn error_of(run: &Run) -> (f64, f64, f64) {
    let (got, want, _) = solved(run, 1.0);
    (got, want, (got - want) / want)
}

/// (model s, published s, exposed data-parallel reduction s) of one run on a network
/// `slower` times slower than the preset's (1: the preset).
fn solved(run: &Run, slower: f64) -> (f64, f64, f64) {
    let c = Catalog::builtin();
    let (layers, hidden, heads, vocab) = run.shape;
    let (t, p, d) = run.layout;
    let (b, batch) = run.batch;
    let mut s = c.scenario("korthikanti-175b").unwrap();
    s.model = ModelSpec {
        name: run.label.to_string(),
        layers,
        hidden,
        heads,
        kv_heads: heads,
        ffn: 4 * hidden,
        vocab,
        max_positions: None,
        tied_embeddings: true,
        ..s.model.clone()
    };
    ScenarioOverrides {
        tp: Some(t),
        pp: Some(p),
        dp: Some(d),
        sp: Some(false),
        chunks: Some(run.chunks),
        schedule: Some(if run.chunks > 1 {
            ScheduleKind::Interleaved
        } else {
            ScheduleKind::OneFOneB
        }),
        strategy: Some(Strategy::Full),
        micro_batch_size: Some(b),
        micro_batches: Some(u32::try_from(batch / (b * u64::from(d))).unwrap()),
        grad_bytes: Some(run.grad_bytes),
        distributed_optimizer: Some(run.zero1),
        overlap_grad_reduce: Some(false),
        partition: Some(run.partition),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s.gpu.inter_node_gbps /= slower;
    s.plan.gradient_accumulation_fusion = run.gradient_accumulation_fusion;
    // The 2021 Megatron-LM these runs ran (and the Megatron-DeepSpeed forked from it) has
    // only the unfused vocabulary-parallel cross-entropy (`megatron/mpu/cross_entropy.py` at
    // 6985e58938: max, subtract, exp, sum, divide over the fp32 logits; the fused loss
    // arrived in Megatron-Core 0.8).
    s.plan.cross_entropy_loss_fusion = false;
    let want = run.seconds.unwrap_or_else(|| {
        let (sq, h, l, v) = (2048.0, hidden as f64, f64::from(layers), vocab as f64);
        let flops =
            96.0 * batch as f64 * sq * l * h * h * (1.0 + sq / (6.0 * h) + v / (16.0 * l * h));
        flops / (f64::from(t * p * d) * run.tflops * 1e12)
    });
    let out = solve(&s).unwrap();
    (out.iteration_time_s, want, out.time_breakdown_s.dp_comm)
}

/// Prints the runs and returns their mean absolute error and the spread of their signed
/// errors (largest minus smallest), asserting each within `bound`.
fn check(runs: &[Run], bound: f64) -> (f64, f64) {
    let mut sum = 0.0;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for run in runs {
        let (got, want, err) = error_of(run);
        println!(
            "{:20} published {want:8.2} s  model {got:8.2} s  error {:+.1} %",
            run.label,
            100.0 * err
        );
        assert!(err.abs() < bound, "{}: error {err}", run.label);
        sum += err.abs();
        lo = lo.min(err);
        hi = hi.max(err);
    }
    let mean = sum / runs.len() as f64;
    println!(
        "mean |error| {:.2} %, spread of the signed errors {:.1} points",
        100.0 * mean,
        100.0 * (hi - lo)
    );
    (mean, hi - lo)
}

/// With the 2021 code's gradient accumulation outside the GEMMs and its unfused loss the runs
/// come out at a mean of 3.3 % (3.5 % with the loss fused, 6.3 % with the accumulation fused
/// as well, as that code did neither), every one still optimistic; the 76B stays about 3
/// points further off than the next run, so the spread of the signed errors is 6.6 points
/// (6.5 with the loss fused, 6.7 with the accumulation fused), not the 5 that would mean the
/// gap is explained (docs/model.md, "Calibration"). The bounds pin today's figures.
#[test]
fn narayanan_table1_held_out() {
    let (mean, spread) = check(&MEGATRON, 0.10);
    assert!(mean < 0.04, "mean {mean}");
    assert!(spread < 0.067, "spread {spread}");
}

/// Without gradient accumulation fusion each micro-batch but the first adds its 16-bit
/// weight gradient into the accumulated one: a layer block's weight-gradient time grows by
/// exactly that memory-bound pass (2 + 2 `grad_bytes` bytes a parameter) times `(m - 1) / m`,
/// nothing else moves, a single micro-batch pays nothing, and the setting survives a round
/// trip through a scenario file. The embedding, whose gradient no GEMM accumulates, pays the
/// pass on every micro-batch with the fusion on, and a zero-filled dense gradient either way.
#[test]
fn accumulation_outside_the_gemm_is_one_pass_per_later_micro_batch() {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-175b").unwrap();
    let fused = Anatomy::build(&s).unwrap();
    s.plan.gradient_accumulation_fusion = false;
    let apart = Anatomy::build(&s).unwrap();
    let m = f64::from(s.batch.micro_batches);
    let g = f64::from(s.parallel.grad_bytes);
    // The A100 preset's memory-bound rate from 100 MB: 0.75 of 2039 GB/s.
    let pass = |params: u64| {
        let bytes = (2.0 + 2.0 * g) * params as f64;
        assert!(bytes > 100e6, "{bytes}");
        bytes / (2039e9 * 0.75)
    };
    for (a, f) in [
        (&apart.attention, &fused.attention),
        (&apart.mlp, &fused.mlp),
    ] {
        let later = pass(f.params) * (m - 1.0) / m;
        let extra = a.backward_w_s - f.backward_w_s;
        assert!(
            (extra - later).abs() < 1e-9 * later,
            "{:?}: {extra} vs {later}",
            f.kind
        );
        assert_eq!(a.forward_s, f.forward_s);
        assert_eq!(a.backward_b_s, f.backward_b_s);
        assert_eq!(a.static_bytes, f.static_bytes);
    }
    // The embedding's gradient is added by a pass either way (no GEMM accumulates it): on
    // every micro-batch with the fusion on (Megatron-Core's gradient hook), on all but the
    // first without it (autograd); besides, its dense gradient is zero-filled each time.
    let (e, ef) = (&apart.embedding, &fused.embedding);
    let first = ef.backward_w_s - e.backward_w_s;
    let once = pass(ef.params) / m;
    assert!((first - once).abs() < 1e-9 * once, "{first} vs {once}");
    // All of it (t 8 with sequence parallelism, s 2048, h 12288): the gather of the output's
    // gradient over NVLink (0.75 of 300 GB/s), the scatter of the tokens' rows (read the
    // gradient twice, the token ids), the dropout's backward, the zero fill (2 bytes a
    // parameter) and the add.
    let out = 2.0 * 2048.0 * 12288.0;
    let gather = 7.0 / 8.0 * out / (300e9 * 0.75);
    let scatter = (2.0 * out + 8.0 * 2048.0) / (2039e9 * 0.75);
    let zero_fill = 2.0 * ef.params as f64 / (2039e9 * 0.75);
    // GPT's embedding dropout's backward on the sequence-parallel shard (0.70 from 10 MB).
    let dropout = 5.0 * 2048.0 / 8.0 * 12288.0 / (2039e9 * 0.70);
    let want = gather + scatter + dropout + zero_fill + pass(ef.params);
    assert!(
        (ef.backward_w_s - want).abs() < 1e-9 * want,
        "{} vs {want}",
        ef.backward_w_s
    );
    let mut one = s.clone();
    one.batch.micro_batches = 1;
    let single = Anatomy::build(&one).unwrap();
    one.plan.gradient_accumulation_fusion = true;
    assert_eq!(
        single.attention.backward_w_s,
        Anatomy::build(&one).unwrap().attention.backward_w_s
    );
    s.name = "accumulation-round-trip".into();
    assert_eq!(read_back(&s), s);
}

#[test]
fn deepspeed_pipeline_runs_held_out() {
    assert!(check(&DEEPSPEED, 0.30).0 < 0.25);
}

/// What a dearer stage-to-stage transfer would do, as a check of the one mechanism that
/// scales with interleaving's chunks (docs/model.md, "Stage-to-stage transfers"): with every
/// network transfer four times longer and the data-parallel reduction's own change taken
/// out, the 530B (35 stages, one layer per chunk, short rounds) moves by more than 5 points
/// and the 76B (four stages, five layers per chunk), the run furthest off, by about 2: so a
/// slower p2p (NCCL's send/receive below its collectives' bandwidth, a per-transfer latency)
/// would widen the spread, not close it. The 76B's gap is elsewhere.
#[test]
fn a_dearer_pipeline_transfer_does_not_close_the_interleaved_gap() {
    let moved = |run: &Run| {
        let (t1, want, dp1) = solved(run, 1.0);
        let (t4, _, dp4) = solved(run, 4.0);
        ((t4 - dp4) - (t1 - dp1)) / want
    };
    let (small, large) = (moved(&MEGATRON[1]), moved(&MEGATRON[4]));
    println!(
        "network 4x slower, dp reduction excluded: 76B {:+.1} points, 530B {:+.1} points",
        100.0 * small,
        100.0 * large
    );
    assert!(large > 0.05 && small < 0.025, "76B {small}, 530B {large}");
}
