//! DualPipe and DualPipe-V against their source and their closed forms.
//!
//! `goldens/dualpipe.txt` holds the per-rank orders of deepseek-ai/DualPipe's own
//! `DualPipe.step()` and `DualPipeV.step()`, recorded by running them unchanged with their
//! compute and point-to-point helpers replaced by recorders (outside this repository; the
//! file's header says how to read it). The closed forms are the DualPipe README's table
//! (the DeepSeek-V3 report's): bubble `(PP/2 - 1)(F&B + B - 3W)` per device with `B` the
//! full backward and `F&B` an overlapped pair, `PP + 1` stage-activations per device, and
//! twice the parameters.

use crate::sched_common;

use pipescope::{
    Lane, OpKind, Placement, Schedule, ScheduleInput, ScheduleKind, SimCosts, SpanKind, generate,
    simulate,
};
use sched_common::{check_invariants, run_uniform};

const GOLDENS: &str = include_str!("goldens/dualpipe.txt");

/// One op in the goldens' notation: kind, then the micro-batch (DualPipe-V: `mb.chunk`).
fn token(kind: ScheduleKind, op: pipescope::Op) -> String {
    let k = match op.kind {
        OpKind::F => "F",
        OpKind::B => "B",
        OpKind::W => "W",
        OpKind::BW => "BW",
    };
    match kind {
        ScheduleKind::DualPipeV => format!("{k}{}.{}", op.micro_batch, op.chunk),
        _ => format!("{k}{}", op.micro_batch),
    }
}

/// Every device's order in the goldens' notation, an overlapped pair written `F&BW`.
fn notation(s: &Schedule) -> Vec<String> {
    (0..s.p)
        .map(|d| {
            let ops = &s.devices[d as usize];
            let mut out = Vec::new();
            let mut i = 0;
            while i < ops.len() {
                if s.pair_partner(d, i) == Some(i + 1) {
                    out.push(format!(
                        "{}&{}",
                        token(s.kind, ops[i]),
                        token(s.kind, ops[i + 1])
                    ));
                    i += 2;
                } else {
                    out.push(token(s.kind, ops[i]));
                    i += 1;
                }
            }
            out.join(" ")
        })
        .collect()
}

/// The goldens' sections: (schedule, p, m, one line per rank).
fn sections() -> Vec<(ScheduleKind, u32, u32, Vec<&'static str>)> {
    let mut out: Vec<(ScheduleKind, u32, u32, Vec<&'static str>)> = Vec::new();
    for line in GOLDENS.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split(' ').collect();
        if let [name, p, m] = words[..]
            && let (Some(p), Some(m)) = (p.strip_prefix("p="), m.strip_prefix("m="))
        {
            out.push((
                name.parse().unwrap(),
                p.parse().unwrap(),
                m.parse().unwrap(),
                vec![],
            ));
        } else {
            out.last_mut().unwrap().3.push(line);
        }
    }
    out
}

#[test]
fn every_rank_runs_the_sources_order_and_pairs() {
    let all = sections();
    assert_eq!(all.len(), 15);
    for (kind, p, m, want) in all {
        assert_eq!(
            want.len(),
            p as usize,
            "{kind} p={p} m={m}: one line per rank"
        );
        let s = generate(kind, &ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0)).unwrap();
        assert_eq!(notation(&s), want, "{kind} p={p} m={m}");
    }
}

#[test]
fn dualpipe_places_two_copies_in_opposite_directions() {
    let s = generate(
        ScheduleKind::DualPipe,
        &ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0),
    )
    .unwrap();
    assert_eq!(s.placement, Placement::Chimera);
    assert_eq!(s.stages(), 4);
    assert_eq!(
        ScheduleKind::DualPipe.stage_map(4, 2),
        vec![vec![0, 3], vec![1, 2], vec![2, 1], vec![3, 0]]
    );
    for ops in &s.devices {
        assert_eq!(ops.iter().filter(|o| o.kind == OpKind::F).count(), 8);
        for op in ops {
            // The forward direction's micro-batches run on chunk 0, the reverse one's on 1.
            assert_eq!(op.chunk, u32::from(op.micro_batch >= 4), "{op:?}");
        }
    }
    // The reverse direction enters at the last device: its first op is stage 0's forward.
    assert_eq!(s.locate(0, 4), (3, 1));
    assert_eq!(s.devices[3][0], pipescope::Op::new(OpKind::F, 4, 1));
}

/// `count` micro-batches per phase on rank `h` of `n`: step 4's pairs (less the unpaired
/// first one of rank n - 1) and step 5's.
fn pairs_of_rank(n: u32, h: u32, count: u32) -> usize {
    let step4 = 2 * (count + h + 1 - 2 * n) - u32::from(h == n - 1);
    (step4 + (n - h - 1)) as usize
}

