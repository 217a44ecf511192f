//! DeepSeek-V3's own memory recipe (its technical report, section 3.3.3): Adam's moments in
//! bf16 (`--moment-bytes 2`) and each SwiGLU's input cached in fp8 for the backward
//! (`--activation-func-fp8-input-store`, Megatron-Core's `activation_func_fp8_input_store`):
//! their memory rules, their refusals, their export, and the recipe on 80 GB.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::megatron_common::{check_flags, check_rules, launch};
use crate::scenario_common::read_back;
use pipescope::{
    Anatomy, BlockKind, Catalog, Scenario, ScenarioOverrides, ScheduleKind, Strategy, Zero,
    megatron_args,
};

/// `model` on 8 GPUs of a node (t 1, d 8, pp 2, ep 8), 4k tokens, the distributed
/// optimizer, with `o` on top.
fn scenario(model: &str, o: ScenarioOverrides) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some(model.into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        micro_batches: Some(16),
        tp: Some(1),
        pp: Some(2),
        dp: Some(8),
        sp: Some(false),
        ep: Some(8),
        zero: Some(Zero::Optimizer),
        reserve_gib: Some(0.0),
        ..o
    }
    .apply(&mut s, &c)
    .unwrap();
    s
}

#[test]
fn bf16_moments_keep_8_bytes_of_optimizer_state_a_parameter_instead_of_12() {
    for zero in [Zero::Off, Zero::Optimizer, Zero::Full] {
        let with = |moments: u32| {
            let s = scenario(
                "qwen3-30b-a3b",
                ScenarioOverrides {
                    zero: Some(zero),
                    moment_bytes: Some(moments),
                    ..Default::default()
                },
            );
            assert_eq!(s.parallel.moment_bytes, moments);
            pipescope::solve(&s).unwrap()
        };
        let (fp32, bf16) = (with(4), with(2));
        for (a, b) in fp32.stages.iter().zip(&bf16.stages) {
            // The fp32 master weight (4 bytes) stays; the two moments go from 4 to 2 bytes.
            let ratio = b.optimizer_bytes as f64 / a.optimizer_bytes as f64;
            assert!((ratio - 8.0 / 12.0).abs() < 1e-3, "{zero:?}: {ratio}");
            assert_eq!(
                a.static_bytes - b.static_bytes,
                a.optimizer_bytes - b.optimizer_bytes
            );
            assert_eq!(a.weights_bytes, b.weights_bytes);
            assert_eq!(a.grads_bytes, b.grads_bytes);
            assert_eq!(a.activation_bytes, b.activation_bytes);
        }
        // The optimizer step moves 16 bytes of moments a parameter instead of 24.
        assert!(bf16.iteration_time_s < fp32.iteration_time_s);
    }
}

#[test]
fn fp8_swiglu_inputs_take_half_the_bytes_of_bf16_ones() {
    let with = |model: &str, on: bool| {
        let s = scenario(
            model,
            ScenarioOverrides {
                activation_func_fp8_input_store: Some(on),
                ..Default::default()
            },
        );
        Anatomy::build(&s).unwrap()
    };
    let bytes = |a: &Anatomy, kind: BlockKind, unit: &str| {
        a.block_of(kind)
            .units
            .iter()
            .find(|u| u.name == unit)
            .unwrap_or_else(|| panic!("{unit}"))
            .size_bytes
    };
    let (off, on) = (with("deepseek-v3", false), with("deepseek-v3", true));
    // The routed and shared experts' fc1 outputs, and the dense first layers' gate/up.
    for (kind, unit) in [
        (BlockKind::Moe, "fc1_out"),
        (BlockKind::Moe, "shared_fc1_out"),
        (BlockKind::Mlp, "gate_up"),
    ] {
        let (b16, b8) = (bytes(&off, kind, unit), bytes(&on, kind, unit));
        assert!(b16 > 0);
        assert!(b8.abs_diff(b16 / 2) <= 1, "{unit}: {b16} -> {b8}");
    }
    // Exactly those: the SwiGLU's output, the fc2 input, keeps its bytes.
    assert_eq!(
        bytes(&off, BlockKind::Moe, "act_out"),
        bytes(&on, BlockKind::Moe, "act_out")
    );
    // DeepSeek-V3 at 4k tokens, ep 8: 4096 x 8 rows of 2 x 2048 halves, 1 byte each.
    assert_eq!(bytes(&on, BlockKind::Moe, "fc1_out"), 4096 * 8 * 2 * 2048);
    // The cast and its reverse cost time: 1 byte written in the forward, 1 read and 2
    // written before the backward.
    let time = |a: &Anatomy| a.moe.forward_s + a.moe.backward_b_s;
    assert!(time(&on) > time(&off));
}

