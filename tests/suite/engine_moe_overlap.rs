//! The MoE all-to-all overlap of the overlapped forward-backward pairs
//! (`plan.moe_a2a_overlap`: DualPipe's, and Megatron's combined 1F1B on `interleaved` and
//! one-device `1f1b`): what the pairs hide leaves the exposed expert-parallel time and the
//! iteration, the all-to-alls stay drawn on the comm lane, and Megatron's refusals hold.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scenario_common::read_back;
use pipescope::{Catalog, Lane, Outcome, Scenario, ScenarioOverrides, ScheduleKind, SpanKind};

/// Qwen3-30B-A3B on 32 H100s (t 1, pp 4, d 8, ep 8, distributed optimizer), 4k tokens, 8
/// micro-batches of one sequence, under DualPipe.
fn scenario(overlap: bool) -> Scenario {
    let c = Catalog::builtin();
    let mut s = c.scenario("korthikanti-22b").unwrap();
    ScenarioOverrides {
        model: Some("qwen3-30b-a3b".into()),
        gpu: Some("h100-80gb".into()),
        seq_len: Some(4096),
        micro_batch_size: Some(1),
        tp: Some(1),
        pp: Some(4),
        sp: Some(false),
        ..Default::default()
    }
    .apply(&mut s, &c)
    .unwrap();
    s.parallel.dp = 8;
    s.parallel.ep = 8;
    s.parallel.distributed_optimizer = true;
    s.batch.micro_batches = 8;
    s.plan.schedule = ScheduleKind::DualPipe;
    s.plan.memory_budget_bytes = s.gpu.memory_bytes();
    s.plan.moe_a2a_overlap = overlap;
    s
}

/// Per device, the sum of its overlapped pairs' durations (forward start to backward end).
fn pair_time(o: &Outcome, devices: usize) -> Vec<f64> {
    let t = &o.simulation.timeline;
    let mut out = vec![0.0; devices];
    for (f, b) in t.pairs() {
        out[t.spans[f].device as usize] += t.spans[b].end - t.spans[f].start;
    }
    out
}

#[test]
fn dualpipe_pairs_hide_the_all_to_alls_and_ep_comm_keeps_the_exposed_rest() {
    let plain = pipescope::solve(&scenario(false)).unwrap();
    let over = pipescope::solve(&scenario(true)).unwrap();
    assert!(
        plain.feasible && over.feasible,
        "{:?}",
        plain.infeasible_reason
    );
    let p = plain.stages.len();
    let (before, after) = (pair_time(&plain, p), pair_time(&over, p));
    let mut total = 0.0;
    for d in 0..p {
        let hidden = before[d] - after[d];
        assert!(hidden > 0.0, "device {d} hides nothing");
        total += hidden;
        // A device's exposed all-to-all falls by exactly what its pairs hid.
        let ep = |o: &Outcome| o.stages[d].time_breakdown_s.ep_comm;
        let fell = ep(&plain) - ep(&over);
        assert!(
            (fell - hidden).abs() <= 1e-9 * ep(&plain),
            "device {d}: ep_comm fell {fell}, pairs hid {hidden}"
        );
    }
    // The iteration falls, by no more than all the pairs hid.
    let gain = plain.iteration_time_s - over.iteration_time_s;
    assert!(
        gain > 0.0 && gain <= total + 1e-12,
        "gain {gain}, hidden {total}"
    );
    // Still drawn: as many all-to-all spans on the comm lane, now inside the partner op.
    let a2a = |o: &Outcome| {
        o.simulation
            .timeline
            .spans
            .iter()
            .filter(|s| s.kind == SpanKind::A2a && s.lane == Lane::Comm)
            .count()
    };
    assert!(a2a(&over) > 0);
    assert_eq!(a2a(&over), a2a(&plain));
}

