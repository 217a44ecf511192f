//! Where the job's ranks sit and what their transfers cost (docs/model.md).
//!
//! Placement is Megatron's default rank order (`tp-cp-ep-dp-pp`, tensor rank fastest):
//! `rank = tp + t (cp + cp (dp + d pp))`; a node holds `node_gpus` consecutive ranks. A transfer between
//! two ranks of one node uses the NVLink figure (`link_gbps`), otherwise the inter-node
//! network (`inter_node_gbps`, per GPU and direction), at the GPU preset's `link` and `network`
//! efficiencies.
//!
//! Collectives are ring costs (docs/model.md). The data-parallel collectives (gradient
//! reduction, ZeRO's gathers) run over the `d x cp` ranks that hold copies of a stage, as
//! Megatron's `dp_cp` group does: for a given tensor and pipeline rank they are `t` apart.
//! A data-parallel group whose members share nodes runs hierarchically, as NCCL does: a reduce-scatter among the `k`
//! members of a node over NVLink, a ring over the `n` nodes on each member's own network
//! share (`1/k` of the bytes each, in parallel), and an all-gather inside the node:
//! all-reduce `2 (k-1)/k S / B_nvl + 2 (n-1)/n S/k / B_net`; a reduce-scatter or an
//! all-gather is half of it.

use crate::scenario::Scenario;

/// The job's layout on the machines: sizes, node width and link rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cluster {
    /// Tensor-parallel size `t`.
    pub t: u64,
    /// Context-parallel size `cp`.
    pub cp: u64,
    /// Data-parallel size `d`.
    pub d: u64,
    /// Pipeline stages `p`.
    pub p: u64,
    /// Consecutive ranks per node.
    pub node_gpus: u64,
    /// Achieved NVLink rate inside a node, bytes/s per direction.
    pub intra_bytes_per_s: f64,
    /// Achieved network rate between nodes, bytes/s per GPU and direction.
    pub inter_bytes_per_s: f64,
}

impl Cluster {
    /// The layout of `scenario`.
    pub fn of(scenario: &Scenario) -> Self {
        let par = &scenario.parallel;
        let gpu = &scenario.gpu;
        let eff = gpu.efficiency.link;
        let network = gpu.efficiency.network_link();
        Self {
            t: u64::from(par.tp.max(1)),
            cp: u64::from(par.cp.max(1)),
            d: u64::from(par.dp.max(1)),
            p: u64::from(par.pp.max(1)),
            node_gpus: u64::from(gpu.node_gpus.max(1)),
            intra_bytes_per_s: gpu.link_gbps * 1e9 * eff,
            inter_bytes_per_s: gpu.inter_node_gbps * 1e9 * network,
        }
    }

    /// Ranks that hold copies of one stage and share its data-parallel collectives, `d x cp`.
    pub fn shard_ranks(&self) -> u64 {
        self.d * self.cp
    }

    /// Megatron's global rank of (tensor rank, context rank, data rank, pipeline rank).
    pub fn rank(&self, tp: u64, cp: u64, dp: u64, pp: u64) -> u64 {
        tp + self.t * (cp + self.cp * (dp + self.d * pp))
    }

    /// Achieved rate of one step of the context-parallel ring (bytes/s, each rank sending to
    /// the next): the ring of a (tensor, data, pipeline) rank is the `cp` ranks `t` apart, a
    /// block of `t x cp` consecutive ranks, so it stays on NVLink when such blocks tile the
    /// nodes; otherwise some hop crosses nodes, and the ring's steps run at that hop's rate.
    pub fn cp_ring_bytes_per_s(&self) -> f64 {
        let block = self.t * self.cp;
        if block <= self.node_gpus && self.node_gpus.is_multiple_of(block) {
            self.intra_bytes_per_s
        } else {
            self.inter_bytes_per_s
        }
    }

    /// Node of a global rank.
    pub fn node_of(&self, rank: u64) -> u64 {
        rank / self.node_gpus
    }

    /// Whether some rank of pipeline stage `a` and its peer (same tensor and data rank) of
    /// stage `b` sit on different nodes: the transfers of a boundary run in lockstep, so
    /// the slowest sets its time.
    pub fn crosses_nodes(&self, a: u64, b: u64) -> bool {
        let width = self.t * self.cp * self.d;
        let shift = a.abs_diff(b) * width;
        if shift == 0 {
            return false;
        }
        if shift >= self.node_gpus {
            return true;
        }
        (0..self.t).any(|tp| {
            (0..self.cp).any(|cp| {
                (0..self.d).any(|dp| {
                    self.node_of(self.rank(tp, cp, dp, a)) != self.node_of(self.rank(tp, cp, dp, b))
                })
            })
        })
    }

