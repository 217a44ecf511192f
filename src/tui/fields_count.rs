//! The count fields (p, t, d, cp, m, b, s, chunks): their ranges, values and setters, so a
//! step stops at a range's end and a typed number is checked against it.

use crate::scenario::Scenario;

use super::fields::Field;
use super::fields_step::to_u32;

/// The range of a count field, from the one table of ranges (so the UI words a bad value as
/// the command line does: "a whole number from 1 to 1048576").
pub(super) fn count_range(field: Field) -> Option<crate::scenario::ranges::Range> {
    use crate::scenario::ranges;
    Some(match field {
        Field::Stages => ranges::PP,
        Field::Tp => ranges::TP,
        Field::Dp => ranges::DP,
        Field::Cp => ranges::CP,
        Field::MicroBatches => ranges::MICRO_BATCHES,
        Field::MicroBatchSize => ranges::MICRO_BATCH_SIZE,
        Field::SeqLen => ranges::SEQ_LEN,
        Field::Chunks => ranges::CHUNKS,
        _ => return None,
    })
}

/// The value of a count field (those with a [`count_range`]).
pub(super) fn count_value(sc: &Scenario, field: Field) -> Option<u64> {
    Some(match field {
        Field::Stages => u64::from(sc.parallel.pp),
        Field::Tp => u64::from(sc.parallel.tp),
        Field::Dp => u64::from(sc.parallel.dp),
        Field::Cp => u64::from(sc.parallel.cp),
        Field::MicroBatches => u64::from(sc.batch.micro_batches),
        Field::MicroBatchSize => sc.batch.micro_batch_size,
        Field::SeqLen => sc.batch.seq_len,
        Field::Chunks => u64::from(sc.parallel.chunks),
        _ => return None,
    })
}

/// Sets a count field to `n` (within its range: [`count_range`] checked by the caller).
pub(super) fn set_count(sc: &mut Scenario, field: Field, n: u64) {
    let n32 = to_u32(n);
    match field {
        Field::Stages => sc.parallel.pp = n32,
        Field::Tp => sc.parallel.tp = n32,
        Field::Dp => sc.parallel.dp = n32,
        Field::Cp => sc.parallel.cp = n32,
        Field::MicroBatches => sc.batch.micro_batches = n32,
        Field::MicroBatchSize => sc.batch.micro_batch_size = n,
        Field::SeqLen => sc.batch.seq_len = n,
        Field::Chunks => sc.parallel.chunks = n32,
        _ => {}
    }
}