#[test]
fn the_overlap_is_refused_for_a_dense_model_and_a_schedule_without_pairs() {
    let mut gpipe = scenario(true);
    gpipe.plan.schedule = ScheduleKind::Gpipe;
    let e = pipescope::solve(&gpipe).unwrap_err().to_string();
    assert!(
        e.contains("plan.moe_a2a_overlap") && e.contains("dualpipe") && e.contains("interleaved"),
        "{e}"
    );
    // Megatron-Core's own rules for its combined 1F1B.
    let mut one = scenario(true);
    one.plan.schedule = ScheduleKind::OneFOneB;
    let e = pipescope::solve(&one).unwrap_err().to_string();
    assert!(e.contains("virtual pipeline when p > 1"), "{e}");
    let mut full = interleaved(true);
    full.plan.strategy = pipescope::Strategy::Full;
    let e = pipescope::solve(&full).unwrap_err().to_string();
    assert!(e.contains("full recomputation"), "{e}");
    let mut named = interleaved(true);
    named.plan.strategy = pipescope::Strategy::Named;
    named.plan.recompute_units = vec!["moe".into()];
    let e = pipescope::solve(&named).unwrap_err().to_string();
    assert!(e.contains("moe recompute module"), "{e}");
    let mut fsdp = interleaved(true);
    fsdp.parallel.set_zero(pipescope::Zero::Full);
    let e = pipescope::solve(&fsdp).unwrap_err().to_string();
    assert!(e.contains("Megatron-FSDP"), "{e}");
    // The one-device 1F1B under Megatron-FSDP is Megatron's no-pipelining combined schedule.
    let mut p1 = scenario(true);
    p1.parallel.pp = 1;
    p1.parallel.dp = 32;
    p1.plan.schedule = ScheduleKind::OneFOneB;
    p1.parallel.set_zero(pipescope::Zero::Full);
    assert!(pipescope::solve(&p1).is_ok());
    let c = Catalog::builtin();
    let mut dense = scenario(false);
    dense.parallel.ep = 1;
    ScenarioOverrides {
        model: Some("llama3-8b".into()),
        ..Default::default()
    }
    .apply(&mut dense, &c)
    .unwrap();
    dense.plan.moe_a2a_overlap = true;
    let e = pipescope::solve(&dense).unwrap_err().to_string();
    assert!(
        e.contains("plan.moe_a2a_overlap") && e.contains("dense"),
        "{e}"
    );
}

#[test]
fn the_planner_estimates_with_the_all_to_alls_the_pairs_hide() {
    // The planner's estimate (what the partitioner and AdaPipe's DPs minimise) knows the
    // overlap: it falls with it, by no more than the pairs hide in the simulation.
    for strategy in [pipescope::Strategy::Selective, pipescope::Strategy::AdaPipe] {
        let run = |overlap: bool| {
            let mut s = scenario(overlap);
            s.plan.strategy = strategy;
            pipescope::solve(&s).unwrap()
        };
        let (plain, over) = (run(false), run(true));
        assert!(plain.feasible && over.feasible);
        let fell = plain.estimated_iteration_time_s - over.estimated_iteration_time_s;
        assert!(fell > 0.0, "{strategy:?}: the estimate ignores the overlap");
        let p = plain.stages.len();
        let hidden: f64 = pair_time(&plain, p)
            .iter()
            .zip(pair_time(&over, p))
            .map(|(a, b)| a - b)
            .sum();
        assert!(
            fell <= hidden + 1e-9,
            "{strategy:?}: fell {fell}, hidden {hidden}"
        );
        assert!(
            over.iteration_time_s < plain.iteration_time_s,
            "{strategy:?}"
        );
    }
}

/// Qwen3-30B-A3B on 16 H100s at 2k tokens: 1F1B and interleaved beside both DualPipes, ep
/// enumerated.
fn sweep_with(overlap: bool, exhaustive: bool) -> pipescope::SweepResult {
    let c = Catalog::builtin();
    let mut base = c.scenario("tiny-4x8").unwrap();
    base.model = c.model("qwen3-30b-a3b").unwrap().clone();
    base.gpu = c.gpu("h100-80gb").unwrap().clone();
    base.batch.seq_len = 2048;
    base.plan.memory_budget_bytes = 60 << 30;
    base.plan.moe_a2a_overlap = overlap;
    let space = pipescope::SweepSpace {
        gpus: vec![16],
        global_batch: 32,
        tp: vec![1],
        pp: vec![2, 4],
        mbs: vec![1],
        cp: vec![1],
        schedules: vec![
            ScheduleKind::OneFOneB,
            ScheduleKind::Interleaved,
            ScheduleKind::DualPipe,
            ScheduleKind::DualPipeV,
        ],
        strategies: vec![pipescope::Strategy::Full, pipescope::Strategy::AdaPipe],
        ..pipescope::SweepSpace::default()
    };
    let options = pipescope::SweepOptions { top: 3, exhaustive };
    pipescope::sweep(
        &base,
        &space,
        options,
        &|_, _| {},
        &pipescope::Cancel::never(),
    )
    .unwrap()
}

