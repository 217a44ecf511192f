//! Refusals of a schedule that offloads by itself (`gis-offload`, `po-h`, `po-f`) whose copies
//! do not do what it promises (docs/model.md, "Offload"): an offload that places no copy at
//! all would silently be the schedule without it, and a `po-f` whose copies fit only on the
//! chunks `po-h` offloads would silently be `po-h`.

use crate::schedule::{Schedule, ScheduleKind};

use super::engine::Engine;
use super::types::SimError;

/// After the paired copy pass of `kind` with `v` chunks per device: `candidates` the
/// micro-batch-chunks it could copy, `copied[device][chunk]` whether a chunk got at least one
/// copy, `copy_s` the slowest copy slot.
pub(super) fn check_paired(
    kind: ScheduleKind,
    v: usize,
    candidates: usize,
    copied: &[Vec<bool>],
    copy_s: f64,
) -> Result<(), SimError> {
    if candidates == 0 {
        return Ok(());
    }
    let chunks_copied = |row: &Vec<bool>| row.iter().filter(|&&x| x).count();
    let most = copied.iter().map(chunks_copied).max().unwrap_or(0);
    if most == 0 {
        return Err(SimError::NothingOffloaded { copy_s });
    }
    let half = crate::schedule::po_offloaded_chunks(ScheduleKind::PoH, v);
    if kind == ScheduleKind::PoF && v > half && most <= half {
        return Err(SimError::FullOffloadUnplaced {
            copy_s,
            most: half,
            v,
        });
    }
    Ok(())
}

impl Engine<'_> {
    /// After the unpaired copy pass: [`check_own_offload`] with the copies placed and the
    /// slowest copy of a chunk the schedule itself offloads.
    pub(super) fn check_own_offload(&self) -> Result<(), SimError> {
        let mut most = 0.0f64;
        for (d, row) in self.sched.offloaded.iter().enumerate() {
            for (c, _) in row.iter().enumerate().filter(|(_, x)| **x) {
                if let Some(k) = self.costs.get(d * self.v + c) {
                    most = most.max(k.copy);
                }
            }
        }
        check_own_offload(self.sched, self.placed_copies, most)
    }
}

/// After the unpaired copy pass: a schedule that offloads chunks by itself (`gis-offload`)
/// must place at least one copy. `copy_s` is the slowest copy of an offloaded chunk.
fn check_own_offload(sched: &Schedule, placed: usize, copy_s: f64) -> Result<(), SimError> {
    let own = sched.offloaded.iter().flatten().any(|&x| x);
    if own && placed == 0 {
        return Err(SimError::NothingOffloaded { copy_s });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_that_copies_nothing_or_only_po_h_s_half_is_refused() {
        let none = vec![vec![false, false]; 4];
        assert!(matches!(
            check_paired(ScheduleKind::PoH, 2, 8, &none, 1.0),
            Err(SimError::NothingOffloaded { .. })
        ));
        // Nothing to copy (no candidate): nothing to refuse.
        assert!(check_paired(ScheduleKind::PoH, 2, 0, &none, 1.0).is_ok());
        let half = vec![
            vec![true, false],
            vec![true, false],
            vec![false; 2],
            vec![false; 2],
        ];
        assert!(check_paired(ScheduleKind::PoH, 2, 8, &half, 1.0).is_ok());
        assert!(matches!(
            check_paired(ScheduleKind::PoF, 2, 8, &half, 1.0),
            Err(SimError::FullOffloadUnplaced { most: 1, v: 2, .. })
        ));
        let full = vec![
            vec![true, true],
            vec![true, false],
            vec![false; 2],
            vec![false; 2],
        ];
        assert!(check_paired(ScheduleKind::PoF, 2, 8, &full, 1.0).is_ok());
    }
}
