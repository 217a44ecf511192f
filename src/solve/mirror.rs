//! The gradient sum of the two weight copies of the two-copy schedules (DualPipe, Chimera;
//! docs/model.md). Device `r` holds stage `r` and stage `p - 1 - r`, its mirror `p - 1 - r`
//! the same two stages the other way round: every stage has two copies, each trained on half
//! the micro-batches, and before the optimizer step each copy's gradient must be the sum of
//! both. DualPipe's own example adds each copy's gradient to its mirror's, and Chimera
//! all-reduces the two replicas' gradients.
//!
//! Cost: each stage's gradient is reduced over the `2 x D` ranks that hold it (`D` the
//! ranks of its data-parallel group). Done as the data-parallel reduction (over `D`, already
//! charged) followed by an exchange of each rank's `1/D` share with its mirror (a ring of
//! two: `S / D / bw`), the mirror adds `S / (D bw)` to the device's gradient reduction, `S` the
//! bytes of the device's gradients (both copies), `bw` the link between the two mirror ranks
//! (NVLink when the two stages share a node, the network otherwise). At `D = 1` this is the
//! whole reduction: without it the copies would drift apart.

use crate::anatomy::cluster::Cluster;

/// Seconds the exchange with the mirror device adds to the gradient reduction of `device`
/// (of `p`) whose gradients are `dense_bytes` (reduced over the `cluster`'s data-parallel
/// group) and `expert_bytes` (routed experts, reduced over `expert_cluster`'s group).
pub(crate) fn mirror_reduce_s(
    cluster: &Cluster,
    expert_cluster: &Cluster,
    device: u64,
    dense_bytes: f64,
    expert_bytes: f64,
) -> f64 {
    let p = cluster.p;
    let mirror = p.saturating_sub(1).saturating_sub(device);
    if p < 2 || mirror == device {
        return 0.0;
    }
    let shard = dense_bytes / cluster.shard_ranks().max(1) as f64
        + expert_bytes / expert_cluster.shard_ranks().max(1) as f64;
    let bw = if cluster.crosses_nodes(device, mirror) {
        cluster.inter_bytes_per_s
    } else {
        cluster.intra_bytes_per_s
    };
    (shard / bw).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(d: u64, p: u64) -> Cluster {
        Cluster {
            t: 1,
            cp: 1,
            d,
            p,
            node_gpus: 8,
            intra_bytes_per_s: 100e9,
            inter_bytes_per_s: 10e9,
        }
    }

    /// At d = 1 the whole gradient crosses to the mirror once; d copies share it.
    #[test]
    fn the_mirror_exchange_is_the_device_gradient_over_the_link_and_the_group() {
        // p 4 on one node: device 0's mirror is device 3, on NVLink.
        let c = cluster(1, 4);
        assert!((mirror_reduce_s(&c, &c, 0, 1e9, 0.0) - 1e9 / 100e9).abs() < 1e-15);
        // p 16, d 1: device 0 and 15 are on different nodes.
        let c = cluster(1, 16);
        assert!((mirror_reduce_s(&c, &c, 0, 1e9, 0.0) - 1e9 / 10e9).abs() < 1e-15);
        // d 4: each rank exchanges its quarter.
        let c = cluster(4, 16);
        assert!((mirror_reduce_s(&c, &c, 2, 4e9, 0.0) - 1e9 / 10e9).abs() < 1e-15);
        // One device has no mirror.
        let c = cluster(1, 1);
        assert_eq!(mirror_reduce_s(&c, &c, 0, 1e9, 0.0), 0.0);
    }
}
