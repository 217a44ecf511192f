//! Snapshots of a ZB-V greedy run, taken at the start of every few rounds of its steady
//! state, so that a rerun with a new bubble allowance starts where the runs part instead of
//! from the beginning.
//!
//! A run reads its allowance only in the allowance tests (`zbv_rerun`); everything else it
//! does follows from its own state. A rerun whose tests come out as the recorded ones up to
//! test `k` is, up to that test, step for step the run before it: its state at any snapshot
//! taken before test `k` is the snapshot. So the rerun can start from the last snapshot taken
//! before test `k`, with the run before it's order and end times up to there, and goes on as
//! a whole rerun would (a test compares the two).
//!
//! Snapshots are kept flat (one head per snapshot, `p` device records after each other and
//! the pending W's of all devices in one list), so that taking one allocates nothing once the
//! buffers have grown.

/// The run-wide part of a snapshot.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    /// The round of the steady state about to start.
    pub round: usize,
    /// How many allowance tests the run had made.
    pub checks: usize,
    /// Whether `fill_b` and `fill_f` had decided a step.
    pub read: (bool, bool),
    /// The largest stage bubble so far.
    pub max_bubble: f64,
    /// Where this snapshot's pending W's start in the shared list.
    pending_at: usize,
}

/// One device's part of a snapshot.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dev {
    /// Ops placed per `cat * 2 + chunk`.
    pub count: [usize; 6],
    /// The device's clock.
    pub cur: f64,
    /// Activations held (chunk-activations).
    pub mem: f64,
    /// The device's bubble so far.
    pub bubble: f64,
    /// Ops in the device's order so far.
    pub order_len: usize,
    /// Pending W's (their chunks follow in the shared list).
    pub pending: usize,
}

/// The snapshots of one run, in round order.
#[derive(Debug, Clone)]
pub(super) struct Snaps {
    /// Rounds between two snapshots: a resumed run repeats fewer rounds than this of the
    /// run before it.
    every: usize,
    heads: Vec<Head>,
    devs: Vec<Dev>,
    pending: Vec<u8>,
}

impl Snaps {
    /// No snapshots yet; one will be taken every `every` rounds (at least 1).
    pub fn new(every: usize) -> Snaps {
        Snaps {
            every: every.max(1),
            heads: Vec::new(),
            devs: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Whether a snapshot is due before round `round`: every `every` rounds, unless taken.
    pub fn due(&self, round: usize) -> bool {
        round.is_multiple_of(self.every) && self.heads.last().is_none_or(|h| h.round < round)
    }

    /// Forgets every snapshot (a new run starts).
    pub fn clear(&mut self) {
        self.heads.clear();
        self.devs.clear();
        self.pending.clear();
    }

    /// Keeps the first `n` snapshots.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.heads.len() {
            return;
        }
        let p = self.devs.len() / self.heads.len().max(1);
        self.pending.truncate(self.heads[n].pending_at);
        self.heads.truncate(n);
        self.devs.truncate(n * p);
    }

    /// Takes a snapshot: the run-wide figures, each device's record and each device's pending
    /// W's chunks (as many as its record says, devices in order).
    pub fn push(
        &mut self,
        round: usize,
        checks: usize,
        read: (bool, bool),
        max_bubble: f64,
        devs: impl Iterator<Item = Dev>,
        pending: impl Iterator<Item = usize>,
    ) {
        self.heads.push(Head {
            round,
            checks,
            read,
            max_bubble,
            pending_at: self.pending.len(),
        });
        self.devs.extend(devs);
        self.pending.extend(pending.map(|c| c as u8));
    }

    /// The last snapshot taken before allowance test `k` (taken when fewer than `k + 1` tests
    /// had been made), if any.
    pub fn last_before_check(&self, k: usize) -> Option<usize> {
        self.heads.partition_point(|h| h.checks <= k).checked_sub(1)
    }

    /// Snapshot `i`: its head, its `p` device records and its pending W's chunks (devices in
    /// order, as many per device as its record says).
    pub fn get(&self, i: usize, p: usize) -> (Head, &[Dev], &[u8]) {
        let head = self.heads[i];
        let end = self
            .heads
            .get(i + 1)
            .map_or(self.pending.len(), |h| h.pending_at);
        (
            head,
            &self.devs[i * p..(i + 1) * p],
            &self.pending[head.pending_at..end],
        )
    }

    /// The round and test count of every snapshot (for tests).
    #[cfg(test)]
    pub fn rounds(&self) -> Vec<(usize, usize)> {
        self.heads.iter().map(|h| (h.round, h.checks)).collect()
    }
}
