//! Published Megatron-Core MoE training runs (BF16, sequence 4096 unless said, forced-balanced
//! routing, the distributed optimizer with overlapped gradient reduction), as checks of the
//! model: nothing is fitted to them (docs/model.md, "Mixtures of experts"). Step times are
//! the published ones, or the published model TFLOP/s or tokens/s turned into a step with
//! Megatron-LM's own FLOPs formula (`num_floating_point_operations`), which reproduces the
//! Megatron-Bridge tables' TFLOP/s-to-tokens/s ratios to 0.3 %.
//!
//! Sources:
//! - ModelZoo: NVIDIA's Megatron-MoE-ModelZoo (github.com/yanring/Megatron-MoE-ModelZoo),
//!   `best_practice/qwen3/readme.md` (H100 table: 256 GPUs, DeepEP unless said; long-context
//!   table, forced balance; GB200 table), `best_practice/mixtral/run_mixtral_8x22B.sh` ("around
//!   465 TFLOPS" forced balance, alltoall dispatcher, with `runtime_configs/benchmarking/
//!   runtime.conf`: t 2, p 8, v 7, ep 8 on 16 nodes, GBS 256).
//! - Megatron-Bridge: `skills/nemo-mbridge-perf-moe-comm-overlap/SKILL.md` and
//!   `skills/nemo-mbridge-perf-moe-hardware-configs/card.yaml` (Qwen3-30B-A3B on H100),
//!   `docs/performance-summary-archive.md`, 25.11 NeMo container, DGX-GB200 BF16 rows
//!   (tokens/s/GPU).
//!
//! Today (signed error of pipescope's step against the published one): Qwen3-235B t2 p8 v4
//! ep32 -8.0 % (its loss unfused, as the 2025 runs ran it: `modelzoo_2025_step_s`),
//! Qwen3-30B ep16 +3.6 % (as its recipe ran it: `bridge_qwen3_30b`), Qwen3-30B ep8 b4 full -9.5 %, Mixtral 8x22B -13.0 %,
//! Qwen3-235B 16k/32k/64k/128k -8.8/-3.3/+1.3/+3.6 %, GB200 Qwen3-235B p8 ep8 +2.5 % and p8
//! v3 ep32 +0.2 %, GB200 DeepSeek-V3 -12 %; mean 6.0 % (the goal is 15 %). The ModelZoo's
//! Qwen3-235B runs run the split their configuration asks (`qwen3_235b_split`). DeepEP's dispatch
//! and combine are costed at their published rates (docs/model.md, "All-to-all cost"), and
//! the experts' weight-gradient GEMMs read and write fp32 main gradients (gradient
//! accumulation fusion), and on H100 the experts' grouped GEMMs run at Transformer Engine's
//! measured grouped rate (`grouped_matrix`); each run is kept within 20 % so that a change that makes one worse
//! is seen. Not within reach (the ignored tests below): the three other Qwen3-235B layouts
//! on 256 H100s, t2 p1 ep8 under Megatron-FSDP (+17 %), t2 p32 v3 ep8 (-21 %) and t4 p8 v4
//! ep8 (-41 %); so the layouts' ranking is wrong. Nor is the measured gain of the
//! all-to-all overlap: every step of Megatron's combined 1F1B has more compute than
//! all-to-all on both measured runs, so pipescope hides all of each paired all-to-all but
//! the multiprocessors its kernels hold (85 % on the 235B run, DeepEP's 20 of 132; 76 % on
//! the 30B run, HybridEP's 32), where the runs hide 36 to 40 %; what they lose
//! (kernels slowed beside each other, the host launching both halves) is not modelled: the
//! measurements of either found outside these runs are too small to close the gaps (a
//! launch's measured host cost binds none of them, tested below; docs/model.md).

#![allow(clippy::unwrap_used)]

use pipescope::{Catalog, Scenario, ScenarioOverrides, ScheduleKind, Strategy, Zero};

/// The H100 runs' common settings (ZeRO 1, overlapped gradient reduction, FlashAttention,
/// the whole 80 GB less the runtime's share).
fn h100(o: ScenarioOverrides) -> ScenarioOverrides {
    ScenarioOverrides {
        gpu: Some("h100-80gb".into()),
        seq_len: o.seq_len.or(Some(4096)),
        micro_batch_size: o.micro_batch_size.or(Some(1)),
        zero: o.zero.or(Some(Zero::Optimizer)),
        overlap_grad_reduce: Some(true),
        flash: Some(true),
        budget_gib: Some(79.0),
        ..o
    }
}

