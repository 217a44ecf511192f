//! The figures-only run against the full run: on random schedules of every kind, sizes,
//! chunk counts, durations, transfer times, recomputation (on demand and overlapped),
//! blocking sends and offloaded bytes, every figure agrees: peaks and in-flight counts
//! exactly, times within 1e-9 relative (the job's breakdown included).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::job::{self, DeviceJob, JobCosts};
use super::{ChunkCosts, SimCosts, Simulation, simulate, simulate_figures};
use crate::schedule::{Schedule, ScheduleInput, ScheduleKind, generate};

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// A splitmix64 stream for the per-chunk costs.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn in_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.in_range(0.0, 1.0) < p
    }
}

fn chunk(d: &mut Draw, recompute: bool, offload: bool) -> ChunkCosts {
    let act = 1 + d.next() % (1 << 30);
    ChunkCosts {
        f_s: d.in_range(0.3, 2.0),
        b_s: d.in_range(0.3, 3.0),
        w_s: d.in_range(0.0, 2.0),
        r_s: if recompute && d.chance(0.6) {
            d.in_range(0.0, 1.5)
        } else {
            0.0
        },
        r_overlap_s: if recompute && d.chance(0.3) {
            d.in_range(0.0, 1.0)
        } else {
            0.0
        },
        act_bytes: act,
        b_free_bytes: d.next() % (act + 1),
        offload_bytes: if offload { d.next() % (act + 1) } else { 0 },
        link_bytes: 0,
        tp_b_s: d.in_range(0.0, 0.3),
        tp_w_s: d.in_range(0.0, 0.3),
        a2a_f_s: 0.0,
        a2a_b_s: 0.0,
        moe_split: Default::default(),
    }
}

/// Random costs for `s`: per (device, chunk) durations and bytes, per-boundary transfer
/// times, static and transient bytes, FLOPs.
fn costs(s: &Schedule, seed: u64, recompute: bool, offload: bool, blocking: bool) -> SimCosts {
    let mut d = Draw(seed);
    let (p, v) = (s.p as usize, s.v as usize);
    SimCosts {
        chunks: (0..p)
            .map(|_| (0..v).map(|_| chunk(&mut d, recompute, offload)).collect())
            .collect(),
        comm_s: (0..s.stages()).map(|_| d.in_range(0.0, 0.4)).collect(),
        static_bytes: (0..p).map(|_| d.next() % (1 << 34)).collect(),
        transient_bytes: (0..p).map(|_| d.next() % (1 << 30)).collect(),
        host_bytes_per_s: d.in_range(1e8, 1e10),
        host_solo_bytes_per_s: 0.0,
        overlap_recompute: recompute && d.chance(0.3),
        blocking_sends: blocking,
        model_flops: Some(1e15),
        hardware_flops: Some(1.3e15),
        peak_flops_per_device: Some(1e14),
    }
}

fn job_costs(p: usize, m: u32, seed: u64) -> JobCosts {
    let mut d = Draw(seed ^ 0xABCD);
    JobCosts {
        devices: (0..p)
            .map(|_| DeviceJob {
                grad_reduce_s: d.in_range(0.0, 3.0),
                param_gather_s: d.in_range(0.0, 1.0),
                buckets: 1 + (d.next() % 4) as u32,
                tied_s: 0.0,
                optimizer_s: d.in_range(0.0, 1.0),
                tp_comm_s: d.in_range(0.0, 2.0),
                cp_comm_s: 0.0,
                fsdp_comm_s: 0.0,
                ep_comm_s: 0.0,
            })
            .collect(),
        overlap_grad_reduce: d.chance(0.5),
        m,
        chunk_shares: Vec::new(),
    }
}

/// Asserts that every figure of `fast` is that of `full`.
fn same_figures(full: &Simulation, fast: &Simulation, what: &str) {
    assert!(
        close(full.makespan, fast.makespan),
        "{what}: makespan {} {}",
        full.makespan,
        fast.makespan
    );
    assert!(close(full.bubble_rate, fast.bubble_rate), "{what}: bubble");
    for (a, b) in [(full.mfu, fast.mfu), (full.hfu, fast.hfu)] {
        assert!(close(a.unwrap_or(0.0), b.unwrap_or(0.0)), "{what}: mfu/hfu");
    }
    assert_eq!(full.devices.len(), fast.devices.len());
    for (a, b) in full.devices.iter().zip(&fast.devices) {
        assert!(
            close(a.busy, b.busy),
            "{what}: device {} busy {} {}",
            a.device,
            a.busy,
            b.busy
        );
        assert!(
            close(a.bubble_rate, b.bubble_rate),
            "{what}: device {} bubble",
            a.device
        );
        assert_eq!(
            a.peak_memory_bytes, b.peak_memory_bytes,
            "{what}: device {}",
            a.device
        );
        assert_eq!(a.peak_activation_bytes, b.peak_activation_bytes, "{what}");
        assert_eq!(
            a.peak_in_flight, b.peak_in_flight,
            "{what}: device {}",
            a.device
        );
    }
    let (ja, jb) = (full.job.as_ref(), fast.job.as_ref());
    if let (Some(ja), Some(jb)) = (ja, jb) {
        assert_eq!(ja.last_device, jb.last_device, "{what}: last device");
        let all = ja
            .devices
            .iter()
            .zip(&jb.devices)
            .chain([(&ja.breakdown, &jb.breakdown)]);
        for (a, b) in all {
            let pairs = [
                (a.compute, b.compute),
                (a.recompute, b.recompute),
                (a.bubble, b.bubble),
                (a.tp_comm, b.tp_comm),
                (a.dp_comm, b.dp_comm),
                (a.optimizer, b.optimizer),
            ];
            for (x, y) in pairs {
                // A part is a difference of times: compare it on the scale of the iteration.
                assert!(
                    (x - y).abs() <= 1e-9 * full.makespan,
                    "{what}: breakdown {a:?} {b:?}"
                );
            }
        }
        for (a, b) in ja.tails.iter().zip(&jb.tails) {
            assert!(close(a.end_s, b.end_s), "{what}: tail {a:?} {b:?}");
        }
    }
}

