//! ZB-V: the zero-bubble repo's greedy V-shape schedule (`scheduler/zbv.py`,
//! `PipelineGraph.try_v_schedule`), two chunks per device, B/W split.
//!
//! Warm-up: F of chunk 0 everywhere, then from the last device up as many chunk-0 F's as
//! memory allows while the device would otherwise wait for chunk 1's F; counts balanced.
//! Then 2m rounds of: W's while memory is too high, a B per device (chunk 1's when its input
//! is ready), pending W's filling the idle time before it (bounded by the largest stage
//! bubble so far), then the same for F. Each (fill_b, fill_f) combination is rerun with the
//! previous run's per-stage bubbles as allowance while that improves; the smallest largest
//! stage bubble wins. Memory limit in chunk-activations (F +1, B 0, W -1), default 2p.
//!
//! Internally (as in the source) B and W use a flipped chunk index: internal chunk 0 is the
//! backward of the V's second half (real chunk 1), flowing from device 0 to p - 1.

use std::collections::VecDeque;

use super::search_input::{check_basic, check_v_shape, cost, mem_limit, op, schedule};
#[cfg(test)]
use super::zbv_rerun::same_path;
use super::zbv_rerun::{Check, allowance, approved_of, first_difference, first_flag_difference};
use super::zbv_snap::{Dev, Snaps};
use super::{Op, OpKind, Placement, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

const MEM: [f64; 3] = [1.0, 0.0, -1.0];

/// Rounds of the steady state between two snapshots of a run (`zbv_snap`): a rerun repeats
/// at most this many rounds of the run before it.
const SNAP_EVERY: usize = 32;

/// Generates `zb-v`.
pub(crate) fn generate(input: &ScheduleInput) -> Result<Schedule, ScheduleError> {
    let kind = ScheduleKind::ZbV;
    check_basic(kind, input)?;
    check_v_shape(kind, input)?;
    let p = input.p as usize;
    let limit = mem_limit(kind, input, 2.0 * p as f64)?;
    // cost[cat][stage][internal chunk]: F uses the real chunk, B/W the flipped one.
    let cost = [&input.f, &input.b, &input.w]
        .iter()
        .enumerate()
        .map(|(cat, grid)| {
            (0..p)
                .map(|d| {
                    let real = |c: usize| if cat == 0 { c } else { 1 - c };
                    [cost(grid, d, real(0)), cost(grid, d, real(1))]
                })
                .collect()
        })
        .collect::<Vec<Vec<[f64; 2]>>>();
    let g = Greedy {
        p,
        m: input.m as usize,
        cost,
        comm: input.comm,
        max_mem: limit,
    };
    // The source's greedy assumes equal costs on every (device, chunk); with very different
    // ones its choices can place an op before its input (the source then fails an
    // assertion). Then it is rerun with each op type's cost averaged, the regime it was
    // written for; the order stays valid for the real costs.
    let order = match g.best() {
        Some(order) => order,
        None => g.averaged().best().ok_or(ScheduleError::NoFit {
            schedule: kind,
            limit,
        })?,
    };
    let devices = order
        .into_iter()
        .map(|ops| {
            ops.into_iter()
                .map(|code| {
                    let (cat, chunk, mb) = decode(code);
                    let (kind, real) = match cat {
                        0 => (OpKind::F, chunk),
                        1 => (OpKind::B, 1 - chunk),
                        _ => (OpKind::W, 1 - chunk),
                    };
                    op(kind, mb, real as u32)
                })
                .collect::<Vec<Op>>()
        })
        .collect();
    Ok(schedule(kind, input, 2, Placement::VShape, devices))
}

/// The greedy's fixed inputs.
struct Greedy {
    p: usize,
    m: usize,
    /// `cost[cat][stage][internal chunk]`, cat 0 F, 1 B, 2 W.
    cost: Vec<Vec<[f64; 2]>>,
    comm: f64,
    max_mem: f64,
}

/// One finished run: its per-stage bubbles, the largest, the bubble allowance it was given
/// (what a rerun's path is compared with) and its order.
struct Run {
    /// Whether `fill_b` and `fill_f` decided anything in any run of its chain of reruns
    /// (see [`State::read`]); conservatively both when a run of the chain failed.
    read: Reads,
    bubble: Vec<f64>,
    max_bubble: f64,
    approved: Option<Vec<f64>>,
    /// The order of the run with this largest bubble.
    order: Order,
}

/// Per device its ops in order, each `(cat, internal chunk, micro-batch)` as one number
/// ([`encode`]).
type Order = Vec<Vec<u32>>;

/// An op of an [`Order`] as one number: the micro-batch above the category and the chunk
/// (micro-batches stay far below 2^29: `MAX_CELLS`).
fn encode(cat: usize, chunk: usize, mb: usize) -> u32 {
    ((mb as u32) << 3) | ((cat as u32) << 1) | chunk as u32
}

/// The `(cat, internal chunk, micro-batch)` of [`encode`]'s number.
fn decode(code: u32) -> (usize, usize, usize) {
    (
        ((code >> 1) & 3) as usize,
        (code & 1) as usize,
        (code >> 3) as usize,
    )
}

/// A run's per-stage bubbles and the largest.
type Bubbles = (Vec<f64>, f64);

/// Whether `fill_b` and `fill_f` decided something.
type Reads = (bool, bool);

/// Which flag, if any, `fill_w`'s last step reads.
#[derive(Clone, Copy)]
enum Extra {
    /// None: always allowed.
    Always,
    /// `fill_b`.
    FillB(bool),
    /// `fill_f`.
    FillF(bool),
}

/// A violated assertion of the source: this run produced no valid schedule.
#[derive(Debug, Clone, Copy)]
struct Invalid;

/// Buffers a run fills, reused from run to run.
struct Scratch {
    /// End time per op (`-1` while not placed), indexed by [`Greedy::id`].
    end: Vec<f64>,
    /// The allowance tests of the last run (see `zbv_rerun`).
    checks: Vec<Check>,
    /// The order of the last run.
    order: Order,
    /// The last run's snapshots (`zbv_snap`).
    snaps: Snaps,
}

/// The chain's first run that a [`Scratch`] holds (no allowance): its `(fill_b, fill_f)`
/// and what it returned. The other chains' first runs are that run up to where a flag that
/// differs decides something (`zbv_rerun`), and start from its snapshots.
type Base = Option<((bool, bool), (Bubbles, Reads))>;

impl Scratch {
    /// Becomes a copy of `other`, reusing its buffers.
    fn copy_from(&mut self, other: &Scratch) {
        self.end.clone_from(&other.end);
        self.checks.clone_from(&other.checks);
        self.order.clone_from(&other.order);
        self.snaps.clone_from(&other.snaps);
    }

    fn new(g: &Greedy) -> Scratch {
        Scratch::snapping(g, SNAP_EVERY)
    }

    /// [`Scratch::new`] with a snapshot every `every` rounds.
    fn snapping(g: &Greedy, every: usize) -> Scratch {
        Scratch {
            end: vec![-1.0; 6 * g.p * g.m],
            checks: Vec::new(),
            order: Vec::new(),
            snaps: Snaps::new(every),
        }
    }

    /// Empty per-device order lists for a run on `p` devices of `m` micro-batches.
    fn clear_order(&mut self, p: usize, m: usize) {
        if self.order.len() == p {
            self.order.iter_mut().for_each(Vec::clear);
        } else {
            self.order = vec![Vec::with_capacity(6 * m); p];
        }
    }
}

/// Running state of one `try_v_schedule`.
struct State<'a> {
    g: &'a Greedy,
    /// `count[stage][cat * 2 + chunk]`.
    count: Vec<[usize; 6]>,
    /// End time per op (`-1` while not placed), indexed by [`Greedy::id`] (a buffer reused
    /// from run to run).
    end: &'a mut [f64],
    /// The allowance tests made so far (a buffer reused from run to run).
    checks: &'a mut Vec<Check>,
    /// The run's snapshots so far (a buffer reused from run to run).
    snaps: &'a mut Snaps,
    cur: Vec<f64>,
    mem: Vec<f64>,
    bubble: Vec<f64>,
    max_bubble: f64,
    pending_w: Vec<VecDeque<usize>>,
    /// The order so far (a buffer reused from run to run).
    order: &'a mut Order,
    approved: Vec<f64>,
    max_approved: f64,
    /// Whether `fill_b` and `fill_f` decided a step of this run: `fill_w` reached its last
    /// step with a W to put and a wait above the allowance, where the flag alone said
    /// whether to put it. A run that never let a flag decide is step for step the same run
    /// with the other value of that flag.
    read: Reads,
}

