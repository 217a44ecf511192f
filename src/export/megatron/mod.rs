//! The Megatron-LM launch script that runs a plan: a bash script in the form of Megatron's
//! own examples (the environment, `torchrun` with the GPUs per node and the nodes, and
//! `pretrain_gpt.py` with its arguments in bash arrays, one per concern), which passes
//! Megatron's own argument check. What Megatron cannot express (per-stage recomputation, a
//! stage boundary inside a layer, schedules upstream Megatron does not have) is said on
//! `#` lines, with the per-stage decisions as JSON there.
//!
//! Files: `layout.rs` (the chain's stages and `--pipeline-model-parallel-layout`),
//! `recompute.rs` (the recomputation flags nearest to the plan), `args.rs` (the argument
//! groups, one function per concern; where a new dimension goes), `moe_notes.rs` (the
//! overlapped all-to-alls and the routing imbalance: Megatron's flag or a `#` line), this file
//! (the notes and the script).

pub mod args;
pub mod layout;
mod moe_notes;
pub mod recompute;

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

pub use layout::{chain_ranges, layout, stage_layers};
pub use recompute::RecomputePlan;

use crate::anatomy::Anatomy;
use crate::outcome::{Outcome, UnitCount};
use crate::scenario::{GIB, InvalidField, Scenario, ScheduleKind, Strategy};
use crate::schedule::Placement;

use args::Group;

/// One device's decisions on a `#` line; `units` maps each unit to its blocks'
/// `[keep, recompute, compress, offload]` counts.
#[derive(Serialize)]
struct StageJson<'a> {
    stage: u32,
    ranges: &'a [[usize; 2]],
    recompute_s: f64,
    offload_bytes: u64,
    units: BTreeMap<&'a str, [u32; 4]>,
}

fn unit_counts(units: &[UnitCount]) -> BTreeMap<&str, [u32; 4]> {
    units
        .iter()
        .map(|u| {
            (
                u.name.as_str(),
                [u.keep, u.recompute, u.compress, u.offload],
            )
        })
        .collect()
}

/// Whether upstream Megatron-LM runs `kind`, and the nearest schedule it has when not.
fn schedule_note(kind: ScheduleKind, v: u32) -> Option<String> {
    match kind {
        ScheduleKind::OneFOneB => None,
        ScheduleKind::Interleaved if v > 1 => None,
        ScheduleKind::Gpipe => Some("gpipe is not in upstream Megatron-LM; nearest: 1F1B".into()),
        _ => Some(format!(
            "{kind} is not in upstream Megatron-LM; nearest: {} with the same layout",
            if v > 1 && kind.placement() != Placement::Chimera {
                "interleaved 1F1B"
            } else {
                "1F1B"
            }
        )),
    }
}

