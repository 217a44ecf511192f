//! Generated schedules shared between solves (the sweep solves thousands of configurations
//! whose schedules repeat): a memo from everything a generator reads to the op order it
//! returned. Generators are pure functions of their input, so an answer from the memo is the
//! answer a fresh generation would give, and a solve with a memo returns exactly what it
//! returns without one.
//!
//! The key is the whole [`ScheduleInput`] (durations and transfer time as exact bit
//! patterns), except for the kinds whose order does not read the durations
//! ([`order_ignores_durations`]): for those only the sizes matter, so one V-Half order serves
//! every configuration with the same `p` and `m`. Those are kept for the memo's life; the
//! others are kept up to [`ScheduleMemo::MAX_OPS`] ops in all, the oldest forgotten first.
//! The searched ones (whose generation costs most) are also kept packed, about half a byte an
//! op ([`PackedSchedule`]), up to [`ScheduleMemo::MAX_PACKED_BYTES`]: a schedule forgotten
//! whole is unpacked from there instead of generated again (a sweep asks for the same
//! schedule again long after it was made: GPT-3 175B on 1,024 GPUs generated 311 of its
//! 1,119 ZB-V schedules a second time when only the whole ones were kept).
//! A solve that asks for a schedule another thread is generating waits for that one instead
//! of generating it a second time (the sweep's workers take neighbouring configurations,
//! which often ask for the same schedule at once).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::cancel::Cancel;
use crate::schedule::{self, PackedSchedule, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

/// Whether `kind`'s generator ignores the durations and the transfer time of its input (it
/// still checks them): V-Half and V-Min place ops on unit-time slots, as their source does.
/// A test generates them with unlike durations and compares the orders.
pub(crate) fn order_ignores_durations(kind: ScheduleKind) -> bool {
    matches!(kind, ScheduleKind::VHalf | ScheduleKind::VMin)
}

/// Durations and transfer time a generator can take: finite and non-negative (the generators
/// refuse anything else, so inputs that are not valid skip the memo and get the generator's
/// own error).
fn valid_durations(input: &ScheduleInput) -> bool {
    let ok = |x: &f64| x.is_finite() && *x >= 0.0;
    ok(&input.comm)
        && [&input.f, &input.b, &input.w]
            .iter()
            .all(|g| g.iter().flatten().all(ok))
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    kind: ScheduleKind,
    sizes: [u32; 3],
    options: [Option<u64>; 5],
    /// `comm` then the f, b, w grids row by row with each row's length first; empty for the
    /// kinds whose order ignores them.
    durations: Vec<u64>,
}

impl Key {
    fn of(kind: ScheduleKind, input: &ScheduleInput) -> Key {
        let mut durations = Vec::new();
        if !order_ignores_durations(kind) {
            durations.push(input.comm.to_bits());
            for grid in [&input.f, &input.b, &input.w] {
                durations.push(grid.len() as u64);
                for row in grid {
                    durations.push(row.len() as u64);
                    durations.extend(row.iter().map(|x| x.to_bits()));
                }
            }
        }
        Key {
            kind,
            sizes: [input.p, input.m, input.v],
            options: [
                input.mem_limit.map(f64::to_bits),
                input.group_size.map(u64::from),
                input.offload_chunks.map(u64::from),
                input.offload_cost.map(f64::to_bits),
                input.combined_1f1b.then_some(1),
            ],
            durations,
        }
    }
}

/// A generated schedule (or the generator's error), once it is there: a solve that asks for
/// one another thread is generating waits for it instead of generating it again.
type Cell = Arc<OnceLock<Result<Arc<Schedule>, ScheduleError>>>;

#[derive(Default)]
struct Store {
    map: HashMap<Key, Cell>,
    order: VecDeque<Key>,
    ops: usize,
}

/// The packed schedules, oldest first in `order`, `bytes` in all (keys included).
#[derive(Default)]
struct PackedStore {
    map: HashMap<Key, PackedSchedule>,
    order: VecDeque<(Key, usize)>,
    bytes: usize,
}

/// Whether `kind`'s schedules are kept packed as well: the searched ones, whose generation
/// costs far more than unpacking (a hand-written order is generated about as fast).
fn kept_packed(kind: ScheduleKind) -> bool {
    kind.uses_durations() && !order_ignores_durations(kind)
}

impl Key {
    /// Bytes the key takes (about; for the packed store's budget).
    fn bytes(&self) -> usize {
        std::mem::size_of::<Key>() + 8 * self.durations.len()
    }
}

/// A memo of generated schedules that several solves (and threads) may share.
pub struct ScheduleMemo {
    store: Mutex<Store>,
    packed: Mutex<PackedStore>,
    /// [`Self::MAX_OPS`] and [`Self::MAX_PACKED_BYTES`] (smaller in tests).
    budgets: (usize, usize),
    /// Schedules generated through the memo (asked for and not found), for the tests that
    /// check a configuration generates each of its schedules once.
    generated: AtomicUsize,
}

impl Default for ScheduleMemo {
    fn default() -> Self {
        ScheduleMemo {
            store: Mutex::default(),
            packed: Mutex::default(),
            budgets: (Self::MAX_OPS, Self::MAX_PACKED_BYTES),
            generated: AtomicUsize::default(),
        }
    }
}

impl ScheduleMemo {
    /// Most ops kept over the stored schedules whose order reads the durations (about
    /// 100 MB).
    pub const MAX_OPS: usize = 8_000_000;

    /// Most bytes kept over the packed schedules and their keys (a ZB-V schedule of 64
    /// devices and 768 micro-batches packs into 150 kB).
    pub const MAX_PACKED_BYTES: usize = 48 << 20;

    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `schedule::generate_cancellable(kind, input, cancel)`, from the memo when the same
    /// input was generated before, or is being generated by another thread (then this one
    /// waits for it). A cancelled generation is not kept. The schedule is shared, not
    /// copied: every solve that asks for it reads the memo's one.
    pub(crate) fn generate(
        &self,
        kind: ScheduleKind,
        input: &ScheduleInput,
        cancel: &Cancel,
    ) -> Result<Arc<Schedule>, ScheduleError> {
        if !valid_durations(input) {
            return schedule::generate_cancellable(kind, input, cancel).map(Arc::new);
        }
        let key = Key::of(kind, input);
        let cell: Cell = self.lock().map.entry(key.clone()).or_default().clone();
        let mut made_here = false;
        let mut stored_here = false;
        let found = cell
            .get_or_init(|| {
                stored_here = true;
                if let Some(sched) = self.unpacked(&key) {
                    return Ok(Arc::new(sched));
                }
                made_here = true;
                self.generated.fetch_add(1, Ordering::Relaxed);
                schedule::generate_cancellable(kind, input, cancel).map(Arc::new)
            })
            .clone();
        if matches!(found, Err(ScheduleError::Cancelled(_))) {
            // Not kept; a solve whose own token is not set generates it itself.
            let mut store = self.lock();
            if store.map.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                store.map.remove(&key);
            }
            drop(store);
            if made_here || cancel.is_cancelled() {
                return found;
            }
            return schedule::generate_cancellable(kind, input, cancel).map(Arc::new);
        }
        if made_here
            && kept_packed(kind)
            && let Ok(sched) = &found
        {
            self.pack(key.clone(), sched);
        }
        if stored_here {
            self.account(key, &cell, &found, kind);
        }
        found
    }

    /// The schedule kept packed under `key`, unpacked.
    fn unpacked(&self, key: &Key) -> Option<Schedule> {
        let store = self.packed.lock().unwrap_or_else(PoisonError::into_inner);
        store.map.get(key).map(PackedSchedule::unpack)
    }

    /// Keeps `sched` packed under `key`, forgetting the oldest packed schedules beyond
    /// [`Self::MAX_PACKED_BYTES`].
    fn pack(&self, key: Key, sched: &Schedule) {
        let packed = PackedSchedule::of(sched);
        let bytes = packed.bytes() + key.bytes();
        let max_bytes = self.budgets.1;
        if bytes > max_bytes / 4 {
            return;
        }
        let mut store = self.packed.lock().unwrap_or_else(PoisonError::into_inner);
        while store.bytes + bytes > max_bytes {
            let Some((old, n)) = store.order.pop_front() else {
                break;
            };
            store.map.remove(&old);
            store.bytes = store.bytes.saturating_sub(n);
        }
        if store.map.insert(key.clone(), packed).is_none() {
            store.bytes += bytes;
            store.order.push_back((key, bytes));
        }
    }

    /// How many schedules the memo has generated (asked for and not found) so far.
    #[cfg(test)]
    pub(crate) fn generated(&self) -> usize {
        self.generated.load(Ordering::Relaxed)
    }

    /// Counts a schedule just stored (generated or unpacked) into the memo's budget of ops, forgetting the oldest
    /// (orders that ignore the durations are few, one per kind, p and m, and asked for again
    /// and again: they are never forgotten; a schedule too large is not kept).
    fn account(
        &self,
        key: Key,
        cell: &Cell,
        made: &Result<Arc<Schedule>, ScheduleError>,
        kind: ScheduleKind,
    ) {
        if order_ignores_durations(kind) {
            return;
        }
        let ops = made.as_ref().map_or(0, |s| s.op_count()).max(1);
        let mut store = self.lock();
        let max_ops = self.budgets.0;
        if ops > max_ops / 4 {
            if store.map.get(&key).is_some_and(|c| Arc::ptr_eq(c, cell)) {
                store.map.remove(&key);
            }
            return;
        }
        while store.ops + ops > max_ops {
            let Some(old) = store.order.pop_front() else {
                break;
            };
            if let Some(gone) = store.map.remove(&old) {
                let n = gone
                    .get()
                    .map_or(0, |r| r.as_ref().map_or(0, |s| s.op_count()));
                store.ops = store.ops.saturating_sub(n.max(1));
            }
        }
        store.ops += ops;
        store.order.push_back(key);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn input(p: u32, m: u32, scale: f64) -> ScheduleInput {
        let mut i = ScheduleInput::uniform(p, m, 2, 1.0, 2.0, 1.0, 0.1);
        // Unlike durations per device and chunk.
        for (d, row) in i.f.iter_mut().enumerate() {
            for (c, x) in row.iter_mut().enumerate() {
                *x = scale * (1.0 + d as f64 * 0.37 + c as f64 * 1.3);
            }
        }
        for (d, row) in i.w.iter_mut().enumerate() {
            row[0] = scale * (0.2 + d as f64);
        }
        i.comm = scale * 0.05;
        i
    }

    /// A memo keeping `max_ops` whole and `max_packed_bytes` packed.
    fn small(max_ops: usize, max_packed_bytes: usize) -> ScheduleMemo {
        ScheduleMemo {
            budgets: (max_ops, max_packed_bytes),
            ..ScheduleMemo::default()
        }
    }

    /// A ZB-V schedule forgotten whole is unpacked, not generated again, and is what the
    /// generator returns; once forgotten packed too, it is generated again. Hand-written
    /// kinds are not kept packed.
    #[test]
    fn a_schedule_forgotten_whole_comes_back_unpacked() {
        let zbv = |scale| input(4, 8, scale);
        let ops = schedule::generate(ScheduleKind::ZbV, &zbv(1.0))
            .unwrap()
            .op_count();
        // Room for four schedules whole (then the oldest is forgotten), plenty packed.
        let memo = small(4 * ops, 1 << 20);
        let never = Cancel::never();
        let scales = [1.0, 2.0, 3.0, 4.0, 5.0];
        for round in 0..3 {
            for scale in scales {
                let got = memo.generate(ScheduleKind::ZbV, &zbv(scale), &never);
                let want = schedule::generate(ScheduleKind::ZbV, &zbv(scale)).map(Arc::new);
                assert_eq!(got, want, "round {round} scale {scale}");
            }
        }
        assert_eq!(memo.generated(), 5);
        // Hand-written orders (a quarter of ZB-V's ops here) are not kept packed.
        for _ in 0..2 {
            for scale in 1..=20 {
                memo.generate(ScheduleKind::OneFOneB, &zbv(f64::from(scale)), &never)
                    .unwrap();
            }
        }
        assert_eq!(memo.generated(), 45);
        // Room for nothing packed: a forgotten schedule is generated again.
        let memo = small(4 * ops, 0);
        for _ in 0..2 {
            for scale in scales {
                memo.generate(ScheduleKind::ZbV, &zbv(scale), &never)
                    .unwrap();
            }
        }
        assert_eq!(memo.generated(), 10);
    }

    /// The claim the memo's key rests on: V-Half's and V-Min's orders do not change with the
    /// durations or the transfer time.
    #[test]
    fn the_v_greedy_orders_ignore_the_durations() {
        for kind in [ScheduleKind::VHalf, ScheduleKind::VMin] {
            assert!(order_ignores_durations(kind));
            for (p, m) in [(2, 3), (4, 8), (6, 13), (8, 24)] {
                let a = schedule::generate(kind, &input(p, m, 1.0)).unwrap();
                let b = schedule::generate(kind, &input(p, m, 7.3)).unwrap();
                let c =
                    schedule::generate(kind, &ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0))
                        .unwrap();
                assert_eq!(a, b, "{kind} p {p} m {m}");
                assert_eq!(a, c, "{kind} p {p} m {m}");
            }
        }
    }

    /// Threads asking for the same schedules at once all get the generator's answer.
    #[test]
    fn threads_sharing_the_memo_get_what_the_generator_returns() {
        let memo = ScheduleMemo::default();
        let kinds = [
            ScheduleKind::ZbV,
            ScheduleKind::VHalf,
            ScheduleKind::OneFOneB,
        ];
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    for kind in kinds {
                        for scale in [1.0, 3.0] {
                            let i = input(6, 12, scale);
                            assert_eq!(
                                memo.generate(kind, &i, &Cancel::never()),
                                schedule::generate(kind, &i).map(Arc::new),
                                "{kind}"
                            );
                        }
                    }
                });
            }
        });
    }

    #[test]
    fn the_memo_returns_what_the_generator_returns() {
        let memo = ScheduleMemo::default();
        for kind in [
            ScheduleKind::OneFOneB,
            ScheduleKind::ZbV,
            ScheduleKind::VHalf,
            ScheduleKind::Interleaved,
        ] {
            for scale in [1.0, 2.0, 1.0] {
                let i = input(4, 8, scale);
                assert_eq!(
                    memo.generate(kind, &i, &Cancel::never()),
                    schedule::generate(kind, &i).map(Arc::new),
                    "{kind}"
                );
            }
        }
        // Errors are remembered as errors, and invalid durations still get the generator's.
        let mut bad = input(4, 8, 1.0);
        bad.f[0][0] = f64::NAN;
        assert!(
            memo.generate(ScheduleKind::VHalf, &bad, &Cancel::never())
                .is_err()
        );
        let odd = input(4, 6, 1.0);
        assert_eq!(
            memo.generate(ScheduleKind::Interleaved, &odd, &Cancel::never()),
            schedule::generate(ScheduleKind::Interleaved, &odd).map(Arc::new)
        );
    }
}
