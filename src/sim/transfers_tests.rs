//! Blocking transfers against hand-computed timelines and Megatron's schedules.

use crate::schedule::{ScheduleInput, ScheduleKind, generate};
use crate::sim::{SimCosts, simulate};

fn run(kind: ScheduleKind, p: u32, m: u32, v: u32, comm: f64, blocking: bool) -> f64 {
    let s = generate(kind, &ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, comm)).unwrap();
    let costs = SimCosts {
        blocking_sends: blocking,
        ..SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, comm, 0.0)
    };
    match simulate(&s, &costs) {
        Ok(sim) => sim.makespan,
        Err(e) => panic!("{kind:?} p {p} m {m} v {v}: {e:?}"),
    }
}

#[test]
fn megatron_schedules_never_deadlock_with_blocking_sends() {
    for p in 1..=5 {
        for v in 1..=3 {
            for mult in 1..=3 {
                let m = p * mult;
                run(ScheduleKind::Interleaved, p, m, v, 0.1, true);
                run(ScheduleKind::OneFOneB, p, m, 1, 0.1, true);
            }
        }
    }
}
