//! The model chain's stages as Megatron-LM lays them out: which blocks each virtual stage
//! holds, in Megatron's order, and `--pipeline-model-parallel-layout`'s string for them.
//!
//! Blocks (the anatomy's chain): 0 the embedding, `2l + 1` the attention and `2l + 2` the
//! MLP of layer `l`, `2L + 1` the head. A layer belongs to the stage that holds its
//! attention block.

use std::fmt::Write;

use crate::outcome::Outcome;
use crate::schedule::Placement;

/// One stage of the model chain: embedding, transformer layers, head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageLayers {
    /// Holds the embedding.
    pub embedding: bool,
    /// Transformer layers (counted where their attention block is).
    pub layers: u32,
    /// Multi-token-prediction layers (Megatron's `m`), after the transformer layers.
    pub mtp: u32,
    /// Holds the head (final norm, output layer, loss).
    pub head: bool,
}

/// The block ranges of every stage of the model chain, in chain order, from an outcome's
/// per-device ranges and the schedule's placement (`[first, last]`, inclusive).
pub fn chain_ranges(outcome: &Outcome) -> Vec<[usize; 2]> {
    let placement = outcome.schedule.placement();
    let p = outcome.stages.len() as u32;
    let mut chain: Vec<(u32, [usize; 2])> = Vec::new();
    for st in &outcome.stages {
        for (c, &range) in st.ranges.iter().enumerate() {
            let c = c as u32;
            let stage = match placement {
                Placement::Single => st.stage,
                Placement::Looped => c * p + st.stage,
                Placement::VShape if c == 0 => st.stage,
                Placement::VShape => 2 * p - 1 - st.stage,
                // Chimera replicates: chunk 0 of device d is stage d of the chain.
                Placement::Chimera if c == 0 => st.stage,
                Placement::Chimera => continue,
            };
            chain.push((stage, range));
        }
    }
    chain.sort_by_key(|&(s, _)| s);
    chain.into_iter().map(|(_, r)| r).collect()
}

/// The layers (by index) of the chain stage `[first, last]` of a model of `layers` layers:
/// those whose attention block it holds.
pub fn layers_of(range: [usize; 2], layers: u32) -> std::ops::Range<u32> {
    let [first, last] = range;
    let head = 2 * layers as usize + 1;
    // Layer l's attention block is 2l + 1: the first odd block at or after `first`, and
    // the last one at or before `last` (below the head).
    let start = first / 2;
    let end = last.min(head - 1).div_ceil(2);
    (start.min(layers as usize) as u32)..(end.min(layers as usize).max(start) as u32)
}

/// What each chain stage holds, for a chain of `layers` transformer layers of which the
/// first `main_layers` are the model's and the rest its multi-token-prediction layers.
pub fn stage_layers(ranges: &[[usize; 2]], main_layers: u32, layers: u32) -> Vec<StageLayers> {
    let head = 2 * layers as usize + 1;
    ranges
        .iter()
        .map(|&range| {
            let all = layers_of(range, layers);
            let main = all.clone().filter(|&l| l < main_layers).count() as u32;
            StageLayers {
                embedding: range[0] == 0,
                layers: main,
                mtp: all.len() as u32 - main,
                head: range[1] >= head,
            }
        })
        .collect()
}

/// Megatron's layout string for `stages`: `E` and `L` where they are, `t*k` for k layers,
/// `m` for each multi-token-prediction layer, runs of equal stages (not the last) as
/// `(X|)*n`.
pub fn layout(stages: &[StageLayers]) -> String {
    let one = |s: &StageLayers| {
        let mut x = String::new();
        if s.embedding {
            x.push('E');
        }
        match s.layers {
            0 => {}
            1 => x.push('t'),
            k => {
                let _ = write!(x, "t*{k}");
            }
        }
        for _ in 0..s.mtp {
            x.push('m');
        }
        if s.head {
            x.push('L');
        }
        x
    };
    let texts: Vec<String> = stages.iter().map(one).collect();
    let mut out = String::new();
    let last = texts.len().saturating_sub(1);
    let mut i = 0;
    while i < texts.len() {
        let mut n = 1;
        while i + n < last && texts[i + n] == texts[i] {
            n += 1;
        }
        if i == last {
            out.push_str(&texts[i]);
        } else if n >= 2 {
            let _ = write!(out, "({}|)*{n}", texts[i]);
        } else {
            out.push_str(&texts[i]);
            out.push('|');
        }
        i += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layers of a range, counted the slow way: odd blocks below the head.
    fn slow(range: [usize; 2], layers: u32) -> Vec<u32> {
        (range[0]..=range[1])
            .filter(|b| b % 2 == 1 && *b < 2 * layers as usize + 1)
            .map(|b| (b / 2) as u32)
            .collect()
    }

    /// Runs of equal stages (not the last) fold into `(X|)*n`, layers repeat as `t*k`, `E`
    /// opens and `L` closes the chain.
    #[test]
    fn the_layout_string_folds_runs() {
        let st = |e, n, l| StageLayers {
            embedding: e,
            layers: n,
            mtp: 0,
            head: l,
        };
        let stages = vec![
            st(true, 3, false),
            st(false, 4, false),
            st(false, 4, false),
            st(false, 4, false),
            st(false, 1, false),
            st(false, 0, true),
        ];
        assert_eq!(layout(&stages), "Et*3|(t*4|)*3t|L");
    }

    #[test]
    fn layers_of_every_range_match_the_attention_blocks() {
        for layers in 1..5u32 {
            let blocks = 2 * layers as usize + 2;
            for first in 0..blocks {
                for last in first..blocks {
                    let got: Vec<u32> = layers_of([first, last], layers).collect();
                    assert_eq!(
                        got,
                        slow([first, last], layers),
                        "{first}..={last} of {layers}"
                    );
                }
            }
        }
    }
}