impl Greedy {
    /// The 4 (fill_b, fill_f) combinations; the order with the smallest largest stage
    /// bubble (ties: the first, as the source).
    ///
    /// Bubbles never go below zero (an op starts at the device's clock or later), and a run
    /// replaces the best only when strictly smaller: once a run has no bubble, no later one
    /// can replace it, so the search stops there with the same answer.
    ///
    /// Every run records its order in reused buffers, and the best keeps its own: the
    /// answer needs no run of its own.
    fn best(&self) -> Option<Order> {
        // The last chain's first run, and the reruns of a chain.
        let mut first = Scratch::new(self);
        let mut again: Option<Scratch> = None;
        let mut base: Base = None;
        let mut spare: Order = Vec::new();
        let mut best: Option<Run> = None;
        // Combinations run so far (or known to run the same as one that did), with what
        // their chains read.
        let mut seen: Vec<((bool, bool), Reads)> = Vec::new();
        for (fill_b, fill_f) in [(true, true), (true, false), (false, true), (false, false)] {
            if best.as_ref().is_some_and(|b| b.max_bubble <= 0.0) {
                break;
            }
            // A chain in which a flag decided nothing is the same chain with the other value
            // of that flag: its best has the same largest bubble, so it cannot replace the
            // best (only a strictly smaller one does).
            let same = seen.iter().find(|&&((b, f), (read_b, read_f))| {
                (b == fill_b || !read_b) && (f == fill_f || !read_f)
            });
            if let Some(&(_, reads)) = same {
                seen.push(((fill_b, fill_f), reads));
                continue;
            }
            let scratch = (&mut first, &mut again);
            let Some(run) =
                self.schedule_with_retries((fill_b, fill_f), scratch, &mut base, &mut spare)
            else {
                seen.push(((fill_b, fill_f), (true, true)));
                continue;
            };
            seen.push(((fill_b, fill_f), run.read));
            if best.as_ref().is_none_or(|b| run.max_bubble < b.max_bubble) {
                best = Some(run);
            } else {
                spare = run.order;
            }
        }
        best.map(|b| b.order)
    }

