//! Megatron-LM's recomputation flags for a plan: the setting that recomputes no unit the
//! plan keeps (or compresses, or offloads) and, among those, the one that drops the most
//! bytes; and, per device, what the plan recomputes that the setting keeps.
//!
//! Megatron recomputes the same way on every layer (`selective` with modules), or whole
//! layers (`full`): every layer (`uniform`, one layer per group) or the first `n` layers of
//! every virtual stage (`block`). The plan decides per device, per block and per unit, so
//! a module or a layer count is chosen only where the plan recomputes all it covers.

use std::collections::{BTreeMap, HashMap};

use crate::anatomy::megatron_modules::{RecomputeModule, full_layer_recomputes};
use crate::anatomy::{Anatomy, BlockKind};
use crate::outcome::Outcome;
use crate::plan::Decision;

use super::args::Group;
use super::layout::layers_of;

/// A recomputation setting Megatron-LM can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recompute {
    /// Nothing is recomputed.
    Off,
    /// `--recompute-granularity selective --recompute-modules ...` on every layer.
    Selective(Vec<RecomputeModule>),
    /// `--recompute-granularity full --recompute-method uniform --recompute-num-layers 1`:
    /// every layer from its input.
    FullUniform,
    /// `--recompute-granularity full --recompute-method block --recompute-num-layers n`:
    /// the first `n` layers of every virtual stage from their inputs.
    FullBlock(u32),
}

impl Recompute {
    /// The setting as arguments.
    pub fn group(&self) -> Group {
        let mut g = Group::new("RECOMPUTE_ARGS");
        match self {
            Recompute::Off => {}
            Recompute::Selective(modules) => {
                g.value("--recompute-granularity", "selective");
                g.values("--recompute-modules", modules.iter().map(|m| m.name()));
            }
            Recompute::FullUniform => {
                g.value("--recompute-granularity", "full");
                g.value("--recompute-method", "uniform");
                g.value("--recompute-num-layers", 1);
            }
            Recompute::FullBlock(n) => {
                g.value("--recompute-granularity", "full");
                g.value("--recompute-method", "block");
                g.value("--recompute-num-layers", n);
            }
        }
        g
    }
}

/// The chosen setting and what it leaves kept that the plan recomputes.
#[derive(Debug, Clone, PartialEq)]
pub struct RecomputePlan {
    /// The setting.
    pub setting: Recompute,
    /// Per device: the units (`kind.unit`) the plan recomputes that the setting keeps, with
    /// the number of blocks, and their bytes per micro-batch in all.
    pub kept_extra: Vec<(u32, BTreeMap<String, u32>, u64)>,
}

/// Whether each unit of each block is recomputed by the plan: every copy of the block
/// (Chimera holds two) recomputes it.
fn plan_recomputes(outcome: &Outcome) -> HashMap<usize, Vec<bool>> {
    let mut out: HashMap<usize, Vec<bool>> = HashMap::new();
    for st in &outcome.stages {
        for b in &st.blocks {
            let mine = b.decisions.iter().map(|d| *d == Decision::Recompute);
            match out.get_mut(&b.block) {
                Some(all) => all.iter_mut().zip(mine).for_each(|(a, m)| *a &= m),
                None => {
                    out.insert(b.block, mine.collect());
                }
            }
        }
    }
    out
}

/// What a setting recomputes, block by block.
struct Covered<'a> {
    anatomy: &'a Anatomy,
    setting: &'a Recompute,
    /// Layers recomputed whole (`full`).
    full_layers: Vec<bool>,
}

impl<'a> Covered<'a> {
    fn new(anatomy: &'a Anatomy, setting: &'a Recompute, chain: &[[usize; 2]]) -> Self {
        let layers = anatomy.layers;
        let mut full_layers = vec![false; layers as usize];
        for &range in chain {
            let take = match setting {
                Recompute::FullUniform => u32::MAX,
                Recompute::FullBlock(n) => *n,
                _ => 0,
            };
            for l in layers_of(range, layers).take(take as usize) {
                full_layers[l as usize] = true;
            }
        }
        Self {
            anatomy,
            setting,
            full_layers,
        }
    }

