//! Simulator details worked by hand: recomputation (plain and Lynx-overlapped), offload
//! copies, transfers, FLOP utilisation, error cases, and the order-only in-flight analysis.

#![allow(clippy::unwrap_used)]

use pipescope::{
    ChunkCosts, Op, OpKind, Placement, Schedule, ScheduleInput, ScheduleKind, SimCosts, SimError,
    Simulation, SpanKind, generate, simulate,
};

fn make(kind: ScheduleKind, p: u32, m: u32) -> Schedule {
    let input = ScheduleInput::uniform(p, m, 1, 1.0, 1.0, 1.0, 0.0);
    generate(kind, &input).unwrap()
}

fn costs(p: usize, c: ChunkCosts) -> SimCosts {
    SimCosts {
        chunks: vec![vec![c]; p],
        ..SimCosts::default()
    }
}

fn spans_of(sim: &Simulation, kind: SpanKind) -> Vec<(u32, f64, f64)> {
    sim.timeline
        .spans
        .iter()
        .filter(|s| s.kind == kind)
        .map(|s| (s.device, s.start, s.end))
        .collect()
}

#[test]
fn recompute_runs_right_before_its_backward() {
    // One device, GPipe, m = 2: F0 0-1, F1 1-2, R0 2-2.5, BW0 2.5-4.5, R1 4.5-5, BW1 5-7.
    let s = make(ScheduleKind::Gpipe, 1, 2);
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.5,
        w_s: 0.5,
        r_s: 0.5,
        ..ChunkCosts::default()
    };
    let sim = simulate(&s, &costs(1, c)).unwrap();
    assert_eq!(
        spans_of(&sim, SpanKind::R),
        vec![(0, 2.0, 2.5), (0, 4.5, 5.0)]
    );
    assert_eq!(sim.makespan, 7.0);
    assert_eq!(sim.devices[0].busy, 7.0);
}

#[test]
fn lynx_overlaps_recompute_with_the_gradient_wait() {
    // 1F1B, p = 2, m = 1, F = B = 1, R = 0.5. Device 1: F 1-2, R 2-2.5, BW 2.5-3.5.
    // Plain: device 0 R 3.5-4, BW 4-5. Overlapped: R 1-1.5, BW 3.5-4.5.
    let s = make(ScheduleKind::OneFOneB, 2, 1);
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.0,
        r_s: 0.5,
        ..ChunkCosts::default()
    };
    let mut k = costs(2, c);
    let plain = simulate(&s, &k).unwrap();
    assert_eq!(plain.makespan, 5.0);
    assert!(spans_of(&plain, SpanKind::R).contains(&(0, 3.5, 4.0)));
    k.overlap_recompute = true;
    let lynx = simulate(&s, &k).unwrap();
    assert_eq!(lynx.makespan, 4.5);
    assert!(spans_of(&lynx, SpanKind::R).contains(&(0, 1.0, 1.5)));
    assert!(spans_of(&lynx, SpanKind::BW).contains(&(0, 3.5, 4.5)));
}

#[test]
fn lynx_hides_recompute_under_the_tensor_parallel_collectives() {
    // One device, GPipe, m = 2: nothing to wait for, so only the collectives hide R.
    // F = 1, B = 1.5 (0.15 of it collectives), W = 0.5 (0.05), R = 0.5. Fused BW: R hides
    // under 0.2 of collectives, 0.3 exposed: F0 0-1, F1 1-2, R0 2-2.3, BW0 2.3-4.3,
    // R1 4.3-4.6, BW1 4.6-6.6 (7 without Lynx).
    let s = make(ScheduleKind::Gpipe, 1, 2);
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.5,
        w_s: 0.5,
        r_s: 0.5,
        tp_b_s: 0.15,
        tp_w_s: 0.05,
        ..ChunkCosts::default()
    };
    let mut k = costs(1, c.clone());
    assert_eq!(simulate(&s, &k).unwrap().makespan, 7.0);
    k.overlap_recompute = true;
    let lynx = simulate(&s, &k).unwrap();
    assert!((lynx.makespan - 6.6).abs() < 1e-12, "{}", lynx.makespan);
    let r = spans_of(&lynx, SpanKind::R);
    assert_eq!(r.len(), 2);
    assert!(
        (r[0].1 - 2.0).abs() < 1e-12 && (r[0].2 - 2.3).abs() < 1e-12,
        "{r:?}"
    );
    // Bounded by the collectives: with 0.6 of them R disappears, and the iteration is
    // never shorter than without recomputation.
    k.chunks[0][0].tp_b_s = 0.6;
    let hidden = simulate(&s, &k).unwrap();
    assert_eq!(hidden.makespan, 6.0);
    assert!(spans_of(&hidden, SpanKind::R).is_empty());
    // Split backward (ZB-H1, p = 2, m = 1): W runs after B, so only B's collectives hide
    // R (0.35 exposed). Device 1: F 1-2, R 2-2.35, B 2.35-3.85, W 3.85-4.35. Device 0:
    // F 0-1, R 1-1.35 (in the wait), B 3.85-5.35, W 5.35-5.85.
    let zb = make(ScheduleKind::ZbH1, 2, 1);
    let mut k = costs(2, c);
    k.overlap_recompute = true;
    let sim = simulate(&zb, &k).unwrap();
    assert!((sim.makespan - 5.85).abs() < 1e-12, "{}", sim.makespan);
    let r = spans_of(&sim, SpanKind::R);
    assert!(
        r.iter()
            .any(|x| x.0 == 1 && (x.1 - 2.0).abs() < 1e-12 && (x.2 - 2.35).abs() < 1e-12),
        "{r:?}"
    );
}

