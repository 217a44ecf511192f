//! AdaPipe's own partition DP: its warm-up/steady/cool-down recurrence (docs/model.md
//! 1.6; the steps are [`AdaPipeItem`]'s, the one copy of the rule) nested around the
//! stage-time oracle, greedy on `main` as the artifact runs it.

use super::partition::{Partition, RangeOracle};
use crate::sim::estimate::AdaPipeItem as Item;

/// The partition minimising AdaPipe's recurrence (docs/model.md) for `m`
/// micro-batches, as the artifact computes it (greedy on `main`, including its over-estimate
/// when `m < p - stage`). `None` when nothing fits.
pub fn best_adapipe<O: RangeOracle>(o: &mut O, p: usize, n: usize, m: u32) -> Option<Partition> {
    if p == 0 || n < p {
        return None;
    }
    let mut best: Vec<Vec<Option<(Item, usize)>>> = vec![vec![None; n + 1]; p];
    for l in (0..n).rev() {
        let Some(t) = o.time(p - 1, l, n - 1) else {
            break;
        };
        best[p - 1][l] = Some((Item::last(t.forward_s, t.backward_s, m), n - 1));
    }
    for st in (0..p - 1).rev() {
        let top = n - (p - st);
        let starts: Vec<usize> = if st == 0 {
            vec![0]
        } else {
            (0..=top).rev().collect()
        };
        for ls in starts {
            for lm in ls..=top {
                let Some((nxt, _)) = best[st + 1][lm + 1] else {
                    continue;
                };
                let Some(t) = o.time(st, ls, lm) else {
                    break;
                };
                let item = nxt.extend(st as u32, p as u32, t.forward_s, t.backward_s, m);
                if best[st][ls].is_none_or(|(b0, _)| item.main < b0.main) {
                    best[st][ls] = Some((item, lm));
                }
            }
        }
    }
    let (root, _) = best[0][0]?;
    let mut ranges = Vec::with_capacity(p);
    let mut a = 0;
    for row in best.iter().take(p) {
        let (_, end) = row[a]?;
        ranges.push((a, end));
        a = end + 1;
    }
    Some(Partition {
        ranges,
        objective_s: root.main,
    })
}
