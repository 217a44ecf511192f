//! The Perfetto export checked by a validator that enforces the trace importer's rules:
//! named processes and threads, no partial overlap of slices on one thread, flows whose ends
//! match (one start, one end, steps between, ids never reused), numeric counter arguments
//! and microsecond times; run on every schedule, with and without transfer time, and on a
//! planned scenario.

#![allow(clippy::unwrap_used)]

use pipescope::{
    Run, ScheduleInput, ScheduleKind, SimCosts, Units, default_scenario, flow_chains, generate,
    perfetto_trace, simulate,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Summary of a valid trace.
#[derive(Debug, Default)]
struct Checked {
    slices: usize,
    /// Slices around an overlapped forward-backward pair (`cat` "pair"), not in `slices`.
    pairs: usize,
    chains: usize,
    counters: usize,
}

/// Microseconds to integer nanoseconds; fails on finer times.
fn ns(x: &serde_json::Value, what: &str) -> i64 {
    let us = x
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {x}"));
    assert!(us >= 0.0, "{what}: negative time {us}");
    let n = (us * 1000.0).round();
    assert!(
        (us * 1000.0 - n).abs() < 1e-3,
        "{what}: finer than ns: {us}"
    );
    n as i64
}

/// Enforces the importer's rules on `text`; panics with the broken rule.
fn validate(text: &str) -> Checked {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let events = v["traceEvents"].as_array().expect("traceEvents array");
    let mut processes = BTreeSet::new();
    let mut sorted = BTreeSet::new();
    let mut threads = BTreeSet::new();
    let mut slices: BTreeMap<(u64, u64), Vec<(i64, i64)>> = BTreeMap::new();
    let mut flows: HashMap<u64, Vec<(bool, bool, i64, u64)>> = HashMap::new();
    let mut out = Checked::default();
    for e in events {
        let pid = e["pid"].as_u64().expect("pid");
        match e["ph"].as_str().unwrap() {
            "M" => match e["name"].as_str().unwrap() {
                "process_name" => {
                    assert!(e["args"]["name"].is_string());
                    processes.insert(pid);
                }
                "process_sort_index" => {
                    assert!(e["args"]["sort_index"].is_i64());
                    sorted.insert(pid);
                }
                "thread_name" => {
                    assert!(e["args"]["name"].is_string());
                    threads.insert((pid, e["tid"].as_u64().unwrap()));
                }
                other => panic!("unknown metadata {other}"),
            },
            "X" => {
                let tid = e["tid"].as_u64().expect("tid");
                let start = ns(&e["ts"], "ts");
                let end = start + ns(&e["dur"], "dur");
                let name = e["name"].as_str().unwrap();
                if e["cat"] == "pair" {
                    // An overlapped pair: named `F..&B..`, both micro-batches in its args.
                    assert!(name.starts_with('F') && name.contains("&B"), "{e}");
                    for key in ["forward_micro_batch", "backward_micro_batch"] {
                        assert!(e["args"][key].is_u64(), "{e}");
                    }
                    assert_eq!(tid, 1, "pairs sit on the compute thread: {e}");
                    out.pairs += 1;
                } else if e["cat"] != "job" {
                    // An op; the end-of-iteration steps (cat "job") carry no micro-batch.
                    for key in ["micro_batch", "chunk"] {
                        assert!(e["args"][key].is_u64(), "{e}");
                    }
                    assert_eq!(e["args"]["kind"], e["cat"]);
                    assert!(name.starts_with(e["cat"].as_str().unwrap()), "{e}");
                }
                slices.entry((pid, tid)).or_default().push((start, end));
                if let Some(id) = e.get("bind_id") {
                    let fin = e.get("flow_in").is_some_and(|x| x == true);
                    let fout = e.get("flow_out").is_some_and(|x| x == true);
                    assert!(fin || fout, "bind_id without flow_in/flow_out: {e}");
                    let id = id.as_u64().expect("integer bind_id");
                    flows.entry(id).or_default().push((fin, fout, start, pid));
                }
                if e["cat"] != "pair" {
                    out.slices += 1;
                }
            }
            "C" => {
                ns(&e["ts"], "counter ts");
                let args = e["args"].as_object().unwrap();
                assert!(!args.is_empty());
                assert!(args.values().all(serde_json::Value::is_number), "{e}");
                out.counters += 1;
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    for (&(pid, tid), list) in &mut slices {
        assert!(
            processes.contains(&pid),
            "process {pid} has no process_name"
        );
        assert!(
            sorted.contains(&pid),
            "process {pid} has no process_sort_index"
        );
        assert!(threads.contains(&(pid, tid)), "thread {pid}/{tid} unnamed");
        // Nesting: sorted by start (longest first), every slice ends before or within the
        // enclosing open slices.
        list.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let mut open: Vec<i64> = Vec::new();
        for &(s, e) in list.iter() {
            while open.last().is_some_and(|&end| end <= s) {
                open.pop();
            }
            if let Some(&end) = open.last() {
                assert!(
                    e <= end,
                    "partial overlap on {pid}/{tid}: [{s}, {e}] vs end {end}"
                );
            }
            open.push(e);
        }
    }
    for (id, steps) in &flows {
        assert!(steps.len() >= 2, "flow {id} has one end only");
        let starts: Vec<_> = steps.iter().filter(|s| s.1 && !s.0).collect();
        let ends: Vec<_> = steps.iter().filter(|s| s.0 && !s.1).collect();
        assert_eq!(starts.len(), 1, "flow {id}: {steps:?}");
        assert_eq!(ends.len(), 1, "flow {id}: {steps:?}");
        let min = steps.iter().map(|s| s.2).min().unwrap();
        let max = steps.iter().map(|s| s.2).max().unwrap();
        assert_eq!(starts[0].2, min, "flow {id} starts after a step");
        assert_eq!(ends[0].2, max, "flow {id} ends before a step");
        // Every hop of a chain crosses devices.
        let mut by_time = steps.clone();
        by_time.sort_by_key(|s| (s.2, !s.1 as u8));
        assert!(
            by_time.windows(2).all(|w| w[0].3 != w[1].3),
            "flow {id}: {steps:?}"
        );
    }
    out.chains = flows.len();
    out
}

fn abstract_trace(kind: ScheduleKind, p: u32, m: u32, comm: f64) -> (String, usize, usize) {
    let (text, spans, chains, _) = abstract_trace_pairs(kind, p, m, comm);
    (text, spans, chains)
}

/// [`abstract_trace`] and the simulation's overlapped pairs.
fn abstract_trace_pairs(
    kind: ScheduleKind,
    p: u32,
    m: u32,
    comm: f64,
) -> (String, usize, usize, usize) {
    let input = ScheduleInput::uniform(p, m, 2, 1.0, 1.0, 1.0, comm);
    let sched = generate(kind, &input).unwrap();
    let costs = SimCosts::abstract_run(&sched, 1.0, 1.0, 1.0, comm, 1.0);
    let sim = simulate(&sched, &costs).unwrap();
    let run = Run {
        schedule: &sched,
        simulation: &sim,
        units: Units::Abstract,
    };
    (
        perfetto_trace(&run),
        sim.timeline.spans.len(),
        flow_chains(&sched).len(),
        sim.timeline.pairs().len(),
    )
}

#[test]
fn every_schedule_passes_the_importer_rules() {
    for &kind in ScheduleKind::ALL {
        for comm in [0.0, 0.5] {
            let (text, spans, chains, pairs) = abstract_trace_pairs(kind, 4, 8, comm);
            let c = validate(&text);
            assert_eq!(c.slices, spans, "{kind}");
            assert_eq!(c.pairs, pairs, "{kind}");
            // Flows also with --comm 0; every chain is one flow.
            assert_eq!(c.chains, chains, "{kind} comm {comm}");
            assert!(c.chains > 0 && c.counters > 0, "{kind}");
        }
    }
}

#[test]
fn one_f_one_b_chains_and_times() {
    let (text, _, _) = abstract_trace(ScheduleKind::OneFOneB, 4, 8, 0.0);
    let c = validate(&text);
    // One forward chain and one backward chain per micro-batch.
    assert_eq!(c.chains, 16);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    // One cost unit is one microsecond: the last op ends at the makespan (m + p - 1) * 3.
    let end = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(end, 33.0);
    let f12 = events.iter().find(|e| e["name"] == "F7" && e["pid"] == 4);
    assert!(f12.is_some());
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "C" && e["args"]["activations"].is_u64())
    );
}

#[test]
fn sends_and_copies_get_named_threads() {
    let (text, _, _) = abstract_trace(ScheduleKind::GisOffload, 4, 8, 0.5);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names: BTreeSet<String> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains("compute") && names.contains("sends"));
    assert!(names.contains("host copies"), "{names:?}");
}

#[test]
fn planned_scenario_in_seconds_and_gib() {
    let scenario = default_scenario();
    let outcome = pipescope::solve(&scenario).unwrap();
    let run = Run::planned(&outcome);
    let text = perfetto_trace(&run);
    let c = validate(&text);
    // Every op, plus the end-of-iteration steps (gradient reduction, tied embedding,
    // optimizer) on each device's own thread.
    let job_steps = text.matches("\"cat\":\"job\"").count();
    assert!(
        job_steps >= outcome.simulation.devices.len(),
        "{job_steps} job steps"
    );
    assert_eq!(
        c.slices,
        outcome.simulation.timeline.spans.len() + job_steps
    );
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let peak = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["args"]["GiB"].as_f64())
        .fold(0.0, f64::max);
    let want = outcome.max_peak_memory_bytes() as f64 / (1u64 << 30) as f64;
    // The counter holds static + activations (the transient buffer is not a curve point).
    assert!(peak > 0.5 * want && peak <= want + 1e-3, "{peak} vs {want}");
    let makespan_us = outcome.simulation.makespan * 1e6;
    let last = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((last - makespan_us).abs() < 0.01, "{last} vs {makespan_us}");
}

