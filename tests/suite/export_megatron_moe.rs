//! The Megatron-LM export of mixtures of experts: Megatron's MoE, MLA and MTP flags from the
//! model, the expert layout's sizes, MTP layers as `m` in the pipeline layout, every flag in
//! Megatron's parser and the set passing its cross-flag rules.

#![allow(clippy::unwrap_used)]

use crate::megatron_common::{Launch, check_flags, check_rules, decode, launch};
use pipescope::{Catalog, Scenario, ScenarioOverrides, megatron_args};

fn scenario(model: &str, tp: u32, pp: u32, dp: u32, ep: u32) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some(model.into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        micro_batches: Some(16),
        tp: Some(tp),
        pp: Some(pp),
        dp: Some(dp),
        sp: Some(tp > 1),
        ep: Some(ep),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s
}

fn export(s: &Scenario) -> (String, Launch) {
    let outcome = pipescope::solve(s).unwrap();
    let text = megatron_args(s, &outcome).unwrap();
    let l = launch(&text);
    (text, l)
}

fn passes(text: &str, l: &Launch) {
    let problems: Vec<String> = check_flags(l).into_iter().chain(check_rules(l)).collect();
    assert!(problems.is_empty(), "{problems:?}\n{text}");
}

#[test]
fn deepseek_v3_writes_moe_mla_and_mtp_flags_and_the_mtp_layer_in_the_layout() {
    let s = scenario("deepseek-v3", 1, 8, 64, 64);
    let (text, l) = export(&s);
    passes(&text, &l);
    assert_eq!(l.one("--num-experts"), Some("256"));
    assert_eq!(l.one("--moe-router-topk"), Some("8"));
    assert_eq!(l.one("--moe-ffn-hidden-size"), Some("2048"));
    assert_eq!(l.one("--moe-shared-expert-intermediate-size"), Some("2048"));
    assert_eq!(l.one("--moe-layer-freq"), Some("([0]*3+[1]*58)"));
    assert_eq!(l.one("--expert-model-parallel-size"), Some("64"));
    assert!(l.has("--moe-grouped-gemm") && l.has("--moe-router-force-load-balancing"));
    assert!(l.has("--multi-latent-attention") && l.has("--qk-layernorm"));
    assert_eq!(l.one("--q-lora-rank"), Some("1536"));
    assert_eq!(l.one("--kv-lora-rank"), Some("512"));
    assert_eq!(l.one("--qk-pos-emb-head-dim"), Some("64"));
    assert_eq!(l.one("--mtp-num-layers"), Some("1"));
    // Group-limited routing: n_group 8, topk_group 4.
    assert_eq!(l.one("--moe-router-num-groups"), Some("8"));
    assert_eq!(l.one("--moe-router-group-topk"), Some("4"));
    let decoded = decode(l.one("--pipeline-model-parallel-layout").unwrap());
    assert_eq!(decoded.iter().map(|d| d.layers).sum::<u32>(), 61);
    assert_eq!(decoded.iter().map(|d| d.mtp).sum::<u32>(), 1);
    // The MTP layer comes after every transformer layer.
    let at = decoded.iter().position(|d| d.mtp > 0).unwrap();
    assert!(decoded[at + 1..].iter().all(|d| d.layers == 0));
}

#[test]
fn qwen3_writes_its_expert_layout_and_qk_norm_and_dense_models_write_none() {
    // t 2 with ep 4: Megatron's expert tensor-parallel size defaults to t, so etp 1 is said.
    let s = scenario("qwen3-30b-a3b", 2, 2, 4, 4);
    let (text, l) = export(&s);
    passes(&text, &l);
    assert_eq!(l.one("--expert-model-parallel-size"), Some("4"));
    assert_eq!(l.one("--expert-tensor-parallel-size"), Some("1"));
    // Qwen3 routes over all experts: no groups.
    assert!(!l.has("--moe-router-num-groups") && !l.has("--moe-router-group-topk"));
    assert!(l.has("--qk-layernorm") && l.has("--sequence-parallel"));
    assert!(!l.has("--moe-layer-freq") && !l.has("--mtp-num-layers"));
    assert!(!l.has("--multi-latent-attention"));
    let (_, dense) = export(&scenario("llama3-8b", 2, 2, 4, 1));
    assert!(!dense.has("--num-experts") && !dense.has("--expert-model-parallel-size"));
}

/// `--deepep` is Megatron's flex dispatcher; `plan.flex_dispatcher_num_sms` away from
/// DeepEP's 20 is written as Megatron-Core's `--moe-flex-dispatcher-num-sms` (the unified
/// flag that replaced `--moe-deepep-num-sms`); at 20, or without the flex dispatcher,
/// nothing is written.
#[test]
fn deepep_is_exported_as_the_flex_dispatcher_with_its_multiprocessors() {
    let mut s = scenario("qwen3-30b-a3b", 1, 2, 8, 8);
    s.plan.deepep = true;
    let (text, l) = export(&s);
    passes(&text, &l);
    assert_eq!(l.one("--moe-token-dispatcher-type"), Some("flex"));
    assert!(l.has("--moe-enable-deepep"));
    assert_eq!(
        s.plan.flex_dispatcher_num_sms,
        pipescope::DEEPEP_DEFAULT_SMS
    );
    assert!(!l.has("--moe-flex-dispatcher-num-sms"), "{text}");
    s.plan.flex_dispatcher_num_sms = 32;
    let (text, l) = export(&s);
    passes(&text, &l);
    assert_eq!(l.one("--moe-flex-dispatcher-num-sms"), Some("32"), "{text}");
    assert!(!l.has("--moe-deepep-num-sms") && !l.has("--moe-hybridep-num-sms"));
    s.plan.deepep = false;
    let (text, l) = export(&s);
    passes(&text, &l);
    assert!(!l.has("--moe-flex-dispatcher-num-sms"), "{text}");
}
