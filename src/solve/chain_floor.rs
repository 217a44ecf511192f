//! The least iteration time, over every split of a block chain into contiguous stages, one per
//! device in chain order (1F1B, ZB-H1, GPipe: device `d` holds stage `d`), of the busiest
//! device's work, end-of-iteration tail and waits for the stages before it: what bounds a
//! single-chunk partition search before it runs.
//!
//! Device `d` holding blocks `s..e` works at least `passes x (work[s..e] + added_d(s, e))`
//! (`added_d` the least recomputation of that range at the device's in-flight count: it never
//! falls as the range grows). Its first op is a forward, which needs that micro-batch's
//! forward on every stage before it first, one after another (fill: at least the forwards of
//! blocks `0..s`), and its tail (its data-parallel collectives, at least a fixed time per
//! parameter) follows its work; on the kinds that end on a fused backward (1F1B, GPipe) that
//! micro-batch's backward then runs on every stage before it (drain: at least the work of blocks
//! `0..s`, beside this device's tail). So the iteration is at least, for every device,
//! `fill(s) + own + tail` and, with the drain, `drain(s) + own`.
//!
//! Whether some split keeps every device within a time `T` is decided greedily, each device
//! taking as many blocks as keep it within: starting a range one block later adds at most
//! that block's forward (or work) to the wait and takes at least `passes` times its work off
//! the device's own time, so a later start never reaches less far, and after `k` devices the
//! greedy has covered at least as many blocks as any split within `T` (induction on `k`; a
//! device the greedy reaches past the split's end takes nothing, and is not asked). A
//! bisection on `T` keeps the largest time found infeasible: no split reaches it.

/// Relative width at which the bisection stops.
const TOLERANCE: f64 = 1e-4;

/// A chain's per-block figures, as prefix sums (entry `i` sums blocks `0..i`).
pub(crate) struct ChainFloor {
    /// Forward, backward and weight gradient of one micro-batch.
    work: Vec<f64>,
    /// Forward of one micro-batch.
    forward: Vec<f64>,
    /// End-of-iteration tail of the blocks' parameters.
    tail: Vec<f64>,
    /// Whether every device ends on a fused backward (the drain counts).
    drain: bool,
    /// The fewest passes of any device over its stage.
    passes: f64,
}

/// Prefix sums of `values`.
fn prefix(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut out = vec![0.0];
    let mut sum = 0.0;
    for v in values {
        sum += v.max(0.0);
        out.push(sum);
    }
    out
}

impl ChainFloor {
    /// The chain of blocks with these `(work, forward, tail)` figures per micro-batch, each
    /// device passing over its stage at least `passes` times (at least 1), with the drain
    /// where `drain`.
    pub(crate) fn new(blocks: &[(f64, f64, f64)], passes: f64, drain: bool) -> Self {
        Self {
            work: prefix(blocks.iter().map(|b| b.0)),
            // A block's forward is part of its work: never count more.
            forward: prefix(blocks.iter().map(|b| b.1.min(b.0))),
            tail: prefix(blocks.iter().map(|b| b.2)),
            drain,
            passes: passes.max(1.0),
        }
    }

    /// Blocks in the chain.
    fn blocks(&self) -> usize {
        self.work.len() - 1
    }

