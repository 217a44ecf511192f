//! Hand-built scenarios and a synthetic solver for tests, snapshots and benchmarks of the
//! views: deterministic, fast, and independent of the engine's numbers.
//!
//! The synthetic solver runs a small 1F1B list simulation with per-stage costs derived from
//! the scenario (layers per stage, sequence length, strategy), so that edits visibly change
//! the screen. Its figures are plausible, not a model of anything.

use crate::anatomy::BlockKind;
use crate::outcome::{BlockDecisions, StageOutcome, UnitCount};
use crate::plan::{Decision, Strategy};
use crate::scenario::{
    Batch, EfficiencyCurve, GpuSpec, ModelSpec, ModelStyle, Objective, Parallel, PlanSettings,
};
use crate::schedule::ScheduleKind;
use crate::sim::{DeviceMetrics, Lane, MemoryCurve, Simulation, Span, SpanKind, Timeline};
use crate::{Outcome, Scenario};

use super::solved::{KindUnits, Solved};

const GIB: u64 = 1 << 30;

/// An A100 80 GB as the presets describe it.
pub fn gpu_a100() -> GpuSpec {
    GpuSpec {
        name: "a100-80gb".into(),
        description: "NVIDIA A100 SXM 80 GB".into(),
        memory_gib: 80.0,
        bf16_tflops: 312.0,
        hbm_gbps: 2039.0,
        link_gbps: 300.0,
        node_gpus: 8,
        inter_node_gbps: 25.0,
        host_gbps: 15.0,
        efficiency: EfficiencyCurve {
            matrix: vec![(0.0, 0.7)],
            memory: vec![(0.0, 0.8)],
            link: 0.8,
        },
    }
}

/// An H100 80 GB.
pub fn gpu_h100() -> GpuSpec {
    GpuSpec {
        name: "h100-80gb".into(),
        description: "NVIDIA H100 SXM 80 GB".into(),
        memory_gib: 79.6,
        bf16_tflops: 989.0,
        hbm_gbps: 3350.0,
        ..gpu_a100()
    }
}

/// GPT-3 175B.
pub fn model_gpt3() -> ModelSpec {
    ModelSpec {
        name: "gpt3-175b".into(),
        description: "GPT-3 175B".into(),
        style: ModelStyle::Gpt,
        layers: 96,
        hidden: 12288,
        heads: 96,
        kv_heads: 96,
        ffn: 49152,
        vocab: 50257,
        max_positions: Some(2048),
        tied_embeddings: true,
    }
}

/// Llama 2 70B.
pub fn model_llama70() -> ModelSpec {
    ModelSpec {
        name: "llama2-70b".into(),
        description: "Llama 2 70B".into(),
        style: ModelStyle::Llama,
        layers: 80,
        hidden: 8192,
        heads: 64,
        kv_heads: 8,
        ffn: 28672,
        vocab: 32000,
        max_positions: None,
        tied_embeddings: false,
    }
}

/// A fixture scenario: `gpt3-175b-16k` (p 8, t 8, m 64, s 16384, budget 70 GiB) or
/// `llama2-70b-4k` (p 4, t 8, m 16, s 4096); any other name gives the first.
pub fn scenario(name: &str) -> Scenario {
    let llama = name.starts_with("llama");
    let (model, pp, m, s, budget) = if llama {
        (model_llama70(), 4, 16, 4096, 80.0)
    } else {
        (model_gpt3(), 8, 64, 16384, 70.0)
    };
    Scenario {
        name: if llama {
            "llama2-70b-4k"
        } else {
            "gpt3-175b-16k"
        }
        .into(),
        description: "fixture".into(),
        model,
        gpu: gpu_a100(),
        parallel: Parallel {
            pp,
            tp: 8,
            dp: 1,
            sequence_parallel: true,
            chunks: 1,
            distributed_optimizer: false,
        },
        batch: Batch {
            seq_len: s,
            micro_batch_size: 1,
            micro_batches: m,
        },
        plan: PlanSettings {
            schedule: ScheduleKind::OneFOneB,
            strategy: Strategy::AdaPipe,
            memory_budget_bytes: (budget * GIB as f64) as u64,
            flash_attention: true,
            objective: Objective::Estimate,
            overlap_recompute: false,
            mem_limit: None,
            group_size: None,
            offload_chunks: None,
        },
        profile: None,
    }
}

/// Unit names of an attention and an MLP block (GPT, FlashAttention).
const ATTN_UNITS: [(&str, u64); 6] = [
    ("input", 2),
    ("ln_out", 2),
    ("q", 2),
    ("k", 2),
    ("v", 2),
    ("core_attn", 3),
];
const MLP_UNITS: [(&str, u64); 5] = [
    ("input", 2),
    ("ln_out", 2),
    ("fc1_out", 8),
    ("gelu_out", 8),
    ("out_dropout_mask", 1),
];

