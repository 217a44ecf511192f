//! Mixtures of experts: the presets' parameter counts against the published totals and
//! active counts, the expert layout's folding rules, expert memory per rank, the
//! all-to-all volume of an MoE layer, routing imbalance, and Megatron's MoE recompute
//! module names in the `named` strategy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scenario_common::read_back;
use pipescope::{Anatomy, BlockKind, Catalog, Scenario, ScenarioOverrides, ScheduleKind, Strategy};

/// `model` on 8 GPUs of a node (t 1, d 8, pp 2), 4k tokens, micro-batch 1, ep `ep`.
fn moe_scenario(model: &str, ep: u32) -> Scenario {
    let c = Catalog::builtin();
    let mut sc = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some(model.into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        tp: Some(1),
        pp: Some(2),
        sp: Some(false),
        ..Default::default()
    }
    .apply(&mut sc, &c)
    .unwrap();
    sc.parallel.dp = 8;
    sc.parallel.ep = ep;
    sc.plan.memory_budget_bytes = sc.gpu.memory_bytes();
    sc
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    ((got - want) / want).abs() < rel
}

#[test]
fn preset_parameter_counts_equal_the_published_totals_and_active_counts() {
    let c = Catalog::builtin();
    // (preset, total, active) from each model's published configuration by the exact
    // formulas of docs/model.md; the cards round them to 671B/37B, 235B/22B, 30.5B/3.3B
    // and 141B/39B.
    for (name, total, active) in [
        ("deepseek-v3", 671.026e9, 37.552e9),
        ("qwen3-235b-a22b", 235.094e9, 22.191e9),
        ("qwen3-30b-a3b", 30.532e9, 3.353e9),
        ("mixtral-8x22b", 140.621e9, 39.152e9),
    ] {
        let mut m = c.model(name).unwrap().clone();
        // DeepSeek's 671B is its main model; its MTP module is counted apart below.
        m.mtp_layers = 0;
        let (n, a) = (m.parameters() as f64, m.active_parameters() as f64);
        assert!(close(n, total, 1e-4), "{name}: total {n} vs {total}");
        assert!(close(a, active, 1e-4), "{name}: active {a} vs {active}");
    }
    // DeepSeek-V3's MTP module: one more MoE layer with its projection and norms, its
    // embedding and head shared (the model card's "11.5B unique").
    let mut m = c.model("deepseek-v3").unwrap().clone();
    assert_eq!(m.mtp_layers, 1);
    let with = m.parameters() as f64;
    m.mtp_layers = 0;
    let mtp = with - m.parameters() as f64;
    assert!(close(mtp, 11.610e9, 1e-3), "MTP module {mtp}");
}

#[test]
fn ep_folds_into_the_stage_and_is_refused_with_the_rule() {
    // Qwen3-30B: 128 experts on t x cp x d = 8 GPUs a stage.
    for ep in [1, 2, 4, 8] {
        assert!(
            moe_scenario("qwen3-30b-a3b", ep).validate().is_ok(),
            "ep {ep}"
        );
    }
    let err = moe_scenario("qwen3-30b-a3b", 16).validate().unwrap_err();
    assert_eq!(err.field, "parallel.ep");
    assert!(err.to_string().contains("must divide"), "{err}");
    let mut s = moe_scenario("qwen3-30b-a3b", 4);
    s.parallel.etp = 4;
    assert_eq!(s.validate().unwrap_err().field, "parallel.ep");
    // Mixtral's 8 experts: ep 16 would split an expert.
    let mut s = moe_scenario("mixtral-8x22b", 8);
    s.parallel.dp = 16;
    s.parallel.ep = 16;
    let err = s.validate().unwrap_err();
    assert!(err.to_string().contains("model.experts (8)"), "{err}");
    // A dense model has no experts to split, and routes nothing.
    let mut s = moe_scenario("llama3-8b", 1);
    s.parallel.ep = 2;
    assert_eq!(s.validate().unwrap_err().field, "parallel.ep");
    let mut s = moe_scenario("llama3-8b", 1);
    s.plan.routing_imbalance = 1.5;
    assert_eq!(s.validate().unwrap_err().field, "plan.routing_imbalance");
    let mut s = moe_scenario("qwen3-30b-a3b", 8);
    s.plan.routing_imbalance = 0.5;
    assert_eq!(s.validate().unwrap_err().field, "plan.routing_imbalance");
}

