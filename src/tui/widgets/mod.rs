//! Reusable widgets that take plain data (not the app state) and write cells straight into
//! the buffer: the Gantt (with its overlapped pairs) and the stacked memory bar.

pub mod gantt;
pub mod gantt_pairs;
pub mod stacked_bar;