    /// The same inputs with each op type's cost averaged over devices and chunks.
    fn averaged(&self) -> Greedy {
        let n = (2 * self.p) as f64;
        let cost = self
            .cost
            .iter()
            .map(|per_stage| {
                let mean = per_stage.iter().flatten().sum::<f64>() / n;
                vec![[mean; 2]; self.p]
            })
            .collect();
        Greedy { cost, ..*self }
    }

    /// Index of an op in the end-time table: the six ops of one (stage, micro-batch) side by
    /// side, so that the checks of one op read one cache line, and the stages of one
    /// micro-batch next to each other, so that a run (which moves through the micro-batches
    /// on every stage at once) works on a small window of the table. The last entry is the
    /// last stage's last W of internal chunk 1, as in the source's table.
    fn id(&self, cat: usize, chunk: usize, stage: usize, mb: usize) -> usize {
        (mb * self.p + stage) * 6 + cat * 2 + chunk
    }

    /// `create_schedule`'s inner step: one run, then reruns with the previous run's
    /// per-stage bubbles as allowance while the largest bubble shrinks. A rerun that would
    /// take the path of the run before it (`zbv_rerun`) gives the same largest bubble, which
    /// ends the reruns: it is not run. A rerun starts from the last snapshot of the run
    /// before it taken before their paths part (`zbv_snap`).
    ///
    /// The first run is left in `first` (the next chain's first run starts from it,
    /// [`Greedy::first_run`]); the reruns run in `again` (made when first needed). The chain's
    /// best order is copied into `spare`'s buffer.
    fn schedule_with_retries(
        &self,
        (fill_b, fill_f): (bool, bool),
        (first, again): (&mut Scratch, &mut Option<Scratch>),
        base: &mut Base,
        spare: &mut Order,
    ) -> Option<Run> {
        let ((bubble, max_bubble), read) = self.first_run((fill_b, fill_f), first, base).ok()?;
        let mut order = std::mem::take(spare);
        order.clone_from(&first.order);
        let mut best = Run {
            read,
            bubble,
            max_bubble,
            approved: None,
            order,
        };
        // Whether the chain's best run is the one in `again` (else `first`'s).
        let mut in_again = false;
        for _ in 0..64 {
            // No rerun can beat a run without bubbles (see `best`).
            if best.max_bubble <= 0.0 {
                break;
            }
            let last: &Scratch = match again {
                Some(a) if in_again => a,
                _ => first,
            };
            let Some(k) = first_difference(
                &last.checks,
                best.approved.as_deref(),
                Some(&best.bubble),
                self.p,
            ) else {
                break;
            };
            let rerun_scratch = match again {
                Some(a) if in_again => a,
                _ => {
                    let a = again.get_or_insert_with(|| Scratch::new(self));
                    a.copy_from(first);
                    in_again = true;
                    a
                }
            };
            let rerun = match rerun_scratch.snaps.last_before_check(k) {
                Some(snap) => self.resume(fill_f, fill_b, Some(&best.bubble), snap, rerun_scratch),
                None => self.try_v(fill_f, fill_b, Some(&best.bubble), rerun_scratch),
            };
            match rerun {
                Ok(((bubble, max_bubble), read)) => {
                    best.read = (best.read.0 || read.0, best.read.1 || read.1);
                    if max_bubble >= best.max_bubble {
                        break;
                    }
                    let approved = std::mem::replace(&mut best.bubble, bubble);
                    best.approved = Some(approved);
                    best.max_bubble = max_bubble;
                    best.order.clone_from(&rerun_scratch.order);
                }
                Err(Invalid) => {
                    best.read = (true, true);
                    break;
                }
            }
        }
        Some(best)
    }

