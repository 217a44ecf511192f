//! The Megatron-LM export: a bash launch script whose layout, decoded with Megatron's
//! grammar (commas ignored, `(X)*n` and `x*n` expanded, `|` between virtual stages in
//! virtual-stage-major order, `E` first, `L` last), gives exactly the plan's layers per
//! stage of the model chain; whose flags are all Megatron's (the list kept from its
//! `arguments.py`) and pass the cross-flag rules of its `validate_args`; and which says the
//! model's shape, the precision, the GPU count and the environment.

#![allow(clippy::unwrap_used)]

use crate::cli_common;
use crate::megatron_common::{Launch, check_flags, check_rules, decode, expand, flag_list, launch};
use pipescope::{
    Catalog, ModelStyle, Placement, Scenario, ScheduleKind, Strategy, default_scenario,
    megatron_args,
};

/// One stage of the model chain as the layout describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StageLayers {
    embedding: bool,
    layers: u32,
    head: bool,
}

fn export(scenario: &Scenario) -> (String, Launch) {
    let outcome = pipescope::solve(scenario).unwrap();
    let text = megatron_args(scenario, &outcome).unwrap();
    let l = launch(&text);
    (text, l)
}

fn preset(name: &str) -> Scenario {
    Catalog::builtin().scenario(name).unwrap()
}

fn as_stage_layers(layout: &str) -> Vec<StageLayers> {
    decode(layout)
        .into_iter()
        .map(|d| StageLayers {
            embedding: d.embedding,
            layers: d.layers,
            head: d.loss,
        })
        .collect()
}

#[test]
fn the_decoder_reads_megatrons_grammar() {
    let st = |e, n, l| StageLayers {
        embedding: e,
        layers: n,
        head: l,
    };
    let stages = vec![
        st(true, 3, false),
        st(false, 4, false),
        st(false, 4, false),
        st(false, 4, false),
        st(false, 1, false),
        st(false, 0, true),
    ];
    assert_eq!(as_stage_layers("Et*3|(t*4|)*3t|L"), stages);
    assert_eq!(expand("Et*3|(tt|)*2,m|L"), "Ettt|tt|tt|m|L");
}

