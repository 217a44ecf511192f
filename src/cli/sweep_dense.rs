//! `sweep --ep/--etp` on a dense model: refused up front, as `plan` refuses them, rather than
//! rejecting every configuration one by one.

use pipescope::Scenario;

/// The refusal of the first `--ep` or `--etp` value above 1 when the model has no experts.
pub fn refuse_expert_flags(scenario: &Scenario, ep: &[u32], etp: &[u32]) -> Result<(), String> {
    if scenario.model.moe.is_some() {
        return Ok(());
    }
    for (flag, list) in [("--ep", ep), ("--etp", etp)] {
        if let Some(v) = list.iter().find(|&&v| v > 1) {
            return Err(format!(
                "invalid {flag} = {v}: 1 for a dense model ({} has no experts to split)",
                scenario.model.name
            ));
        }
    }
    Ok(())
}