/// The `#` lines that say what the arguments cannot.
fn notes(
    scenario: &Scenario,
    outcome: &Outcome,
    chain: &[[usize; 2]],
    rc: &RecomputePlan,
) -> String {
    let mut out = String::new();
    let kind = outcome.schedule;
    let p = scenario.parallel.pp;
    let m = scenario.batch.micro_batches;
    let v = kind.chunks(scenario.parallel.chunks);
    if let Some(note) = schedule_note(kind, v) {
        let _ = writeln!(out, "# schedule: {note}");
    }
    if v > 1 && kind.placement() != Placement::Chimera && !m.is_multiple_of(p) {
        let _ = writeln!(
            out,
            "# interleaving: Megatron's interleaved schedule needs the micro-batches ({m}) to be \
             a multiple of p ({p}); it refuses to start otherwise"
        );
    }
    if kind.placement() == Placement::VShape {
        out.push_str(
            "# placement: V-shape (chunk 1 of rank r is stage 2p-1-r); the layout lists the chain's \
             stages in order, upstream Megatron places stage i on rank i mod p\n",
        );
    }
    if kind.placement() == Placement::Chimera {
        let _ = writeln!(
            out,
            "# {kind} replicates the stages (one copy per direction); the layout is one direction's"
        );
    }
    if scenario.parallel.full_shard {
        out.push_str(
            "# zero 3: Megatron-FSDP (torch FSDP2 refuses pipeline parallelism), which always \
             overlaps its gathers and reduce-scatters\n",
        );
    }
    if scenario.plan.activation_func_fp8_input_store {
        out.push_str(
            "# activation-func-fp8-input-store: Megatron-Core's TransformerConfig field \
             activation_func_fp8_input_store (no pretrain_gpt.py flag; Megatron-Bridge: \
             model.activation_func_fp8_input_store = True)\n",
        );
    }
    if scenario.plan.tp_comm_overlap {
        out.push_str(
            "# tp-comm-overlap: pipescope models Transformer Engine's default userbuffer methods \
             (--tp-comm-overlap-cfg tunes them)\n",
        );
    }
    // Chain positions are virtual stages when devices hold several chunks.
    let stage = if chain.len() > outcome.stages.len() {
        "virtual stage"
    } else {
        "stage"
    };
    for (s, &[first, _]) in chain.iter().enumerate() {
        if first > 0 && first % 2 == 0 && first <= 2 * scenario.model.chain_layers() as usize {
            let _ = writeln!(
                out,
                "# {stage} {s} starts inside layer {}: its attention block is on the {stage} \
                 before (Megatron splits only between layers; the layout counts the layer there)",
                first / 2 - 1
            );
        }
    }
    let extra: Vec<_> = rc
        .kept_extra
        .iter()
        .filter(|(_, u, _)| !u.is_empty())
        .collect();
    if extra.is_empty() {
        out.push_str("# recomputation: the flags recompute exactly what the plan recomputes\n");
    } else {
        out.push_str(
            "# recomputation: Megatron recomputes the same on every layer (or whole layers); \
             the flags recompute nothing the plan keeps, and keep what the plan recomputes beyond \
             them:\n",
        );
        for (stage, units, bytes) in extra {
            let list: Vec<String> = units.iter().map(|(u, n)| format!("{u} x{n}")).collect();
            let _ = writeln!(
                out,
                "#   stage {stage} keeps {:.2} GiB more per micro-batch: {}",
                *bytes as f64 / GIB,
                list.join(", ")
            );
        }
    }
    if matches!(
        outcome.strategy,
        Strategy::Offload | Strategy::Compress | Strategy::Unified
    ) {
        let _ = writeln!(
            out,
            "# {}: offloaded or compressed activations have no Megatron flag",
            outcome.strategy
        );
    }
    out.push_str("# per-stage decisions (units: [keep, recompute, compress, offload] blocks):\n");
    for st in &outcome.stages {
        let json = StageJson {
            stage: st.stage,
            ranges: &st.ranges,
            recompute_s: st.recompute_s,
            offload_bytes: st.offload_bytes,
            units: unit_counts(&st.units),
        };
        if let Ok(text) = serde_json::to_string(&json) {
            let _ = writeln!(out, "# {text}");
        }
    }
    out
}

/// A value as one shell word: as it is when it has no character the shell treats
/// specially, else in single quotes.
fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.,:/=+-@%".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// A bash array of `group`'s arguments, one per line.
fn array(group: &Group) -> String {
    let mut out = format!("{}=(\n", group.name);
    for arg in &group.args {
        out.push_str("    ");
        out.push_str(arg.flag);
        for v in &arg.values {
            out.push(' ');
            out.push_str(&shell_word(v));
        }
        out.push('\n');
    }
    out.push_str(")\n");
    out
}