#[test]
fn expert_memory_per_rank_is_split_over_ep_and_the_optimizer_over_edp() {
    let one = Anatomy::build(&moe_scenario("qwen3-30b-a3b", 1)).unwrap();
    let eight = Anatomy::build(&moe_scenario("qwen3-30b-a3b", 8)).unwrap();
    let (h, fe, e) = (2048u64, 768u64, 128u64);
    let experts = e * 3 * h * fe;
    assert_eq!(one.moe.expert_params, experts);
    assert_eq!(eight.moe.expert_params, experts / 8);
    // The rest of the block (norm, router) is whole on every rank.
    let rest = h + e * h;
    assert_eq!(one.moe.params, experts + rest);
    assert_eq!(eight.moe.params, experts / 8 + rest);
    // 18 bytes a parameter without the distributed optimizer.
    assert_eq!(eight.moe.static_bytes, 18 * (experts / 8 + rest));
    // With it, the dense part's optimizer is split over d x cp = 8, the experts' over
    // edp = 8 / ep = 1.
    let mut s = moe_scenario("qwen3-30b-a3b", 8);
    s.parallel.distributed_optimizer = true;
    let z = Anatomy::build(&s).unwrap();
    let want = 18.0 * (experts / 8) as f64 + (6.0 + 12.0 / 8.0) * rest as f64;
    assert!(
        (z.moe.static_bytes as f64 - want).abs() < 2.0,
        "{}",
        z.moe.static_bytes
    );
    // Every layer of Qwen3 is MoE: the chain has no dense MLP block.
    assert_eq!(one.dense_layers, 0);
    assert_eq!(one.kind_of(2), BlockKind::Moe);
}

#[test]
fn all_to_all_volume_is_tokens_times_top_k_times_hidden_over_the_ep_group() {
    let s = moe_scenario("qwen3-30b-a3b", 8);
    let a = Anatomy::build(&s).unwrap();
    let (tokens, k, h) = (4096.0, 8.0, 2048.0);
    // Dispatch: each row in bf16 with its fp32 probability; combine: the rows back in bf16.
    // All eight ranks share one node: 7/8 of the bytes leave over NVLink.
    let bytes = tokens * k * (2.0 * h + 4.0) + tokens * k * 2.0 * h;
    let rate = s.gpu.link_gbps * 1e9 * s.gpu.efficiency.link;
    let want = 7.0 / 8.0 * bytes / rate;
    let got = a.moe.ep_comm.forward_s;
    assert!(close(got, want, 1e-9), "{got} vs {want}");
    // The backward mirrors it; all of it is inside the block's times.
    assert!(close(a.moe.ep_comm.backward_s, want, 1e-9));
    assert!(a.moe.forward_s > want);
    // ep 1: no all-to-all.
    let one = Anatomy::build(&moe_scenario("qwen3-30b-a3b", 1)).unwrap();
    assert_eq!(one.moe.ep_comm.forward_s, 0.0);
}

/// DeepSeek-V3's group-limited routing (8 groups, 4 a token) keeps a token on 4 of the 8
/// nodes of an EP-64 group: DeepEP's network share falls by `3.60 / 5.25`; the plain
/// all-to-all, whose balanced traffic reaches every node alike, does not change. The preset
/// carries the published `n_group`/`topk_group`, and a saved preset keeps them.
#[test]
fn group_limited_routing_lowers_deepep_network_traffic_over_nodes() {
    let c = Catalog::builtin();
    let e = c.model("deepseek-v3").unwrap().moe.unwrap();
    let g = e.groups.unwrap();
    assert_eq!((g.expert_groups, g.groups_per_token), (8, 4));
    let at = |deepep: bool, grouped: bool| {
        let mut s = moe_scenario("deepseek-v3", 64);
        s.parallel.dp = 64;
        s.plan.deepep = deepep;
        if !grouped {
            s.model.moe = s.model.moe.map(|mut e| {
                e.groups = None;
                e
            });
        }
        Anatomy::build(&s).unwrap().moe.ep_comm.forward_s
    };
    let hit = |r: f64| r * (1.0 - (1.0 - 1.0 / r).powi(8));
    let (limited, free) = (at(true, true), at(true, false));
    assert!(
        close(limited / free, hit(4.0) / hit(8.0), 1e-9),
        "{limited} / {free}"
    );
    assert_eq!(at(false, true), at(false, false));
    let text = pipescope::to_toml(&moe_scenario("deepseek-v3", 8));
    assert!(text.contains("expert_groups = 8") && text.contains("groups_per_token = 4"));
}

