//! The layer split of the baselines and the non-partitioning strategies (docs/architecture.md
//! 9): Megatron's even split, or `balanced` (Megatron's
//! `account-for-embedding/loss-in-pipeline-split`), where the embedding and the head each
//! count as one layer and the `L + 2` units are split evenly over the chain's stages (all
//! `p x v` virtual stages with chunks), the remainder going to the last stages as in the
//! even split.

use crate::scenario::{InvalidField, Partition, PipelineLayout, Scenario, Strategy};

use super::layout::even_partition;

/// `(first, last)` block of every chain stage under `partition`; `None` when the stages
/// cannot each hold a block.
pub fn default_partition(
    layers: u32,
    stages: usize,
    partition: Partition,
) -> Option<Vec<(usize, usize)>> {
    match partition {
        Partition::Even => even_partition(layers, stages),
        Partition::Balanced => balanced(layers, stages).or_else(|| even_partition(layers, stages)),
    }
}

/// `(first, last)` block of every chain stage of `layers` layers, the last `mtp_layers` of
/// them MTP layers: the layout's when it has `stages` stages (checked by [`check_layout`]; a
/// run with another count of stages, such as the 1F1B baseline of an interleaved layout,
/// falls back to `partition`), else `partition`'s.
pub fn chain_split(
    (layers, mtp_layers): (u32, u32),
    stages: usize,
    partition: Partition,
    layout: Option<&PipelineLayout>,
) -> Option<Vec<(usize, usize)>> {
    layout
        .filter(|l| l.stages().len() == stages)
        .and_then(|l| {
            l.chain(layers.saturating_sub(mtp_layers), mtp_layers, stages)
                .ok()
        })
        .or_else(|| default_partition(layers, stages, partition))
}

/// Whether the scenario's strategy searches its own layer split (and so cannot take a
/// layout): AdaPipe and unified everywhere, Lynx where every device holds one stage
/// (elsewhere it keeps the given split).
pub fn searches_own_split(scenario: &Scenario) -> bool {
    let plan = &scenario.plan;
    let stages = plan
        .schedule
        .stages(scenario.parallel.pp, scenario.parallel.chunks);
    match plan.strategy {
        Strategy::AdaPipe | Strategy::Unified => true,
        Strategy::Lynx => stages == scenario.parallel.pp,
        _ => false,
    }
}

/// Refuses a layout that does not fit the scenario: its stages against `p x chunks` of the
/// schedule, its layers against the model (with the column and the reason), a partitioning
/// strategy (which chooses its own split) and `partition balanced` beside it.
pub fn check_layout(scenario: &Scenario) -> Result<(), InvalidField> {
    let Some(layout) = &scenario.plan.layout else {
        return Ok(());
    };
    let plan = &scenario.plan;
    let stages = plan
        .schedule
        .stages(scenario.parallel.pp, scenario.parallel.chunks) as usize;
    // The text against the pipeline and the model first: its errors point at a column.
    layout
        .chain(scenario.model.layers, scenario.model.mtp_layers, stages)
        .map_err(|e| InvalidField::new("plan.layout", layout, e.to_string()))?;
    if searches_own_split(scenario) {
        return Err(InvalidField::new(
            "plan.layout",
            layout,
            format!(
                "a layout needs a strategy that keeps its split; {} chooses its own",
                plan.strategy
            ),
        ));
    }
    if plan.partition != Partition::Even {
        return Err(InvalidField::new(
            "plan.layout",
            layout,
            format!(
                "a layout or partition {}, not both (a layout is the whole split)",
                plan.partition
            ),
        ));
    }
    Ok(())
}

/// The balanced split, `None` when there are fewer units (`L + 2`) than stages.
fn balanced(layers: u32, stages: usize) -> Option<Vec<(usize, usize)>> {
    let l = layers as usize;
    let units = l + 2;
    if stages == 0 || units < stages {
        return None;
    }
    let base = units / stages;
    let extra = units % stages;
    // Unit 0 is block 0 (embedding), unit u in 1..=L is layer u-1 (blocks 2u-1, 2u), unit
    // L+1 is the head (block 2L+1).
    let first_block = |u: usize| if u == 0 { 0 } else { 2 * u - 1 };
    let last_block = |u: usize| if u == units - 1 { 2 * l + 1 } else { 2 * u };
    let mut out = Vec::with_capacity(stages);
    let mut next = 0;
    for s in 0..stages {
        let take = base + usize::from(s >= stages - extra);
        out.push((first_block(next), last_block(next + take - 1)));
        next += take;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn balanced_counts_embedding_and_head_as_layers() {
        // 30 layers over 16 stages (the V-shape paper's 9.6B at 2p - 2): 32 units, 2 each.
        let b = default_partition(30, 16, Partition::Balanced).unwrap();
        assert_eq!(b[0], (0, 2)); // embedding + layer 0
        assert_eq!(b[1], (3, 6)); // layers 1, 2
        assert_eq!(b[15], (59, 61)); // layer 29 + head
        // The even split gives the last stage the leftover layers and the head.
        let e = default_partition(30, 16, Partition::Even).unwrap();
        assert_eq!(e[15], (57, 61));
        assert_eq!(e[0], (0, 2));
        // 6 layers over 4 stages: 8 units, 2 each.
        let b = default_partition(6, 4, Partition::Balanced).unwrap();
        assert_eq!(b, vec![(0, 2), (3, 6), (7, 10), (11, 13)]);
        // Every block once, in order.
        for (l, s) in [(96, 8), (10, 4), (5, 7), (3, 5)] {
            let b = default_partition(l, s, Partition::Balanced).unwrap();
            assert_eq!(b.len(), s);
            assert_eq!(b[0].0, 0);
            assert_eq!(b[s - 1].1, 2 * l as usize + 1);
            for w in b.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0);
            }
        }
        // Fewer units than stages: the half-layer even split.
        assert_eq!(
            default_partition(2, 5, Partition::Balanced),
            even_partition(2, 5)
        );
    }
}
