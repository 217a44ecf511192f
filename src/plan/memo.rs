//! A memo of per-stage knapsack solves. Within one plan request (one `solve()`) the partition
//! DP's re-runs (in-flight bumps, offload scales) and the greedy offload orders ask the same
//! stage questions many times; across the solves of a sweep, configurations of one layout
//! (other schedules, strategies or chunk counts) ask many of the same ones again. Each answer
//! depends only on its question (the key below) and on the anatomy fields the knapsack reads
//! ([`KnapsackAnatomy`]), so a repeated question returns the stored answer (identical, not
//! approximated).
//!
//! A [`KnapsackCache`] starts empty for a lone request; a [`KnapsackShelf`] (one per sweep
//! worker thread) hands every solve the cache of answers earlier solves on the same
//! knapsack anatomy stored.

use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::knapsack::Scratch;
use super::stage::{BlockCounts, KnapsackPlan, StageEnv};
use crate::anatomy::{Anatomy, Block, BlockKind};

/// Everything a stage knapsack solve depends on besides the anatomy: block counts, in-flight
/// count, budget, logits flag, compression allowed, and the copies pre-assigned to the host
/// per unit kind. (The offload capacity and the strategy only choose which questions are
/// asked: the exact solve of one question reads neither.)
type Key = (BlockCounts, u32, u64, bool, bool, Vec<u32>);

/// Stored answers: whether the decisions were built, and the answer.
type Answers = HashMap<Key, (bool, Option<KnapsackPlan>)>;

/// Stored answers and the knapsack's spare table buffers (which hold no answer), both
/// possibly shared with a [`KnapsackShelf`] that outlives the request.
#[derive(Default)]
pub struct KnapsackCache {
    map: Rc<RefCell<Answers>>,
    scratch: Rc<RefCell<Scratch>>,
}

impl KnapsackCache {
    fn key(counts: BlockCounts, env: &StageEnv, compress: bool, offload: &[u32]) -> Key {
        (
            counts,
            env.in_flight,
            env.budget_bytes,
            env.logits,
            compress,
            offload.to_vec(),
        )
    }

    /// The knapsack's spare buffers, for one solve at a time.
    pub(crate) fn scratch(&self) -> RefMut<'_, Scratch> {
        self.scratch.borrow_mut()
    }

    /// The stored answer, when there is one with decisions if `want_decisions`.
    pub(crate) fn get(
        &self,
        counts: BlockCounts,
        env: &StageEnv,
        compress: bool,
        offload: &[u32],
        want_decisions: bool,
    ) -> Option<Option<KnapsackPlan>> {
        let map = self.map.borrow();
        let (full, v) = map.get(&Self::key(counts, env, compress, offload))?;
        (*full || !want_decisions).then(|| v.clone())
    }

    /// How many answers are stored (each one an exact solve made).
    pub(crate) fn len(&self) -> usize {
        self.map.borrow().len()
    }

    /// Stores an answer (`full`: its decisions were built).
    pub(crate) fn put(
        &self,
        counts: BlockCounts,
        env: &StageEnv,
        compress: bool,
        offload: &[u32],
        full: bool,
        v: &Option<KnapsackPlan>,
    ) {
        let mut map = self.map.borrow_mut();
        let key = Self::key(counts, env, compress, offload);
        if map.get(&key).is_none_or(|(f, _)| full && !*f) {
            map.insert(key, (full, v.clone()));
        }
    }
}

/// A copy starts empty: the memo is a cache, not part of the request's meaning.
impl Clone for KnapsackCache {
    fn clone(&self) -> Self {
        KnapsackCache::default()
    }
}

/// Caches never make two requests differ.
impl PartialEq for KnapsackCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for KnapsackCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KnapsackCache({} entries)", self.len())
    }
}

