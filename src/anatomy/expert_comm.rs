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

    /// Seconds per byte of DeepEP's dispatch and combine over an expert-parallel group of
    /// `ep` ranks `etp` apart, per byte of the `top_k` copies of each token that Megatron's
    /// plain all-to-all would send (balanced routing), at the rates DeepEP's normal kernels
    /// achieve ([`DEEPEP_NVLINK`], [`DEEPEP_RDMA`]). DeepEP sends a token once per node
    /// among its experts' nodes and forwards it there over NVLink once per rank among its
    /// experts' ranks, and counts its published rates the same way: the rows a rank
    /// receives over NVLink (a token once per rank it reaches, its own rank included) and
    /// the rows it sends over RDMA (once per node it reaches, its own node included). So a
    /// token costs `ranks_hit / rate_nvlink` and `nodes_hit / rate_rdma` (see
    /// [`nodes_hit`]; group-limited routing narrows the nodes), the two links at once.
    /// `link_bytes_per_s` and `nic_bytes_per_s` are the GPU's NVLink and network line
    /// rates per direction, which the measured fractions scale.
    pub fn ep_deepep_s_per_byte(
        &self,
        ep: u64,
        etp: u64,
        top_k: f64,
        groups: Option<ExpertGroups>,
        link_bytes_per_s: f64,
        nic_bytes_per_s: f64,
    ) -> DeepEpRates {
        if ep <= 1 || top_k <= 0.0 || link_bytes_per_s <= 0.0 || nic_bytes_per_s <= 0.0 {
            return DeepEpRates::default();
        }
        let per_node = self.ep_members_per_node(ep, etp) as f64;
        let nodes = (ep as f64 / per_node).max(1.0);
        let ranks = nodes_hit(ep as f64, top_k, None);
        let node_hits = nodes_hit(nodes, top_k, groups);
        let rdma = deepep_rdma_fraction(nodes);
        let per_byte = |nvlink_fraction: f64, rdma_fraction: f64| {
            let nvlink = ranks / top_k / (nvlink_fraction * link_bytes_per_s);
            let network = if nodes > 1.0 {
                node_hits / top_k / (rdma_fraction * nic_bytes_per_s)
            } else {
                0.0
            };
            nvlink.max(network)
        };
        DeepEpRates {
            dispatch_s_per_byte: per_byte(DEEPEP_NVLINK.dispatch, rdma.dispatch),
            combine_s_per_byte: per_byte(DEEPEP_NVLINK.combine, rdma.combine),
        }
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

/// Seconds per byte of DeepEP's dispatch and of its combine (per byte of the `k` copies of
/// each token a plain all-to-all would send).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DeepEpRates {
    /// The dispatch (tokens to their experts).
    pub dispatch_s_per_byte: f64,
    /// The combine (the experts' outputs back).
    pub combine_s_per_byte: f64,
}

/// A measured rate of DeepEP's dispatch and combine, as a fraction of the link's line rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeepEpFraction {
    /// The dispatch's.
    pub dispatch: f64,
    /// The combine's.
    pub combine: f64,
}

/// DeepEP's normal kernels inside one NVLink domain, measured on 8 H100 SXM (20
/// multiprocessors, 4096 tokens of hidden 7168 a rank, top-8 of 32 experts): dispatch 1.0045
/// ms at 328.97 GB/s, combine 1.1552 ms at 287.14 GB/s, counting the rows a rank receives
/// (tile-ai/tilescale, `examples/distributed/deepep/README.md`, DeepEP beside TileScale's
/// port): 0.731 and 0.638 of NVLink 4's 450 GB/s a direction. DeepEP's own README
/// measures 153 and 158 GB/s on H800s (0.96 and 0.99 of their ~160 GB/s): a faster link
/// is not filled by the same 20 multiprocessors, so the H100's fractions are taken for
/// every GPU.
pub const DEEPEP_NVLINK: DeepEpFraction = DeepEpFraction {
    dispatch: 328.97 / 450.0,
    combine: 287.14 / 450.0,
};

/// DeepEP's normal kernels across nodes (DeepEP's README, "Normal kernels", H800s with one
/// ConnectX-7 400 Gb/s NIC, ~50 GB/s, a GPU; DeepSeek-V3's settings: 4096 tokens of hidden
/// 7168, top-8 of 256 experts in 4 of 8 groups), counting each token once per node it
/// reaches, its own included: EP 16 (2 nodes) dispatch 43 GB/s and combine 43, EP 32 (4
/// nodes) 58 and 57, EP 64 (8 nodes) 51 and 50; as fractions of the NIC's 50 GB/s, by the
/// nodes the group spans (the first row at or below; EP 64's beyond 8 nodes).
pub const DEEPEP_RDMA: [(f64, DeepEpFraction); 3] = [
    (
        2.0,
        DeepEpFraction {
            dispatch: 43.0 / 50.0,
            combine: 43.0 / 50.0,
        },
    ),
    (
        4.0,
        DeepEpFraction {
            dispatch: 58.0 / 50.0,
            combine: 57.0 / 50.0,
        },
    ),
    (
        8.0,
        DeepEpFraction {
            dispatch: 51.0 / 50.0,
            // 50 GB/s of the NIC's 50.
            combine: 1.0,
        },
    ),
];

/// DeepEP's measured network fraction for a group spanning `nodes` nodes ([`DEEPEP_RDMA`]).
fn deepep_rdma_fraction(nodes: f64) -> DeepEpFraction {
    let mut out = DEEPEP_RDMA[0].1;
    for (at, f) in DEEPEP_RDMA {
        if nodes >= at {
            out = f;
        }
    }
    out
}

