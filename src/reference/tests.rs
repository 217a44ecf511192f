//! The reference estimators against the published values (costmodel.md V1 and V5), and the
//! engine's fuller accounting compared with them, the difference stated and explained.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::korthikanti::{self, Setting};
use super::megatron::{self, MegatronArgs};
use super::{GIB, MIB};
use crate::anatomy::{Anatomy, Block};
use crate::scenario::{Catalog, ScenarioOverrides};

fn round(x: f64, decimals: i32) -> f64 {
    let k = 10f64.powi(decimals);
    (x * k).round() / k
}

/// (layers, hidden, heads, t, p, v, b) of Korthikanti's four models, s = 2048.
const FIG1: [(f64, f64, f64, f64, f64, f64, f64); 4] = [
    (48.0, 6144.0, 64.0, 8.0, 1.0, 1.0, 4.0),
    (96.0, 12288.0, 96.0, 8.0, 8.0, 3.0, 1.0),
    (105.0, 20480.0, 128.0, 8.0, 35.0, 3.0, 1.0),
    (128.0, 25600.0, 160.0, 8.0, 64.0, 1.0, 1.0),
];

#[test]
fn korthikanti_figure_1_is_v1() {
    let params = [45.5625, 45.5625, 31.6406, 32.9590];
    let tp = [59.25, 66.84375, 114.0234, 131.25];
    let sp_sel = [9.5625, 12.3516, 23.0762, 26.5625];
    for (i, &(l, h, a, t, p, v, b)) in FIG1.iter().enumerate() {
        let w = korthikanti::fig1_params_optimizer_bytes(l, h, t, p) / GIB;
        // The published values carry 4 decimals.
        let close = |x: f64, v: f64| (x - v).abs() <= 0.5e-4 + 1e-12;
        assert!(close(w, params[i]), "model {i} params {w}");
        let act = |setting| {
            korthikanti::fig1_activation_bytes(2048.0, b, h, a, t, l, p, v, setting) / GIB
        };
        assert!(close(act(Setting::Tp), tp[i]), "model {i} TP");
        assert!(
            close(act(Setting::TpSpSelective), sp_sel[i]),
            "model {i} SP+sel"
        );
    }
}

fn gpt3(sp: bool, selective: bool) -> MegatronArgs {
    MegatronArgs {
        seq_length: 2048.0,
        micro_batch_size: 1.0,
        hidden: 12288.0,
        layers: 96.0,
        heads: 96.0,
        kv_heads: 96.0,
        kv_channels: 128.0,
        ffn: 49152.0,
        padded_vocab: 51200.0,
        tp: 8.0,
        pp: 8.0,
        vpp: None,
        dp: 1.0,
        micro_batches: Some(64.0),
        sequence_parallel: sp,
        selective,
        swiglu: false,
        untied: false,
        rmsnorm: false,
        distributed_optimizer: false,
    }
}

fn llama2_70b(m: f64) -> MegatronArgs {
    MegatronArgs {
        seq_length: 4096.0,
        hidden: 8192.0,
        layers: 80.0,
        heads: 64.0,
        kv_heads: 8.0,
        kv_channels: 128.0,
        ffn: 28672.0,
        padded_vocab: 32000.0,
        dp: 4.0,
        micro_batches: Some(m),
        swiglu: true,
        untied: true,
        rmsnorm: true,
        distributed_optimizer: true,
        ..gpt3(true, true)
    }
}

#[test]
fn megatron_estimator_is_v5() {
    let mib = |x: f64| round(x / MIB, 1);
    assert_eq!(mib(megatron::activation_bytes(&gpt3(true, true))), 9816.0);
    let vpp = MegatronArgs {
        vpp: Some(3.0),
        ..gpt3(true, true)
    };
    assert_eq!(mib(megatron::activation_bytes(&vpp)), 12679.0);
    assert_eq!(mib(megatron::activation_bytes(&gpt3(false, true))), 31651.3);
    assert_eq!(
        mib(megatron::weight_and_optimizer_bytes(&gpt3(true, true))),
        48007.3
    );

    assert_eq!(mib(megatron::activation_bytes(&llama2_70b(32.0))), 10272.0);
    assert_eq!(mib(megatron::activation_bytes(&llama2_70b(4.0))), 5136.0);
    assert_eq!(
        mib(megatron::weight_and_optimizer_bytes(&llama2_70b(32.0))),
        9461.4
    );

    let llama3_8b = MegatronArgs {
        seq_length: 8192.0,
        hidden: 4096.0,
        layers: 32.0,
        heads: 32.0,
        kv_heads: 8.0,
        kv_channels: 128.0,
        ffn: 14336.0,
        padded_vocab: 128256.0,
        tp: 1.0,
        pp: 1.0,
        dp: 8.0,
        micro_batches: None,
        ..llama2_70b(1.0)
    };
    assert_eq!(mib(megatron::activation_bytes(&llama3_8b)), 36936.1);
    assert_eq!(
        mib(megatron::weight_and_optimizer_bytes(&llama3_8b)),
        57436.9
    );
}