#[test]
fn the_options_are_refused_with_their_rule() {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-22b").unwrap();
    let e = ScenarioOverrides {
        moment_bytes: Some(3),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err();
    assert_eq!(e.field, "parallel.moment_bytes");
    assert!(e.to_string().contains("2 (bf16 Adam moments)"), "{e}");
    // A GeLU model has no SwiGLU input to keep.
    let mut s = c.scenario("korthikanti-22b").unwrap();
    let e = ScenarioOverrides {
        activation_func_fp8_input_store: Some(true),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap_err();
    assert_eq!(e.field, "plan.activation_func_fp8_input_store");
    assert!(e.to_string().contains("GeLU"), "{e}");
}

#[test]
fn the_export_writes_the_precision_aware_optimizer_and_notes_the_fp8_store() {
    let s = scenario(
        "qwen3-30b-a3b",
        ScenarioOverrides {
            moment_bytes: Some(2),
            activation_func_fp8_input_store: Some(true),
            ..Default::default()
        },
    );
    let outcome = pipescope::solve(&s).unwrap();
    let text = megatron_args(&s, &outcome).unwrap();
    let l = launch(&text);
    assert!(l.has("--use-precision-aware-optimizer"), "{text}");
    assert_eq!(l.one("--exp-avg-dtype"), Some("bf16"));
    assert_eq!(l.one("--exp-avg-sq-dtype"), Some("bf16"));
    assert!(
        text.contains("# activation-func-fp8-input-store:"),
        "{text}"
    );
    let problems: Vec<String> = check_flags(&l).into_iter().chain(check_rules(&l)).collect();
    assert!(problems.is_empty(), "{problems:?}\n{text}");
    // And nothing of either without them.
    let plain = scenario("qwen3-30b-a3b", ScenarioOverrides::default());
    let text = megatron_args(&plain, &pipescope::solve(&plain).unwrap()).unwrap();
    assert!(!text.contains("precision-aware") && !text.contains("fp8-input-store"));
}

#[test]
fn the_options_round_trip_through_a_saved_scenario() {
    let mut s = scenario(
        "deepseek-v3",
        ScenarioOverrides {
            moment_bytes: Some(2),
            activation_func_fp8_input_store: Some(true),
            ..Default::default()
        },
    );
    s.name = "recipe-round-trip".into();
    let text = pipescope::to_toml(&s);
    assert!(text.contains("moment_bytes = 2"), "{text}");
    assert!(
        text.contains("activation_func_fp8_input_store = true"),
        "{text}"
    );
    assert_eq!(read_back(&s), s);
    // A file's bad value is refused at its key, as the flag's is.
    let bad = text.replace("moment_bytes = 2", "moment_bytes = 8");
    let mut cat = Catalog::builtin();
    let refused = cat
        .add_text("bad.toml", &bad)
        .err()
        .map(|e| e.to_string())
        .or_else(|| {
            cat.scenario("recipe-round-trip")
                .err()
                .map(|e| e.to_string())
        });
    let refused = refused.expect("moment_bytes = 8 is refused");
    assert!(refused.contains("moment_bytes"), "{refused}");
}

/// DeepSeek-V3 as its technical report trains it (sections 3.2 and 3.3: 2048 H800s, whose
/// memory is the H100's, p 16, ep 64 over 8 nodes, ZeRO-1, DualPipe, fp8, the norms and
/// MLA's up-projections recomputed, one MTP layer, 4k tokens, 15,360 sequences a step) with
/// `moments` bytes of Adam moments, the fp8 SwiGLU inputs where `fp8_store` (and then the
/// SwiGLU's output recomputed from them, as the report does).
fn deepseek_v3_recipe(moments: u32, fp8_store: bool) -> pipescope::Outcome {
    let c = Catalog::builtin();
    let mut s = c.scenario("gpt3-175b-16k").unwrap();
    let mut units = vec!["layernorm".to_string(), "mla_up_proj".into()];
    if fp8_store {
        units.push("moe_act".into());
    }
    ScenarioOverrides {
        model: Some("deepseek-v3".into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        tp: Some(1),
        pp: Some(16),
        dp: Some(128),
        ep: Some(64),
        zero: Some(Zero::Optimizer),
        overlap_grad_reduce: Some(true),
        global_batch: Some(15360),
        schedule: Some(ScheduleKind::DualPipe),
        deepep: Some(true),
        moe_a2a_overlap: Some(true),
        precision: Some(pipescope::Precision::Fp8),
        strategy: Some(Strategy::Named),
        recompute_units: Some(units),
        moment_bytes: Some(moments),
        activation_func_fp8_input_store: Some(fp8_store),
        reserve_gib: Some(0.0),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    pipescope::solve(&s).unwrap()
}

#[test]
fn deepseek_v3s_recipe_fits_80_gb_with_its_own_formats_and_not_without() {
    let base = deepseek_v3_recipe(4, false);
    let ours = deepseek_v3_recipe(2, true);
    let peak = |o: &pipescope::Outcome| o.stages.iter().map(|s| s.peak_memory_bytes).max().unwrap();
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    assert!(!base.feasible, "{}", gib(peak(&base)));
    assert!(ours.feasible, "{:?}", ours.infeasible_reason);
    assert!(gib(peak(&ours)) < 79.6 && gib(peak(&base)) > 79.6);
    for (a, b) in base.stages.iter().zip(&ours.stages) {
        assert!(b.optimizer_bytes < a.optimizer_bytes);
        assert!(b.activation_bytes < a.activation_bytes);
    }
}
