//! Where an expert-parallel group's ranks sit and what its all-to-alls cost (docs/model.md,
//! "Expert parallelism").
//!
//! Megatron-Core folds the expert layout into each stage's `t x cp x d` ranks (a block of
//! consecutive global ranks): the expert rank inside the stage is
//! `etp_rank + etp (ep_rank + ep edp_rank)`, so an expert-parallel group is `ep` ranks `etp`
//! apart, and an expert tensor-parallel group `etp` consecutive ranks. With `node_gpus`
//! consecutive ranks per node (the NVLink domain: 8 on a DGX, 72 on a GB200 NVL72),
//! `node_gpus / etp` members of an EP group share a node (all of them when they fit), as the
//! data-parallel groups' shape is taken (nodes tiled by the group, as with power-of-two
//! layouts).
//!
//! An all-to-all in which every rank sends `S` bytes spread evenly over the group (balanced
//! routing) keeps `S/ep` on the rank, sends `(k-1)/ep` of it over NVLink to the `k - 1` other
//! members of its node and `(ep-k)/ep` over the network; the two links run at once, so it
//! takes the longer of the two.

use super::cluster::Cluster;
use crate::scenario::ExpertGroups;

impl Cluster {
    /// The layout of the routed experts' data-parallel group `edp` (the ranks holding the
    /// same experts, `ep x etp` apart inside the stage's `t x cp x d`), shaped as a
    /// data-parallel group so that its gradient reduction and parameter gather are costed by
    /// the same rules.
    pub fn expert_dp(&self, ep: u32, etp: u32) -> Cluster {
        let stride = (u64::from(ep.max(1)) * u64::from(etp.max(1))).max(1);
        let stage = self.t * self.cp * self.d;
        Cluster {
            t: stride,
            cp: 1,
            d: (stage / stride).max(1),
            ..*self
        }
    }

    /// Members of an expert-parallel group of `ep` ranks `etp` apart that share a node.
    pub fn ep_members_per_node(&self, ep: u64, etp: u64) -> u64 {
        if etp >= self.node_gpus {
            1
        } else {
            (self.node_gpus / etp.max(1)).clamp(1, ep.max(1))
        }
    }

    /// Time of one all-to-all over an expert-parallel group of `ep` ranks `etp` apart in
    /// which each rank sends (and receives) `bytes` spread evenly over the group.
    pub fn ep_all_to_all_s(&self, bytes: f64, ep: u64, etp: u64) -> f64 {
        if ep <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        let k = self.ep_members_per_node(ep, etp) as f64;
        let n = ep as f64;
        let intra = (k - 1.0) / n * bytes / self.intra_bytes_per_s;
        let inter = (n - k) / n * bytes / self.inter_bytes_per_s;
        intra.max(inter)
    }

    /// Seconds per byte of an all-to-all over an expert-parallel group of `ep` ranks `etp`
    /// apart, in which each rank sends `top_k` copies of each of its tokens to the experts
    /// routed to (balanced routing), as DeepEP runs it: a token crosses the network once per
    /// other node among its experts' nodes and is forwarded there over NVLink; the copies for
    /// other GPUs of a node ride NVLink. Both links run at once. Per byte of the `k` copies.
    /// With balanced load every node is hit equally often, so of the `H` nodes a token hits
    /// (see [`nodes_hit`]) the share `(N - 1)/N` is remote.
    pub fn ep_deepep_s_per_byte(
        &self,
        ep: u64,
        etp: u64,
        top_k: f64,
        groups: Option<ExpertGroups>,
    ) -> f64 {
        if ep <= 1 || top_k <= 0.0 {
            return 0.0;
        }
        let per_node = self.ep_members_per_node(ep, etp) as f64;
        let nodes = (ep as f64 / per_node).max(1.0);
        let hit = nodes_hit(nodes, top_k, groups);
        let remote = hit * (nodes - 1.0) / nodes;
        let network = remote / top_k / self.inter_bytes_per_s;
        let nvlink = (per_node - 1.0) / per_node / self.intra_bytes_per_s;
        network.max(nvlink)
    }

