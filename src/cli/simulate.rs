//! `pipescope simulate`.

use clap::Args;

/// Arguments of `pipescope simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: &SimulateArgs) -> Result<(), String> {
    let _ = args;
    Err("not implemented yet".into())
}
