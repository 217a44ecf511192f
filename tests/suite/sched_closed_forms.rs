//! Exact closed forms of docs/model.md with equal costs and no transfer time, and a
//! hand-worked example with unequal costs.

use crate::sched_common;

use pipescope::{ChunkCosts, OpKind, ScheduleInput, ScheduleKind, SimCosts, generate, simulate};
use sched_common::run_uniform;

const UNIT: [f64; 3] = [1.0, 1.0, 1.0];

#[test]
fn one_f_one_b_makespan_and_in_flight() {
    for p in 1..=12u32 {
        for m in 1..=40u32 {
            for fbw in [UNIT, [1.0, 2.0, 0.5]] {
                let (s, sim) = run_uniform(ScheduleKind::OneFOneB, p, m, 1, fbw, 0.0).unwrap();
                let per_mb: f64 = fbw.iter().sum();
                let expect = f64::from(m + p - 1) * per_mb;
                assert!((sim.makespan - expect).abs() < 1e-9, "p={p} m={m}");
                let peaks = s.peak_in_flight();
                for (d, dev) in sim.devices.iter().enumerate() {
                    let want = (p - d as u32).min(m);
                    assert_eq!(dev.peak_in_flight, want, "p={p} m={m} d={d}");
                    assert_eq!(peaks[d], want);
                    assert_eq!(dev.peak_activation_bytes, u64::from(want));
                }
                let rate = f64::from(p - 1) / f64::from(m + p - 1);
                assert!((sim.bubble_rate - rate).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn gpipe_in_flight_is_m() {
    for p in 1..=10u32 {
        for m in 1..=24u32 {
            let (s, sim) = run_uniform(ScheduleKind::Gpipe, p, m, 1, UNIT, 0.0).unwrap();
            assert!(sim.devices.iter().all(|d| d.peak_in_flight == m));
            assert!(s.peak_in_flight().iter().all(|&x| x == m));
            // All forwards then all backwards: (m + p - 1) (F + B + W) as well.
            assert!((sim.makespan - f64::from(m + p - 1) * 3.0).abs() < 1e-9);
        }
    }
}

/// Unequal stage times, worked by hand: p = 2, m = 2, 1F1B, F = [1, 2], BW = [2, 3] (W = 0),
/// comm 0.5.
///
/// ```text
/// dev0: F0 0-1, F1 1-2 (warm-up 1), BW0 waits for BW0 of dev1.
/// dev1: F0 1.5-3.5, BW0 3.5-6.5, F1 6.5-8.5, BW1 8.5-11.5.
/// dev0: BW0 7-9, BW1 12-14.
/// ```
#[test]
fn hand_worked_unequal_stages() {
    let input = ScheduleInput::uniform(2, 2, 1, 1.0, 1.0, 0.0, 0.5);
    let s = generate(ScheduleKind::OneFOneB, &input).unwrap();
    let chunk = |f: f64, b: f64| ChunkCosts {
        f_s: f,
        b_s: b,
        act_bytes: 10,
        ..ChunkCosts::default()
    };
    let costs = SimCosts {
        chunks: vec![vec![chunk(1.0, 2.0)], vec![chunk(2.0, 3.0)]],
        comm_s: vec![0.5],
        static_bytes: vec![100, 200],
        transient_bytes: vec![1, 2],
        ..SimCosts::default()
    };
    let sim = simulate(&s, &costs).unwrap();
    assert!((sim.makespan - 14.0).abs() < 1e-12, "{}", sim.makespan);
    assert!((sim.devices[0].busy - 6.0).abs() < 1e-12);
    assert!((sim.devices[1].busy - 10.0).abs() < 1e-12);
    assert_eq!(sim.devices[0].peak_memory_bytes, 100 + 20 + 1);
    assert_eq!(sim.devices[1].peak_memory_bytes, 200 + 10 + 2);
    assert!((sim.bubble_rate - (1.0 - 16.0 / 28.0)).abs() < 1e-12);
}

#[test]
fn interleaved_makespan() {
    for p in 1..=8u32 {
        for k in 1..=4u32 {
            let m = p * k;
            for v in 2..=4u32 {
                let (_, sim) = run_uniform(ScheduleKind::Interleaved, p, m, v, UNIT, 0.0).unwrap();
                let expect = f64::from(v * m + p - 1) * 3.0;
                assert!((sim.makespan - expect).abs() < 1e-9, "p={p} m={m} v={v}");
            }
        }
    }
}

#[test]
fn interleaved_needs_m_multiple_of_p() {
    let input = ScheduleInput::uniform(4, 6, 2, 1.0, 1.0, 1.0, 0.0);
    let err = generate(ScheduleKind::Interleaved, &input).unwrap_err();
    assert!(err.to_string().contains("multiple of p"), "{err}");
}

#[test]
fn zb_h1_bubble_per_device() {
    for p in 1..=10u32 {
        for m in p..=3 * p + 2 {
            for c in [1.0, 0.5] {
                let (s, sim) = run_uniform(ScheduleKind::ZbH1, p, m, 1, [c, c, c], 0.0).unwrap();
                for dev in &sim.devices {
                    let bubble = sim.makespan - dev.busy;
                    let expect = f64::from(p - 1) * (c + c - c);
                    assert!((bubble - expect).abs() < 1e-9, "p={p} m={m} {dev:?}");
                }
                // 1F1B's memory: p micro-batches on every device.
                assert!(s.peak_in_flight().iter().all(|&x| x == p.min(m)));
            }
        }
    }
}

#[test]
fn dualpipe_v_peak_chunk_activations() {
    for p in 1..=8u32 {
        for m in 2 * p..=2 * p + 10 {
            let (s, sim) = run_uniform(ScheduleKind::DualPipeV, p, m, 2, UNIT, 0.0).unwrap();
            let peak = sim.devices.iter().map(|d| d.peak_in_flight).max().unwrap();
            assert_eq!(peak, 2 * p + 1, "p={p} m={m}");
            assert_eq!(s.peak_in_flight().into_iter().max(), Some(2 * p + 1));
        }
    }
}

#[test]
fn dualpipe_v_needs_2p_micro_batches() {
    let input = ScheduleInput::uniform(4, 7, 2, 1.0, 1.0, 1.0, 0.0);
    let err = generate(ScheduleKind::DualPipeV, &input).unwrap_err();
    assert!(err.to_string().contains("m >= 2p"), "{err}");
}

#[test]
fn chimera_needs_even_m() {
    let input = ScheduleInput::uniform(4, 7, 2, 1.0, 1.0, 1.0, 0.0);
    let err = generate(ScheduleKind::Chimera, &input).unwrap_err();
    assert!(err.to_string().contains("even m"), "{err}");
}

#[test]
fn interleaved_in_flight_is_megatron_warmup_plus_one() {
    for p in 1..=6u32 {
        for k in 1..=3u32 {
            let m = p * k;
            for v in 2..=3u32 {
                let (s, sim) = run_uniform(ScheduleKind::Interleaved, p, m, v, UNIT, 0.0).unwrap();
                let peaks = s.peak_in_flight();
                for d in 0..p {
                    let warmup = (2 * (p - d - 1) + (v - 1) * p).min(m * v);
                    let want = (warmup + 1).min(m * v);
                    assert_eq!(peaks[d as usize], want, "p={p} m={m} v={v} d={d}");
                    assert_eq!(sim.devices[d as usize].peak_in_flight, want);
                }
            }
        }
    }
}

#[test]
fn chimera_splits_micro_batches_between_directions() {
    for p in 1..=8u32 {
        for m in (2..=24u32).step_by(2) {
            let (s, sim) = run_uniform(ScheduleKind::Chimera, p, m, 2, UNIT, 0.0).unwrap();
            for ops in &s.devices {
                assert_eq!(ops.len(), 2 * m as usize);
                for op in ops {
                    assert_eq!(op.chunk, u32::from(op.micro_batch >= m / 2));
                }
            }
            // Never worse than one direction after the other, never better than no bubble.
            let seq = f64::from(m + 2 * (p - 1)) * 3.0;
            assert!(sim.makespan <= seq + 1e-9, "p={p} m={m}: {}", sim.makespan);
            assert!(sim.makespan >= f64::from(m) * 3.0 - 1e-9);
        }
    }
}

#[test]
fn chimera_basic_unit_bubble() {
    // m = p, p even, F = B (W = 0): Chimera's bubble (p - 2) / (2m + p - 2), i.e. a
    // makespan of 2m + p - 2.
    for p in (2..=16u32).step_by(2) {
        let (_, sim) = run_uniform(ScheduleKind::Chimera, p, p, 2, [1.0, 1.0, 0.0], 0.0).unwrap();
        assert!(
            (sim.makespan - f64::from(3 * p - 2)).abs() < 1e-9,
            "p={p}: {}",
            sim.makespan
        );
        let rate = f64::from(p - 2) / f64::from(3 * p - 2);
        assert!((sim.bubble_rate - rate).abs() < 1e-9);
    }
}

/// The Chimera authors' generator (`Shigangli/Chimera`, `chimera_pipeline_rank.py`) run for
/// 4 stages and 4 micro-batches: `d`/`u` down/up, micro-batch, `f`/`b`.
#[test]
fn chimera_matches_the_authors_unit() {
    let want = [
        "d0f d1f u2f u2b u3f u3b d0b d1b",
        "d0f u2f d1f u3f u2b d0b u3b d1b",
        "u2f d0f u3f d1f d0b u2b d1b u3b",
        "u2f u3f d0f d0b d1f d1b u2b u3b",
    ];
    let s = sched_common::gen_uniform(ScheduleKind::Chimera, 4, 4, 2, UNIT, 0.0).unwrap();
    for (d, ops) in s.devices.iter().enumerate() {
        let got: Vec<String> = ops
            .iter()
            .map(|op| {
                let dir = if op.chunk == 0 { 'd' } else { 'u' };
                let kind = if op.kind == OpKind::F { 'f' } else { 'b' };
                format!("{dir}{}{kind}", op.micro_batch)
            })
            .collect();
        assert_eq!(got.join(" "), want[d], "device {d}");
    }
}
