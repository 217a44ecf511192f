//! Megatron-LM's interleaved 1F1B as the code of Narayanan et al.'s runs ran it, written
//! down here independently of `src/schedule` and `src/sim` and checked against them.
//!
//! The transcription follows `forward_backward_pipelining_with_interleaving` in
//! `megatron/schedules.py` and `_communicate` in `megatron/p2p_communication.py` at Megatron-LM
//! commit 6985e58938 (August 2021, the `examples/sc21` scripts): each device runs its warm-up
//! forwards, each followed by `send_forward_recv_forward` (the last one by
//! `send_forward_backward_recv_forward_backward`), then steady rounds of a forward, a
//! backward and one `send_forward_backward_recv_forward_backward`, then its cool-down
//! backwards, each followed by `send_backward_recv_backward`. Every exchange is one
//! `batch_isend_irecv` of its sends and receives, each request waited for, then
//! `torch.cuda.synchronize()`: the device goes on only when all of them have ended, and a
//! send cannot start before its receiver has posted the matching receive (the n-th send on
//! a link meets the n-th receive). Model chunk of the k-th forward: `(k mod p v) div p`
//! (`get_model_chunk_id`); the backward's the reverse; a chunk's micro-batches come from
//! its own data iterator in order.

use pipescope::{OpKind, ScheduleInput, ScheduleKind, SimCosts, generate, simulate};

/// Which way a tensor goes: an activation to the next rank or a gradient to the previous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Dir {
    Activation,
    Gradient,
}

/// A tensor on the wire: its direction, the stage whose op produced it and the micro-batch.
type Tensor = (Dir, u32, u32);

/// One step of a device as the Python code runs it.
#[derive(Debug, Clone)]
enum Step {
    /// `forward_step_helper` (`forward`) or `backward_step_helper` of a local chunk.
    Compute { forward: bool, chunk: u32, mb: u32 },
    /// One `_communicate`: its sends in the order it posts them (`send_prev` before
    /// `send_next`), with the peer, and its receives with the peer and the local chunk whose
    /// list (`input_tensors` or `output_tensor_grads`) the received tensor is appended to.
    Exchange {
        sends: Vec<(u32, Tensor)>,
        recvs: Vec<(u32, Dir, u32)>,
    },
}

