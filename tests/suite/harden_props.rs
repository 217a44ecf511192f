//! The proof that no input panics: random scenarios through `solve` never panic and every
//! outcome keeps its invariants (a slice of 200 cases here; `harden_props_100k`, ignored,
//! runs 100,000: `cargo test --release --test suite harden_props_100k -- --ignored`), and
//! arbitrary bytes as a preset or theme file never panic the parsers and their errors carry
//! `file:line:column`.

use std::sync::atomic::{AtomicU64, Ordering};

use pipescope::{Catalog, ModelStyle, Scenario, ScheduleKind, Strategy as MemStrategy};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const GIB: u64 = 1 << 30;

/// Cases that solved (the rest were refused with an error).
static SOLVED: AtomicU64 = AtomicU64::new(0);

/// A scenario from small random sizes (valid or not: validation decides).
fn scenario() -> impl Strategy<Value = Scenario> {
    (
        (
            1u32..=12,
            0usize..3,
            0usize..3,
            any::<bool>(),
            1000u64..60_000,
        ),
        (1u32..=10, 0usize..3, 1u32..=3, 1u32..=40, 1u64..=3),
        (
            prop::sample::select(vec![128u64, 512, 1024, 2048, 4096]),
            0usize..ScheduleKind::ALL.len(),
            0usize..MemStrategy::ALL.len(),
            1u64..=100,
            any::<bool>(),
        ),
    )
        .prop_map(|(model, par, rest)| {
            let (layers, h, heads, llama, vocab) = model;
            let (pp, tp, chunks, m, mbs) = par;
            let (seq, schedule, strategy, budget_gib, sp) = rest;
            let mut sc = Catalog::builtin()
                .scenario("gpt3-175b-16k")
                .expect("built-in");
            let hidden = [256u64, 512, 1024][h];
            sc.model.layers = layers;
            sc.model.hidden = hidden;
            sc.model.heads = [4u64, 8, 16][heads];
            sc.model.kv_heads = sc.model.heads;
            sc.model.style = if llama {
                ModelStyle::Llama
            } else {
                ModelStyle::Gpt
            };
            sc.model.ffn = 4 * hidden;
            sc.model.vocab = vocab;
            sc.model.max_positions = (!llama).then_some(seq);
            sc.parallel.pp = pp;
            sc.parallel.tp = [1u32, 2, 4][tp];
            sc.parallel.chunks = chunks;
            sc.parallel.sequence_parallel = sp;
            sc.batch.micro_batches = m;
            sc.batch.micro_batch_size = mbs;
            sc.batch.seq_len = seq;
            sc.plan.schedule = ScheduleKind::ALL[schedule];
            sc.plan.strategy = MemStrategy::ALL[strategy];
            sc.plan.memory_budget_bytes = budget_gib * GIB;
            sc
        })
}

/// Solves `sc` and checks the outcome's invariants; errors are fine, panics are not.
fn check(sc: &Scenario) -> Result<(), TestCaseError> {
    let Ok(out) = pipescope::solve(sc) else {
        return Ok(());
    };
    SOLVED.fetch_add(1, Ordering::Relaxed);
    let unit = 0.0..=1.0;
    prop_assert!(out.iteration_time_s.is_finite() && out.iteration_time_s > 0.0);
    prop_assert!(
        unit.contains(&out.bubble_rate),
        "bubble {}",
        out.bubble_rate
    );
    // MFU, HFU and the speed-up are null exactly when the plan does not fit (or the
    // utilisation would not be a fraction); otherwise fractions, MFU at most HFU.
    if !out.feasible {
        prop_assert!(out.mfu.is_none() && out.hfu.is_none() && out.speedup.is_none());
    }
    if let (Some(mfu), Some(hfu)) = (out.mfu, out.hfu) {
        prop_assert!(unit.contains(&mfu), "mfu {}", mfu);
        prop_assert!(unit.contains(&hfu), "hfu {}", hfu);
        prop_assert!(mfu <= hfu + 1e-12, "mfu {} > hfu {}", mfu, hfu);
    }
    prop_assert_eq!(out.feasible, out.infeasible_reason.is_none());
    if let Some(speedup) = out.speedup {
        prop_assert!(speedup.is_finite() && speedup >= 0.0);
    }
    prop_assert_eq!(out.stages.len(), sc.parallel.pp as usize);
    prop_assert_eq!(out.schedule, sc.plan.schedule);
    for st in &out.stages {
        prop_assert!(st.first_block <= st.last_block);
        prop_assert!(st.forward_s.is_finite() && st.forward_s >= 0.0);
        prop_assert!(st.backward_s.is_finite() && st.backward_s >= 0.0);
    }
    Ok(())
}

fn run(cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&scenario(), |sc| check(&sc));
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn random_scenarios_solve_without_panics_and_keep_the_invariants() {
    run(200);
}

/// The benchmark-sized run (100,000 scenarios, enough to reach the rare corners of the
/// space). `PIPESCOPE_PROP_CASES`
/// sets another count.
#[test]
#[ignore = "benchmark-sized: run in release with --ignored"]
fn harden_props_100k() {
    let cases = std::env::var("PIPESCOPE_PROP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let start = std::time::Instant::now();
    run(cases);
    eprintln!(
        "harden_props_100k: {cases} random scenarios, {} solved, the rest refused with an \
         error, 0 failures, {:.1} s",
        SOLVED.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
}

/// Whether `e` carries `file:line:column`.
fn located(e: &str, file: &str) -> bool {
    let Some(rest) = e.strip_prefix(file).and_then(|r| r.strip_prefix(':')) else {
        return false;
    };
    let mut parts = rest.splitn(3, ':');
    let line = parts.next().and_then(|l| l.parse::<usize>().ok());
    let col = parts.next().and_then(|c| c.parse::<usize>().ok());
    line.is_some() && col.is_some()
}

fn toml_ish() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(any::<u8>(), 0..200)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        // Near-miss presets: a valid file with one line damaged.
        (0usize..9, any::<String>()).prop_map(|(i, junk)| {
            let mut lines: Vec<String> = [
                "name = \"x\"",
                "model = \"gpt3-175b\"",
                "gpu = \"a100-80gb\"",
                "[parallel]",
                "pp = 4",
                "[batch]",
                "micro_batches = 8",
                "[plan]",
                "schedule = \"1f1b\"",
            ]
            .map(String::from)
            .to_vec();
            lines[i] = junk;
            lines.join("\n")
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_preset_text_never_panics_and_errors_are_located(text in toml_ish()) {
        let mut catalog = Catalog::builtin();
        if let Err(e) = catalog.add_text("f.toml", &text) {
            let msg = e.to_string();
            prop_assert!(msg.starts_with("f.toml"), "{}", msg);
            // Syntax errors always carry a line and column.
            if text.parse::<toml::Table>().is_err() {
                prop_assert!(located(&msg, "f.toml"), "{}", msg);
            }
        }
    }
}

#[cfg(feature = "tui")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_theme_text_never_panics_and_errors_are_located(text in toml_ish()) {
        let path = std::path::Path::new("t.toml");
        if let Err(e) = pipescope::tui::Theme::parse(&text, path) {
            prop_assert!(located(&e, "t.toml"), "{}", e);
        }
    }
}
