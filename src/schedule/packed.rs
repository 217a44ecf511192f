//! A schedule kept in about half a byte an op, for the memo of generated schedules to hold
//! many more than it could keep whole ([`PackedSchedule`]).
//!
//! On a device, the ops of one (kind, chunk) almost always run their micro-batches in
//! order, 0, 1, 2, ...: an op is then told by its (kind, chunk) alone, one of a few tags,
//! and its micro-batch is how many of that tag came before it. Each op is stored as a
//! four-bit tag; an op that does not follow that rule (or whose tag does not fit in four
//! bits) is stored whole, in a list of exceptions. Unpacking gives back the schedule the
//! packing read, op for op (a test packs every kind and compares).

use super::{Op, OpKind, Placement, Schedule, ScheduleKind};

/// The tag of the exceptions: ops stored whole.
const ESCAPE: u8 = 15;

/// A [`Schedule`] in few bytes ([`PackedSchedule::of`], [`PackedSchedule::unpack`]).
#[derive(Debug, Clone)]
pub(crate) struct PackedSchedule {
    kind: ScheduleKind,
    p: u32,
    m: u32,
    v: u32,
    placement: Placement,
    offloaded: Vec<Vec<bool>>,
    pairs: Vec<Vec<u32>>,
    /// Ops per device.
    lens: Vec<u32>,
    /// Every op's tag, devices one after another, two to a byte (low half first).
    tags: Vec<u8>,
    /// The ops stored whole, in order.
    whole: Vec<Op>,
}

impl PackedSchedule {
    /// `sched` packed.
    pub(crate) fn of(sched: &Schedule) -> PackedSchedule {
        let v = sched.v.max(1);
        let total = sched.op_count();
        let mut tags = vec![0u8; total.div_ceil(2)];
        let mut whole = Vec::new();
        let mut at = 0usize;
        // Per tag, how many ops of it came before on this device.
        let mut seen = vec![0u32; (4 * v) as usize];
        for ops in &sched.devices {
            seen.fill(0);
            for op in ops {
                let tag = (op.chunk < v)
                    .then(|| op.kind.index() as u32 * v + op.chunk)
                    .filter(|&t| t < u32::from(ESCAPE));
                let tag = match tag {
                    Some(t) if seen[t as usize] == op.micro_batch => {
                        seen[t as usize] += 1;
                        t as u8
                    }
                    _ => {
                        whole.push(*op);
                        ESCAPE
                    }
                };
                tags[at / 2] |= tag << (4 * (at % 2));
                at += 1;
            }
        }
        PackedSchedule {
            kind: sched.kind,
            p: sched.p,
            m: sched.m,
            v: sched.v,
            placement: sched.placement,
            offloaded: sched.offloaded.clone(),
            pairs: sched.pairs.clone(),
            lens: sched.devices.iter().map(|d| d.len() as u32).collect(),
            tags,
            whole,
        }
    }

    /// The schedule [`PackedSchedule::of`] read.
    pub(crate) fn unpack(&self) -> Schedule {
        let v = self.v.max(1);
        let mut sched = Schedule::empty(self.kind, self.p, self.m, self.v, self.placement);
        sched.offloaded.clone_from(&self.offloaded);
        sched.pairs.clone_from(&self.pairs);
        let mut whole = self.whole.iter();
        let mut at = 0usize;
        let mut seen = vec![0u32; (4 * v) as usize];
        sched.devices = self
            .lens
            .iter()
            .map(|&len| {
                seen.fill(0);
                (0..len)
                    .map(|_| {
                        let tag = (self.tags[at / 2] >> (4 * (at % 2))) & 0xf;
                        at += 1;
                        if tag == ESCAPE {
                            // Packing stored one whole op per escape.
                            return whole.next().copied().unwrap_or(Op::new(OpKind::F, 0, 0));
                        }
                        let t = u32::from(tag);
                        let mb = seen[t as usize];
                        seen[t as usize] += 1;
                        Op::new(OpKind::ALL[(t / v) as usize], mb, t % v)
                    })
                    .collect()
            })
            .collect();
        sched
    }

    /// Bytes this takes (about; for the memo's budget).
    pub(crate) fn bytes(&self) -> usize {
        let rows = |x: usize| x * std::mem::size_of::<Vec<u8>>();
        std::mem::size_of::<Self>()
            + self.tags.len()
            + self.whole.len() * std::mem::size_of::<Op>()
            + self.lens.len() * 4
            + rows(self.offloaded.len() + self.pairs.len())
            + self.offloaded.iter().map(Vec::len).sum::<usize>()
            + 4 * self.pairs.iter().map(Vec::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schedule::{ScheduleInput, generate};

    /// Every kind, on several sizes and unlike durations, unpacks to what was packed; ZB-V
    /// takes half a byte an op and little more.
    #[test]
    fn unpacking_gives_back_every_schedule() {
        let mut packed_any = 0;
        for &kind in ScheduleKind::ALL {
            for (p, m, v) in [(2, 4, 2), (4, 8, 2), (4, 12, 3), (6, 13, 2), (8, 24, 4)] {
                let mut input = ScheduleInput::uniform(p, m, v, 1.0, 1.3, 0.7, 0.05);
                for (d, row) in input.f.iter_mut().enumerate() {
                    row[0] = 1.0 + 0.3 * d as f64;
                }
                let Ok(sched) = generate(kind, &input) else {
                    continue;
                };
                let packed = PackedSchedule::of(&sched);
                let back = packed.unpack();
                assert_eq!(back, sched, "{kind} p {p} m {m} v {v}");
                assert_eq!(back.offloaded, sched.offloaded);
                assert_eq!(back.pairs, sched.pairs);
                if kind == ScheduleKind::ZbV {
                    assert!(packed.whole.is_empty(), "{kind}");
                    assert_eq!(packed.tags.len(), sched.op_count().div_ceil(2));
                    assert!(packed.bytes() < 1000 + sched.op_count() / 2);
                }
                packed_any += 1;
            }
        }
        assert!(packed_any > 40);
    }

    /// Ops out of micro-batch order, chunks past the tags and an odd op count are stored
    /// whole and come back.
    #[test]
    fn ops_out_of_order_come_back() {
        let mut sched = Schedule::empty(ScheduleKind::Interleaved, 2, 4, 8, Placement::Looped);
        sched.devices[0] = vec![
            Op::new(OpKind::F, 1, 0),
            Op::new(OpKind::F, 0, 0),
            Op::new(OpKind::B, 0, 7),
            Op::new(OpKind::BW, 3, 1),
            Op::new(OpKind::F, 2, 9),
        ];
        sched.devices[1] = vec![Op::new(OpKind::W, 0, 1), Op::new(OpKind::W, 1, 1)];
        sched.pairs[1] = vec![0];
        sched.offloaded[0][3] = true;
        let back = PackedSchedule::of(&sched).unpack();
        assert_eq!(back, sched);
        assert_eq!(back.pairs, sched.pairs);
        assert_eq!(back.offloaded, sched.offloaded);
    }
}
