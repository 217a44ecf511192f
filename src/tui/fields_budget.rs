//! The GPU and reserve fields' rules: how the memory budget follows a new GPU, and what a
//! reserve (GiB kept free) makes of it.

use crate::scenario::{GIB, GpuSpec, Scenario};

/// Puts the scenario on the GPU `g` by the scenario's budget rule, and says what became of
/// the budget (a reserve that does not fit the new GPU's memory falls to 0, and says so).
pub(super) fn change_gpu(sc: &mut Scenario, g: GpuSpec) -> String {
    let gib = |b: u64| b as f64 / GIB;
    match sc.change_gpu(g.clone()) {
        Ok(Some(capped)) => capped,
        Ok(None) => match sc.plan.reserve_bytes {
            Some(r) => format!(
                "budget {:.1} GiB: the GPU's memory less the {:.1} GiB reserve",
                gib(sc.plan.memory_budget_bytes),
                gib(r)
            ),
            None => format!(
                "budget {:.1} GiB kept (typed)",
                gib(sc.plan.memory_budget_bytes)
            ),
        },
        Err(_) => {
            let old = gib(sc.plan.reserve_bytes.unwrap_or(0));
            sc.gpu = g;
            let _ = sc.keep_free(0);
            format!(
                "the {old:.1} GiB reserve is not below {}'s memory: reserve 0, budget {:.1} GiB",
                sc.gpu.name,
                gib(sc.plan.memory_budget_bytes)
            )
        }
    }
}

/// Keeps `gib` GiB of the GPU's memory free: the budget becomes the memory less it.
pub(super) fn set_reserve(sc: &mut Scenario, gib: f64) -> Result<(), String> {
    let bytes = crate::scenario::reserve_bytes("reserve", gib, &sc.gpu).map_err(|_| {
        format!(
            "a number of GiB from 0 to below the GPU's memory ({:.1} GiB of {})",
            sc.gpu.memory_bytes() as f64 / GIB,
            sc.gpu.name
        )
    })?;
    sc.keep_free(bytes).map_err(|e| e.allowed)
}