/// The launch script that runs `outcome` of `scenario` (see the module's documentation).
/// Fails only for a scenario whose anatomy cannot be built (one that could not be solved).
pub fn export(scenario: &Scenario, outcome: &Outcome) -> Result<String, InvalidField> {
    let anatomy = Anatomy::build(scenario)?;
    let mut chain = chain_ranges(outcome);
    let one_stage = scenario.parallel.pp == 1 && chain.len() > 1;
    if one_stage {
        // Megatron refuses virtual stages without a pipeline; one device runs its chunks
        // one after the other, as one stage would.
        chain = vec![[0, anatomy.num_blocks() - 1]];
    }
    let rc = recompute::choose(&anatomy, outcome, &chain);
    let layout = layout(&stage_layers(&chain, anatomy.main_layers, anatomy.layers));
    let virtual_stages = chain.len() > scenario.parallel.pp as usize;
    let (sends, sends_note) = args::pipeline_sends(scenario, virtual_stages);
    let mut model_parallel = args::model_parallel(scenario, &layout);
    if let Some(flag) = sends {
        model_parallel.switch(flag);
    }
    let moe_lines = moe_notes::apply(scenario, virtual_stages, &rc.setting, &mut model_parallel);
    let groups = [
        model_parallel,
        args::model(scenario),
        args::precision(scenario),
        args::training(scenario),
        args::data_parallel(scenario),
        rc.setting.group(),
        args::data(scenario),
    ];

    let par = &scenario.parallel;
    let mut out = String::from("#!/usr/bin/env bash\n");
    let _ = writeln!(
        out,
        "# pipescope: {} on {}, {} / {}, iteration {:.3} s (simulated)",
        scenario.model.name,
        scenario.gpu.name,
        outcome.schedule,
        outcome.strategy,
        outcome.iteration_time_s
    );
    if one_stage {
        out.push_str(
            "# one stage: Megatron has no virtual stages without a pipeline (p 1); the chunks \
             of the one device are one stage in the layout\n",
        );
    }
    if let Some(note) = sends_note {
        let _ = writeln!(out, "# {note}");
    }
    out.push_str(&notes(scenario, outcome, &chain, &rc));
    out.push_str(&moe_lines);

    let gpus = outcome.gpus;
    let (per_node, nodes) = args::nodes(gpus, scenario.gpu.launcher_host_gpus());
    out.push_str(
        "#\n# Run from a Megatron-LM checkout, on every node (NODE_RANK 0, 1, ...; MASTER_ADDR the \
         first node's address);\n# the mock data and ten iterations time the plan: put your data \
         and schedule in DATA_ARGS and TRAINING_ARGS.\n\n",
    );
    for (name, value, why) in args::environment(scenario) {
        let _ = writeln!(out, "# {why}\nexport {name}={}", shell_word(&value));
    }
    let _ = write!(
        out,
        "\nGPUS_PER_NODE={per_node}\nNUM_NODES={nodes}\nNODE_RANK=${{NODE_RANK:-0}}\n\
         MASTER_ADDR=${{MASTER_ADDR:-localhost}}\nMASTER_PORT=${{MASTER_PORT:-29500}}\n\
         # WORLD_SIZE={gpus}: tensor {} x context {} x pipeline {} x data {}\n\
         WORLD_SIZE=$((GPUS_PER_NODE * NUM_NODES))\n\n",
        par.tp, par.cp, par.pp, par.dp
    );
    out.push_str(
        "DISTRIBUTED_ARGS=(\n    --nproc_per_node \"$GPUS_PER_NODE\"\n    --nnodes \"$NUM_NODES\"\n    \
         --node_rank \"$NODE_RANK\"\n    --master_addr \"$MASTER_ADDR\"\n    --master_port \"$MASTER_PORT\"\n)\n",
    );
    let used: Vec<&Group> = groups.iter().filter(|g| !g.args.is_empty()).collect();
    for g in &used {
        out.push('\n');
        out.push_str(&array(g));
    }
    out.push_str("\ntorchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py");
    for g in &used {
        let _ = write!(out, " \\\n    \"${{{}[@]}}\"", g.name);
    }
    out.push('\n');
    Ok(out)
}