#[test]
fn pairs_are_steps_four_and_five() {
    for p in (2..=12u32).step_by(2) {
        for m in (2 * p..=2 * p + 8).step_by(2) {
            let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0);
            let s = generate(ScheduleKind::DualPipe, &input).unwrap();
            for r in 0..p {
                let h = r.min(p - 1 - r);
                let starts = s.pair_starts(r);
                assert_eq!(
                    starts.len(),
                    pairs_of_rank(p / 2, h, m / 2),
                    "p={p} m={m} r={r}"
                );
                let ops = &s.devices[r as usize];
                for &i in starts {
                    let (f, b) = (ops[i as usize], ops[i as usize + 1]);
                    assert_eq!((f.kind, b.kind), (OpKind::F, OpKind::BW));
                    assert_ne!(f.chunk, b.chunk, "a pair joins the two directions");
                }
            }
        }
    }
    for p in 1..=6u32 {
        let m = 2 * p + 3;
        let s = generate(
            ScheduleKind::DualPipeV,
            &ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0),
        )
        .unwrap();
        for r in 0..p {
            assert_eq!(
                s.pair_starts(r).len(),
                pairs_of_rank(p, r, m),
                "p={p} r={r}"
            );
        }
    }
}

#[test]
fn dualpipe_refuses_what_the_source_asserts() {
    for (p, m, rule) in [
        (3, 12, "an even p"),
        (4, 9, "an even m"),
        (4, 6, "m >= 2p"),
        (6, 10, "m >= 2p"),
    ] {
        let err = generate(
            ScheduleKind::DualPipe,
            &ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, 0.0),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(rule), "p={p} m={m}: {err}");
        assert!(err.contains("dualpipe"), "{err}");
    }
}

#[test]
fn simulation_keeps_the_invariants_and_runs_each_pair_as_one_unit() {
    for p in (2..=8u32).step_by(2) {
        for m in [2 * p, 2 * p + 2, 3 * p] {
            for (fbw, comm) in [([1.0, 1.0, 1.0], 0.0), ([1.0, 2.0, 0.5], 0.3)] {
                for kind in [ScheduleKind::DualPipe, ScheduleKind::DualPipeV] {
                    let Some((s, sim)) = run_uniform(kind, p, m, 2, fbw, comm) else {
                        panic!("{kind} p={p} m={m}");
                    };
                    check_invariants(&s, &sim, fbw, comm);
                    for d in 0..p {
                        let lane: Vec<_> = sim
                            .timeline
                            .spans
                            .iter()
                            .filter(|x| x.device == d && x.lane == Lane::Compute)
                            .collect();
                        for (i, span) in lane.iter().enumerate() {
                            let partner = s.pair_partner(d, i);
                            assert_eq!(span.paired, partner.is_some(), "{kind} d={d} op {i}");
                            if partner == Some(i + 1) {
                                // Back to back: the backward starts when the forward ends.
                                assert!((lane[i + 1].start - span.end).abs() < 1e-9);
                            }
                        }
                    }
                    // A paired forward's output leaves at the pair's end: the next stage's
                    // forward never starts before it (plus the transfer).
                    for span in sim.timeline.spans.iter().filter(|x| x.paired) {
                        if span.kind != SpanKind::F {
                            continue;
                        }
                        let stage = s.stage_of(span.device, span.chunk, span.micro_batch);
                        if stage + 1 == s.stages() {
                            continue;
                        }
                        let pair_end = sim
                            .timeline
                            .spans
                            .iter()
                            .find(|x| {
                                x.device == span.device
                                    && x.start >= span.end - 1e-12
                                    && x.lane == Lane::Compute
                                    && x.kind != SpanKind::F
                            })
                            .unwrap()
                            .end;
                        let (nd, nc) = s.locate(stage + 1, span.micro_batch);
                        let next = sim
                            .timeline
                            .spans
                            .iter()
                            .find(|x| {
                                x.device == nd
                                    && x.chunk == nc
                                    && x.kind == SpanKind::F
                                    && x.micro_batch == span.micro_batch
                            })
                            .unwrap();
                        let hop = if nd == span.device { 0.0 } else { comm };
                        assert!(next.start + 1e-9 >= pair_end + hop, "{kind} p={p} m={m}");
                    }
                }
            }
        }
    }
}