/// GPT-3 175B, s 2048, b 1, t 8, p 8, m 64, SP + selective, no FlashAttention: the first
/// stage under 1F1B holds p = 8 micro-batches of the embedding and 12 layers.
#[test]
fn engine_versus_megatron_on_the_first_stage() {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-175b").unwrap();
    ScenarioOverrides {
        schedule: Some("1f1b".parse().unwrap()),
        chunks: Some(1),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    let a = Anatomy::build(&s).unwrap();
    let (sb, h, t, p) = (2048u64, 12288u64, 8u64, 8u64);
    let selective = |b: &Block| -> u64 {
        b.units
            .iter()
            .filter(|u| !u.core_attention)
            .map(|u| u.size_bytes)
            .sum()
    };
    let engine_act =
        p * (a.embedding.all_units_bytes() + 12 * (selective(&a.attention) + selective(&a.mlp)));
    let megatron_act = megatron::activation_bytes(&gpt3(true, true));
    // The layers agree exactly (34 sbh / t each); the only difference is the token ids:
    // int64 ids are not split over tensor-parallel ranks (8 sb per micro-batch), while
    // Megatron's estimator divides them by t too. 8 micro-batches x 8 sb (1 - 1/t) bytes.
    let diff = engine_act as f64 - megatron_act;
    let want = (p * 8 * sb) as f64 * (1.0 - 1.0 / t as f64);
    assert_eq!(diff, want, "engine {engine_act} megatron {megatron_act}");
    assert_eq!(round(engine_act as f64 / MIB, 3), 9816.125);

    // Static memory: the engine counts what Megatron's estimator leaves out: learned
    // position embeddings (s h, held whole by every rank), the linear layers' biases, and
    // norms and row-parallel biases held whole by every tensor-parallel rank (the
    // estimator divides everything by t and spreads the final norm over the stages).
    // Per layer: column-parallel biases 7h/t instead of the norms' 4h/t, plus 6h whole
    // (two LayerNorms 4h, two row-parallel biases 2h); minus the final norm's 2h/(p t).
    let engine_static =
        a.embedding.static_bytes + 12 * (a.attention.static_bytes + a.mlp.static_bytes);
    let megatron_static = megatron::weight_and_optimizer_bytes(&gpt3(true, true));
    let hf = h as f64;
    let extra_params = (sb * h) as f64 + 12.0 * (3.0 * hf / 8.0 + 6.0 * hf) - 2.0 * hf / 64.0;
    assert_eq!(engine_static as f64 - megatron_static, 18.0 * extra_params);
    // About 0.9 % more than Megatron's 48007.3 MiB.
    let ratio = engine_static as f64 / megatron_static;
    assert!((1.008..1.011).contains(&ratio), "{ratio}");
}

/// Llama 2 70B, s 4096, t 8, SP + selective: Megatron's estimator ignores GQA (it charges
/// K and V at full width, 4 sbh), the extra SwiGLU tensor (it charges 4 sbf where the
/// fused kernel keeps [gate, up] 4 sbf and the down-projection input 2 sbf) and
/// FlashAttention's log-sum-exp, and it charges GPT's two dropout masks (2 sbh) that a
/// Llama layer does not have. The engine's layer differs by
/// 2 sbf + 4 asb - 4 sbh (1 - g) - 2 sbh, over t.
#[test]
fn engine_versus_megatron_llama_layer() {
    let c = Catalog::builtin();
    let s = c.scenario("adapipe-llama2-70b").unwrap();
    let mut s8 = s.clone();
    ScenarioOverrides {
        tp: Some(8),
        ..Default::default()
    }
    .apply(&mut s8, &c)
    .unwrap();
    let a = Anatomy::build(&s8).unwrap();
    let layer = a.layer_bytes() as f64;
    let (sq, b, h, heads, f, t, g) = (4096.0, 1.0, 8192.0, 64.0, 28672.0, 8.0, 8.0 / 64.0);
    let megatron_layer = sq * b * h * (18.0 + 4.0 * f / h) / t;
    let want =
        (2.0 * sq * b * f + 4.0 * heads * sq * b - 4.0 * sq * b * h * (1.0 - g) - 2.0 * sq * b * h)
            / t;
    assert_eq!(layer - megatron_layer, want);
}

/// Every setting of Table 2 for GPT-3 175B (s 2048, b 1, t 8): the values the anatomy's
/// units reproduce exactly (tests/suite/engine_anatomy.rs pins the engine to the same).
#[test]
fn korthikanti_table_2_for_gpt3() {
    let bytes = |setting| {
        korthikanti::layer_activation_bytes(2048.0, 1.0, 12288.0, 96.0, 8.0, setting).round() as u64
    };
    assert_eq!(bytes(Setting::None), 2_868_903_936);
    assert_eq!(bytes(Setting::Tp), 578_813_952);
    assert_eq!(bytes(Setting::TpSp), 358_612_992);
    assert_eq!(bytes(Setting::TpSelective), 327_155_712);
    assert_eq!(bytes(Setting::TpSpSelective), 106_954_752);
    assert_eq!(bytes(Setting::Full), 2 * 2048 * 12288);
}
