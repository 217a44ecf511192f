//! No flag is accepted and silently ignored: a schedule setting given for a schedule that does
//! not use it (`--chunks 3` on `1f1b`, `--offload-chunks` on `interleaved`, `--group-size`
//! off GIS, `--mem-limit` on `zb-h2`) is refused, naming the flag and the schedules that
//! would use it; so are `--chunks` whatever its value on a schedule that holds two copies of
//! the stages (`chimera`, `dualpipe`), `--partition` beside `--layout` (the layout is the
//! whole split) and `--layout` in a sweep (which chooses the split itself). Which schedule
//! uses what is the engine's knowledge ([`ScheduleKind`]'s `takes_*` methods); this file only
//! words it for the command line.

use pipescope::{DataParallelUse, Scenario, ScheduleKind, Zero};

use super::scenario_flags::{LayoutFlags, SettingFlags};

/// The schedule flags given, as `(flag, whether the schedule uses it, who does)`.
fn schedule_flags(
    kind: ScheduleKind,
    settings: &SettingFlags,
    offload_cost: bool,
) -> Vec<(String, bool, String)> {
    let mut given = Vec::new();
    if let Some(x) = settings.mem_limit {
        let why = if kind == ScheduleKind::ZbH2 {
            "zb-h2's limit is 2p by its definition; zb-auto is the zero-bubble heuristic \
             under a limit you choose"
                .to_string()
        } else {
            format!(
                "it sets the limit of {}",
                ScheduleKind::names_where(ScheduleKind::takes_mem_limit)
            )
        };
        given.push((format!("--mem-limit {x}"), kind.takes_mem_limit(), why));
    }
    if let Some(g) = settings.group_size {
        given.push((
            format!("--group-size {g}"),
            kind.takes_group_size(),
            format!(
                "it sets the group size of {}",
                ScheduleKind::names_where(ScheduleKind::takes_group_size)
            ),
        ));
    }
    if let Some(k) = settings.offload_chunks {
        let why = if kind.offloads() {
            format!("{kind} chooses the chunks it offloads by their lifespan")
        } else {
            String::new()
        };
        let users = format!(
            "it sets how many chunks {} offloads",
            ScheduleKind::names_where(ScheduleKind::takes_offload_chunks)
        );
        given.push((
            format!("--offload-chunks {k}"),
            kind.takes_offload_chunks(),
            if why.is_empty() {
                users
            } else {
                format!("{why}; {users}")
            },
        ));
    }
    if offload_cost {
        given.push((
            "--offload-cost".to_string(),
            kind.offloads(),
            format!(
                "only {} offload activations by their schedule",
                ScheduleKind::names_where(ScheduleKind::offloads)
            ),
        ));
    }
    given
}

/// Refuses `--chunks V` when `kind` does not run V chunks per device, and any `--chunks` for
/// a schedule whose two chunks are copies of the same stages (it would read as a model cut
/// into `2p` stages, which such a schedule never runs).
pub fn check_chunks(kind: ScheduleKind, chunks: Option<u32>) -> Result<(), String> {
    let Some(v) = chunks else { return Ok(()) };
    let used = kind.chunks(v);
    let takers = ScheduleKind::names_where(ScheduleKind::takes_chunks);
    if kind.replicates_stages() {
        return Err(format!(
            "--chunks {v}: {kind} cuts the model into p stages and holds two copies of them on \
             every device (one per direction), so a chunk count does not apply to it; \
             --chunks sets the chunks of {takers}"
        ));
    }
    if used == v {
        return Ok(());
    }
    Err(if kind.takes_chunks() {
        format!("--chunks {v}: {kind} runs at least 2 chunks per device (it would run {used})")
    } else {
        format!(
            "--chunks {v}: {kind} always runs {used} chunk{} per device, so the flag would do \
             nothing; --chunks sets the chunks of {takers}",
            if used == 1 { "" } else { "s" }
        )
    })
}

/// Refuses the schedule flags that `kind` would ignore (`offload_cost`: `--offload-cost`
/// was given, on an abstract run).
pub fn check_schedule(
    kind: ScheduleKind,
    layout: &LayoutFlags,
    settings: &SettingFlags,
    offload_cost: bool,
) -> Result<(), String> {
    check_chunks(kind, layout.chunks)?;
    check_layout_partition(settings)?;
    for (flag, used, why) in schedule_flags(kind, settings, offload_cost) {
        if !used {
            return Err(format!(
                "{flag}: {kind} does not use it, so it would do nothing ({why})"
            ));
        }
    }
    Ok(())
}