#[test]
fn a_sweep_applies_the_overlap_where_the_schedule_pairs_and_its_bounds_still_hold() {
    let fast = sweep_with(true, false);
    let full = sweep_with(true, true);
    let plain = sweep_with(false, true);
    assert_eq!(fast.ranked, full.ranked);
    assert_eq!(fast.pareto, full.pareto);
    assert_eq!(full.rows.len(), plain.rows.len());
    let mut faster = 0;
    for (a, b) in full.rows.iter().zip(&plain.rows) {
        assert_eq!(a.config, b.config);
        let pairs = a.config.schedule.pairs_under_a2a_overlap(a.config.p);
        if !pairs {
            // Left off where the schedule has no pairs: nothing changes there.
            assert_eq!(a.feasible(), b.feasible(), "{:?}", a.config);
        }
        if !a.solved || !a.feasible() {
            continue;
        }
        // A hidden all-to-all shortens the time: every bound must still hold.
        assert!(
            a.time_bound_s <= a.iteration_time_s,
            "{:?}: bound {} above {}",
            a.config,
            a.time_bound_s,
            a.iteration_time_s
        );
        if pairs {
            faster += usize::from(a.iteration_time_s < b.iteration_time_s);
        } else {
            assert_eq!(a.iteration_time_s, b.iteration_time_s, "{:?}", a.config);
        }
    }
    assert!(faster > 0, "no paired configuration got faster");
    assert!(
        full.rows
            .iter()
            .any(|r| !r.config.schedule.pairs_under_a2a_overlap(r.config.p) && r.feasible()),
        "no configuration without pairs is feasible"
    );
}

/// [`scenario`] under Megatron's interleaved schedule with two chunks a device and 32
/// micro-batches (with 8 the pairs' waits for both inputs cost more than they hide).
fn interleaved(overlap: bool) -> Scenario {
    let mut s = scenario(overlap);
    s.plan.schedule = ScheduleKind::Interleaved;
    s.parallel.chunks = 2;
    s.batch.micro_batches = 32;
    s
}

#[test]
fn megatrons_combined_1f1b_pairs_interleaved_steady_state_and_hides_its_all_to_alls() {
    let plain = pipescope::solve(&interleaved(false)).unwrap();
    let over = pipescope::solve(&interleaved(true)).unwrap();
    assert!(
        plain.feasible && over.feasible,
        "{:?}",
        over.infeasible_reason
    );
    // Pairs only with the overlap, each a forward then a backward of another micro-batch.
    assert!(plain.simulation.timeline.pairs().is_empty());
    let pairs = over.simulation.timeline.pairs();
    assert!(!pairs.is_empty());
    let spans = &over.simulation.timeline.spans;
    for &(f, b) in &pairs {
        assert_eq!(spans[f].kind, SpanKind::F);
        assert_eq!(spans[b].kind, SpanKind::BW);
        assert_ne!(
            (spans[f].micro_batch, spans[f].chunk),
            (spans[b].micro_batch, spans[b].chunk)
        );
    }
    // Each device pairs all but its warm-up and cool-down: m v - (warm-up + 1) with
    // Megatron's warm-up 2 (p - d - 1) + (v - 1) p.
    let (p, m, v) = (4u32, 32u32, 2u32);
    for d in 0..p {
        let warm = 2 * (p - d - 1) + (v - 1) * p + 1;
        let n = pairs.iter().filter(|&&(f, _)| spans[f].device == d).count() as u32;
        assert_eq!(n, m * v - warm.min(m * v), "device {d}");
    }
    // The exposed expert-parallel time and the iteration fall; the in-flight count at the
    // peak does not grow (the pair's backward frees as its forward fills).
    let ep = |o: &Outcome| o.time_breakdown_s.ep_comm;
    assert!(ep(&over) < ep(&plain), "{} {}", ep(&over), ep(&plain));
    assert!(over.iteration_time_s < plain.iteration_time_s);
    for (a, b) in over.stages.iter().zip(&plain.stages) {
        assert_eq!(a.in_flight, b.in_flight);
    }
}