/// Fraction of droppable units a stage recomputes under `strategy` (stage `s` of `p`).
fn recompute_fraction(strategy: Strategy, s: u32, p: u32) -> f64 {
    match strategy {
        Strategy::None => 0.0,
        Strategy::Full => 1.0,
        Strategy::Selective => 0.2,
        Strategy::Uniform => 0.6,
        _ => 0.8 * f64::from(p - s) / f64::from(p.max(1)),
    }
}

/// The synthetic solver (same signature as the engine's, see [`super::solved::SolveFn`]).
pub fn solve(sc: &Scenario) -> Result<Solved, String> {
    let p = sc.parallel.pp;
    let m = sc.batch.micro_batches;
    if p == 0 || m == 0 || sc.parallel.tp == 0 || sc.parallel.dp == 0 {
        return Err(format!(
            "invalid parallel.pp = {p} / batch.micro_batches = {m}: must be at least 1"
        ));
    }
    if sc.model.layers < p {
        return Err(format!(
            "invalid parallel.pp = {p}: at most {} (one layer per stage)",
            sc.model.layers
        ));
    }
    let tp = f64::from(sc.parallel.tp);
    let layers_per = f64::from(sc.model.layers) / f64::from(p);
    let seq = sc.batch.seq_len as f64 * sc.batch.micro_batch_size as f64;
    let h = sc.model.hidden as f64;
    // ~ 24 s h^2 flops per layer forward, on 40% of peak.
    let layer_f = 24.0 * seq * h * h / tp / (sc.gpu.bf16_tflops * 1e12 * 0.4);
    let act_layer = (34.0 * seq * h / tp) as u64;
    let static_layer = (18.0 * 12.0 * h * h / tp) as u64;
    let budget = sc.plan.memory_budget_bytes;
    let strategy = sc.plan.strategy;
    let mut stages = Vec::new();
    let mut f_s = Vec::new();
    let mut bw_s = Vec::new();
    let mut r_s = Vec::new();
    let mut act_mb = Vec::new();
    for s in 0..p {
        // adapipe moves a little work off the first stages.
        let shift = if strategy == Strategy::AdaPipe && p > 1 {
            (f64::from(s) - f64::from(p - 1) / 2.0) * 0.04
        } else {
            0.0
        };
        let layers = layers_per * (1.0 + shift);
        let in_flight = (p - s).min(m);
        let static_bytes = (static_layer as f64 * layers) as u64;
        let buffer = act_layer * 2;
        let all = act_layer as f64 * layers * f64::from(in_flight);
        let room = budget.saturating_sub(static_bytes + buffer) as f64;
        // Knapsack stand-in: drop just enough to fit (at most 94% of the bytes).
        let needed = ((1.0 - room / all.max(1.0)) / 0.94).clamp(0.0, 1.0);
        let frac = match strategy {
            Strategy::Adaptive | Strategy::AdaPipe | Strategy::Unified => needed,
            Strategy::Uniform => 0.6f64.max(needed),
            other => recompute_fraction(other, s, p),
        };
        let f = layer_f * layers;
        let r = f * frac * 0.9;
        let kept = ((act_layer as f64) * layers * (1.0 - 0.94 * frac)) as u64;
        let activation_bytes = kept * u64::from(in_flight);
        let peak = static_bytes + activation_bytes + buffer;
        f_s.push(f);
        bw_s.push(2.0 * f);
        r_s.push(r);
        act_mb.push(kept);
        let layer_count = layers.round() as u32;
        stages.push(stage_outcome(
            s,
            layer_count,
            frac,
            static_bytes,
            activation_bytes,
            peak,
            budget,
            in_flight,
            (f, 2.0 * f + r, r),
        ));
    }
    let comm = layer_f * 0.05;
    let simulation = simulate_1f1b(p, m, &f_s, &bw_s, &r_s, &act_mb, comm, &stages);
    for (st, dev) in stages.iter_mut().zip(&simulation.devices) {
        st.peak_memory_bytes = dev.peak_memory_bytes;
    }
    let over: Vec<String> = stages
        .iter()
        .filter(|st| st.peak_memory_bytes > budget)
        .map(|st| {
            format!(
                "stage {} needs {:.1} GiB, budget {:.1} GiB",
                st.stage,
                st.peak_memory_bytes as f64 / GIB as f64,
                budget as f64 / GIB as f64
            )
        })
        .collect();
    let baseline = (f64::from(m + p - 1)) * layer_f * layers_per * 3.9;
    let makespan = simulation.makespan;
    let outcome = Outcome {
        feasible: over.is_empty(),
        infeasible_reason: if over.is_empty() {
            None
        } else {
            Some(over.join("; "))
        },
        iteration_time_s: makespan,
        bubble_rate: simulation.bubble_rate,
        mfu: 0.52 * (1.0 - simulation.bubble_rate),
        hfu: 0.55 * (1.0 - simulation.bubble_rate),
        strategy,
        schedule: sc.plan.schedule,
        baseline_iteration_time_s: baseline,
        speedup: baseline / makespan,
        estimated_iteration_time_s: makespan * 0.98,
        solve_time_s: 0.0008,
        notes: Vec::new(),
        stages,
        simulation,
    };
    Ok(Solved {
        outcome,
        units: unit_tables(layer_f, act_layer),
    })
}