/// Refuses `--partition` beside `--layout`: the layout is the whole split, so the partition
/// would do nothing.
pub fn check_layout_partition(settings: &SettingFlags) -> Result<(), String> {
    match (&settings.layout, settings.partition) {
        (Some(_), Some(partition)) => Err(format!(
            "--partition {partition}: --layout gives the whole split, so --partition would do \
             nothing; give one of them"
        )),
        _ => Ok(()),
    }
}

/// Refuses `--layout` in a sweep: a layout fixes the stages (`p x chunks`) and every
/// stage's layers, which the sweep chooses for every configuration.
pub fn check_sweep_layout(settings: &SettingFlags) -> Result<(), String> {
    match &settings.layout {
        Some(text) => Err(format!(
            "--layout {text}: a layout fixes p x chunks and each stage's layers, which the \
             sweep chooses for every configuration, so one layout cannot apply to them all; \
             sweep without it, then try a layout on the configuration you pick with \
             `plan --layout`"
        )),
        None => Ok(()),
    }
}

/// [`check_schedule`] and [`check_job_flags`] for a planned scenario (its schedule from the
/// flags or the preset).
pub fn check_planned(
    layout: &LayoutFlags,
    settings: &SettingFlags,
    scenario: &Scenario,
) -> Result<(), String> {
    check_schedule(scenario.plan.schedule, layout, settings, false)?;
    super::unused_plan_flags::check_plan_flags(settings, scenario)?;
    check_job_flags(layout, settings, scenario)
}

/// Refuses the job flags that the scenario's layout gives nothing to act on: `--zero 1|3`
/// (or `--distributed-optimizer`) and the two data-parallel overlaps with one data-parallel
/// rank per stage (`d x cp = 1`: nothing to shard, no gradient reduction), and `--p2p` on one
/// stage (no stage-to-stage sends). A scenario file's zero and overlaps are refused by the
/// catalog on the same rules; its `p2p` is kept, as a preset's value is its author's record
/// of the run (the `korthikanti-22b` preset keeps Megatron's blocking sends at p 1).
pub fn check_job_flags(
    layout: &LayoutFlags,
    settings: &SettingFlags,
    scenario: &Scenario,
) -> Result<(), String> {
    // Flags override the preset, then the rule is the one the scenario files follow, on
    // the scenario the two make together (a preset's zero with `-d 1` is refused as a
    // file's is).
    if let Some((what, reason)) = pipescope::data_parallel_refusal(scenario) {
        return Err(data_parallel_error(
            layout, settings, scenario, what, &reason,
        ));
    }
    if let Some(p2p) = settings.p2p
        && scenario.parallel.pp <= 1
    {
        return Err(format!(
            "--p2p {}: with one pipeline stage (p 1) there are no stage-to-stage sends, so \
             it would do nothing (give -p/--stages above 1, or leave it out)",
            <&str>::from(p2p)
        ));
    }
    Ok(())
}

/// The command line's words for a [`pipescope::data_parallel_refusal`]: the flag that
/// asked for the setting (or the preset's key when it came from there), the reason, and what
/// to change.
fn data_parallel_error(
    layout: &LayoutFlags,
    settings: &SettingFlags,
    scenario: &Scenario,
    what: DataParallelUse,
    reason: &str,
) -> String {
    let given = match what {
        DataParallelUse::Zero => match (layout.zero, layout.distributed_optimizer) {
            (Some(z), _) => Some(format!("--zero {}", z.level())),
            (None, true) => Some("--distributed-optimizer".to_string()),
            (None, false) => None,
        },
        DataParallelUse::OverlapGradReduce => settings
            .overlap_grad_reduce
            .then(|| "--overlap-grad-reduce".to_string()),
        DataParallelUse::OverlapParamGather => settings
            .overlap_param_gather
            .then(|| "--overlap-param-gather".to_string()),
    };
    let fix = match what {
        DataParallelUse::Zero => "--zero 0",
        DataParallelUse::OverlapGradReduce => "--no-overlap-grad-reduce",
        DataParallelUse::OverlapParamGather => "plan.overlap_param_gather = false in the preset",
    };
    match given {
        Some(flag) => format!("{flag}: {reason}; give -d/--dp or --cp above 1, or leave it out"),
        None => {
            let (dp, cp) = (scenario.parallel.dp, scenario.parallel.cp);
            let value = match what {
                DataParallelUse::Zero => scenario.parallel.zero().level().to_string(),
                _ => "true".to_string(),
            };
            format!(
                "the preset's {} = {value} at -d/--dp {dp} and --cp {cp}: {reason}; give \
                 -d/--dp or --cp above 1, or {fix}",
                what.key()
            )
        }
    }
}

