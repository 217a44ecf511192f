//! The `pipescope` command line: subcommands print plans, comparisons, simulations, units
//! and presets; no subcommand opens the terminal UI.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The program's allocator. The engine allocates and frees many short-lived tables and
/// timelines, from several threads in a sweep; the system allocator hands large blocks back to
/// the kernel on every free and faults them in again on the next use (hundreds of thousands of
/// page faults in one large sweep), where mimalloc keeps them for reuse.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Plan and simulate pipeline-parallel LLM training.
#[derive(Debug, Parser)]
#[command(name = "pipescope", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Scenario flags for the TUI when no subcommand is given.
    #[command(flatten)]
    scenario: cli::scenario_args::ScenarioArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Plan one scenario and print the per-stage plan and metrics.
    Plan(cli::plan::PlanArgs),
    /// Solve the scenario under several strategies and compare them.
    Compare(cli::compare::CompareArgs),
    /// Simulate a schedule with abstract or planned costs.
    Simulate(cli::simulate::SimulateArgs),
    /// Export the planned scenario or an abstract schedule (perfetto, svg, megatron, torchtitan).
    Export(cli::export::ExportArgs),
    /// Print the computation units of every block kind.
    Units(cli::units::UnitsArgs),
    /// List the built-in and user presets.
    Presets(cli::presets::PresetsArgs),
    /// Every configuration of a model on N GPUs, ranked, with the Pareto front.
    Sweep(Box<cli::sweep::SweepArgs>),
}

/// `RAYON_NUM_THREADS` bounded to the available parallelism: more threads than cores only
/// add switching (thousands of them stall `compare` for tens of seconds).
fn bound_threads() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let asked = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0);
    if let Some(n) = asked {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n.min(cores))
            .build_global();
    }
}

fn main() -> ExitCode {
    bound_threads();
    let cli = Cli::parse();
    if cli.command.is_some() && cli.scenario != cli::scenario_args::ScenarioArgs::default() {
        eprintln!(
            "error: scenario flags given before the subcommand (such as --preset) belong to \
             the terminal UI and would be ignored; put them after the subcommand, e.g. \
             `pipescope plan --preset NAME`"
        );
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Some(Command::Plan(args)) => cli::plan::run(&args),
        Some(Command::Compare(args)) => cli::compare::run(&args),
        Some(Command::Simulate(args)) => cli::simulate::run(&args),
        Some(Command::Export(args)) => cli::export::run(&args),
        Some(Command::Units(args)) => cli::units::run(&args),
        Some(Command::Presets(args)) => cli::presets::run(&args),
        Some(Command::Sweep(args)) => cli::sweep::run(&args),
        #[cfg(feature = "tui")]
        None => cli::tui::run(&cli.scenario),
        #[cfg(not(feature = "tui"))]
        None => Err({
            let _ = &cli.scenario;
            cli::Stop::Refused(
                "this build has no terminal UI (built without the `tui` feature); \
                     use a subcommand: plan, compare, simulate, units, presets, sweep"
                    .to_string(),
            )
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(stop) => {
            eprintln!("error: {}", cli::output::printable(stop.message()));
            ExitCode::from(stop.exit_status())
        }
    }
}