    /// A chain's first run (no allowance), left in `scratch`. When `scratch` holds another
    /// chain's first run (`base`), it starts from that run's last snapshot before the first
    /// test where the flags decide otherwise (`zbv_rerun`), and is that run when there is
    /// none.
    fn first_run(
        &self,
        flags: (bool, bool),
        scratch: &mut Scratch,
        base: &mut Base,
    ) -> Result<(Bubbles, Reads), Invalid> {
        let (fill_b, fill_f) = flags;
        let result = match base.take() {
            None => self.try_v(fill_f, fill_b, None, scratch),
            Some((old, kept)) => match first_flag_difference(&scratch.checks, self.p, old, flags) {
                None => Ok(kept),
                Some(k) => match scratch.snaps.last_before_check(k) {
                    Some(snap) => self.resume(fill_f, fill_b, None, snap, scratch),
                    None => self.try_v(fill_f, fill_b, None, scratch),
                },
            },
        };
        *base = result.as_ref().ok().map(|r| (flags, r.clone()));
        result
    }

    /// One `try_v_schedule` run: the per-stage bubbles and the largest. `scratch` is
    /// [`Scratch::new`]'s for this greedy; the run leaves its order, its allowance tests and
    /// its snapshots there.
    fn try_v(
        &self,
        fill_f: bool,
        fill_b: bool,
        approved: Option<&[f64]>,
        scratch: &mut Scratch,
    ) -> Result<(Bubbles, Reads), Invalid> {
        let (p, m) = (self.p, self.m);
        let (approved, max_approved) = approved_of(approved, p);
        scratch.end.fill(-1.0);
        scratch.checks.clear();
        scratch.snaps.clear();
        scratch.clear_order(p, m);
        let mut s = State {
            g: self,
            count: vec![[0; 6]; p],
            end: &mut scratch.end,
            checks: &mut scratch.checks,
            snaps: &mut scratch.snaps,
            cur: vec![0.0; p],
            mem: vec![0.0; p],
            bubble: vec![0.0; p],
            max_bubble: 0.0,
            pending_w: vec![VecDeque::new(); p],
            order: &mut scratch.order,
            approved,
            max_approved,
            read: (false, false),
        };
        s.warm_up()?;
        s.rounds(0, fill_f, fill_b)
    }

    /// The rerun of [`Greedy::try_v`] with allowance `approved`, started from snapshot
    /// `snap` of the run before it, which `scratch` holds: the caller knows that the rerun's tests come out as that
    /// run's up to the snapshot, so that the rerun is that run up to there (`zbv_snap`).
    /// Returns what the whole rerun returns, and leaves in `scratch` what it leaves.
    fn resume(
        &self,
        fill_f: bool,
        fill_b: bool,
        approved: Option<&[f64]>,
        snap: usize,
        scratch: &mut Scratch,
    ) -> Result<(Bubbles, Reads), Invalid> {
        let p = self.p;
        let (approved, max_approved) = approved_of(approved, p);
        let (head, devs, pending) = scratch.snaps.get(snap, p);
        let mut pending = pending.iter();
        let mut pending_w = Vec::with_capacity(p);
        for (d, dev) in devs.iter().enumerate() {
            let order = &mut scratch.order[d];
            for &code in order.get(dev.order_len..).unwrap_or_default() {
                let (cat, chunk, mb) = decode(code);
                scratch.end[self.id(cat, chunk, d, mb)] = -1.0;
            }
            order.truncate(dev.order_len);
            pending_w.push(
                pending
                    .by_ref()
                    .take(dev.pending)
                    .map(|&c| usize::from(c))
                    .collect::<VecDeque<usize>>(),
            );
        }
        scratch.checks.truncate(head.checks);
        let s = State {
            g: self,
            count: devs.iter().map(|d| d.count).collect(),
            cur: devs.iter().map(|d| d.cur).collect(),
            mem: devs.iter().map(|d| d.mem).collect(),
            bubble: devs.iter().map(|d| d.bubble).collect(),
            end: &mut scratch.end,
            checks: &mut scratch.checks,
            snaps: &mut scratch.snaps,
            max_bubble: head.max_bubble,
            pending_w,
            order: &mut scratch.order,
            approved,
            max_approved,
            read: head.read,
        };
        s.snaps.truncate(snap + 1);
        s.rounds(head.round, fill_f, fill_b)
    }
}

