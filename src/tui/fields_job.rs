//! The job fields of the left panel that the command line has as flags: the stage-to-stage
//! sends (`--p2p`), `CUDA_DEVICE_MAX_CONNECTIONS` (`--device-max-connections`), the overlap of
//! the distributed optimizer's parameter all-gather (`--overlap-param-gather`) and the
//! tensor-parallel communication overlap (`--tp-comm-overlap`). Each refuses what the command
//! line refuses, by the engine's rules and in its words: a switch that cannot apply is left
//! off and the status line says why.

use crate::scenario::{P2p, Scenario, ranges};

/// The sends as shown.
pub fn p2p_value(sc: &Scenario) -> String {
    let name: &str = sc.plan.p2p.into();
    if sc.parallel.pp <= 1 {
        format!("{name} (p 1)")
    } else {
        name.to_string()
    }
}

/// Switches the stage-to-stage sends between overlapped and blocking; at p 1 there are none,
/// so the step is refused as the command line refuses `--p2p` there.
pub fn step_p2p(sc: &mut Scenario) -> Option<String> {
    let next = match sc.plan.p2p {
        P2p::Overlapped => P2p::Blocking,
        P2p::Blocking => P2p::Overlapped,
    };
    if sc.parallel.pp <= 1 {
        let name: &str = next.into();
        return Some(format!(
            "p2p {name}: with one pipeline stage (p 1) there are no stage-to-stage sends, so it \
             would do nothing; set stages p above 1 first"
        ));
    }
    sc.plan.p2p = next;
    None
}

/// `CUDA_DEVICE_MAX_CONNECTIONS` as shown.
pub fn connections_value(sc: &Scenario) -> String {
    sc.plan.device_max_connections.to_string()
}

/// Doubles or halves the connections within their range (1 to 32), saying where it stops.
pub fn step_connections(sc: &mut Scenario, delta: i32) -> Option<String> {
    let range = ranges::DEVICE_MAX_CONNECTIONS;
    let now = sc.plan.device_max_connections.max(1);
    let next = if delta > 0 {
        now.saturating_mul(2)
    } else {
        now / 2
    };
    if f64::from(next) > range.max || f64::from(next) < range.min {
        return Some(format!("dev conns stays {now}: {}", range.allowed()));
    }
    sc.plan.device_max_connections = next;
    None
}

/// Sets the connections from typed text, refused with the range of the one table.
pub fn set_connections(sc: &mut Scenario, text: &str) -> Result<(), String> {
    let range = ranges::DEVICE_MAX_CONNECTIONS;
    let n: u64 = text.trim().parse().map_err(|_| range.allowed())?;
    range.check_count(n).map_err(|e| e.allowed)?;
    sc.plan.device_max_connections = u32::try_from(n).map_err(|_| range.allowed())?;
    Ok(())
}

