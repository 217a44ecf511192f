//! `pipescope compare`: solve one scenario under several strategies (in parallel) and print
//! one row per strategy, or a JSON array of `plan --json` objects.

use clap::Args;
use rayon::prelude::*;

use super::scenario_args::ScenarioArgs;
use pipescope::{GIB, Outcome, ScheduleMemo, SolveOptions, Strategy, solve_with};

/// Arguments of `pipescope compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Scenario flags.
    #[command(flatten)]
    pub scenario: Box<ScenarioArgs>,
    /// Strategies to compare, comma separated (default: all).
    #[arg(long, value_delimiter = ',', value_name = "A,B,...")]
    pub strategies: Vec<Strategy>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Solves `scenario` under each strategy, in parallel, in the order given, the solves
/// sharing the schedules they generate (each strategy's first schedule, and the baseline,
/// are the same: a slow search such as v-zb's then runs once for them, not once each).
pub fn compare(
    scenario: &pipescope::Scenario,
    strategies: &[Strategy],
) -> Result<Vec<Outcome>, String> {
    let memo = ScheduleMemo::default();
    strategies
        .par_iter()
        .map(|&k| {
            let mut s = scenario.clone();
            s.plan.strategy = k;
            let options = SolveOptions {
                memo: Some(&memo),
                ..SolveOptions::default()
            };
            solve_with(&s, &options)
                .map_err(|e| format!("{k}: {}", super::scenario_args::name_flags(&e.to_string())))
        })
        .collect()
}

/// Runs the subcommand.
pub fn run(args: &CompareArgs) -> Result<(), super::Stop> {
    let (scenario, _) = args.scenario.to_scenario()?;
    let strategies: Vec<Strategy> = if args.strategies.is_empty() {
        default_strategies(&scenario)
    } else {
        super::unused_plan_flags::check_named_units(&args.strategies, &scenario, "--strategies")?;
        args.strategies.clone()
    };
    let outcomes = compare(&scenario, &strategies)?;
    if args.json {
        // Each entry as `plan --json` writes it (what was planned included).
        let values = outcomes
            .iter()
            .map(|o| super::plan::plan_json(&scenario, o))
            .collect::<Result<Vec<_>, String>>()?;
        let text = serde_json::to_string_pretty(&values).map_err(|e| e.to_string())?;
        return super::output::emit_line(&text);
    }
    let preset = args.scenario.source.preset.is_some();
    super::output::emit(&table(&scenario, preset, &outcomes))
}

/// Every strategy, but with a layout (`--layout`, a preset's `plan.layout`) not those that
/// search their own split: they would refuse it. A note on standard error names them.
/// `named` only when units to recompute are named: without them it is `none`'s row again.
fn default_strategies(scenario: &pipescope::Scenario) -> Vec<Strategy> {
    let units = !scenario.plan.recompute_units.is_empty();
    let candidates = Strategy::ALL
        .iter()
        .filter(|&&k| units || k != Strategy::Named);
    let (keep, searching): (Vec<Strategy>, Vec<Strategy>) = candidates.partition(|&&k| {
        let mut s = scenario.clone();
        s.plan.strategy = k;
        scenario.plan.layout.is_none() || !pipescope::searches_own_split(&s)
    });
    if !searching.is_empty() {
        let names: Vec<String> = searching.iter().map(|k| k.to_string()).collect();
        eprintln!(
            "pipescope: note: the layout is the whole split, so compare leaves out {} (they \
             search their own split; --strategies names them to see the refusal)",
            names.join(", ")
        );
    }
    keep
}

/// The text report: a header naming the model and GPU (and the preset, when one was named:
/// without `--preset` the starting preset is only where the flags began), one row per
/// strategy, then the outcomes' notes.
fn table(scenario: &pipescope::Scenario, preset: bool, outcomes: &[Outcome]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let preset = if preset {
        format!("{}: ", scenario.name)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "{preset}{} on {} ({}, p {}, m {}, budget {:.1} GiB)",
        scenario.model.name,
        scenario.gpu.name,
        scenario.plan.schedule,
        scenario.parallel.pp,
        scenario.batch.micro_batches,
        scenario.plan.memory_budget_bytes as f64 / GIB
    );
    // The strategy column is as wide as its longest name (`lynx-heuristic`); with it a row
    // is 77 columns, so that it fits an 80-column terminal whole (the peak included).
    let w = outcomes
        .iter()
        .map(|o| o.strategy.name().len())
        .max()
        .unwrap_or(0)
        .max(10);
    let _ = writeln!(
        s,
        "{:<w$} {:>4} {:>8} {:>7} {:>6} {:>6} {:>6} {:>10} {:>8}",
        "strategy", "fits", "iter s", "speedup", "bubble", "MFU", "HFU", "max peak", "solve ms"
    );
    for o in outcomes {
        let peak = o.max_peak_memory_bytes();
        let _ = writeln!(
            s,
            "{:<w$} {:>4} {:>8.3} {:>7} {:>5.1}% {:>6} {:>6} {:>6.1} GiB {:>8.2}",
            o.strategy.name(),
            if o.feasible { "yes" } else { "NO" },
            o.iteration_time_s,
            super::output::ratio(o.speedup),
            100.0 * o.pipeline_bubble_rate(),
            super::output::percent(o.mfu),
            super::output::percent(o.hfu),
            peak as f64 / GIB,
            o.solve_time_s * 1e3
        );
    }
    // A note every strategy shares (the scenario's, such as t beyond a node) is written
    // once; the others name their strategy.
    let shared = |n: &String| outcomes.len() > 1 && outcomes.iter().all(|o| o.notes.contains(n));
    if let Some(first) = outcomes.first() {
        for n in first.notes.iter().filter(|n| shared(n)) {
            let _ = writeln!(s, "note: {n}");
        }
    }
    for o in outcomes {
        for n in o.notes.iter().filter(|n| !shared(n)) {
            let _ = writeln!(s, "note ({}): {n}", o.strategy);
        }
    }
    s
}
