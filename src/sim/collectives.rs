//! The collectives that run inside the compute ops, drawn on each device's comm lane after
//! the timing pass: context parallelism's K/V exchange, expert parallelism's all-to-alls and
//! ZeRO-3's gathers and reduce-scatters. They do not move the ops (the ops' durations already hold what the
//! computation does not hide); they show where the link is busy. Inside one op they are laid
//! out one after another from its start (gathers, then the exchange, then the all-to-alls,
//! then the reduce-scatters), each for its link time, and cut at the op's end.

use super::types::{Lane, Simulation, Span, SpanKind};

/// Link time of the collectives of one (device, chunk) per micro-batch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChunkComm {
    /// K/V exchange inside the forward.
    pub kv_forward_s: f64,
    /// K/V (and their gradients') exchange inside the backward.
    pub kv_backward_s: f64,
    /// ZeRO-3 all-gathers of the chunk's weights before the forward.
    pub gather_forward_s: f64,
    /// ZeRO-3 all-gathers of the chunk's weights before the backward.
    pub gather_backward_s: f64,
    /// ZeRO-3 reduce-scatters of the chunk's gradients after the backward.
    pub scatter_s: f64,
    /// The MoE layers' all-to-alls inside the forward.
    pub a2a_forward_s: f64,
    /// The MoE layers' all-to-alls inside the backward.
    pub a2a_backward_s: f64,
    /// In an overlapped forward-backward pair, this chunk's all-to-alls run under the other
    /// half's compute (DualPipe's overlap): drawn inside the partner op, not its own.
    pub a2a_overlap: bool,
}

impl ChunkComm {
    fn is_empty(&self) -> bool {
        self.kv_forward_s <= 0.0
            && self.kv_backward_s <= 0.0
            && self.gather_forward_s <= 0.0
            && self.gather_backward_s <= 0.0
            && self.scatter_s <= 0.0
            && self.a2a_forward_s <= 0.0
            && self.a2a_backward_s <= 0.0
    }
}

