//! Published H100 training runs, BF16 and FP8, as checks of the H100 preset (its figures come
//! from kernel and layer measurements only; none of these runs set them). Each run is the
//! published configuration as its recipe states it: NVIDIA's DGX Cloud benchmarking recipes
//! (github.com/NVIDIA/dgxc-benchmarking, the README's "Expected Performance" tables with the
//! recipe's own config) and NeMo's performance summary (NVIDIA/NeMo,
//! docs/source/performance/performance_summary.md, NeMo 24.07). All run Megatron-core with
//! Transformer Engine, the distributed optimizer with overlapped gradient reduction, no
//! activation recomputation, sequence parallelism with t > 1, and the interleaved schedule
//! where VP > 1. Published time = the recipe's step time, or global batch x sequence over
//! tokens per second. Attention runs as the recipe runs it: cuDNN's fused attention
//! (Transformer Engine's choice on Hopper), except the 24.11 GPT-3 recipe, whose `launch.sh`
//! exports `NVTE_FUSED_ATTN=0` (FlashAttention-2). Run with `--nocapture` to see the table.
//!
//! Each run's overlaps are its recipe's: tensor-parallel communication pipelined with the
//! GEMMs (`ub_tp_comm_overlap: true`, Transformer Engine's userbuffers) where t > 1, and the
//! distributed optimizer's parameter all-gather overlapped with the forward
//! (`overlap_param_sync: true`); Llama 3.1's runs add context parallelism (cp 2, NeMo's
//! launcher configs `llama3_1_{8b,70b,405b}.yaml`). pipescope models Transformer Engine's
//! default userbuffer methods; the recipes tune them (`tp_overlap` configs with fewer
//! multiprocessors and no margin on the bulk overlaps: the GPT-3 recipes'
//! `ub_tp_comm_overlap_cfg` in `nemo_megatron/gpt3_175b_hydra.yaml`), which the model does not
//! follow (`unmodelled`; docs/model.md, "Overlaps", gives what following them would do). Runs that need a model pipescope cannot describe are recorded in
//! [`LATER`] with their published figures, not run.

use crate::scenario_common::read_back;
use pipescope::solve;
use pipescope::{
    AttentionBackend, Catalog, Partition, Precision, Scenario, ScenarioOverrides, ScheduleKind,
    Strategy, megatron_args,
};

/// One published run.
struct Run {
    label: &'static str,
    model: &'static str,
    /// (t, p, d, VP); VP 1 is plain 1F1B.
    layout: (u32, u32, u32, u32),
    /// Context-parallel size.
    cp: u32,
    /// (sequence, micro-batch size, global batch).
    batch: (u64, u64, u64),
    /// 2 where the recipe reduces gradients in bf16 (`grad_sync_dtype: bf16`), else 4.
    grad_bytes: u32,
    /// The recipe's attention kernels: cuDNN's fused attention (`NVTE_FUSED_ATTN=1`, or
    /// unset) or FlashAttention-2 (`NVTE_FUSED_ATTN=0`).
    attention: AttentionBackend,
    /// Whether the recipe fuses the vocabulary-parallel cross-entropy
    /// (`cross_entropy_loss_fusion: true`). NeMo's `build_model_parallel_config` takes the
    /// key from the model config and otherwise Megatron-Core's default, `False`
    /// (`model_parallel_config.py`, core_r0.8.0 to 0.10.0; Megatron-Core 0.7.0 of the 24.11
    /// GPT-3 run has no fused loss at all): the GPT-3 hydra configs (dgxc-benchmarking
    /// v24.11.1 and v25.04 `gpt3_175b_hydra.yaml`) and the Llama 2 configs of the 24.07
    /// launcher (NeMo-Framework-Launcher tag 24.07 `llama2_{7b,13b,70b}.yaml`; the key
    /// arrived there on 2024-08-02) do not set it; the Llama 3.1 configs set it true.
    loss_fusion: bool,
    /// Whether the interleaved schedule reduces each model chunk's gradients as one unit
    /// (`plan.align_grad_reduce`): NeMo 1.0 sets a gradient-sync function for its
    /// distributed Adam (`fwd_bwd_step` in `megatron_gpt_model.py`: `grad_sync_func =
    /// self.reduce_overlap_gradients`); NeMo 2.0 (the 25.04 Llama 3.1 run) sets one only
    /// where its data-parallel configuration has `align_grad_reduce` (`extract_ddp_funcs`,
    /// `nemo/lightning/megatron_parallel.py`), a field Megatron-Core's
    /// `DistributedDataParallelConfig` does not have (core_r0.10.0 to 0.12.0).
    align_grad_reduce: bool,
    /// Published seconds per iteration in bf16 and in fp8 (`None` where not published).
    bf16_s: Option<f64>,
    fp8_s: Option<f64>,
    /// Where the figures and the config come from.
    source: &'static str,
    /// What the run does that pipescope does not model.
    unmodelled: &'static str,
}