#[test]
fn dualpipe_pairs_are_slices_around_their_two_ops() {
    let (text, _, _, pairs) = abstract_trace_pairs(ScheduleKind::DualPipe, 4, 8, 0.5);
    let c = validate(&text);
    assert!(pairs > 0 && c.pairs == pairs, "{} of {pairs}", c.pairs);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let at = |e: &serde_json::Value| {
        let ts = e["ts"].as_f64().unwrap();
        (ts, ts + e["dur"].as_f64().unwrap())
    };
    for pair in events.iter().filter(|e| e["cat"] == "pair") {
        let (start, end) = at(pair);
        let name = pair["name"].as_str().unwrap();
        let (f, b) = name.split_once('&').unwrap();
        // The pair's forward opens it and its backward closes it, on the same device.
        let op = |label: &str| {
            events
                .iter()
                .find(|e| e["name"] == label && e["pid"] == pair["pid"] && e["cat"] != "pair")
                .unwrap_or_else(|| panic!("{label} of {pair}"))
        };
        assert_eq!(at(op(f)).0, start, "{pair}");
        assert_eq!(at(op(b)).1, end, "{pair}");
    }
    // Schedules that pair nothing write no pair slices.
    let (text, _, _, pairs) = abstract_trace_pairs(ScheduleKind::ZbV, 4, 8, 0.0);
    assert_eq!((pairs, validate(&text).pairs), (0, 0));
}

#[test]
fn the_collectives_inside_the_ops_get_their_own_thread() {
    // GPT-3 175B with context parallelism over a slow ring and ZeRO-3: the K/V exchange,
    // the gathers and the reduce-scatters are slices of a "collectives" thread, inside their
    // ops and never partly over one another (the validator's rule).
    let mut scenario = default_scenario();
    scenario.parallel.dp = 2;
    scenario.parallel.cp = 2;
    scenario.parallel.set_zero(pipescope::Zero::Full);
    let outcome = pipescope::solve(&scenario).unwrap();
    let text = perfetto_trace(&Run::planned(&outcome));
    validate(&text);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let comm_tid = events
        .iter()
        .find(|e| e["name"] == "thread_name" && e["args"]["name"] == "collectives")
        .map(|e| e["tid"].as_u64().unwrap())
        .expect("a collectives thread");
    for kind in ["KV", "AG", "RS"] {
        let n = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == kind)
            .inspect(|e| assert_eq!(e["tid"].as_u64(), Some(comm_tid)))
            .count();
        assert!(n > 0, "no {kind} slices");
    }
}
