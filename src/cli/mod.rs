//! One file per subcommand; each exposes its clap `Args` and a `run` that prints to stdout
//! and returns a user-facing error message on failure.

pub mod compare;
pub mod export;
pub mod no_fit;
pub mod output;
pub mod plan;
pub mod presets;
pub mod scenario_args;
pub mod scenario_flags;
pub mod sim_number;
pub mod simulate;
pub mod sweep;
pub mod sweep_dense;
pub mod sweep_output;
#[cfg(feature = "tui")]
pub mod tui;
pub mod units;
pub mod unused_flags;
pub mod unused_plan_flags;
