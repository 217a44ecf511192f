//! Buffers the dense table reuses from one solve to the next: a plan request makes many
//! solves, and fresh table-sized buffers would each be allocated and zeroed anew.

/// Spare buffers for the dense table: a solve takes what it needs and gives them back.
/// Holds no answer (every buffer is overwritten before it is read), so sharing one between
/// solves never changes a result.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Spare cost tables.
    values: Vec<Vec<f64>>,
    /// Spare pick tables.
    picks: Vec<Vec<u32>>,
}

/// At most this many spare buffers of each kind are kept (a solve needs one per group).
const SPARE_MAX: usize = 64;

impl Scratch {
    /// A cost table of `len` cells, each `fill`.
    pub(super) fn values(&mut self, len: usize, fill: f64) -> Vec<f64> {
        let mut v = self.values.pop().unwrap_or_default();
        v.clear();
        v.resize(len, fill);
        v
    }

    /// A pick table of `len` cells, each `fill`.
    pub(super) fn picks(&mut self, len: usize, fill: u32) -> Vec<u32> {
        let mut v = self.picks.pop().unwrap_or_default();
        v.clear();
        v.resize(len, fill);
        v
    }

    /// Gives a cost table back.
    pub(super) fn give_values(&mut self, v: Vec<f64>) {
        if v.capacity() > 0 && self.values.len() < SPARE_MAX {
            self.values.push(v);
        }
    }

    /// Gives a pick table back.
    pub(super) fn give_picks(&mut self, v: Vec<u32>) {
        if v.capacity() > 0 && self.picks.len() < SPARE_MAX {
            self.picks.push(v);
        }
    }
}
