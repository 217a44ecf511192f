//! Planning: which units each stage keeps, recomputes, compresses or offloads (knapsack),
//! and which blocks each stage holds (partition), for every memory strategy.
//!
//! - [`knapsack`]: the exact group knapsack (dense gcd table + sparse Pareto front);
//! - [`stage`]: one stage's memory and time model and its knapsack formulation;
//! - [`partition`]: the outer DPs over block ranges (exact estimate, AdaPipe's recurrence);
//! - [`layout`]: even partition and per-block assignment of per-kind counts;
//! - [`decide`]: the per-device decisions of every strategy;
//! - [`planner`]: from a layout and in-flight counts to candidate plans;
//! - [`simcosts`]: the simulator's inputs built from a plan.

pub mod decide;
pub mod knapsack;
pub mod layout;
pub mod partition;
pub mod planner;
pub mod simcosts;
pub mod stage;
mod strategy;
#[cfg(test)]
pub(crate) mod testkit;

pub use strategy::{Decision, Strategy};
