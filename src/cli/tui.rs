//! No subcommand: the terminal UI.

use super::scenario_args::ScenarioArgs;

/// Opens the TUI on the scenario the flags describe.
pub fn run(args: &ScenarioArgs) -> Result<(), String> {
    let _ = args;
    Err("the TUI is not implemented yet".into())
}
