//! The end of an iteration beyond the pipeline (docs/model.md): each device's timeline
//! ends with its data-parallel gradient reduction, the tied embedding's all-reduce (first and
//! last stage, which wait for each other), the optimizer step and, with the distributed
//! optimizer, the all-gather of the updated parameters.
//!
//! Without overlap the gradient reduction starts when the device's pipeline work ends. With
//! overlap (Megatron's `--overlap-grad-reduce`) the device's gradients are cut into equal
//! buckets that become ready one after another during the backward of the last micro-batch
//! (its spans, recomputation included), and each bucket's collective starts once it is ready
//! and the previous one is done: only what the remaining backward cannot hide is exposed.

use serde::Serialize;

use super::types::{Lane, Simulation, SpanKind};

/// One device's work after (or overlapping) its pipeline part.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct DeviceJob {
    /// All-reduce (or, with the distributed optimizer, reduce-scatter) of its gradients.
    pub grad_reduce_s: f64,
    /// Distributed optimizer: all-gather of the updated bf16 parameters (0 otherwise).
    pub param_gather_s: f64,
    /// Gradient buckets (at least 1) of the overlapped reduction.
    pub buckets: u32,
    /// Tied embedding's gradient all-reduce (non-zero on the first and last stage only).
    pub tied_s: f64,
    /// Optimizer step: a memory-bound pass over parameters, gradients and states.
    pub optimizer_s: f64,
    /// Tensor-parallel collectives inside the device's F/B/W of one iteration (reported
    /// apart from compute in the breakdown).
    pub tp_comm_s: f64,
    /// Context parallelism's exposed K/V exchange inside the device's F/B of one iteration.
    pub cp_comm_s: f64,
    /// ZeRO-3's exposed gathers and reduce-scatters inside the device's F/B of one
    /// iteration (reported as data-parallel communication).
    pub fsdp_comm_s: f64,
    /// Expert parallelism's all-to-alls inside the device's F/B of one iteration.
    pub ep_comm_s: f64,
}

/// The per-device end-of-iteration work of a job.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct JobCosts {
    /// One entry per device.
    pub devices: Vec<DeviceJob>,
    /// Overlap the gradient reduction with the last micro-batch's backward.
    pub overlap_grad_reduce: bool,
    /// Micro-batches per iteration (the last one's backward is the overlap window).
    pub m: u32,
    /// Megatron-Core's interleaved schedule: per device, the share of its overlapped
    /// gradient reduction each local chunk carries, each chunk reduced as one unit launched
    /// by the schedule (`chunk_sync`); empty where the buckets' readiness decides.
    pub chunk_shares: Vec<Vec<f64>>,
}

/// When one device's end-of-iteration steps end.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct DeviceTail {
    /// Device.
    pub device: u32,
    /// End of its pipeline work (last compute, copy or send).
    pub pipeline_end_s: f64,
    /// End of its gradient reduction.
    pub grad_end_s: f64,
    /// End of the tied embedding's all-reduce (its gradient end where it has none).
    pub tied_end_s: f64,
    /// End of its optimizer step.
    pub optimizer_end_s: f64,
    /// End of its iteration (after the parameter all-gather).
    pub end_s: f64,
}

/// Exposed time of the device that finishes last, by cause; the fields add up to the
/// iteration time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TimeBreakdown {
    /// Forward and backward compute (tensor-parallel collectives excluded).
    pub compute: f64,
    /// Recomputation.
    pub recompute: f64,
    /// Idle time: pipeline bubbles, waits for transfers and for the tied-embedding partner.
    pub bubble: f64,
    /// Tensor-parallel collectives inside the compute.
    pub tp_comm: f64,
    /// Context parallelism's K/V exchange that the attention kernels do not hide.
    pub cp_comm: f64,
    /// Expert parallelism's dispatch and combine all-to-alls (and expert tensor-parallel
    /// collectives) inside the mixture-of-experts layers.
    pub ep_comm: f64,
    /// Pipeline communication that is not hidden: the tied embedding's all-reduce.
    pub pp_comm: f64,
    /// Exposed data-parallel gradient reduction and parameter all-gather.
    pub dp_comm: f64,
    /// Optimizer step.
    pub optimizer: f64,
}

impl TimeBreakdown {
    /// Sum of the parts (the iteration time).
    pub fn total(&self) -> f64 {
        self.compute
            + self.recompute
            + self.bubble
            + self.tp_comm
            + self.cp_comm
            + self.ep_comm
            + self.pp_comm
            + self.dp_comm
            + self.optimizer
    }
}