#[test]
fn transfers_add_send_spans_and_latency() {
    // 1F1B, p = 2, m = 1, F = 1, BW = 2, comm 0.5.
    let s = make(ScheduleKind::OneFOneB, 2, 1);
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.0,
        w_s: 1.0,
        ..ChunkCosts::default()
    };
    let mut k = costs(2, c);
    k.comm_s = vec![0.5];
    let sim = simulate(&s, &k).unwrap();
    assert_eq!(sim.makespan, 7.0);
    assert_eq!(
        spans_of(&sim, SpanKind::Send),
        vec![(0, 1.0, 1.5), (1, 4.5, 5.0)]
    );
}

#[test]
fn offload_moves_bytes_to_the_host_and_back() {
    // One device, GPipe, m = 3, F = BW = 1, 10 bytes per micro-batch of which 4 are
    // offloaded at 40 bytes/s (0.1 per copy). Compute never waits: F0 0-1, F1 1-2, F2 2-3,
    // BW0 3-4, BW1 4-5, BW2 5-6. Each D2H takes the first free slot after its F (1-1.1,
    // 2-2.1, 3-3.1), each reload the last one before its BW (2.9-3, 3.9-4, 4.9-5).
    let s = make(ScheduleKind::Gpipe, 1, 3);
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.0,
        act_bytes: 10,
        offload_bytes: 4,
        ..ChunkCosts::default()
    };
    let mut k = costs(1, c);
    k.host_bytes_per_s = 40.0;
    k.static_bytes = vec![1000];
    let sim = simulate(&s, &k).unwrap();
    assert_eq!(sim.makespan, 6.0);
    let close = |a: &[(u32, f64, f64)], b: &[(f64, f64)]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x.1 - y.0).abs() < 1e-9 && (x.2 - y.1).abs() < 1e-9)
    };
    let d2h = spans_of(&sim, SpanKind::D2H);
    let h2d = spans_of(&sim, SpanKind::H2D);
    assert!(
        close(&d2h, &[(1.0, 1.1), (2.0, 2.1), (3.0, 3.1)]),
        "{d2h:?}"
    );
    assert!(
        close(&h2d, &[(2.9, 3.0), (3.9, 4.0), (4.9, 5.0)]),
        "{h2d:?}"
    );
    // Peak: at 2 (F2 starts) 30 - 4 offloaded = 26; at 2.9 (H2D0 starts) 22 + 4 = 26.
    assert_eq!(sim.devices[0].peak_activation_bytes, 26);
    assert_eq!(sim.devices[0].peak_memory_bytes, 1026);
    let host_peak = sim.memory[0].host_points.iter().map(|x| x.1).max();
    // Micro-batches 0 and 1 are both on the host from 2.1 to 2.9.
    assert_eq!(host_peak, Some(8));
    assert_eq!(sim.memory[0].points.last().map(|x| x.1), Some(0));
    assert_eq!(sim.memory[0].host_points.last().map(|x| x.1), Some(0));
    // Copies do not count as busy compute time.
    assert_eq!(sim.devices[0].busy, 6.0);
}

