//! Story mode's narration: one sentence per step of the AdaPipe chain (none, full, adaptive,
//! adapipe), Lynx after it, and PipeOffload's answer (po-h, po-f), built from the real numbers
//! of the current scenario's solves.

use crate::{Outcome, ScheduleKind};

use super::app::STORY;
use super::solved::Solved;
use super::view::format;

/// One step's result as the story sees it.
pub type StepResult = Option<Result<Solved, String>>;

fn peak(o: &Outcome) -> (u32, u64) {
    o.stages
        .iter()
        .map(|s| (s.stage, s.peak_memory_bytes))
        .max_by_key(|x| x.1)
        .unwrap_or((0, 0))
}

fn budget(o: &Outcome) -> u64 {
    o.stages.first().map_or(0, |s| s.budget_bytes)
}

fn slowest(o: &Outcome) -> f64 {
    o.stages
        .iter()
        .map(|s| s.forward_s + s.backward_s)
        .fold(0.0, f64::max)
}

fn fit(o: &Outcome) -> String {
    if o.feasible {
        "fits".into()
    } else {
        let reason = o.infeasible_reason.as_deref().unwrap_or("over budget");
        let mut parts = reason.split("; ");
        let first = parts.next().unwrap_or(reason);
        match parts.count() {
            0 => format!("does not fit ({first})"),
            n => format!("does not fit ({first}, and {n} more stages)"),
        }
    }
}

fn outcome(results: &[StepResult], i: usize) -> Option<&Outcome> {
    match results.get(i) {
        Some(Some(Ok(s))) => Some(&s.outcome),
        _ => None,
    }
}

/// The sentence for `step` given all steps' results.
pub fn sentence(step: usize, results: &[StepResult]) -> String {
    let name = STORY.get(step).map_or("?", |s| s.name());
    let offload = STORY.get(step).and_then(|s| s.schedule).is_some();
    let o = match results.get(step) {
        Some(Some(Ok(s))) => &s.outcome,
        Some(Some(Err(e))) if offload => {
            return format!(
                "{} is refused for this scenario, so the story ends without it: {}.",
                name.to_uppercase(),
                e.trim_end_matches('.')
            );
        }
        Some(Some(Err(e))) => return format!("{name}: cannot be solved: {e}"),
        _ => return format!("{name}: solving…"),
    };
    let (ws, wp) = peak(o);
    let it = format::time(o.iteration_time_s);
    let none = outcome(results, 0);
    let full = outcome(results, 1);
    // A speed is only quoted for a plan that fits: an infeasible one does not run.
    let vs_full = full.filter(|_| o.feasible).map_or(String::new(), |f| {
        format!(
            ", {:.2}× the speed of full",
            f.iteration_time_s / o.iteration_time_s.max(f64::MIN_POSITIVE)
        )
    });
    match step {
        0 => format!(
            "Keep every activation: stage {ws} peaks at {} GiB against a {} GiB budget, so it {}; iteration {it}, bubble {}.",
            format::gib(wp),
            format::gib(budget(o)),
            fit(o),
            format::pct(o.pipeline_bubble_rate())
        ),
        1 => {
            let r0 = o.stages.first().map_or(0.0, |s| s.recompute_s);
            let from = none.map_or(String::new(), |n| {
                format!(" (from {} GiB)", format::gib(peak(n).1))
            });
            format!(
                "Full recomputation keeps only each layer's input: the peak falls to {} GiB{from} and {}, but every backward re-runs its forward ({} per micro-batch on stage 0); iteration {it}.",
                format::gib(wp),
                fit(o),
                format::time(r0)
            )
        }
        2 => {
            let first = o.stages.first();
            let last = o.stages.last();
            let work = |s: Option<&crate::outcome::StageOutcome>| {
                s.map_or(0.0, |s| s.forward_s + s.backward_s)
            };
            let (w0, wl) = (work(first), work(last));
            let bubble = full.map_or(String::new(), |f| {
                format!(
                    ", so the bubble goes {} → {}",
                    format::pct(f.pipeline_bubble_rate()),
                    format::pct(o.pipeline_bubble_rate())
                )
            });
            format!(
                "Adaptive recomputation keeps what each stage's budget allows: stage 0 holds {} micro-batches and recomputes {} each, the last stage holds {} and recomputes {}. The memory imbalance becomes a compute imbalance: stage 0 works {} per micro-batch, the last stage {} ({:.2}×){bubble}; it {}, iteration {it}{vs_full}.",
                first.map_or(0, |s| s.in_flight),
                format::time(first.map_or(0.0, |s| s.recompute_s)),
                last.map_or(0, |s| s.in_flight),
                format::time(last.map_or(0.0, |s| s.recompute_s)),
                format::time(w0),
                format::time(wl),
                w0.max(wl) / w0.min(wl).max(f64::MIN_POSITIVE),
                fit(o)
            )
        }
        3 => {
            let layers: Vec<String> = o
                .stages
                .iter()
                .map(|s| s.attention_blocks.to_string())
                .collect();
            let even = outcome(results, 2);
            let before = even.map_or(String::new(), |a| {
                format!(" (even split: {})", format::time(slowest(a)))
            });
            let split = |x: &Outcome| -> Vec<Vec<[usize; 2]>> {
                x.stages.iter().map(|s| s.ranges.clone()).collect()
            };
            if even.is_some_and(|a| split(a) == split(o)) {
                let why = if o.feasible {
                    "no other split it tried is faster"
                } else {
                    "no split it tried fits the budget"
                };
                return format!(
                    "AdaPipe keeps the even split ({} layers per stage): {why}, so the slowest stage still takes {} per micro-batch; it {}, iteration {it}{vs_full}.",
                    layers.join("/"),
                    format::time(slowest(o)),
                    fit(o)
                );
            }
            format!(
                "AdaPipe also moves layers between stages ({} layers per stage), so the slowest stage takes {} per micro-batch{before}; it {}, iteration {it}{vs_full}.",
                layers.join("/"),
                format::time(slowest(o)),
                fit(o)
            )
        }
        4 => {
            let hidden: f64 = o.stages.iter().map(|s| s.hidden_recompute_s).sum();
            let all: f64 = o.stages.iter().map(|s| s.recompute_s).sum();
            format!(
                "Lynx hides recomputation in the waits for the gradient and the backward's collectives: {} of {} per micro-batch over the stages is hidden; it {}, iteration {it}{vs_full}.",
                format::time(hidden),
                format::time(all),
                fit(o)
            )
        }
        _ => offload_sentence(step, o, none, &it, &vs_full),
    }
}

