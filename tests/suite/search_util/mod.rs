//! Shared checks for the searched-schedule tests: an independent list-scheduling timer
//! (docs/model.md), completeness and memory helpers.
#![allow(dead_code)]

use pipescope::{OpKind, Schedule, ScheduleInput, SimCosts, simulate};

/// Start and end of every op, indexed like `schedule.devices`, and the makespan.
pub struct Timed {
    pub start: Vec<Vec<f64>>,
    pub end: Vec<Vec<f64>>,
    pub makespan: f64,
}

fn cost(grid: &[Vec<f64>], d: usize, c: usize) -> f64 {
    grid[d].get(c).copied().unwrap_or(grid[d][0])
}

/// Times the schedule by list scheduling; panics on a deadlock.
pub fn time(s: &Schedule, input: &ScheduleInput) -> Timed {
    let (p, m, st) = (s.p as usize, s.m as usize, s.stages() as usize);
    let mut f_end = vec![None::<(f64, usize)>; st * m];
    let mut b_end = vec![None::<(f64, usize)>; st * m];
    let mut start: Vec<Vec<f64>> = s.devices.iter().map(|d| vec![0.0; d.len()]).collect();
    let mut end = start.clone();
    let mut pos = vec![0; p];
    let mut free = vec![0.0f64; p];
    let total: usize = s.devices.iter().map(Vec::len).sum();
    let mut done = 0;
    while done < total {
        let mut progress = false;
        for d in 0..p {
            while pos[d] < s.devices[d].len() {
                let op = s.devices[d][pos[d]];
                let mb = op.micro_batch as usize;
                let stage = s.stage_of(d as u32, op.chunk, op.micro_batch) as usize;
                let i = stage * m + mb;
                let dep = match op.kind {
                    OpKind::F if stage == 0 => Some((0.0, d)),
                    OpKind::F => f_end[i - m],
                    OpKind::B | OpKind::BW if stage + 1 == st => f_end[i],
                    OpKind::B | OpKind::BW => b_end[i + m],
                    OpKind::W => b_end[i],
                };
                let Some((t, dd)) = dep else { break };
                let ready = if dd == d { t } else { t + input.comm };
                let t0 = free[d].max(ready);
                let c = op.chunk as usize;
                let dur = match op.kind {
                    OpKind::F => cost(&input.f, d, c),
                    OpKind::B => cost(&input.b, d, c),
                    OpKind::W => cost(&input.w, d, c),
                    OpKind::BW => cost(&input.b, d, c) + cost(&input.w, d, c),
                };
                start[d][pos[d]] = t0;
                end[d][pos[d]] = t0 + dur;
                free[d] = t0 + dur;
                match op.kind {
                    OpKind::F => f_end[i] = Some((t0 + dur, d)),
                    OpKind::B | OpKind::BW => b_end[i] = Some((t0 + dur, d)),
                    OpKind::W => {}
                }
                pos[d] += 1;
                done += 1;
                progress = true;
            }
        }
        assert!(progress, "deadlock at positions {pos:?}");
    }
    let makespan = end.iter().flatten().copied().fold(0.0, f64::max);
    let sim = simulate(s, &sim_costs(s, input)).expect("the simulator accepts the schedule");
    assert!(
        (sim.makespan - makespan).abs() <= 1e-9 * makespan.max(1.0),
        "simulator makespan {} != list-scheduling makespan {makespan}",
        sim.makespan
    );
    Timed {
        start,
        end,
        makespan,
    }
}

/// The simulator's costs for `input`'s per-(device, chunk) durations (abstract units).
pub fn sim_costs(s: &Schedule, input: &ScheduleInput) -> SimCosts {
    let mut costs = SimCosts::abstract_run(s, 1.0, 1.0, 1.0, input.comm, 0.0);
    for (d, row) in costs.chunks.iter_mut().enumerate() {
        for (c, cc) in row.iter_mut().enumerate() {
            cc.f_s = cost(&input.f, d, c);
            cc.b_s = cost(&input.b, d, c);
            cc.w_s = cost(&input.w, d, c);
        }
    }
    costs
}

/// Every (device, chunk, micro-batch) has exactly one F and one B and one W (split) or one
/// BW (fused), and W comes after its B on the device.
pub fn assert_complete(s: &Schedule, split: bool) {
    let (m, v) = (s.m as usize, s.v as usize);
    for (d, ops) in s.devices.iter().enumerate() {
        let mut seen = vec![[0u32; 4]; v * m];
        for (k, op) in ops.iter().enumerate() {
            let idx = op.chunk as usize * m + op.micro_batch as usize;
            assert!(idx < v * m, "device {d} op {k} out of range: {op:?}");
            let kind = match op.kind {
                OpKind::F => 0,
                OpKind::B => 1,
                OpKind::W => 2,
                OpKind::BW => 3,
            };
            if kind == 2 {
                assert_eq!(seen[idx][1], 1, "device {d}: W before B: {op:?}");
            }
            seen[idx][kind] += 1;
        }
        for (idx, c) in seen.iter().enumerate() {
            let want = if split { [1, 1, 1, 0] } else { [1, 0, 0, 1] };
            assert_eq!(*c, want, "device {d} chunk {} mb {}", idx / m, idx % m);
        }
    }
}

/// Peak live micro-batch-chunks per device (+1 at F, -1 at W/BW).
pub fn peaks(s: &Schedule) -> Vec<i64> {
    s.devices
        .iter()
        .map(|ops| {
            let (mut cur, mut peak) = (0i64, 0i64);
            for op in ops {
                match op.kind {
                    OpKind::F => cur += 1,
                    OpKind::W | OpKind::BW => cur -= 1,
                    OpKind::B => {}
                }
                peak = peak.max(cur);
            }
            peak
        })
        .collect()
}

/// Equal-cost input.
pub fn uniform(p: u32, m: u32, v: u32, f: f64, b: f64, w: f64, comm: f64) -> ScheduleInput {
    ScheduleInput::uniform(p, m, v, f, b, w, comm)
}

/// Input with per-device costs drawn from `costs` (cycled).
pub fn varied(p: u32, m: u32, v: u32, costs: &[(f64, f64, f64)], comm: f64) -> ScheduleInput {
    let mut input = ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, comm);
    for d in 0..p as usize {
        for c in 0..input.f[d].len() {
            let (f, b, w) = costs[(d * 3 + c) % costs.len()];
            input.f[d][c] = f;
            input.b[d][c] = b;
            input.w[d][c] = w;
        }
    }
    input
}