#[test]
fn layout_decodes_to_the_plans_layers_for_every_placement() {
    let cases = [
        (ScheduleKind::OneFOneB, Strategy::AdaPipe),
        (ScheduleKind::OneFOneB, Strategy::Full),
        (ScheduleKind::Interleaved, Strategy::Adaptive),
        (ScheduleKind::ZbV, Strategy::AdaPipe),
        (ScheduleKind::Chimera, Strategy::Full),
        (ScheduleKind::DualPipe, Strategy::Full),
    ];
    for (kind, strategy) in cases {
        let mut scenario = default_scenario();
        scenario.plan.schedule = kind;
        scenario.plan.strategy = strategy;
        let outcome = pipescope::solve(&scenario).unwrap();
        let text = megatron_args(&scenario, &outcome).unwrap();
        let l = launch(&text);
        let decoded = as_stage_layers(l.one("--pipeline-model-parallel-layout").unwrap());
        // The plan's chain stages, independently: device d's chunk c sits at the placement's
        // stage; a layer counts where its attention block (2l + 1) is.
        let p = scenario.parallel.pp;
        let placement = kind.placement();
        let stages = if placement == Placement::Chimera {
            p
        } else {
            p * kind.chunks(scenario.parallel.chunks)
        };
        let mut want = vec![None; stages as usize];
        for st in &outcome.stages {
            for (c, [a, e]) in st.ranges.iter().copied().enumerate() {
                let c = c as u32;
                let s = match placement {
                    Placement::Single => st.stage,
                    Placement::Looped => c * p + st.stage,
                    Placement::VShape if c == 1 => 2 * p - 1 - st.stage,
                    Placement::Chimera if c == 1 => continue,
                    _ => st.stage,
                };
                let layers = (a..=e)
                    .filter(|b| b % 2 == 1 && *b < 2 * scenario.model.layers as usize + 1)
                    .count() as u32;
                want[s as usize] = Some(StageLayers {
                    embedding: a == 0,
                    layers,
                    head: e == 2 * scenario.model.layers as usize + 1,
                });
            }
        }
        let want: Vec<StageLayers> = want.into_iter().map(Option::unwrap).collect();
        assert_eq!(decoded, want, "{kind}/{strategy}");
        let total: u32 = decoded.iter().map(|s| s.layers).sum();
        assert_eq!(total, scenario.model.layers);
        assert_eq!(l.int("--num-layers", 0), u64::from(scenario.model.layers));
        assert_eq!(l.int("--pipeline-model-parallel-size", 0), u64::from(p));
        if strategy == Strategy::Full {
            assert_eq!(l.one("--recompute-granularity"), Some("full"), "{text}");
        }
        if matches!(
            kind,
            ScheduleKind::ZbV | ScheduleKind::Chimera | ScheduleKind::DualPipe
        ) {
            assert!(text.contains(&format!("# schedule: {kind} is not in upstream")));
        }
        if placement == Placement::Chimera {
            assert!(
                text.contains(&format!("# {kind} replicates the stages")),
                "{text}"
            );
        }
        if strategy == Strategy::AdaPipe {
            // The per-stage decisions as JSON on # lines.
            let json: Vec<serde_json::Value> = text
                .lines()
                .filter_map(|l| l.strip_prefix("# {"))
                .map(|l| serde_json::from_str(&format!("{{{l}")).unwrap())
                .collect();
            assert_eq!(json.len(), p as usize);
            assert!(json[0]["units"].as_object().unwrap().len() > 3);
        }
    }
}

