//! Cooperative cancellation of a solve. The engine stays single-threaded and pure: whoever
//! runs a solve on another thread (the TUI's worker) keeps a clone of the [`Cancel`] token
//! and sets it when the result is no longer wanted; the engine only reads it at coarse
//! points (between schedule candidates, strategies and baselines, and before each exact stage
//! knapsack of the partition search) and gives up with [`Cancelled`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A token a solve checks to learn that its result is no longer wanted. Clones share the
/// flag; [`Cancel::never`] is a token that is never set (what [`crate::solve`] uses).
#[derive(Debug, Clone, Default)]
pub struct Cancel(Option<Arc<AtomicBool>>);

/// The error of a solve that stopped because its token was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the solve was cancelled (a newer request replaced it)")]
pub struct Cancelled;

impl Cancel {
    /// A token that can be cancelled (not set yet).
    pub fn new() -> Cancel {
        Cancel(Some(Arc::new(AtomicBool::new(false))))
    }

    /// A token that is never set: checking it costs nothing.
    pub fn never() -> Cancel {
        Cancel(None)
    }

    /// Sets the token: every solve holding a clone stops at its next check.
    pub fn cancel(&self) {
        if let Some(flag) = &self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the token has been set.
    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// `Err(Cancelled)` once the token is set: the check the engine makes at its stopping
    /// points (`cancel.check()?`).
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag_and_never_stays_unset() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(b.check().is_ok());
        a.cancel();
        assert!(b.is_cancelled());
        assert_eq!(b.check(), Err(Cancelled));
        let never = Cancel::never();
        never.cancel();
        assert!(!never.is_cancelled());
    }
}