    /// Ring all-gather (or reduce-scatter) whose gathered tensor is `bytes` over an expert
    /// tensor-parallel group of `etp` consecutive ranks: `(etp-1)/etp bytes`, over NVLink
    /// when the group tiles the nodes, else at the network's rate.
    pub fn etp_gather_s(&self, bytes: f64, etp: u64) -> f64 {
        if etp <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        let rate = if etp <= self.node_gpus && self.node_gpus.is_multiple_of(etp) {
            self.intra_bytes_per_s
        } else {
            self.inter_bytes_per_s
        };
        (etp as f64 - 1.0) / etp as f64 * bytes / rate
    }
}

/// Expected number of distinct nodes, of the `nodes` an expert-parallel group spans, that
/// hold at least one of a token's `top_k` routed experts, with experts spread evenly over
/// the nodes and chosen evenly (balanced routing): `R (1 - (1 - 1/R)^k)` over the `R` nodes
/// a token can reach. Without grouping `R` is every node. With group-limited routing
/// (DeepSeek-V3's `topk_group` of `n_group`) the groups are consecutive experts, so a
/// group spans `N/G` nodes when there are at least as many nodes as groups, and a token
/// reaches `g N / G` of them (on DeepSeek-V3's 8-node EP 64: 4 nodes, the paper's
/// "each token is sent to at most 4 nodes"). With fewer nodes than groups a token's `g`
/// groups (drawn without repeats) fall on `N (1 - C(G - G/N, g) / C(G, g))` distinct nodes
/// on average, which it then reaches.
pub fn nodes_hit(nodes: f64, top_k: f64, groups: Option<ExpertGroups>) -> f64 {
    let reachable = match groups {
        None => nodes,
        Some(g) => {
            let (big_g, small_g) = (g.expert_groups as f64, g.groups_per_token as f64);
            if nodes >= big_g {
                small_g * nodes / big_g
            } else {
                // Probability that a node holds none of the chosen groups: choose all g of
                // them among the G - G/N groups elsewhere.
                let elsewhere = big_g - big_g / nodes;
                let mut miss = 1.0;
                let mut i = 0.0;
                while i < small_g {
                    miss *= ((elsewhere - i) / (big_g - i)).max(0.0);
                    i += 1.0;
                }
                nodes * (1.0 - miss)
            }
        }
    }
    .clamp(1.0, nodes);
    reachable * (1.0 - (1.0 - 1.0 / reachable).powf(top_k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(node_gpus: u64) -> Cluster {
        Cluster {
            t: 1,
            cp: 1,
            d: 64,
            p: 1,
            node_gpus,
            intra_bytes_per_s: 400e9,
            inter_bytes_per_s: 40e9,
        }
    }

    #[test]
    fn an_ep_group_inside_a_node_uses_nvlink_only() {
        let c = cluster(8);
        assert_eq!(c.ep_members_per_node(8, 1), 8);
        // 7/8 of 1 GB leaves the rank, all over NVLink.
        let s = c.ep_all_to_all_s(1e9, 8, 1);
        assert!((s - 7.0 / 8.0 * 1e9 / 400e9).abs() < 1e-15);
        assert_eq!(c.ep_all_to_all_s(1e9, 1, 1), 0.0);
    }

    #[test]
    fn an_ep_group_over_nodes_waits_for_the_network() {
        let c = cluster(8);
        // EP64 over 8 nodes: 8 members a node, 56/64 of the bytes over the network.
        assert_eq!(c.ep_members_per_node(64, 1), 8);
        let s = c.ep_all_to_all_s(1e9, 64, 1);
        assert!((s - 56.0 / 64.0 * 1e9 / 40e9).abs() < 1e-15);
        // etp 2: the group's members are 2 apart, 4 share a node.
        assert_eq!(c.ep_members_per_node(8, 2), 4);
        let s = c.ep_all_to_all_s(1e9, 8, 2);
        assert!((s - 4.0 / 8.0 * 1e9 / 40e9).abs() < 1e-15);
        // An NVL72 domain holds EP64 whole.
        let nvl = cluster(72);
        assert_eq!(nvl.ep_members_per_node(64, 1), 64);
        assert!((nvl.ep_all_to_all_s(1e9, 64, 1) - 63.0 / 64.0 * 1e9 / 400e9).abs() < 1e-15);
    }

    #[test]
    fn deepep_crosses_the_network_once_per_node_hit() {
        let c = cluster(8);
        // EP16 over 2 nodes, top-8: a token hits the other node with 1 - (1/2)^8 odds, so
        // 0.996 of its row (not 8 x 8/16 = 4 copies) crosses the network.
        let want_net = 2.0 * (1.0 - 0.5f64.powi(8)) * 0.5 / 8.0 / 40e9;
        let want_nv = 7.0 / 8.0 / 400e9;
        let got = c.ep_deepep_s_per_byte(16, 1, 8.0, None);
        assert!((got - want_net.max(want_nv)).abs() < 1e-18, "{got}");
        assert!(got < c.ep_all_to_all_s(1.0, 16, 1) / 3.0);
        // Inside one node it is the plain all-to-all.
        let one = c.ep_deepep_s_per_byte(8, 1, 8.0, None);
        assert!((one - c.ep_all_to_all_s(1.0, 8, 1)).abs() < 1e-18);
        assert_eq!(c.ep_deepep_s_per_byte(1, 1, 8.0, None), 0.0);
    }

    #[test]
    fn expert_tensor_parallel_gathers_ride_nvlink_when_they_tile_a_node() {
        let c = cluster(8);
        assert!((c.etp_gather_s(1e9, 4) - 0.75 * 1e9 / 400e9).abs() < 1e-15);
        assert!((c.etp_gather_s(1e9, 16) - 15.0 / 16.0 * 1e9 / 40e9).abs() < 1e-15);
        assert_eq!(c.etp_gather_s(1e9, 1), 0.0);
    }

    fn groups(expert_groups: u64, groups_per_token: u64) -> Option<ExpertGroups> {
        Some(ExpertGroups {
            expert_groups,
            groups_per_token,
        })
    }

    #[test]
    fn group_limited_routing_keeps_deepseek_tokens_on_four_of_eight_nodes() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // DeepSeek-V3 (8 groups, 4 per token, top-8) on EP 64 over 8 nodes: one group a
        // node, so a token reaches 4 nodes and hits 4 (1 - (3/4)^8) of them, where
        // ungrouped routing hits 8 (1 - (7/8)^8).
        let dsv3 = groups(8, 4);
        assert!(close(
            nodes_hit(8.0, 8.0, dsv3),
            4.0 * (1.0 - 0.75f64.powi(8))
        ));
        assert!(close(
            nodes_hit(8.0, 8.0, None),
            8.0 * (1.0 - 0.875f64.powi(8))
        ));
        // Over 16 nodes each group spans 2 nodes: 8 reachable.
        assert!(close(nodes_hit(16.0, 8.0, dsv3), nodes_hit(8.0, 8.0, None)));
        // Over 4 nodes two groups share a node: a node holds none of the 4 chosen groups
        // with odds C(6,4)/C(8,4) = 15/70.
        let reach: f64 = 4.0 * (1.0 - 15.0 / 70.0);
        let want = reach * (1.0 - (1.0 - 1.0 / reach).powi(8));
        assert!(close(nodes_hit(4.0, 8.0, dsv3), want));
        assert!(nodes_hit(4.0, 8.0, dsv3) < nodes_hit(4.0, 8.0, None));
        // Choosing from every group is no limit at all, for any node count.
        for n in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0] {
            assert!(close(
                nodes_hit(n, 8.0, groups(8, 8)),
                nodes_hit(n, 8.0, None)
            ));
        }
        // One node: nothing to limit.
        assert!(close(nodes_hit(1.0, 8.0, dsv3), 1.0));
    }

    #[test]
    fn deepep_sends_less_over_the_network_under_group_limited_routing() {
        let c = cluster(8);
        let free = c.ep_deepep_s_per_byte(64, 1, 8.0, None);
        let limited = c.ep_deepep_s_per_byte(64, 1, 8.0, groups(8, 4));
        let ratio = (4.0 * (1.0 - 0.75f64.powi(8))) / (8.0 * (1.0 - 0.875f64.powi(8)));
        assert!((limited / free - ratio).abs() < 1e-12, "{limited} / {free}");
        // Inside one node the grouping changes nothing.
        let one = c.ep_deepep_s_per_byte(8, 1, 8.0, groups(8, 4));
        assert_eq!(one, c.ep_deepep_s_per_byte(8, 1, 8.0, None));
    }
}
