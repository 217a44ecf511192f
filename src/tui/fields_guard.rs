//! The data-parallel rule on the fields: an edit that would leave zero 1 or 3, or an overlap
//! of the data-parallel collectives, with nothing to act on (`d x cp = 1`) is refused, by the
//! rule the scenario files and the command line follow
//! ([`crate::scenario::data_parallel_refusal`]). Leaving a two-copy schedule is the one edit
//! that goes through: the gradient overlap it allowed at `d x cp = 1` is turned off, and the
//! note says so, so that cycling the schedules never gets stuck.

use crate::scenario::{DataParallelUse, Scenario, data_parallel_refusal};

use super::fields::Field;

/// The field that holds a data-parallel setting.
fn field_of(what: DataParallelUse) -> Field {
    match what {
        DataParallelUse::Zero => Field::Zero,
        DataParallelUse::OverlapGradReduce => Field::OverlapGradReduce,
        DataParallelUse::OverlapParamGather => Field::ParamGather,
    }
}

/// Applies `edit` of `field` to `sc`, unless it makes the data-parallel rule refuse what it
/// did not refuse before: then `sc` is left as it was and the error says why and what to
/// change first (or, for the schedule, the overlap is turned off and a note says so).
pub(super) fn guarded<R>(
    sc: &mut Scenario,
    field: Field,
    edit: impl FnOnce(&mut Scenario) -> R,
) -> Result<R, String> {
    let before = sc.clone();
    let out = edit(sc);
    if data_parallel_refusal(&before).is_some() {
        // Already refused (a scenario from elsewhere): the edit may be the way out.
        return Ok(out);
    }
    let Some((what, reason)) = data_parallel_refusal(sc) else {
        return Ok(out);
    };
    let holder = field_of(what);
    if holder == field {
        *sc = before;
        return Err(format!(
            "{} on: set data d or ctx cp above 1 first, as {reason}",
            field.label()
        ));
    }
    if field == Field::Schedule && what == DataParallelUse::OverlapGradReduce {
        sc.plan.overlap_grad_reduce = false;
        sc.plan.overlap_param_gather = false;
        if data_parallel_refusal(sc).is_none() {
            return Err(format!(
                "schedule {}: {} turned off, as {reason}",
                sc.plan.schedule,
                holder.label()
            ));
        }
    }
    let now = field.value(sc);
    *sc = before;
    let fix = match what {
        DataParallelUse::Zero => "set zero 0".to_string(),
        _ => format!("turn {} off", holder.label()),
    };
    // What to do first, so that it shows on one line at 80 columns.
    Err(format!(
        "{} stays {} (not {now}): {fix} first, as {} {} needs d x cp above 1 ({reason})",
        field.label(),
        field.value(sc),
        holder.label(),
        holder.value(sc),
    ))
}

#[cfg(test)]
mod tests {
    use crate::scenario::{ScheduleKind, Zero};
    use crate::tui::fields::{Choices, Field, set_number, step};
    use crate::tui::fixture;

    /// The command line's rule: zero 1 with d x cp = 1 is refused, so neither a step nor a
    /// typed number takes d (or cp) there while zero is on, and the note says what to do.
    #[test]
    fn d_does_not_step_to_one_under_zero() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        sc.parallel.dp = 2;
        sc.parallel.cp = 1;
        sc.parallel.set_zero(Zero::Optimizer);
        let note = step(&mut sc, Field::Dp, -1, &c).unwrap_or_default();
        assert_eq!(sc.parallel.dp, 2, "{note}");
        assert!(
            note.starts_with(
                "data d stays 2 (not 1): set zero 0 first, as zero 1 dist opt needs d x cp \
                 above 1 (d x cp = 1 x 1 = 1"
            ),
            "{note}"
        );
        let e = set_number(&mut sc, Field::Dp, "1").unwrap_err();
        assert!(e.starts_with("data d = '1': data d stays 2"), "{e}");
        assert_eq!(sc.parallel.dp, 2);
        // With zero 0 the step goes through.
        sc.parallel.set_zero(Zero::Off);
        assert_eq!(step(&mut sc, Field::Dp, -1, &c), None);
        assert_eq!(sc.parallel.dp, 1);
    }

    /// At d x cp = 1 the gradient overlap has something to hide only on a two-copy schedule;
    /// leaving that schedule turns it off and says so.
    #[test]
    fn the_gradient_overlap_at_one_rank_follows_the_two_copy_schedules() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        sc.parallel.dp = 1;
        sc.parallel.cp = 1;
        sc.parallel.set_zero(Zero::Off);
        sc.plan.schedule = ScheduleKind::OneFOneB;
        sc.plan.overlap_grad_reduce = false;
        let note = step(&mut sc, Field::OverlapGradReduce, 1, &c).unwrap_or_default();
        assert!(!sc.plan.overlap_grad_reduce);
        assert!(
            note.starts_with("overlap on: set data d or ctx cp above 1 first, as d x cp = 1 x 1")
                && note.contains("dualpipe"),
            "{note}"
        );
        sc.plan.schedule = ScheduleKind::DualPipe;
        assert_eq!(step(&mut sc, Field::OverlapGradReduce, 1, &c), None);
        assert!(sc.plan.overlap_grad_reduce);
        // Stepping the schedule away from the two copies turns it off.
        let mut left = false;
        for _ in 0..ScheduleKind::ALL.len() {
            let note = step(&mut sc, Field::Schedule, 1, &c);
            if !sc.plan.schedule.replicates_stages() {
                let note = note.unwrap_or_default();
                assert!(note.contains("overlap turned off"), "{note}");
                left = true;
                break;
            }
        }
        assert!(left && !sc.plan.overlap_grad_reduce);
        // p 1 has no mirror: stepping p to 1 under dualpipe with the overlap is refused.
        sc.plan.schedule = ScheduleKind::DualPipe;
        sc.plan.overlap_grad_reduce = true;
        sc.parallel.pp = 2;
        let note = step(&mut sc, Field::Stages, -1, &c).unwrap_or_default();
        assert_eq!(sc.parallel.pp, 2, "{note}");
        assert!(
            note.contains("turn overlap off first, as overlap on"),
            "{note}"
        );
    }
}