/// The notes on flags that change nothing because the scenario does it anyway: under
/// `--zero 3` the overlaps, as Megatron-FSDP always overlaps its gathers and reduce-scatters
/// (so real recipes pass them, and refusing would break those).
///
/// A group size above p (from `--group-size` or the file's `plan.group_size`) is run as p,
/// as the zero-bubble repository's group-interleaved 1F1B resets it; kept, not refused, so
/// that a source's setting replays as it ran, and said here.
pub fn job_flag_notes(settings: &SettingFlags, scenario: &Scenario) -> Vec<String> {
    let mut notes = Vec::new();
    let (kind, p) = (scenario.plan.schedule, scenario.parallel.pp);
    if let Some(g) = scenario.plan.group_size.filter(|&g| g > p)
        && kind.takes_group_size()
    {
        notes.push(format!(
            "group size {g} is above p ({p}): {kind} runs groups of {p}, as the zero-bubble \
             repository's group-interleaved 1F1B resets a larger group to p (1 to {p} change \
             the schedule)"
        ));
    }
    if scenario.parallel.zero() == Zero::Full {
        let given: Vec<&str> = [
            (settings.overlap_grad_reduce, "--overlap-grad-reduce"),
            (settings.overlap_param_gather, "--overlap-param-gather"),
        ]
        .into_iter()
        .filter_map(|(on, flag)| on.then_some(flag))
        .collect();
        if !given.is_empty() {
            notes.push(format!(
                "{}: zero 3 (Megatron-FSDP) always overlaps its parameter gathers and \
                 gradient reduce-scatters, so the run is modelled the same with or without {}",
                given.join(" "),
                if given.len() == 1 { "it" } else { "them" }
            ));
        }
    }
    notes
}

/// For a sweep: refuses a schedule flag that none of the swept `schedules` uses.
pub fn check_sweep(
    schedules: &[ScheduleKind],
    chunks: &[u32],
    settings: &SettingFlags,
) -> Result<(), String> {
    if settings.moe_a2a_overlap && !schedules.iter().any(|k| k.pairs_forward_backward()) {
        return Err(format!(
            "--moe-a2a-overlap: none of the swept schedules pairs a forward with a backward \
             ({}); it hides the all-to-alls in the overlapped pairs of {} (1f1b at p 1; add \
             one with --schedules)",
            names(schedules),
            ScheduleKind::names_where(ScheduleKind::pairs_forward_backward)
        ));
    }
    if !chunks.is_empty() && !schedules.iter().any(|k| k.takes_chunks()) {
        return Err(format!(
            "--chunks: none of the swept schedules takes it ({}); it sets the chunks of {}",
            names(schedules),
            ScheduleKind::names_where(ScheduleKind::takes_chunks)
        ));
    }
    let Some(&first) = schedules.first() else {
        return Ok(());
    };
    for (i, (flag, _, why)) in schedule_flags(first, settings, false)
        .into_iter()
        .enumerate()
    {
        let used = schedules.iter().any(|&k| {
            schedule_flags(k, settings, false)
                .get(i)
                .is_some_and(|f| f.1)
        });
        if !used {
            return Err(format!(
                "{flag}: none of the swept schedules uses it ({}), so it would do nothing ({why})",
                names(schedules)
            ));
        }
    }
    Ok(())
}

