//! What a solve asks of a schedule's op order on every solve, worked out once per schedule
//! and kept with it: the live vectors the planner sizes chunks with, the held vectors
//! its memory floors read, the simulator's shape check of the order, the steady state its
//! figures-only run jumps over and the stretches that repeat on each device, which the
//! memory walks walk once. The sweep shares one
//! generated schedule between many solves (every V-Half configuration with the same `p` and
//! `m` has the same order, and the fixed peak and every strategy of a configuration share
//! its first schedule), so each of them would otherwise walk the same tens of thousands of
//! ops again.
//!
//! A schedule is not changed once generated (the memo shares it behind an `Arc`); a copy
//! (`clone`) starts with nothing worked out, so a copy changed afterwards is walked afresh.

use std::fmt;
use std::sync::OnceLock;

use super::Schedule;
use super::period::SteadyState;

/// A schedule's facts, each worked out on its first ask. A copy starts empty, and two
/// schedules compare (and print) by their ops alone.
#[derive(Default)]
pub(crate) struct OrderFacts {
    /// [`Schedule::live_vectors`].
    live_vectors: OnceLock<Vec<Vec<Vec<u32>>>>,
    /// [`Schedule::held_vectors`].
    held_vectors: OnceLock<Vec<Vec<Vec<u32>>>>,
    /// [`Schedule::order_shape_kept`].
    order_shape: OnceLock<Result<(), String>>,
    /// [`Schedule::steady_state_kept`].
    steady_state: OnceLock<Option<SteadyState>>,
    /// [`Schedule::repeats_kept`].
    repeats: OnceLock<Vec<Option<Repeat>>>,
    /// [`Schedule::op_counts_kept`].
    op_counts: OnceLock<Vec<Vec<[u32; 4]>>>,
}

/// A stretch of one device's op list that repeats itself in kinds and chunks: op
/// `start + k len + i` has the kind and chunk of op `start + i`, for periods `k < count`.
/// Every period then changes the device's live micro-batches of each chunk alike, so a walk
/// that finds a period leaving them as it found them knows every later period's levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Repeat {
    /// First op of the first period.
    pub start: usize,
    /// Ops per period.
    pub len: usize,
    /// Periods (at least 2).
    pub count: usize,
}

impl Clone for OrderFacts {
    fn clone(&self) -> Self {
        OrderFacts::default()
    }
}

impl PartialEq for OrderFacts {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for OrderFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("..")
    }
}

impl Schedule {
    /// [`Schedule::live_vectors`], worked out on the first ask and kept (see the module: a
    /// schedule is not changed once generated).
    pub(crate) fn live_vectors_kept(&self) -> &[Vec<Vec<u32>>] {
        self.facts.live_vectors.get_or_init(|| self.live_vectors())
    }

    /// [`Schedule::held_vectors`], worked out on the first ask and kept.
    pub(crate) fn held_vectors_kept(&self) -> &[Vec<Vec<u32>>] {
        self.facts.held_vectors.get_or_init(|| self.held_vectors())
    }

    /// The simulator's check of the order's shape (every cell's ops, each on the device and
    /// chunk that hold its stage), worked out with `check` on the first ask and kept: the
    /// order alone decides it.
    pub(crate) fn order_shape_kept(
        &self,
        check: impl FnOnce(&Schedule) -> Result<(), String>,
    ) -> Result<(), String> {
        self.facts.order_shape.get_or_init(|| check(self)).clone()
    }

    /// The order's steady state ([`SteadyState::of`]: the periodic stretch the simulator's
    /// figures-only run jumps over), worked out on the first ask and kept.
    pub(crate) fn steady_state_kept(&self) -> Option<&SteadyState> {
        self.facts
            .steady_state
            .get_or_init(|| SteadyState::of(self))
            .as_ref()
    }

    /// Per device and local chunk, how many `[F, B, W, BW]` its op list holds (ops of a
    /// chunk the device does not hold are not counted); worked out on the first ask and
    /// kept. What the solve's time floors count passes with.
    pub(crate) fn op_counts_kept(&self) -> &[Vec<[u32; 4]>] {
        self.facts.op_counts.get_or_init(|| {
            let v = self.v.max(1) as usize;
            self.devices
                .iter()
                .map(|ops| {
                    let mut row = vec![[0u32; 4]; v];
                    for op in ops {
                        if let Some(c) = row.get_mut(op.chunk as usize) {
                            c[op.kind.index()] += 1;
                        }
                    }
                    row
                })
                .collect()
        })
    }

