//! Chrome trace-event JSON (`{"traceEvents": [...]}`) as Perfetto and `chrome://tracing`
//! import it: a process per device (`pid` = device + 1), a thread per lane, one complete
//! event per op, memory as a counter and flows (v2, `bind_id` on the X events) along every
//! chain of cross-device dependencies ([`super::flow_chains`]). An overlapped forward-backward
//! pair (DualPipe, DualPipe-V) is one more slice, `cat` "pair", around its two ops.
//!
//! Times are microseconds with three decimals (nanoseconds), computed as integers so that
//! ops that touch in the simulation touch in the trace: no two slices of a thread overlap
//! partially. Sends do not queue behind each other, so overlapping sends of a device go to
//! further send threads.

use std::collections::HashMap;
use std::fmt::Write;

use super::{Run, Units, compute_index, flow_chains, kind_name};
use crate::sim::{Lane, SpanKind};

/// Thread id of the compute lane.
const COMPUTE_TID: u32 = 1;
/// Thread id of the host-copy lane.
const COPY_TID: u32 = 2;
/// Thread id of the first send lane (overlapping sends take the next ones).
const SEND_TID: u32 = 3;
/// The thread of the collectives inside the compute ops (K/V exchange, MoE all-to-alls, ZeRO-3's gathers
/// and reduce-scatters), below the iteration end's and far above the send threads.
const COMM_TID: u32 = 999_999;
/// The thread of the end-of-iteration steps (gradient reduction, tied embedding, optimizer);
/// far above the send threads, which are numbered from [`SEND_TID`] up.
const JOB_TID: u32 = 1_000_000;

use crate::scenario::GIB;

/// A time in the run's unit as integer nanoseconds (one cost unit = one microsecond).
fn nanos(units: Units, t: f64) -> i64 {
    let scale = match units {
        Units::Seconds => 1e9,
        Units::Abstract => 1e3,
    };
    (t * scale).round() as i64
}

/// Writes integer nanoseconds as microseconds (`12`, `12.5`, `0.001`).
fn write_us(out: &mut String, ns: i64) {
    let ns = ns.max(0);
    let (whole, frac) = (ns / 1000, ns % 1000);
    if frac == 0 {
        let _ = write!(out, "{whole}");
    } else {
        let text = format!("{frac:03}");
        let _ = write!(out, "{whole}.{}", text.trim_end_matches('0'));
    }
}

/// Flow fields of one compute span: its chain id and whether it starts, continues or ends it.
#[derive(Clone, Copy)]
struct Flow {
    id: u64,
    flow_in: bool,
    flow_out: bool,
}