/// Adds the comm-lane spans of every compute op of `sim` from `comm` (per device, per local
/// chunk). The timeline stays grouped by device, each device's comm spans after its others,
/// in start order.
pub fn annotate(sim: &mut Simulation, comm: &[Vec<ChunkComm>]) {
    if comm.iter().flatten().all(ChunkComm::is_empty) {
        return;
    }
    let of = |d: u32, c: u32| {
        comm.get(d as usize)
            .and_then(|row| row.get(c as usize))
            .copied()
            .unwrap_or_default()
    };
    let mut partner = vec![None; sim.timeline.spans.len()];
    for (f, b) in sim.timeline.pairs() {
        partner[f] = Some(b);
        partner[b] = Some(f);
    }
    let spans = std::mem::take(&mut sim.timeline.spans);
    // The all-to-all drawn inside op `i`: its own, or its pair partner's under the overlap.
    let a2a_in = |i: usize, s: &Span| -> (f64, u32, u32) {
        let own = |s: &Span| {
            let c = of(s.device, s.chunk);
            match s.kind {
                SpanKind::F => c.a2a_forward_s,
                SpanKind::B | SpanKind::BW => c.a2a_backward_s,
                _ => 0.0,
            }
        };
        match partner[i].and_then(|j| spans.get(j)) {
            Some(p) if of(s.device, s.chunk).a2a_overlap => (own(p), p.micro_batch, p.chunk),
            _ => (own(s), s.micro_batch, s.chunk),
        }
    };
    let mut out = Vec::with_capacity(spans.len() * 2);
    let mut pending: Vec<Span> = Vec::new();
    let mut device = spans.first().map_or(0, |s| s.device);
    for (i, &s) in spans.iter().enumerate() {
        if s.device != device {
            out.append(&mut pending);
            device = s.device;
        }
        if s.lane == Lane::Compute {
            let c = of(s.device, s.chunk);
            let (a2a_s, a2a_mb, a2a_chunk) = a2a_in(i, &s);
            let parts: &[(SpanKind, f64)] = match s.kind {
                SpanKind::F => &[
                    (SpanKind::Gather, c.gather_forward_s),
                    (SpanKind::Kv, c.kv_forward_s),
                    (SpanKind::A2a, a2a_s),
                ],
                SpanKind::B => &[
                    (SpanKind::Gather, c.gather_backward_s),
                    (SpanKind::Kv, c.kv_backward_s),
                    (SpanKind::A2a, a2a_s),
                ],
                SpanKind::BW => &[
                    (SpanKind::Gather, c.gather_backward_s),
                    (SpanKind::Kv, c.kv_backward_s),
                    (SpanKind::A2a, a2a_s),
                    (SpanKind::Scatter, c.scatter_s),
                ],
                SpanKind::W => &[(SpanKind::Scatter, c.scatter_s)],
                _ => &[],
            };
            let mut at = s.start;
            for &(kind, dur) in parts {
                let end = (at + dur).min(s.end);
                if dur > 0.0 && end > at {
                    let (micro_batch, chunk) = if kind == SpanKind::A2a {
                        (a2a_mb, a2a_chunk)
                    } else {
                        (s.micro_batch, s.chunk)
                    };
                    pending.push(Span {
                        lane: Lane::Comm,
                        kind,
                        micro_batch,
                        chunk,
                        start: at,
                        end,
                        // A collective inside a pair's op is not a half of the pair.
                        paired: false,
                        ..s
                    });
                    at = end;
                }
            }
        }
        out.push(s);
    }
    out.append(&mut pending);
    sim.timeline.spans = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Timeline;

    fn op(device: u32, kind: SpanKind, chunk: u32, start: f64, end: f64) -> Span {
        Span {
            device,
            lane: Lane::Compute,
            kind,
            micro_batch: 0,
            chunk,
            start,
            end,
            paired: false,
        }
    }

    #[test]
    fn collectives_follow_their_ops_and_stay_inside_them() {
        let mut sim = Simulation {
            timeline: Timeline {
                devices: 2,
                spans: vec![
                    op(0, SpanKind::F, 0, 0.0, 1.0),
                    op(0, SpanKind::BW, 0, 2.0, 4.0),
                    op(1, SpanKind::F, 0, 1.0, 2.0),
                ],
                makespan: 4.0,
            },
            ..Simulation::default()
        };
        let c = ChunkComm {
            kv_forward_s: 0.3,
            kv_backward_s: 0.6,
            gather_forward_s: 0.2,
            gather_backward_s: 0.2,
            scatter_s: 5.0,
            ..ChunkComm::default()
        };
        annotate(&mut sim, &[vec![c], vec![c]]);
        let comm: Vec<&Span> = sim
            .timeline
            .spans
            .iter()
            .filter(|s| s.lane == Lane::Comm)
            .collect();
        let kinds: Vec<(u32, SpanKind, f64, f64)> = comm
            .iter()
            .map(|s| (s.device, s.kind, s.start, s.end))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (0, SpanKind::Gather, 0.0, 0.2),
                (0, SpanKind::Kv, 0.2, 0.5),
                (0, SpanKind::Gather, 2.0, 2.2),
                (0, SpanKind::Kv, 2.2, 2.8000000000000003),
                // The reduce-scatter outlasts the op: cut at its end.
                (0, SpanKind::Scatter, 2.8000000000000003, 4.0),
                (1, SpanKind::Gather, 1.0, 1.2),
                (1, SpanKind::Kv, 1.2, 1.5),
            ]
        );
        // Grouped by device: device 0's spans all come before device 1's.
        let devices: Vec<u32> = sim.timeline.spans.iter().map(|s| s.device).collect();
        assert!(devices.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn all_to_alls_follow_the_exchange_inside_forwards_and_backwards() {
        let mut sim = Simulation {
            timeline: Timeline {
                devices: 1,
                spans: vec![
                    op(0, SpanKind::F, 0, 0.0, 1.0),
                    op(0, SpanKind::B, 0, 2.0, 4.0),
                    op(0, SpanKind::W, 0, 4.0, 5.0),
                ],
                makespan: 5.0,
            },
            ..Simulation::default()
        };
        let c = ChunkComm {
            kv_forward_s: 0.25,
            a2a_forward_s: 0.5,
            a2a_backward_s: 1.0,
            ..ChunkComm::default()
        };
        annotate(&mut sim, &[vec![c]]);
        let comm: Vec<(SpanKind, f64, f64)> = sim
            .timeline
            .spans
            .iter()
            .filter(|s| s.lane == Lane::Comm)
            .map(|s| (s.kind, s.start, s.end))
            .collect();
        assert_eq!(
            comm,
            vec![
                (SpanKind::Kv, 0.0, 0.25),
                (SpanKind::A2a, 0.25, 0.75),
                (SpanKind::A2a, 2.0, 3.0),
            ]
        );
    }

    #[test]
    fn the_collectives_of_a_paired_op_are_not_halves_of_the_pair() {
        let mut f = op(0, SpanKind::F, 0, 0.0, 1.0);
        let mut b = op(0, SpanKind::BW, 1, 1.0, 3.0);
        (f.paired, b.paired) = (true, true);
        let mut sim = Simulation {
            timeline: Timeline {
                devices: 1,
                spans: vec![f, b],
                makespan: 3.0,
            },
            ..Simulation::default()
        };
        let c = ChunkComm {
            kv_forward_s: 0.3,
            kv_backward_s: 0.6,
            ..ChunkComm::default()
        };
        annotate(&mut sim, &[vec![c, c]]);
        let spans = &sim.timeline.spans;
        assert!(spans.iter().any(|s| s.lane == Lane::Comm));
        assert!(spans.iter().all(|s| s.paired == (s.lane == Lane::Compute)));
        let pairs = sim.timeline.pairs();
        assert_eq!(pairs.len(), 1);
        assert_eq!(
            (spans[pairs[0].0].kind, spans[pairs[0].1].kind),
            (SpanKind::F, SpanKind::BW)
        );
    }

    #[test]
    fn nothing_to_draw_leaves_the_timeline_alone() {
        let spans = vec![op(0, SpanKind::F, 0, 0.0, 1.0)];
        let mut sim = Simulation {
            timeline: Timeline {
                devices: 1,
                spans: spans.clone(),
                makespan: 1.0,
            },
            ..Simulation::default()
        };
        annotate(&mut sim, &[vec![ChunkComm::default()]]);
        assert_eq!(sim.timeline.spans, spans);
    }
}
