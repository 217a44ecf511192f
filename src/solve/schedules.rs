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

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use crate::cancel::Cancel;
use crate::schedule::{self, Schedule, ScheduleError, ScheduleInput, ScheduleKind};

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
    options: [Option<u64>; 4],
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
            ],
            durations,
        }
    }
}

#[derive(Default)]
struct Store {
    map: HashMap<Key, Arc<Result<Schedule, ScheduleError>>>,
    order: VecDeque<Key>,
    ops: usize,
}

/// A memo of generated schedules that several solves (and threads) may share.
#[derive(Default)]
pub struct ScheduleMemo {
    store: Mutex<Store>,
}

impl ScheduleMemo {
    /// Most ops kept over the stored schedules whose order reads the durations (about
    /// 100 MB).
    pub const MAX_OPS: usize = 8_000_000;

    /// `schedule::generate_cancellable(kind, input, cancel)`, from the memo when the same
    /// input was generated before (a cancelled generation is not kept).
    pub(crate) fn generate(
        &self,
        kind: ScheduleKind,
        input: &ScheduleInput,
        cancel: &Cancel,
    ) -> Result<Schedule, ScheduleError> {
        if !valid_durations(input) {
            return schedule::generate_cancellable(kind, input, cancel);
        }
        let key = Key::of(kind, input);
        let hit = self
            .store
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .get(&key)
            .cloned();
        if let Some(found) = hit {
            return (*found).clone();
        }
        let made = schedule::generate_cancellable(kind, input, cancel);
        if matches!(made, Err(ScheduleError::Cancelled(_))) {
            return made;
        }
        let ops = made.as_ref().map_or(0, Schedule::op_count).max(1);
        if ops <= Self::MAX_OPS / 4 {
            let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
            if !store.map.contains_key(&key) {
                // Orders that ignore the durations are few (one per kind, p and m) and asked
                // for again and again: they are never forgotten.
                if order_ignores_durations(kind) {
                    store.map.insert(key, Arc::new(made.clone()));
                    return made;
                }
                while store.ops + ops > Self::MAX_OPS {
                    let Some(old) = store.order.pop_front() else {
                        break;
                    };
                    if let Some(gone) = store.map.remove(&old) {
                        store.ops -= gone.as_ref().as_ref().map_or(0, Schedule::op_count).max(1);
                    }
                }
                store.ops += ops;
                store.order.push_back(key.clone());
                store.map.insert(key, Arc::new(made.clone()));
            }
        }
        made
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
                    schedule::generate(kind, &i),
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
            schedule::generate(ScheduleKind::Interleaved, &odd)
        );
    }
}
