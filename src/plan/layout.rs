//! Where blocks go: the even partition, device/chunk layouts, and how a device's per-kind
//! counts become per-block decisions (keep counts from the last block backwards).

use crate::anatomy::{Anatomy, BlockKind};

use super::Decision;
use super::stage::{BlockCounts, KindDecision};

/// Even partition of the chain over `stages` (docs/model.md): whole layers as evenly as
/// possible, extra layers to the last stages, the embedding with the first stage and the head
/// with the last. With fewer layers than stages, half layers (single blocks) are split the
/// same way. `None` when there are fewer attention and MLP blocks than stages.
pub fn even_partition(layers: u32, stages: usize) -> Option<Vec<(usize, usize)>> {
    let l = layers as usize;
    if stages == 0 {
        return None;
    }
    let (units, width) = if l >= stages {
        (l, 2)
    } else if 2 * l >= stages {
        (2 * l, 1)
    } else {
        return None;
    };
    let base = units / stages;
    let extra = units % stages;
    let mut out = Vec::with_capacity(stages);
    let mut next = 1usize; // first block of the next stage's first unit
    for s in 0..stages {
        let take = base + usize::from(s >= stages - extra);
        let first = if s == 0 { 0 } else { next };
        let mut last = next + take * width - 1;
        if s == stages - 1 {
            last = 2 * l + 1;
        }
        out.push((first, last));
        next += take * width;
    }
    Some(out)
}

/// Per-block decisions of a device holding `ranges` (in chain order) given per-kind counts:
/// for each unit kind, the last `keep` blocks of that kind keep it, the ones before compress,
/// then offload, then recompute in a communication window (Lynx), and the earliest recompute
/// on demand.
pub fn assign_blocks(
    anatomy: &Anatomy,
    ranges: &[(usize, usize)],
    decisions: &[KindDecision],
) -> Vec<(usize, BlockKind, Vec<Decision>)> {
    let mut blocks: Vec<(usize, BlockKind, Vec<Decision>)> = Vec::new();
    let mut sorted: Vec<(usize, usize)> = ranges.to_vec();
    sorted.sort_unstable();
    for &(a, e) in &sorted {
        for i in a..=e {
            let kind = anatomy.kind_of(i);
            let n = anatomy.block_of(kind).units.len();
            blocks.push((i, kind, vec![Decision::Keep; n]));
        }
    }
    for d in decisions {
        let Some(kind) = d.block else { continue };
        let forced = anatomy
            .block_of(kind)
            .units
            .get(d.unit)
            .is_some_and(|u| u.forced);
        if forced && d.recompute > 0 {
            // MLP or MoE inputs of layers recomputed whole: the earliest blocks whose layer
            // is whole here (a block that opens a chunk keeps the input it receives).
            let mut left = d.recompute;
            for (i, k, dec) in blocks.iter_mut() {
                let opens = sorted.iter().any(|&(a, _)| a == *i);
                if *k == kind
                    && !opens
                    && left > 0
                    && let Some(slot) = dec.get_mut(d.unit)
                {
                    *slot = Decision::Recompute;
                    left -= 1;
                }
            }
            continue;
        }
        let mut seq = std::iter::repeat_n(Decision::Keep, d.keep as usize)
            .chain(std::iter::repeat_n(Decision::Compress, d.compress as usize))
            .chain(std::iter::repeat_n(Decision::Offload, d.offload as usize))
            .chain(std::iter::repeat_n(Decision::Overlap, d.overlap as usize))
            .chain(std::iter::repeat(Decision::Recompute));
        for (_, k, dec) in blocks.iter_mut().rev() {
            if *k == kind
                && let Some(slot) = dec.get_mut(d.unit)
            {
                *slot = seq.next().unwrap_or(Decision::Recompute);
            }
        }
    }
    blocks
}

/// Per-kind counts back from per-block decisions (for plans built block by block).
pub fn count_blocks(
    anatomy: &Anatomy,
    counts: BlockCounts,
    blocks: &[(usize, BlockKind, Vec<Decision>)],
) -> Vec<KindDecision> {
    let mut out = super::stage::keep_all(anatomy, counts);
    for d in out.iter_mut() {
        d.keep = 0;
    }
    for (_, kind, decs) in blocks {
        for (unit, dec) in decs.iter().enumerate() {
            if let Some(d) = out
                .iter_mut()
                .find(|d| d.block == Some(*kind) && d.unit == unit)
            {
                match dec {
                    Decision::Keep => d.keep += 1,
                    Decision::Recompute => d.recompute += 1,
                    Decision::Compress => d.compress += 1,
                    Decision::Offload => d.offload += 1,
                    Decision::Overlap => {
                        d.recompute += 1;
                        d.overlap += 1;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_partition_gives_extra_layers_to_last_stages() {
        let p = even_partition(10, 4).unwrap();
        // 10 layers over 4: 2, 2, 3, 3.
        assert_eq!(p, vec![(0, 4), (5, 8), (9, 14), (15, 21)]);
        let q = even_partition(96, 8).unwrap();
        assert_eq!(q[0], (0, 24));
        assert_eq!(q[7], (169, 193));
        // Half-layer split when layers < stages.
        let h = even_partition(2, 3).unwrap();
        assert_eq!(h, vec![(0, 1), (2, 2), (3, 5)]);
        assert!(even_partition(1, 3).is_none());
    }
}