/// For a sweep: refuses an overlap flag that no swept configuration could use (each
/// configuration takes the overlaps where it allows them), or that none could run on `base`
/// (its GPU and its gradient overlap, which every configuration keeps).
pub fn check_sweep_overlaps(
    base: &Scenario,
    tp: &[u32],
    zero: &[Zero],
    settings: &SettingFlags,
) -> Result<(), String> {
    if settings.overlap_param_gather {
        if !zero.is_empty() && zero.iter().all(|&z| z == Zero::Off) {
            return Err(
                "--overlap-param-gather: none of the swept ZeRO stages shards (--zero 0), so it \
                 would do nothing (it overlaps the parameter all-gather of zero 1 or 3)"
                    .to_string(),
            );
        }
        if !base.plan.overlap_grad_reduce {
            return Err(
                "--overlap-param-gather: it needs --overlap-grad-reduce as well (Megatron: \
                 --overlap-param-gather needs --overlap-grad-reduce)"
                    .to_string(),
            );
        }
    }
    if settings.moe_a2a_overlap && base.model.moe.is_none() {
        return Err(format!(
            "--moe-a2a-overlap: {} is a dense model: it hides the MoE layers' all-to-alls, \
             which a model without experts does not have",
            base.model.name
        ));
    }
    if settings.tp_comm_overlap {
        if !tp.is_empty() && tp.iter().all(|&t| t <= 1) {
            return Err(
                "--tp-comm-overlap: none of the swept tensor-parallel sizes is above 1 (--tp 1), \
                 so it would do nothing (it pipelines the collectives of t > 1 with sequence \
                 parallelism)"
                    .to_string(),
            );
        }
        if base.gpu.sms.is_none() {
            return Err(format!(
                "--tp-comm-overlap: {} has no gpu.sms in its preset (the overlapped GEMMs lend \
                 streaming multiprocessors to the communication), so no configuration could \
                 run it",
                base.gpu.name
            ));
        }
    }
    Ok(())
}

