//! Where each device's iteration goes: compute, recomputation, time spent waiting on a
//! transfer (exposed communication) and other idle time, read off the simulated timeline.

use crate::Outcome;
use crate::sim::{Lane, Span, SpanKind};

/// One device's iteration time split four ways (they sum to the makespan).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeBreakdown {
    /// Forward and backward (B, W, BW) time.
    pub compute_s: f64,
    /// Recomputation time.
    pub recompute_s: f64,
    /// Idle time during which a neighbour's transfer was in flight.
    pub comm_s: f64,
    /// The rest of the idle time (pipeline bubble).
    pub idle_s: f64,
}

impl TimeBreakdown {
    /// The four parts in display order: compute, recompute, exposed comm, idle.
    pub fn parts(&self) -> [f64; 4] {
        [self.compute_s, self.recompute_s, self.comm_s, self.idle_s]
    }
}

/// The breakdown of every device of `o`, in one pass over the timeline.
pub fn time_breakdowns(o: &Outcome) -> Vec<TimeBreakdown> {
    let tl = &o.simulation.timeline;
    let n = tl.devices as usize;
    let mut compute: Vec<Vec<&Span>> = vec![Vec::new(); n];
    let mut sends: Vec<Vec<&Span>> = vec![Vec::new(); n];
    for s in &tl.spans {
        let Some(d) = compute.get_mut(s.device as usize) else {
            continue;
        };
        match s.lane {
            Lane::Compute => d.push(s),
            Lane::Send => sends[s.device as usize].push(s),
            Lane::Copy | Lane::Comm => {}
        }
    }
    (0..n)
        .map(|d| {
            let mut near: Vec<&Span> = Vec::new();
            if d > 0 {
                near.extend(&sends[d - 1]);
            }
            if d + 1 < n {
                near.extend(&sends[d + 1]);
            }
            device(&mut compute[d], &mut near, tl.makespan)
        })
        .collect()
}

fn device(ops: &mut [&Span], sends: &mut [&Span], makespan: f64) -> TimeBreakdown {
    let by_start = |a: &&Span, b: &&Span| a.start.total_cmp(&b.start);
    ops.sort_by(by_start);
    sends.sort_by(by_start);
    let mut out = TimeBreakdown::default();
    let mut gaps = Vec::new();
    let mut t = 0.0f64;
    for op in ops.iter() {
        let len = (op.end - op.start).max(0.0);
        if op.kind == SpanKind::R {
            out.recompute_s += len;
        } else {
            out.compute_s += len;
        }
        if op.start > t {
            gaps.push((t, op.start));
        }
        t = t.max(op.end);
    }
    if makespan > t {
        gaps.push((t, makespan));
    }
    let mut first = 0;
    for (g0, g1) in gaps {
        while first < sends.len() && sends[first].start + max_len(sends) <= g0 {
            first += 1;
        }
        let mut covered = 0.0;
        let mut reach = g0;
        for s in sends[first..].iter().take_while(|s| s.start < g1) {
            let (a, b) = (s.start.max(reach), s.end.min(g1));
            if b > a {
                covered += b - a;
                reach = b;
            }
        }
        out.comm_s += covered;
        out.idle_s += (g1 - g0) - covered;
    }
    out
}

/// The longest span of `spans` (sends of one neighbour pair are about equally long).
fn max_len(spans: &[&Span]) -> f64 {
    spans.iter().map(|s| s.end - s.start).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_sum_to_the_makespan_and_sends_count_as_exposed_comm() {
        let span = |device, lane, kind, start, end| Span {
            device,
            lane,
            kind,
            micro_batch: 0,
            chunk: 0,
            start,
            end,
        };
        let ops = [
            span(1, Lane::Compute, SpanKind::F, 0.0, 1.0),
            span(1, Lane::Compute, SpanKind::R, 3.0, 4.0),
            span(1, Lane::Compute, SpanKind::BW, 4.0, 6.0),
        ];
        let sends = [span(0, Lane::Send, SpanKind::Send, 1.5, 2.5)];
        let mut o: Vec<&Span> = ops.iter().collect();
        let mut s: Vec<&Span> = sends.iter().collect();
        let b = device(&mut o, &mut s, 8.0);
        assert_eq!(b.compute_s, 3.0);
        assert_eq!(b.recompute_s, 1.0);
        assert_eq!(b.comm_s, 1.0);
        assert_eq!(b.idle_s, 3.0);
        assert_eq!(b.parts().iter().sum::<f64>(), 8.0);
    }
}
