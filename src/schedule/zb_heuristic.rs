//! ZB-H2 and ZB-auto: the zero-bubble repo's memory-limited heuristic
//! (`scheduler/zb.py`, `Graph.manual_order`), run with all 8 flag combinations and the one
//! with the smallest longest per-stage span kept.
//!
//! One chunk per device, B/W split. Memory counts chunk-activations: F +1, B 0, W -1
//! (docs/model.md); the limit is 2p for `zb-h2` and `mem_limit` (default p) for
//! `zb-auto`. Stage `j`'s ops are returned in the order the heuristic placed them, which is
//! their completion-time order (the source sorts by completion time).

use super::list_timing::time_schedule;
use super::search_input::{check_basic, cost, mem_limit, op, schedule};
use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

const MEM: [f64; 3] = [1.0, 0.0, -1.0];

/// Generates `zb-h2` or `zb-auto`.
pub(crate) fn generate(
    kind: ScheduleKind,
    input: &ScheduleInput,
) -> Result<Schedule, ScheduleError> {
    check_basic(kind, input)?;
    let p = input.p as usize;
    let limit = if kind == ScheduleKind::ZbH2 {
        2.0 * p as f64
    } else {
        mem_limit(kind, input, p as f64)?
    };
    let costs = [0, 1, 2].map(|k| {
        let grid = [&input.f, &input.b, &input.w][k];
        (0..p).map(|d| cost(grid, d, 0)).collect::<Vec<f64>>()
    });
    let heur = Heuristic {
        p,
        m: input.m as usize,
        cost: costs,
        max_mem: limit,
        comm: input.comm,
    };
    if let Some(s) = best_of_eight(kind, input, &heur) {
        return Ok(s);
    }
    // The source assumes stages of similar cost: with very different per-stage costs every
    // candidate can come out invalid (a stage running ahead of its predecessor's forwards
    // deadlocks). Then the heuristic is rerun with each op type's cost averaged over the
    // stages, the regime it was written for.
    let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / p as f64;
    let averaged = Heuristic {
        cost: heur.cost.clone().map(|v| vec![mean(&v); p]),
        ..heur
    };
    best_of_eight(kind, input, &averaged).ok_or(ScheduleError::NoFit {
        schedule: kind,
        limit,
    })
}

/// Runs the 8 flag combinations and keeps the valid order with the smallest longest stage
/// span (ties: the first, as the source).
fn best_of_eight(kind: ScheduleKind, input: &ScheduleInput, heur: &Heuristic) -> Option<Schedule> {
    let mut runs: Vec<(f64, Vec<Vec<Op>>)> = Vec::with_capacity(8);
    for allow_bubble in [true, false] {
        for prioritize_b in [true, false] {
            for no_bubble_greedy in [true, false] {
                if let Some((order, span)) =
                    heur.manual_order(allow_bubble, prioritize_b, no_bubble_greedy)
                {
                    runs.push((span, order));
                }
            }
        }
    }
    // Smallest span first, ties in run order (a stable sort); the first order that times
    // without a deadlock wins.
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs.into_iter()
        .map(|(_, order)| schedule(kind, input, 1, Placement::Single, order))
        .find(|s| time_schedule(s, input).is_ok())
}

/// The heuristic's fixed inputs.
struct Heuristic {
    p: usize,
    m: usize,
    /// `cost[type][stage]`, type 0 F, 1 B, 2 W.
    cost: [Vec<f64>; 3],
    max_mem: f64,
    comm: f64,
}

/// The heuristic's running state (flat arrays indexed by stage, or by `type * p * m +
/// stage * m + micro_batch`).
struct State {
    /// Ops placed so far per type and stage: `count[type][stage]`.
    count: [Vec<usize>; 3],
    /// End of the last op per stage.
    e: Vec<f64>,
    /// End time of every op.
    t: Vec<f64>,
    mem: Vec<f64>,
    bubble: Vec<f64>,
    max_bubble: f64,
    order: Vec<Vec<Op>>,
}