/// The steps of device `d` of `p` with `v` chunks and `m` micro-batches.
fn megatron_2021(p: u32, v: u32, m: u32, d: u32) -> Vec<Step> {
    let total = m * v;
    // `if get_num_microbatches() == pipeline_parallel_size`: every forward in the warm-up.
    let all_warmup = m == p;
    let warmup = if all_warmup {
        total
    } else {
        (2 * (p - d - 1) + (v - 1) * p).min(total)
    };
    let remaining = total - warmup;
    let chunk_of = |k: u32, forward: bool| {
        let c = (k % (p * v)) / p;
        if forward { c } else { v - 1 - c }
    };
    // The same of an id that may be negative, with Python's modulo.
    let chunk_at = |k: i64, forward: bool| {
        let k = u32::try_from(k.rem_euclid(i64::from(p * v))).unwrap_or(0);
        chunk_of(k, forward)
    };
    let mb_of = |k: u32| (k / (p * v)) * p + k % p;
    let stage = |c: u32| c * p + d;
    // `is_pipeline_first_stage()` / `is_pipeline_last_stage()` with the virtual rank set.
    let first = |c: u32| d == 0 && c == 0;
    let last = |c: u32| d == p - 1 && c == v - 1;
    let (next, prev) = ((d + 1) % p, (d + p - 1) % p);
    let mut steps = Vec::new();
    let exchange = |steps: &mut Vec<Step>,
                    send_next: Option<Tensor>,
                    send_prev: Option<Tensor>,
                    recv_prev: Option<u32>,
                    recv_next: Option<u32>| {
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        if let Some(t) = send_prev {
            sends.push((prev, t));
        }
        if let Some(c) = recv_prev {
            recvs.push((prev, Dir::Activation, c));
        }
        if let Some(t) = send_next {
            sends.push((next, t));
        }
        if let Some(c) = recv_next {
            recvs.push((next, Dir::Gradient, c));
        }
        steps.push(Step::Exchange { sends, recvs });
    };
    // `recv_forward` with virtual rank 0 (none on the first stage).
    if !first(0) {
        exchange(&mut steps, None, None, Some(0), None);
    }
    for k in 0..warmup {
        let c = chunk_of(k, true);
        steps.push(Step::Compute {
            forward: true,
            chunk: c,
            mb: mb_of(k),
        });
        let next_chunk = chunk_of(k + 1, true);
        let recv_prev = !(d == 0 && next_chunk == 0) && k + 1 != total;
        let out = (!last(c)).then_some((Dir::Activation, stage(c), mb_of(k)));
        let recv_next = (k + 1 == warmup && !all_warmup && d != p - 1).then_some(v - 1);
        exchange(
            &mut steps,
            out,
            None,
            recv_prev.then_some(next_chunk),
            recv_next,
        );
    }
    for k in 0..remaining {
        let fk = k + warmup;
        let (cf, cb) = (chunk_of(fk, true), chunk_of(k, false));
        steps.push(Step::Compute {
            forward: true,
            chunk: cf,
            mb: mb_of(fk),
        });
        steps.push(Step::Compute {
            forward: false,
            chunk: cb,
            mb: mb_of(k),
        });
        let out = (!last(cf)).then_some((Dir::Activation, stage(cf), mb_of(fk)));
        let grad = (!first(cb)).then_some((Dir::Gradient, stage(cb), mb_of(k)));
        // The first rank is ahead of the last by p - 1 (and the last of the first).
        let (mut recv_prev, next_f) = if d == 0 {
            let c = chunk_at(i64::from(fk) - i64::from(p - 1), true);
            (c != v - 1, c + 1)
        } else {
            (true, chunk_of(fk + 1, true))
        };
        let (recv_next, next_b) = if d == p - 1 {
            let c = chunk_at(i64::from(k) - i64::from(p - 1), false);
            (c != 0, c.wrapping_sub(1))
        } else {
            (true, chunk_of(k + 1, false))
        };
        if k + 1 == remaining {
            recv_prev = false;
        }
        exchange(
            &mut steps,
            out,
            grad,
            recv_prev.then_some(next_f),
            recv_next.then_some(next_b),
        );
    }
    if all_warmup && d != p - 1 {
        // `recv_backward` with the virtual rank of the last forward (chunk v - 1).
        exchange(&mut steps, None, None, None, Some(v - 1));
    }
    for k in remaining..total {
        let cb = chunk_of(k, false);
        steps.push(Step::Compute {
            forward: false,
            chunk: cb,
            mb: mb_of(k),
        });
        let next_chunk = chunk_of(k + 1, false);
        let recv_next = !(d == p - 1 && next_chunk == v - 1) && k + 1 != total;
        let grad = (!first(cb)).then_some((Dir::Gradient, stage(cb), mb_of(k)));
        exchange(
            &mut steps,
            None,
            grad,
            None,
            recv_next.then_some(next_chunk),
        );
    }
    steps
}

/// Every device's steps.
fn all_steps(p: u32, v: u32, m: u32) -> Vec<Vec<Step>> {
    (0..p).map(|d| megatron_2021(p, v, m, d)).collect()
}

/// Each device's compute ops, as pipescope writes them (forward `F`, fused backward `BW`).
fn compute_order(steps: &[Step]) -> Vec<(OpKind, u32, u32)> {
    steps
        .iter()
        .filter_map(|s| match *s {
            Step::Compute { forward, chunk, mb } => {
                let kind = if forward { OpKind::F } else { OpKind::BW };
                Some((kind, mb, chunk))
            }
            Step::Exchange { .. } => None,
        })
        .collect()
}

/// The tensors sent on each link (sender, receiver, direction), in order.
fn sent_on_links(all: &[Vec<Step>]) -> std::collections::HashMap<(u32, u32, Dir), Vec<Tensor>> {
    let mut links: std::collections::HashMap<(u32, u32, Dir), Vec<Tensor>> = Default::default();
    for (d, steps) in all.iter().enumerate() {
        for s in steps {
            if let Step::Exchange { sends, .. } = s {
                for &(peer, t) in sends {
                    links.entry((d as u32, peer, t.0)).or_default().push(t);
                }
            }
        }
    }
    links
}

const CASES: [(u32, u32); 9] = [
    (2, 2),
    (2, 3),
    (3, 2),
    (4, 2),
    (4, 3),
    (4, 4),
    (5, 2),
    (5, 3),
    (8, 2),
];