/// PipeOffload's steps: what stays on the device, what sits on the host, and `k`.
fn offload_sentence(
    step: usize,
    o: &Outcome,
    none: Option<&Outcome>,
    it: &str,
    vs_full: &str,
) -> String {
    let resident = o
        .stages
        .iter()
        .map(|s| s.activation_bytes)
        .max()
        .unwrap_or(0);
    let host = o.stages.iter().map(|s| s.offload_bytes).max().unwrap_or(0);
    let k = o
        .stages
        .iter()
        .filter_map(|s| s.copy_ratio)
        .reduce(f64::max)
        .map_or(String::new(), |k| {
            format!("; a round trip takes k = {k:.2} of its chunk's compute (at most 1 keeps pace)")
        });
    let kept = none.map_or(String::new(), |n| {
        let most = n
            .stages
            .iter()
            .map(|s| s.activation_bytes)
            .max()
            .unwrap_or(0);
        format!(" (keeping them all: {} GiB)", format::gib(most))
    });
    let what = if STORY.get(step).and_then(|s| s.schedule) == Some(ScheduleKind::PoH) {
        "PipeOffload's PO-H recomputes only the cheap norms, activations and dropouts, keeps the rest and sends the longest-lived half of each device's chunks to the host between forward and backward, on one copy stream per device that a pair of devices takes turns on"
    } else {
        "PO-F sends every chunk to the host"
    };
    format!(
        "{what}: at most {} GiB of activations stay on a device{kept} and {} GiB sit on the host per GPU{k}; it {}, iteration {it}{vs_full}.{}",
        format::gib(resident),
        format::gib(host),
        fit(o),
        over_budget_why(o)
    )
}

