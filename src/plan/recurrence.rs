//! AdaPipe's own partition DP: its warm-up/steady/cool-down recurrence (docs/model.md
//! 1.6) nested around the stage-time oracle, greedy on `main` as the artifact runs it.

use super::partition::{Partition, RangeOracle};

/// One state of AdaPipe's recurrence.
#[derive(Debug, Clone, Copy)]
struct Item {
    main: f64,
    iter: f64,
    steady: f64,
    warm: f64,
    cool: f64,
}

/// The partition minimising AdaPipe's recurrence (docs/model.md) for `m`
/// micro-batches, as the artifact computes it (greedy on `main`, including its over-estimate
/// when `m < p - stage`). `None` when nothing fits.
pub fn best_adapipe<O: RangeOracle>(o: &mut O, p: usize, n: usize, m: u32) -> Option<Partition> {
    if p == 0 || n < p {
        return None;
    }
    let nf = f64::from(m);
    let mut best: Vec<Vec<Option<(Item, usize)>>> = vec![vec![None; n + 1]; p];
    for l in (0..n).rev() {
        let Some(t) = o.time(p - 1, l, n - 1) else {
            break;
        };
        let it = t.total();
        let mut item = Item {
            main: nf * it,
            iter: it,
            steady: (nf - 2.0) * it,
            warm: it,
            cool: it,
        };
        if m == 1 {
            item.steady = it;
            item.warm = 0.0;
            item.cool = 0.0;
        }
        best[p - 1][l] = Some((item, n - 1));
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
                let (f, b) = (t.forward_s, t.backward_s);
                let cur = f + b;
                let mx = cur.max(nxt.iter);
                let kk = i64::from(m) - (p - st) as i64;
                let steady = if kk >= 0 { mx * kk as f64 } else { nxt.steady };
                let warmups = if kk >= 0 {
                    (p - st - 1) as f64
                } else {
                    nf - 1.0
                };
                let warm = f + (f * warmups).max(nxt.warm);
                let cool = b + (b * warmups).max(nxt.cool);
                let main = steady + warm + cool;
                if best[st][ls].is_none_or(|(b0, _)| main < b0.main) {
                    let mut item = Item {
                        main,
                        iter: mx,
                        steady,
                        warm,
                        cool,
                    };
                    if kk >= 1 {
                        item.steady = steady - mx;
                        if cur >= mx {
                            item.warm = warm + b;
                            item.cool = cool + f;
                        } else {
                            item.warm = warm + mx - b;
                            item.cool = cool + mx - f;
                        }
                    } else {
                        item.steady = steady + f + b;
                    }
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
