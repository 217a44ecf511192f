//! Scenario flags shared by the TUI, `plan`, `compare` and `units` (DESIGN.md section 6).

use clap::Args;

/// Flags that pick a preset and override its fields.
#[derive(Debug, Clone, Default, Args)]
pub struct ScenarioArgs {
    /// Scenario preset name or TOML file.
    #[arg(long)]
    pub preset: Option<String>,
}