#[test]
fn the_flag_list_names_its_megatron_commit() {
    let (commit, flags) = flag_list();
    assert_eq!(commit.len(), 40, "a full commit hash: {commit}");
    assert!(commit.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(flags.len() > 500);
    assert_eq!(flags["--bf16"].kind, "switch");
    assert_eq!(flags["--num-layers"].kind, "int");
}

/// Every preset, on its own schedule and on the three placements that need the layout to
/// be right: every flag is Megatron's, every rule of validate_args holds, and the script
/// says the whole job.
#[test]
fn every_preset_passes_megatrons_flag_list_and_rules() {
    let catalog = Catalog::builtin();
    for name in catalog.scenario_names() {
        for kind in [
            None,
            Some(ScheduleKind::Interleaved),
            Some(ScheduleKind::ZbV),
        ] {
            let mut s = catalog.scenario(name).unwrap();
            if let Some(kind) = kind {
                s.plan.schedule = kind;
            }
            let Ok(outcome) = pipescope::solve(&s) else {
                // A schedule this preset's shape does not allow (a V-shape at p 1).
                assert!(kind.is_some(), "{name}");
                continue;
            };
            let text = megatron_args(&s, &outcome).unwrap();
            let l = launch(&text);
            let problems: Vec<String> =
                check_flags(&l).into_iter().chain(check_rules(&l)).collect();
            assert!(problems.is_empty(), "{name} {kind:?}: {problems:?}\n{text}");
            let par = &s.parallel;
            assert_eq!(
                l.world(),
                u64::from(par.tp) * u64::from(par.pp) * u64::from(par.dp),
                "{name}"
            );
            assert!(l.per_node <= u64::from(s.gpu.node_gpus));
            assert!(text.contains(&format!("# WORLD_SIZE={}", l.world())));
            assert_eq!(l.script, "pretrain_gpt.py");
            assert!(l.has("--bf16"));
            let m = &s.model;
            assert_eq!(l.int("--hidden-size", 0), m.hidden);
            assert_eq!(l.int("--num-attention-heads", 0), m.heads);
            assert_eq!(l.int("--num-query-groups", m.heads), m.kv_heads);
            assert_eq!(l.int("--ffn-hidden-size", 0), m.ffn);
            assert_eq!(l.int("--vocab-size", 0), m.vocab);
            assert_eq!(l.int("--seq-length", 0), s.batch.seq_len);
            let llama = m.style == ModelStyle::Llama;
            assert_eq!(l.has("--swiglu"), llama);
            assert_eq!(l.has("--disable-bias-linear"), llama);
            assert_eq!(
                l.one("--normalization"),
                Some(if llama { "RMSNorm" } else { "LayerNorm" })
            );
            assert_eq!(
                l.has("--untie-embeddings-and-output-weights"),
                !m.tied_embeddings
            );
            assert_eq!(
                l.int("--global-batch-size", 0),
                s.batch.micro_batch_size * u64::from(s.batch.micro_batches) * u64::from(par.dp)
            );
            assert_eq!(
                l.connections.as_deref(),
                (par.tp > 1).then_some("1"),
                "{name}"
            );
        }
    }
}

#[test]
fn the_data_parallel_flags_follow_the_scenario() {
    // Before: `--overlap-grad-reduce` was written whatever the scenario said.
    for overlap in [false, true] {
        for sharded in [false, true] {
            let mut s = preset("tiny-4x8");
            s.parallel.dp = 2;
            s.plan.overlap_grad_reduce = overlap;
            s.parallel.distributed_optimizer = sharded;
            let (_, l) = export(&s);
            assert_eq!(l.has("--overlap-grad-reduce"), overlap);
            assert_eq!(l.has("--use-distributed-optimizer"), sharded);
            assert_eq!(l.world(), 8);
        }
    }
    let mut s = preset("tiny-4x8");
    s.parallel.grad_bytes = 2;
    assert!(export(&s).1.has("--grad-reduce-in-bf16"));
}

#[test]
fn the_fp8_flags_follow_the_precision() {
    let mut s = preset("tiny-4x8");
    s.gpu = Catalog::builtin().gpu("h100-80gb").unwrap().clone();
    s.plan.memory_budget_bytes = s.gpu.memory_bytes();
    assert!(!export(&s).1.has("--fp8-format"));
    s.parallel.precision = pipescope::Precision::Fp8;
    let (text, l) = export(&s);
    let problems: Vec<String> = check_flags(&l).into_iter().chain(check_rules(&l)).collect();
    assert!(problems.is_empty(), "{problems:?}\n{text}");
    assert_eq!(l.one("--fp8-format"), Some("hybrid"));
    assert_eq!(l.one("--fp8-recipe"), Some("delayed"));
    assert_eq!(l.int("--fp8-amax-history-len", 0), 1024);
    assert_eq!(l.one("--fp8-amax-compute-algo"), Some("max"));
    assert!(l.has("--bf16"));
    // Blackwell runs Transformer Engine's MXFP8 block scaling: no amax history.
    for gpu in ["b200-180gb", "gb200-186gb"] {
        s.gpu = Catalog::builtin().gpu(gpu).unwrap().clone();
        s.plan.memory_budget_bytes = s.gpu.memory_bytes();
        let (text, l) = export(&s);
        let problems: Vec<String> = check_flags(&l).into_iter().chain(check_rules(&l)).collect();
        assert!(problems.is_empty(), "{gpu}: {problems:?}\n{text}");
        assert_eq!(l.one("--fp8-recipe"), Some("mxfp8"), "{gpu}");
        assert_eq!(l.one("--fp8-format"), Some("e4m3"), "{gpu}");
        assert!(!l.has("--fp8-amax-history-len") && !l.has("--fp8-amax-compute-algo"));
        s.parallel.precision = pipescope::Precision::Bf16;
        assert!(!export(&s).1.has("--fp8-recipe"), "{gpu}");
        s.parallel.precision = pipescope::Precision::Fp8;
    }
}

#[test]
fn context_parallelism_sharding_and_the_overlaps_pass_megatrons_check() {
    let catalog = Catalog::builtin();
    let mut s = catalog.scenario("gpt3-175b-16k").unwrap();
    s.gpu = catalog.gpu("h100-80gb").unwrap().clone();
    s.plan.memory_budget_bytes = s.gpu.memory_bytes();
    s.plan.schedule = ScheduleKind::Interleaved;
    s.parallel.chunks = 2;
    s.parallel.dp = 2;
    s.parallel.cp = 2;
    s.plan.overlap_grad_reduce = true;
    for (zero, overlaps) in [
        (pipescope::Zero::Off, false),
        (pipescope::Zero::Optimizer, true),
        (pipescope::Zero::Full, false),
        (pipescope::Zero::Full, true),
    ] {
        s.parallel.set_zero(zero);
        s.plan.overlap_param_gather = overlaps;
        s.plan.tp_comm_overlap = overlaps;
        let (text, l) = export(&s);
        let problems: Vec<String> = check_flags(&l).into_iter().chain(check_rules(&l)).collect();
        assert!(
            problems.is_empty(),
            "{zero:?} {overlaps}: {problems:?}\n{text}"
        );
        assert_eq!(l.int("--context-parallel-size", 1), 2);
        assert_eq!(l.one("--cp-comm-type"), Some("p2p"));
        // t 8 x cp 2 x p 8 x d 2.
        assert_eq!(l.world(), 256);
        assert!(text.contains("tensor 8 x context 2 x pipeline 8 x data 2"));
        let full = zero == pipescope::Zero::Full;
        assert_eq!(l.has("--use-megatron-fsdp"), full);
        assert_eq!(
            l.one("--data-parallel-sharding-strategy"),
            full.then_some("optim_grads_params")
        );
        assert_eq!(
            l.has("--use-distributed-optimizer"),
            zero != pipescope::Zero::Off
        );
        // Megatron-FSDP always overlaps both; otherwise as asked.
        assert_eq!(l.has("--overlap-param-gather"), full || overlaps);
        assert_eq!(l.has("--tp-comm-overlap"), overlaps);
        // One connection for t and cp, except under FSDP, which refuses it.
        assert_eq!(l.connections.as_deref(), (!full).then_some("1"));
    }
}

#[test]
fn a_job_larger_than_a_node_spans_nodes() {
    let mut s = default_scenario();
    s.parallel.dp = 3;
    let (_, l) = export(&s);
    assert_eq!((l.per_node, l.nodes), (8, 24));
}

#[test]
fn the_rules_refuse_what_megatron_refuses() {
    let base = "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --num-layers 4 \
                --hidden-size 64 --num-attention-heads 8 --max-position-embeddings 128 \
                --seq-length 128 --micro-batch-size 1 --global-batch-size 8 \
                --pipeline-model-parallel-layout Et*2|t*2L";
    let ok = Launch::from_words(Some("1"), 8, base);
    assert!(check_rules(&ok).is_empty(), "{:?}", check_rules(&ok));
    assert!(check_flags(&ok).is_empty(), "{:?}", check_flags(&ok));
    let refused = [
        (Some("1"), 6, ""),
        (None, 8, ""),
        (Some("1"), 8, "--global-batch-size 7"),
        (Some("1"), 8, "--pipeline-model-parallel-layout Et*2|t*1L"),
        (Some("1"), 8, "--pipeline-model-parallel-layout Et|t|tL"),
        (Some("1"), 8, "--num-attention-heads 7"),
        (Some("1"), 8, "--num-query-groups 3"),
        (
            Some("1"),
            8,
            "--recompute-granularity selective --recompute-method block",
        ),
        (Some("1"), 8, "--recompute-granularity full"),
        (
            Some("1"),
            8,
            "--recompute-granularity selective --recompute-modules moe_act",
        ),
        (Some("1"), 8, "--overlap-param-gather --overlap-grad-reduce"),
        (Some("1"), 8, "--tp-comm-overlap"),
        (
            Some("1"),
            8,
            "--context-parallel-size 2 --seq-length 126 --max-position-embeddings 126",
        ),
        (Some("1"), 8, "--expert-model-parallel-size 2"),
        (
            Some("1"),
            8,
            "--use-megatron-fsdp --ckpt-format fsdp_dtensor",
        ),
        (Some("1"), 8, "--bf16 --fp16"),
        (Some("1"), 8, "--max-position-embeddings 64"),
    ];
    for (connections, world, extra) in refused {
        // A later flag replaces an earlier one, as argparse does.
        let mut l = Launch::from_words(connections, world, base);
        for (flag, values) in Launch::from_words(None, 1, extra).args {
            l.args.retain(|(f, _)| *f != flag);
            l.args.push((flag, values));
        }
        assert!(
            !check_rules(&l).is_empty(),
            "not refused: {extra} (world {world})"
        );
    }
    let bad = Launch::from_words(
        None,
        1,
        "--num-layers x --bf16 1 --normalization Foo --no-such-flag",
    );
    assert_eq!(check_flags(&bad).len(), 4, "{:?}", check_flags(&bad));
}

#[test]
fn the_script_is_the_exported_text() {
    let (text, _) = export(&preset("tiny-4x8"));
    assert!(text.starts_with("#!/usr/bin/env bash\n# pipescope: "));
    assert!(
        !text.contains("CUDA_DEVICE_MAX_CONNECTIONS"),
        "t 1 needs no single connection"
    );
    let (text, l) = export(&default_scenario());
    assert!(text.contains("export CUDA_DEVICE_MAX_CONNECTIONS=1\n"));
    assert_eq!(l.connections.as_deref(), Some("1"));
}

#[test]
fn cli_writes_megatron_and_refuses_abstract_runs() {
    let (ok, out, _) = cli_common::pipescope(&["export", "megatron", "-p", "4"]);
    assert!(ok);
    assert_eq!(launch(&out).int("--pipeline-model-parallel-size", 0), 4);
    let (ok, out, _) = cli_common::pipescope(&[
        "export",
        "megatron",
        "--preset",
        "tiny-4x8",
        "-d",
        "2",
        "--no-overlap-grad-reduce",
    ]);
    assert!(ok);
    assert!(!launch(&out).has("--overlap-grad-reduce"));
    let (ok, _, err) = cli_common::pipescope(&[
        "export",
        "megatron",
        "--schedule",
        "1f1b",
        "-p",
        "4",
        "-m",
        "8",
        "--costs",
        "1,1,1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("megatron export needs a planned scenario"),
        "{err}"
    );
}

/// A V-shape schedule whose micro-batches are not a multiple of p: Megatron's nearest
/// schedule (interleaved) refuses it at its first step; the script says so, and the rules
/// find exactly that.
#[test]
fn interleaving_with_m_not_a_multiple_of_p_is_said() {
    let mut s = preset("tiny-4x8");
    s.plan.schedule = ScheduleKind::ZbV;
    s.batch.micro_batches = 6;
    let (text, l) = export(&s);
    assert!(
        text.contains(
            "# interleaving: Megatron's interleaved schedule needs the micro-batches (6)"
        ),
        "{text}"
    );
    let problems = check_rules(&l);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("contiguous micro-batches"));
    s.batch.micro_batches = 8;
    let (text, l) = export(&s);
    assert!(!text.contains("# interleaving"));
    assert!(check_rules(&l).is_empty());
}

/// The stage-to-stage sends as modelled: blocking sends in Megatron's interleaved schedule
/// are `--no-overlap-p2p-communication` (allowed from p 3); where Megatron cannot run the
/// sends as modelled (blocking interleaved at p 2, overlapped plain 1F1B) a `#` line says so;
/// every script passes Megatron's check.
#[test]
fn the_stage_to_stage_sends_follow_the_scenario() {
    use pipescope::P2p;
    let cases = [
        // (schedule, chunks, p, sends, flag written, note)
        (ScheduleKind::Interleaved, 2, 4, P2p::Blocking, true, None),
        (
            ScheduleKind::Interleaved,
            2,
            4,
            P2p::Overlapped,
            false,
            None,
        ),
        (
            ScheduleKind::Interleaved,
            2,
            2,
            P2p::Blocking,
            false,
            Some("# p2p blocking: Megatron's interleaved schedule refuses"),
        ),
        (ScheduleKind::OneFOneB, 1, 4, P2p::Blocking, false, None),
        (
            ScheduleKind::OneFOneB,
            1,
            4,
            P2p::Overlapped,
            false,
            Some("# p2p overlapped: Megatron overlaps stage-to-stage sends only"),
        ),
    ];
    for (kind, chunks, p, p2p, flag, note) in cases {
        let mut s = preset("tiny-4x8");
        s.plan.schedule = kind;
        s.parallel.chunks = chunks;
        s.parallel.pp = p;
        s.batch.micro_batches = 8;
        s.plan.p2p = p2p;
        let (text, l) = export(&s);
        let problems: Vec<String> = check_flags(&l).into_iter().chain(check_rules(&l)).collect();
        assert!(
            problems.is_empty(),
            "{kind} p {p} {p2p:?}: {problems:?}\n{text}"
        );
        assert_eq!(
            l.has("--no-overlap-p2p-communication"),
            flag,
            "{kind} p {p} {p2p:?}\n{text}"
        );
        match note {
            Some(n) => assert!(text.contains(n), "{kind} p {p} {p2p:?}\n{text}"),
            None => assert!(!text.contains("# p2p "), "{kind} p {p} {p2p:?}\n{text}"),
        }
    }
}

/// Every llama-style model preset gives its RoPE base, and the export writes it as
/// `--rotary-base` (a GPT-style model has learned positions: none, and a file giving one is
/// refused at its line).
#[test]
fn the_rope_base_of_each_model_is_exported() {
    let catalog = Catalog::builtin();
    for info in catalog.models() {
        let model = catalog.model(&info.name).unwrap().clone();
        let llama = model.style == ModelStyle::Llama;
        assert_eq!(model.rope_theta.is_some(), llama, "{}", info.name);
        if !llama {
            continue;
        }
        let mut s = preset("tiny-4x8");
        s.model = model.clone();
        s.model.layers = 4;
        s.model.mtp_layers = 0;
        s.model.max_positions = None;
        s.model.moe = None;
        s.model.mla = None;
        s.gpu = catalog.gpu("h100-80gb").unwrap().clone();
        s.plan.memory_budget_bytes = s.gpu.memory_bytes();
        s.parallel.tp = 1;
        s.parallel.pp = 2;
        s.batch.seq_len = 1024;
        s.plan.strategy = Strategy::Full;
        let (text, l) = export(&s);
        assert_eq!(
            l.one("--rotary-base").map(str::to_string),
            model.rope_theta.map(|t| t.to_string()),
            "{}\n{text}",
            info.name
        );
    }
    assert_eq!(
        catalog.model("llama3.1-405b").unwrap().rope_theta,
        Some(500_000)
    );
    assert_eq!(
        catalog.model("qwen3-235b-a22b").unwrap().rope_theta,
        Some(1_000_000)
    );
    let e = Catalog::builtin()
        .add_text(
            "m.toml",
            "[model]\nname = \"m\"\nlayers = 2\nhidden = 64\nheads = 2\nvocab = 10\nrope_theta = 10000\n",
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("m.toml:7:14: invalid model.rope_theta = 10000"),
        "{e}"
    );
}