const TP_OVERLAP: &str = "the recipe's tuned userbuffer configuration";
const NOTHING: &str = "-";

/// The runs pipescope can express.
const RUNS: [Run; 10] = [
    Run {
        label: "GPT-3 175B, 128 GPUs",
        model: "gpt3-175b",
        layout: (4, 8, 4, 6),
        cp: 1,
        batch: (2048, 1, 256),
        grad_bytes: 2,
        attention: AttentionBackend::Cudnn,
        loss_fusion: false,
        align_grad_reduce: true,
        bf16_s: Some(8.309),
        fp8_s: Some(5.626),
        source: "dgxc-benchmarking 25.04, nemo_megatron/README_175b.md (128 GPUs)",
        unmodelled: TP_OVERLAP,
    },
    Run {
        label: "GPT-3 175B, 512 GPUs",
        model: "gpt3-175b",
        layout: (4, 8, 16, 6),
        cp: 1,
        batch: (2048, 1, 1024),
        grad_bytes: 2,
        attention: AttentionBackend::Cudnn,
        loss_fusion: false,
        align_grad_reduce: true,
        bf16_s: Some(8.42),
        fp8_s: Some(5.774),
        source: "dgxc-benchmarking 25.04, nemo_megatron/README_175b.md (512 GPUs)",
        unmodelled: TP_OVERLAP,
    },
    Run {
        label: "GPT-3 175B VP12, 128 GPUs",
        model: "gpt3-175b",
        layout: (4, 8, 4, 12),
        cp: 1,
        batch: (2048, 1, 256),
        grad_bytes: 2,
        // The 24.11 recipe's launch.sh exports NVTE_FUSED_ATTN=0 (from 25.02 on, 1).
        attention: AttentionBackend::Flash2,
        loss_fusion: false,
        align_grad_reduce: true,
        bf16_s: Some(8.91),
        fp8_s: Some(5.92),
        source: "dgxc-benchmarking 24.11, nemo_megatron/README_175b.md (128 GPUs)",
        unmodelled: TP_OVERLAP,
    },
    Run {
        label: "Llama 2 7B, 8 GPUs",
        model: "llama2-7b",
        layout: (1, 1, 8, 1),
        cp: 1,
        batch: (4096, 1, 128),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: false,
        align_grad_reduce: true,
        bf16_s: None,
        // 16847 tokens/s/GPU
        fp8_s: Some(128.0 * 4096.0 / (16847.0 * 8.0)),
        source: "NeMo 24.07 performance summary, LLAMA2-7B",
        unmodelled: NOTHING,
    },
    Run {
        label: "Llama 2 13B, 16 GPUs",
        model: "llama2-13b",
        layout: (1, 4, 4, 10),
        cp: 1,
        batch: (4096, 1, 128),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: false,
        align_grad_reduce: true,
        bf16_s: None,
        // 8646 tokens/s/GPU
        fp8_s: Some(128.0 * 4096.0 / (8646.0 * 16.0)),
        source: "NeMo 24.07 performance summary, LLAMA2-13B",
        unmodelled: NOTHING,
    },
    Run {
        label: "Llama 2 70B, 64 GPUs",
        model: "llama2-70b",
        layout: (4, 4, 4, 20),
        cp: 1,
        batch: (4096, 1, 128),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: false,
        align_grad_reduce: true,
        bf16_s: None,
        // 1707 tokens/s/GPU
        fp8_s: Some(128.0 * 4096.0 / (1707.0 * 64.0)),
        source: "NeMo 24.07 performance summary, LLAMA2-70B",
        unmodelled: TP_OVERLAP,
    },
    Run {
        label: "Llama 3.1 70B, 64 GPUs",
        model: "llama3.1-70b",
        layout: (4, 8, 2, 5),
        cp: 1,
        batch: (8192, 1, 128),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: true,
        align_grad_reduce: false,
        bf16_s: None,
        fp8_s: Some(9.86),
        source: "dgxc-benchmarking 25.04, llama3.1/README.md (70b FP8, 64 GPUs)",
        unmodelled: TP_OVERLAP,
    },
    Run {
        label: "Llama 3.1 8B cp2, 8 GPUs",
        model: "llama3.1-8b",
        layout: (1, 1, 4, 1),
        cp: 2,
        batch: (8192, 1, 128),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: true,
        align_grad_reduce: true,
        bf16_s: Some(12.91),
        fp8_s: Some(9.67),
        source: "dgxc-benchmarking 24.09, llama3.1/README_8b.md (8 GPUs)",
        unmodelled: NOTHING,
    },
    Run {
        label: "Llama 3.1 70B cp2, 64 GPUs",
        model: "llama3.1-70b",
        layout: (4, 4, 2, 5),
        cp: 2,
        batch: (8192, 1, 128),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: true,
        align_grad_reduce: true,
        bf16_s: Some(14.72),
        fp8_s: Some(11.01),
        source: "dgxc-benchmarking 24.09, llama3.1/README_70b.md (64 GPUs)",
        unmodelled: TP_OVERLAP,
    },
    Run {
        label: "Llama 3.1 405B cp2, 576 GPUs",
        model: "llama3.1-405b",
        layout: (8, 9, 4, 7),
        cp: 2,
        batch: (8192, 1, 252),
        grad_bytes: 4,
        attention: AttentionBackend::Cudnn,
        loss_fusion: true,
        align_grad_reduce: true,
        bf16_s: Some(17.20),
        fp8_s: Some(11.24),
        source: "dgxc-benchmarking 24.09, llama3.1/README_405b.md (576 GPUs)",
        unmodelled: TP_OVERLAP,
    },
];

