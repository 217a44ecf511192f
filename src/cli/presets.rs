//! `pipescope presets`: the model, GPU and scenario presets with their descriptions.

use clap::Args;
use serde::Serialize;

use super::output::{emit, emit_line};
use pipescope::{Catalog, PresetInfo, PresetKind};

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
pub fn run(args: &PresetsArgs) -> Result<(), super::Stop> {
    let catalog = Catalog::with_user_config();
    for e in catalog.errors() {
        eprintln!("warning: {}", super::output::printable(&e.to_string()));
    }
    let listing = Listing {
        models: catalog.models(),
        gpus: catalog.gpus(),
        scenarios: catalog.scenarios(),
    };
    if args.json {
        let text = serde_json::to_string_pretty(&listing).map_err(|e| e.to_string())?;
        return emit_line(&text);
    }
    let mut out = String::new();
    for (title, kind, list) in [
        ("models", PresetKind::Model, &listing.models),
        ("gpus", PresetKind::Gpu, &listing.gpus),
        ("scenarios", PresetKind::Scenario, &listing.scenarios),
    ] {
        out.push_str(&format!("{title}:\n"));
        // Capped: a 65,536-byte name panicked the formatter (a width must fit in 16 bits).
        let width = list
            .iter()
            .map(|p| p.name.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for p in list {
            // A name a broken or duplicate user file claims is not used (the warning says why).
            let unused = if catalog.unusable(kind, &p.name).is_some() {
                "[not used: see the warning] "
            } else {
                ""
            };
            out.push_str(&format!("  {:width$}  {unused}{}\n", p.name, p.description));
        }
    }
    emit(&out)
}
