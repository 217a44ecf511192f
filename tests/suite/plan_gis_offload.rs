//! `gis-offload` in a full solve: the chunks its pass marks live on the host between F and
//! B, so the devices peak lower than under `gis` with the same plan, and the copies show up
//! on the copy lane.

use pipescope::schedule::ScheduleKind;
use pipescope::sim::{Lane, SpanKind};
use pipescope::{scenario, solve};

#[test]
fn gis_offload_moves_marked_chunks_to_host_and_lowers_the_peak() {
    let mut s = scenario::default_scenario();
    s.plan.schedule = ScheduleKind::Gis;
    let gis = solve(&s).expect("gis solves");
    s.plan.schedule = ScheduleKind::GisOffload;
    let off = solve(&s).expect("gis-offload solves");
    let (peak_off, peak_gis) = (off.max_peak_memory_bytes(), gis.max_peak_memory_bytes());
    assert!(peak_off < peak_gis, "{peak_off} vs {peak_gis}");
    let copies = |k: SpanKind| {
        off.simulation
            .timeline
            .spans
            .iter()
            .filter(|sp| sp.kind == k && sp.lane == Lane::Copy)
            .count()
    };
    assert!(copies(SpanKind::D2H) > 0);
    assert_eq!(copies(SpanKind::D2H), copies(SpanKind::H2D));
    // Same plan, copies on their own lane: the iteration barely changes.
    assert!(off.iteration_time_s <= gis.iteration_time_s * 1.05);
    assert!(off.notes.iter().any(|n| n.contains("gis-offload")));
}