impl State {
    /// Largest stage bubble so far (bubbles only grow, so a running maximum is exact).
    fn max_bubble(&self) -> f64 {
        self.max_bubble
    }
}

impl Heuristic {
    fn id(&self, k: usize, stage: usize, mb: usize) -> usize {
        k * self.p * self.m + stage * self.m + mb
    }

    fn put(&self, s: &mut State, j: usize, k: usize) {
        let i = s.count[k][j];
        let id = self.id(k, j, i);
        let c = self.cost[k][j];
        let no_bubble = s.e[j] + c;
        let mut tmp = no_bubble;
        if j > 0 && k == 0 {
            tmp = tmp.max(s.t[self.id(0, j - 1, i)] + self.comm + c);
        }
        if j + 1 < self.p && k == 1 {
            tmp = tmp.max(s.t[self.id(1, j + 1, i)] + self.comm + c);
        }
        if s.count[0][j] > 0 {
            s.bubble[j] += tmp - no_bubble;
            s.max_bubble = s.max_bubble.max(s.bubble[j]);
        }
        s.e[j] = tmp;
        s.t[id] = tmp;
        s.mem[j] += MEM[k];
        s.count[k][j] += 1;
        let kind = [OpKind::F, OpKind::B, OpKind::W][k];
        s.order[j].push(op(kind, i, 0));
    }

    /// Puts pending W's on stage `j` while they fit in the idle time before `dep` (the
    /// arrival of the next op's input), then maybe one more W (the source's bubble rule).
    fn fill_w_before(&self, s: &mut State, j: usize, dep: f64, no_bubble_greedy: bool) {
        let (b, w) = (1, 2);
        while s.count[w][j] < s.count[b][j] && s.e[j] + self.cost[w][j] <= dep {
            self.put(s, j, w);
        }
        if s.count[w][j] < s.count[b][j] && s.e[j] < dep {
            if dep - s.e[j] <= s.max_bubble() - s.bubble[j] {
                if no_bubble_greedy {
                    self.put(s, j, w);
                }
            } else {
                self.put(s, j, w);
            }
        }
    }

    /// Puts W's on stage `j` until an op adding `add` fits the memory limit; `None` when
    /// no W is pending (the source's "Cannot fit memory").
    fn make_room(&self, s: &mut State, j: usize, add: f64) -> Option<()> {
        while s.mem[j] + add > self.max_mem {
            if s.count[2][j] >= s.count[1][j] {
                return None;
            }
            self.put(s, j, 2);
        }
        Some(())
    }

