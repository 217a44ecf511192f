//! Units shared by every part of the house: memory is counted in bytes (`u64`) and shown in
//! GiB (2^30 bytes), GPU memory is given in GiB as the device reports it.

/// Bytes per GiB, as an integer (for turning a GiB figure into bytes).
pub const GIB_BYTES: u64 = 1 << 30;

/// Bytes per GiB, as a float (for showing bytes in GiB: `bytes as f64 / GIB`).
pub const GIB: f64 = GIB_BYTES as f64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gib_is_two_to_the_thirty_bytes() {
        assert_eq!(GIB_BYTES, 1_073_741_824);
        assert_eq!(GIB, 1_073_741_824.0);
    }
}
