//! A memo of per-stage knapsack solves. Within one plan request (one `solve()`) the partition
//! DP's re-runs (in-flight bumps, offload scales) and the greedy offload orders ask the same
//! stage questions many times; across the solves of a sweep, configurations of one layout
//! (other schedules, strategies or chunk counts) ask some of the same ones again. Each
//! answer depends only on its question (the key below) and on the anatomy fields the
//! knapsack reads ([`KnapsackAnatomy`]), so a repeated question returns the stored answer
//! (identical, not approximated).
//!
//! A [`KnapsackCache`] starts empty for a lone request; a [`KnapsackShelf`] (one per sweep,
//! shared by its workers, or one for all the sweeps of the TUI's sweep cache) hands every solve the cache of answers earlier solves on the same
//! knapsack anatomy stored, and the knapsack's spare buffers of a solve that ended.

use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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

/// Answers that several solves (on several threads) may read and add to.
type SharedAnswers = Arc<Mutex<Answers>>;

/// Spare knapsack buffers a shelf keeps between solves.
type SpareScratch = Arc<Mutex<Vec<Scratch>>>;

/// The lock of a shared value (a panic elsewhere leaves only whole answers behind).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Stored answers, possibly shared with a [`KnapsackShelf`] that outlives the request, and
/// the knapsack's spare table buffers (which hold no answer), handed back to the shelf they
/// came from when the cache is dropped.
#[derive(Default)]
pub struct KnapsackCache {
    map: SharedAnswers,
    scratch: RefCell<Scratch>,
    spare: Option<SpareScratch>,
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
        let map = lock(&self.map);
        let (full, v) = map.get(&Self::key(counts, env, compress, offload))?;
        (*full || !want_decisions).then(|| v.clone())
    }

    /// How many answers are stored (each one an exact solve made).
    pub(crate) fn len(&self) -> usize {
        lock(&self.map).len()
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
        let mut map = lock(&self.map);
        let key = Self::key(counts, env, compress, offload);
        if map.get(&key).is_none_or(|(f, _)| full && !*f) {
            map.insert(key, (full, v.clone()));
        }
    }
}

/// The spare buffers go back to the shelf, for the next request.
impl Drop for KnapsackCache {
    fn drop(&mut self) {
        if let Some(spare) = &self.spare {
            lock(spare).push(std::mem::take(self.scratch.get_mut()));
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

/// Knapsack answers kept across the solves of a sweep, shared by its worker threads: one
/// store per [`KnapsackAnatomy`], and the spare table buffers of the solves that ended. Lent
/// to each solve ([`crate::SolveOptions`]), it makes no answer differ from that of a solve
/// with an empty cache.
pub struct KnapsackShelf {
    /// Per print: when it was last asked for (a count of requests), and its answers.
    stores: Mutex<HashMap<KnapsackAnatomy, (u64, SharedAnswers)>>,
    /// Requests so far.
    ticks: AtomicU64,
    spare: SpareScratch,
    /// Answers past which it lets go of the stores asked for longest ago.
    max_answers: usize,
}

impl Default for KnapsackShelf {
    fn default() -> Self {
        KnapsackShelf::with_max_answers(SHELF_MAX_ANSWERS)
    }
}

/// Answers past which the shelf lets go of the stores asked for longest ago (a few hundred
/// bytes each; letting go costs only solves made again).
const SHELF_MAX_ANSWERS: usize = 1 << 18;

impl KnapsackShelf {
    /// An empty shelf that keeps about `max_answers` answers at most (past them it lets go
    /// of the stores asked for longest ago, down to half).
    pub fn with_max_answers(max_answers: usize) -> Self {
        KnapsackShelf {
            stores: Mutex::default(),
            ticks: AtomicU64::new(0),
            spare: SpareScratch::default(),
            max_answers,
        }
    }

    /// The cache for a request planned on `anatomy`: the answers stored by earlier requests
    /// on an anatomy with the same print (what this one stores stays for the next), and the
    /// spare buffers of one that ended.
    pub fn cache_for(&self, anatomy: &Anatomy) -> KnapsackCache {
        let print = KnapsackAnatomy::of(anatomy);
        let tick = self.ticks.fetch_add(1, Ordering::Relaxed);
        let mut stores = lock(&self.stores);
        let total: usize = stores.values().map(|(_, m)| lock(m).len()).sum();
        if total > self.max_answers {
            let_go(&mut stores, (total, self.max_answers / 2), &print);
        }
        let entry = stores.entry(print).or_default();
        entry.0 = tick;
        let map = Arc::clone(&entry.1);
        drop(stores);
        let scratch = lock(&self.spare).pop().unwrap_or_default();
        KnapsackCache {
            map,
            scratch: RefCell::new(scratch),
            spare: Some(Arc::clone(&self.spare)),
        }
    }

    /// How many distinct anatomy prints hold answers.
    pub fn anatomies(&self) -> usize {
        lock(&self.stores).len()
    }

    /// How many answers are stored, all anatomies together.
    pub fn answers(&self) -> usize {
        lock(&self.stores)
            .values()
            .map(|(_, m)| lock(m).len())
            .sum()
    }
}

/// Lets go of the stores asked for longest ago (never `keep`'s) until at most `left`
/// answers are left; `total` is how many it holds.
fn let_go(
    stores: &mut HashMap<KnapsackAnatomy, (u64, SharedAnswers)>,
    (mut total, left): (usize, usize),
    keep: &KnapsackAnatomy,
) {
    let mut by_age: Vec<(u64, usize, KnapsackAnatomy)> = stores
        .iter()
        .filter(|(p, _)| *p != keep)
        .map(|(p, (last, m))| (*last, lock(m).len(), p.clone()))
        .collect();
    by_age.sort_by_key(|s| s.0);
    for (_, n, p) in by_age {
        if total <= left {
            break;
        }
        stores.remove(&p);
        total -= n;
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
