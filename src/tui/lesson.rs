//! The lesson through the schedules: equal unit costs (F = B = W = 1 per chunk, no transfer
//! time; PipeOffload's copies to the host take one forward's time each way), one schedule
//! per step, each with the textbook bubble and peak-memory formulas beside the simulated
//! figures and one sentence on what changed and why. The user edits p and m (the
//! `stages p` and `micro m` fields) and the formulas follow.

use crate::cancel::Cancel;
use crate::schedule::ScheduleKind;
use crate::sim::{AbstractRun, Simulation};

/// The lesson's schedules, in order.
pub const LESSON: [ScheduleKind; 12] = [
    ScheduleKind::Gpipe,
    ScheduleKind::OneFOneB,
    ScheduleKind::Interleaved,
    ScheduleKind::ZbH1,
    ScheduleKind::ZbH2,
    ScheduleKind::ZbV,
    ScheduleKind::VHalf,
    ScheduleKind::VMin,
    ScheduleKind::DualPipeV,
    ScheduleKind::DualPipe,
    ScheduleKind::PoH,
    ScheduleKind::PoF,
];

/// Largest p and m the lesson takes (the Gantt stays readable).
pub const MAX_P: u32 = 16;
/// Largest m.
pub const MAX_M: u32 = 64;

/// One step simulated: its sizes, the simulation, or why the schedule cannot run them.
#[derive(Debug, Clone, PartialEq)]
pub struct LessonRun {
    /// The step.
    pub step: usize,
    /// Devices.
    pub p: u32,
    /// Micro-batches.
    pub m: u32,
    /// The simulated run, or the generator's error.
    pub sim: Result<Simulation, String>,
}

/// Step `step` with p devices and m micro-batches, as the engine's abstract run with every
/// op costing 1 and two chunks where the schedule takes them.
pub fn run(step: usize, p: u32, m: u32) -> LessonRun {
    let kind = LESSON[step.min(LESSON.len() - 1)];
    let sim = AbstractRun::new(kind, p, m)
        .simulate(&Cancel::never())
        .map(|out| out.simulation)
        .map_err(|e| e.to_string());
    LessonRun { step, p, m, sim }
}