/// The compute order pipescope generates is the one Megatron-LM ran, op for op, whenever
/// the micro-batches are more than the devices (every published interleaved run). With
/// exactly `p` micro-batches the 2021 code ran every forward first
/// (`all_warmup_microbatches`), where Megatron-Core runs `min(2 (p - d - 1) + (v - 1) p, m v)`
/// warm-up forwards (`get_pp_rank_microbatches`), which pipescope follows.
#[test]
fn interleaved_order_is_megatrons_op_for_op() {
    for (p, v) in CASES {
        for m in [2 * p, 3 * p, 5 * p] {
            let sched = generate(
                ScheduleKind::Interleaved,
                &ScheduleInput::uniform(p, m, v, 1.0, 1.0, 0.0, 0.0),
            )
            .unwrap();
            for (d, steps) in all_steps(p, v, m).iter().enumerate() {
                let ours: Vec<(OpKind, u32, u32)> = sched.devices[d]
                    .iter()
                    .map(|o| (o.kind, o.micro_batch, o.chunk))
                    .collect();
                assert_eq!(ours, compute_order(steps), "p {p} v {v} m {m} device {d}");
            }
        }
        // m = p: the 2021 code's first device and pipescope's agree (both run every
        // forward first there); its last device differs.
        let sched = generate(
            ScheduleKind::Interleaved,
            &ScheduleInput::uniform(p, p, v, 1.0, 1.0, 0.0, 0.0),
        )
        .unwrap();
        let old = all_steps(p, v, p);
        let ours = |d: usize| -> Vec<(OpKind, u32, u32)> {
            sched.devices[d]
                .iter()
                .map(|o| (o.kind, o.micro_batch, o.chunk))
                .collect()
        };
        assert_eq!(ours(0), compute_order(&old[0]));
        let last = p as usize - 1;
        assert_ne!(ours(last), compute_order(&old[last]), "p {p} v {v}");
        let leading = ours(last).iter().take_while(|o| o.0 == OpKind::F).count() as u32;
        assert_eq!(leading, (v - 1) * p + 1);
    }
}

/// The transcription is consistent: on every link the n-th send meets the n-th receive, and
/// the tensor it carries is the one the receiving op reads (a forward reads the last tensor
/// appended to its chunk's `input_tensors`, a backward pops the first of its chunk's
/// `output_tensor_grads`), so the exchanges below are the ones Megatron-LM paired.
#[test]
fn megatrons_exchanges_carry_what_each_op_reads() {
    for (p, v) in CASES {
        for m in [p, 2 * p, 3 * p] {
            let all = all_steps(p, v, m);
            let links = sent_on_links(&all);
            let mut received: std::collections::HashMap<(u32, u32, Dir), usize> =
                Default::default();
            for (d, steps) in all.iter().enumerate() {
                let d = d as u32;
                let mut inputs: Vec<Vec<Tensor>> = vec![Vec::new(); v as usize];
                let mut grads: Vec<std::collections::VecDeque<Tensor>> =
                    vec![Default::default(); v as usize];
                for s in steps {
                    match s {
                        Step::Exchange { recvs, .. } => {
                            for &(peer, dir, c) in recvs {
                                let n = received.entry((peer, d, dir)).or_default();
                                let t = links[&(peer, d, dir)][*n];
                                *n += 1;
                                match dir {
                                    Dir::Activation => inputs[c as usize].push(t),
                                    Dir::Gradient => grads[c as usize].push_back(t),
                                }
                            }
                        }
                        &Step::Compute { forward, chunk, mb } => {
                            let stage = chunk * p + d;
                            if forward && stage > 0 {
                                let got = inputs[chunk as usize].last().copied();
                                assert_eq!(got, Some((Dir::Activation, stage - 1, mb)));
                            }
                            if !forward && stage + 1 < p * v {
                                let got = grads[chunk as usize].pop_front();
                                assert_eq!(got, Some((Dir::Gradient, stage + 1, mb)));
                            }
                        }
                    }
                }
            }
            for (link, sent) in &links {
                assert_eq!(received.get(link).copied(), Some(sent.len()), "{link:?}");
            }
        }
    }
}