/// For an offloading plan over its budget, why offloading could not save it: what the worst
/// stage holds besides the activations (weights, gradients, optimizer state), against its
/// budget. Empty for a plan that fits.
fn over_budget_why(o: &Outcome) -> String {
    if o.feasible {
        return String::new();
    }
    let Some(worst) = o
        .stages
        .iter()
        .max_by_key(|s| s.peak_memory_bytes.saturating_sub(s.budget_bytes))
    else {
        return String::new();
    };
    let (fixed, budget) = (worst.static_bytes, worst.budget_bytes);
    if fixed >= budget {
        format!(
            " Offloading moves activations only: stage {}'s weights, gradients and optimizer state alone take {} GiB of its {} GiB budget, so no schedule fits it; fewer layers per device (more stages p or tensor t), ZeRO or a larger budget would.",
            worst.stage,
            format::gib(fixed),
            format::gib(budget)
        )
    } else {
        format!(
            " Offloading moves activations only: stage {}'s weights, gradients and optimizer state take {} GiB of its {} GiB budget, and the {} GiB of activations still on the device while copies are under way do not fit beside them.",
            worst.stage,
            format::gib(fixed),
            format::gib(budget),
            format::gib(worst.activation_bytes)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixture;

    /// The story's bubble is the header's (the pipeline's, without the end-of-iteration
    /// steps), so the two never disagree on one screen (18.84 s: "15.5%" above, "15.6%" in
    /// the story).
    #[test]
    fn the_story_s_bubble_is_the_header_s() {
        let sc = fixture::scenario("gpt3");
        let mut results: Vec<StepResult> = STORY
            .iter()
            .map(|s| Some(fixture::solve(&s.scenario(&sc))))
            .collect();
        for r in results.iter_mut().flatten().flatten() {
            r.outcome.bubble_rate = 0.999;
        }
        for step in [0, 2] {
            let Some(o) = outcome(&results, step) else {
                panic!("the fixture solves step {step}")
            };
            let text = sentence(step, &results);
            let header = crate::tui::view::format::pct(o.pipeline_bubble_rate());
            assert!(text.contains(&header), "{header}: {text}");
            assert!(!text.contains("99.9%"), "{text}");
        }
    }

    #[test]
    fn sentences_use_the_numbers() {
        let sc = fixture::scenario("gpt3");
        let results: Vec<StepResult> = STORY
            .iter()
            .map(|s| Some(fixture::solve(&s.scenario(&sc))))
            .collect();
        for step in 0..STORY.len() {
            let s = sentence(step, &results);
            assert!(s.contains("iteration"), "{s}");
        }
        assert!(sentence(0, &results).contains("does not fit"));
        assert!(sentence(3, &results).contains("layers per stage"));
        // AdaPipe that moved nothing says it kept the even split (and why), not that it
        // moved layers.
        let mut same = results.clone();
        same[3] = same[2].clone();
        let kept = sentence(3, &same);
        assert!(kept.contains("keeps the even split"), "{kept}");
        assert!(!kept.contains("moves layers"), "{kept}");
        assert_eq!(sentence(1, &[None, None]), "full: solving…");
        // The story ends at PO-F: refused, or over the budget, it says why.
        let last = STORY.len() - 1;
        let mut refused = results.clone();
        refused[last] = Some(Err("po-f needs copies that keep pace".into()));
        let s = sentence(last, &refused);
        assert!(s.starts_with("PO-F is refused for this scenario"), "{s}");
        assert!(s.contains("po-f needs copies that keep pace"), "{s}");
        let mut over = results.clone();
        if let Some(Ok(solved)) = over[last].as_mut() {
            let o = &mut solved.outcome;
            o.feasible = false;
            o.infeasible_reason = Some("stage 0 needs 90 GiB, budget 70 GiB".into());
            for st in &mut o.stages {
                st.static_bytes = st.budget_bytes + 1;
            }
        }
        let s = sentence(last, &over);
        assert!(s.contains("does not fit"), "{s}");
        assert!(
            s.contains("Offloading moves activations only") && s.contains("alone take"),
            "{s}"
        );
        // No speed is quoted for a step whose plan does not fit.
        for step in 2..STORY.len() {
            if let Some(Some(Ok(s))) = results.get(step)
                && !s.outcome.feasible
            {
                assert!(!sentence(step, &results).contains("the speed of full"));
            }
        }
    }
}