fn unit_tables(layer_f: f64, act_layer: u64) -> Vec<KindUnits> {
    let table = |kind, units: &[(&str, u64)]| KindUnits {
        kind,
        names: units.iter().map(|u| u.0.to_string()).collect(),
        size_bytes: units.iter().map(|u| act_layer * u.1 / 34).collect(),
        recompute_s: units.iter().map(|u| layer_f * u.1 as f64 / 34.0).collect(),
    };
    vec![
        table(BlockKind::Attention, &ATTN_UNITS),
        table(BlockKind::Mlp, &MLP_UNITS),
    ]
}

#[allow(clippy::too_many_arguments)]
fn stage_outcome(
    s: u32,
    layers: u32,
    frac: f64,
    static_bytes: u64,
    activation_bytes: u64,
    peak: u64,
    budget: u64,
    in_flight: u32,
    (forward_s, backward_s, recompute_s): (f64, f64, f64),
) -> StageOutcome {
    let first = 1 + 2 * (s * layers) as usize;
    let mut blocks = Vec::new();
    let mut decide = |kind, units: &[(&str, u64)], layer: u32, block| {
        let decisions = units
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let drop = i > 0 && f64::from(layer) < frac * f64::from(layers) + 0.5;
                if !drop {
                    Decision::Keep
                } else if i == units.len() - 1 && layer % 3 == 2 {
                    Decision::Compress
                } else {
                    Decision::Recompute
                }
            })
            .collect();
        blocks.push(BlockDecisions {
            block,
            kind,
            decisions,
        });
    };
    for l in 0..layers {
        decide(BlockKind::Attention, &ATTN_UNITS, l, first + 2 * l as usize);
        decide(BlockKind::Mlp, &MLP_UNITS, l, first + 2 * l as usize + 1);
    }
    let mut units = Vec::new();
    for (kind, table) in [
        (BlockKind::Attention, &ATTN_UNITS[..]),
        (BlockKind::Mlp, &MLP_UNITS[..]),
    ] {
        for (i, (name, size)) in table.iter().enumerate() {
            let count = |d: Decision| {
                blocks
                    .iter()
                    .filter(|b| b.kind == kind && b.decisions[i] == d)
                    .count() as u32
            };
            units.push(UnitCount {
                name: format!("{}.{name}", kind.name()),
                size_bytes: *size,
                keep: count(Decision::Keep),
                recompute: count(Decision::Recompute),
                compress: count(Decision::Compress),
                offload: count(Decision::Offload),
            });
        }
    }
    let last = first + 2 * layers as usize - 1;
    StageOutcome {
        stage: s,
        first_block: first,
        last_block: last,
        ranges: vec![[first, last]],
        attention_blocks: layers,
        mlp_blocks: layers,
        static_bytes,
        activation_bytes,
        peak_memory_bytes: peak,
        budget_bytes: budget,
        in_flight,
        forward_s,
        backward_s,
        recompute_s,
        offload_bytes: 0,
        units,
        blocks,
    }
}