impl State<'_> {
    /// The warm-up: chunk-0 F's everywhere, as many more as memory allows while a device
    /// would wait for its chunk-1 F, then F's until the counts are balanced.
    fn warm_up(&mut self) -> Result<(), Invalid> {
        let s = self;
        let g = s.g;
        let (p, m) = (g.p, g.m);
        for i in 0..p {
            s.put(0, 0, i)?;
        }
        for i in (0..p).rev() {
            if i == p - 1 {
                s.put(0, 1, i)?;
                continue;
            }
            let arrival = s.end[g.id(0, 1, i + 1, 0)] + g.comm;
            while s.mem[i] + MEM[0] * (2 + 2 * i) as f64 <= g.max_mem
                && s.cur[i] + g.cost[0][i][0] <= arrival
                && s.count[i][0] < m
            {
                for j in 0..=i {
                    s.put(0, 0, j)?;
                }
            }
            s.put(0, 1, i)?;
        }
        let mut chunk = 0;
        for i in 1..p {
            let mut idle_rounds = 0;
            while s.count[i][0] + s.count[i][1] < s.count[i - 1][0] + s.count[i - 1][1]
                || (s.count[i][1] <= s.count[i - 1][1] && s.count[i - 1][1] < m)
            {
                let mut put_any = false;
                for j in (i..p).rev() {
                    if s.count[j][chunk] < m {
                        s.put(0, chunk, j)?;
                        put_any = true;
                    }
                }
                chunk = 1 - chunk;
                idle_rounds = if put_any { 0 } else { idle_rounds + 1 };
                if idle_rounds >= 2 {
                    return Err(Invalid);
                }
            }
        }
        Ok(())
    }

    /// Rounds `from..2m` of the steady state and cool-down, then the pending W's: the run's
    /// per-stage bubbles and the largest. Takes the snapshots that are due.
    fn rounds(
        mut self,
        from: usize,
        fill_f: bool,
        fill_b: bool,
    ) -> Result<(Bubbles, Reads), Invalid> {
        let s = &mut self;
        let g = s.g;
        let (p, m) = (g.p, g.m);
        // Per round: the devices whose next B is of chunk 0 and of chunk 1, and the order
        // they put them in (buffers kept from round to round).
        let (mut b0, mut b1, mut ranks) = (
            Vec::with_capacity(p),
            Vec::with_capacity(p),
            Vec::with_capacity(p),
        );
        // Steady state and cool-down: 2m rounds of one B and (maybe) one F per device.
        for round in from..2 * m {
            if s.snaps.due(round) {
                s.snapshot(round);
            }
            for i in 0..p {
                while s.mem[i] + MEM[1] > g.max_mem {
                    s.put_w(i)?;
                }
            }
            b0.clear();
            b1.clear();
            for i in 0..p {
                if s.count[i][3] >= s.count[i][2] {
                    b0.push(i);
                } else if i == p - 1
                    || s.end[g.id(1, 1, i + 1, s.count[i][3])] >= 0.0
                    || s.count[i][2] >= m
                {
                    b1.push(i);
                } else {
                    b0.push(i);
                }
            }
            ranks.clear();
            ranks.extend(b1.iter().rev().map(|&i| (i, 1)));
            ranks.extend(b0.iter().map(|&i| (i, 0)));
            for &(i, c) in &ranks {
                let fa = if c == 1 && i + 1 < p {
                    Some(g.id(1, 1, i + 1, s.count[i][3]))
                } else if c == 0 && i > 0 {
                    Some(g.id(1, 0, i - 1, s.count[i][2]))
                } else {
                    None
                };
                let extra = if c == 1 {
                    Extra::Always
                } else {
                    Extra::FillB(fill_b)
                };
                s.fill_w(i, fa, extra)?;
                s.put(1, c, i)?;
            }
            for i in 0..p {
                if s.count[i][1] >= m {
                    continue;
                }
                let item = if s.count[i][1] >= s.count[i][0] {
                    Some(0)
                } else if i == p - 1 || s.end[g.id(0, 1, i + 1, s.count[i][1])] >= 0.0 {
                    Some(1)
                } else if s.count[i][0] < m
                    && (i == 0 || s.end[g.id(0, 0, i - 1, s.count[i][0])] >= 0.0)
                {
                    Some(0)
                } else {
                    None
                };
                let Some(item) = item else { continue };
                while s.mem[i] + MEM[0] > g.max_mem {
                    s.put_w(i)?;
                }
                let fa = if item == 0 && i > 0 {
                    Some(g.id(0, 0, i - 1, s.count[i][0]))
                } else if item == 1 && i + 1 < p {
                    Some(g.id(0, 1, i + 1, s.count[i][1]))
                } else {
                    None
                };
                s.fill_w(i, fa, Extra::FillF(fill_f))?;
                s.put(0, item, i)?;
            }
        }
        for i in 0..p {
            while !s.pending_w[i].is_empty() {
                s.put_w(i)?;
            }
        }
        let max_bubble = s.max_stage_bubble(None);
        Ok(((self.bubble, max_bubble), self.read))
    }

    /// Takes a snapshot before round `round` (`zbv_snap`).
    fn snapshot(&mut self, round: usize) {
        let devs = (0..self.g.p).map(|d| Dev {
            count: self.count[d],
            cur: self.cur[d],
            mem: self.mem[d],
            bubble: self.bubble[d],
            order_len: self.order[d].len(),
            pending: self.pending_w[d].len(),
        });
        let pending = self.pending_w.iter().flatten().copied();
        self.snaps.push(
            round,
            self.checks.len(),
            self.read,
            self.max_bubble,
            devs,
            pending,
        );
    }

    fn max_stage_bubble(&self, stage: Option<usize>) -> f64 {
        // Bubbles only grow, so the running maximum is the maximum.
        match stage {
            Some(st) => allowance(self.max_bubble, self.max_approved, self.approved[st]),
            None => self.max_bubble,
        }
    }

    fn put_w(&mut self, stage: usize) -> Result<(), Invalid> {
        let chunk = self.pending_w[stage].pop_front().ok_or(Invalid)?;
        self.put(2, chunk, stage)
    }

    /// Before the op whose input comes from op `fa` (if any): put pending W's that end before
    /// that input arrives, then one more if the wait exceeds the stage's bubble allowance
    /// (and `extra`). Without `fa`, the source reads the last entry of its end-time table.
    fn fill_w(&mut self, i: usize, fa: Option<usize>, extra: Extra) -> Result<(), Invalid> {
        let g = self.g;
        let w_cost = |s: &Self| s.pending_w[i].front().map_or(0.0, |&c| g.cost[2][i][c]);
        if let Some(fa) = fa {
            while !self.pending_w[i].is_empty()
                && self.end[fa] + g.comm >= self.cur[i] + w_cost(self)
            {
                self.put_w(i)?;
            }
        }
        // Python's `end_time[-1]` when there is no dependency: the last entry of the source's
        // table, the last stage's W of internal chunk 1 for the last micro-batch.
        let fa_end = self.end[fa.unwrap_or_else(|| g.id(2, 1, g.p - 1, g.m - 1))];
        if self.pending_w[i].is_empty() {
            return Ok(());
        }
        let wait = fa_end + g.comm - self.cur[i];
        self.checks.push(Check {
            stage: i as u32,
            wait,
            bubble: self.bubble[i],
            max_bubble: self.max_bubble,
            flag: match extra {
                Extra::Always => 0,
                Extra::FillB(_) => 1,
                Extra::FillF(_) => 2,
            },
        });
        if wait > self.max_stage_bubble(Some(i)) - self.bubble[i] {
            let put = match extra {
                Extra::Always => true,
                Extra::FillB(fill_b) => {
                    self.read.0 = true;
                    fill_b
                }
                Extra::FillF(fill_f) => {
                    self.read.1 = true;
                    fill_f
                }
            };
            if put {
                self.put_w(i)?;
            }
        }
        Ok(())
    }

    fn put(&mut self, cat: usize, chunk: usize, stage: usize) -> Result<(), Invalid> {
        let g = self.g;
        let c = self.g.cost[cat][stage][chunk];
        let no_bubble = self.cur[stage] + c;
        let mut tmp = no_bubble;
        let cnt = self.count[stage][cat * 2 + chunk];
        if cnt >= g.m || self.mem[stage] + MEM[cat] > g.max_mem {
            return Err(Invalid);
        }
        // Same-device prerequisites (f after F, B after f, b after B, W after its B).
        if cat > 0 || chunk > 0 {
            let (pc, pch) = if cat < 2 {
                let last = cat * 2 + chunk - 1;
                (last / 2, last % 2)
            } else {
                (1, chunk)
            };
            if self.end[g.id(pc, pch, stage, cnt)] < 0.0 {
                return Err(Invalid);
            }
        }
        if cat < 2 {
            let up = if chunk == 1 && stage + 1 < g.p {
                Some(stage + 1)
            } else if chunk == 0 && stage > 0 {
                Some(stage - 1)
            } else {
                None
            };
            if let Some(up) = up {
                let e = self.end[g.id(cat, chunk, up, cnt)];
                if e < 0.0 {
                    return Err(Invalid);
                }
                tmp = tmp.max(e + g.comm + c);
            }
        }
        if self.count[stage][0] > 0 {
            self.bubble[stage] += tmp - no_bubble;
            self.max_bubble = self.max_bubble.max(self.bubble[stage]);
        }
        self.end[g.id(cat, chunk, stage, cnt)] = tmp;
        self.cur[stage] = tmp;
        self.mem[stage] += MEM[cat];
        self.order[stage].push(encode(cat, chunk, cnt));
        if cat == 1 {
            self.pending_w[stage].push_back(chunk);
        }
        self.count[stage][cat * 2 + chunk] += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search as the source runs it: every combination and every rerun, each recording
    /// its order.
    fn plain(g: &Greedy) -> Option<Order> {
        let mut end = Scratch::new(g);
        let mut best: Option<(f64, Order)> = None;
        for (fill_b, fill_f) in [(true, true), (true, false), (false, true), (false, false)] {
            let Ok(((mut bubble, mut max), mut order)) = g
                .try_v(fill_f, fill_b, None, &mut end)
                .map(|(b, _)| (b, end.order.clone()))
            else {
                continue;
            };
            for _ in 0..64 {
                match g.try_v(fill_f, fill_b, Some(&bubble), &mut end) {
                    Ok(((b, mx), _)) if mx < max => {
                        (bubble, max, order) = (b, mx, end.order.clone());
                    }
                    _ => break,
                }
            }
            if best.as_ref().is_none_or(|(b, _)| max < *b) {
                best = Some((max, order));
            }
        }
        best.map(|b| b.1)
    }

    /// The shortcuts of [`Greedy::best`] (no order recorded during the search, combinations
    /// whose flags decide nothing skipped, the stop at no bubble) give the source's answer.
    #[test]
    fn the_search_gives_what_the_full_search_gives() {
        let mut seed = 11u64;
        let mut next = |lo: f64, hi: f64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((seed >> 11) as f64 / (1u64 << 53) as f64)
        };
        let (mut found, mut unread, mut same, mut differs) = (0, 0, 0, 0);
        for case in 0..160 {
            let p = 2 + case % 5;
            let m = p + case % (2 * p + 1);
            let equal = case % 4 == 0;
            let cost: Vec<Vec<[f64; 2]>> = (0..3)
                .map(|_| {
                    (0..p)
                        .map(|_| {
                            if equal {
                                [1.0; 2]
                            } else {
                                [next(0.5, 2.0), next(0.5, 2.0)]
                            }
                        })
                        .collect()
                })
                .collect();
            let g = Greedy {
                p,
                m,
                cost,
                comm: if equal { 0.0 } else { next(0.0, 0.3) },
                max_mem: if case % 3 == 0 {
                    (p + 2) as f64
                } else {
                    2.0 * p as f64
                },
            };
            let avg = g.averaged();
            for g in [&avg, &g] {
                let want = plain(g);
                assert_eq!(g.best(), want, "case {case}: p {p} m {m}");
                found += usize::from(want.is_some());
            }
            let mut end = Scratch::new(&avg);
            if let Ok(((bubble, _), read)) = avg.try_v(true, true, None, &mut end) {
                unread += usize::from(!read.0 || !read.1);
                let skip = same_path(&end.checks, None, Some(&bubble), p);
                same += usize::from(skip);
                differs += usize::from(!skip);
            }
        }
        assert!(found > 150, "only {found} cases found a schedule");
        assert!(unread > 0, "no case skips a combination");
        // Both ways of the rerun test are taken (the equality above covers both).
        assert!(
            same > 0 && differs > 0,
            "reruns skipped {same}, run {differs}"
        );
    }

    /// What a run leaves: its result, order, allowance tests, and the rounds and test
    /// counts of its snapshots.
    type Left = (
        Result<(Bubbles, Reads), ()>,
        Order,
        Vec<Check>,
        Vec<(usize, usize)>,
    );

    fn left(run: Result<(Bubbles, Reads), Invalid>, scratch: &Scratch) -> Left {
        (
            run.map_err(|_| ()),
            scratch.order.clone(),
            scratch.checks.clone(),
            scratch.snaps.rounds(),
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// A run started from a snapshot of the run before it returns and leaves exactly what
        /// the whole run does: each chain's first run from the previous chain's (other flags),
        /// and reruns from the run before them (the previous run's bubbles, as the search
        /// gives, then random allowances), each from the last snapshot before their tests part
        /// or any earlier one. Random sizes, costs, transfer times, limits and snapshot
        /// spacings.
        #[test]
        fn a_resumed_run_is_the_whole_run(
            p in 2usize..7,
            extra in 0usize..48,
            costs in proptest::collection::vec(0.8f64..1.25, 36),
            scale in proptest::collection::vec(0.5f64..2.0, 3),
            comm in 0.0f64..0.3,
            tight in proptest::bool::ANY,
            random in proptest::collection::vec(0.0f64..4.0, 18),
            picks in proptest::collection::vec(0usize..1000, 16),
            every in 1usize..40,
        ) {
            let m = p + extra;
            let cost = (0..3)
                .map(|cat| {
                    (0..p)
                        .map(|d| {
                            let c = &costs[cat * 12 + 2 * d..];
                            [scale[cat] * c[0], scale[cat] * c[1]]
                        })
                        .collect()
                })
                .collect();
            let g = Greedy {
                p,
                m,
                cost,
                comm,
                max_mem: if tight { (p + 2) as f64 } else { 2.0 * p as f64 },
            };
            // The averaged costs where the greedy fails with the real ones (as `generate`).
            let g = if g.try_v(true, true, None, &mut Scratch::new(&g)).is_ok() {
                g
            } else {
                g.averaged()
            };
            let mut first = Scratch::snapping(&g, every);
            let mut again = Scratch::snapping(&g, every);
            let mut fresh = Scratch::snapping(&g, every);
            let mut picks = picks.iter().cycle();
            let mut pick = |last: usize| if picks.next().is_some_and(|x| x % 3 == 0) {
                picks.next().map_or(last, |x| x % (last + 1))
            } else {
                last
            };
            let mut base: Base = None;
            for flags in [(true, true), (true, false), (false, true), (false, false)] {
                let (fill_b, fill_f) = flags;
                let run = match base.take() {
                    None => g.try_v(fill_f, fill_b, None, &mut first),
                    Some((old, kept)) => match first_flag_difference(&first.checks, p, old, flags) {
                        None => Ok(kept),
                        Some(k) => {
                            let last = first.snaps.last_before_check(k).ok_or_else(|| {
                                proptest::test_runner::TestCaseError::fail("no snapshot")
                            })?;
                            g.resume(fill_f, fill_b, None, pick(last), &mut first)
                        }
                    },
                };
                let whole = g.try_v(fill_f, fill_b, None, &mut fresh);
                proptest::prop_assert_eq!(left(run.clone(), &first), left(whole, &fresh));
                let Ok(((bubble, max), read)) = run else { continue };
                proptest::prop_assert_eq!(&first.end, &fresh.end);
                base = Some((flags, ((bubble.clone(), max), read)));
                again.copy_from(&first);
                let mut old: Option<Vec<f64>> = None;
                let allowances = [bubble, random[..p].to_vec(), random[6..6 + p].to_vec(), random[12..12 + p].to_vec()];
                for new in &allowances {
                    let Some(k) = first_difference(&again.checks, old.as_deref(), Some(new), p) else {
                        continue;
                    };
                    let last = again.snaps.last_before_check(k).ok_or_else(|| {
                        proptest::test_runner::TestCaseError::fail("no snapshot")
                    })?;
                    let rerun = g.resume(fill_f, fill_b, Some(new), pick(last), &mut again);
                    let ok = rerun.is_ok();
                    let whole = g.try_v(fill_f, fill_b, Some(new), &mut fresh);
                    proptest::prop_assert_eq!(left(rerun, &again), left(whole, &fresh));
                    if !ok {
                        break;
                    }
                    proptest::prop_assert_eq!(&again.end, &fresh.end);
                    old = Some(new.clone());
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// A rerun that `same_path` says follows the run before it gives exactly that run's
        /// order, bubbles and flags (random sizes, costs, transfer times and limits, up to
        /// many micro-batches per device); and the greedy with the skip gives the full
        /// search's answer.
        #[test]
        fn a_skipped_rerun_is_the_run_before(
            p in 2usize..7,
            extra in 0usize..40,
            costs in proptest::collection::vec(0.3f64..2.5, 36),
            comm in 0.0f64..0.4,
            tight in proptest::bool::ANY,
            equal in proptest::bool::ANY,
        ) {
            let m = p + extra;
            let cost = (0..3)
                .map(|cat| {
                    (0..p)
                        .map(|d| if equal { [1.0; 2] } else { [costs[cat * 12 + 2 * d], costs[cat * 12 + 2 * d + 1]] })
                        .collect()
                })
                .collect();
            let g = Greedy {
                p,
                m,
                cost,
                comm: if equal { 0.0 } else { comm },
                max_mem: if tight { (p + 2) as f64 } else { 2.0 * p as f64 },
            };
            let mut scratch = Scratch::new(&g);
            for (fill_b, fill_f) in [(true, true), (false, true), (true, false)] {
                let Ok(((bubble, _), read)) = g.try_v(fill_f, fill_b, None, &mut scratch) else {
                    continue;
                };
                let (checks, order) = (scratch.checks.clone(), scratch.order.clone());
                let again = g.try_v(fill_f, fill_b, Some(&bubble), &mut scratch);
                let o2 = &scratch.order;
                if same_path(&checks, None, Some(&bubble), p) {
                    let Ok(((b2, _), r2)) = again else {
                        return Err(proptest::test_runner::TestCaseError::fail("skipped rerun failed"));
                    };
                    proptest::prop_assert_eq!(&b2, &bubble);
                    proptest::prop_assert_eq!(o2, &order);
                    proptest::prop_assert_eq!(r2, read);
                }
            }
            proptest::prop_assert_eq!(g.best(), plain(&g));
        }
    }
}
