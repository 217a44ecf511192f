//! The engine's overlapped forward-backward pairs (DualPipe, DualPipe-V): where a pair
//! starts, when both its inputs are there, and marking its two spans.

use super::Engine;

impl Engine<'_> {
    /// Whether the op device `di` is at opens its next overlapped pair.
    pub(super) fn pair_starts_here(&self, di: usize) -> bool {
        let next = self
            .sched
            .pairs
            .get(di)
            .and_then(|starts| starts.get(self.next_pair[di]));
        next.is_some_and(|&i| i as usize == self.ptr[di])
    }

    /// When the inputs of op `index` of device `d` (a pair's backward) are there.
    pub(super) fn partner_ready(&self, d: u32, index: usize) -> f64 {
        match self.sched.devices[d as usize].get(index) {
            Some(op) => {
                let stage = self.sched.stage_of(d, op.chunk, op.micro_batch);
                self.ready_at(d, op.kind, stage, op.micro_batch)
            }
            None => 0.0,
        }
    }

    /// Marks device `di`'s last compute span as one half of an overlapped pair.
    pub(super) fn mark_paired(&mut self, di: usize) {
        if let Some(span) = self.runs[di].compute.last_mut() {
            span.paired = true;
        }
    }
}