/// 1F1B list simulation: F(d, i) after F(d-1, i) + comm; BW(d, i) after BW(d+1, i) + comm
/// (the last stage after its own F). Recomputation runs right before each BW.
#[allow(clippy::too_many_arguments)]
fn simulate_1f1b(
    p: u32,
    m: u32,
    f: &[f64],
    bw: &[f64],
    r: &[f64],
    act: &[u64],
    comm: f64,
    stages: &[StageOutcome],
) -> Simulation {
    let pu = p as usize;
    let mu = m as usize;
    // Op order per device: (is_backward, micro-batch).
    let orders: Vec<Vec<(bool, usize)>> = (0..pu)
        .map(|d| {
            let warm = (pu - d - 1).min(mu);
            let mut ops: Vec<(bool, usize)> = (0..warm).map(|i| (false, i)).collect();
            let (mut nf, mut nb) = (warm, 0);
            while nb < mu {
                if nf < mu {
                    ops.push((false, nf));
                    nf += 1;
                }
                ops.push((true, nb));
                nb += 1;
            }
            ops
        })
        .collect();
    let mut f_end = vec![vec![f64::NAN; mu]; pu];
    let mut b_end = vec![vec![f64::NAN; mu]; pu];
    let mut next = vec![0usize; pu];
    let mut free = vec![0.0f64; pu];
    let mut spans = Vec::new();
    let mut events: Vec<Vec<(f64, i64)>> = vec![Vec::new(); pu];
    let mut progress = true;
    while progress {
        progress = false;
        for d in 0..pu {
            while let Some(&(back, i)) = orders[d].get(next[d]) {
                let dep = if !back {
                    if d == 0 {
                        Some(0.0)
                    } else {
                        ready(f_end[d - 1][i], comm)
                    }
                } else if d == pu - 1 {
                    ready(f_end[d][i], 0.0)
                } else {
                    ready(b_end[d + 1][i], comm)
                };
                let Some(dep) = dep else { break };
                let mut t = free[d].max(dep);
                let span = |kind, start: f64, end: f64| Span {
                    device: d as u32,
                    lane: Lane::Compute,
                    kind,
                    micro_batch: i as u32,
                    chunk: 0,
                    start,
                    end,
                };
                if back {
                    if r[d] > 0.0 {
                        spans.push(span(SpanKind::R, t, t + r[d]));
                        t += r[d];
                    }
                    spans.push(span(SpanKind::BW, t, t + bw[d]));
                    t += bw[d];
                    b_end[d][i] = t;
                    events[d].push((t, -(act[d] as i64)));
                } else {
                    spans.push(span(SpanKind::F, t, t + f[d]));
                    t += f[d];
                    f_end[d][i] = t;
                    events[d].push((t - f[d], act[d] as i64));
                    if d + 1 < pu {
                        spans.push(Span {
                            lane: Lane::Send,
                            kind: SpanKind::Send,
                            ..span(SpanKind::Send, t, t + comm)
                        });
                    }
                }
                free[d] = t;
                next[d] += 1;
                progress = true;
            }
        }
    }
    let makespan = free.iter().copied().fold(0.0, f64::max);
    spans.sort_by(|a, b| {
        (a.device, a.lane as u8, a.start)
            .partial_cmp(&(b.device, b.lane as u8, b.start))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut memory = Vec::new();
    let mut devices = Vec::new();
    let mut busy_total = 0.0;
    for d in 0..pu {
        let mut ev = events[d].clone();
        ev.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        let mut level: i64 = 0;
        let mut peak_act = 0u64;
        let points: Vec<(f64, u64)> = ev
            .iter()
            .map(|&(t, delta)| {
                level += delta;
                peak_act = peak_act.max(level.max(0) as u64);
                (t, level.max(0) as u64)
            })
            .collect();
        let busy: f64 = mu as f64 * (f[d] + bw[d] + r[d]);
        busy_total += busy;
        let st = &stages[d];
        let transient = st.peak_memory_bytes - st.static_bytes - st.activation_bytes;
        memory.push(MemoryCurve {
            device: d as u32,
            static_bytes: st.static_bytes,
            points,
            host_points: Vec::new(),
        });
        devices.push(DeviceMetrics {
            device: d as u32,
            busy,
            bubble_rate: 1.0 - busy / makespan,
            peak_memory_bytes: st.static_bytes + peak_act + transient,
            peak_activation_bytes: peak_act,
            peak_in_flight: st.in_flight,
        });
    }
    let bubble_rate = 1.0 - busy_total / (p as f64 * makespan);
    Simulation {
        timeline: Timeline {
            devices: p,
            spans,
            makespan,
        },
        memory,
        devices,
        makespan,
        bubble_rate,
        mfu: None,
        hfu: None,
    }
}

fn ready(end: f64, comm: f64) -> Option<f64> {
    if end.is_nan() { None } else { Some(end + comm) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_solves_both_presets() {
        for name in ["gpt3-175b-16k", "llama2-70b-4k"] {
            let sc = scenario(name);
            let solved = solve(&sc).unwrap();
            let o = &solved.outcome;
            assert_eq!(o.stages.len(), sc.parallel.pp as usize);
            let compute = o
                .simulation
                .timeline
                .spans
                .iter()
                .filter(|s| s.kind == SpanKind::F)
                .count();
            assert_eq!(compute, (sc.parallel.pp * sc.batch.micro_batches) as usize);
            assert!(o.iteration_time_s > 0.0 && o.bubble_rate > 0.0 && o.bubble_rate < 1.0);
        }
    }
}