    /// Per device, its longest stretch that repeats in kinds and chunks ([`Repeat`]), if it
    /// has one of two periods or more; worked out on the first ask and kept.
    pub(crate) fn repeats_kept(&self) -> &[Option<Repeat>] {
        self.facts
            .repeats
            .get_or_init(|| self.devices.iter().map(|ops| Repeat::of(ops)).collect())
    }
}

/// Longest period, in ops, that [`Repeat::of`] looks for.
const LONGEST_PERIOD: usize = 2048;

impl Repeat {
    /// The stretch of `ops` around the middle of the list that repeats in kinds and chunks
    /// and spans the most ops beyond its first period, over the periods up to
    /// [`LONGEST_PERIOD`] ops (the shortest of the best; the search stops at the first that
    /// spans half the list); `None` when there is none of two periods or more.
    fn of(ops: &[super::Op]) -> Option<Repeat> {
        let same = |i: usize, j: usize| ops[i].kind == ops[j].kind && ops[i].chunk == ops[j].chunk;
        let mid = ops.len() / 2;
        let most = (ops.len() / 4).min(LONGEST_PERIOD);
        let mut best: Option<Repeat> = None;
        for len in 1..=most {
            if !(mid..mid + len).all(|i| i + len < ops.len() && same(i, i + len)) {
                continue;
            }
            // The run of positions `i` where op `i + len` repeats op `i`, around the middle.
            let mut lo = mid;
            while lo > 0 && same(lo - 1, lo - 1 + len) {
                lo -= 1;
            }
            let mut hi = mid;
            while hi + len < ops.len() && same(hi, hi + len) {
                hi += 1;
            }
            // Positions `lo .. hi` repeat one period on: period `k` (from `lo + k len`)
            // repeats the one before while `lo + k len <= hi`.
            let r = Repeat {
                start: lo,
                len,
                count: (hi - lo) / len + 1,
            };
            let skips = |r: &Repeat| (r.count - 1) * r.len;
            if best.is_none_or(|b| skips(&r) > skips(&b)) {
                best = Some(r);
            }
            if 2 * (hi - lo) >= ops.len() {
                break;
            }
        }
        best.filter(|r| r.count >= 2)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::schedule::{Op, OpKind, ScheduleInput, ScheduleKind, generate};

    /// The kept live and held vectors are the schedule's own, asked once or again, on every kind with
    /// random sizes and durations; a copy changed after its vectors were kept gets its own,
    /// and compares equal to the schedule it was copied from before the change.
    #[test]
    fn kept_live_vectors_are_the_schedules() {
        let mut next = crate::schedule::test_draws(0x5eed_1234_9876);
        let mut checked = 0;
        for case in 0..200 {
            let kind = ScheduleKind::ALL[next(ScheduleKind::ALL.len() as u64) as usize];
            let p = 2 + next(5) as u32;
            let m = p * (1 + next(4) as u32) + next(3) as u32;
            let v = 1 + next(3) as u32;
            let mut input = ScheduleInput::uniform(p, m, v, 1.0, 1.3, 0.7, 0.05);
            for row in input.f.iter_mut().chain(input.w.iter_mut()) {
                for x in row.iter_mut() {
                    *x *= 0.5 + next(100) as f64 / 50.0;
                }
            }
            input.combined_1f1b = case % 3 == 0;
            let Ok(s) = generate(kind, &input) else {
                continue;
            };
            let plain = s.live_vectors();
            assert_eq!(
                s.live_vectors_kept(),
                plain.as_slice(),
                "{kind} p {p} m {m}"
            );
            assert_eq!(
                s.live_vectors_kept(),
                plain.as_slice(),
                "{kind} p {p} m {m}"
            );
            let mut copy = s.clone();
            assert_eq!(copy, s);
            copy.devices[0].insert(0, Op::new(OpKind::F, m, 0));
            assert_eq!(copy.live_vectors_kept(), copy.live_vectors().as_slice());
            assert_ne!(copy.live_vectors_kept(), s.live_vectors_kept());
            checked += 1;
        }
        assert!(checked > 100, "only {checked} schedules");
    }
}
