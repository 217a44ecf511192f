//! Numbers of `simulate`'s text report: three decimals in the ordinary range, scientific
//! notation for very large or very small magnitudes (a cost of 1e300 would otherwise print as
//! a 300-digit integer).

/// `x` with three decimals, or as `1.234e300` when it is at least 1e9 or below 1e-3 (not 0).
pub fn three_places(x: f64) -> String {
    let a = x.abs();
    if a.is_finite() && (a >= 1e9 || (a > 0.0 && a < 1e-3)) {
        format!("{x:.3e}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_magnitudes_print_in_scientific_notation() {
        assert_eq!(three_places(56.0), "56.000");
        assert_eq!(three_places(0.0), "0.000");
        assert_eq!(three_places(3.3e300), "3.300e300");
        assert_eq!(three_places(2.5e-7), "2.500e-7");
        assert_eq!(three_places(123_456_789.0), "123456789.000");
    }
}
