//! Shared helpers of the engine tests that write a scenario as a file and read it again.

#![allow(dead_code, clippy::unwrap_used)]

use pipescope::{Catalog, Scenario, to_toml};

/// `s` written as a scenario file (`to_toml`) and read back by its name through a catalog of
/// the built-in presets, as a user's file is: equal to `s` where every setting survives the
/// round trip.
pub fn read_back(s: &Scenario) -> Scenario {
    let mut catalog = Catalog::builtin();
    catalog.add_text("round-trip.toml", &to_toml(s)).unwrap();
    catalog.scenario(&s.name).unwrap()
}
