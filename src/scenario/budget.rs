//! The memory budget rule, in one place. A scenario's budget is given one of two ways:
//!
//! - **kept free** (`reserve_gib`, the default, with 0): the budget is the GPU's memory less the
//!   reserve, and follows the GPU when it changes (the reserve is kept);
//! - **absolute** (`memory_budget_gib`): the budget is that figure, at most the GPU's memory; a
//!   new GPU keeps it when it fits and caps it at its memory otherwise.
//!
//! A scenario given by flags without a named preset keeps nothing free (reserve 0): a preset's
//! reserve comes only with that preset named ([`Scenario::keep_free`] with 0 on the default
//! scenario). Preset files, command-line flags, the TUI's fields and the sweep all set the
//! budget through the functions here.

use super::ranges::number_text;
use super::{GIB, GpuSpec, InvalidField, Scenario};

/// The largest absolute budget accepted, in GiB (far above any device).
const MAX_BUDGET_GIB: f64 = 1.0e9;

/// Converts a budget in GiB to bytes, refusing zero, negative and non-finite values.
pub fn budget_bytes(field: &str, gib: f64) -> Result<u64, InvalidField> {
    if !(gib.is_finite() && gib > 0.0 && gib <= MAX_BUDGET_GIB) {
        return Err(InvalidField::new(
            field,
            number_text(gib),
            "a budget in GiB greater than 0 (and at most 1e9)",
        ));
    }
    Ok(((gib * GIB).round() as u64).max(1))
}

/// Converts a reserve in GiB to bytes: at least 0 and less than `gpu`'s memory.
pub fn reserve_bytes(field: &str, gib: f64, gpu: &GpuSpec) -> Result<u64, InvalidField> {
    let bytes = gib * GIB;
    if !(gib.is_finite() && gib >= 0.0 && (bytes.round() as u64) < gpu.memory_bytes()) {
        return Err(InvalidField::new(
            field,
            number_text(gib),
            format!(
                "memory kept free in GiB, at least 0 and less than the GPU's memory ({}: {} GiB)",
                gpu.name, gpu.memory_gib
            ),
        ));
    }
    Ok(bytes.round() as u64)
}

/// `(memory_budget_bytes, reserve_bytes)` of a budget given as `absolute_gib` or as
/// `reserve_gib` (neither: reserve 0) on `gpu`; `fields` names the two settings for errors
/// (`("plan.memory_budget_gib", "plan.reserve_gib")` in a preset, the flags' names on the
/// command line). Giving both is refused.
pub fn budget_of(
    absolute_gib: Option<f64>,
    reserve_gib: Option<f64>,
    gpu: &GpuSpec,
    fields: (&str, &str),
) -> Result<(u64, Option<u64>), InvalidField> {
    let (absolute_field, reserve_field) = fields;
    match (absolute_gib, reserve_gib) {
        (Some(_), Some(r)) => Err(InvalidField::new(
            reserve_field,
            number_text(r),
            format!(
                "either {reserve_field} (memory kept free) or {absolute_field} (absolute), not both"
            ),
        )),
        (Some(gib), None) => Ok((budget_bytes(absolute_field, gib)?, None)),
        (None, reserve) => {
            let r = reserve_bytes(reserve_field, reserve.unwrap_or(0.0), gpu)?;
            Ok((gpu.memory_bytes() - r, Some(r)))
        }
    }
}

impl Scenario {
    /// Keeps `reserve_bytes` of the GPU's memory free: the budget becomes the memory less it
    /// and follows the GPU from now on. Refused when the reserve is not below the memory.
    pub fn keep_free(&mut self, reserve_bytes: u64) -> Result<(), InvalidField> {
        let memory = self.gpu.memory_bytes();
        if reserve_bytes >= memory {
            return Err(InvalidField::new(
                "plan.reserve_gib",
                gib_text(reserve_bytes),
                format!(
                    "memory kept free in GiB, at least 0 and less than the GPU's memory ({}: {} GiB)",
                    self.gpu.name, self.gpu.memory_gib
                ),
            ));
        }
        self.plan.reserve_bytes = Some(reserve_bytes);
        self.plan.memory_budget_bytes = memory - reserve_bytes;
        Ok(())
    }