/// What a block contributes to a stage knapsack: its static bytes, its forward (a layer
/// recomputed whole runs it), and per unit the size, whether it is forced, its forward and
/// its codecs (compressed bytes and codec time each), every f64 as its bits.
type BlockPrint = (u64, u64, Vec<(u64, bool, u64, Vec<Option<(u64, u64)>>)>);

/// Every anatomy field a stage knapsack solve reads, exactly (f64s by their bits): two
/// anatomies with equal prints give every knapsack question the same answer. The planning
/// variants of one layout differ in fields outside it (a split backward exposes backward
/// collectives) or inside it (the all-to-all overlap shortens the MoE forward), so the
/// first share their answers and the second do not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KnapsackAnatomy {
    /// Layer counts (not read by a solve today; kept so that a print never spans models).
    layers: (u32, u32, u32),
    /// Bytes every device holds and the last stage's logits transient.
    fixed: (u64, u64),
    /// Per block kind, in [`BlockKind::ALL`]'s order.
    blocks: Vec<BlockPrint>,
}

impl KnapsackAnatomy {
    /// The print of `anatomy`.
    pub fn of(anatomy: &Anatomy) -> Self {
        let block = |b: &Block| -> BlockPrint {
            let units = b
                .units
                .iter()
                .map(|u| {
                    let codecs = u
                        .codecs
                        .iter()
                        .map(|c| c.map(|c| (c.compressed_bytes, c.codec_s.to_bits())))
                        .collect();
                    (u.size_bytes, u.forced, u.forward_s.to_bits(), codecs)
                })
                .collect();
            (b.static_bytes, b.forward_s.to_bits(), units)
        };
        KnapsackAnatomy {
            layers: (anatomy.layers, anatomy.main_layers, anatomy.dense_layers),
            fixed: (anatomy.device_bytes, anatomy.logits_transient_bytes),
            blocks: BlockKind::ALL
                .iter()
                .map(|&k| block(anatomy.block_of(k)))
                .collect(),
        }
    }
}

/// Knapsack answers kept across solves, for one thread (the caches are not `Sync`): one
/// store per [`KnapsackAnatomy`], and one set of spare table buffers for them all. A sweep
/// worker keeps one and lends it to each solve it makes ([`crate::SolveOptions`]); a
/// solve's answers are then those of a solve with an empty cache.
#[derive(Default)]
pub struct KnapsackShelf {
    stores: RefCell<HashMap<KnapsackAnatomy, Rc<RefCell<Answers>>>>,
    scratch: Rc<RefCell<Scratch>>,
}

/// At most this many answers are kept on a shelf (a few hundred bytes each): past it the
/// shelf starts over empty, which costs only solves made again.
const SHELF_MAX_ANSWERS: usize = 1 << 20;

impl KnapsackShelf {
    /// The cache for a request planned on `anatomy`: the answers stored by earlier requests
    /// on an anatomy with the same print, and what this one stores stays for the next.
    pub fn cache_for(&self, anatomy: &Anatomy) -> KnapsackCache {
        let mut stores = self.stores.borrow_mut();
        if stores.values().map(|m| m.borrow().len()).sum::<usize>() > SHELF_MAX_ANSWERS {
            stores.clear();
        }
        let map = stores
            .entry(KnapsackAnatomy::of(anatomy))
            .or_default()
            .clone();
        KnapsackCache {
            map,
            scratch: Rc::clone(&self.scratch),
        }
    }

    /// How many distinct anatomy prints hold answers.
    pub fn anatomies(&self) -> usize {
        self.stores.borrow().len()
    }

    /// How many answers are stored, all anatomies together.
    pub fn answers(&self) -> usize {
        self.stores
            .borrow()
            .values()
            .map(|m| m.borrow().len())
            .sum()
    }
}

impl fmt::Debug for KnapsackShelf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KnapsackShelf({} anatomies, {} answers)",
            self.anatomies(),
            self.answers()
        )
    }
}

#[cfg(test)]
#[path = "memo_tests.rs"]
mod tests;
