//! The AdaPipe chain on the GPT-3 175B long-sequence preset: memory imbalance, adaptive
//! recomputation, compute imbalance, adaptive partitioning.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pipescope::{Catalog, Outcome, Scenario, Strategy, solve};

const GIB: f64 = (1u64 << 30) as f64;

fn preset() -> Scenario {
    Catalog::builtin().scenario("gpt3-175b-16k").unwrap()
}

fn with(strategy: Strategy) -> Outcome {
    let mut s = preset();
    s.plan.strategy = strategy;
    solve(&s).unwrap()
}

fn show(o: &Outcome) {
    println!(
        "{:10} feasible={} iter={:.3}s est={:.3}s speedup={:.3} mfu={:.3}",
        o.strategy.name(),
        o.feasible,
        o.iteration_time_s,
        o.estimated_iteration_time_s,
        o.speedup.unwrap_or(f64::NAN),
        o.mfu.unwrap_or(f64::NAN)
    );
    for st in &o.stages {
        println!(
            "  s{} blocks {:>3}..{:>3} att {:>2} mlp {:>2} in_flight {} peak {:6.2} GiB static {:6.2} T {:.4}s rec {:.4}s",
            st.stage,
            st.first_block,
            st.last_block,
            st.attention_blocks,
            st.mlp_blocks,
            st.in_flight,
            st.peak_memory_bytes as f64 / GIB,
            st.static_bytes as f64 / GIB,
            st.forward_s + st.backward_s,
            st.recompute_s
        );
    }
}

#[test]
fn adapipe_chain_on_gpt3_175b_16k() {
    let none = with(Strategy::None);
    show(&none);
    let full = with(Strategy::Full);
    show(&full);
    let adaptive = with(Strategy::Adaptive);
    show(&adaptive);
    let adapipe = with(Strategy::AdaPipe);
    show(&adapipe);

    // none: stage 0 over budget, and the outcome says so.
    assert!(!none.feasible);
    assert!(none.stages[0].peak_memory_bytes > none.stages[0].budget_bytes);
    let reason = none.infeasible_reason.as_deref().unwrap();
    assert!(reason.starts_with("stage 0 needs "), "{reason}");
    // full: fits, and the last stage leaves tens of GiB unused.
    assert!(full.feasible);
    let last = full.stages.last().unwrap();
    assert!((last.budget_bytes - last.peak_memory_bytes) as f64 / GIB >= 10.0);
    // adaptive: fits, memory balanced (every recomputing stage within 1 GiB of the budget),
    // early stages slower than late ones.
    assert!(adaptive.feasible);
    for st in adaptive.stages.iter().filter(|s| s.recompute_s > 0.0) {
        assert!((st.budget_bytes - st.peak_memory_bytes) as f64 / GIB < 1.0);
    }
    let t = |s: &pipescope::StageOutcome| s.forward_s + s.backward_s;
    assert!(t(&adaptive.stages[0]) > t(&adaptive.stages[6]));
    // adapipe: early stages hold fewer blocks than late ones, and the iteration is faster.
    assert!(adapipe.feasible);
    let blocks = |s: &pipescope::StageOutcome| s.last_block + 1 - s.first_block;
    assert!(blocks(&adapipe.stages[0]) < blocks(adapipe.stages.last().unwrap()));
    assert!(adapipe.iteration_time_s < adaptive.iteration_time_s);
    let speedup = full.iteration_time_s / adapipe.iteration_time_s;
    println!("adapipe over full: {speedup:.3}x");
    assert!(speedup >= 1.03, "{speedup}");
    assert!((adapipe.speedup.unwrap() - speedup).abs() < 1e-9);
}
