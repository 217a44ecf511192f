//! Exports of a schedule and its simulation to the formats other tools read
//! (`pipescope export FORMAT`, the TUI's `e` key):
//!
//! - [`perfetto`]: Chrome trace-event JSON for Perfetto and `chrome://tracing`;
//! - [`svg`]: a standalone figure in the style of the schedule papers;
//! - [`megatron`]: the Megatron-LM launch script that runs a plan;
//! - [`torchtitan`]: torch.distributed.pipelining's `compute_only` schedule CSV.
//!
//! Every export is a pure function from the engine's schedule, simulation and outcome to a
//! `String`; [`crate::files::write_atomic`] writes one to a file: replacing the file the user
//! named for the CLI (`-o`), keeping every existing file for the TUI (`e`).

pub mod megatron;
pub mod perfetto;
pub mod svg;
pub mod torchtitan;

use std::collections::HashMap;

use crate::Outcome;
use crate::schedule::Schedule;
use crate::sim::{Lane, Simulation, SpanKind};

/// The unit of a run's times and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// A planned scenario: times in seconds, memory in bytes.
    Seconds,
    /// An abstract run (`--costs`): times in cost units (one unit is one microsecond in a
    /// trace), memory in chunk-activations (one byte each in the simulation).
    Abstract,
}

/// What an export draws: the schedule (shape, placement and op order), its simulation and
/// the unit of both.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// The schedule that was simulated.
    pub schedule: &'a Schedule,
    /// Its simulation.
    pub simulation: &'a Simulation,
    /// Unit of the simulation's times and memory.
    pub units: Units,
}

impl<'a> Run<'a> {
    /// What a planned outcome draws: the schedule it simulated and its simulation, in
    /// seconds and bytes.
    pub fn planned(outcome: &'a Outcome) -> Run<'a> {
        Run {
            schedule: &outcome.op_order,
            simulation: &outcome.simulation,
            units: Units::Seconds,
        }
    }
}

/// One op of a dependency chain: where it runs and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChainOp {
    /// Device.
    pub device: u32,
    /// Local chunk.
    pub chunk: u32,
    /// Micro-batch.
    pub micro_batch: u32,
    /// Forward (`false`) or the backward that passes the gradient on (B or BW, `true`).
    pub backward: bool,
}

/// Every chain of cross-device dependencies of `schedule`: per micro-batch, its forward
/// along the stage chain and then its backward back down, cut at every hop that stays on
/// one device (the last stage's F to its B, a V-shape's turn); chains of a single op are
/// left out. Each op is in at most one chain.
pub fn flow_chains(schedule: &Schedule) -> Vec<Vec<ChainOp>> {
    let stages = schedule.stages();
    let mut chains = Vec::new();
    for mb in 0..schedule.m {
        let path = (0..stages)
            .map(|s| (s, false))
            .chain((0..stages).rev().map(|s| (s, true)));
        let mut current: Vec<ChainOp> = Vec::new();
        for (stage, backward) in path {
            let (device, chunk) = schedule.locate(stage, mb);
            let op = ChainOp {
                device,
                chunk,
                micro_batch: mb,
                backward,
            };
            if current.last().is_some_and(|last| last.device == device) {
                if current.len() > 1 {
                    chains.push(std::mem::take(&mut current));
                }
                current.clear();
            }
            current.push(op);
        }
        if current.len() > 1 {
            chains.push(current);
        }
    }
    chains
}

/// Index of every compute span of a simulation by (device, chunk, micro-batch, kind).
pub(crate) fn compute_index(sim: &Simulation) -> HashMap<(u32, u32, u32, SpanKind), usize> {
    sim.timeline
        .spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.lane == Lane::Compute)
        .map(|(i, s)| ((s.device, s.chunk, s.micro_batch, s.kind), i))
        .collect()
}

/// The label of an op: kind and micro-batch, with `.chunk` when devices hold several
/// chunks (`F12`, `B3.1`).
pub(crate) fn op_label(kind: &str, micro_batch: u32, chunk: u32, v: u32) -> String {
    if v > 1 {
        format!("{kind}{micro_batch}.{chunk}")
    } else {
        format!("{kind}{micro_batch}")
    }
}

/// The name of a span kind as `simulate --ops` writes it.
pub fn kind_name(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::F => "F",
        SpanKind::B => "B",
        SpanKind::W => "W",
        SpanKind::BW => "BW",
        SpanKind::R => "R",
        SpanKind::D2H => "D2H",
        SpanKind::H2D => "H2D",
        SpanKind::Send => "SEND",
        SpanKind::Kv => "KV",
        SpanKind::Gather => "AG",
        SpanKind::Scatter => "RS",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schedule::{ScheduleInput, ScheduleKind, generate};

    #[test]
    fn v_shape_chains_restart_at_the_turn() {
        let input = ScheduleInput::uniform(2, 2, 2, 1.0, 1.0, 1.0, 0.0);
        let s = generate(ScheduleKind::ZbV, &input).unwrap();
        let chains = flow_chains(&s);
        // Per micro-batch: F s0->s1 (dev 0 -> 1), F s2->s3 (dev 1 -> 0), B s3->s2, B s1->s0.
        assert_eq!(chains.len(), 8);
        assert!(chains.iter().all(|c| c.len() == 2));
        assert!(
            chains
                .iter()
                .all(|c| c.windows(2).all(|w| w[0].device != w[1].device))
        );
    }

    #[test]
    fn placement_matches_the_generators() {
        for &kind in ScheduleKind::ALL {
            let input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
            let s = generate(kind, &input).unwrap();
            assert_eq!(kind.placement(), s.placement, "{kind}");
        }
    }
}