    /// `(k, n)` of the data-parallel group (its `d x cp` ranks): members per node and nodes
    /// spanned. The group of a (tensor, pipeline) rank has stride `t`, so `node_gpus / t`
    /// members share a node.
    pub fn dp_shape(&self) -> (u64, u64) {
        let ranks = self.shard_ranks();
        let per_node = if self.t >= self.node_gpus {
            1
        } else {
            (self.node_gpus / self.t).clamp(1, ranks)
        };
        (per_node, ranks.div_ceil(per_node))
    }

    /// One half of a hierarchical all-reduce (a reduce-scatter, or an all-gather) of a
    /// tensor of `bytes` over the data-parallel group.
    pub fn dp_half_s(&self, bytes: f64) -> f64 {
        if self.shard_ranks() <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        let (k, n) = self.dp_shape();
        let (kf, nf) = (k as f64, n as f64);
        (kf - 1.0) / kf * bytes / self.intra_bytes_per_s
            + (nf - 1.0) / nf * (bytes / kf) / self.inter_bytes_per_s
    }

    /// Ring (hierarchical across nodes) all-reduce of `bytes` over the data-parallel group.
    pub fn dp_all_reduce_s(&self, bytes: f64) -> f64 {
        2.0 * self.dp_half_s(bytes)
    }

    /// The data-parallel collectives of a device holding `params` parameters, as
    /// `(grad_reduce_s, param_gather_s)`: the gradients (`grad_bytes` each) are all-reduced,
    /// or with the distributed optimizer reduce-scattered and the updated 2-byte parameters
    /// all-gathered. Both are proportional to `params` (the sweep's time bound relies on it).
    pub fn dp_collectives_s(
        &self,
        params: f64,
        grad_bytes: f64,
        distributed_optimizer: bool,
    ) -> (f64, f64) {
        if distributed_optimizer {
            (
                self.dp_half_s(params * grad_bytes),
                self.dp_half_s(params * 2.0),
            )
        } else {
            (self.dp_all_reduce_s(params * grad_bytes), 0.0)
        }
    }

