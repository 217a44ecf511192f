//! The Megatron-LM arguments that run a plan: parallel sizes, `--num-layers`,
//! `--pipeline-model-parallel-layout` (always written; run-length `t*k`, `E` first, `L`
//! last, stages in virtual-stage-major order), batch and sequence sizes, the data-parallel
//! flags and the recomputation flags nearest to the plan. What Megatron cannot express
//! (per-stage recomputation, a stage boundary inside a layer, schedules upstream Megatron
//! does not have) is said on `#` lines, with the per-stage decisions as JSON there.
//!
//! Blocks (the anatomy's chain): 0 the embedding, `2l + 1` the attention and `2l + 2` the
//! MLP of layer `l`, `2L + 1` the head. A layer belongs to the stage that holds its
//! attention block.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::outcome::{Outcome, UnitCount};
use crate::scenario::{Scenario, ScheduleKind, Strategy};

use crate::schedule::Placement;

/// One stage of the model chain: embedding, transformer layers, head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageLayers {
    /// Holds the embedding.
    pub embedding: bool,
    /// Transformer layers (counted where their attention block is).
    pub layers: u32,
    /// Holds the head (final norm, output layer, loss).
    pub head: bool,
}

/// The block ranges of every stage of the model chain, in chain order, from an outcome's
/// per-device ranges and the schedule's placement (`[first, last]`, inclusive).
pub fn chain_ranges(outcome: &Outcome) -> Vec<[usize; 2]> {
    let placement = outcome.schedule.placement();
    let p = outcome.stages.len() as u32;
    let mut chain: Vec<(u32, [usize; 2])> = Vec::new();
    for st in &outcome.stages {
        for (c, &range) in st.ranges.iter().enumerate() {
            let c = c as u32;
            let stage = match placement {
                Placement::Single => st.stage,
                Placement::Looped => c * p + st.stage,
                Placement::VShape if c == 0 => st.stage,
                Placement::VShape => 2 * p - 1 - st.stage,
                // Chimera replicates: chunk 0 of device d is stage d of the chain.
                Placement::Chimera if c == 0 => st.stage,
                Placement::Chimera => continue,
            };
            chain.push((stage, range));
        }
    }
    chain.sort_by_key(|&(s, _)| s);
    chain.into_iter().map(|(_, r)| r).collect()
}

/// What each chain stage holds, for a model of `layers` transformer layers.
pub fn stage_layers(ranges: &[[usize; 2]], layers: u32) -> Vec<StageLayers> {
    let head = 2 * layers as usize + 1;
    ranges
        .iter()
        .map(|&[first, last]| {
            let attention = (first..=last.min(head - 1))
                .filter(|b| b % 2 == 1 && *b < head)
                .count();
            StageLayers {
                embedding: first == 0,
                layers: attention as u32,
                head: last >= head,
            }
        })
        .collect()
}

/// Megatron's layout string for `stages`: `E` and `L` where they are, `t*k` for k layers,
/// runs of equal stages (not the last) as `(X|)*n`.
pub fn layout(stages: &[StageLayers]) -> String {
    let one = |s: &StageLayers| {
        let mut x = String::new();
        if s.embedding {
            x.push('E');
        }
        match s.layers {
            0 => {}
            1 => x.push('t'),
            k => {
                let _ = write!(x, "t*{k}");
            }
        }
        if s.head {
            x.push('L');
        }
        x
    };
    let texts: Vec<String> = stages.iter().map(one).collect();
    let mut out = String::new();
    let last = texts.len().saturating_sub(1);
    let mut i = 0;
    while i < texts.len() {
        let mut n = 1;
        while i + n < last && texts[i + n] == texts[i] {
            n += 1;
        }
        if i == last {
            out.push_str(&texts[i]);
        } else if n >= 2 {
            let _ = write!(out, "({}|)*{n}", texts[i]);
        } else {
            out.push_str(&texts[i]);
            out.push('|');
        }
        i += n;
    }
    out
}

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

