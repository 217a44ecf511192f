//! The hint of a memory limit that no order meets: "the smallest limit that fits is N", for
//! an abstract run (`simulate --mem-limit`) and for a planned scenario (`plan`, `simulate`,
//! `export`) alike. The limit is found by doubling, then halving: at most about
//! `2 log2(limit)` tries, each a schedule generation (abstract) or a solve (planned).

use pipescope::{Outcome, Scenario, ScheduleError, SolveError, solve};

/// The smallest whole limit from `limit` up to `ceiling` for which `fits` holds, or `None`
/// when none up to `ceiling` does.
fn smallest(limit: f64, ceiling: f64, fits: impl Fn(f64) -> bool) -> Option<f64> {
    let mut low = limit.max(0.0).floor();
    let mut high = (low * 2.0).max(1.0);
    while !fits(high) {
        if high >= ceiling {
            return None;
        }
        low = high;
        high = (high * 2.0).min(ceiling);
    }
    while high - low > 1.0 {
        let mid = ((low + high) / 2.0).floor();
        if fits(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(high)
}

/// `e` (a `NoFit` at `limit`) with the setting that set the limit (`set_by`) and the smallest
/// limit that fits, or that none up to `ceiling` does.
pub fn message(
    e: &dyn std::fmt::Display,
    limit: f64,
    ceiling: f64,
    set_by: &str,
    fits: impl Fn(f64) -> bool,
) -> String {
    match smallest(limit, ceiling, fits) {
        Some(l) => format!("{e} (set by {set_by}; the smallest limit that fits is {l})"),
        None => format!("{e} (set by {set_by}; none up to {ceiling} fits either)"),
    }
}

/// Solves `scenario`; a memory limit that no order meets comes back with the smallest limit
/// that fits (`flag`: whether `--mem-limit` set it, else the preset's `plan.mem_limit` did).
pub fn solve_explained(scenario: &Scenario, flag: bool) -> Result<Outcome, String> {
    match solve(scenario) {
        Ok(o) => Ok(o),
        Err(e @ SolveError::Schedule(ScheduleError::NoFit { limit, .. })) => {
            let v = scenario.plan.schedule.chunks(scenario.parallel.chunks);
            let ceiling = 4.0 * f64::from(scenario.parallel.pp) * f64::from(v) + 4.0;
            let set_by = if flag {
                "--mem-limit"
            } else {
                "plan.mem_limit"
            };
            Err(message(&e, limit, ceiling, set_by, |l| {
                let mut s = scenario.clone();
                s.plan.mem_limit = Some(l);
                !matches!(
                    solve(&s),
                    Err(SolveError::Schedule(ScheduleError::NoFit { .. }))
                )
            }))
        }
        Err(e) => Err(super::scenario_args::name_flags(&e.to_string())),
    }
}
