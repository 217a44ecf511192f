//! The least, over every way of handing a chain's units (layers or blocks) to the devices of a
//! pipeline, of the busiest device's cost: what turns a per-device lower bound that only grows
//! with the units a device holds into a lower bound of the whole iteration, whatever split the
//! partition search then picks.
//!
//! When every device's cost never falls as it takes one more unit, handing out the units one at
//! a time, each to the device whose cost after taking it is least, ends at the least largest
//! cost of every split (the classic greedy for min-max allocation with nondecreasing costs: an
//! exchange argument shows no split can do better at any step).

/// The least, over every split of `units` units over `devices` devices (a device may get none),
/// of the largest `cost(d, u)` (device `d` holding `u` units), for costs that never fall as `u`
/// grows. Infinite when every split leaves some device at an infinite cost. `cost` is asked
/// about `units + devices` times at most.
pub(crate) fn least_largest(
    devices: usize,
    units: u32,
    cost: &mut dyn FnMut(usize, u32) -> f64,
) -> f64 {
    if devices == 0 {
        return if units == 0 { 0.0 } else { f64::INFINITY };
    }
    let mut held = vec![0u32; devices];
    let mut now: Vec<f64> = (0..devices).map(|d| cost(d, 0)).collect();
    let mut next: Vec<f64> = (0..devices).map(|d| cost(d, 1)).collect();
    for _ in 0..units {
        let Some(d) = (0..devices).min_by(|&a, &b| next[a].total_cmp(&next[b])) else {
            break;
        };
        held[d] += 1;
        now[d] = next[d];
        if !now[d].is_finite() {
            return f64::INFINITY;
        }
        next[d] = cost(d, held[d] + 1);
    }
    now.iter().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split of `units` over `devices` (a device may get none).
    fn splits(devices: usize, units: u32) -> Vec<Vec<u32>> {
        if devices == 1 {
            return vec![vec![units]];
        }
        let mut out = Vec::new();
        for first in 0..=units {
            for mut rest in splits(devices - 1, units - first) {
                rest.insert(0, first);
                out.push(rest);
            }
        }
        out
    }

    /// On random nondecreasing costs (some infinite past a point, as a stage that no longer
    /// fits), the greedy answer equals the least largest cost over every split.
    #[test]
    fn the_greedy_matches_every_split() {
        let mut next = crate::solve::testcase::rng(7);
        for _ in 0..300 {
            let devices = 1 + next(4) as usize;
            let units = next(9) as u32;
            let table: Vec<Vec<f64>> = (0..devices)
                .map(|_| {
                    let cap = next(12) as u32;
                    let mut v = next(3) as f64;
                    (0..=units)
                        .map(|u| {
                            v += next(5) as f64;
                            if u > cap { f64::INFINITY } else { v }
                        })
                        .collect()
                })
                .collect();
            let want = splits(devices, units)
                .iter()
                .map(|s| {
                    s.iter()
                        .enumerate()
                        .map(|(d, &u)| table[d][u as usize])
                        .fold(0.0, f64::max)
                })
                .fold(f64::INFINITY, f64::min);
            let got = least_largest(devices, units, &mut |d, u| {
                table[d].get(u as usize).copied().unwrap_or(f64::INFINITY)
            });
            assert_eq!(got, want, "{table:?}");
        }
    }
}