fn names(schedules: &[ScheduleKind]) -> String {
    let names: Vec<&str> = schedules.iter().map(|k| k.name()).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SettingFlags {
        SettingFlags::default()
    }

    #[test]
    fn chunks_on_a_one_chunk_schedule_are_refused() {
        let e = check_chunks(ScheduleKind::OneFOneB, Some(3)).unwrap_err();
        assert!(e.contains("--chunks 3") && e.contains("interleaved"), "{e}");
        assert!(check_chunks(ScheduleKind::OneFOneB, Some(1)).is_ok());
        assert!(check_chunks(ScheduleKind::ZbV, Some(2)).is_ok());
        assert!(check_chunks(ScheduleKind::ZbV, Some(4)).is_err());
        assert!(check_chunks(ScheduleKind::Interleaved, Some(1)).is_err());
        assert!(check_chunks(ScheduleKind::Interleaved, Some(3)).is_ok());
    }

    #[test]
    fn chunks_on_replicated_stages_are_refused_even_at_two() {
        for kind in [ScheduleKind::DualPipe, ScheduleKind::Chimera] {
            for v in [1, 2, 4] {
                let e = check_chunks(kind, Some(v)).unwrap_err();
                assert!(
                    e.contains(&format!("--chunks {v}")) && e.contains("two copies"),
                    "{e}"
                );
            }
            assert!(check_chunks(kind, None).is_ok());
        }
        // DualPipe-V's two chunks are distinct stages (a V over 2p of them).
        assert!(check_chunks(ScheduleKind::DualPipeV, Some(2)).is_ok());
    }

    #[test]
    fn offload_and_group_flags_need_a_schedule_that_uses_them() {
        let mut s = settings();
        s.offload_chunks = Some(1);
        let layout = LayoutFlags::default();
        let e = check_schedule(ScheduleKind::Interleaved, &layout, &s, false).unwrap_err();
        assert!(
            e.contains("--offload-chunks 1") && e.contains("gis-offload"),
            "{e}"
        );
        assert!(check_schedule(ScheduleKind::GisOffload, &layout, &s, false).is_ok());
        let e = check_schedule(ScheduleKind::OneFOneB, &layout, &settings(), true).unwrap_err();
        assert!(e.contains("--offload-cost"), "{e}");
        let mut s = settings();
        s.group_size = Some(2);
        assert!(check_schedule(ScheduleKind::OneFOneB, &layout, &s, false).is_err());
        assert!(check_schedule(ScheduleKind::Gis, &layout, &s, false).is_ok());
    }

    /// PipeOffload's schedules take chunks, a group size and a copy time, but choose the
    /// chunks they offload themselves: `--offload-chunks` says so.
    #[test]
    fn pipeoffload_takes_its_flags_but_not_a_chunk_count_to_offload() {
        let layout = LayoutFlags {
            chunks: Some(3),
            ..LayoutFlags::default()
        };
        let mut s = settings();
        s.group_size = Some(2);
        for kind in [ScheduleKind::PoH, ScheduleKind::PoF] {
            assert!(check_schedule(kind, &layout, &s, true).is_ok(), "{kind}");
            let mut k = s.clone();
            k.offload_chunks = Some(1);
            let e = check_schedule(kind, &layout, &k, false).unwrap_err();
            assert!(
                e.contains("--offload-chunks 1")
                    && e.contains("lifespan")
                    && e.contains("gis-offload"),
                "{e}"
            );
        }
    }

    #[test]
    fn zb_h2_refuses_a_memory_limit_and_names_zb_auto() {
        let mut s = settings();
        s.mem_limit = Some(5.0);
        let layout = LayoutFlags::default();
        let e = check_schedule(ScheduleKind::ZbH2, &layout, &s, false).unwrap_err();
        assert!(e.contains("--mem-limit 5") && e.contains("zb-auto"), "{e}");
        assert!(check_schedule(ScheduleKind::ZbAuto, &layout, &s, false).is_ok());
    }

    #[test]
    fn a_layout_refuses_a_partition_beside_it_and_in_a_sweep() {
        let mut s = settings();
        s.layout = Some("Et|tL".into());
        assert!(check_layout_partition(&s).is_ok());
        let e = check_sweep_layout(&s).unwrap_err();
        assert!(
            e.starts_with("--layout Et|tL:") && e.contains("plan --layout"),
            "{e}"
        );
        s.partition = Some(pipescope::Partition::Even);
        let layout = LayoutFlags::default();
        let e = check_schedule(ScheduleKind::OneFOneB, &layout, &s, false).unwrap_err();
        assert!(
            e.contains("--partition even") && e.contains("--layout"),
            "{e}"
        );
        assert!(check_sweep_layout(&settings()).is_ok());
    }

    #[test]
    fn a_sweep_refuses_flags_no_swept_schedule_uses() {
        let mut s = settings();
        s.group_size = Some(2);
        let both = [ScheduleKind::OneFOneB, ScheduleKind::Gis];
        assert!(check_sweep(&both, &[], &s).is_ok());
        let e = check_sweep(&[ScheduleKind::OneFOneB], &[], &s).unwrap_err();
        assert!(e.contains("--group-size 2"), "{e}");
        let e = check_sweep(&[ScheduleKind::ZbV], &[3], &settings()).unwrap_err();
        assert!(e.contains("--chunks"), "{e}");
        // The all-to-all overlap applies where a swept schedule pairs F with B.
        let mut s = settings();
        s.moe_a2a_overlap = true;
        assert!(check_sweep(&[ScheduleKind::ZbV, ScheduleKind::DualPipeV], &[], &s).is_ok());
        let e = check_sweep(&[ScheduleKind::ZbV], &[], &s).unwrap_err();
        assert!(
            e.contains("--moe-a2a-overlap") && e.contains("zb-v") && e.contains("dualpipe"),
            "{e}"
        );
    }

    #[test]
    fn a_sweep_refuses_an_overlap_no_swept_configuration_could_use() {
        let mut base = pipescope::Catalog::builtin()
            .scenario("gpt3-175b-16k")
            .unwrap();
        base.plan.overlap_grad_reduce = true;
        let mut s = settings();
        s.overlap_param_gather = true;
        assert!(check_sweep_overlaps(&base, &[], &[], &s).is_ok());
        assert!(check_sweep_overlaps(&base, &[], &[Zero::Off, Zero::Full], &s).is_ok());
        let e = check_sweep_overlaps(&base, &[], &[Zero::Off], &s).unwrap_err();
        assert!(
            e.contains("--overlap-param-gather") && e.contains("zero 1 or 3"),
            "{e}"
        );
        base.plan.overlap_grad_reduce = false;
        let e = check_sweep_overlaps(&base, &[], &[], &s).unwrap_err();
        assert!(e.contains("--overlap-grad-reduce"), "{e}");
        let mut s = settings();
        s.tp_comm_overlap = true;
        assert!(check_sweep_overlaps(&base, &[1, 8], &[], &s).is_ok());
        let e = check_sweep_overlaps(&base, &[1], &[], &s).unwrap_err();
        assert!(
            e.contains("--tp-comm-overlap") && e.contains("--tp 1"),
            "{e}"
        );
        base.gpu.sms = None;
        let e = check_sweep_overlaps(&base, &[], &[], &s).unwrap_err();
        assert!(e.contains("gpu.sms") && e.contains(&base.gpu.name), "{e}");
        // A dense model has no all-to-alls to hide.
        let mut s = settings();
        s.moe_a2a_overlap = true;
        let e = check_sweep_overlaps(&base, &[], &[], &s).unwrap_err();
        assert!(
            e.contains("--moe-a2a-overlap") && e.contains("dense"),
            "{e}"
        );
    }
}
