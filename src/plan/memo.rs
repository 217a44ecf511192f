//! A memo of per-stage knapsack solves, kept for the length of one plan request (one
//! `solve()`): the partition DP's re-runs (in-flight bumps, offload scales) and the greedy
//! offload orders ask the same stage questions many times, and each answer depends only on
//! the key below, so a repeated question returns the stored answer (identical, not
//! approximated). Nothing is kept between solves.

use std::cell::{RefCell, RefMut};
use std::collections::HashMap;
use std::fmt;

use super::knapsack::Scratch;
use super::stage::{BlockCounts, KnapsackPlan, StageEnv};

/// Everything a stage knapsack solve depends on besides the anatomy (fixed per request):
/// block counts, in-flight count, budget, logits flag, compression allowed, and the copies
/// pre-assigned to the host per unit kind.
type Key = (BlockCounts, u32, u64, bool, bool, Vec<u32>);

/// Stored answers: whether the decisions were built, and the answer; and the knapsack's
/// spare table buffers, reused by the request's solves (they hold no answer).
#[derive(Default)]
pub struct KnapsackCache {
    map: RefCell<HashMap<Key, (bool, Option<KnapsackPlan>)>>,
    scratch: RefCell<Scratch>,
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
    #[cfg(test)]
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
        write!(f, "KnapsackCache({} entries)", self.map.borrow().len())
    }
}
