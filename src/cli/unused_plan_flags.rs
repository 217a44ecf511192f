//! No flag is accepted and silently ignored, for the flags that only some strategies use
//! (`--recompute-units` by `named`, `--objective` by the strategies that search the
//! partition, `--overlap-recompute` by any that recomputes something), `--device-max-connections`
//! (which only changes how the tensor-parallel collectives meet the GEMMs, so needs t > 1),
//! and a sweep's list values that no swept configuration could use (`--chunks 1` when every
//! swept schedule that takes chunks runs at least 2, a `--pp`, `--tp` or `--cp` that divides
//! none of the GPU counts). Which strategy uses what is the engine's knowledge
//! ([`Strategy`]'s methods); this file only words it for the command line.

use pipescope::{Scenario, ScheduleKind, Strategy};

use super::scenario_flags::SettingFlags;

/// The strategies that read `--recompute-units`.
fn takes_units(s: Strategy) -> bool {
    s == Strategy::Named
}

/// `--recompute-units` and `--objective` against the strategies that will run (`swept`:
/// a sweep's list, worded "none of the swept strategies", else the one `--strategy`).
fn check_strategy_users(
    strategies: &[Strategy],
    settings: &SettingFlags,
    swept: bool,
) -> Result<(), String> {
    let names: Vec<&str> = strategies.iter().map(|s| <&str>::from(*s)).collect();
    let names = names.join(", ");
    // "--strategy full does not read it" / "none of the swept strategies (none, full) reads it".
    let who = |does_not: &str, none_does: &str| {
        if swept {
            format!("none of the swept strategies ({names}) {none_does}")
        } else {
            format!("--strategy {names} {does_not}")
        }
    };
    if let Some(units) = &settings.recompute_units
        && !strategies.iter().any(|&s| takes_units(s))
    {
        return Err(format!(
            "--recompute-units {}: {}, so it would do nothing; only the named strategy \
             recomputes exactly the units named ({}, or leave the flag out)",
            units.join(","),
            who("does not read it", "reads it"),
            if swept {
                "add named to --strategies"
            } else {
                "give --strategy named"
            }
        ));
    }
    if let Some(objective) = settings.objective
        && !strategies.iter().any(|s| s.searches_partition())
    {
        return Err(format!(
            "--objective {}: {}, so it would do nothing; it ranks the partitions of {} (give \
             one of them with {}, or leave the flag out)",
            objective.name(),
            who("does not search the partition", "searches the partition"),
            Strategy::names_where(Strategy::searches_partition),
            if swept { "--strategies" } else { "--strategy" }
        ));
    }
    Ok(())
}

/// Refuses `named` among the strategies to run (`flag` gave them: `--strategy`,
/// `--strategies`) when the scenario names no unit to recompute (`--recompute-units`, a
/// preset's `plan.recompute_units`): it would keep everything, as `none` does, under
/// another name.
pub fn check_named_units(
    strategies: &[Strategy],
    scenario: &Scenario,
    flag: &str,
) -> Result<(), String> {
    if !strategies.contains(&Strategy::Named) || !scenario.plan.recompute_units.is_empty() {
        return Ok(());
    }
    let others: Vec<&str> = Strategy::ALL
        .iter()
        .filter(|&&s| s != Strategy::Named)
        .map(|&s| <&str>::from(s))
        .collect();
    Err(format!(
        "{flag} named: no units to recompute are named, so it would keep everything as none \
         does; give --recompute-units with the units to recompute (such as \
         attention.core_attn,mlp.gelu_out; `pipescope units` lists them), or another \
         strategy ({})",
        others.join(", ")
    ))
}

/// For a planned scenario: refuses the strategy flags its strategy does not use, an overlap
/// of recomputation where nothing is recomputed, and `--device-max-connections` at t 1.
pub fn check_plan_flags(settings: &SettingFlags, scenario: &Scenario) -> Result<(), String> {
    let strategy = scenario.plan.strategy;
    check_strategy_users(&[strategy], settings, false)?;
    check_named_units(&[strategy], scenario, "--strategy")?;
    let recomputes_nothing = strategy == Strategy::None
        || (strategy == Strategy::Named && scenario.plan.recompute_units.is_empty());
    if settings.overlap_recompute && recomputes_nothing {
        return Err(format!(
            "--overlap-recompute: --strategy {strategy} recomputes nothing, so there is no \
             recomputation to overlap (give a strategy that recomputes, such as full, \
             selective or adapipe, or leave the flag out)"
        ));
    }
    check_connections(settings, &[scenario.parallel.tp])
}

/// Refuses `--device-max-connections` when every tensor-parallel size is 1: the setting only
/// decides whether the backward's tensor-parallel collectives hide under the GEMMs.
fn check_connections(settings: &SettingFlags, tp: &[u32]) -> Result<(), String> {
    match settings.device_max_connections {
        Some(n) if !tp.is_empty() && tp.iter().all(|&t| t <= 1) => Err(format!(
            "--device-max-connections {n}: with t 1 there are no tensor-parallel collectives, \
             whose overlap with the GEMMs is all it changes, so it would do nothing (give \
             -t/--tp above 1, or leave it out)"
        )),
        _ => Ok(()),
    }
}

