//! The units picker of the `named` strategy (`u`): the droppable units of the attention and
//! MLP blocks, each checked when the scenario's `recompute_units` names it; toggling one
//! edits that list (as `--recompute-units` and a preset's `recompute_units` do).

use crate::Scenario;
use crate::anatomy::BlockKind;

use super::solved::Solved;

/// One unit the picker offers.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its block kind.
    pub kind: BlockKind,
    /// The unit's name (`ln_out`, `gelu_out`, ...).
    pub unit: String,
    /// Bytes of one copy per micro-batch and layer.
    pub size_bytes: u64,
    /// What recomputing it costs per micro-batch and layer, seconds.
    pub recompute_s: f64,
}

impl Entry {
    /// The name the scenario lists: `attention.q`, `mlp.gelu_out`.
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.kind.name(), self.unit)
    }

    /// Whether `names` (a scenario's `recompute_units`) select this unit: by its qualified
    /// name or by its bare name (which selects it in every block kind).
    pub fn named_in(&self, names: &[String]) -> bool {
        names
            .iter()
            .any(|n| *n == self.qualified() || *n == self.unit)
    }
}

/// The droppable units of `solved`'s attention and MLP blocks, in block order.
pub fn entries(solved: &Solved) -> Vec<Entry> {
    let mut out = Vec::new();
    for kind in [BlockKind::Attention, BlockKind::Mlp] {
        let Some(t) = solved.units_of(kind) else {
            continue;
        };
        for (i, name) in t.names.iter().enumerate() {
            if !t.droppable.get(i).copied().unwrap_or(false) {
                continue;
            }
            out.push(Entry {
                kind,
                unit: name.clone(),
                size_bytes: t.size_bytes.get(i).copied().unwrap_or(0),
                recompute_s: t.recompute_s.get(i).copied().unwrap_or(0.0),
            });
        }
    }
    out
}

/// Toggles entry `i` in `sc`'s `recompute_units`. The list is first written out in
/// qualified names (a bare `ln_out` becomes `attention.ln_out, mlp.ln_out`) so that one
/// kind's unit can be toggled alone; it stays in the picker's order. Returns whether the
/// unit is now recomputed.
pub fn toggle(sc: &mut Scenario, entries: &[Entry], i: usize) -> bool {
    if i >= entries.len() {
        return false;
    }
    let names = &sc.plan.recompute_units;
    let mut picked: Vec<bool> = entries.iter().map(|e| e.named_in(names)).collect();
    let now = !picked[i];
    picked[i] = now;
    // Names the picker does not offer (another model's units) are kept as they were.
    let others: Vec<String> = names
        .iter()
        .filter(|n| {
            !entries
                .iter()
                .any(|e| **n == e.qualified() || **n == e.unit)
        })
        .cloned()
        .collect();
    sc.plan.recompute_units = entries
        .iter()
        .zip(&picked)
        .filter(|(_, p)| **p)
        .map(|(e, _)| e.qualified())
        .chain(others)
        .collect();
    now
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tui::fixture;

    #[test]
    fn toggling_writes_qualified_names_and_keeps_the_others() {
        let mut sc = fixture::scenario("gpt3");
        let solved = fixture::solve(&sc).unwrap();
        let e = entries(&solved);
        // The block inputs are never offered.
        assert!(e.iter().all(|x| x.unit != "input"));
        let ln = |k: BlockKind| {
            e.iter()
                .position(|x| x.kind == k && x.unit == "ln_out")
                .unwrap()
        };
        sc.plan.recompute_units = vec!["ln_out".into(), "other.x".into()];
        assert!(e[ln(BlockKind::Attention)].named_in(&sc.plan.recompute_units));
        assert!(e[ln(BlockKind::Mlp)].named_in(&sc.plan.recompute_units));
        // Unpicking the MLP's keeps the attention's.
        assert!(!toggle(&mut sc, &e, ln(BlockKind::Mlp)));
        assert_eq!(sc.plan.recompute_units, ["attention.ln_out", "other.x"]);
        let gelu = e.iter().position(|x| x.unit == "gelu_out").unwrap();
        assert!(toggle(&mut sc, &e, gelu));
        assert_eq!(
            sc.plan.recompute_units,
            ["attention.ln_out", "mlp.gelu_out", "other.x"]
        );
        assert!(!toggle(&mut sc, &e, ln(BlockKind::Attention)));
        assert_eq!(sc.plan.recompute_units, ["mlp.gelu_out", "other.x"]);
    }
}