    /// The lower bound of the module docs over `p` devices, `added(d, s, e)` device `d`'s
    /// least added time per pass on blocks `s..e` (`e > s`; infinite where it cannot hold
    /// them). Infinite where every split leaves some device unable to hold its blocks.
    pub(crate) fn least_time(
        &self,
        p: usize,
        added: &mut dyn FnMut(usize, usize, usize) -> f64,
    ) -> f64 {
        let n = self.blocks();
        if p == 0 || n == 0 {
            return 0.0;
        }
        let mut within = |d: usize, s: usize, e: usize, limit: f64| {
            let own = self.passes * (self.work[e] - self.work[s] + added(d, s, e));
            let fill = self.forward[s] + own + (self.tail[e] - self.tail[s]);
            fill <= limit && (!self.drain || self.work[s] + own <= limit)
        };
        let mut fits = |limit: f64| {
            let mut s = 0;
            for d in 0..p {
                let mut e = s;
                while e < n && within(d, s, e + 1, limit) {
                    e += 1;
                }
                s = e;
            }
            s == n
        };
        // Double from the average work until a time fits (none does past any sensible time:
        // no split can hold the chain).
        let mut hi = (self.passes * self.work[n] / p as f64).max(f64::MIN_POSITIVE);
        let mut lo = 0.0;
        while !fits(hi) {
            lo = hi;
            hi *= 2.0;
            if hi > 1e12 {
                return f64::INFINITY;
            }
        }
        while hi - lo > TOLERANCE * hi {
            let mid = 0.5 * (lo + hi);
            if fits(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split of `n` blocks into `p` contiguous (possibly empty) ranges, as ends.
    fn splits(p: usize, from: usize, n: usize) -> Vec<Vec<usize>> {
        if p == 1 {
            return vec![vec![n]];
        }
        let mut out = Vec::new();
        for e in from..=n {
            for mut rest in splits(p - 1, e, n) {
                rest.insert(0, e);
                out.push(rest);
            }
        }
        out
    }

    /// On random chains and added times that grow with the range, the bound never exceeds
    /// the least over every split (with non-empty ranges, as the planner's) of the largest
    /// device figure, and is within the bisection's tolerance of the least over the splits
    /// where an empty range asks nothing (the greedy's relaxation).
    #[test]
    fn the_bound_is_the_least_over_every_split() {
        let mut next = crate::solve::testcase::rng(3);
        let mut close = 0;
        for case in 0..300 {
            let n = 2 + next(7) as usize;
            let p = 1 + next(n.min(4) as u64) as usize;
            let blocks: Vec<(f64, f64, f64)> = (0..n)
                .map(|_| {
                    let work = 1.0 + next(9) as f64;
                    (work, work * next(4) as f64 / 4.0, next(3) as f64)
                })
                .collect();
            let passes = 1.0 + next(6) as f64;
            let drain = case % 2 == 0;
            let chain = ChainFloor::new(&blocks, passes, drain);
            // Added time: a per-device rate on the range's length squared past a capacity.
            let caps: Vec<usize> = (0..p).map(|_| 1 + next(n as u64) as usize).collect();
            let added = |d: usize, s: usize, e: usize| {
                let len = e - s;
                if len > caps[d] + 2 {
                    f64::INFINITY
                } else {
                    (len.saturating_sub(caps[d]) * len) as f64 * 0.5
                }
            };
            let got = chain.least_time(p, &mut |d, s, e| added(d, s, e));
            // The largest device figure of a split (an empty range asks nothing when
            // `empty_free`, as the greedy's relaxation).
            let worst = |ends: &[usize], empty_free: bool| {
                let mut s = 0;
                let mut worst = 0.0f64;
                for (d, &e) in ends.iter().enumerate() {
                    if e == s && empty_free {
                        continue;
                    }
                    let sum = |v: &dyn Fn(&(f64, f64, f64)) -> f64| -> f64 {
                        blocks[s..e].iter().map(v).sum()
                    };
                    let before = |v: &dyn Fn(&(f64, f64, f64)) -> f64| -> f64 {
                        blocks[..s].iter().map(v).sum()
                    };
                    let own = passes * (sum(&|b| b.0) + added(d, s, e));
                    let mut t = before(&|b| b.1.min(b.0)) + own + sum(&|b| b.2);
                    if drain {
                        t = t.max(before(&|b| b.0) + own);
                    }
                    worst = worst.max(t);
                    s = e;
                }
                worst
            };
            let all = splits(p, 0, n);
            let non_empty = |ends: &&Vec<usize>| {
                let mut s = 0;
                ends.iter().all(|&e| {
                    let ok = e > s;
                    s = e;
                    ok
                })
            };
            let want = all
                .iter()
                .filter(non_empty)
                .map(|ends| worst(ends, false))
                .fold(f64::INFINITY, f64::min);
            let relaxed = all
                .iter()
                .map(|ends| worst(ends, true))
                .fold(f64::INFINITY, f64::min);
            assert!(got <= want, "case {case}: {got} above {want}");
            if relaxed.is_finite() && got >= relaxed * (1.0 - 2.0 * TOLERANCE) {
                close += 1;
            }
        }
        assert!(
            close >= 250,
            "the bound met the relaxed least {close} times"
        );
    }
}