/// The busiest rank's load over the mean for a busiest-expert imbalance `x`, `e` experts
/// over `ep` ranks (docs/model.md, "Routing imbalance"), written out here independently.
fn rank_load(x: f64, e: f64, ep: f64) -> f64 {
    let l = e / ep;
    (x + (l - 1.0) * (e - x) / (e - 1.0)) / l
}

/// The imbalance is the busiest expert's; a rank averages it over the experts it holds: one
/// expert a rank (ep = E) carries all of it, one rank holding every expert (ep 1) none.
#[test]
fn routing_imbalance_scales_the_busiest_rank_s_work_memory_and_all_to_all() {
    // qwen3-30b-a3b: 128 experts; d 128 lets ep reach E.
    let at = |ep: u32, x: f64| {
        let mut s = moe_scenario("qwen3-30b-a3b", ep);
        s.parallel.dp = 128;
        s.plan.routing_imbalance = x;
        Anatomy::build(&s).unwrap()
    };
    let fc1 = |x: &Anatomy| x.moe.unit("fc1_out").unwrap().size_bytes as f64;
    for (ep, want) in [
        (1u32, 1.0),
        (2, rank_load(3.0, 128.0, 2.0)),
        (8, rank_load(3.0, 128.0, 8.0)),
        (128, 3.0),
    ] {
        let (a, b) = (at(ep, 1.0), at(ep, 3.0));
        assert!(close(fc1(&b), want * fc1(&a), 1e-6), "ep {ep}");
        if ep > 1 {
            assert!(close(
                b.moe.ep_comm.forward_s,
                want * a.moe.ep_comm.forward_s,
                1e-9
            ));
            assert!(b.moe.forward_s > a.moe.forward_s, "ep {ep}");
        } else {
            // One rank holds every expert and every token: nothing changes.
            assert_eq!(b.moe.forward_s, a.moe.forward_s);
        }
        // The attention block does not change.
        assert_eq!(a.attention.forward_s, b.attention.forward_s);
    }
    assert!(rank_load(3.0, 128.0, 2.0) < 1.02);
}

/// A busiest expert above `E / k` times the mean would receive more than every token.
#[test]
fn routing_imbalance_above_experts_over_top_k_is_refused() {
    // qwen3-30b-a3b: 128 experts, 8 a token: at most 16.
    let mut s = moe_scenario("qwen3-30b-a3b", 8);
    s.plan.routing_imbalance = 16.0;
    assert!(s.validate().is_ok());
    s.plan.routing_imbalance = 16.5;
    let e = s.validate().unwrap_err();
    assert_eq!(e.field, "plan.routing_imbalance");
    assert!(e.to_string().contains("128 / 8"), "{e}");
}

#[test]
fn megatron_moe_module_names_select_their_units() {
    let mut s = moe_scenario("deepseek-v3", 8);
    s.plan.strategy = Strategy::Named;
    let named = |s: &Scenario, names: &[&str]| {
        let mut s = s.clone();
        s.plan.recompute_units = names.iter().map(|n| n.to_string()).collect();
        let a = Anatomy::build(&s).unwrap();
        let mut out = Vec::new();
        for k in [
            BlockKind::Attention,
            BlockKind::Mlp,
            BlockKind::Moe,
            BlockKind::Mtp,
        ] {
            for u in a.block_of(k).units.iter().filter(|u| u.named) {
                out.push(format!("{}.{}", k.name(), u.name));
            }
        }
        out
    };
    assert_eq!(named(&s, &["moe_act"]), ["moe.act_out"]);
    assert_eq!(
        named(&s, &["shared_experts"]),
        ["moe.shared_fc1_out", "moe.shared_act_out"]
    );
    assert_eq!(
        named(&s, &["mla_up_proj"]),
        [
            "attention.q_ln_out",
            "attention.kv_ln_out",
            "attention.q_up",
            "attention.k_up",
            "attention.v_up",
            "mtp.q_ln_out",
            "mtp.kv_ln_out",
            "mtp.q_up",
            "mtp.k_up",
            "mtp.v_up"
        ]
    );
    assert_eq!(
        named(&s, &["layernorm"]),
        [
            "attention.input_norm_out",
            "moe.norm_out",
            "mtp.input_norm_out"
        ]
    );
    assert_eq!(
        named(&s, &["moe"]),
        ["moe.router", "moe.dispatched", "moe.fc1_out", "moe.act_out"]
    );
    // The dense layers' MLP is `mlp`.
    assert_eq!(
        named(&s, &["mlp"]),
        ["mlp.norm_out", "mlp.gate_up", "mlp.swiglu_out"]
    );
    // A module this model has no units for is refused.
    let mut q = moe_scenario("qwen3-30b-a3b", 8);
    q.plan.strategy = Strategy::Named;
    q.plan.recompute_units = vec!["mla_up_proj".into()];
    let err = Anatomy::build(&q).unwrap_err();
    assert_eq!(err.field, "plan.recompute_units");
}