/// Runs both ways (with the job's steps added) and compares; returns whether the
/// figures-only run jumped.
fn check(s: &Schedule, c: &SimCosts, seed: u64, what: &str) -> bool {
    let (full, fast) = (simulate(s, c), simulate_figures(s, c));
    let (mut full, mut fast) = match (full, fast) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            assert_eq!(a.err(), b.err(), "{what}");
            return false;
        }
    };
    let jumped = !fast.elided.is_empty();
    if !jumped {
        // Nothing jumped over: exactly the full run.
        assert_eq!(full, fast, "{what}");
    }
    let jc = job_costs(s.p as usize, s.m, seed);
    job::finish(&mut full, &jc);
    job::finish(&mut fast, &jc);
    same_figures(&full, &fast, what);
    jumped
}

fn input(p: u32, m: u32, v: u32, seed: u64) -> ScheduleInput {
    let mut d = Draw(seed ^ 0x5EED);
    let mut i = ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, 0.1);
    for grid in [&mut i.f, &mut i.b, &mut i.w] {
        for x in grid.iter_mut().flatten() {
            *x = d.in_range(0.5, 2.0);
        }
    }
    i
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn figures_only_runs_give_the_full_runs_figures(
        k in 0..ScheduleKind::ALL.len(),
        p in 2u32..7,
        m in 8u32..90,
        v in 1u32..4,
        seed in any::<u64>(),
        recompute in any::<bool>(),
        offload in proptest::bool::weighted(0.15),
        blocking in proptest::bool::weighted(0.15),
    ) {
        let kind = ScheduleKind::ALL[k];
        let Ok(s) = generate(kind, &input(p, m, v, seed)) else {
            return Ok(());
        };
        let c = costs(&s, seed, recompute, offload, blocking);
        check(&s, &c, seed, &format!("{kind} p {p} m {m} v {v} seed {seed}"));
    }
}

/// The jump is taken (the test above is not only the fallback): on every kind whose order
/// repeats, at sizes with a long steady state, with recomputation and transfer times.
#[test]
fn steady_kinds_jump_and_agree() {
    use ScheduleKind::*;
    let mut jumped = Vec::new();
    for &kind in ScheduleKind::ALL {
        for (p, m, v) in [(4, 96, 2), (3, 64, 3), (5, 120, 1)] {
            for seed in 0..3 {
                let Ok(s) = generate(kind, &input(p, m, v, seed)) else {
                    continue;
                };
                let c = costs(&s, seed, seed > 0, false, false);
                if check(
                    &s,
                    &c,
                    seed,
                    &format!("{kind} p {p} m {m} v {v} seed {seed}"),
                ) {
                    jumped.push(kind);
                }
            }
        }
    }
    for kind in [OneFOneB, Interleaved, ZbH1, ZbV, VHalf, VMin] {
        assert!(jumped.contains(&kind), "{kind} never jumped: {jumped:?}");
    }
}

/// Costs as a sweep's layouts have them: every chunk alike (layers split evenly), the
/// first stage's forward and the last stage's passes heavier (embedding, head and loss),
/// one transfer time.
fn sweep_like(s: &Schedule, seed: u64) -> SimCosts {
    let mut c = costs(s, seed, false, false, false);
    let base = c.chunks[0][0].clone();
    for chunk in c.chunks.iter_mut().flatten() {
        *chunk = base.clone();
    }
    let (d, k) = s.locate(0, 0);
    c.chunks[d as usize][k as usize].f_s *= 1.1;
    let (d, k) = s.locate(s.stages() - 1, 0);
    let last = &mut c.chunks[d as usize][k as usize];
    last.f_s *= 1.3;
    last.b_s *= 1.2;
    let comm = c.comm_s[0];
    c.comm_s.iter_mut().for_each(|x| *x = comm);
    c
}

/// Long runs at the sweep's sizes (issue 31), each against the full run: the V-shapes
/// jump at p 64 from m 256 on (ZB-V at m 256 has not settled by the stretch's end: its
/// last devices still run at their own rate). The interleaved order, whose period is `p`
/// micro-batches, finds none while the search caps a period at `m / 12` micro-batches, so
/// it runs in full.
#[test]
fn long_runs_at_sweep_sizes_jump_and_agree() {
    use ScheduleKind::*;
    let cases = [
        (Interleaved, 32, 256, 2, false),
        (Interleaved, 64, 256, 2, false),
        (Interleaved, 64, 512, 2, false),
        (VHalf, 64, 256, 2, true),
        (VHalf, 64, 1024, 2, true),
        (ZbV, 64, 256, 2, false),
        (ZbV, 64, 512, 2, true),
        (ZbV, 64, 1024, 2, true),
    ];
    let mut missed = Vec::new();
    for (kind, p, m, v, must) in cases {
        let seed = u64::from(p * m);
        let s = generate(kind, &input(p, m, v, seed)).unwrap();
        let c = sweep_like(&s, seed);
        let what = format!("{kind} p {p} m {m} v {v}");
        if !check(&s, &c, seed, &what) && must {
            missed.push(what);
        }
    }
    assert!(missed.is_empty(), "no jump: {missed:?}");
}
