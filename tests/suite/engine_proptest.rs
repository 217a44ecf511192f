//! Random scenario values never panic: they give a valid scenario whose anatomy has finite,
//! non-negative figures (and which round-trips through `to_toml`), or a clear error that
//! names a field.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pipescope::{
    Anatomy, Catalog, ModelStyle, Scenario, ScenarioOverrides, default_scenario, to_toml,
};
use proptest::prelude::*;

/// The scenario as `to_toml` saves it: the chunks its schedule runs (zb-h1 asked for 2 runs 1).
fn saved(mut s: Scenario) -> Scenario {
    s.parallel.chunks = s.plan.schedule.chunks(s.parallel.chunks);
    s
}

fn small_or_wild() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..=8,
        1u64..=256,
        Just(4096u64),
        Just(u64::MAX),
        any::<u64>()
    ]
}

fn style(llama: bool) -> ModelStyle {
    if llama {
        ModelStyle::Llama
    } else {
        ModelStyle::Gpt
    }
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        0.001f64..200.0,
        any::<f64>()
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn random_scenarios_are_valid_or_clear_errors(
        layers in prop_oneof![0u32..=4, 1u32..=200, any::<u32>()],
        hidden in small_or_wild(),
        heads in small_or_wild(),
        kv_heads in small_or_wild(),
        ffn in small_or_wild(),
        vocab in small_or_wild(),
        llama in any::<bool>(),
        pp in prop_oneof![0u32..=16, any::<u32>()],
        tp in prop_oneof![0u32..=16, any::<u32>()],
        dp in prop_oneof![0u32..=8, any::<u32>()],
        chunks in 0u32..=4,
        seq in small_or_wild(),
        mbs in small_or_wild(),
        m in prop_oneof![0u32..=64, any::<u32>()],
        sp in any::<bool>(),
        flash in any::<bool>(),
        dist in any::<bool>(),
        budget in float(),
        memory in float(),
        tflops in float(),
    ) {
        let mut s = default_scenario();
        s.model.layers = layers;
        s.model.hidden = hidden;
        s.model.heads = heads;
        s.model.kv_heads = kv_heads;
        s.model.ffn = ffn;
        s.model.vocab = vocab;
        s.model.style = style(llama);
        s.parallel.pp = pp;
        s.parallel.tp = tp;
        s.parallel.dp = dp;
        s.parallel.chunks = chunks;
        s.parallel.sequence_parallel = sp;
        s.parallel.distributed_optimizer = dist;
        s.batch.seq_len = seq;
        s.batch.micro_batch_size = mbs;
        s.batch.micro_batches = m;
        s.plan.flash_attention = flash;
        s.gpu.memory_gib = memory;
        s.gpu.bf16_tflops = tflops;
        let catalog = Catalog::builtin();
        let o = ScenarioOverrides { budget_gib: Some(budget), ..Default::default() };
        let applied = o.apply(&mut s, &catalog);
        match (applied, s.validate()) {
            (Err(e), _) | (_, Err(e)) => {
                prop_assert!(!e.field.is_empty() && !e.allowed.is_empty());
                prop_assert!(Anatomy::build(&s).is_err() || e.field == "budget_gib");
            }
            (Ok(()), Ok(())) => {
                let a = Anatomy::build(&s).unwrap();
                for b in [&a.embedding, &a.attention, &a.mlp, &a.head] {
                    prop_assert!(b.forward_s.is_finite() && b.forward_s >= 0.0);
                    prop_assert!(b.backward_b_s.is_finite() && b.backward_w_s.is_finite());
                    for u in &b.units {
                        prop_assert!(u.forward_s.is_finite() && u.forward_s >= 0.0);
                        prop_assert!(u.backward_s.is_finite() && u.codec_s.is_finite());
                    }
                }
                prop_assert!(a.p2p_intra_s.is_finite() && a.p2p_inter_s.is_finite());
                let back = Catalog::empty().scenario_from_text("x.toml", &to_toml(&s)).unwrap();
                prop_assert_eq!(back, saved(s));
            }
        }
    }

    #[test]
    fn plausible_scenarios_build_and_round_trip(
        layers in 1u32..=128,
        head_dim in prop_oneof![Just(64u64), Just(128u64), 1u64..=256],
        heads_per_kv in 1u64..=8,
        kv in 1u64..=16,
        ffn_mult in 1u64..=8,
        vocab in 1u64..=200_000,
        llama in any::<bool>(),
        tp_pow in 0u32..=3,
        pp in 1u32..=64,
        seq_k in 1u64..=64,
        mbs in 1u64..=8,
        sp in any::<bool>(),
        flash in any::<bool>(),
        budget in 0.01f64..80.0,
    ) {
        let tp = 1u32 << tp_pow;
        let kv_heads = kv * u64::from(tp);
        let heads = kv_heads * heads_per_kv;
        let mut s = default_scenario();
        s.model.layers = layers;
        s.model.heads = heads;
        s.model.kv_heads = kv_heads;
        s.model.hidden = heads * head_dim;
        s.model.ffn = s.model.hidden * ffn_mult;
        s.model.vocab = vocab;
        s.model.style = style(llama);
        let o = ScenarioOverrides {
            pp: Some(pp),
            tp: Some(tp),
            seq_len: Some(seq_k * 256),
            micro_batch_size: Some(mbs),
            sp: Some(sp),
            flash: Some(flash),
            budget_gib: Some(budget),
            ..Default::default()
        };
        match o.apply(&mut s, &Catalog::builtin()) {
            Err(e) => prop_assert_eq!(e.field, "parallel.pp"),
            Ok(()) => {
                let a = Anatomy::build(&s).unwrap();
                prop_assert!(a.attention.forward_s > 0.0 && a.mlp.backward_b_s > 0.0);
                prop_assert!(a.layer_bytes() > 0);
                let back = Catalog::empty().scenario_from_text("x.toml", &to_toml(&s)).unwrap();
                prop_assert_eq!(back, saved(s));
            }
        }
    }

    #[test]
    fn random_preset_text_never_panics(text in "[a-z_=\\[\\]\"0-9. \n]{0,80}") {
        let mut c = Catalog::builtin();
        if let Err(e) = c.add_text("fuzz.toml", &text) {
            prop_assert!(!e.message.is_empty());
        }
    }
}