/// Recomputation flags nearest to the plan, and whether they are exact.
fn recompute_flags(strategy: Strategy, outcome: &Outcome) -> (&'static str, bool) {
    let units = outcome.stages.iter().flat_map(|s| &s.units);
    let (mut any, mut all) = (false, true);
    for u in units {
        any |= u.recompute > 0;
        all &= u.keep == 0 && u.compress == 0 && u.offload == 0;
    }
    let full =
        "--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n";
    match strategy {
        Strategy::None => ("", true),
        Strategy::Full => (full, true),
        Strategy::Selective => ("--recompute-granularity selective\n", true),
        _ if !any => ("", false),
        _ if all => (full, false),
        _ => ("--recompute-granularity selective\n", false),
    }
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

/// The arguments (one per line) and `#` notes that run `outcome` of `scenario`.
pub fn export(scenario: &Scenario, outcome: &Outcome) -> String {
    let mut out = String::new();
    let par = &scenario.parallel;
    let batch = &scenario.batch;
    let kind = outcome.schedule;
    let v = kind.chunks(par.chunks);
    let _ = writeln!(
        out,
        "# pipescope: {} on {}, {} / {}, iteration {:.3} s (simulated)",
        scenario.model.name, scenario.gpu.name, kind, outcome.strategy, outcome.iteration_time_s
    );
    let ranges = chain_ranges(outcome);
    let layers = stage_layers(&ranges, scenario.model.layers);
    if let Some(note) = schedule_note(kind, v) {
        let _ = writeln!(out, "# schedule: {note}");
    }
    if kind.placement() == Placement::VShape {
        out.push_str(
            "# placement: V-shape (chunk 1 of rank r is stage 2p-1-r); the layout lists the chain's \
             stages in order, upstream Megatron places stage i on rank i mod p\n",
        );
    }
    if kind.placement() == Placement::Chimera {
        out.push_str("# chimera replicates the stages (one copy per direction); the layout is one direction's\n");
    }
    for (s, &[first, _]) in ranges.iter().enumerate() {
        if first > 0 && first % 2 == 0 && first <= 2 * scenario.model.layers as usize {
            let _ = writeln!(
                out,
                "# stage {s} starts inside layer {}: its attention block is on the stage before \
                 (Megatron splits only between layers; the layout counts the layer there)",
                first / 2 - 1
            );
        }
    }
    let (recompute, exact) = recompute_flags(outcome.strategy, outcome);
    if !exact {
        let _ = writeln!(
            out,
            "# recomputation: {} decides per stage and per unit, which Megatron cannot express; \
             the flags below are the nearest setting, the decisions follow",
            outcome.strategy
        );
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
    let _ = writeln!(out, "--tensor-model-parallel-size {}", par.tp);
    let _ = writeln!(out, "--pipeline-model-parallel-size {}", par.pp);
    let _ = writeln!(out, "--num-layers {}", scenario.model.layers);
    let _ = writeln!(
        out,
        "--pipeline-model-parallel-layout \"{}\"",
        layout(&layers)
    );
    let _ = writeln!(out, "--micro-batch-size {}", batch.micro_batch_size);
    let global = batch.global_batch(par.dp);
    let _ = writeln!(out, "--global-batch-size {global}");
    let _ = writeln!(out, "--seq-length {}", batch.seq_len);
    if par.sequence_parallel && par.tp > 1 {
        out.push_str("--sequence-parallel\n");
    }
    if par.distributed_optimizer {
        out.push_str("--use-distributed-optimizer\n");
    }
    out.push_str("--overlap-grad-reduce\n");
    out.push_str(recompute);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of equal stages (not the last) fold into `(X|)*n`, layers repeat as `t*k`, `E`
    /// opens and `L` closes the chain.
    #[test]
    fn the_layout_string_folds_runs() {
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
        assert_eq!(layout(&stages), "Et*3|(t*4|)*3t|L");
    }
}
