//! From the timing pass to the result: memory curves (docs/model.md model), the
//! timeline and the metrics.

use std::cmp::Ordering;

use crate::schedule::Schedule;

use super::engine::{DeviceRun, MemEvent};
use super::types::{DeviceMetrics, MemoryCurve, SimCosts, Simulation, Timeline};

/// Builds the [`Simulation`] of `runs`.
pub(crate) fn finish(sched: &Schedule, costs: &SimCosts, mut runs: Vec<DeviceRun>) -> Simulation {
    let p = sched.p as usize;
    let makespan = runs
        .iter()
        .flat_map(|r| {
            [
                r.compute.last().map_or(0.0, |s| s.end),
                r.copy.iter().fold(0.0, |a: f64, s| a.max(s.end)),
                r.send.iter().fold(0.0, |a: f64, s| a.max(s.end)),
            ]
        })
        .fold(0.0, f64::max);
    let mut memory = Vec::with_capacity(p);
    let mut devices = Vec::with_capacity(p);
    let mut total_busy = 0.0;
    for (d, run) in runs.iter_mut().enumerate() {
        let static_bytes = costs.static_bytes.get(d).copied().unwrap_or(0);
        let transient = costs.transient_bytes.get(d).copied().unwrap_or(0);
        let curve = curve_of(d as u32, static_bytes, &mut run.events);
        let busy = run.busy;
        total_busy += busy;
        devices.push(DeviceMetrics {
            device: d as u32,
            busy,
            bubble_rate: if makespan > 0.0 {
                1.0 - busy / makespan
            } else {
                0.0
            },
            peak_memory_bytes: static_bytes
                .saturating_add(curve.peak_bytes)
                .saturating_add(transient),
            peak_activation_bytes: curve.peak_bytes,
            peak_in_flight: curve.peak_count,
        });
        memory.push(curve.curve);
    }
    let elided = if runs.iter().any(|r| r.elided != (0.0, 0.0)) {
        runs.iter().map(|r| r.elided).collect()
    } else {
        Vec::new()
    };
    let n_spans = runs
        .iter()
        .map(|r| r.compute.len() + r.copy.len() + r.send.len())
        .sum();
    let mut spans = Vec::with_capacity(n_spans);
    for run in runs {
        spans.extend(run.compute);
        spans.extend(run.copy);
        spans.extend(run.send);
    }
    let capacity = makespan * p as f64;
    let bubble_rate = if capacity > 0.0 {
        1.0 - total_busy / capacity
    } else {
        0.0
    };
    let util = |flops: Option<f64>| match (flops, costs.peak_flops_per_device) {
        (Some(f), Some(peak)) if makespan > 0.0 && peak > 0.0 && p > 0 => {
            Some(f / (makespan * peak * p as f64))
        }
        _ => None,
    };
    Simulation {
        timeline: Timeline {
            devices: sched.p,
            spans,
            makespan,
        },
        memory,
        devices,
        makespan,
        bubble_rate,
        mfu: util(costs.model_flops),
        hfu: util(costs.hardware_flops),
        job: None,
        elided,
    }
}

struct Curve {
    curve: MemoryCurve,
    peak_bytes: u64,
    peak_count: u32,
}

/// Orders events by time, then replays them. At the same instant the events keep the order
/// the engine pushed them in, which is the device's op order: a free at the end of an op
/// comes before an allocation by a later op starting at that instant, and with zero-length
/// ops (`--costs 0,0,0`) an earlier F still counts before a later W frees it.
fn curve_of(device: u32, static_bytes: u64, events: &mut [MemEvent]) -> Curve {
    // `sort_by` is stable.
    events.sort_by(|a, b| a.t.partial_cmp(&b.t).unwrap_or(Ordering::Equal));
    let (mut bytes, mut count, mut host) = (0i64, 0i64, 0i64);
    let (mut peak_bytes, mut peak_count) = (0i64, 0i64);
    let mut points: Vec<(f64, u64)> = Vec::with_capacity(events.len());
    let mut host_points: Vec<(f64, u64)> = Vec::new();
    for ev in events.iter() {
        bytes += ev.bytes;
        count += i64::from(ev.count);
        peak_bytes = peak_bytes.max(bytes);
        peak_count = peak_count.max(count);
        push_point(&mut points, ev.t, bytes);
        if ev.host != 0 {
            host += ev.host;
            push_point(&mut host_points, ev.t, host);
        }
    }
    Curve {
        curve: MemoryCurve {
            device,
            static_bytes,
            points,
            host_points,
        },
        peak_bytes: u64::try_from(peak_bytes).unwrap_or(0),
        peak_count: u32::try_from(peak_count).unwrap_or(0),
    }
}

/// Appends `(t, value)`, replacing the last point when it has the same time.
fn push_point(points: &mut Vec<(f64, u64)>, t: f64, value: i64) {
    let value = u64::try_from(value).unwrap_or(0);
    match points.last_mut() {
        Some(last) if last.0 == t => last.1 = value,
        _ => points.push((t, value)),
    }
}
