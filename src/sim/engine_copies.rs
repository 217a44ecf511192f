//! The engine's host copies outside PipeOffload's paired pass: fitting every device's copies
//! around its finished compute timeline, and adding placed copies (their spans and memory
//! moves) to a device's run.

use super::super::copies::{self, Candidate};
use super::super::types::SpanKind;
use super::{Engine, MemEvent};

impl Engine<'_> {
    /// Fits every device's copies around its finished compute timeline
    /// ([`super::super::copies`]).
    pub(super) fn place_copies(&mut self) {
        for di in 0..self.offloadable.len() {
            let list = std::mem::take(&mut self.offloadable[di]);
            let cands: Vec<Candidate> = list
                .iter()
                .map(|&(cell, _, chunk)| Candidate {
                    f_end: self.f_end[cell],
                    need: self.need[cell],
                    copy_s: self.costs[di * self.v + chunk as usize].copy,
                })
                .collect();
            let placed = copies::place(&cands);
            self.placed_copies += placed.iter().flatten().count();
            self.apply_copies(di, &list, placed, false);
        }
    }

    /// Adds device `di`'s placed copies (one per entry of its offloadable `list`, `None` for
    /// those that stay resident): copy spans, and the memory moves. A D2H's free comes
    /// before, and an H2D's allocation after, the compute events of the same instant. With
    /// `at_op_boundaries` (PipeOffload's runtime, which acts on copies between the compute
    /// ops it launches in order), a D2H frees its bytes at the start of the first op that
    /// starts after it ended, and an H2D allocates its buffer at the start of the op running
    /// when it starts.
    pub(in super::super) fn apply_copies(
        &mut self,
        di: usize,
        list: &[(usize, u32, u32)],
        placed: Vec<Option<copies::Placed>>,
        at_op_boundaries: bool,
    ) {
        let d = di as u32;
        let mut frees = Vec::new();
        let mut loads = Vec::new();
        let ops = if at_op_boundaries {
            self.ops.get(di).map_or(&[][..], Vec::as_slice)
        } else {
            &[]
        };
        let free_at = |t: f64| {
            let i = ops.partition_point(|r| r.start < t);
            ops.get(i).map_or(t, |r| r.start)
        };
        let alloc_at = |t: f64| {
            let i = ops.partition_point(|r| r.end <= t);
            ops.get(i).map_or(t, |r| r.start.min(t))
        };
        let mut copies = Vec::new();
        for (&(_, mb, chunk), p) in list.iter().zip(placed) {
            let Some(p) = p else { continue };
            let off = self.costs[di * self.v + chunk as usize].off;
            copies.push((SpanKind::D2H, mb, chunk, p.d2h));
            copies.push((SpanKind::H2D, mb, chunk, p.h2d));
            frees.push(MemEvent {
                t: free_at(p.d2h.1),
                bytes: -off,
                count: 0,
                host: off,
            });
            loads.push(MemEvent {
                t: alloc_at(p.h2d.0),
                bytes: off,
                count: 0,
                host: -off,
            });
        }
        for (kind, mb, chunk, (start, end)) in copies {
            self.push_copy(d, kind, mb, chunk, start, end);
        }
        let run = &mut self.runs[di];
        run.copy.sort_by(|a, b| a.start.total_cmp(&b.start));
        frees.append(&mut run.events);
        frees.append(&mut loads);
        run.events = frees;
    }
}