/// A figures-only solve (what the sweep runs) leaves the comm lane undrawn, since the
/// collectives inside the ops move no figure, and reports the figures of the full solve.
#[test]
fn a_figures_only_solve_draws_no_collectives_and_keeps_the_figures() {
    let comm = |o: &Outcome| {
        o.simulation
            .timeline
            .spans
            .iter()
            .filter(|s| s.lane == Lane::Comm)
            .count()
    };
    for overlap in [false, true] {
        let s = scenario(overlap);
        let full = pipescope::solve(&s).unwrap();
        let options = pipescope::SolveOptions {
            figures_only: true,
            ..Default::default()
        };
        let figures = pipescope::solve_with(&s, &options).unwrap();
        assert!(comm(&full) > 0, "overlap {overlap}");
        assert_eq!(comm(&figures), 0, "overlap {overlap}");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        assert!(close(full.iteration_time_s, figures.iteration_time_s));
        assert!(close(
            full.time_breakdown_s.total(),
            figures.time_breakdown_s.total()
        ));
        assert_eq!(
            full.max_peak_memory_bytes(),
            figures.max_peak_memory_bytes()
        );
        assert_eq!(full.feasible, figures.feasible);
        assert_eq!(full.mfu, figures.mfu);
    }
}

#[test]
fn the_all_to_alls_multiprocessors_are_the_share_an_overlapped_pair_cannot_hide_under() {
    // `plan.flex_dispatcher_num_sms` (Megatron-Core's `moe_flex_dispatcher_num_sms`): the
    // multiprocessors the dispatch and combine run on, DeepEP's 20 unless the run says
    // (Megatron-Bridge's Qwen3-30B-A3B H100 recipe gives HybridEP 32). The compute beside
    // an overlapped all-to-all runs on the rest, so more of them hide less; nothing changes
    // where no pair overlaps, and a count the GPU does not have is refused.
    let with_sms = |overlap: bool, sms: u32| {
        let mut s = scenario(overlap);
        s.plan.deepep = true;
        s.plan.flex_dispatcher_num_sms = sms;
        s
    };
    let share = |s: &Scenario| pipescope::Anatomy::build(s).unwrap().ep_comm_sm_share;
    let default = with_sms(true, pipescope::DEEPEP_DEFAULT_SMS);
    assert_eq!(scenario(true).plan.flex_dispatcher_num_sms, 20);
    assert!((share(&default) - 20.0 / 132.0).abs() < 1e-15);
    assert!((share(&with_sms(true, 32)) - 32.0 / 132.0).abs() < 1e-15);
    let step = |s: &Scenario| {
        let out = pipescope::solve(s).unwrap();
        assert!(out.feasible, "{:?}", out.infeasible_reason);
        out.iteration_time_s
    };
    assert!(step(&with_sms(true, 32)) > step(&default));
    assert_eq!(step(&with_sms(false, 32)), step(&with_sms(false, 20)));
    // Written back only where it is not the default, and read again.
    let mut s = with_sms(true, 32);
    s.name = "sms-round-trip".into();
    let text = pipescope::to_toml(&s);
    assert!(text.contains("flex_dispatcher_num_sms = 32"), "{text}");
    assert!(!pipescope::to_toml(&default).contains("flex_dispatcher_num_sms"));
    // (The plan compared: this DualPipe fixture's unused `chunks` is not written back.)
    assert_eq!(read_back(&s).plan, s.plan);
    // A dense scenario keeps a count it was given too (it has no all-to-all to use it).
    let c = Catalog::builtin();
    let mut dense = c.scenario("korthikanti-22b").unwrap();
    dense.name = "dense-sms".into();
    dense.plan.flex_dispatcher_num_sms = 24;
    assert_eq!(read_back(&dense).plan, dense.plan);
    // None, or every multiprocessor of the H100 (132), is refused naming the key.
    for bad in [0, 132, 5000] {
        let err = with_sms(true, bad).validate().unwrap_err().to_string();
        assert!(err.contains("plan.flex_dispatcher_num_sms"), "{bad}: {err}");
    }
}
