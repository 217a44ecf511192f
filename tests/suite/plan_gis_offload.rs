//! `gis-offload` in a full solve: the chunks its pass marks live on the host between F and
//! B, so the devices peak lower than under `gis` with the same plan, and the copies show up
//! on the copy lane.

use pipescope::{
    Lane, ScheduleInput, ScheduleKind, SimCosts, Simulation, SpanKind, default_scenario, generate,
    simulate, solve,
};

#[test]
fn gis_offload_moves_marked_chunks_to_host_and_lowers_the_peak() {
    let mut s = default_scenario();
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

/// PipeOffload's full offload (every chunk, PO-F) where a copy takes no longer than a
/// forward (k <= 1 in the paper's terms: the round trip fits in a chunk's F + B + W): the
/// iteration is exactly GIS's (copies never delay compute) and the devices' activation peak
/// falls to what is in transit, a quarter of GIS's or less. Where copies are slower than that (k > 1,
/// which the paper leaves out) the time still does not grow; fewer copies fit, so the
/// memory falls less.
#[test]
fn full_offload_costs_no_time_and_cuts_the_activation_peak() {
    let (p, m, v) = (4, 16, 2);
    let run = |kind: ScheduleKind, copy_s: f64| {
        let mut input = ScheduleInput::uniform(p, m, v, 1.0, 1.0, 1.0, 0.0);
        input.offload_chunks = Some(v);
        let s = generate(kind, &input).expect("generates");
        let costs = SimCosts::abstract_run(&s, 1.0, 1.0, 1.0, 0.0, copy_s);
        simulate(&s, &costs).expect("simulates")
    };
    let gis = run(ScheduleKind::Gis, 1.0);
    let peaks = |s: &Simulation| {
        s.devices
            .iter()
            .map(|d| d.peak_activation_bytes)
            .collect::<Vec<_>>()
    };
    let mut last_saving = u64::MAX;
    for copy_s in [0.5, 1.0, 2.0, 3.0] {
        let off = run(ScheduleKind::GisOffload, copy_s);
        assert_eq!(off.makespan, gis.makespan, "copy {copy_s}");
        let saving: u64 = peaks(&gis)
            .iter()
            .zip(peaks(&off))
            .map(|(g, o)| g - o)
            .sum();
        assert!(saving <= last_saving, "copy {copy_s}");
        last_saving = saving;
        if copy_s <= 1.0 {
            // One chunk-activation being computed plus one on its way out or back in.
            assert!(peaks(&off).iter().all(|&o| o <= 2), "{:?}", peaks(&off));
            let max = |v: Vec<u64>| v.into_iter().max().unwrap_or(0);
            assert!(4 * max(peaks(&off)) <= max(peaks(&gis)));
        }
    }
}
