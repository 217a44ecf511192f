//! The mixture-of-experts fields of the left panel: the expert-parallel size `ep`, the
//! routing imbalance and the all-to-all overlap. Each refuses what the command line refuses,
//! in the engine's words; for a dense model each shows its fixed value with the reason and
//! an edit says why it changes nothing.

use crate::scenario::{Scenario, ranges};

/// The routing imbalance's step.
const IMBALANCE_STEP: f64 = 0.1;

/// Whether the scenario's model routes tokens to experts.
fn is_moe(sc: &Scenario) -> bool {
    sc.model.moe.is_some()
}

/// The note for an edit of a MoE field on a dense model.
fn dense_note(sc: &Scenario, label: &str) -> String {
    format!(
        "{label} changes nothing here: {} is dense (it has no experts; pick a mixture-of-experts \
         model)",
        sc.model.name
    )
}

/// The `ep` field as shown.
pub fn ep_value(sc: &Scenario) -> String {
    if is_moe(sc) {
        sc.parallel.ep.to_string()
    } else {
        "1 (dense)".into()
    }
}

/// The routing imbalance as shown.
pub fn imbalance_value(sc: &Scenario) -> String {
    if is_moe(sc) {
        format!("{:.2}", sc.plan.routing_imbalance)
    } else {
        "1 (dense)".into()
    }
}

/// The all-to-all overlap as shown.
pub fn a2a_value(sc: &Scenario) -> String {
    match (is_moe(sc), sc.plan.moe_a2a_overlap) {
        (false, _) => "off (dense)".into(),
        (true, true) => "on".into(),
        (true, false) => "off".into(),
    }
}

/// The `ep` values the layout allows: divisors of `t x cp x d / etp` that divide the experts.
pub fn ep_choices(sc: &Scenario) -> Vec<u32> {
    let Some(moe) = sc.model.moe else {
        return vec![1];
    };
    let par = &sc.parallel;
    let stage = u64::from(par.tp) * u64::from(par.cp) * u64::from(par.dp);
    let etp = u64::from(par.etp.max(1));
    let most = stage.min(moe.experts);
    (1..=most)
        .filter(|&v| stage.is_multiple_of(v * etp) && moe.experts.is_multiple_of(v))
        .filter_map(|v| u32::try_from(v).ok())
        .collect()
}

/// Steps `ep` to the next allowed value up or down; returns the note for the status line
/// when it cannot move (the end of the list, or the engine's refusal, e.g. sequence
/// parallelism off with `t > 1`).
pub fn step_ep(sc: &mut Scenario, delta: i32) -> Option<String> {
    if !is_moe(sc) {
        return Some(dense_note(sc, "ep"));
    }
    let now = sc.parallel.ep;
    let choices = ep_choices(sc);
    let next = if delta > 0 {
        choices.iter().copied().find(|&v| v > now)
    } else {
        choices.iter().rev().copied().find(|&v| v < now)
    };
    let Some(next) = next else {
        let par = &sc.parallel;
        return Some(format!(
            "ep stays {now}: the allowed values are {} (divisors of t x cp x d / etp = {} x {} \
             x {} / {} that divide the {} experts)",
            list(&choices),
            par.tp,
            par.cp,
            par.dp,
            par.etp,
            sc.model.moe.map_or(0, |m| m.experts)
        ));
    };
    sc.parallel.ep = next;
    if let Err(e) = sc.check_expert_layout() {
        sc.parallel.ep = now;
        return Some(format!("ep = {next}: {}", e.allowed));
    }
    None
}

fn list(values: &[u32]) -> String {
    let shown: Vec<String> = values.iter().map(u32::to_string).collect();
    shown.join(", ")
}

/// Sets `ep` from typed text, checked by the ranges table and the engine's layout rules (what
/// `--ep` gets); the error is the reason, without the field's label.
pub fn set_ep(sc: &mut Scenario, text: &str) -> Result<(), String> {
    let n: u64 = text.trim().parse().map_err(|_| ranges::EP.allowed())?;
    ranges::EP.check_count(n).map_err(|e| e.allowed)?;
    let n = u32::try_from(n).map_err(|_| ranges::EP.allowed())?;
    let before = sc.parallel.ep;
    sc.parallel.ep = n;
    sc.check_expert_layout().map_err(|e| {
        sc.parallel.ep = before;
        e.allowed
    })
}

