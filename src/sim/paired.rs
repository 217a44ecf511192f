//! PipeOffload's copy slots for two devices that share a host link (`po-h`, `po-f`): the
//! zero-bubble repository's `scheduler/offloading.py` pass, on the finished compute timeline.
//!
//! Each device has one copy stream. Its time, from the even device's first forward end, is cut
//! into periods of two slots of one copy's length `x`: the first slot of a period carries a
//! device-to-host copy (D2H), the second a host-to-device reload (H2D). The odd device's
//! periods start `x` later, so while one device of the pair sends, the other receives: each
//! direction of the shared link carries one copy at a time (the paper's synchronized
//! interleaving), which is what the slot length `x` is measured at.
//!
//! - A micro-batch-chunk whose forward-end to backward-start gap, less one backward, is at
//!   most three periods stays resident (the source's lifespan filter).
//! - Sends go first-in first-out in forward order, each in the first free send slot that
//!   starts at or after its forward's end.
//! - Reloads go in reverse backward order, each in the latest free reload slot that ends one
//!   backward's duration before the backward (or the recomputation before it) starts. A
//!   reload that would not start after its send ended makes the offload unschedulable, as
//!   the source's assertion does ("Unable to schedule offload").
//! - Warm-up: before the pair's first reload only sends move, and the two devices' sends
//!   alternate back to back, each as early as its forward allows, at the speed of one copy
//!   alone on the link (`solo`, shorter than `x`).

use super::copies::Placed;

/// One offloadable micro-batch-chunk of a device.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cell {
    /// End of its forward.
    pub f_end: f64,
    /// Start of the first op that reads the bytes again (recomputation or backward).
    pub need: f64,
    /// Duration of that backward (recomputation included).
    pub b_dur: f64,
}

/// One device's offloadable cells: in forward order, and their backward order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Device {
    /// Cells in forward order.
    pub cells: Vec<Cell>,
    /// Indices into `cells` in the order the device runs their backwards.
    pub b_order: Vec<usize>,
    /// End of the device's last compute op.
    pub last_end: f64,
}

/// Why the pair's copies cannot be placed: the member of the pair (0 or 1) one of whose
/// reloads would have to start before its send has ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Unschedulable {
    /// 0 for the even device of the pair, 1 for the odd one.
    pub member: usize,
}

/// A copy placed in a slot: its slot index on the device's own grid (even: send, odd:
/// reload), the cell, and its times.
#[derive(Debug, Clone, Copy)]
struct Pass {
    index: i64,
    cell: usize,
    send: bool,
    start: f64,
    end: f64,
}

/// Places the copies of a pair of devices whose grids start at `start` (the even device's
/// first forward end) with copy slots of `x` and warm-up sends of `solo`. Returns, per member,
/// `Some` placement for each cell that goes to the host, `None` for those that stay.
pub(crate) fn place_pair(
    pair: [&Device; 2],
    start: f64,
    x: f64,
    solo: f64,
) -> Result<[Vec<Option<Placed>>; 2], Unschedulable> {
    if !(x > 0.0 && x.is_finite()) {
        return Ok([instant(pair[0]), instant(pair[1])]);
    }
    let mut passes = [Vec::new(), Vec::new()];
    for (member, dev) in pair.iter().enumerate() {
        let origin = start + x * member as f64;
        passes[member] = slots(dev, origin, x).ok_or(Unschedulable { member })?;
    }
    adjust_warmup(pair, &mut passes, solo);
    let mut out = [Vec::new(), Vec::new()];
    for member in 0..2 {
        let mut placed: Vec<Option<Placed>> = vec![None; pair[member].cells.len()];
        let mut send_of = vec![None; pair[member].cells.len()];
        for p in passes[member].iter().filter(|p| p.send) {
            send_of[p.cell] = Some((p.start, p.end));
        }
        for p in passes[member].iter().filter(|p| !p.send) {
            if let Some(d2h) = send_of[p.cell] {
                placed[p.cell] = Some(Placed {
                    d2h,
                    h2d: (p.start, p.end),
                });
            }
        }
        out[member] = placed;
    }
    Ok(out)
}

/// The sends and reloads of one device on its grid from `origin` (`None`: a reload would
/// not follow its send). Slot `j` of the grid starts at `origin + 2 j x` (its send half) and
/// its reload half ends at `origin + 2 (j + 1) x`.
fn slots(dev: &Device, origin: f64, x: f64) -> Option<Vec<Pass>> {
    let period = 2.0 * x;
    let at = |j: i64| origin + j as f64 * period;
    // The first period boundary at or after `t`, and the last at or before it.
    let after = |t: f64| {
        let mut j = ((t - origin) / period).ceil().max(0.0) as i64;
        while j > 0 && at(j - 1) >= t {
            j -= 1;
        }
        while at(j) < t {
            j += 1;
        }
        j
    };
    let before = |t: f64| {
        let mut j = ((t - origin) / period).floor() as i64;
        while at(j + 1) <= t {
            j += 1;
        }
        while at(j) > t {
            j -= 1;
        }
        j
    };
    let valid: Vec<bool> = dev
        .cells
        .iter()
        .map(|c| c.need - c.b_dur - c.f_end > 3.0 * period)
        .collect();
    let mut out = Vec::new();
    let mut send_end = vec![f64::NAN; dev.cells.len()];
    let mut j = 0i64;
    for (i, c) in dev.cells.iter().enumerate() {
        if !valid[i] {
            continue;
        }
        j = j.max(after(c.f_end));
        send_end[i] = at(j) + x;
        out.push(Pass {
            index: 2 * j,
            cell: i,
            send: true,
            start: at(j),
            end: at(j) + x,
        });
        j += 1;
    }
    j = j.max(after(dev.last_end));
    for &i in dev.b_order.iter().rev() {
        let c = &dev.cells[i];
        if !valid[i] {
            continue;
        }
        j = j.min(before(c.need - c.b_dur));
        let end = at(j);
        if end - x <= send_end[i] {
            return None;
        }
        out.push(Pass {
            index: 2 * j - 1,
            cell: i,
            send: false,
            start: end - x,
            end,
        });
        j -= 1;
    }
    out.sort_by_key(|p| p.index);
    Some(out)
}