/// The job part of a simulation.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct JobTimes {
    /// One entry per device.
    pub tails: Vec<DeviceTail>,
    /// The device that finishes last.
    pub last_device: u32,
    /// Its exposed time by cause.
    pub breakdown: TimeBreakdown,
    /// Every device's time by cause, one entry per device; each adds up to the iteration
    /// (a device that ends early counts the rest as bubble).
    pub devices: Vec<TimeBreakdown>,
}

/// Per device, the first start and the last end of the last micro-batch's backward work
/// (B, W, fused backward, recomputation) on its compute lane (infinite where there is none):
/// one pass over the timeline for all devices.
fn last_backward_windows(sim: &Simulation, last: u32, p: usize) -> Vec<(f64, f64)> {
    let mut out = vec![(f64::INFINITY, f64::NEG_INFINITY); p];
    for s in &sim.timeline.spans {
        let backward = matches!(
            s.kind,
            SpanKind::B | SpanKind::W | SpanKind::BW | SpanKind::R
        );
        if s.lane == Lane::Compute
            && backward
            && s.micro_batch == last
            && let Some(w) = out.get_mut(s.device as usize)
        {
            w.0 = w.0.min(s.start);
            w.1 = w.1.max(s.end);
        }
    }
    out
}

/// End of the gradient reduction of one device whose pipeline part ends at `pipeline_end`;
/// `(lo, hi)` is the window of its last micro-batch's backward work.
fn grad_end(job: &DeviceJob, costs: &JobCosts, end: f64, (lo, hi): (f64, f64)) -> f64 {
    if !costs.overlap_grad_reduce || job.grad_reduce_s <= 0.0 {
        return end + job.grad_reduce_s;
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return end + job.grad_reduce_s;
    }
    let n = job.buckets.max(1);
    let each = job.grad_reduce_s / f64::from(n);
    let mut t = lo;
    for i in 1..=n {
        let ready = lo + (hi - lo) * f64::from(i) / f64::from(n);
        t = t.max(ready) + each;
    }
    t.max(end)
}

/// Appends the job's end-of-iteration steps to `sim`: tails per device, the makespan, the
/// bubble rates and MFU/HFU over the longer iteration, and the breakdown of the device that
/// finishes last.
pub fn finish(sim: &mut Simulation, costs: &JobCosts) {
    let p = sim.devices.len();
    let (pipeline_end, times) = ends_and_times(sim, p);
    let none = DeviceJob::default();
    let job_of = |d: usize| costs.devices.get(d).unwrap_or(&none);
    let windows = if costs.overlap_grad_reduce {
        last_backward_windows(sim, costs.m.saturating_sub(1), p)
    } else {
        vec![(f64::INFINITY, f64::NEG_INFINITY); p]
    };
    let steps = if costs.overlap_grad_reduce && !costs.chunk_shares.is_empty() {
        super::chunk_sync::backward_steps(sim, p)
    } else {
        Vec::new()
    };
    let grads: Vec<f64> = (0..p)
        .map(|d| match (costs.chunk_shares.get(d), steps.get(d)) {
            (Some(shares), Some(steps)) if job_of(d).grad_reduce_s > 0.0 => {
                let reduce_s = job_of(d).grad_reduce_s;
                super::chunk_sync::grad_end(reduce_s, shares, d, steps, pipeline_end[d])
            }
            _ => grad_end(job_of(d), costs, pipeline_end[d], windows[d]),
        })
        .collect();
    // The tied pair starts its all-reduce when both have reduced their gradients.
    let tied_start = (0..p)
        .filter(|&d| job_of(d).tied_s > 0.0)
        .map(|d| grads[d])
        .fold(0.0f64, f64::max);
    let mut tails = Vec::with_capacity(p);
    for d in 0..p {
        let j = job_of(d);
        let tied_end = if j.tied_s > 0.0 {
            tied_start.max(grads[d]) + j.tied_s
        } else {
            grads[d]
        };
        let optimizer_end = tied_end + j.optimizer_s;
        tails.push(DeviceTail {
            device: d as u32,
            pipeline_end_s: pipeline_end[d],
            grad_end_s: grads[d],
            tied_end_s: tied_end,
            optimizer_end_s: optimizer_end,
            end_s: optimizer_end + j.param_gather_s,
        });
    }
    let (last, makespan) = tails
        .iter()
        .map(|t| (t.device, t.end_s))
        .fold((0, sim.makespan), |a, b| if b.1 > a.1 { b } else { a });
    let breakdown = match (tails.get(last as usize), times.get(last as usize)) {
        (Some(tail), Some(&(busy, recompute))) => {
            parts(busy, recompute, job_of(last as usize), tail)
        }
        _ => TimeBreakdown::default(),
    };
    let devices = device_breakdowns(&times, &tails, &job_of, makespan);
    let old = sim.makespan;
    if makespan > 0.0 {
        let total_busy: f64 = sim.devices.iter().map(|d| d.busy).sum();
        for d in &mut sim.devices {
            d.bubble_rate = 1.0 - d.busy / makespan;
        }
        sim.bubble_rate = 1.0 - total_busy / (makespan * p.max(1) as f64);
        sim.mfu = sim.mfu.map(|u| u * old / makespan);
        sim.hfu = sim.hfu.map(|u| u * old / makespan);
    }
    sim.makespan = makespan;
    sim.timeline.makespan = makespan;
    sim.job = Some(JobTimes {
        tails,
        last_device: last,
        breakdown,
        devices,
    });
}