/// Steps the routing imbalance by 0.1 (never below 1).
pub fn step_imbalance(sc: &mut Scenario, delta: i32) -> Option<String> {
    if !is_moe(sc) {
        return Some(dense_note(sc, "imbalance"));
    }
    let next = sc.plan.routing_imbalance + IMBALANCE_STEP * f64::from(delta);
    let next = ((next * 10.0).round() / 10.0)
        .clamp(ranges::ROUTING_IMBALANCE.min, ranges::ROUTING_IMBALANCE.max);
    sc.plan.routing_imbalance = next;
    None
}

/// Sets the routing imbalance from typed text (at least 1; 1 on a dense model).
pub fn set_imbalance(sc: &mut Scenario, text: &str) -> Result<(), String> {
    let x: f64 = text
        .trim()
        .parse()
        .map_err(|_| ranges::ROUTING_IMBALANCE.allowed())?;
    ranges::ROUTING_IMBALANCE.check(x).map_err(|e| e.allowed)?;
    let before = sc.plan.routing_imbalance;
    sc.plan.routing_imbalance = x;
    sc.check_expert_layout().map_err(|e| {
        sc.plan.routing_imbalance = before;
        e.allowed
    })
}

/// Turns the all-to-all overlap on or off; turning it on is refused with the engine's reason
/// where it cannot apply (a dense model, a schedule without overlapped pairs).
pub fn toggle_a2a(sc: &mut Scenario) -> Option<String> {
    sc.plan.moe_a2a_overlap = !sc.plan.moe_a2a_overlap;
    match sc.validate() {
        Err(e) if e.field == "plan.moe_a2a_overlap" => {
            sc.plan.moe_a2a_overlap = !sc.plan.moe_a2a_overlap;
            Some(format!("a2a ovl on: {}", e.allowed))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fields::{Choices, Field, set_number, step};
    use crate::scenario::{ScheduleKind, Zero};
    use crate::tui::fixture;
    use crate::{Catalog, ScenarioOverrides};

    /// qwen3-30b-a3b (128 experts) on H100s at t 1 x cp 1 x d 8, ep 8.
    fn moe() -> crate::scenario::Scenario {
        let catalog = Catalog::builtin();
        let mut sc = catalog.scenario("gpt3-175b-16k").unwrap();
        ScenarioOverrides {
            model: Some("qwen3-30b-a3b".into()),
            gpu: Some("h100-80gb".into()),
            pp: Some(4),
            tp: Some(1),
            dp: Some(8),
            ep: Some(8),
            ..Default::default()
        }
        .apply(&mut sc, &catalog)
        .unwrap();
        sc
    }

    #[test]
    fn ep_steps_through_the_divisors_of_the_stage_that_divide_the_experts() {
        let mut sc = moe();
        let c = Choices::default();
        assert_eq!(super::ep_choices(&sc), vec![1, 2, 4, 8]);
        assert_eq!(Field::Ep.value(&sc), "8");
        let note = step(&mut sc, Field::Ep, 1, &c).unwrap();
        assert_eq!(sc.parallel.ep, 8);
        assert!(note.contains("1, 2, 4, 8"), "{note}");
        step(&mut sc, Field::Ep, -1, &c);
        assert_eq!(sc.parallel.ep, 4);
        // d 6: the stage's 6 GPUs allow 1, 2, 3, 6, of which 128 experts take 1 and 2.
        sc.parallel.dp = 6;
        assert_eq!(super::ep_choices(&sc), vec![1, 2]);
        sc.parallel.ep = 1;
        step(&mut sc, Field::Ep, 1, &c);
        assert_eq!(sc.parallel.ep, 2);
        // t 2 without sequence parallelism: the engine's refusal, the value kept.
        sc.parallel.dp = 8;
        sc.parallel.tp = 2;
        sc.parallel.sequence_parallel = false;
        sc.parallel.ep = 1;
        let note = step(&mut sc, Field::Ep, 1, &c).unwrap();
        assert_eq!(sc.parallel.ep, 1);
        assert!(note.contains("sequence parallelism"), "{note}");
    }

    #[test]
    fn typed_ep_gets_the_command_lines_checks() {
        let mut sc = moe();
        set_number(&mut sc, Field::Ep, "2").unwrap();
        assert_eq!(sc.parallel.ep, 2);
        let e = set_number(&mut sc, Field::Ep, "0").unwrap_err();
        assert!(
            e.contains("expert ep = '0'") && e.contains("a whole number from 1"),
            "{e}"
        );
        let e = set_number(&mut sc, Field::Ep, "x").unwrap_err();
        assert!(e.contains("a whole number from 1"), "{e}");
        let e = set_number(&mut sc, Field::Ep, "3").unwrap_err();
        assert!(e.contains("a divisor of model.experts (128)"), "{e}");
        let e = set_number(&mut sc, Field::Ep, "16").unwrap_err();
        assert!(e.contains("must divide a stage's GPUs"), "{e}");
        assert_eq!(sc.parallel.ep, 2);
    }

    #[test]
    fn imbalance_steps_by_a_tenth_and_stays_at_least_one() {
        let mut sc = moe();
        let c = Choices::default();
        assert_eq!(Field::Imbalance.value(&sc), "1.00");
        step(&mut sc, Field::Imbalance, 1, &c);
        step(&mut sc, Field::Imbalance, 1, &c);
        assert_eq!(sc.plan.routing_imbalance, 1.2);
        for _ in 0..5 {
            step(&mut sc, Field::Imbalance, -1, &c);
        }
        assert_eq!(sc.plan.routing_imbalance, 1.0);
        set_number(&mut sc, Field::Imbalance, "1.35").unwrap();
        assert_eq!(Field::Imbalance.value(&sc), "1.35");
        let e = set_number(&mut sc, Field::Imbalance, "0.5").unwrap_err();
        assert!(
            e.contains("imbalance = '0.5'") && e.contains("a number from 1"),
            "{e}"
        );
        assert_eq!(sc.plan.routing_imbalance, 1.35);
    }

    #[test]
    fn the_all_to_all_overlap_needs_paired_schedules() {
        let mut sc = moe();
        let c = Choices::default();
        sc.plan.schedule = ScheduleKind::Gpipe;
        let note = step(&mut sc, Field::A2aOverlap, 1, &c).unwrap();
        assert!(!sc.plan.moe_a2a_overlap);
        assert!(
            note.contains("a2a ovl on: off for") && note.contains("pairs"),
            "{note}"
        );
        sc.plan.schedule = ScheduleKind::DualPipeV;
        assert_eq!(step(&mut sc, Field::A2aOverlap, 1, &c), None);
        assert_eq!(Field::A2aOverlap.value(&sc), "on");
        step(&mut sc, Field::A2aOverlap, 1, &c);
        assert!(!sc.plan.moe_a2a_overlap);
    }

    #[test]
    fn a_dense_model_shows_the_fields_fixed_and_says_why_an_edit_does_nothing() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        assert_eq!(Field::Ep.value(&sc), "1 (dense)");
        assert_eq!(Field::Imbalance.value(&sc), "1 (dense)");
        assert_eq!(Field::A2aOverlap.value(&sc), "off (dense)");
        for field in [Field::Ep, Field::Imbalance] {
            let note = step(&mut sc, field, 1, &c).unwrap();
            assert!(
                note.contains("changes nothing") && note.contains("dense"),
                "{note}"
            );
        }
        assert_eq!((sc.parallel.ep, sc.plan.routing_imbalance), (1, 1.0));
        sc.plan.schedule = ScheduleKind::DualPipeV;
        let note = step(&mut sc, Field::A2aOverlap, 1, &c).unwrap();
        assert!(note.contains("off for a dense model"), "{note}");
        assert!(!sc.plan.moe_a2a_overlap);
        let e = set_number(&mut sc, Field::Ep, "2").unwrap_err();
        assert!(e.contains("1 for a dense model"), "{e}");
    }

    #[test]
    fn zero_1_and_3_are_refused_with_one_data_parallel_rank() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        sc.parallel.set_zero(Zero::Off);
        sc.parallel.dp = 1;
        sc.parallel.cp = 1;
        for delta in [1, -1] {
            let note = step(&mut sc, Field::Zero, delta, &c).unwrap();
            let reason = Zero::Optimizer.refusal_over(1, 1).unwrap();
            assert!(note.contains(&reason), "{note}");
            assert!(note.contains("d x cp = 1 x 1 = 1"), "{note}");
            assert_eq!(sc.parallel.zero(), Zero::Off);
        }
        // Two context-parallel ranks give something to shard.
        sc.parallel.cp = 2;
        assert_eq!(step(&mut sc, Field::Zero, 1, &c), None);
        assert_eq!(sc.parallel.zero(), Zero::Optimizer);
    }
}
