//! `pipescope presets`: the model, GPU and scenario presets with their descriptions.

use clap::Args;
use serde::Serialize;

use pipescope::scenario::{Catalog, PresetInfo};

/// Arguments of `pipescope presets`.
#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Listing {
    models: Vec<PresetInfo>,
    gpus: Vec<PresetInfo>,
    scenarios: Vec<PresetInfo>,
}

/// Runs the subcommand.
pub fn run(args: &PresetsArgs) -> Result<(), String> {
    let catalog = Catalog::with_user_config();
    for e in catalog.errors() {
        eprintln!("warning: {e}");
    }
    let listing = Listing {
        models: catalog.models(),
        gpus: catalog.gpus(),
        scenarios: catalog.scenarios(),
    };
    if args.json {
        let text = serde_json::to_string_pretty(&listing).map_err(|e| e.to_string())?;
        println!("{text}");
        return Ok(());
    }
    for (title, list) in [
        ("models", &listing.models),
        ("gpus", &listing.gpus),
        ("scenarios", &listing.scenarios),
    ] {
        println!("{title}:");
        let width = list.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in list {
            println!("  {:width$}  {}", p.name, p.description);
        }
    }
    Ok(())
}
