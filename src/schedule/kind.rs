//! What each schedule kind is, stated once: how it places its chunks on the chain of stages
//! and whether its order depends on op durations. The generators build with exactly these
//! (a test checks it), and `solve` reads them instead of keeping its own lists.

use super::types::Placement;
use crate::scenario::ScheduleKind;

impl ScheduleKind {
    /// How this schedule's (device, chunk) pairs map onto the chain of stages.
    pub fn placement(self) -> Placement {
        match self {
            ScheduleKind::Gpipe
            | ScheduleKind::OneFOneB
            | ScheduleKind::ZbH1
            | ScheduleKind::ZbH2
            | ScheduleKind::ZbAuto => Placement::Single,
            ScheduleKind::Interleaved
            | ScheduleKind::Gis
            | ScheduleKind::GisOffload
            | ScheduleKind::PoH
            | ScheduleKind::PoF => Placement::Looped,
            ScheduleKind::ZbV
            | ScheduleKind::VHalf
            | ScheduleKind::VMin
            | ScheduleKind::VZb
            | ScheduleKind::DualPipeV => Placement::VShape,
            ScheduleKind::Chimera => Placement::Chimera,
        }
    }

    /// Whether the op order depends on the durations (and memory limit) it is generated with:
    /// the searched schedules (zero-bubble's heuristic, the V-shape greedy and auto
    /// schedules), and PipeOffload's, whose default group grows until one group's work
    /// covers a sweep through the devices. `solve` regenerates these once with the plan's
    /// durations.
    pub fn uses_durations(self) -> bool {
        matches!(
            self,
            ScheduleKind::ZbH2
                | ScheduleKind::ZbAuto
                | ScheduleKind::ZbV
                | ScheduleKind::VHalf
                | ScheduleKind::VMin
                | ScheduleKind::VZb
                | ScheduleKind::PoH
                | ScheduleKind::PoF
        )
    }

    /// Whether the schedule itself moves activations to the host and back (`gis-offload`,
    /// `po-h`, `po-f`), whatever the memory strategy.
    pub fn offloads(self) -> bool {
        matches!(
            self,
            ScheduleKind::GisOffload | ScheduleKind::PoH | ScheduleKind::PoF
        )
    }

    /// Whether the schedule's copies to the host and back run on PipeOffload's paired copy
    /// slots (`po-h`, `po-f`): devices (2k, 2k+1) share a host link and interleave their
    /// device-to-host and host-to-device copies, each on its one copy stream.
    pub fn pairs_host_copies(self) -> bool {
        matches!(self, ScheduleKind::PoH | ScheduleKind::PoF)
    }

    /// The stage of every (device, chunk) for `p` devices and the user's `requested` chunks,
    /// before the schedule is generated (the same map as the generated schedule's).
    pub fn stage_map(self, p: u32, requested: u32) -> Vec<Vec<usize>> {
        self.placement().stage_map(p, self.chunks(requested))
    }

    /// Stages in the model chain for `p` devices and the user's `requested` chunks.
    pub fn stages(self, p: u32, requested: u32) -> u32 {
        self.placement().stages(p, self.chunks(requested))
    }
}

impl Placement {
    /// Position in the model chain of `chunk` on `device`, with `p` devices (for Chimera,
    /// the down pipeline's stage for chunk 0 and the up pipeline's for chunk 1).
    pub fn stage_of(self, p: u32, device: u32, chunk: u32) -> u32 {
        match (self, chunk) {
            (Placement::Single, _) => device,
            (Placement::Looped, c) => c * p + device,
            (Placement::VShape | Placement::Chimera, 0) => device,
            (Placement::VShape, _) => 2 * p - 1 - device,
            (Placement::Chimera, _) => p - 1 - device,
        }
    }

    /// Stages in the model chain with `p` devices of `v` chunks (`p v`, or `p` for Chimera,
    /// whose two chunks are replicas).
    pub fn stages(self, p: u32, v: u32) -> u32 {
        match self {
            Placement::Chimera => p,
            _ => p * v,
        }
    }

    /// The stage of every (device, chunk), devices outer.
    pub fn stage_map(self, p: u32, v: u32) -> Vec<Vec<usize>> {
        (0..p)
            .map(|d| (0..v).map(|c| self.stage_of(p, d, c) as usize).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schedule::{ScheduleInput, generate};

    fn input(p: u32, m: u32, f: f64, b: f64, w: f64) -> ScheduleInput {
        ScheduleInput::uniform(p, m, 2, f, b, w, 0.0)
    }

    #[test]
    fn every_generator_places_as_its_kind_says() {
        for &kind in ScheduleKind::ALL {
            let s = generate(kind, &input(4, 8, 1.0, 1.0, 1.0)).unwrap();
            assert_eq!(s.placement, kind.placement(), "{kind}");
            assert_eq!(s.v, kind.chunks(2), "{kind}");
            assert_eq!(s.stages(), kind.stages(4, 2), "{kind}");
            let map: Vec<Vec<usize>> = (0..s.p)
                .map(|d| (0..s.v).map(|c| s.stage_of(d, c, 0) as usize).collect())
                .collect();
            assert_eq!(map, kind.stage_map(4, 2), "{kind}");
        }
    }

    #[test]
    fn only_searched_schedules_change_order_with_durations() {
        for &kind in ScheduleKind::ALL {
            let a = generate(kind, &input(4, 8, 1.0, 1.0, 1.0)).unwrap();
            let b = generate(kind, &input(4, 8, 1.0, 3.0, 0.2)).unwrap();
            if !kind.uses_durations() {
                assert_eq!(a.devices, b.devices, "{kind} is hand-written");
            }
        }
        // And at least one searched schedule does react to them.
        let changed = ScheduleKind::ALL
            .iter()
            .filter(|k| k.uses_durations())
            .any(|&k| {
                let a = generate(k, &input(4, 8, 1.0, 1.0, 1.0)).unwrap();
                let b = generate(k, &input(4, 8, 1.0, 3.0, 0.2)).unwrap();
                a.devices != b.devices
            });
        assert!(changed);
    }

    #[test]
    fn dualpipe_v_is_a_v() {
        assert_eq!(
            ScheduleKind::DualPipeV.stage_map(3, 1),
            vec![vec![0, 5], vec![1, 4], vec![2, 3]]
        );
    }
}
