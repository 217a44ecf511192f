//! `sweep --ep/--etp/--deepep` on a dense model (and `--deepep` where every ep is 1): refused
//! up front, as `plan` refuses them, rather than rejecting every configuration one by one.

use pipescope::Scenario;

/// The refusal of the first `--ep` or `--etp` value above 1, or of `--deepep`, when the model
/// has no experts; and of `--deepep` when every listed ep is 1 (no all-to-all to run).
pub fn refuse_expert_flags(
    scenario: &Scenario,
    ep: &[u32],
    etp: &[u32],
    deepep: bool,
) -> Result<(), String> {
    if scenario.model.moe.is_some() {
        if deepep && !ep.is_empty() && ep.iter().all(|&e| e <= 1) {
            return Err(
                "--deepep: no swept configuration has an all-to-all (every --ep is 1); \
                 list an ep above 1"
                    .into(),
            );
        }
        return Ok(());
    }
    if deepep {
        return Err(format!(
            "--deepep: {} is a dense model, with no all-to-all to run",
            scenario.model.name
        ));
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
