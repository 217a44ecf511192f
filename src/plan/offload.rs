//! Offload pre-assignment for the knapsack strategies that use the host link (`offload`,
//! `unified`): which copies go to the host, filled greedily in a given order up to the
//! host-link capacity; the exact knapsack then decides the rest (see the `plan` docs).

use crate::anatomy::Anatomy;

use super::stage::KindDecision;

/// Orders in which copies are offloaded until the host capacity is used.
#[derive(Clone, Copy)]
pub(crate) enum OffloadOrder<'a> {
    /// Highest recompute time per byte first.
    CostDensity,
    /// Largest first.
    Size,
    /// The copies the knapsack without offload recomputes (densest first), then the rest.
    Recomputed(&'a [u32]),
}

/// Offloaded copies per kind, filled greedily in `order` up to the host capacity.
pub(crate) fn assign_offload(
    anatomy: &Anatomy,
    base: &[KindDecision],
    capacity: u64,
    order: OffloadOrder,
) -> Vec<u32> {
    let unit = |d: &KindDecision| {
        d.block
            .map(|k| &anatomy.block_of(k).units[d.unit])
            .filter(|u| !u.forced && u.size_bytes > 0)
    };
    let density = |i: usize| unit(&base[i]).map_or(0.0, |u| u.forward_s / u.size_bytes as f64);
    // (kind, copies) in offload order.
    let mut steps: Vec<(usize, u32)> = Vec::new();
    let mut idx: Vec<usize> = (0..base.len())
        .filter(|&i| unit(&base[i]).is_some())
        .collect();
    match order {
        OffloadOrder::CostDensity | OffloadOrder::Recomputed(_) => {
            idx.sort_by(|&a, &b| density(b).total_cmp(&density(a)).then(a.cmp(&b)));
        }
        OffloadOrder::Size => idx.sort_by(|&a, &b| {
            let size = |i: usize| unit(&base[i]).map_or(0, |u| u.size_bytes);
            size(b).cmp(&size(a)).then(a.cmp(&b))
        }),
    }
    if let OffloadOrder::Recomputed(rec) = order {
        steps.extend(idx.iter().map(|&i| (i, rec.get(i).copied().unwrap_or(0))));
    }
    steps.extend(idx.iter().map(|&i| (i, base[i].count)));
    let mut left = capacity;
    let mut out = vec![0u32; base.len()];
    for (i, want) in steps {
        if let Some(u) = unit(&base[i]) {
            let room = base[i].count - out[i];
            let n = (left / u.size_bytes).min(u64::from(want.min(room))) as u32;
            out[i] += n;
            left -= u64::from(n) * u.size_bytes;
        }
    }
    out
}
