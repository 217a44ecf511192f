//! The saturation step ([`super::saturation_bytes`]) the floor below a peak relies on: on
//! the single-chunk kinds whose simulated peak is the planner's own, a device whose plan adds
//! time peaks above the budget less one step.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use crate::plan::Strategy as Plan;
use crate::scenario::ScheduleKind;
use crate::solve::{SolveOptions, run_until, testcase};

use super::saturation_bytes;

/// Solves one random small `adapipe` instance of `kind` drawn from `seed` and counts its
/// devices that add time; fails where one of them peaks at or below the budget less the
/// saturation step.
fn check_saturation(kind: ScheduleKind, seed: u64, big: bool) -> Result<usize, String> {
    let mut next = testcase::rng(seed);
    let small = testcase::small(big, (kind, Plan::AdaPipe), &mut next);
    let (s, anatomy) = testcase::with_data_parallel(small, &mut next);
    let Ok(run) = run_until(
        &s,
        &anatomy,
        (kind, Plan::AdaPipe),
        &SolveOptions::default(),
        None,
    ) else {
        return Ok(0);
    };
    let budget = s.plan.memory_budget_bytes;
    let most = run
        .plan
        .devices
        .iter()
        .map(|d| d.env.in_flight)
        .max()
        .unwrap_or(1);
    let threshold = budget.saturating_sub(saturation_bytes(&anatomy, most));
    let mut adding = 0;
    for d in &run.plan.devices {
        if d.costs.recompute_s > 0.0 {
            let peak = run.simulation.devices[d.device].peak_memory_bytes;
            if peak <= threshold {
                return Err(format!(
                    "{kind} seed {seed}: device {} adds {} s and peaks at {peak}, at most \
                     {threshold} (budget {budget})",
                    d.device, d.costs.recompute_s
                ));
            }
            adding += 1;
        }
    }
    Ok(adding)
}

/// On many random small instances (1F1B and GPipe, budgets from tight to roomy, two models,
/// data parallelism), every device that adds time peaks above the budget less the step, and
/// such devices are many (the check is exercised).
#[test]
fn a_device_that_adds_time_fills_its_budget_but_one_step() {
    let mut adding = 0;
    for seed in 0..160u64 {
        let kind = [ScheduleKind::OneFOneB, ScheduleKind::Gpipe][(seed % 2) as usize];
        adding += check_saturation(kind, seed, seed % 3 == 0).unwrap();
    }
    assert!(adding >= 40, "only {adding} devices added time");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The same on instances proptest draws.
    #[test]
    fn saturation_holds_on_drawn_instances(seed in any::<u64>(), gpipe in any::<bool>(), big in any::<bool>()) {
        let kind = if gpipe { ScheduleKind::Gpipe } else { ScheduleKind::OneFOneB };
        let checked = check_saturation(kind, seed, big);
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}
