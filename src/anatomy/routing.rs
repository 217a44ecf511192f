//! The busiest expert-parallel rank's share of routed tokens under imbalanced routing
//! (docs/model.md, "Routing imbalance").
//!
//! `--routing-imbalance X` is the busiest *expert*'s tokens over the mean expert's. A rank
//! holds `L = E / ep` experts, so what it computes and receives depends on how many of them
//! it averages over: the busiest rank is taken to hold the busiest expert, and its other
//! `L - 1` experts get the mean of the remaining experts' tokens. The total is fixed (every
//! token goes to `k` experts: `E` mean loads in all), so the others share `E - X` mean loads
//! over `E - 1` experts, and the rank gets
//!
//! ```text
//! R = (X + (L - 1) (E - X) / (E - 1)) / L      of the mean rank's load
//! ```
//!
//! `R = X` at `ep = E` (one expert a rank), `R = 1` at `ep = 1` (one rank holds every expert
//! and all the tokens, however they are routed), and `(X + L - 1) / L` or a little less
//! between.

/// The busiest rank's routed load over the mean rank's, `R` above, for a busiest-expert
/// imbalance `imbalance` (`X >= 1`) with `experts` experts over `ep` ranks.
pub fn busiest_rank_load(imbalance: f64, experts: f64, ep: f64) -> f64 {
    let x = imbalance.max(1.0).min(experts.max(1.0));
    let local = (experts / ep.max(1.0)).max(1.0);
    if experts <= 1.0 || local <= 1.0 {
        return x;
    }
    let others = (experts - x) / (experts - 1.0);
    (x + (local - 1.0) * others) / local
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rank_holding_every_expert_is_never_imbalanced() {
        for x in [1.0, 1.5, 3.0, 64.0] {
            assert!((busiest_rank_load(x, 256.0, 1.0) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn one_expert_a_rank_carries_the_whole_imbalance() {
        assert_eq!(busiest_rank_load(3.0, 256.0, 256.0), 3.0);
        assert_eq!(busiest_rank_load(1.0, 8.0, 8.0), 1.0);
    }

    #[test]
    fn two_ranks_of_many_experts_average_the_busiest_one_out() {
        // 256 experts over 2 ranks, busiest expert 3x: (3 + 127 x 253/255) / 128.
        let r = busiest_rank_load(3.0, 256.0, 2.0);
        assert!((r - (3.0 + 127.0 * 253.0 / 255.0) / 128.0).abs() < 1e-12);
        assert!(r > 1.0 && r < 1.01);
        // Never more than the conservative (X + L - 1) / L.
        for ep in [1.0, 2.0, 4.0, 8.0, 32.0, 64.0, 256.0] {
            let l = 256.0 / ep;
            assert!(busiest_rank_load(3.0, 256.0, ep) <= (3.0 + l - 1.0) / l + 1e-12);
        }
    }
}