/// The GB200 NVL72 runs' common settings (the whole memory as the budget).
fn gb200(o: ScenarioOverrides) -> ScenarioOverrides {
    ScenarioOverrides {
        gpu: Some("gb200-186gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        zero: Some(Zero::Optimizer),
        overlap_grad_reduce: Some(true),
        flash: Some(true),
        deepep: Some(true),
        reserve_gib: Some(0.0),
        ..o
    }
}

/// What every ModelZoo model configuration sets besides (`model_configs/benchmarking/*.yaml`
/// from their first commits): `--overlap-param-gather` with the distributed optimizer.
fn modelzoo(o: ScenarioOverrides) -> ScenarioOverrides {
    ScenarioOverrides {
        overlap_param_gather: Some(true),
        ..o
    }
}

fn step_s(o: ScenarioOverrides) -> f64 {
    step_with(o, |_| {})
}

/// The step of a run of the ModelZoo's Qwen3 H100 table (May 2025): its model configuration
/// then (`model_configs/benchmarking/Qwen3-235B-A22B.yaml` at b06a6d8 and the table's commit
/// 8017e11) does not set `--cross-entropy-loss-fusion` (added in 274316a, August 2025), and
/// Megatron-LM's flag is off by default (`arguments.py`, `store_true`), so these runs
/// computed the loss with Megatron-Core's unfused vocabulary-parallel cross-entropy.
fn modelzoo_2025_step_s(o: ScenarioOverrides) -> f64 {
    step_with(o, |s| s.plan.cross_entropy_loss_fusion = false)
}

/// The Megatron-Bridge Qwen3-30B-A3B runs on 16 H100s (ep 16, t 1, p 1, GBS 1024, no
/// recomputation) as their recipe set them at the commit that published the measurement
/// (Megatron-Bridge 7ded17dae, July 2026, `perf_recipes/qwen/h100/qwen3_moe.py` on
/// `recipes/qwen/h100/qwen3_moe.py`, with `perf_recipes/_common.py`'s
/// `_benchmark_common`): HybridEP on 32 multiprocessors (`moe_hybridep_num_sms = 32`, which
/// Megatron-Core of then routes to the dispatch and combine kernels as
/// `moe_flex_dispatcher_num_sms`), costed at DeepEP's published rates (`--deepep`), and
/// gradients kept and reduced in bf16 (`ddp.grad_reduce_in_fp32 = False`, so the experts'
/// weight-gradient GEMMs accumulate into 16-bit main gradients). `overlap` is the
/// skill's A/B switch (`overlap_moe_expert_parallel_comm`, delayed weight gradients off);
/// both runs set `CUDA_DEVICE_MAX_CONNECTIONS=32`, which at t 1 changes nothing in the
/// model.
fn bridge_qwen3_30b(overlap: bool) -> ScenarioOverrides {
    h100(ScenarioOverrides {
        model: Some("qwen3-30b-a3b".into()),
        tp: Some(1),
        pp: Some(1),
        dp: Some(16),
        ep: Some(16),
        global_batch: Some(1024),
        deepep: Some(true),
        grad_bytes: Some(2),
        strategy: Some(Strategy::None),
        moe_a2a_overlap: Some(overlap),
        device_max_connections: Some(32),
        ..Default::default()
    })
}

/// HybridEP's multiprocessors in the Megatron-Bridge Qwen3-30B-A3B runs
/// ([`bridge_qwen3_30b`]; a file-only key, `plan.flex_dispatcher_num_sms`).
const BRIDGE_HYBRIDEP_SMS: u32 = 32;

/// The step of a Megatron-Bridge Qwen3-30B-A3B run ([`bridge_qwen3_30b`]).
fn bridge_qwen3_30b_step_s(overlap: bool) -> f64 {
    step_with(bridge_qwen3_30b(overlap), |s| {
        s.plan.flex_dispatcher_num_sms = BRIDGE_HYBRIDEP_SMS;
    })
}

/// The scenario the overrides `o` describe, on the GPT-3 175B preset (every key a check
/// depends on is among the overrides).
fn scenario(o: ScenarioOverrides) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    o.apply(&mut s, &c).unwrap();
    s
}

/// The step of the scenario `o` describes after `edit` (for the file-only keys), asserted
/// feasible.
fn step_with(o: ScenarioOverrides, edit: impl FnOnce(&mut Scenario)) -> f64 {
    let mut s = scenario(o);
    edit(&mut s);
    let out = pipescope::solve(&s).unwrap();
    assert!(out.feasible, "{:?}", out.infeasible_reason);
    out.iteration_time_s
}

/// A step of `gbs` sequences of `seq` tokens on `gpus` GPUs at `tflops` model TFLOP/s a GPU,
/// with `flops_per_token` from Megatron-LM's formula.
fn step_at(flops_per_token: f64, seq: f64, gbs: f64, gpus: f64, tflops: f64) -> f64 {
    gbs * seq * flops_per_token / (tflops * 1e12 * gpus)
}