    /// Sets an absolute budget of `budget_bytes` (kept when the GPU changes, while it fits).
    /// Refused when zero or above the GPU's memory.
    pub fn set_absolute_budget(&mut self, budget_bytes: u64) -> Result<(), InvalidField> {
        let memory = self.gpu.memory_bytes();
        if budget_bytes == 0 || budget_bytes > memory {
            return Err(InvalidField::new(
                "plan.memory_budget_gib",
                gib_text(budget_bytes),
                format!(
                    "a budget greater than 0 and at most the GPU's memory ({}: {} GiB)",
                    self.gpu.name, self.gpu.memory_gib
                ),
            ));
        }
        self.plan.reserve_bytes = None;
        self.plan.memory_budget_bytes = budget_bytes;
        Ok(())
    }

    /// Puts the scenario on `gpu` and applies the budget rule: a reserve is kept (the budget
    /// follows the new memory), an absolute budget is kept while it fits and capped at the
    /// new memory otherwise. Returns what happened to the budget when it was not simply kept
    /// or followed (for the UI's status line); refused, leaving the scenario unchanged, when
    /// the reserve is not below the new GPU's memory.
    pub fn change_gpu(&mut self, gpu: GpuSpec) -> Result<Option<String>, InvalidField> {
        let memory = gpu.memory_bytes();
        match self.plan.reserve_bytes {
            Some(r) => {
                let gib = r as f64 / GIB;
                let r = reserve_bytes("plan.reserve_gib", gib, &gpu)?;
                self.gpu = gpu;
                self.keep_free(r)?;
                Ok(None)
            }
            None if self.plan.memory_budget_bytes > memory => {
                let note = format!(
                    "budget {} GiB is more than {}'s memory: capped at {} GiB",
                    gib_text(self.plan.memory_budget_bytes),
                    gpu.name,
                    gib_text(memory)
                );
                self.gpu = gpu;
                self.plan.memory_budget_bytes = memory;
                Ok(Some(note))
            }
            None => {
                self.gpu = gpu;
                Ok(None)
            }
        }
    }
}

/// Bytes as GiB with one decimal, for messages.
fn gib_text(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / GIB)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Catalog, default_scenario};

    fn gpu(name: &str) -> GpuSpec {
        Catalog::builtin().gpu(name).cloned().unwrap()
    }

    #[test]
    fn a_reserve_follows_the_gpu() {
        let mut s = default_scenario();
        s.keep_free(10 << 30).unwrap();
        assert_eq!(s.change_gpu(gpu("h200-141gb")).unwrap(), None);
        assert_eq!(s.plan.reserve_bytes, Some(10 << 30));
        assert_eq!(
            s.plan.memory_budget_bytes,
            s.gpu.memory_bytes() - (10 << 30)
        );
    }

    #[test]
    fn an_absolute_budget_stays_absolute_and_is_capped_on_a_smaller_gpu() {
        let mut s = default_scenario();
        s.set_absolute_budget(60 << 30).unwrap();
        assert_eq!(s.change_gpu(gpu("h200-141gb")).unwrap(), None);
        assert_eq!(
            (s.plan.memory_budget_bytes, s.plan.reserve_bytes),
            (60 << 30, None)
        );
        let note = s.change_gpu(gpu("a100-40gb")).unwrap().unwrap();
        assert!(note.contains("capped at 40.0 GiB"), "{note}");
        assert_eq!(
            (s.plan.memory_budget_bytes, s.plan.reserve_bytes),
            (40 << 30, None)
        );
    }

    #[test]
    fn a_reserve_above_the_new_memory_is_refused_and_nothing_changes() {
        let mut s = default_scenario();
        s.keep_free(50 << 30).unwrap();
        let before = s.clone();
        let e = s.change_gpu(gpu("a100-40gb")).unwrap_err();
        assert_eq!(e.field, "plan.reserve_gib");
        assert_eq!(s, before);
    }

    #[test]
    fn both_ways_at_once_are_refused() {
        let g = gpu("a100-80gb");
        let fields = ("budget_gib", "reserve_gib");
        assert!(budget_of(Some(70.0), Some(10.0), &g, fields).is_err());
        assert_eq!(
            budget_of(None, None, &g, fields).unwrap(),
            (g.memory_bytes(), Some(0))
        );
        assert_eq!(
            budget_of(Some(70.0), None, &g, fields).unwrap(),
            (70 << 30, None)
        );
    }
}