/// The trace of `run` as one JSON object.
pub fn export(run: &Run<'_>) -> String {
    let sim = run.simulation;
    let sched = run.schedule;
    let p = sched.p.max(sim.devices.len() as u32);
    let mut out = String::with_capacity(64 + sim.timeline.spans.len() * 150);
    out.push_str("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push_str(",\n");
        }
    };
    // Flows: one id per chain, never reused.
    let index = compute_index(sim);
    let mut flows: HashMap<usize, Flow> = HashMap::new();
    for (n, chain) in flow_chains(sched).iter().enumerate() {
        let id = n as u64 + 1;
        let last = chain.len() - 1;
        for (k, op) in chain.iter().enumerate() {
            let kinds: &[SpanKind] = if op.backward {
                &[SpanKind::B, SpanKind::BW]
            } else {
                &[SpanKind::F]
            };
            let found = kinds
                .iter()
                .find_map(|&kind| index.get(&(op.device, op.chunk, op.micro_batch, kind)));
            if let Some(&i) = found {
                flows.insert(
                    i,
                    Flow {
                        id,
                        flow_in: k > 0,
                        flow_out: k < last,
                    },
                );
            }
        }
    }
    // Send threads: the first whose last send has ended.
    let mut send_ends: Vec<Vec<i64>> = vec![Vec::new(); p as usize];
    let mut tids: Vec<u32> = Vec::with_capacity(sim.timeline.spans.len());
    let mut spans: Vec<usize> = (0..sim.timeline.spans.len()).collect();
    spans.sort_by(|&a, &b| {
        let (x, y) = (&sim.timeline.spans[a], &sim.timeline.spans[b]);
        x.start.total_cmp(&y.start)
    });
    tids.resize(sim.timeline.spans.len(), COMPUTE_TID);
    let mut copy_used = vec![false; p as usize];
    let mut comm_used = vec![false; p as usize];
    for &i in &spans {
        let s = &sim.timeline.spans[i];
        let d = s.device as usize;
        tids[i] = match s.lane {
            Lane::Compute => COMPUTE_TID,
            Lane::Copy => {
                if let Some(u) = copy_used.get_mut(d) {
                    *u = true;
                }
                COPY_TID
            }
            Lane::Send => {
                let (start, end) = (nanos(run.units, s.start), nanos(run.units, s.end));
                let Some(ends) = send_ends.get_mut(d) else {
                    continue;
                };
                let slot = match ends.iter().position(|&e| e <= start) {
                    Some(k) => k,
                    None => {
                        ends.push(end);
                        ends.len() - 1
                    }
                };
                ends[slot] = end;
                SEND_TID + slot as u32
            }
            Lane::Comm => {
                if let Some(u) = comm_used.get_mut(d) {
                    *u = true;
                }
                COMM_TID
            }
        };
    }
    // Metadata: processes and threads.
    for d in 0..p {
        let pid = d + 1;
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_name\",\"args\":{{\"name\":\"device {d}\"}}}},\n\
             {{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{d}}}}},\n\
             {{\"ph\":\"M\",\"pid\":{pid},\"tid\":{COMPUTE_TID},\"name\":\"thread_name\",\"args\":{{\"name\":\"compute\"}}}}"
        );
        if copy_used.get(d as usize).copied().unwrap_or(false) {
            let _ = write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{COPY_TID},\"name\":\"thread_name\",\"args\":{{\"name\":\"host copies\"}}}}"
            );
        }
        if comm_used.get(d as usize).copied().unwrap_or(false) {
            let _ = write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{COMM_TID},\"name\":\"thread_name\",\"args\":{{\"name\":\"collectives\"}}}}"
            );
        }
        let sends = send_ends.get(d as usize).map_or(0, Vec::len);
        for k in 0..sends {
            let name = if k == 0 {
                "sends".to_string()
            } else {
                format!("sends {}", k + 1)
            };
            let _ = write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"{name}\"}}}}",
                SEND_TID + k as u32
            );
        }
    }
    // Overlapped F&B pairs: a slice around each pair's two ops on the compute thread,
    // written before the ops so that importers nest the ops inside it even at equal starts.
    let v = sched.v.max(1);
    for (f, b) in sim.timeline.pairs() {
        let (fs, bs) = (&sim.timeline.spans[f], &sim.timeline.spans[b]);
        let (start, end) = (nanos(run.units, fs.start), nanos(run.units, bs.end));
        let (fk, bk) = (kind_name(fs.kind), kind_name(bs.kind));
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"X\",\"pid\":{},\"tid\":{COMPUTE_TID},\"name\":\"{}&{}\",\"cat\":\"pair\",\"ts\":",
            fs.device + 1,
            super::op_label(fk, fs.micro_batch, fs.chunk, v),
            super::op_label(bk, bs.micro_batch, bs.chunk, v)
        );
        write_us(&mut out, start);
        out.push_str(",\"dur\":");
        write_us(&mut out, (end - start).max(0));
        let _ = write!(
            out,
            ",\"args\":{{\"forward_micro_batch\":{},\"backward_micro_batch\":{}}}}}",
            fs.micro_batch, bs.micro_batch
        );
    }
    // Ops.
    for (i, s) in sim.timeline.spans.iter().enumerate() {
        let kind = kind_name(s.kind);
        let (start, end) = (nanos(run.units, s.start), nanos(run.units, s.end));
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"cat\":\"{kind}\",\"ts\":",
            s.device + 1,
            tids[i],
            super::op_label(kind, s.micro_batch, s.chunk, v)
        );
        write_us(&mut out, start);
        out.push_str(",\"dur\":");
        write_us(&mut out, (end - start).max(0));
        if let Some(f) = flows.get(&i) {
            let _ = write!(out, ",\"bind_id\":{}", f.id);
            if f.flow_in {
                out.push_str(",\"flow_in\":true");
            }
            if f.flow_out {
                out.push_str(",\"flow_out\":true");
            }
        }
        let _ = write!(
            out,
            ",\"args\":{{\"micro_batch\":{},\"chunk\":{},\"kind\":\"{kind}\"}}}}",
            s.micro_batch, s.chunk
        );
    }
    // The end-of-iteration steps, one thread per device.
    let mut named = 0;
    for (pid, tid, name, start, end) in job_slices(run) {
        sep(&mut out);
        if named != pid {
            named = pid;
            let _ = writeln!(
                out,
                "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":\"iteration end\"}}}},"
            );
        }
        let _ = write!(
            out,
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{name}\",\"cat\":\"job\",\"ts\":"
        );
        write_us(&mut out, start);
        out.push_str(",\"dur\":");
        write_us(&mut out, (end - start).max(0));
        out.push_str(",\"args\":{}}");
    }
    // Memory counters.
    for curve in &sim.memory {
        let pid = curve.device + 1;
        let points = std::iter::once((0.0, 0u64)).chain(curve.points.iter().copied());
        for (t, bytes) in points {
            let ns = nanos(run.units, t);
            sep(&mut out);
            let _ = write!(
                out,
                "{{\"ph\":\"C\",\"pid\":{pid},\"name\":\"memory\",\"ts\":"
            );
            write_us(&mut out, ns);
            match run.units {
                Units::Seconds => {
                    let gib = (curve.static_bytes + bytes) as f64 / GIB;
                    let _ = write!(out, ",\"args\":{{\"GiB\":{gib:.4}}}}}");
                }
                Units::Abstract => {
                    let _ = write!(out, ",\"args\":{{\"activations\":{bytes}}}}}");
                }
            }
        }
    }
    out.push_str("\n]}\n");
    out
}

/// The end-of-iteration steps of a planned run as `(pid, tid, name, start ns, end ns)`:
/// gradient reduction, tied embedding all-reduce, optimizer step and parameter all-gather,
/// one after the other after each device's pipeline work (empty steps left out).
fn job_slices(run: &Run<'_>) -> Vec<(u32, u32, &'static str, i64, i64)> {
    let Some(job) = &run.simulation.job else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for tail in &job.tails {
        let steps = [
            ("grad reduce", tail.pipeline_end_s, tail.grad_end_s),
            (
                "tied embedding all-reduce",
                tail.grad_end_s,
                tail.tied_end_s,
            ),
            ("optimizer", tail.tied_end_s, tail.optimizer_end_s),
            ("param all-gather", tail.optimizer_end_s, tail.end_s),
        ];
        for (name, start, end) in steps {
            let (start, end) = (nanos(run.units, start), nanos(run.units, end));
            if end > start {
                out.push((tail.device + 1, JOB_TID, name, start, end));
            }
        }
    }
    out
}