/// Per device `makespan - busy` with F = B = W = `x` (B the input-gradient half) and no
/// transfer time equals the README's `(PP/2 - 1)(F&B + B_full - 3W)` with
/// `F&B = F + B_full`, `B_full = B + W`: on `p` devices PP = p for DualPipe, 2p for
/// DualPipe-V (the same `2(PP/2 - 1) x`).
#[test]
fn bubble_is_the_deepseek_v3_formula() {
    for x in [1.0, 0.5, 3.0] {
        for p in 1..=12u32 {
            for (kind, pp) in [
                (ScheduleKind::DualPipe, p),
                (ScheduleKind::DualPipeV, 2 * p),
            ] {
                if kind == ScheduleKind::DualPipe && p % 2 == 1 {
                    continue;
                }
                for m in (2 * p..=2 * p + 10).step_by(2) {
                    let (_, sim) = run_uniform(kind, p, m, 2, [x, x, x], 0.0).unwrap();
                    let (f, b_full, w) = (x, 2.0 * x, x);
                    let f_and_b = f + b_full;
                    let want = f64::from(pp / 2 - 1) * (f_and_b + b_full - 3.0 * w);
                    for dev in &sim.devices {
                        let idle = sim.makespan - dev.busy;
                        assert!(
                            (idle - want).abs() < 1e-9,
                            "{kind} p={p} m={m} x={x} device {}: {idle} vs {want}",
                            dev.device
                        );
                    }
                    // Every device works m forwards and m backwards (two directions or two
                    // chunks of m/2 or m micro-batches each).
                    let per_device = if kind == ScheduleKind::DualPipe {
                        1.0
                    } else {
                        2.0
                    };
                    let busy = per_device * f64::from(m) * 3.0 * x;
                    assert!((sim.makespan - busy - want).abs() < 1e-9);
                }
            }
        }
    }
}

/// `PP + 1` stage-activations per device (README): DualPipe's chunk is one of its p stages,
/// so p + 1 chunk-activations; DualPipe-V's is half a device's share, 2p + 1.
#[test]
fn peak_activations_are_pp_plus_one() {
    for p in (2..=16u32).step_by(2) {
        for m in (2 * p..=2 * p + 12).step_by(2) {
            let (s, sim) = run_uniform(ScheduleKind::DualPipe, p, m, 2, [1.0; 3], 0.0).unwrap();
            let peaks = s.peak_in_flight();
            assert_eq!(peaks.iter().max(), Some(&(p + 1)), "p={p} m={m}");
            let simulated: Vec<u32> = sim.devices.iter().map(|d| d.peak_in_flight).collect();
            assert_eq!(peaks, simulated);
        }
    }
}

/// With blocking sends (`--p2p blocking`) a pair's forward still sends at the pair's end (not
/// at its own), and its device's next op does not start before that send is done.
#[test]
fn a_blocking_send_of_a_paired_forward_leaves_at_the_pairs_end() {
    let (fbw, comm) = ([1.0, 1.0, 1.0], 0.5);
    for (p, m) in [(4, 8), (6, 14)] {
        for kind in [ScheduleKind::DualPipe, ScheduleKind::DualPipeV] {
            let s = sched_common::gen_uniform(kind, p, m, 2, fbw, comm).unwrap();
            let mut costs = SimCosts::abstract_run(&s, fbw[0], fbw[1], fbw[2], comm, fbw[0]);
            costs.blocking_sends = true;
            let sim = simulate(&s, &costs).unwrap();
            check_invariants(&s, &sim, fbw, comm);
            // The first boundary slower than the rest: device 0's paired forward then sends
            // longer than the backward beside it, so only its own send can hold the device.
            costs.comm_s = vec![3.0 * comm, comm];
            let sim = simulate(&s, &costs).unwrap();
            let spans = &sim.timeline.spans;
            let mut checked = 0;
            for (f, b) in sim.timeline.pairs() {
                let (f, b) = (&spans[f], &spans[b]);
                // Only a forward whose next stage is on another device sends.
                let stage = s.stage_of(f.device, f.chunk, f.micro_batch);
                if stage + 1 == s.stages() || s.locate(stage + 1, f.micro_batch).0 == f.device {
                    continue;
                }
                // Its send: the first of its (micro-batch, chunk) after it (the backward's
                // comes much later).
                let send = spans
                    .iter()
                    .filter(|x| {
                        x.lane == Lane::Send
                            && x.device == f.device
                            && x.micro_batch == f.micro_batch
                            && x.chunk == f.chunk
                            && x.start >= f.end - 1e-9
                    })
                    .min_by(|x, y| x.start.total_cmp(&y.start))
                    .unwrap();
                assert!(
                    send.start + 1e-9 >= b.end,
                    "{kind} p={p} m={m}: {send:?} {b:?}"
                );
                // The device's next compute op waits for the send.
                if let Some(next) = spans
                    .iter()
                    .filter(|x| x.lane == Lane::Compute && x.device == f.device)
                    .find(|x| x.start >= b.end - 1e-9 && !std::ptr::eq(*x, b))
                {
                    assert!(
                        next.start + 1e-9 >= send.end,
                        "{kind} p={p} m={m}: {f:?} {b:?} {send:?} {next:?}"
                    );
                }
                checked += 1;
            }
            assert!(checked > 0, "{kind} p={p} m={m}");
        }
    }
}
