//! `sweep --ep/--etp/--deepep` on a dense model (and `--deepep` where every ep is 1, and an
//! `--ep` that divides not the experts): refused up front, as `plan` refuses them, rather
//! than rejecting every configuration one by one.

use pipescope::Scenario;

/// The refusal of the first `--ep` or `--etp` value above 1, or of `--deepep`, when the model
/// has no experts; of `--deepep` when every listed ep is 1 (no all-to-all to run); and of an
/// `--ep` value that divides not the experts (no configuration could use it: `--ep 3` for
/// DeepSeek-V3's 256 answered "0 configurations" beside a rejected count).
pub fn refuse_expert_flags(
    scenario: &Scenario,
    ep: &[u32],
    etp: &[u32],
    deepep: bool,
) -> Result<(), String> {
    if let Some(moe) = scenario.model.moe.as_ref() {
        if let Some(v) = ep
            .iter()
            .find(|&&v| v == 0 || moe.experts % u64::from(v) != 0)
        {
            return Err(format!(
                "invalid --ep = {v}: a divisor of the {} routed experts of {} (each \
                 expert-parallel rank holds whole experts), so no configuration would use it",
                moe.experts, scenario.model.name
            ));
        }
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