/// For a sweep: refuses the strategy flags none of the swept `strategies` uses, a
/// `--chunks` value no swept schedule runs, a `--pp`/`--tp`/`--cp` value that divides none
/// of the `gpus`, and `--device-max-connections` when every swept `tp` is 1.
pub fn check_sweep_flags(
    settings: &SettingFlags,
    schedules: &[ScheduleKind],
    strategies: &[Strategy],
    lists: &SweepLists<'_>,
) -> Result<(), String> {
    check_strategy_users(strategies, settings, true)?;
    check_connections(settings, lists.tp)?;
    for &v in lists.chunks {
        if !schedules
            .iter()
            .any(|k| k.takes_chunks() && k.chunks(v) == v)
        {
            let takers: Vec<&str> = schedules
                .iter()
                .filter(|k| k.takes_chunks())
                .map(|k| k.name())
                .collect();
            return Err(format!(
                "--chunks {v}: none of the swept schedules runs {v} chunk{} per device ({} \
                 run{} at least 2), so no configuration would use it",
                if v == 1 { "" } else { "s" },
                takers.join(", "),
                if takers.len() == 1 { "s" } else { "" }
            ));
        }
    }
    for (flag, values) in [("--pp", lists.pp), ("--tp", lists.tp), ("--cp", lists.cp)] {
        for &v in values {
            if !lists.gpus.iter().any(|&g| v > 0 && g % v == 0) {
                let gpus: Vec<String> = lists.gpus.iter().map(u32::to_string).collect();
                return Err(format!(
                    "{flag} {v}: divides none of the GPU counts (--gpus {}), so no \
                     configuration would use it (each configuration splits its GPUs as \
                     t x cp x p x d)",
                    gpus.join(",")
                ));
            }
        }
    }
    Ok(())
}

/// The list flags of a sweep that [`check_sweep_flags`] checks.
pub struct SweepLists<'a> {
    /// `--gpus`.
    pub gpus: &'a [u32],
    /// `--pp` (empty: every divisor).
    pub pp: &'a [u32],
    /// `--tp` (empty: every divisor).
    pub tp: &'a [u32],
    /// `--cp` (empty: the default sizes).
    pub cp: &'a [u32],
    /// `--chunks` (empty: the default counts).
    pub chunks: &'a [u32],
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lists<'a>(gpus: &'a [u32], pp: &'a [u32], chunks: &'a [u32]) -> SweepLists<'a> {
        SweepLists {
            gpus,
            pp,
            tp: &[],
            cp: &[],
            chunks,
        }
    }

    #[test]
    fn a_chunk_count_no_swept_schedule_runs_is_refused() {
        let s = SettingFlags::default();
        let il = [ScheduleKind::Interleaved];
        let e = check_sweep_flags(&s, &il, &[Strategy::None], &lists(&[4], &[], &[1])).unwrap_err();
        assert!(
            e.starts_with("--chunks 1:") && e.contains("interleaved"),
            "{e}"
        );
        assert!(check_sweep_flags(&s, &il, &[Strategy::None], &lists(&[4], &[], &[2, 3])).is_ok());
    }

    #[test]
    fn a_degree_dividing_no_gpu_count_is_refused() {
        let s = SettingFlags::default();
        let k = [ScheduleKind::OneFOneB];
        let e =
            check_sweep_flags(&s, &k, &[Strategy::None], &lists(&[4, 8], &[5], &[])).unwrap_err();
        assert!(e.starts_with("--pp 5:") && e.contains("--gpus 4,8"), "{e}");
        assert!(check_sweep_flags(&s, &k, &[Strategy::None], &lists(&[4, 6], &[3], &[])).is_ok());
    }

    #[test]
    fn strategy_flags_need_a_swept_strategy_that_reads_them() {
        let mut s = SettingFlags {
            recompute_units: Some(vec!["ln_out".into()]),
            ..SettingFlags::default()
        };
        let k = [ScheduleKind::OneFOneB];
        let none = lists(&[4], &[], &[]);
        let e = check_sweep_flags(&s, &k, &[Strategy::Full], &none).unwrap_err();
        assert!(
            e.contains("--recompute-units ln_out") && e.contains("named"),
            "{e}"
        );
        assert!(check_sweep_flags(&s, &k, &[Strategy::Full, Strategy::Named], &none).is_ok());
        s.recompute_units = None;
        s.objective = Some(pipescope::Objective::AdaPipe);
        let e = check_sweep_flags(&s, &k, &[Strategy::Full], &none).unwrap_err();
        assert!(
            e.contains("--objective adapipe") && e.contains("adapipe, unified, lynx"),
            "{e}"
        );
    }
}