/// AdaPipe's multi-chunk partition search counts whole layers per device: on a chain whose
/// layers are all alike (Qwen3: attention + MoE) it searches them, holding MoE blocks; where
/// they differ (DeepSeek-V3's dense and MTP layers) it keeps the even partition and says so.
#[test]
fn adapipe_on_interleaved_searches_alike_layers_and_keeps_even_where_they_differ() {
    let note = "this model's layers differ";
    let mut alike = moe_scenario("qwen3-30b-a3b", 8);
    alike.model.layers = 8;
    alike.plan.schedule = pipescope::ScheduleKind::Interleaved;
    alike.parallel.chunks = 2;
    alike.batch.micro_batches = 4;
    alike.plan.strategy = Strategy::AdaPipe;
    let o = pipescope::solve(&alike).unwrap();
    assert!(o.notes.iter().all(|n| !n.contains(note)), "{:?}", o.notes);
    assert!(
        o.stages
            .iter()
            .all(|st| st.moe_blocks > 0 && st.mlp_blocks == 0)
    );
    let mut differ = alike.clone();
    differ.model = moe_scenario("deepseek-v3", 8).model;
    differ.model.layers = 8;
    differ.model.moe = differ.model.moe.map(|mut e| {
        e.dense_layers = 2;
        e
    });
    let o = pipescope::solve(&differ).unwrap();
    assert!(o.notes.iter().any(|n| n.contains(note)), "{:?}", o.notes);
}

/// A Megatron layout names DeepSeek's MTP layer `m`, after every `t`: the split follows it
/// (the MTP layer's two blocks on the last stage, before the loss).
#[test]
fn a_layout_places_the_mtp_layer_where_its_m_stands() {
    let mut s = moe_scenario("deepseek-v3", 8);
    s.model.layers = 8;
    s.model.moe = s.model.moe.map(|mut e| {
        e.dense_layers = 2;
        e
    });
    s.plan.strategy = Strategy::Full;
    s.plan.layout = Some(pipescope::PipelineLayout::parse("Et*5|t*3mL").unwrap());
    let o = pipescope::solve(&s).unwrap();
    assert_eq!(o.stages[0].ranges, vec![[0, 10]]);
    assert_eq!(o.stages[1].ranges, vec![[11, 19]]);
    assert_eq!((o.stages[1].mtp_blocks, o.stages[0].mtp_blocks), (1, 0));
    // An `m` before a `t` is refused with its column.
    s.plan.layout = Some(pipescope::PipelineLayout::parse("Et*4m|t*4L").unwrap());
    let e = pipescope::solve(&s).unwrap_err().to_string();
    assert!(e.contains("before a `t`"), "{e}");
}

#[test]
fn full_recomputation_recomputes_the_moe_and_mtp_blocks_too() {
    let mut s = moe_scenario("deepseek-v3", 8);
    s.model.layers = 8;
    s.model.moe = s.model.moe.map(|mut e| {
        e.dense_layers = 2;
        e
    });
    s.plan.strategy = Strategy::Full;
    let o = pipescope::solve(&s).unwrap();
    let mut seen = 0;
    for st in &o.stages {
        for u in &st.units {
            let kind = u.name.split('.').next().unwrap();
            if ["moe", "mtp", "mlp"].contains(&kind) && u.name != "mtp.input" {
                // Only a chunk's first MLP/MoE block keeps its input.
                if u.name.ends_with(".input") {
                    continue;
                }
                assert_eq!(u.keep, 0, "{} kept under full", u.name);
                seen += 1;
            }
        }
    }
    assert!(seen > 0);
}