/// The textbook figures of a step: bubble rate and peak activation memory in stage
/// activations (one micro-batch through a device's whole share of the model), each as
/// (formula, value when known).
pub struct Textbook {
    /// Bubble formula and its value.
    pub bubble: (&'static str, Option<f64>),
    /// Peak-memory formula and its value.
    pub peak: (&'static str, Option<f64>),
    /// Why the step looks as it does.
    pub why: &'static str,
}

/// The textbook figures of `step` for p and m.
pub fn textbook(step: usize, p: u32, m: u32) -> Textbook {
    let (pf, mf) = (f64::from(p), f64::from(m));
    let rate = |work: f64| Some((pf - 1.0) / (work + pf - 1.0));
    match LESSON[step.min(LESSON.len() - 1)] {
        ScheduleKind::Gpipe => Textbook {
            bubble: ("(p−1)/(m+p−1)", rate(mf)),
            peak: ("m", Some(mf)),
            why: "All forwards, then all backwards: the start-up and drain leave p−1 idle slots per device, and every micro-batch's activations wait for its backward.",
        },
        ScheduleKind::OneFOneB => Textbook {
            bubble: ("(p−1)/(m+p−1)", rate(mf)),
            peak: ("p", Some(pf.min(mf))),
            why: "One forward, one backward in turn after a warm-up: the same bubble as GPipe, but stage 0 holds at most p micro-batches instead of m.",
        },
        ScheduleKind::Interleaved => Textbook {
            bubble: ("(p−1)/(v·m+p−1), v=2", rate(2.0 * mf)),
            peak: (
                "(3p−1)/2 (warm-up 2(p−1)+p+1 chunks)",
                Some((3.0 * pf - 1.0) / 2.0),
            ),
            why: "Two chunks per device make each slot half as long, so the start-up costs half as much; the deeper warm-up holds more activations.",
        },
        ScheduleKind::ZbH1 => Textbook {
            bubble: ("(p−1)(F+B−W)/T = (p−1)/(3m+p−1)", rate(3.0 * mf)),
            peak: ("p", Some(pf.min(mf))),
            why: "Splitting the backward into B and W lets W fill the drain: 1F1B's memory, a third of its bubble with equal costs.",
        },
        ScheduleKind::ZbH2 => Textbook {
            bubble: ("(p−1)F/T = (p−1)/(3m+p−1)", rate(3.0 * mf)),
            peak: ("≤ 2p", Some(2.0 * pf)),
            why: "Extra warm-up forwards fill the start-up too, which needs room for up to 2p micro-batches; with F = B = W the start-up (p−1)F equals ZB-H1's (p−1)(F+B−W), so the bubble does not shrink here.",
        },
        ScheduleKind::ZbV => Textbook {
            bubble: ("(p−1)F/T, T=(p−1)+6m", rate(6.0 * mf)),
            peak: ("p (2p chunks)", Some(pf)),
            why: "Two chunks in a V (down, then back up the same devices): ZB-H2's small bubble with 1F1B's memory, and the last device hands over to itself.",
        },
        ScheduleKind::VHalf => Textbook {
            bubble: ("greedy: no closed form", None),
            peak: ("⌊(p+2)/2⌋", Some(f64::from((p + 2) / 2))),
            why: "The V with a memory cap of half of 1F1B's: a little more bubble bought with half the activations.",
        },
        ScheduleKind::VMin => Textbook {
            bubble: ("greedy: no closed form", None),
            peak: ("⌊(p+4)/3⌋", Some(f64::from((p + 4) / 3))),
            why: "The tightest V: a third of 1F1B's activations, paid for with more bubble.",
        },
        ScheduleKind::DualPipeV => Textbook {
            bubble: (
                "(PP/2−1)(F&B+B−3W)/T, PP=2p = (p−1)/(3m+p−1)",
                rate(3.0 * mf),
            ),
            peak: ("(PP+1)/2 (2p+1 chunks)", Some((2.0 * pf + 1.0) / 2.0)),
            why: "DualPipe-V runs a V of 2p stages whose steady state pairs one micro-batch's forward with another's backward (underlined, one label F5&b1): a pair starts when both inputs are there and runs as one unit, the time in which DeepSeek hides one micro-batch's all-to-all under the other's compute; deferred W's fill the ends.",
        },
        ScheduleKind::PoH => Textbook {
            bubble: ("building block: no closed form", None),
            peak: (
                "⌈p/2⌉ chunks resident (copies under way not counted)",
                Some(f64::from(p.div_ceil(2)) / 2.0),
            ),
            why: "PipeOffload's PO-H: the group of ⌈p/2⌉ micro-batches shortens every lifespan, and the longest-lived chunk goes to the host after its forward and comes back before its backward, on one copy stream that a pair of devices takes turns on. Half the stages offloaded leave a quarter of GIS's 2p: better than linear. The simulation also counts a chunk while its copy runs: up to twice the textbook on the first devices.",
        },
        ScheduleKind::PoF => Textbook {
            bubble: ("building block: no closed form", None),
            peak: ("copies under way (about 3 chunks)", Some(1.5)),
            why: "PO-F offloads every chunk. It needs each round trip to fit one chunk's F + B + W (k ≤ 1; here k = 2/3): then only the chunks being computed or copied stay on the device, at no cost in time.",
        },
        _ => Textbook {
            bubble: (
                "(PP/2−1)(F&B+B−3W)/T, PP=p = (p−2)/(3m+p−2)",
                Some((pf - 2.0).max(0.0) / (3.0 * mf + (pf - 2.0).max(0.0))),
            ),
            peak: ("PP+1 = p+1 (one copy's stages)", Some(pf + 1.0)),
            why: "DualPipe holds two copies of the p stages: half the micro-batches run down from device 0, half up from device p−1, and each forward of one direction is paired with a backward of the other. DualPipe-V's bubble formula with PP = p instead of 2p, bought with twice the parameters per device; p and m must be even, m ≥ 2p.",
        },
    }
}

/// The simulated bubble rate and peak activations (in stage activations) of a run: the
/// chunk-activations resident on a device at once (each weighs one in the lesson's runs;
/// what sits on the host does not count) over the stages a micro-batch passes on one device
/// (2 on a V or a loop, 1 for DualPipe, whose two chunks are copies).
pub fn simulated(run: &LessonRun) -> Option<(f64, f64)> {
    let sim = run.sim.as_ref().ok()?;
    let kind = LESSON[run.step.min(LESSON.len() - 1)];
    let v = if kind.replicates_stages() {
        1
    } else {
        kind.chunks(2)
    };
    let peak = sim
        .devices
        .iter()
        .map(|d| d.peak_activation_bytes)
        .max()
        .unwrap_or(0);
    Some((sim.bubble_rate, peak as f64 / f64::from(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_figures_match_the_simulation_where_exact() {
        let (p, m) = (4, 8);
        for (step, exact_bubble, exact_peak) in [
            (0, true, true),
            (1, true, true),
            (3, true, true),
            (5, true, true),
            (6, false, true),
            (7, false, true),
        ] {
            let run = run(step, p, m);
            let (bubble, peak) = simulated(&run).expect("runs");
            let t = textbook(step, p, m);
            if exact_bubble {
                let want = t.bubble.1.unwrap();
                assert!(
                    (bubble - want).abs() < 1e-9,
                    "step {step}: {bubble} vs {want}"
                );
            }
            if exact_peak {
                let want = t.peak.1.unwrap();
                assert!(
                    (peak.ceil() - want).abs() < 1e-9,
                    "step {step}: {peak} vs {want}"
                );
            }
        }
    }

    #[test]
    fn dualpipe_steps_meet_the_deepseek_v3_formulas_exactly() {
        for (p, m) in [(4, 8), (6, 12), (8, 20), (2, 4)] {
            for step in [8, 9] {
                let run = run(step, p, m);
                let (bubble, peak) = simulated(&run).expect("runs");
                let t = textbook(step, p, m);
                let (want_bubble, want_peak) = (t.bubble.1.unwrap(), t.peak.1.unwrap());
                assert!(
                    (bubble - want_bubble).abs() < 1e-9,
                    "step {step} p={p} m={m}: {bubble} vs {want_bubble}"
                );
                assert!(
                    (peak - want_peak).abs() < 1e-9,
                    "step {step} p={p} m={m}: {peak} vs {want_peak}"
                );
            }
        }
        // Odd p: DualPipe says why it cannot run.
        let e = run(9, 5, 10).sim.unwrap_err();
        assert!(e.contains("even p"), "{e}");
    }

    #[test]
    fn pipeoffload_steps_keep_less_than_gis() {
        let (p, m) = (8, 32);
        let po_h = LESSON.iter().position(|&k| k == ScheduleKind::PoH).unwrap();
        let (_, h) = simulated(&run(po_h, p, m)).unwrap();
        let (_, f) = simulated(&run(po_h + 1, p, m)).unwrap();
        // GIS holds 2p chunk-activations (p stage activations); PO-H's textbook keeps p/2
        // chunks and the copies under way add a few; PO-F keeps about three.
        let t = textbook(po_h, p, m).peak.1.unwrap();
        assert!(t <= h && h < f64::from(p), "{t} {h}");
        assert!(f <= 2.0 && f < h, "{f} {h}");
    }

    #[test]
    fn every_step_runs_at_the_default_sizes() {
        for step in 0..LESSON.len() {
            assert!(run(step, 4, 8).sim.is_ok(), "step {step}");
        }
    }
}