/// Per device, the end of its pipeline work (its last span on any lane), and its compute-lane
/// time other than recomputation with its recomputation time: one pass over the timeline.
fn ends_and_times(sim: &Simulation, p: usize) -> (Vec<f64>, Vec<(f64, f64)>) {
    let mut ends = vec![0.0f64; p];
    let mut times = vec![(0.0f64, 0.0f64); p];
    for s in &sim.timeline.spans {
        let d = s.device as usize;
        if let Some(e) = ends.get_mut(d) {
            *e = e.max(s.end);
        }
        if s.lane != Lane::Compute {
            continue;
        }
        if let Some(t) = times.get_mut(d) {
            if s.kind == SpanKind::R {
                t.1 += s.end - s.start;
            } else {
                t.0 += s.end - s.start;
            }
        }
    }
    for (t, e) in times.iter_mut().zip(&sim.elided) {
        t.0 += e.0;
        t.1 += e.1;
    }
    (ends, times)
}

/// Every device's breakdown from its compute `times`; the time after a device's own end up
/// to `makespan` counts as its bubble.
fn device_breakdowns<'a>(
    times: &[(f64, f64)],
    tails: &[DeviceTail],
    job_of: &dyn Fn(usize) -> &'a DeviceJob,
    makespan: f64,
) -> Vec<TimeBreakdown> {
    tails
        .iter()
        .zip(times)
        .enumerate()
        .map(|(d, (tail, &(busy, recompute)))| {
            let mut b = parts(busy, recompute, job_of(d), tail);
            b.bubble += (makespan - tail.end_s).max(0.0);
            b
        })
        .collect()
}

/// The breakdown of a device with `busy` compute and `recompute` seconds, up to its own end.
fn parts(busy: f64, recompute: f64, job: &DeviceJob, tail: &DeviceTail) -> TimeBreakdown {
    let tp_comm = job.tp_comm_s.clamp(0.0, busy);
    let cp_comm = job.cp_comm_s.clamp(0.0, busy - tp_comm);
    let ep_comm = job.ep_comm_s.clamp(0.0, busy - tp_comm - cp_comm);
    let fsdp = job
        .fsdp_comm_s
        .clamp(0.0, busy - tp_comm - cp_comm - ep_comm);
    let dp_comm = (tail.grad_end_s - tail.pipeline_end_s).max(0.0) + job.param_gather_s + fsdp;
    let pp_comm = if job.tied_s > 0.0 { job.tied_s } else { 0.0 };
    let mut b = TimeBreakdown {
        compute: busy - tp_comm - cp_comm - ep_comm - fsdp,
        recompute,
        bubble: 0.0,
        tp_comm,
        cp_comm,
        ep_comm,
        pp_comm,
        dp_comm,
        optimizer: job.optimizer_s,
    };
    b.bubble = (tail.end_s - b.total()).max(0.0);
    b
}

/// Closed-form end-of-iteration time added to a pipeline estimate: the longest device tail
/// (with overlap, only the last bucket's reduction stays exposed).
pub fn estimate_tail_s(costs: &JobCosts) -> f64 {
    costs
        .devices
        .iter()
        .map(|j| {
            let grads = if costs.overlap_grad_reduce {
                j.grad_reduce_s / f64::from(j.buckets.max(1))
            } else {
                j.grad_reduce_s
            };
            grads + j.tied_s + j.optimizer_s + j.param_gather_s
        })
        .fold(0.0, f64::max)
}