#[test]
fn offload_never_delays_compute_and_short_gaps_stay_resident() {
    // 1F1B, p = 2, m = 2, F = B = 1, every micro-batch-chunk offloadable. Compute (as
    // without offload): device 0 F0 0-1, F1 1-2, BW0 3-4, BW1 5-6; device 1 F0 1-2, BW0
    // 2-3, F1 3-4, BW1 4-5. Device 1's gaps are 0: its copies stay resident. Device 0's
    // gaps are 2 (mb 0) and 3 (mb 1).
    let s = make(ScheduleKind::OneFOneB, 2, 2);
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.0,
        act_bytes: 10,
        offload_bytes: 10,
        ..ChunkCosts::default()
    };
    let mut k = costs(2, c);
    // Copy 0.5 (bandwidth 20): both of device 0's round trips fit.
    k.host_bytes_per_s = 20.0;
    let sim = simulate(&s, &k).unwrap();
    assert_eq!(sim.makespan, 6.0);
    assert_eq!(
        spans_of(&sim, SpanKind::D2H),
        vec![(0, 1.0, 1.5), (0, 2.0, 2.5)]
    );
    assert_eq!(
        spans_of(&sim, SpanKind::H2D),
        vec![(0, 2.5, 3.0), (0, 4.5, 5.0)]
    );
    // Device 0 holds F1's 10 bytes and F0's until 1.5; device 1 keeps everything.
    assert_eq!(sim.devices[0].peak_activation_bytes, 20);
    assert_eq!(sim.devices[1].peak_activation_bytes, 10);
    // Copy 1 (bandwidth 10): micro-batch 0's gap (2) no longer holds the round trip.
    k.host_bytes_per_s = 10.0;
    let sim = simulate(&s, &k).unwrap();
    assert_eq!(sim.makespan, 6.0);
    assert_eq!(spans_of(&sim, SpanKind::D2H), vec![(0, 2.0, 3.0)]);
    assert_eq!(spans_of(&sim, SpanKind::H2D), vec![(0, 4.0, 5.0)]);
    // Copy 5: nothing fits, nothing moves, and the iteration is the same.
    k.host_bytes_per_s = 2.0;
    let sim = simulate(&s, &k).unwrap();
    assert_eq!(sim.makespan, 6.0);
    assert!(spans_of(&sim, SpanKind::D2H).is_empty());
    assert_eq!(sim.devices[0].peak_activation_bytes, 20);
}

#[test]
fn split_backward_frees_in_two_steps() {
    // ZB-H1, p = 2, m = 1: device 1 runs F, B, W; B frees 6 of 10 bytes, W the rest.
    let s = make(ScheduleKind::ZbH1, 2, 1);
    assert_eq!(
        s.devices[1],
        vec![
            Op::new(OpKind::F, 0, 0),
            Op::new(OpKind::B, 0, 0),
            Op::new(OpKind::W, 0, 0)
        ]
    );
    let c = ChunkCosts {
        f_s: 1.0,
        b_s: 1.0,
        w_s: 1.0,
        act_bytes: 10,
        b_free_bytes: 6,
        ..ChunkCosts::default()
    };
    let sim = simulate(&s, &costs(2, c)).unwrap();
    // Device 1: F 1-2, B 2-3, W 3-4.
    let pts = &sim.memory[1].points;
    assert_eq!(pts, &vec![(1.0, 10), (3.0, 4), (4.0, 0)]);
}

#[test]
fn utilisation_from_flops() {
    let s = make(ScheduleKind::OneFOneB, 2, 2);
    let mut k = SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, 0.0);
    k.model_flops = Some(9.0);
    k.hardware_flops = Some(12.0);
    k.peak_flops_per_device = Some(1.0);
    let sim = simulate(&s, &k).unwrap();
    assert_eq!(sim.makespan, 9.0);
    assert_eq!(sim.mfu, Some(9.0 / 18.0));
    assert_eq!(sim.hfu, Some(12.0 / 18.0));
}