/// Published H100 runs with both precisions that need what another part of pipescope adds
/// next, kept here with their published figures so that they become checks when it lands:
/// (label, config, bf16 s, fp8 s, what is missing). (The 25.04 Llama 3.1 70B pair runs its
/// two precisions on different layouts; its bf16 run is the 24.09 layout at 14.66 s, its fp8
/// run is in [`RUNS`].)
pub const LATER: [(&str, &str, f64, f64, &str); 3] = [
    (
        "Nemotron-4 15B, 16 GPUs",
        "t4 p1 d4, s 4096, mbs 4, gbs 64 (dgxc 24.11)",
        2.83,
        2.08,
        "a squared-ReLU (non-gated) MLP without biases",
    ),
    (
        "Llama 3.1 405B, 512 GPUs",
        "t8 cp2 p8 d4 vp8, s 8192, mbs 1, gbs 256, 126 layers with the embedding and the loss \
         each a layer's slot (dgxc 25.05)",
        19.81,
        13.02,
        "the recipe's memory settings: pipescope's fp8 plan of this layout needs 86 GiB a GPU, \
         the bf16 one comes out at 17.77 s (-10.3 %)",
    ),
    (
        "Nemotron-4 340B, 128 GPUs",
        "t8 p8 d2 vp12, s 4096, mbs 1, gbs 32 (dgxc 24.11)",
        4.61,
        3.16,
        "a squared-ReLU (non-gated) MLP without biases",
    ),
];

/// The scenario of `run` in `precision`.
fn scenario(run: &Run, precision: Precision) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    let (t, p, d, vp) = run.layout;
    let (seq, b, gbs) = run.batch;
    let schedule = if vp > 1 {
        ScheduleKind::Interleaved
    } else {
        ScheduleKind::OneFOneB
    };
    ScenarioOverrides {
        model: Some(run.model.into()),
        gpu: Some("h100-80gb".into()),
        tp: Some(t),
        pp: Some(p),
        dp: Some(d),
        cp: Some(run.cp),
        sp: Some(t > 1),
        chunks: Some(vp),
        schedule: Some(schedule),
        strategy: Some(Strategy::None),
        seq_len: Some(seq),
        micro_batch_size: Some(b),
        global_batch: Some(gbs),
        distributed_optimizer: Some(true),
        overlap_grad_reduce: Some(true),
        overlap_param_gather: Some(true),
        tp_comm_overlap: Some(t > 1),
        grad_bytes: Some(run.grad_bytes),
        partition: Some(Partition::Even),
        precision: Some(precision),
        attention_backend: Some(run.attention),
        reserve_gib: Some(0.0),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s.plan.cross_entropy_loss_fusion = run.loss_fusion;
    s.plan.align_grad_reduce = run.align_grad_reduce;
    s
}

/// The model's iteration time of `run` in `precision`.
fn model_s(run: &Run, precision: Precision) -> f64 {
    solve(&scenario(run, precision)).unwrap().iteration_time_s
}