#[test]
fn the_all_to_alls_are_drawn_on_the_comm_lane_and_the_perfetto_collectives_thread() {
    let s = moe_scenario("qwen3-30b-a3b", 8);
    let o = pipescope::solve(&s).unwrap();
    let a2a: Vec<&pipescope::Span> = o
        .simulation
        .timeline
        .spans
        .iter()
        .filter(|x| x.kind == pipescope::SpanKind::A2a)
        .collect();
    assert!(!a2a.is_empty());
    assert!(a2a.iter().all(|x| x.lane == pipescope::Lane::Comm));
    assert!(o.time_breakdown_s.ep_comm > 0.0);
    let text = pipescope::perfetto_trace(&pipescope::Run::planned(&o));
    assert!(text.contains("\"cat\":\"A2A\""), "no A2A event");
    // A dense model draws none and reports no ep_comm.
    let dense = pipescope::solve(&moe_scenario("llama3-8b", 1)).unwrap();
    assert_eq!(dense.time_breakdown_s.ep_comm, 0.0);
}

#[test]
fn a_dense_model_s_mtp_layer_has_a_dense_mlp_and_the_head_pays_its_loss() {
    let mut s = moe_scenario("llama3-8b", 1);
    let base = Anatomy::build(&s).unwrap();
    s.model.mtp_layers = 1;
    let a = Anatomy::build(&s).unwrap();
    let l = s.model.layers as usize;
    assert_eq!(a.layers, s.model.layers + 1);
    assert_eq!(a.kind_of(2 * l + 1), BlockKind::Mtp);
    assert_eq!(a.kind_of(2 * l + 2), BlockKind::Mlp);
    assert_eq!(a.kind_of(2 * l + 3), BlockKind::Head);
    assert!(!a.kinds().any(|k| k == BlockKind::Moe));
    // One more projection and loss through the shared head.
    assert!(a.head.forward_s > 1.9 * base.head.forward_s);
    // The MTP block: its projection's units, then an attention sub-layer's.
    assert!(a.mtp.unit("eh_proj_out").is_some() && a.mtp.unit("v").is_some());
}

#[test]
fn a_moe_scenario_round_trips_through_toml_and_bad_model_keys_are_refused() {
    let mut s = moe_scenario("deepseek-v3", 8);
    s.name = "moe-round-trip".into();
    s.plan.routing_imbalance = 1.5;
    s.plan.cross_entropy_loss_fusion = false;
    s.model.mtp_layers = 0;
    assert_eq!(read_back(&s), s);
    // Expert keys without experts, MLA keys without attention = "mla", missing top-k.
    for (extra, field) in [
        ("expert_ffn = 10", "model.expert_ffn"),
        ("kv_lora_rank = 8", "model.kv_lora_rank"),
        ("experts = 8\nexpert_ffn = 64", "model.experts_per_token"),
        ("attention = \"xyz\"", "model.attention"),
        (
            "experts = 8\nexperts_per_token = 9\nexpert_ffn = 64",
            "model.experts_per_token",
        ),
        (
            "expert_groups = 2\ngroups_per_token = 1",
            "model.expert_groups",
        ),
        (
            "experts = 8\nexperts_per_token = 2\nexpert_ffn = 64\nexpert_groups = 4",
            "model.groups_per_token",
        ),
        (
            "experts = 8\nexperts_per_token = 2\nexpert_ffn = 64\ngroups_per_token = 1",
            "model.expert_groups",
        ),
        (
            "experts = 8\nexperts_per_token = 2\nexpert_ffn = 64\nexpert_groups = 3\n\
             groups_per_token = 1",
            "model.expert_groups",
        ),
        (
            "experts = 8\nexperts_per_token = 2\nexpert_ffn = 64\nexpert_groups = 4\n\
             groups_per_token = 5",
            "model.groups_per_token",
        ),
        (
            "experts = 8\nexperts_per_token = 4\nexpert_ffn = 64\nexpert_groups = 4\n\
             groups_per_token = 1",
            "model.groups_per_token",
        ),
    ] {
        let text = format!(
            "[model]\nname = \"bad\"\nstyle = \"llama\"\nlayers = 2\nhidden = 64\nheads = 4\n\
             ffn = 128\nvocab = 1000\n{extra}\n"
        );
        let err = Catalog::builtin().add_text("bad.toml", &text).unwrap_err();
        assert!(err.to_string().contains(field), "{extra}: {err}");
    }
}

