//! `pipescope presets`.

use clap::Args;

/// Arguments of `pipescope presets`.
#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: &PresetsArgs) -> Result<(), String> {
    let _ = args;
    Err("not implemented yet".into())
}
