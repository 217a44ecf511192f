//! The stepping rules the fields share: cycling through a list of choices (by value or by
//! name), linear and doubling steps of a count, a saturating narrowing to `u32`, and the
//! check that keeps an edit only where the scenario's rules still hold.

use crate::scenario::Scenario;

/// The entry `delta` places from `current` in `all`, wrapping; the first (or last) where
/// `current` is not in it.
pub(super) fn cycle<T: Clone + PartialEq>(all: &[T], current: &T, delta: i32) -> Option<T> {
    if all.is_empty() {
        return None;
    }
    let n = all.len() as i64;
    let i = all
        .iter()
        .position(|x| x == current)
        .map_or(-1, |i| i as i64);
    let j = if i < 0 {
        if delta > 0 { 0 } else { n - 1 }
    } else {
        (i + i64::from(delta)).rem_euclid(n)
    };
    all.get(j as usize).cloned()
}

/// As [`cycle`], the entries matched by `key`'s name.
pub(super) fn cycle_by_name<T: Clone>(
    all: &[T],
    name: &str,
    key: fn(&T) -> &str,
    delta: i32,
) -> Option<T> {
    let names: Vec<&str> = all.iter().map(key).collect();
    let next = cycle(&names, &name, delta)?;
    all.iter().find(|x| key(x) == next).cloned()
}

/// `v` moved by `delta`, not below `min`.
pub(super) fn step_linear(v: u64, delta: i32, min: u64) -> u64 {
    if delta > 0 {
        v.saturating_add(delta as u64)
    } else {
        v.saturating_sub(u64::from(delta.unsigned_abs())).max(min)
    }
}

/// `v` doubled (`delta > 0`) or halved, not below `min`.
pub(super) fn step_doubling(v: u64, delta: i32, min: u64) -> u64 {
    if delta > 0 {
        v.saturating_mul(2)
    } else {
        (v / 2).max(min)
    }
}

/// `v` as a `u32`, `u32::MAX` past it.
pub(super) fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Applies `edit`, keeping it when the scenario still validates (or did not before), else
/// undoing it and returning the engine's reason as `label: field must be allowed`.
pub(super) fn checked(
    sc: &mut Scenario,
    label: &str,
    edit: impl FnOnce(&mut Scenario),
) -> Option<String> {
    let before = sc.clone();
    edit(sc);
    if before.validate().is_err() {
        return None;
    }
    match sc.validate() {
        Ok(()) => None,
        Err(e) => {
            *sc = before;
            Some(format!("{label}: {} must be {}", e.field, e.allowed))
        }
    }
}