/// Instant copies (an infinitely fast link): each cell that lives at all goes to the host
/// as its forward ends and comes back one backward's duration before its backward.
fn instant(dev: &Device) -> Vec<Option<Placed>> {
    dev.cells
        .iter()
        .map(|c| {
            let back = c.need - c.b_dur;
            (back > c.f_end).then_some(Placed {
                d2h: (c.f_end, c.f_end),
                h2d: (back, back),
            })
        })
        .collect()
}

/// The source's warm-up adjustment: the sends of both devices before the pair's first reload
/// (in the order of their slots, the odd device's half a period later) run back to back at
/// the solo speed, each no earlier than its forward's end.
fn adjust_warmup(pair: [&Device; 2], passes: &mut [Vec<Pass>; 2], solo: f64) {
    let (Some(first), Some(last)) = (passes[0].first(), passes[0].last()) else {
        return;
    };
    let mut min_recv = last.index;
    for (member, list) in passes.iter().enumerate() {
        for p in list.iter().filter(|p| !p.send) {
            min_recv = min_recv.min(p.index + member as i64);
        }
    }
    let (mut t, mut index) = (first.start, first.index);
    let mut next = [0usize; 2];
    while index < min_recv {
        for member in 0..2 {
            let Some(p) = passes[member].get_mut(next[member]) else {
                continue;
            };
            if p.index + member as i64 != index {
                continue;
            }
            t = t.max(pair[member].cells[p.cell].f_end);
            if t <= p.start {
                p.start = t;
                p.end = t + solo;
            }
            next[member] += 1;
            t += solo;
        }
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(cells: &[(f64, f64)], last_end: f64) -> Device {
        Device {
            cells: cells
                .iter()
                .map(|&(f_end, need)| Cell {
                    f_end,
                    need,
                    b_dur: 1.0,
                })
                .collect(),
            b_order: (0..cells.len()).collect(),
            last_end,
        }
    }

    #[test]
    fn sends_and_reloads_alternate_and_the_pair_is_half_a_period_apart() {
        // Slot 1: periods of 2 from t = 1 (device 0) and t = 2 (device 1).
        let a = dev(&[(1.0, 20.0), (2.0, 21.0)], 22.0);
        let b = dev(&[(2.0, 20.0), (3.0, 21.0)], 22.0);
        let [pa, pb] = place_pair([&a, &b], 1.0, 1.0, 1.0).expect("fits");
        let pa: Vec<Placed> = pa.into_iter().flatten().collect();
        let pb: Vec<Placed> = pb.into_iter().flatten().collect();
        assert_eq!(pa.len(), 2);
        assert_eq!(pb.len(), 2);
        // Warm-up (solo = x here): the four sends back to back in slot order a0, b0, a1, b1.
        assert_eq!(pa[0].d2h, (1.0, 2.0));
        assert_eq!(pb[0].d2h, (2.0, 3.0));
        assert_eq!(pa[1].d2h, (3.0, 4.0));
        assert_eq!(pb[1].d2h, (4.0, 5.0));
        // Reloads: the last backward (need 21, duration 1) gets the reload slot ending at
        // the latest period boundary <= 20; the one before it the slot before that.
        assert_eq!(pa[1].h2d, (18.0, 19.0));
        assert_eq!(pa[0].h2d, (16.0, 17.0));
        assert_eq!(pb[1].h2d, (19.0, 20.0));
        assert_eq!(pb[0].h2d, (17.0, 18.0));
    }

    #[test]
    fn short_lives_stay_and_too_slow_copies_are_refused() {
        // Gap less one backward: 5 - 1 - 1 = 3 <= 3 periods of 2: resident.
        let a = dev(&[(1.0, 5.0)], 6.0);
        let got = place_pair([&a, &a.clone()], 1.0, 1.0, 1.0).expect("fits");
        assert!(got[0].iter().all(Option::is_none));
        // Three sends FIFO from t = 1 with periods of 4 end at 3, 7, 11; the reloads' latest
        // slots (ending at 13, 9, 5 before the backwards at 15, 15.5, 16) start before the
        // third send has ended: the source's "Unable to schedule offload".
        let slow = dev(&[(1.0, 15.0), (1.5, 15.5), (2.0, 16.0)], 17.0);
        assert_eq!(
            place_pair([&slow, &slow.clone()], 1.0, 2.0, 2.0),
            Err(Unschedulable { member: 0 })
        );
    }
}