    /// Whether the setting recomputes unit `u` of block `b`.
    fn recomputes(&self, b: usize, u: usize) -> bool {
        let kind = self.anatomy.kind_of(b);
        let Some(unit) = self.anatomy.block_of(kind).units.get(u) else {
            return false;
        };
        match self.setting {
            Recompute::Off => false,
            Recompute::Selective(modules) => modules.iter().any(|m| m.recomputes(kind, unit)),
            Recompute::FullUniform | Recompute::FullBlock(_) => {
                let layer = match kind {
                    BlockKind::Attention | BlockKind::Mlp | BlockKind::Moe | BlockKind::Mtp => {
                        (b - 1) / 2
                    }
                    BlockKind::Embedding | BlockKind::Head => return false,
                };
                self.full_layers.get(layer).copied().unwrap_or(false)
                    && full_layer_recomputes(kind, unit)
            }
        }
    }

    /// Whether the plan recomputes everything the setting does, and the bytes per
    /// micro-batch the setting drops.
    fn check(&self, plan: &HashMap<usize, Vec<bool>>) -> (bool, u64) {
        let mut bytes = 0;
        for b in 1..self.anatomy.num_blocks() - 1 {
            let units = &self.anatomy.block(b).units;
            for (u, unit) in units.iter().enumerate() {
                if !self.recomputes(b, u) {
                    continue;
                }
                if !plan
                    .get(&b)
                    .and_then(|p| p.get(u))
                    .copied()
                    .unwrap_or(false)
                {
                    return (false, 0);
                }
                bytes += unit.size_bytes;
            }
        }
        (true, bytes)
    }
}

/// The leading layers of each chain stage that the plan recomputes whole, and whether that
/// is all of them on every stage.
fn whole_layers(
    anatomy: &Anatomy,
    chain: &[[usize; 2]],
    plan: &HashMap<usize, Vec<bool>>,
) -> (u32, bool) {
    let whole = |b: usize| {
        let kind = anatomy.kind_of(b);
        let decided = plan.get(&b);
        anatomy
            .block_of(kind)
            .units
            .iter()
            .enumerate()
            .all(|(u, unit)| {
                !full_layer_recomputes(kind, unit)
                    || decided.and_then(|d| d.get(u)).copied().unwrap_or(false)
            })
    };
    let mut least = u32::MAX;
    let mut all = true;
    for &range in chain {
        let layers = layers_of(range, anatomy.layers);
        if layers.is_empty() {
            continue;
        }
        let total = layers.len() as u32;
        let leading = layers
            .take_while(|&l| whole(2 * l as usize + 1) && whole(2 * l as usize + 2))
            .count() as u32;
        least = least.min(leading);
        all &= leading == total;
    }
    if least == u32::MAX {
        (0, false)
    } else {
        (least, all)
    }
}

/// The setting for `outcome`, whose chain stages are `chain` (see `layout::chain_ranges`).
pub fn choose(anatomy: &Anatomy, outcome: &Outcome, chain: &[[usize; 2]]) -> RecomputePlan {
    let plan = plan_recomputes(outcome);
    let mut candidates = Vec::new();
    let modules: Vec<RecomputeModule> = RecomputeModule::ALL
        .iter()
        .copied()
        .filter(|&m| {
            let one = Recompute::Selective(vec![m]);
            let (ok, bytes) = Covered::new(anatomy, &one, chain).check(&plan);
            ok && bytes > 0
        })
        .collect();
    if !modules.is_empty() {
        candidates.push(Recompute::Selective(modules));
    }
    match whole_layers(anatomy, chain, &plan) {
        (_, true) => candidates.push(Recompute::FullUniform),
        (n, false) if n > 0 => candidates.push(Recompute::FullBlock(n)),
        _ => {}
    }
    // The most bytes dropped wins; on a tie, the first (selective recomputes less).
    let mut setting = Recompute::Off;
    let mut best = 0;
    for c in candidates {
        let (ok, bytes) = Covered::new(anatomy, &c, chain).check(&plan);
        if ok && bytes > best {
            best = bytes;
            setting = c;
        }
    }
    let covered = Covered::new(anatomy, &setting, chain);
    let kept_extra = outcome
        .stages
        .iter()
        .map(|st| {
            let mut units: BTreeMap<String, u32> = BTreeMap::new();
            let mut bytes = 0;
            for b in &st.blocks {
                let block = anatomy.block_of(b.kind);
                for (u, (d, unit)) in b.decisions.iter().zip(&block.units).enumerate() {
                    if *d == Decision::Recompute && !covered.recomputes(b.block, u) {
                        *units
                            .entry(format!("{}.{}", b.kind.name(), unit.name))
                            .or_default() += 1;
                        bytes += unit.size_bytes;
                    }
                }
            }
            (st.stage, units, bytes)
        })
        .collect();
    RecomputePlan {
        setting,
        kept_extra,
    }
}
