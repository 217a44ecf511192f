//! `pipescope compare`.

use clap::Args;

/// Arguments of `pipescope compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: &CompareArgs) -> Result<(), String> {
    let _ = args;
    Err("not implemented yet".into())
}
