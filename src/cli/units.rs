//! `pipescope units`.

use clap::Args;

/// Arguments of `pipescope units`.
#[derive(Debug, Args)]
pub struct UnitsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: &UnitsArgs) -> Result<(), String> {
    let _ = args;
    Err("not implemented yet".into())
}