    /// One run of `manual_order`; returns each stage's order and the longest stage span.
    #[allow(clippy::needless_range_loop)] // index loops mirror the source's stage sweeps
    fn manual_order(
        &self,
        allow_bubble_before_first_b: bool,
        prioritize_b: bool,
        no_bubble_greedy: bool,
    ) -> Option<(Vec<Vec<Op>>, f64)> {
        let (p, m, comm) = (self.p, self.m, self.comm);
        let mut s = State {
            count: [vec![0; p], vec![0; p], vec![0; p]],
            e: vec![0.0; p],
            t: vec![0.0; 3 * p * m],
            mem: vec![0.0; p],
            bubble: vec![0.0; p],
            max_bubble: 0.0,
            order: vec![Vec::with_capacity(3 * m); p],
        };
        let (fk, bk, wk) = (0, 1, 2);
        // Micro-batch 0: F0 everywhere, as many extra F's as fit before B0 arrives, B0.
        for j in 0..p {
            self.put(&mut s, j, fk);
        }
        let mut f_required = vec![0usize; p];
        let mut last_t = 0.0;
        for j in (0..p).rev() {
            if j == p - 1 {
                last_t = s.t[self.id(fk, j, 0)] + self.cost[bk][j];
                continue;
            }
            let mut mem = s.mem[j];
            let mut cost = s.e[j];
            while s.count[fk][j] + f_required[j] < m && mem + MEM[fk] <= self.max_mem {
                let fc = self.cost[fk][j];
                if allow_bubble_before_first_b {
                    if cost + fc > last_t + comm {
                        break;
                    }
                } else if cost >= last_t + comm {
                    break;
                }
                mem += MEM[fk];
                cost += fc;
                f_required[j] += 1;
            }
            last_t = cost.max(last_t + comm) + self.cost[bk][j];
        }
        for j in 1..p {
            while f_required[j] > 0
                && f_required[j] >= f_required[j - 1]
                && s.count[fk][j] + f_required[j] < m
            {
                f_required[j] -= 1;
            }
        }
        for (j, &n) in f_required.iter().enumerate() {
            for _ in 0..n {
                self.put(&mut s, j, fk);
            }
        }
        for j in (0..p).rev() {
            self.put(&mut s, j, bk);
        }
        // Every later micro-batch: decide which stages put their next F, then B(i).
        for i in 1..m {
            let mut f_required = vec![0usize; p];
            for j in 0..p {
                if s.count[fk][j] >= m {
                    continue;
                }
                if j + 1 < p && s.count[fk][j] >= s.count[fk][j + 1] + 2 && prioritize_b {
                    let next_plus_fw =
                        s.e[j + 1] + self.cost[fk][j + 1] + self.cost[bk][j + 1] + comm;
                    if s.e[j] >= next_plus_fw {
                        continue;
                    }
                    let (mut w_cost, mut w_cnt) = (0.0, 0);
                    let mut mem_with_w = s.mem[j] + MEM[fk];
                    while mem_with_w > self.max_mem && s.count[wk][j] + w_cnt < s.count[bk][j] {
                        w_cost += self.cost[wk][j];
                        mem_with_w += MEM[wk];
                        w_cnt += 1;
                    }
                    if s.e[j] + self.cost[fk][j] + w_cost <= next_plus_fw {
                        f_required[j] = 1;
                        continue;
                    }
                    if next_plus_fw - s.e[j] <= s.max_bubble() - s.bubble[j] {
                        continue;
                    }
                }
                f_required[j] = 1;
            }
            for j in (0..p.saturating_sub(1)).rev() {
                f_required[j] = f_required[j].min(f_required[j + 1]);
            }
            for j in 0..p {
                if f_required[j] == 0 {
                    continue;
                }
                self.make_room(&mut s, j, MEM[fk])?;
                if j > 0 {
                    let dep = s.t[self.id(fk, j - 1, s.count[fk][j])] + comm;
                    self.fill_w_before(&mut s, j, dep, no_bubble_greedy);
                }
                self.put(&mut s, j, fk);
            }
            for j in (0..p).rev() {
                // The source's cap above can stop a stage that has not yet run F(i) (when
                // the next stage has issued all its forwards) and then places B(i) before
                // F(i), an invalid order: such a candidate is dropped.
                if s.count[fk][j] <= i {
                    return None;
                }
                self.make_room(&mut s, j, MEM[bk])?;
                if j + 1 < p {
                    let dep = s.t[self.id(bk, j + 1, i)] + comm;
                    self.fill_w_before(&mut s, j, dep, no_bubble_greedy);
                }
                if j == 0 && s.count[fk][j] == m {
                    while s.count[wk][j] < s.count[bk][j] {
                        self.put(&mut s, j, wk);
                    }
                }
                self.put(&mut s, j, bk);
            }
        }
        for j in 0..p {
            while s.count[wk][j] < m {
                self.put(&mut s, j, wk);
            }
        }
        let span = (0..p)
            .map(|j| s.t[self.id(wk, j, m - 1)] - s.t[self.id(fk, j, 0)] + self.cost[fk][j])
            .fold(0.0, f64::max);
        Some((s.order, span))
    }
}
