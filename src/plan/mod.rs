//! Planning: which units each stage keeps, recomputes, compresses or offloads (knapsack),
//! and which blocks each stage holds (partition), for every memory strategy.

pub mod knapsack;
pub mod partition;
pub mod stage;
mod strategy;

pub use strategy::{Decision, Strategy};