/// An on/off switch as shown.
fn on(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// The parameter all-gather overlap as shown.
pub fn param_gather_value(sc: &Scenario) -> String {
    on(sc.plan.overlap_param_gather)
}

/// The tensor-parallel communication overlap as shown.
pub fn tp_overlap_value(sc: &Scenario) -> String {
    on(sc.plan.tp_comm_overlap)
}

/// Turns a switch of the plan on or off (`flip`); turning it on is undone with the engine's
/// reason when its rule refuses it (`field`, the scenario key the rule names).
fn toggle(
    sc: &mut Scenario,
    label: &str,
    field: &str,
    flip: fn(&mut Scenario) -> bool,
) -> Option<String> {
    if !flip(sc) {
        return None;
    }
    match sc.validate() {
        Err(e) if e.field == field => {
            flip(sc);
            Some(format!("{label} on: {}", e.allowed))
        }
        _ => None,
    }
}

/// Turns the parameter all-gather overlap on or off. On is refused with one data-parallel
/// rank per stage (the command line's rule and words), and by the engine's rule without zero
/// 1 or 3 or without the gradient overlap.
pub fn toggle_param_gather(sc: &mut Scenario) -> Option<String> {
    if !sc.plan.overlap_param_gather
        && let Some(reason) = sc.parallel.overlap_refusal("parameter all-gather")
    {
        return Some(format!(
            "param ag on: {reason}; set data d or ctx cp above 1 first"
        ));
    }
    toggle(sc, "param ag", "plan.overlap_param_gather", |sc| {
        sc.plan.overlap_param_gather = !sc.plan.overlap_param_gather;
        sc.plan.overlap_param_gather
    })
}

/// Turns the tensor-parallel communication overlap on or off; on is refused by the engine's
/// rule (t > 1 with sequence parallelism, inside a node, a GPU with `sms`).
pub fn toggle_tp_overlap(sc: &mut Scenario) -> Option<String> {
    toggle(sc, "tp ovl", "plan.tp_comm_overlap", |sc| {
        sc.plan.tp_comm_overlap = !sc.plan.tp_comm_overlap;
        sc.plan.tp_comm_overlap
    })
}

#[cfg(test)]
mod tests {
    use super::super::fields::{Choices, Field, set_number, step};
    use crate::scenario::{P2p, Zero};
    use crate::tui::fixture;

    #[test]
    fn p2p_switches_and_is_refused_at_one_stage() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        assert_eq!(sc.plan.p2p, P2p::Overlapped);
        assert_eq!(step(&mut sc, Field::P2p, 1, &c), None);
        assert_eq!(sc.plan.p2p, P2p::Blocking);
        assert_eq!(Field::P2p.value(&sc), "blocking");
        sc.parallel.pp = 1;
        let note = step(&mut sc, Field::P2p, 1, &c).unwrap_or_default();
        assert!(
            note.contains("p 1") && note.contains("no stage-to-stage sends"),
            "{note}"
        );
        assert_eq!(sc.plan.p2p, P2p::Blocking);
        assert_eq!(Field::P2p.value(&sc), "blocking (p 1)");
    }

    #[test]
    fn connections_double_within_their_range_and_typed_values_say_it() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        assert_eq!(sc.plan.device_max_connections, 1);
        let note = step(&mut sc, Field::DeviceConnections, -1, &c).unwrap_or_default();
        assert!(note.contains("from 1 to 32"), "{note}");
        step(&mut sc, Field::DeviceConnections, 1, &c);
        assert_eq!(sc.plan.device_max_connections, 2);
        set_number(&mut sc, Field::DeviceConnections, "32").unwrap();
        let note = step(&mut sc, Field::DeviceConnections, 1, &c).unwrap_or_default();
        assert!(note.contains("stays 32"), "{note}");
        for bad in ["0", "33", "-1", "x"] {
            let e = set_number(&mut sc, Field::DeviceConnections, bad).unwrap_err();
            assert!(e.contains("a whole number from 1 to 32"), "{bad}: {e}");
        }
        assert_eq!(sc.plan.device_max_connections, 32);
    }

    #[test]
    fn the_overlaps_are_refused_by_the_engines_rules() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        // d x cp = 1: nothing to overlap.
        sc.parallel.dp = 1;
        sc.parallel.cp = 1;
        let note = step(&mut sc, Field::ParamGather, 1, &c).unwrap_or_default();
        assert!(note.contains("d x cp = 1 x 1 = 1"), "{note}");
        assert!(!sc.plan.overlap_param_gather);
        // Zero 0: the engine's rule (it overlaps the distributed optimizer's all-gather).
        sc.parallel.dp = 2;
        sc.parallel.set_zero(Zero::Off);
        let note = step(&mut sc, Field::ParamGather, 1, &c).unwrap_or_default();
        assert!(note.contains("zero is 1 or 3"), "{note}");
        assert!(!sc.plan.overlap_param_gather);
        sc.parallel.set_zero(Zero::Optimizer);
        sc.plan.overlap_grad_reduce = true;
        assert_eq!(step(&mut sc, Field::ParamGather, 1, &c), None);
        assert!(sc.plan.overlap_param_gather);
        assert_eq!(step(&mut sc, Field::ParamGather, 1, &c), None);
        assert!(!sc.plan.overlap_param_gather);
        // tp overlap: t 1 is refused in the engine's words; t 8 with sp is taken.
        sc.parallel.tp = 1;
        let note = step(&mut sc, Field::TpOverlap, 1, &c).unwrap_or_default();
        assert!(note.contains("without tensor parallelism"), "{note}");
        assert!(!sc.plan.tp_comm_overlap);
        sc.parallel.tp = 8;
        sc.parallel.sequence_parallel = true;
        assert_eq!(step(&mut sc, Field::TpOverlap, 1, &c), None);
        assert!(sc.plan.tp_comm_overlap);
        assert_eq!(Field::TpOverlap.value(&sc), "on");
    }
}