#[test]
fn a_huge_mixture_of_experts_is_refused_not_overflowed() {
    let text = "[model]\nname = \"huge\"\nstyle = \"llama\"\nlayers = 2\nhidden = 16777216\n\
                heads = 1\nffn = 16\nvocab = 1000\nexperts = 65536\nexperts_per_token = 1\n\
                shared_experts = 65536\nexpert_ffn = 16777216\n";
    let err = Catalog::builtin().add_text("huge.toml", text).unwrap_err();
    assert!(err.to_string().contains("model"), "{err}");
}

/// The MTP layer looks the next tokens up in a copy of the embedding where it runs apart
/// from the embedding (p > 1), and in the embedding itself at p 1: no copy is counted there.
#[test]
fn the_mtp_layer_holds_no_embedding_copy_on_a_single_stage() {
    let two = moe_scenario("deepseek-v3", 8);
    let mut one = two.clone();
    one.parallel.pp = 1;
    let (a2, a1) = (Anatomy::build(&two).unwrap(), Anatomy::build(&one).unwrap());
    assert!(a1.embedding.params > 0);
    assert_eq!(a2.mtp.params - a1.mtp.params, a1.embedding.params);
    assert!(a1.mtp.static_bytes < a2.mtp.static_bytes);
}

/// Where the placement puts the last stage on the first device (V-shape, DualPipe), the MTP
/// layer runs beside the embedding and shares it, as DeepSeek-V3 does (its technical report,
/// section 3.2.3): no copy either.
#[test]
fn the_mtp_layer_shares_the_embedding_where_the_last_stage_sits_with_the_first() {
    let looped = moe_scenario("deepseek-v3", 8);
    let plain = Anatomy::build(&looped).unwrap();
    for kind in [
        ScheduleKind::DualPipe,
        ScheduleKind::DualPipeV,
        ScheduleKind::ZbV,
    ] {
        let mut s = looped.clone();
        s.plan.schedule = kind;
        let a = Anatomy::build(&s).unwrap();
        assert_eq!(
            plain.mtp.params - a.mtp.params,
            a.embedding.params,
            "{kind:?}"
        );
    }
}

/// `--deepep` inside one node costs the dispatch and combine at DeepEP's measured NVLink
/// rates and drops the permute and copy-sum its kernels do themselves (docs/model.md,
/// "All-to-all cost"), so it changes the figures there, and its note says so (it said the
/// flag changed no figure, written before those rates were modelled).
#[test]
fn deepep_inside_a_node_is_costed_at_its_own_rates_and_its_note_says_so() {
    let run = |deepep: bool| {
        let mut s = moe_scenario("qwen3-30b-a3b", 8);
        s.plan.deepep = deepep;
        let a = Anatomy::build(&s).unwrap();
        let out = pipescope::solve(&s).unwrap();
        (a.moe.ep_comm.forward_s, out)
    };
    let ((plain_comm, plain), (deepep_comm, deepep)) = (run(false), run(true));
    assert!(
        deepep_comm < plain_comm,
        "{deepep_comm} against {plain_comm}"
    );
    assert!(deepep.iteration_time_s < plain.iteration_time_s);
    let note = deepep.notes.iter().find(|n| n.starts_with("deepep:"));
    assert!(
        note.is_some_and(|n| n.contains("measured NVLink rates") && !n.contains("no figure")),
        "{:?}",
        deepep.notes
    );
}

#[test]
fn the_megatron_export_says_whether_the_loss_is_fused_as_costed() {
    // Megatron's `--cross-entropy-loss-fusion` is off unless given; pipescope costs the fused
    // loss by default, so the export asks for it, and leaves it out where the unfused loss
    // is costed (`plan.cross_entropy_loss_fusion = false`).
    let mut s = moe_scenario("qwen3-30b-a3b", 8);
    let flag = |s: &pipescope::Scenario| {
        let out = pipescope::solve(s).unwrap();
        pipescope::megatron_args(s, &out)
            .unwrap()
            .contains("--cross-entropy-loss-fusion")
    };
    assert!(flag(&s));
    s.plan.cross_entropy_loss_fusion = false;
    assert!(!flag(&s));
}
