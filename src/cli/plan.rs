//! `pipescope plan`.

use clap::Args;

/// Arguments of `pipescope plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: &PlanArgs) -> Result<(), String> {
    let _ = args;
    Err("not implemented yet".into())
}
