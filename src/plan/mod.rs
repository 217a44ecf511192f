//! Planning: which units each stage keeps, recomputes, compresses or offloads (knapsack),
//! and which blocks each stage holds (partition), for every memory strategy.

mod strategy;

pub use strategy::{Decision, Strategy};
