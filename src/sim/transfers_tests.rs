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

/// 1F1B on 2 devices, 2 micro-batches, F 1 s, fused BW 2 s, transfers 0.1 s, worked by hand:
/// overlapped ends at 9.2 s; blocking at 9.3 s, because device 0's last backward waits for
/// the gradient transfer, which starts only once device 0 has posted its receive (after its
/// first backward, at 6.2 s) and device 1 has finished (7.2 s).
#[test]
fn one_f_one_b_rendezvous_matches_the_hand_timeline() {
    let over = run(ScheduleKind::OneFOneB, 2, 2, 1, 0.1, false);
    let block = run(ScheduleKind::OneFOneB, 2, 2, 1, 0.1, true);
    assert!((over - 9.2).abs() < 1e-9, "{over}");
    assert!((block - 9.3).abs() < 1e-9, "{block}");
}

/// Blocking never makes a Megatron schedule faster, and without transfer time it changes
/// nothing.
#[test]
fn blocking_costs_time_only_with_transfer_time() {
    for (kind, v) in [(ScheduleKind::OneFOneB, 1), (ScheduleKind::Interleaved, 2)] {
        for p in 2..=4 {
            let m = 2 * p;
            let over = run(kind, p, m, v, 0.2, false);
            let block = run(kind, p, m, v, 0.2, true);
            assert!(block >= over - 1e-9, "{kind:?} p {p}: {block} < {over}");
            let free = run(kind, p, m, v, 0.0, true);
            assert!((free - run(kind, p, m, v, 0.0, false)).abs() < 1e-9);
        }
    }
}

/// Send spans of a blocking run, by length.
fn send_lengths(kind: ScheduleKind, p: u32, m: u32, v: u32, comm: f64) -> Vec<f64> {
    let s = generate(kind, &ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, comm)).unwrap();
    let costs = SimCosts {
        blocking_sends: true,
        ..SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, comm, 0.0)
    };
    let sim = simulate(&s, &costs).unwrap();
    sim.timeline
        .spans
        .iter()
        .filter(|x| x.lane == crate::sim::Lane::Send)
        .map(|x| x.end - x.start)
        .collect()
}

/// Megatron-LM's interleaved steady round ends in one batched exchange that sends the
/// forward's output and the backward's gradient together through the device's one link:
/// the forward's output arrives after both (two transfer times); every other exchange
/// carries one tensor. 1F1B's exchanges carry one tensor each.
#[test]
fn an_interleaved_round_sends_its_two_tensors_one_after_the_other() {
    let lengths = send_lengths(ScheduleKind::Interleaved, 2, 4, 2, 0.1);
    assert!(
        lengths.iter().any(|l| (l - 0.2).abs() < 1e-9),
        "{lengths:?}"
    );
    assert!(
        lengths
            .iter()
            .all(|l| (l - 0.1).abs() < 1e-9 || (l - 0.2).abs() < 1e-9),
        "{lengths:?}"
    );
    let plain = send_lengths(ScheduleKind::OneFOneB, 2, 4, 1, 0.1);
    assert!(plain.iter().all(|l| (l - 0.1).abs() < 1e-9), "{plain:?}");
}