#[test]
fn malformed_schedules_are_errors() {
    let good = make(ScheduleKind::OneFOneB, 2, 2);
    let k = SimCosts::abstract_run(&good, 1.0, 1.0, 1.0, 0.0, 0.0);
    let mut dup = good.clone();
    dup.devices[0].push(Op::new(OpKind::F, 0, 0));
    assert!(matches!(simulate(&dup, &k), Err(SimError::Shape(_))));
    let mut missing = good.clone();
    missing.devices[1].pop();
    assert!(matches!(simulate(&missing, &k), Err(SimError::Shape(_))));
    let mut wrong_chunk = good.clone();
    wrong_chunk.devices[0][0].chunk = 1;
    assert!(matches!(
        simulate(&wrong_chunk, &k),
        Err(SimError::Shape(_))
    ));
    // Device 0 waits for its backward before its second forward reaches device 1.
    let mut stuck = good.clone();
    stuck.devices[0] = vec![
        Op::new(OpKind::F, 0, 0),
        Op::new(OpKind::BW, 1, 0),
        Op::new(OpKind::F, 1, 0),
        Op::new(OpKind::BW, 0, 0),
    ];
    assert!(matches!(
        simulate(&stuck, &k),
        Err(SimError::Deadlock { device: 0, .. })
    ));
    let mut negative = k.clone();
    negative.chunks[1][0].f_s = -1.0;
    assert!(matches!(
        simulate(&good, &negative),
        Err(SimError::Shape(_))
    ));
    let short = SimCosts {
        chunks: vec![vec![ChunkCosts::default()]],
        ..SimCosts::default()
    };
    assert!(matches!(simulate(&good, &short), Err(SimError::Shape(_))));
}

#[test]
fn weighted_in_flight_is_time_coincident() {
    // One device, two looped chunks, weights 2 (chunk 0) and 5 (chunk 1).
    let mut s = Schedule::empty(ScheduleKind::Interleaved, 1, 2, 2, Placement::Looped);
    let (f, bw) = (OpKind::F, OpKind::BW);
    s.devices[0] = vec![
        Op::new(f, 0, 0),
        Op::new(f, 0, 1),
        Op::new(f, 1, 0),
        Op::new(bw, 0, 1),
        Op::new(bw, 0, 0),
        Op::new(f, 1, 1),
        Op::new(bw, 1, 1),
        Op::new(bw, 1, 0),
    ];
    assert_eq!(s.peak_weighted_in_flight(&[vec![2, 5]]), vec![9]);
    let a = s.in_flight();
    assert_eq!(a.per_device, vec![3]);
    assert_eq!(a.per_chunk, vec![vec![2, 1]]);
    // The simulator agrees on the count.
    let k = SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, 0.0);
    assert_eq!(simulate(&s, &k).unwrap().devices[0].peak_in_flight, 3);
}

#[test]
fn b_frees_nothing_in_the_order_analysis() {
    let s = make(ScheduleKind::ZbH1, 4, 8);
    let a = s.in_flight();
    assert_eq!(a.per_device, vec![4, 4, 4, 4]);
    assert_eq!(
        s.peak_weighted_in_flight(&[vec![3], vec![3], vec![3], vec![3]]),
        vec![12; 4]
    );
}

/// Finite durations whose sum overflows used to end ops at infinity, the engine's marker
/// for "not run yet", and so were reported as a deadlock.
#[test]
fn durations_that_overflow_together_are_too_long_not_a_deadlock() {
    let s = make(ScheduleKind::OneFOneB, 4, 8);
    let huge = SimCosts::abstract_run(&s, 1e308, 1e308, 1e308, 0.0, 0.0);
    assert!(matches!(simulate(&s, &huge), Err(SimError::TooLong { .. })));
    let big_comm = SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 1e308, 0.0);
    assert!(matches!(
        simulate(&s, &big_comm),
        Err(SimError::TooLong { .. })
    ));
    // Large but summable durations still simulate exactly.
    let large = SimCosts::abstract_run(&s, 1e300, 1e300, 1e300, 0.0, 0.0);
    let sim = simulate(&s, &large).unwrap();
    assert!((sim.makespan / (11.0 * 3e300) - 1.0).abs() < 1e-12);
}

/// With zero-length ops every event of a device happens at t = 0; the memory replay used
/// to put every free before every allocation there and reported 0 in flight. Events at one
/// instant now keep the device's op order, so 1F1B's in-flight counts are its closed form.
#[test]
fn zero_costs_keep_the_order_in_flight_counts() {
    let (p, m) = (4, 8);
    let s = make(ScheduleKind::OneFOneB, p, m);
    let zero = SimCosts::abstract_run(&s, 0.0, 0.0, 0.0, 0.0, 0.0);
    let sim = simulate(&s, &zero).unwrap();
    assert_eq!(sim.makespan, 0.0);
    for d in &sim.devices {
        assert_eq!(
            d.peak_in_flight,
            (p - d.device).min(m),
            "device {}",
            d.device
        );
    }
}