/// Megatron-LM's run of the steps above with every exchange blocking as `_communicate` does:
/// a message starts once its sender and its receiver have both reached the exchanges that
/// hold it, a device's sends leave one after the other through its link (each `comm`), and
/// a device goes on when all its exchange's sends and receives have ended. Without
/// `receives_wait` a device goes on when its sends have ended, and an op waits for the
/// tensor it reads instead. `f` and `b`: the forward and backward of each (device, chunk).
/// Returns the makespan.
fn megatron_blocking_makespan(
    (p, v, m): (u32, u32, u32),
    f: &[Vec<f64>],
    b: &[Vec<f64>],
    comm: f64,
    receives_wait: bool,
) -> f64 {
    type Key = (u32, u32, Dir, usize);
    /// One exchange's sends (with their place in it) and receives.
    type Numbered = (Vec<(Key, usize)>, Vec<Key>);
    let all = all_steps(p, v, m);
    // Number each send and receive on its link; a send's place in its exchange.
    let mut count: std::collections::HashMap<(bool, u32, u32, Dir), usize> = Default::default();
    let mut numbered: Vec<Vec<Numbered>> = Vec::new();
    for (d, steps) in all.iter().enumerate() {
        let d = d as u32;
        let mut list = Vec::new();
        for s in steps {
            if let Step::Exchange { sends, recvs } = s {
                let mut ns = Vec::new();
                for (j, &(peer, t)) in sends.iter().enumerate() {
                    let n = count.entry((true, d, peer, t.0)).or_default();
                    ns.push(((d, peer, t.0, *n), j));
                    *n += 1;
                }
                let mut nr = Vec::new();
                for &(peer, dir, _) in recvs {
                    let n = count.entry((false, peer, d, dir)).or_default();
                    nr.push((peer, d, dir, *n));
                    *n += 1;
                }
                list.push((ns, nr));
            }
        }
        numbered.push(list);
    }
    let mut place: std::collections::HashMap<Key, usize> = Default::default();
    let mut carried_by: std::collections::HashMap<Tensor, Key> = Default::default();
    for (d, list) in numbered.iter().enumerate() {
        let sent = all[d].iter().filter_map(|s| match s {
            Step::Exchange { sends, .. } => Some(sends),
            Step::Compute { .. } => None,
        });
        for ((sends, _), theirs) in list.iter().zip(sent) {
            for (&(k, j), &(_, tensor)) in sends.iter().zip(theirs) {
                place.insert(k, j);
                carried_by.insert(tensor, k);
            }
        }
    }
    let mut send_at: std::collections::HashMap<Key, f64> = Default::default();
    let mut recv_at: std::collections::HashMap<Key, f64> = Default::default();
    let (mut ptr, mut xptr) = (vec![0usize; p as usize], vec![0usize; p as usize]);
    let mut t = vec![0.0f64; p as usize];
    let end_of = |k: &Key,
                  send_at: &std::collections::HashMap<Key, f64>,
                  recv_at: &std::collections::HashMap<Key, f64>|
     -> Option<f64> {
        let (s, r) = (send_at.get(k)?, recv_at.get(k)?);
        Some(s.max(*r) + comm * (1 + place[k]) as f64)
    };
    let mut progress = true;
    while progress {
        progress = false;
        for d in 0..p as usize {
            while let Some(step) = all[d].get(ptr[d]) {
                match *step {
                    Step::Compute { forward, chunk, mb } => {
                        let c = chunk as usize;
                        if !receives_wait {
                            let stage = chunk * p + d as u32;
                            let read = if forward {
                                (stage > 0).then(|| (Dir::Activation, stage - 1, mb))
                            } else {
                                (stage + 1 < p * v).then(|| (Dir::Gradient, stage + 1, mb))
                            };
                            if let Some(tensor) = read {
                                let key = carried_by[&tensor];
                                let Some(at) = end_of(&key, &send_at, &recv_at) else {
                                    break;
                                };
                                t[d] = t[d].max(at);
                            }
                        }
                        t[d] += if forward { f[d][c] } else { b[d][c] };
                    }
                    Step::Exchange { .. } => {
                        let (sends, recvs) = &numbered[d][xptr[d]];
                        for &(k, _) in sends {
                            send_at.entry(k).or_insert(t[d]);
                        }
                        for &k in recvs {
                            recv_at.entry(k).or_insert(t[d]);
                        }
                        let ends: Option<Vec<f64>> = sends
                            .iter()
                            .map(|(k, _)| end_of(k, &send_at, &recv_at))
                            .chain(
                                recvs
                                    .iter()
                                    .filter(|_| receives_wait)
                                    .map(|k| end_of(k, &send_at, &recv_at)),
                            )
                            .collect();
                        let Some(ends) = ends else { break };
                        t[d] = ends.into_iter().fold(t[d], f64::max);
                        xptr[d] += 1;
                    }
                }
                ptr[d] += 1;
                progress = true;
            }
        }
    }
    assert!((0..p as usize).all(|d| ptr[d] == all[d].len()), "deadlock");
    t.into_iter().fold(0.0, f64::max)
}

