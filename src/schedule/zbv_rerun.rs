//! When a rerun of the ZB-V greedy with a new bubble allowance would be step for step the
//! run before it, so that the search can skip it.
//!
//! The allowance (the previous run's per-stage bubbles) enters a run at one place only: the
//! last step of `fill_w` puts one more pending W when the wait before the next op exceeds
//! `max(largest bubble so far, largest allowance - the stage's allowance) - the stage's
//! bubble`. Every other step reads the run's own state. A run records, for each evaluation
//! of that test, the operands it saw; a second run with another allowance takes the same
//! path as long as each recorded test comes out the same under the new allowance (by
//! induction over the steps: the same path gives the same operands at the next test). When
//! every test does, the rerun returns the same order, bubbles and flags, so the search
//! (which reruns only while the largest bubble shrinks) stops exactly where it would have
//! stopped after running it.

/// One evaluation of the allowance test: `wait > allowance(max_bubble, ...) - bubble`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Check {
    /// The stage the test was made for.
    pub stage: u32,
    /// The wait: when the next op's input arrives minus the stage's clock.
    pub wait: f64,
    /// The stage's bubble so far.
    pub bubble: f64,
    /// The run's largest stage bubble so far.
    pub max_bubble: f64,
    /// The flag a passed test leaves the decision to: 0 none (the W is put), 1 `fill_b`,
    /// 2 `fill_f`.
    pub flag: u8,
}

/// The bubble a stage may still take before a W is put to fill the wait: the largest
/// bubble so far, or the gap between the largest allowance and the stage's own if larger.
/// The one place the test's threshold is computed, so that the recorded and the replayed
/// tests round alike.
pub(super) fn allowance(max_bubble: f64, max_approved: f64, approved: f64) -> f64 {
    max_bubble.max(max_approved - approved)
}

/// The allowance of a run: per stage (`-1` everywhere without one, as the source starts)
/// and the largest.
pub(super) fn approved_of(approved: Option<&[f64]>, p: usize) -> (Vec<f64>, f64) {
    let approved = approved.map_or_else(|| vec![-1.0; p], <[f64]>::to_vec);
    let max = approved.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (approved, max)
}

/// The first recorded test of the run that recorded `checks` with allowance `old` (both per
/// stage) that comes out otherwise with allowance `new`: where a run with `new` leaves the
/// recorded run's path (`None`: it never does, and is that run).
pub(super) fn first_difference(
    checks: &[Check],
    old: Option<&[f64]>,
    new: Option<&[f64]>,
    p: usize,
) -> Option<usize> {
    let (old, old_max) = approved_of(old, p);
    let (new, new_max) = approved_of(new, p);
    checks.iter().position(|c| {
        let s = c.stage as usize;
        let before = c.wait > allowance(c.max_bubble, old_max, old[s]) - c.bubble;
        let after = c.wait > allowance(c.max_bubble, new_max, new[s]) - c.bubble;
        before != after
    })
}

/// The first recorded test of a run without allowance, made with flags `old`
/// (`(fill_b, fill_f)`), where a run without allowance made with flags `new` decides
/// otherwise: the test passed and left the decision to a flag that differs. Up to there the
/// two runs are step for step the same (the flags are read nowhere else); `None`: they are
/// the same run.
pub(super) fn first_flag_difference(
    checks: &[Check],
    p: usize,
    old: (bool, bool),
    new: (bool, bool),
) -> Option<usize> {
    let (approved, max) = approved_of(None, p);
    checks.iter().position(|c| {
        let differs = match c.flag {
            1 => old.0 != new.0,
            2 => old.1 != new.1,
            _ => false,
        };
        differs && c.wait > allowance(c.max_bubble, max, approved[c.stage as usize]) - c.bubble
    })
}

/// Whether a run with allowance `new` takes the path of the run that recorded `checks`
/// with allowance `old` (both per stage): every recorded test comes out the same.
#[cfg(test)]
pub(super) fn same_path(
    checks: &[Check],
    old: Option<&[f64]>,
    new: Option<&[f64]>,
    p: usize,
) -> bool {
    first_difference(checks, old, new, p).is_none()
}