/// The split the ModelZoo's Qwen3-235B-A22B runs use: its `model_configs/benchmarking/
/// Qwen3-235B-A22B.yaml` sets `--account-for-embedding-in-pipeline-split` and
/// `--account-for-loss-in-pipeline-split` (from the table's commit on), so Megatron counts the
/// embedding and the loss as a layer each and splits the 94 layers and those two evenly over
/// the `stages` virtual stages (Megatron's `--pipeline-model-parallel-layout` grammar).
fn qwen3_235b_split(stages: usize) -> String {
    assert_eq!(96 % stages, 0, "96 slots over {stages} stages");
    let per = 96 / stages;
    (0..stages)
        .map(|i| {
            let (first, last) = (i == 0, i + 1 == stages);
            let layers = per - usize::from(first) - usize::from(last);
            let mut stage = String::new();
            if first {
                stage.push('E');
            }
            stage += &"t".repeat(layers);
            if last {
                stage.push('L');
            }
            stage
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// Megatron-LM's model FLOPs per token (forward and backward) of Qwen3-235B-A22B at `seq`
/// (`transformer_flops`: 94 layers of GQA attention, 64 heads of 128, 4 query groups, and
/// top-8 of experts of 1536; vocabulary 151936; the causal core attention halved).
fn qwen3_235b_flops(seq: f64) -> f64 {
    let (h, l, v) = (4096.0, 94.0, 151936.0);
    let (q, kv) = (64.0 * 128.0, 4.0 * 128.0);
    let attn = 6.0 * (h * (q + 2.0 * kv) + q * h);
    let moe = 6.0 * h * 1536.0 * 8.0 * 3.0;
    l * (attn + moe) + 6.0 * h * v + l * 6.0 * q * seq
}

/// A ModelZoo Qwen3-235B-A22B run on H100s with DeepEP and sequence parallelism, its
/// layout and batch in `o`.
fn modelzoo_qwen3_235b(o: ScenarioOverrides) -> ScenarioOverrides {
    modelzoo(h100(ScenarioOverrides {
        model: Some("qwen3-235b-a22b".into()),
        sp: Some(true),
        deepep: Some(true),
        ..o
    }))
}

/// The runs inside the model's reach, each `(name, pipescope's step, published step)`.
fn runs_within_reach() -> Vec<(&'static str, f64, f64)> {
    let long = |seq: u64, cp: u32, tflops: f64| {
        // The long-context table (2026) ran the configuration that sets
        // `--cross-entropy-loss-fusion`.
        let got = step_s(modelzoo_qwen3_235b(ScenarioOverrides {
            seq_len: Some(seq),
            tp: Some(4),
            cp: Some(cp),
            pp: Some(8),
            dp: Some(8 / cp),
            ep: Some(8),
            global_batch: Some(256),
            schedule: Some(ScheduleKind::Interleaved),
            chunks: Some(4),
            layout: Some(qwen3_235b_split(32)),
            strategy: Some(Strategy::Named),
            recompute_units: Some(vec!["layernorm".into(), "moe".into()]),
            ..Default::default()
        }));
        let want = step_at(
            qwen3_235b_flops(seq as f64),
            seq as f64,
            256.0,
            256.0,
            tflops,
        );
        (got, want)
    };
    let mut out = Vec::new();
    // ModelZoo, H100: t 2, p 8, v 4, ep 32, norms and the experts' activation recomputed.
    let a = modelzoo_2025_step_s(modelzoo_qwen3_235b(ScenarioOverrides {
        tp: Some(2),
        pp: Some(8),
        dp: Some(16),
        ep: Some(32),
        global_batch: Some(2048),
        schedule: Some(ScheduleKind::Interleaved),
        chunks: Some(4),
        layout: Some(qwen3_235b_split(32)),
        strategy: Some(Strategy::Named),
        recompute_units: Some(vec!["layernorm".into(), "moe_act".into()]),
        ..Default::default()
    }));
    out.push(("qwen3-235b t2 p8 v4 ep32", a, 19.7));
    // ModelZoo long context (256 H100s, t 4, p 8, v 4, ep 8, forced balance).
    for (seq, cp, tflops, name) in [
        (16384, 1, 295.0, "qwen3-235b 16k cp1"),
        (32768, 2, 335.0, "qwen3-235b 32k cp2"),
        (65536, 4, 368.0, "qwen3-235b 64k cp4"),
        (131072, 8, 389.0, "qwen3-235b 128k cp8"),
    ] {
        let (got, want) = long(seq, cp, tflops);
        out.push((name, got, want));
    }
    // Megatron-Bridge, 16 H100s: ep 16, HybridEP (as DeepEP), no overlap: 24.714 s.
    out.push(("qwen3-30b ep16", bridge_qwen3_30b_step_s(false), 24.714));
    // Megatron-Bridge card, 32 H100s: ep 8, micro-batch 4, full recompute, DeepEP, ~210
    // TFLOP/s (48 layers, 32 heads, experts of 768).
    let q30_flops = {
        let (h, q, kv) = (2048.0, 32.0 * 128.0, 4.0 * 128.0);
        48.0 * (6.0 * (h * (q + 2.0 * kv) + q * h) + 6.0 * h * 768.0 * 24.0)
            + 6.0 * h * 151936.0
            + 48.0 * 6.0 * q * 4096.0
    };
    let q30_full = step_s(h100(ScenarioOverrides {
        model: Some("qwen3-30b-a3b".into()),
        micro_batch_size: Some(4),
        tp: Some(1),
        pp: Some(1),
        dp: Some(32),
        ep: Some(8),
        global_batch: Some(256),
        deepep: Some(true),
        strategy: Some(Strategy::Full),
        ..Default::default()
    }));
    out.push((
        "qwen3-30b ep8 b4 full",
        q30_full,
        step_at(q30_flops, 4096.0, 256.0, 32.0, 210.0),
    ));
    // ModelZoo, 128 H100s: Mixtral 8x22B, t 2, p 8, v 7, ep 8, alltoall, ~465 TFLOP/s.
    let mixtral_flops = {
        let (h, q, kv) = (6144.0, 48.0 * 128.0, 8.0 * 128.0);
        56.0 * (6.0 * (h * (q + 2.0 * kv) + q * h) + 6.0 * h * 16384.0 * 6.0)
            + 6.0 * h * 32000.0
            + 56.0 * 6.0 * q * 4096.0
    };
    let mixtral = step_s(modelzoo(h100(ScenarioOverrides {
        model: Some("mixtral-8x22b".into()),
        tp: Some(2),
        sp: Some(true),
        pp: Some(8),
        dp: Some(8),
        ep: Some(8),
        global_batch: Some(256),
        schedule: Some(ScheduleKind::Interleaved),
        chunks: Some(7),
        strategy: Some(Strategy::None),
        ..Default::default()
    })));
    out.push((
        "mixtral-8x22b t2 p8 v7 ep8",
        mixtral,
        step_at(mixtral_flops, 4096.0, 256.0, 128.0, 465.0),
    ));
    // GB200 NVL72, 256 GPUs. ModelZoo: Qwen3-235B t 1, p 8, ep 8, GBS 8192, HybridEP, 750
    // TFLOP/s. Megatron-Bridge 25.11: Qwen3-235B p 8, v 3, ep 32, GBS 8192, 4916 tokens/s a
    // GPU; DeepSeek-V3 without MTP p 4, v 4, ep 64, GBS 4096, 3139 tokens/s a GPU.
    let gb_q235 = step_s(modelzoo(gb200(ScenarioOverrides {
        model: Some("qwen3-235b-a22b".into()),
        tp: Some(1),
        pp: Some(8),
        dp: Some(32),
        ep: Some(8),
        global_batch: Some(8192),
        layout: Some(qwen3_235b_split(8)),
        strategy: Some(Strategy::None),
        ..Default::default()
    })));
    out.push((
        "gb200 qwen3-235b p8 ep8",
        gb_q235,
        step_at(qwen3_235b_flops(4096.0), 4096.0, 8192.0, 256.0, 750.0),
    ));
    let gb_q235_v3 = step_s(gb200(ScenarioOverrides {
        model: Some("qwen3-235b-a22b".into()),
        tp: Some(1),
        pp: Some(8),
        dp: Some(32),
        ep: Some(32),
        global_batch: Some(8192),
        schedule: Some(ScheduleKind::Interleaved),
        chunks: Some(3),
        strategy: Some(Strategy::None),
        ..Default::default()
    }));
    out.push((
        "gb200 qwen3-235b p8 v3 ep32",
        gb_q235_v3,
        8192.0 * 4096.0 / (4916.0 * 256.0),
    ));
    let gb_dsv3 = step_s(gb200(ScenarioOverrides {
        model: Some("deepseek-v3".into()),
        mtp_layers: Some(0),
        tp: Some(1),
        pp: Some(4),
        dp: Some(64),
        ep: Some(64),
        global_batch: Some(4096),
        schedule: Some(ScheduleKind::Interleaved),
        chunks: Some(4),
        strategy: Some(Strategy::None),
        ..Default::default()
    }));
    out.push((
        "gb200 deepseek-v3 p4 v4 ep64",
        gb_dsv3,
        4096.0 * 4096.0 / (3139.0 * 256.0),
    ));
    out
}

fn report(runs: &[(&str, f64, f64)]) -> (String, f64) {
    let mut text = String::new();
    let mut sum = 0.0;
    for (name, got, want) in runs {
        let err = (got - want) / want;
        sum += err.abs();
        text += &format!(
            "{name}: {got:.2} s vs {want:.2} s ({:+.1} %)\n",
            100.0 * err
        );
    }
    (text, sum / runs.len() as f64)
}

#[test]
fn published_moe_runs_within_the_models_reach_are_within_15_percent_on_average() {
    let runs = runs_within_reach();
    let (text, mean) = report(&runs);
    eprintln!("{text}mean {:.1} %", 100.0 * mean);
    for (name, got, want) in &runs {
        let err = (got - want) / want;
        assert!(err.abs() <= 0.20, "{name} off by {err:+.3}:\n{text}");
    }
    assert!(mean <= 0.15, "mean error {mean:.3}:\n{text}");
}

/// The four other layouts of Qwen3-235B-A22B on the same 256 H100s (ModelZoo H100 table).
fn qwen3_235b_layouts() -> Vec<(&'static str, f64, f64)> {
    qwen3_235b_layout_runs()
        .into_iter()
        .map(|r| (r.name, modelzoo_2025_step_s(r.overrides), r.step_s))
        .collect()
}

/// One row of the ModelZoo's H100 table of Qwen3-235B-A22B layouts: the scenario as the
/// check runs it, the published step and the table's expert columns.
struct LayoutRun {
    name: &'static str,
    overrides: ScenarioOverrides,
    step_s: f64,
    /// The table's `ETP` column (every row: 1).
    etp: u32,
    /// The table's `EDP` column: the expert data-parallel size `t d / (ep etp)`.
    edp: u64,
}

/// The four layouts of the ModelZoo's H100 table (`qwen3_235b_layouts`), unsolved.
fn qwen3_235b_layout_runs() -> Vec<LayoutRun> {
    let run = |o: ScenarioOverrides| {
        modelzoo(h100(ScenarioOverrides {
            model: Some("qwen3-235b-a22b".into()),
            sp: Some(true),
            global_batch: Some(2048),
            ..o
        }))
    };
    let named = Some(vec!["layernorm".into(), "moe_act".into()]);
    let row = |name, overrides, step_s, edp| LayoutRun {
        name,
        overrides,
        step_s,
        etp: 1,
        edp,
    };
    vec![
        row(
            "t2 p8 v4 ep32 (DeepEP)",
            run(ScenarioOverrides {
                tp: Some(2),
                pp: Some(8),
                dp: Some(16),
                ep: Some(32),
                deepep: Some(true),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(4),
                layout: Some(qwen3_235b_split(32)),
                strategy: Some(Strategy::Named),
                recompute_units: named.clone(),
                ..Default::default()
            }),
            19.7,
            1,
        ),
        row(
            "t2 p1 ep8 FSDP b4 full (DeepEP)",
            run(ScenarioOverrides {
                tp: Some(2),
                pp: Some(1),
                dp: Some(128),
                ep: Some(8),
                micro_batch_size: Some(4),
                zero: Some(Zero::Full),
                deepep: Some(true),
                strategy: Some(Strategy::Full),
                // Megatron-LM 1e057005 refuses `--use-custom-fsdp` at one connection
                // (`arguments.py`: "FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value
                // large than one"), so this run overrode the yaml's 1; its value is not
                // published, and the model treats every value above 1 alike: the least the
                // assert allows.
                device_max_connections: Some(2),
                ..Default::default()
            }),
            17.6,
            32,
        ),
        row(
            // Megatron's pipeline split counts the embedding and the loss as a layer each
            // (`--account-for-embedding-in-pipeline-split`, `...-loss-...`): 96 stages.
            "t2 p32 v3 ep8 (alltoall)",
            run(ScenarioOverrides {
                tp: Some(2),
                pp: Some(32),
                dp: Some(4),
                ep: Some(8),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(3),
                layout: Some(qwen3_235b_split(96)),
                strategy: Some(Strategy::Named),
                recompute_units: named,
                ..Default::default()
            }),
            24.2,
            1,
        ),
        row(
            "t4 p8 v4 ep8 (DeepEP)",
            run(ScenarioOverrides {
                tp: Some(4),
                pp: Some(8),
                dp: Some(8),
                ep: Some(8),
                deepep: Some(true),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(4),
                layout: Some(qwen3_235b_split(32)),
                strategy: Some(Strategy::None),
                ..Default::default()
            }),
            29.0,
            4,
        ),
    ]
}

/// The layout checks fold the experts as the runs did. The ModelZoo's
/// `model_configs/benchmarking/Qwen3-235B-A22B.yaml` sets `--expert-tensor-parallel-size: 1`
/// from its first commit (b06a6d8, the day before the table's) on, where Megatron-Core would
/// otherwise take `t` (`megatron/training/arguments.py` at the table's 1e057005: "Default is
/// None, which will be set to the value of --tensor-model-paralle-size"); the table's ETP
/// and EDP columns agree with the file, and Megatron's default would not: at `etp = t` the t4
/// row would have EDP 1 and the t2 p32 row (8 GPUs a stage, ep 8) could not fold at all.
#[test]
fn qwen3_235b_layouts_fold_the_experts_as_the_tables_etp_and_edp_columns() {
    let c = Catalog::builtin();
    let scenario = |o: &ScenarioOverrides| {
        let mut s = c.scenario("gpt3-175b-16k").unwrap();
        o.apply(&mut s, &c).map(|()| s)
    };
    for r in qwen3_235b_layout_runs() {
        let s = scenario(&r.overrides).unwrap();
        s.validate().unwrap();
        assert_eq!(s.parallel.etp, r.etp, "{}", r.name);
        assert_eq!(s.parallel.expert_data_ranks(), r.edp, "{}", r.name);
        let megatron_default = ScenarioOverrides {
            etp: Some(s.parallel.tp),
            ..r.overrides.clone()
        };
        let folded = scenario(&megatron_default)
            .and_then(|s| s.validate().map(|()| s.parallel.expert_data_ranks()));
        assert!(
            folded.as_ref().map_or(true, |&edp| edp != r.edp),
            "{}: etp = t gives the table's EDP too ({folded:?})",
            r.name
        );
    }
}

/// What t 4 changes in the MoE layer of the t 4, p 8, v 4, ep 8 row, as Megatron-Core of the
/// row's commit (1e057005) runs it at `etp` 1: the dispatchers' tensor group is the expert
/// tensor-parallel group (size 1) and their `tp_ep` group the ep group, so each
/// tensor-parallel rank routes and dispatches its own `s / t` tokens, with nothing gathered
/// over `t` (docs/model.md, "What t 4 changes in a layer"): a t 4 rank's all-to-alls are half
/// a t 2 rank's on the same ep 8 node, and its expert work half as many rows.
#[test]
fn at_t4_each_tensor_parallel_rank_dispatches_only_its_own_tokens() {
    let anatomy = |tp: u32, dp: u32| {
        let s = scenario(modelzoo_qwen3_235b(ScenarioOverrides {
            tp: Some(tp),
            pp: Some(8),
            dp: Some(dp),
            ep: Some(8),
            global_batch: Some(2048),
            ..Default::default()
        }));
        pipescope::Anatomy::build(&s).unwrap()
    };
    let (t4, t2) = (anatomy(4, 8), anatomy(2, 16));
    let ratio = |f: fn(&pipescope::Anatomy) -> f64| f(&t4) / f(&t2);
    let fwd = ratio(|a| a.moe.ep_comm.forward_s);
    let bwd = ratio(|a| a.moe.ep_comm.backward_s);
    assert!((fwd - 0.5).abs() < 1e-12, "{fwd}");
    assert!((bwd - 0.5).abs() < 1e-12, "{bwd}");
}

/// The t 2, p 32, v 3 row's pipeline: 96 virtual stages of one slot each, the embedding alone
/// on the first and the loss alone on the last (Megatron-Core 1e057005's
/// `get_num_layers_to_build` takes one off each, as `qwen3_235b_split` does), every stage
/// boundary crossing the network (a stage is t 2 x d 4, one node). Charged blocking, every
/// transfer exposed, the row stays more than 15 % short of its published 24.2 s: the
/// transfers are not what it lacks (docs/model.md, "The t 2, p 32, v 3 layout").
#[test]
fn p32_v3_puts_embedding_and_loss_alone_and_its_transfers_are_not_what_it_lacks() {
    let split = qwen3_235b_split(96);
    let stages: Vec<&str> = split.split('|').collect();
    assert_eq!(stages.len(), 96);
    assert_eq!((stages[0], stages[95]), ("E", "L"));
    assert!(stages[1..95].iter().all(|&s| s == "t"));
    let p32 = qwen3_235b_layout_runs()
        .into_iter()
        .find(|r| r.name.starts_with("t2 p32"))
        .unwrap();
    let blocking = modelzoo_2025_step_s(ScenarioOverrides {
        p2p: Some(pipescope::P2p::Blocking),
        ..p32.overrides.clone()
    });
    let overlapped = modelzoo_2025_step_s(p32.overrides);
    eprintln!(
        "t2 p32 v3: {overlapped:.2} s with overlapped transfers, {blocking:.2} s blocking, \
         published {} s",
        p32.step_s
    );
    assert!(blocking > overlapped, "{blocking} vs {overlapped}");
    assert!(blocking < 0.85 * p32.step_s, "{blocking} vs {}", p32.step_s);
}

#[test]
#[ignore = "pipescope ranks these layouts wrong: t2 p32 v3 ep8 and t4 p8 v4 ep8 come out 21 \
            and 41 % too fast, t2 p1 ep8 under FSDP 17 % too slow (docs/model.md)"]
fn qwen3_235b_layouts_rank_as_published_and_within_15_percent() {
    let runs = qwen3_235b_layouts();
    let (text, _) = report(&runs);
    eprintln!("{text}");
    for (i, &(a, ga, wa)) in runs.iter().enumerate() {
        for &(b, gb, wb) in &runs[i + 1..] {
            assert_eq!(wa < wb, ga < gb, "{a} against {b}:\n{text}");
        }
    }
    for (name, got, want) in &runs {
        let err = (got - want) / want;
        assert!(err.abs() <= 0.15, "{name} off by {err:+.3}:\n{text}");
    }
}

/// The two measured gains of Megatron's combined-1F1B all-to-all overlap, each
/// `(name, pipescope's step without, with, published step without, with)`: Qwen3-235B t2 p8
/// v4 ep32 on 256 H100s (ModelZoo: 19.7 -> 17.6 s, `--overlap-moe-expert-parallel-comm`),
/// and Qwen3-30B ep16 on 16 H100s (Megatron-Bridge skill: 24.714 -> 20.992 s, plain EP
/// overlap, no delayed weight gradient; its inputs as [`bridge_qwen3_30b`]). The overlapped
/// 235B run sets `CUDA_DEVICE_MAX_CONNECTIONS=32` (the ModelZoo's `sbatch_benchmarking.sh`
/// with `A2A_OVERLAP=1`; 1 without), and so does its check (docs/model.md, "Overlapped
/// all-to-alls").
fn a2a_overlap_gains() -> Vec<(&'static str, f64, f64, f64, f64)> {
    let q235 = |overlap: bool| {
        modelzoo_2025_step_s(modelzoo_qwen3_235b(ScenarioOverrides {
            tp: Some(2),
            pp: Some(8),
            dp: Some(16),
            ep: Some(32),
            global_batch: Some(2048),
            schedule: Some(ScheduleKind::Interleaved),
            chunks: Some(4),
            layout: Some(qwen3_235b_split(32)),
            strategy: Some(Strategy::Named),
            recompute_units: Some(vec!["layernorm".into(), "moe_act".into()]),
            moe_a2a_overlap: Some(overlap),
            device_max_connections: overlap.then_some(32),
            ..Default::default()
        }))
    };
    vec![
        (
            "qwen3-235b t2 p8 v4 ep32",
            q235(false),
            q235(true),
            19.7,
            17.6,
        ),
        (
            "qwen3-30b ep16",
            bridge_qwen3_30b_step_s(false),
            bridge_qwen3_30b_step_s(true),
            24.714,
            20.992,
        ),
    ]
}

#[test]
#[ignore = "pipescope hides more of the all-to-alls than Megatron's combined 1F1B does: \
            -24 % against -10.7 % on Qwen3-235B, -28 % against -15.1 % on Qwen3-30B; what the \
            measured runs lose is not modelled (docs/model.md, \"Mixtures of experts\")"]
fn the_measured_gain_of_the_all_to_all_overlap_within_5_points() {
    let runs = a2a_overlap_gains();
    let mut text = String::new();
    for (name, off, on, want_off, want_on) in &runs {
        text += &format!(
            "{name}: {off:.2} -> {on:.2} s ({:+.1} %), published {want_off} -> {want_on} s \
             ({:+.1} %); with the overlap {:+.1} % off the published step\n",
            100.0 * (on / off - 1.0),
            100.0 * (want_on / want_off - 1.0),
            100.0 * (on / want_on - 1.0)
        );
    }
    eprintln!("{text}");
    for (name, off, on, want_off, want_on) in &runs {
        let gap = (on / off - want_on / want_off).abs();
        assert!(gap <= 0.05, "{name}:\n{text}");
    }
}

#[test]
fn the_all_to_all_overlap_shortens_both_measured_runs() {
    // What the model does get right: both runs are faster with the overlap, and by less
    // than 40 % (the ignored test above checks the size against the measured gains).
    for (name, off, on, ..) in a2a_overlap_gains() {
        assert!(on < off, "{name}: {off} -> {on}");
        assert!(on > 0.6 * off, "{name}: {off} -> {on}");
    }
}

/// The four steps of a layer pair, each `(compute, communication)` seconds.
type Steps = [(f64, f64); 4];

/// Per MoE layer of the two measured overlapped runs, the four steps of Megatron's combined
/// 1F1B (`TransformerLayerSchedulePlan.run`), under both placements of the weight gradients:
/// inside their backwards, as without `--delay-wgrad-compute` (the backward's expert W in
/// step 2, its attention W in step 4: the Megatron-Bridge run), and as that flag places them
/// (the expert W after the backward's dispatch is launched, beside it in step 3; the
/// attention W after step 4, beside the next layer's combine backward in step 1: the
/// ModelZoo run, and pipescope). Also the share of the multiprocessors DeepEP holds.
fn four_steps(o: ScenarioOverrides, sms: u32) -> (Steps, Steps, f64) {
    let mut s = scenario(h100(o));
    s.plan.flex_dispatcher_num_sms = sms;
    let a = pipescope::Anatomy::build(&s).unwrap();
    let (att, moe) = (&a.attention, &a.moe);
    let (a2a_f, a2a_b) = (moe.ep_comm.forward_added_s, moe.ep_comm.backward_added_s);
    let (a_f, a_b, a_w) = (att.forward_s, att.backward_b_s, att.backward_w_s);
    let m_f = moe.forward_s - a2a_f;
    let m_w = moe.backward_w_s;
    let m_b = moe.backward_b_s - a2a_b;
    let (d_f, c_f, d_b, c_b) = (a2a_f / 2.0, a2a_f / 2.0, a2a_b / 2.0, a2a_b / 2.0);
    let plain = [(a_f, c_b), (m_b + m_w, d_f), (m_f, d_b), (a_b + a_w, c_f)];
    let delayed = [(a_w + a_f, c_b), (m_b, d_f), (m_w + m_f, d_b), (a_b, c_f)];
    (plain, delayed, a.ep_comm_sm_share)
}

#[test]
fn every_step_of_both_measured_overlaps_has_more_compute_than_its_all_to_all() {
    // Why the step model cannot be where the measured gains are lost: on both runs each of
    // the four steps has more compute than the (1 - f) of its all-to-all that the compute
    // beside it can cover, under either placement of the weight gradients, so the model
    // hides that whole share either way (docs/model.md, "Overlapped all-to-alls").
    let q235 = ScenarioOverrides {
        model: Some("qwen3-235b-a22b".into()),
        sp: Some(true),
        deepep: Some(true),
        tp: Some(2),
        pp: Some(8),
        dp: Some(16),
        ep: Some(32),
        global_batch: Some(2048),
        schedule: Some(ScheduleKind::Interleaved),
        chunks: Some(4),
        strategy: Some(Strategy::Named),
        recompute_units: Some(vec!["layernorm".into(), "moe_act".into()]),
        ..Default::default()
    };
    let runs = [
        ("qwen3-235b", q235, pipescope::DEEPEP_DEFAULT_SMS),
        ("qwen3-30b", bridge_qwen3_30b(false), BRIDGE_HYBRIDEP_SMS),
    ];
    for (name, o, sms) in runs {
        let (plain, delayed, f) = four_steps(o, sms);
        let hidden = |steps: &Steps| {
            steps
                .iter()
                .map(|&(x, c)| ((1.0 - f) * c).min(x))
                .sum::<f64>()
        };
        let comm: f64 = plain.iter().map(|s| s.1).sum();
        let ms = |steps: &Steps| {
            steps
                .iter()
                .map(|(x, c)| format!("{:.3}|{:.3}", 1e3 * x, 1e3 * c))
                .collect::<Vec<_>>()
                .join("  ")
        };
        eprintln!(
            "{name}: share {f:.3}, steps (compute|comm ms) {} ; delayed W {} ; hides {:.3} of \
             {:.3} ms",
            ms(&plain),
            ms(&delayed),
            1e3 * hidden(&plain),
            1e3 * comm
        );
        for (x, c) in plain.iter().chain(delayed.iter()) {
            assert!(*x >= (1.0 - f) * c, "{name}: {x} < (1 - {f}) {c}");
        }
        assert!((hidden(&plain) - (1.0 - f) * comm).abs() < 1e-12);
        assert!((hidden(&delayed) - hidden(&plain)).abs() < 1e-12);
    }
}

/// Host (CPU) time to launch one kernel from Megatron's Python, as measured outside the
/// checked runs: PyTorch's `Linear` forward (one cuBLAS GEMM behind the module call, the
/// autograd record and the launch) on a DGX H100's host, Xeon Platinum 8480C, 13.48 us
/// (TransformerEngine issue #2053, BF16, 8,192 tokens of 2,048; the same module took
/// 33-37 us on Grace).
const HOST_S_PER_KERNEL: f64 = 13.48e-6;

/// Kernels one layer runs for one micro-batch, forward and backward: the Megatron-Bridge
/// Nsight profile of the Qwen3-30B-A3B run (`card.yaml` of the MoE overlap skill: 463,348
/// kernels a step, 64 micro-batches of 48 layers). A count, not a time; with the router
/// and its preprocessing captured in CUDA graphs there, it counts more kernels than the
/// host launches one by one.
const KERNELS_PER_LAYER: f64 = 463_348.0 / (64.0 * 48.0);

/// One layer's GPU time for one micro-batch (attention and MoE blocks, forward, input and
/// weight gradients; an overlapped pair's hidden all-to-all taken off), seconds, of the
/// scenario `o` (its platform's settings already applied); `overlap_sms` is the
/// all-to-all's multiprocessors where the run overlaps it, `None` where it does not.
fn layer_gpu_s(o: ScenarioOverrides, overlap_sms: Option<u32>) -> f64 {
    let mut s = scenario(o);
    if let Some(sms) = overlap_sms {
        s.plan.flex_dispatcher_num_sms = sms;
    }
    let built = pipescope::Anatomy::build(&s).unwrap();
    let a = if overlap_sms.is_some() {
        built.for_a2a_overlap(true).unwrap()
    } else {
        built
    };
    let total = |b: &pipescope::Block| b.forward_s + b.backward_b_s + b.backward_w_s;
    total(&a.attention) + total(&a.moe)
}

#[test]
fn a_host_at_its_measured_cost_a_kernel_does_not_bind_the_runs_pipescope_misses() {
    // The mechanism the last stop named for both misses (one CPU thread launching every
    // kernel, the GPU unable to start a kernel before its launch) binds only where a
    // layer's launches take longer than its kernels. At the measured 13.48 us a kernel
    // the ~151 kernels of a layer and micro-batch take 2.0 ms of host time; every run the
    // model misses has more GPU time than that per layer, so a host timeline at that cost
    // leaves their steps as they are (docs/model.md, "What was looked for"). The per-kernel
    // cost that would bind each is printed beside it.
    let q235 = |o: ScenarioOverrides| ScenarioOverrides {
        model: Some("qwen3-235b-a22b".into()),
        sp: Some(true),
        global_batch: Some(2048),
        ..o
    };
    let named = Some(vec!["layernorm".into(), "moe_act".into()]);
    let runs = vec![
        (
            "235b t2 p8 v4 ep32, overlapped",
            q235(ScenarioOverrides {
                tp: Some(2),
                pp: Some(8),
                dp: Some(16),
                ep: Some(32),
                deepep: Some(true),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(4),
                strategy: Some(Strategy::Named),
                recompute_units: named.clone(),
                moe_a2a_overlap: Some(true),
                device_max_connections: Some(32),
                ..Default::default()
            }),
            Some(pipescope::DEEPEP_DEFAULT_SMS),
        ),
        (
            "235b t2 p1 ep8 fsdp b4",
            q235(ScenarioOverrides {
                tp: Some(2),
                pp: Some(1),
                dp: Some(128),
                ep: Some(8),
                micro_batch_size: Some(4),
                zero: Some(Zero::Full),
                deepep: Some(true),
                strategy: Some(Strategy::Full),
                ..Default::default()
            }),
            None,
        ),
        (
            "235b t2 p32 v3 ep8",
            q235(ScenarioOverrides {
                tp: Some(2),
                pp: Some(32),
                dp: Some(4),
                ep: Some(8),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(3),
                layout: Some(qwen3_235b_split(96)),
                strategy: Some(Strategy::Named),
                recompute_units: named,
                ..Default::default()
            }),
            None,
        ),
        (
            "235b t4 p8 v4 ep8",
            q235(ScenarioOverrides {
                tp: Some(4),
                pp: Some(8),
                dp: Some(8),
                ep: Some(8),
                deepep: Some(true),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(4),
                strategy: Some(Strategy::None),
                ..Default::default()
            }),
            None,
        ),
        (
            "30b ep16, overlapped",
            bridge_qwen3_30b(true),
            Some(BRIDGE_HYBRIDEP_SMS),
        ),
    ];
    let host_s = KERNELS_PER_LAYER * HOST_S_PER_KERNEL;
    let mut text = format!(
        "host per layer and micro-batch: {:.0} kernels x {:.2} us = {:.2} ms\n",
        KERNELS_PER_LAYER,
        1e6 * HOST_S_PER_KERNEL,
        1e3 * host_s
    );
    let mut rows = Vec::new();
    for (name, o, overlap_sms) in runs {
        let gpu_s = layer_gpu_s(h100(o), overlap_sms);
        text += &format!(
            "{name}: GPU {:.2} ms a layer; the host binds from {:.1} us a kernel\n",
            1e3 * gpu_s,
            1e6 * gpu_s / KERNELS_PER_LAYER
        );
        rows.push((name, gpu_s));
    }
    // The GB200 runs for comparison (printed, not asserted): the same module took 37.08 us
    // of a Grace CPU (issue #2053), and those runs' launchers capture parts of each layer
    // in CUDA graphs, so the kernel count above does not carry over.
    for (name, o) in [
        (
            "gb200 235b p8 ep8",
            ScenarioOverrides {
                model: Some("qwen3-235b-a22b".into()),
                tp: Some(1),
                pp: Some(8),
                dp: Some(32),
                ep: Some(8),
                global_batch: Some(8192),
                strategy: Some(Strategy::None),
                ..Default::default()
            },
        ),
        (
            "gb200 dsv3 p4 v4 ep64",
            ScenarioOverrides {
                model: Some("deepseek-v3".into()),
                mtp_layers: Some(0),
                tp: Some(1),
                pp: Some(4),
                dp: Some(64),
                ep: Some(64),
                global_batch: Some(4096),
                schedule: Some(ScheduleKind::Interleaved),
                chunks: Some(4),
                strategy: Some(Strategy::None),
                ..Default::default()
            },
        ),
    ] {
        let gpu_s = layer_gpu_s(gb200(o), None);
        text += &format!(
            "{name}: GPU {:.2} ms a layer; the host binds from {:.1} us a kernel\n",
            1e3 * gpu_s,
            1e6 * gpu_s / KERNELS_PER_LAYER
        );
    }
    eprintln!("{text}");
    for (name, gpu_s) in rows {
        assert!(host_s < gpu_s, "{name}:\n{text}");
    }
}