/// The forward and backward of chunk `c` of device `d` (given p, v, d, c).
type CostPattern = fn(u32, u32, u32, u32) -> (f64, f64);

/// pipescope's blocking interleaved run (`--p2p blocking`, src/sim/transfers.rs's
/// rendezvous) ends exactly when the transcription's does with its sends blocking and its
/// receives waited for by the op that reads them, with unequal costs per (device, chunk).
/// Waiting for the receives in the exchange as well (Megatron's `req.wait()` on every
/// request) changes nothing when only the first and last chunks differ (the embedding, the
/// head and loss) and at most 0.1 % (0.09 % on p 8, v 2, m 24) when every chunk differs: in
/// every steady round a device sends to both of its neighbours, and a send waits for its
/// receiver, so the coupling of a device to both neighbours that the combined exchange
/// makes is already in the simulation.
#[test]
fn blocking_interleaved_run_ends_when_megatrons_exchanges_do() {
    let patterns: [CostPattern; 3] = [
        |_, _, _, _| (1.0, 3.0),
        // The embedding on the first chunk, the head and loss on the last.
        |p, v, d, c| {
            let x = if d == 0 && c == 0 {
                1.1
            } else if d == p - 1 && c == v - 1 {
                1.3
            } else {
                1.0
            };
            (x, 3.0 * x)
        },
        // Every (device, chunk) different.
        |_, _, d, c| {
            let x = 1.0 + 0.1 * f64::from((7 * d + 3 * c) % 5);
            (x, 2.0 * x + 0.05 * f64::from((d + c) % 3))
        },
    ];
    let mut largest = 0.0f64;
    for (p, v) in CASES {
        for m in [2 * p, 3 * p] {
            for (pattern_index, pattern) in patterns.into_iter().enumerate() {
                for comm in [0.05, 0.3] {
                    let f: Vec<Vec<f64>> = (0..p)
                        .map(|d| (0..v).map(|c| pattern(p, v, d, c).0).collect())
                        .collect();
                    let b: Vec<Vec<f64>> = (0..p)
                        .map(|d| (0..v).map(|c| pattern(p, v, d, c).1).collect())
                        .collect();
                    let sched = generate(
                        ScheduleKind::Interleaved,
                        &ScheduleInput::uniform(p, m, v, 1.0, 3.0, 0.0, comm),
                    )
                    .unwrap();
                    let mut costs = SimCosts {
                        blocking_sends: true,
                        ..SimCosts::abstract_run(&sched, 1.0, 3.0, 0.0, comm, 0.0)
                    };
                    for (d, chunks) in costs.chunks.iter_mut().enumerate() {
                        for (c, cc) in chunks.iter_mut().enumerate() {
                            cc.f_s = f[d][c];
                            cc.b_s = b[d][c];
                        }
                    }
                    let ours = simulate(&sched, &costs).unwrap().makespan;
                    let sends_only = megatron_blocking_makespan((p, v, m), &f, &b, comm, false);
                    let theirs = megatron_blocking_makespan((p, v, m), &f, &b, comm, true);
                    assert!(
                        (ours - sends_only).abs() < 1e-9 * ours,
                        "p {p} v {v} m {m} comm {comm}: pipescope {ours}, sends only {sends_only}"
                    );
                    assert!(theirs >= ours - 1e-9 * ours);
                    if pattern_index < 2 {
                        assert!((theirs - ours).abs() < 1e-9 * ours, "{p} {v} {m} {comm}");
                    }
                    largest = largest.max(theirs / ours - 1.0);
                }
            }
        }
    }
    println!("the receives' waits add at most {:.3} %", 100.0 * largest);
    assert!(largest < 1e-3, "{largest}");
}