    /// All-reduce of `bytes` between the first and the last pipeline stage (the tied
    /// embedding's gradient): a ring of two, `bytes / bw`.
    pub fn tied_all_reduce_s(&self, bytes: f64) -> f64 {
        if self.p <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        if self.crosses_nodes(0, self.p - 1) {
            bytes / self.inter_bytes_per_s
        } else {
            bytes / self.intra_bytes_per_s
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::scenario::default_scenario;

    fn cluster(t: u64, d: u64, p: u64) -> Cluster {
        Cluster {
            t,
            cp: 1,
            d,
            p,
            node_gpus: 8,
            intra_bytes_per_s: 200e9,
            inter_bytes_per_s: 20e9,
        }
    }

    #[test]
    fn ranks_follow_megatron_order() {
        let c = cluster(2, 4, 3);
        assert_eq!(c.rank(0, 0, 0, 0), 0);
        assert_eq!(c.rank(1, 0, 0, 0), 1);
        assert_eq!(c.rank(0, 0, 1, 0), 2);
        assert_eq!(c.rank(0, 0, 0, 1), 8);
        assert_eq!(c.rank(1, 0, 3, 2), 1 + 2 * (3 + 4 * 2));
        // With context parallelism the cp rank sits between tensor and data (tp-cp-dp-pp):
        // t 2, cp 2, d 4, p 3: rank = tp + 2 (cp + 2 (dp + 4 pp)).
        let c = Cluster {
            cp: 2,
            ..cluster(2, 4, 3)
        };
        assert_eq!(c.rank(0, 1, 0, 0), 2);
        assert_eq!(c.rank(0, 0, 1, 0), 4);
        assert_eq!(c.rank(0, 0, 0, 1), 16);
        assert_eq!(c.rank(1, 1, 3, 2), 1 + 2 * (1 + 2 * (3 + 4 * 2)));
        assert_eq!(c.shard_ranks(), 8);
    }

    #[test]
    fn context_parallel_rings_and_groups_follow_the_rank_order() {
        // t 4, cp 2: a ring is 8 consecutive ranks, one node: NVLink.
        let c = Cluster {
            cp: 2,
            ..cluster(4, 2, 2)
        };
        assert_eq!(c.cp_ring_bytes_per_s(), 200e9);
        // t 8, cp 2: the two ranks of a ring are on two nodes.
        let c = Cluster {
            cp: 2,
            ..cluster(8, 2, 2)
        };
        assert_eq!(c.cp_ring_bytes_per_s(), 20e9);
        // t 2, cp 3 on nodes of 8: 6-rank blocks straddle node boundaries (ranks 6..12).
        let c = Cluster {
            cp: 3,
            ..cluster(2, 2, 2)
        };
        assert_eq!(c.cp_ring_bytes_per_s(), 20e9);
        // The data-parallel group is d x cp ranks t apart: t 2, cp 2, d 4 -> 8 ranks, 4 per
        // node on 2 nodes, as a t 2, d 8 job's group.
        let c = Cluster {
            cp: 2,
            ..cluster(2, 4, 1)
        };
        assert_eq!(c.dp_shape(), (4, 2));
        assert!((c.dp_all_reduce_s(1e9) - 0.020).abs() < 1e-12);
        // Stage boundaries move by t x cp x d ranks: t 2, cp 2, d 2 -> 8, a node per stage.
        let c = Cluster {
            cp: 2,
            ..cluster(2, 2, 4)
        };
        assert!(c.crosses_nodes(0, 1));
        let c = Cluster {
            cp: 2,
            ..cluster(2, 1, 4)
        };
        assert!(!c.crosses_nodes(0, 1));
        assert!(c.crosses_nodes(1, 2));
    }

    #[test]
    fn stage_transfers_cross_nodes_where_the_ranks_do() {
        // t 8: a stage fills a node; every boundary crosses.
        let c = cluster(8, 1, 8);
        assert!(c.crosses_nodes(0, 1));
        // t 2, d 1: four stages per node; 3 -> 4 crosses, 0 -> 1 does not.
        let c = cluster(2, 1, 8);
        assert!(!c.crosses_nodes(0, 1));
        assert!(c.crosses_nodes(3, 4));
        // t 1, d 3: stage 2 spans ranks 6..9; its rank 6 -> 9 stays, 7 -> 10 crosses.
        let c = cluster(1, 3, 4);
        assert!(c.crosses_nodes(2, 3));
        assert!(!c.crosses_nodes(0, 1));
    }

    #[test]
    fn data_parallel_collectives_by_hand() {
        // t 8, d 4: one member per node, a flat ring over 4 nodes.
        // All-reduce of 1e9 bytes: 2 * 3/4 * 1e9 / 20e9 = 0.075 s.
        let c = cluster(8, 4, 1);
        assert_eq!(c.dp_shape(), (1, 4));
        assert!((c.dp_all_reduce_s(1e9) - 0.075).abs() < 1e-12);
        assert!((c.dp_half_s(1e9) - 0.0375).abs() < 1e-12);
        // t 1, d 8: one node, NVLink ring: 2 * 7/8 * 1e9 / 200e9 = 8.75 ms.
        let c = cluster(1, 8, 1);
        assert_eq!(c.dp_shape(), (8, 1));
        assert!((c.dp_all_reduce_s(1e9) - 8.75e-3).abs() < 1e-12);
        // t 2, d 8: 4 members per node over 2 nodes: 2 (3/4 * 1e9 / 200e9 + 1/2 * 0.25e9 / 20e9)
        // = 2 (3.75 ms + 6.25 ms) = 20 ms.
        let c = cluster(2, 8, 1);
        assert_eq!(c.dp_shape(), (4, 2));
        assert!((c.dp_all_reduce_s(1e9) - 0.020).abs() < 1e-12);
        // d 1: nothing to reduce.
        assert_eq!(cluster(8, 1, 8).dp_all_reduce_s(1e9), 0.0);
    }

    #[test]
    fn tied_embedding_pair() {
        // p 8, t 8: first and last stage on different nodes: 1e9 / 20e9.
        assert!((cluster(8, 1, 8).tied_all_reduce_s(1e9) - 0.05).abs() < 1e-12);
        // p 2, t 2: both on one node.
        assert!((cluster(2, 1, 2).tied_all_reduce_s(1e9) - 0.005).abs() < 1e-12);
        assert_eq!(cluster(8, 1, 1).tied_all_reduce_s(1e9), 0.0);
    }

    #[test]
    fn from_the_default_scenario() {
        let c = Cluster::of(&default_scenario());
        assert_eq!((c.t, c.cp, c.d, c.p, c.node_gpus), (8, 1, 1, 8, 8));
        assert!((c.intra_bytes_per_s - 300e9 * 0.75).abs() < 1.0);
        assert!((c.inter_bytes_per_s - 25e9 * 0.75).abs() < 1.0);
    }

    /// The network runs at the preset's `network` fraction, NVLink at its `link` fraction, and
    /// a preset without `network` takes `link` for both (the A100s' calibration).
    #[test]
    fn the_network_has_its_own_efficiency() {
        let mut s = default_scenario();
        let (nvlink, network) = (s.gpu.link_gbps * 1e9, s.gpu.inter_node_gbps * 1e9);
        s.gpu.efficiency.link = 0.8;
        s.gpu.efficiency.network = None;
        let c = Cluster::of(&s);
        assert!((c.inter_bytes_per_s - 0.8 * network).abs() < 1.0);
        s.gpu.efficiency.network = Some(0.94);
        let c = Cluster::of(&s);
        assert!((c.intra_bytes_per_s - 0.8 * nvlink).abs() < 1.0);
        assert!((c.inter_bytes_per_s - 0.94 * network).abs() < 1.0);
    }
}
