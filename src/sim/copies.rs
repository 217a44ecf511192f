//! The host copy lane of one device (offload): which micro-batch-chunks actually go to the
//! host, and when their copies run.
//!
//! The rule is PipeOffload's offload pass (the zero-bubble repository's scheduler): compute
//! is never delayed by a copy. The compute timeline is therefore the one without offload,
//! and the copies are fitted around it afterwards, longest forward-to-backward gap first
//! (those hold the most memory for longest; equal gaps in forward order):
//!
//! - a copy whose forward-to-backward gap cannot hold its round trip (`gap <= 2 x copy`)
//!   stays resident (the source's "invalid offload" test), which keeps every copy of a
//!   stage with a short gap (the last stages of 1F1B) on the device;
//! - otherwise the device-to-host copy takes the earliest free slot of the lane after the
//!   forward, and the reload the latest free slot that still ends before the
//!   recomputation or backward that needs the bytes; when either does not fit around the
//!   copies already placed, the micro-batch-chunk stays resident. Where the lane cannot
//!   carry every copy (the paper's `k > 1`), the short-lived ones are the ones left.
//!
//! Copies of one device run one at a time (PipeOffload's single copy stream).

/// One micro-batch-chunk whose kept bytes may go to the host.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    /// End of its forward.
    pub f_end: f64,
    /// Start of the first op that reads the bytes again (its recomputation or backward).
    pub need: f64,
    /// Duration of one copy (each way).
    pub copy_s: f64,
}

/// Where an offloaded micro-batch-chunk's two copies run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Placed {
    /// Device-to-host copy `(start, end)`.
    pub d2h: (f64, f64),
    /// Host-to-device reload `(start, end)`.
    pub h2d: (f64, f64),
}

/// Busy intervals of a copy lane, sorted by start, never overlapping.
#[derive(Debug, Default)]
struct Lane {
    busy: Vec<(f64, f64)>,
}

impl Lane {
    /// Earliest start `>= from` of a free slot of length `len`.
    fn earliest(&self, from: f64, len: f64) -> f64 {
        let mut s = from;
        let first = self.busy.partition_point(|iv| iv.1 <= s);
        for &(a, b) in &self.busy[first..] {
            if s + len <= a {
                break;
            }
            s = s.max(b);
        }
        s
    }

    /// Latest end `<= until` of a free slot of length `len`.
    fn latest(&self, until: f64, len: f64) -> f64 {
        let mut e = until;
        let last = self.busy.partition_point(|iv| iv.0 < e);
        for &(a, b) in self.busy[..last].iter().rev() {
            if b <= e - len {
                break;
            }
            e = e.min(a);
        }
        e
    }

    fn reserve(&mut self, iv: (f64, f64)) {
        if iv.1 > iv.0 {
            let at = self.busy.partition_point(|x| x.0 < iv.0);
            self.busy.insert(at, iv);
        }
    }
}

/// Places the copies of one device's candidates (given in forward order): `None` for a
/// micro-batch-chunk that stays resident. The longest-lived copies (longest
/// forward-to-backward gap) are placed first, since they hold the most memory for longest;
/// equal gaps go in forward order.
pub(crate) fn place(candidates: &[Candidate]) -> Vec<Option<Placed>> {
    let gap = |c: &Candidate| c.need - c.f_end;
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        gap(&candidates[b])
            .total_cmp(&gap(&candidates[a]))
            .then(a.cmp(&b))
    });
    let mut lane = Lane::default();
    let mut out = vec![None; candidates.len()];
    for i in order {
        let c = &candidates[i];
        let len = c.copy_s;
        if gap(c) <= 2.0 * len {
            continue;
        }
        let s = lane.earliest(c.f_end, len);
        let d2h = (s, s + len);
        let e = lane.latest(c.need, len);
        let h2d = (e - len, e);
        if h2d.0 < d2h.1 {
            continue;
        }
        lane.reserve(d2h);
        lane.reserve(h2d);
        out[i] = Some(Placed { d2h, h2d });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(f_end: f64, need: f64, copy_s: f64) -> Candidate {
        Candidate {
            f_end,
            need,
            copy_s,
        }
    }

    #[test]
    fn a_gap_shorter_than_the_round_trip_stays_resident() {
        let got = place(&[
            cand(1.0, 3.0, 1.0),
            cand(1.0, 3.5, 1.0),
            cand(2.0, 2.0, 0.0),
        ]);
        assert_eq!(got[0], None);
        assert_eq!(
            got[1],
            Some(Placed {
                d2h: (1.0, 2.0),
                h2d: (2.5, 3.5)
            })
        );
        assert_eq!(got[2], None);
    }

    #[test]
    fn copies_share_one_lane_longest_gap_first() {
        // Gaps 9, 8, 6.5, 2.2: placed in that order. Copy 0: D2H 1-2, H2D 9-10. Copy 1
        // (F ends at 1.5): D2H 2-3, H2D 8-9 (its deadline 9.5 is inside copy 0's reload).
        // Copy 2 (F ends at 2, needed at 8.5): D2H 3-4, reload latest end 8 (before copy
        // 1's reload) -> 7-8. Copy 3 (F ends at 3, needed at 5.2): D2H 4-5, no room for the
        // reload -> resident.
        let got = place(&[
            cand(1.0, 10.0, 1.0),
            cand(1.5, 9.5, 1.0),
            cand(2.0, 8.5, 1.0),
            cand(3.0, 5.2, 1.0),
        ]);
        let p = |d: (f64, f64), h: (f64, f64)| Some(Placed { d2h: d, h2d: h });
        assert_eq!(got[0], p((1.0, 2.0), (9.0, 10.0)));
        assert_eq!(got[1], p((2.0, 3.0), (8.0, 9.0)));
        assert_eq!(got[2], p((3.0, 4.0), (7.0, 8.0)));
        assert_eq!(got[3], None);
        // The short-lived copy (gap 2.5) comes first in forward order but yields the lane
        // to the long-lived one (gap 3.5): in forward order the first would take 1-2 and
        // 2.5-3.5 and leave the second no room.
        let got = place(&[cand(1.0, 3.5, 1.0), cand(1.5, 5.0, 1.0)]);
        assert_eq!(got[0], None);
        assert_eq!(got[1], p((1.5, 2.5), (4.0, 5.0)));
    }
}