/// The share of a GPU of `sms` streaming multiprocessors that the expert all-to-all's
/// kernels hold while they run on `comm_sms` of them (DeepEP's 20 by default,
/// [`DEEPEP_DEFAULT_SMS`](crate::scenario::DEEPEP_DEFAULT_SMS); HybridEP's as its run sets
/// it); 0 where the preset does not give `sms` or the kernels would take every one.
pub fn deepep_sm_share(sms: Option<u32>, comm_sms: u32) -> f64 {
    match sms {
        Some(n) if n > comm_sms => f64::from(comm_sms) / f64::from(n),
        _ => 0.0,
    }
}

/// What an all-to-all of `comm_s` hides under `compute_s` of compute that runs beside it
/// while it holds `sm_share` of the multiprocessors: the compute runs on the rest, so
/// during the all-to-all it does `1 - sm_share` of its work a second, and the two end
/// together after `max(comm, compute + sm_share comm)`; the time saved against running one
/// after the other is `min(compute, (1 - sm_share) comm)`.
pub fn hidden_beside(comm_s: f64, compute_s: f64, sm_share: f64) -> f64 {
    let keep = (1.0 - sm_share).clamp(0.0, 1.0);
    (keep * comm_s.max(0.0)).min(compute_s.max(0.0))
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
    fn an_all_to_all_beside_compute_hides_what_its_multiprocessors_leave() {
        // DeepEP's 20 of an H100's 132 multiprocessors.
        let share = deepep_sm_share(Some(132), crate::scenario::DEEPEP_DEFAULT_SMS);
        assert!((share - 20.0 / 132.0).abs() < 1e-15);
        assert_eq!(deepep_sm_share(None, 20), 0.0);
        // HybridEP on 32 of them (Megatron-Bridge's Qwen3-30B-A3B H100 recipe).
        assert!((deepep_sm_share(Some(132), 32) - 32.0 / 132.0).abs() < 1e-15);
        assert_eq!(deepep_sm_share(Some(132), 132), 0.0);
        // Compute longer than the all-to-all: it runs at 112/132 while the all-to-all runs,
        // so the pair takes compute + share x comm and saves (1 - share) x comm.
        let (comm, compute) = (1.0f64, 3.0f64);
        let together = comm.max(compute + share * comm);
        assert!((hidden_beside(comm, compute, share) - (comm + compute - together)).abs() < 1e-12);
        // Compute shorter than what the all-to-all leaves: all of it hides.
        assert_eq!(hidden_beside(3.0, 1.0, share), 1.0);
        // Without a share, the shorter of the two.
        assert_eq!(hidden_beside(2.0, 3.0, 0.0), 2.0);
        assert_eq!(hidden_beside(-1.0, 3.0, 0.0), 0.0);
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
    fn deepep_crosses_the_network_once_per_node_hit_at_its_measured_rates() {
        let c = cluster(8);
        let (link, nic) = (450e9, 50e9);
        // EP16 over 2 nodes, top-8: a token reaches 2 (1 - (1/2)^8) nodes and
        // 16 (1 - (15/16)^8) ranks, sent at DeepEP's EP16 rate (43 GB/s of 50) and its
        // NVLink rate (328.97 GB/s of 450 for the dispatch).
        let nodes = 2.0 * (1.0 - 0.5f64.powi(8));
        let ranks = 16.0 * (1.0 - (15.0f64 / 16.0).powi(8));
        let want_net = nodes / 8.0 / 43e9;
        let want_nv = ranks / 8.0 / 328.97e9;
        let got = c.ep_deepep_s_per_byte(16, 1, 8.0, None, link, nic);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
        assert!(
            close(got.dispatch_s_per_byte, want_net.max(want_nv)),
            "{got:?}"
        );
        assert!(close(
            got.combine_s_per_byte,
            want_net.max(ranks / 8.0 / 287.14e9)
        ));
        // Inside one node only NVLink: 8 (1 - (7/8)^8) ranks a token.
        let one = c.ep_deepep_s_per_byte(8, 1, 8.0, None, link, nic);
        let ranks8 = 8.0 * (1.0 - 0.875f64.powi(8));
        assert!(close(one.dispatch_s_per_byte, ranks8 / 8.0 / 328.97e9));
        assert!(close(one.combine_s_per_byte, ranks8 / 8.0 / 287.14e9));
        // EP32 over 4 nodes and EP64 over 8 at their own rows of the table.
        let four = c.ep_deepep_s_per_byte(32, 1, 8.0, None, link, nic);
        let hit4 = 4.0 * (1.0 - 0.75f64.powi(8));
        assert!(close(four.dispatch_s_per_byte, hit4 / 8.0 / 58e9));
        assert!(close(four.combine_s_per_byte, hit4 / 8.0 / 57e9));
        let eight = c.ep_deepep_s_per_byte(128, 1, 8.0, None, link, nic);
        let hit16 = 16.0 * (1.0 - (15.0f64 / 16.0).powi(8));
        assert!(close(eight.combine_s_per_byte, hit16 / 8.0 / 50e9));
        let none = DeepEpRates::default();
        assert_eq!(c.ep_deepep_s_per_byte(1, 1, 8.0, None, link, nic), none);
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
        let at = |ep: u64, g: Option<ExpertGroups>| {
            c.ep_deepep_s_per_byte(ep, 1, 8.0, g, 450e9, 50e9)
                .dispatch_s_per_byte
        };
        let (free, limited) = (at(64, None), at(64, groups(8, 4)));
        let ratio = (4.0 * (1.0 - 0.75f64.powi(8))) / (8.0 * (1.0 - 0.875f64.powi(8)));
        assert!((limited / free - ratio).abs() < 1e-12, "{limited} / {free}");
        // Inside one node the grouping changes nothing.
        assert_eq!(at(8, groups(8, 4)), at(8, None));
    }
}