/// Powers of two up to `max`: values at and near the per-field limits.
fn pow2_up_to(max: u64) -> impl Strategy<Value = u64> {
    (0u32..=max.ilog2()).prop_map(|k| 1u64 << k)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Fields each within their own limit but huge together: validation either refuses them
    /// or every byte total downstream (units summed over a block and over all layers, times
    /// every micro-batch; static memory of the whole model) fits in `u64`.
    #[test]
    fn huge_valid_scenarios_do_not_overflow_byte_counts(
        layers in prop_oneof![1u64..=128, pow2_up_to(65536)],
        hidden in pow2_up_to(1 << 24),
        vocab in pow2_up_to(1 << 24),
        seq in pow2_up_to(1 << 24),
        mbs in pow2_up_to(1 << 16),
        m in pow2_up_to(1 << 20),
        llama in any::<bool>(),
        flash in any::<bool>(),
        sp in any::<bool>(),
    ) {
        let mut s = default_scenario();
        s.model.layers = layers as u32;
        s.model.hidden = hidden;
        s.model.heads = hidden.min(64);
        s.model.kv_heads = s.model.heads;
        s.model.ffn = hidden;
        s.model.vocab = vocab;
        s.model.max_positions = None;
        s.model.style = style(llama);
        s.parallel.pp = 1;
        s.parallel.tp = 1;
        s.parallel.sequence_parallel = sp;
        s.batch.seq_len = seq;
        s.batch.micro_batch_size = mbs;
        s.batch.micro_batches = m as u32;
        s.plan.flash_attention = flash;
        match Anatomy::build(&s) {
            Err(e) => prop_assert!(!e.field.is_empty() && !e.allowed.is_empty()),
            Ok(a) => {
                let layer = a.attention.units.iter().chain(&a.mlp.units)
                    .try_fold(0u64, |acc, u| acc.checked_add(u.size_bytes));
                let all_layers = layer.and_then(|l| l.checked_mul(layers));
                let iteration = all_layers.and_then(|x| x.checked_mul(m));
                prop_assert!(iteration.is_some(), "activation bytes overflow");
                prop_assert_eq!(layer, Some(a.layer_bytes()));
                let statics = a.attention.static_bytes.checked_add(a.mlp.static_bytes)
                    .and_then(|x| x.checked_mul(layers))
                    .and_then(|x| x.checked_add(a.embedding.static_bytes))
                    .and_then(|x| x.checked_add(a.head.static_bytes));
                prop_assert!(statics.is_some(), "static bytes overflow");
                prop_assert!(a.logits_transient_bytes < u64::MAX / 4);
            }
        }
    }
}
