//! ZeRO-3 of a mixture of experts (docs/model.md, "Sharding"): the routed experts sharded
//! over their own data-parallel group `edp`, the rest over `d x cp`; the gathers and
//! reduce-scatters of an MoE block over both groups; the largest layer gathered on every
//! device; the stage's bytes split into weights, gradients and optimizer.

use pipescope::{Anatomy, Catalog, Scenario, ScenarioOverrides, Strategy, Zero, solve};

/// `model` on one node of 8 H100s (t 1, d 8, p 2), 4k tokens, ZeRO `zero`, ep `ep`.
fn scenario(model: &str, ep: u32, zero: Zero) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some(model.into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        tp: Some(1),
        pp: Some(2),
        dp: Some(8),
        ep: Some(ep),
        sp: Some(false),
        zero: Some(zero),
        strategy: Some(Strategy::Full),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s.plan.memory_budget_bytes = s.gpu.memory_bytes();
    s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

#[test]
fn zero_3_shards_the_experts_over_edp_and_the_rest_over_d_times_cp() {
    // Qwen3-30B-A3B, ep 4 of the 8 ranks: each expert is held by edp = 8 / 4 = 2 ranks.
    let s = scenario("qwen3-30b-a3b", 4, Zero::Full);
    assert_eq!(s.validate(), Ok(()));
    assert_eq!(s.parallel.expert_data_ranks(), 2);
    let a = Anatomy::build(&s).unwrap();
    let (moe, att) = (&a.moe, &a.attention);
    let routed = moe.expert_params;
    assert!(routed > 0 && routed < moe.params);
    // 18 bytes a parameter (bf16 weight, fp32 gradient, fp32 master and Adam's moments):
    // the dense ones over the 8 ranks of the stage, the experts over their 2.
    let shard = |n: u64, ranks: u64| (18.0 * n as f64 / ranks as f64).round() as u64;
    assert_eq!(att.static_bytes, shard(att.params, 8));
    assert_eq!(
        moe.static_bytes,
        shard(moe.params - routed, 8) + shard(routed, 2)
    );
    // Every device holds two gathered layers (bf16) and one layer's fp32 gradient: the
    // layer is attention + MoE with the rank's own experts whole.
    let layer = att.params + moe.params;
    assert_eq!(a.device_bytes, 2 * 2 * layer + 4 * layer);
    // Both gathers run inside the node (8 ranks of a data-parallel group, 2 of an expert
    // group): `(n - 1)/n` of the bytes each, at the same NVLink rate. So the MoE block's
    // gather is the attention's scaled by its dense part plus 4/7 of its experts.
    let ag = |b: &pipescope::Block| b.dp_comm.forward_s;
    let want =
        ag(att) * ((moe.params - routed) as f64 + 4.0 / 7.0 * routed as f64) / att.params as f64;
    assert!(close(ag(moe), want), "{} vs {want}", ag(moe));
    // The reduce-scatter of fp32 gradients is twice the bf16 gather.
    assert!(close(moe.dp_comm.backward_s - ag(moe), 2.0 * ag(moe)));
    // ep 8: every rank holds its own experts (edp 1), nothing of them to gather.
    let whole = Anatomy::build(&scenario("qwen3-30b-a3b", 8, Zero::Full)).unwrap();
    let dense = whole.moe.params - whole.moe.expert_params;
    assert!(close(
        ag(&whole.moe),
        ag(&whole.attention) * dense as f64 / whole.attention.params as f64
    ));
}

#[test]
fn a_zero_3_mixture_of_experts_solves_and_its_bytes_add_up() {
    let s = scenario("qwen3-30b-a3b", 4, Zero::Full);
    let a = Anatomy::build(&s).unwrap();
    let o = solve(&s).unwrap();
    assert_eq!((o.zero, o.ep), (3, 4));
    assert!(o.feasible, "{:?}", o.infeasible_reason);
    for st in &o.stages {
        assert_eq!(
            st.weights_bytes + st.grads_bytes + st.optimizer_bytes,
            st.static_bytes
        );
        // Each MoE block's experts: their bf16 shard over edp = 2.
        let routed = u64::from(st.moe_blocks) * a.moe.expert_params;
        assert_eq!(st.expert_weights_bytes, 2 * routed / 2);
        // The optimizer: 12 bytes of each parameter's shard, the experts' over 2 ranks.
        let dense = u64::from(st.attention_blocks) * a.attention.params
            + u64::from(st.moe_blocks) * (a.moe.params - a.moe.expert_params)
            + if st.stage == 0 {
                a.embedding.params
            } else {
                a.head.params
            };
        let want = 12.0 * (dense as f64 / 8.0 + routed as f64 / 2.0);
        assert!(
            (st.optimizer_bytes as f64 - want).abs() <= 1.0,
            "stage {}: {} vs {want}",
            st.stage,
            st.optimizer_bytes
        );
    }
    // ZeRO-3 holds less than the distributed optimizer's whole weights and gradients.
    let one = solve(&scenario("qwen3-30b-a3b", 4, Zero::Optimizer)).unwrap();
    assert!(o.stages[0].static_bytes < one.stages[0].static_bytes);
    assert!(o.time_breakdown_s.dp_comm > 0.0);
    let b = o.time_breakdown_s;
    assert!((b.total() - o.iteration_time_s).abs() <= 1e-9 * o.iteration_time_s);
}

#[test]
fn deepseek_v3_gathers_its_largest_layer_and_each_block_shares_its_own_layer_s_exposure() {
    // DeepSeek-V3: 3 dense layers, 58 MoE layers and one MTP layer (MTP + MoE) on 8 ranks
    // of p 8 (t 1, d 8, ep 8).
    let c = Catalog::builtin();
    let mut s = scenario("deepseek-v3", 8, Zero::Full);
    ScenarioOverrides {
        pp: Some(16),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    let a = Anatomy::build(&s).unwrap();
    let l = [
        a.attention.params + a.mlp.params,
        a.attention.params + a.moe.params,
        a.mtp.params + a.moe.params,
    ];
    let largest = *l.iter().max().unwrap();
    assert_eq!(
        largest, l[2],
        "the MTP layer (with its projection) is the largest"
    );
    assert_eq!(a.device_bytes, 2 * 2 * largest + 4 * largest);
    // The pass's opening gather is the common layer's: attention + MoE.
    assert!(close(
        a.pass_gather_s,
        a.attention.dp_comm.forward_s + a.moe.dp_comm.forward_s
    ));
    // Every layer block has its gathers and reduce-scatters, the MTP block included.
    for b in [&a.attention, &a.mlp, &a.moe, &a.mtp] {
        assert!(b.dp_comm.forward_s > 0.0, "{:?}", b.kind);
        assert!(b.dp_comm.backward_s > b.dp_comm.forward_s, "{:?}", b.kind);
    }
}

#[test]
fn a_recomputed_forward_under_zero_3_waits_for_no_gather_and_hides_the_backwards() {
    // Qwen3-235B-A22B as its Megatron-FSDP run (t 2, p 1, d 128, ep 8, micro-batch 4, full
    // recomputation): the experts' gathers over 32 nodes are exposed. Megatron-FSDP keeps a
    // layer gathered from its recomputed forward through its backward, so the recomputation
    // waits for no gather, and the backward's gathers and reduce-scatters also run under it.
    let run = |strategy: Strategy| {
        let c = Catalog::builtin();
        let mut s = c.scenario("korthikanti-22b").unwrap();
        ScenarioOverrides {
            model: Some("qwen3-235b-a22b".into()),
            gpu: Some("h100-80gb".into()),
            seq_len: Some(4096),
            micro_batch_size: Some(4),
            tp: Some(2),
            sp: Some(true),
            pp: Some(1),
            dp: Some(128),
            ep: Some(8),
            global_batch: Some(2048),
            zero: Some(Zero::Full),
            flash: Some(true),
            deepep: Some(true),
            strategy: Some(strategy),
            ..Default::default()
        }
        .apply(&mut s, &c)
        .unwrap();
        s.plan.memory_budget_bytes = s.gpu.memory_bytes();
        // The network at NVLink's fraction (the preset's before it had a measured one of its
        // own), so that the gathers stay as exposed as this check was set up with.
        s.gpu.efficiency.network = None;
        solve(&s).unwrap()
    };
    let (none, full) = (run(Strategy::None), run(Strategy::Full));
    let m = 4.0; // 2048 sequences over 128 replicas of 4
    let stage = &full.stages[0];
    // The recomputation is the layers' forward compute, not their forward with its waits
    // for the gathers (before: 98 % of the stage's forward a micro-batch, now 78 %).
    assert!(
        full.time_breakdown_s.recompute < 0.9 * m * stage.forward_s,
        "{} {}",
        full.time_breakdown_s.recompute,
        m * stage.forward_s
    );
    // What the backward leaves exposed shrinks by what the recomputation hides.
    assert!(
        full.time_breakdown_s.dp_comm < none.time_breakdown_s.dp_comm - 1.0,
        "{} {}",
        full.time_breakdown_s.dp_comm,
        none.time_breakdown_s.dp_comm
    );
}