/// With the gradient-sync function NeMo 1.0 and Megatron-LM set, Megatron-Core's interleaved
/// schedule reduces each model chunk's gradients as one unit after the chunk's last backward
/// (`plan.align_grad_reduce`), so the last chunk's whole reduction waits for the end of the
/// pipeline where a bucket's would: on the 25.04 GPT-3 run (two layers a chunk, 1.8 GB of
/// bf16 gradients reduce-scattered over 4 nodes, about 29 ms a chunk) the iteration grows
/// by more than a bucket's reduction (40 M parameters, 1.3 ms) and by less than two chunks'.
/// The setting survives a round trip through a scenario file, and `export megatron` writes
/// `--no-align-grad-reduce` where it is off (Megatron-LM aligns unless told not to).
#[test]
fn an_aligned_reduction_waits_for_each_chunk_whole() {
    let mut s = scenario(&RUNS[0], Precision::Bf16);
    assert!(s.plan.align_grad_reduce);
    let out = solve(&s).unwrap();
    let aligned = out.iteration_time_s;
    let args = megatron_args(&s, &out).unwrap();
    assert!(args.contains("--overlap-grad-reduce") && !args.contains("--no-align-grad-reduce"));
    s.plan.align_grad_reduce = false;
    let out = solve(&s).unwrap();
    let bucketed = out.iteration_time_s;
    assert!(
        megatron_args(&s, &out)
            .unwrap()
            .contains("--no-align-grad-reduce")
    );
    let grown = aligned - bucketed;
    println!(
        "aligned {aligned:.4} s, bucketed {bucketed:.4} s, +{:.1} ms",
        1e3 * grown
    );
    assert!(grown > 0.0013 && grown < 0.058, "grown by {grown} s");
    s.name = "aligned-round-trip".into();
    assert_eq!(read_back(&s), s);
}

/// One compared figure: label, model, published, signed relative error, and the run it is of.
type Row = (String, f64, f64, f64, &'static Run);

/// Every published time and every published fp8 speed-up against the model's.
fn errors() -> (Vec<Row>, Vec<Row>) {
    let mut times = Vec::new();
    let mut speedups = Vec::new();
    for run in &RUNS {
        let bf16 = run.bf16_s.map(|want| (model_s(run, Precision::Bf16), want));
        let fp8 = run.fp8_s.map(|want| (model_s(run, Precision::Fp8), want));
        for (tag, pair) in [("bf16", bf16), ("fp8", fp8)] {
            if let Some((got, want)) = pair {
                let label = format!("{} {tag}", run.label);
                times.push((label, got, want, (got - want) / want, run));
            }
        }
        if let (Some((gb, wb)), Some((g8, w8))) = (bf16, fp8) {
            let (got, want) = (gb / g8, wb / w8);
            speedups.push((run.label.to_string(), got, want, (got - want) / want, run));
        }
    }
    (times, speedups)
}

#[test]
fn published_h100_runs() {
    let (times, speedups) = errors();
    for (label, got, want, err, run) in &times {
        println!(
            "{label:30} published {want:7.3} s  model {got:7.3} s  error {:+6.1} %   ({}; not modelled: {})",
            100.0 * err,
            run.source,
            run.unmodelled
        );
    }
    let mean = times.iter().map(|r| r.3.abs()).sum::<f64>() / times.len() as f64;
    let worst = times.iter().map(|r| r.3.abs()).fold(0.0, f64::max);
    println!(
        "mean |error| {:.1} %, largest {:.1} %",
        100.0 * mean,
        100.0 * worst
    );
    for (label, got, want, err, _) in &speedups {
        println!(
            "{label:30} fp8 speed-up published {want:.3}  model {got:.3}  error {:+.1} %",
            100.0 * err
        );
        assert!(err.abs() < SPEEDUP_BOUND, "{label}: speed-up error {err}");
    }
    for (label, config, bf16, fp8, missing) in LATER {
        println!("later: {label:30} {config}: bf16 {bf16} s, fp8 {fp8} s (needs {missing})");
    }
    assert!(mean < MEAN_BOUND, "mean error {mean}");
    assert!(worst < RUN_BOUND, "largest error {worst}");
    // No run comes out more than 2 % slower than published (the model leaves time out,
    // it does not add any).
    assert!(
        times.iter().all(|r| r.3 < 0.02),
        "a run came out slower than published"
    );
}

/// The fp8 speed-up of every run with both precisions is within 7 % of the published one
/// (within 5.5 % today: Llama 3.1 8B's and GPT-3 VP12's at -5.5 %).
const SPEEDUP_BOUND: f64 = 0.07;

/// The mean absolute error of the times today is 7.02 % (7.2 % with each interleaved chunk's
/// gradient reduction started as its buckets fill, 7.5 % with that and every recipe's loss
/// fused, 8.5 % before the userbuffers overlaps' split GEMMs were timed at their chunks'
/// size), just above the 7 % the model aims at:
/// docs/model.md ("Calibration") says what the H100 runs spend that the model leaves out.
/// This bound only keeps a change from making it worse unnoticed.
const MEAN_BOUND: f64 = 0.072;

/// The largest error of one run (15.1 % today, the 24.11 GPT-3 run with 12 virtual stages;
/// 15.2 % with its chunks' reductions started as their buckets fill, 15.5 % with its loss
/// fused as well, 15.7 % with that and the split GEMMs timed whole, 16.9 % with
/// that and cuDNN's attention, which its recipe turned off).
const RUN_BOUND: f64 = 0.155;
