//! The overlapped gradient reduction as Megatron-Core's interleaved schedule launches it
//! (docs/model.md, "The whole job"): with a gradient-sync function set (Megatron-LM's
//! default `--align-grad-reduce`, and NeMo's distributed Adam), the schedule reduces each
//! model chunk's gradients as one unit, launched after the backward step that comes `r`
//! steps after the chunk's last backward on pipeline rank `r` ("to reduce idling from
//! mismatched microbatch times, we launch asynchronous communication at the same time across
//! the pipeline-parallel group"), and every chunk not launched by then after the device's
//! last backward (`forward_backward_pipelining_with_interleaving` in
//! `megatron/core/pipeline_parallel/schedules.py`, core_r0.8.0). The collectives run one
//! after another on the device's data-parallel stream.

use super::types::{Lane, Simulation, SpanKind};

/// Per device, the end times and local chunks of its backward steps (B or fused B+W) on its
/// compute lane, in the order they end.
pub(crate) fn backward_steps(sim: &Simulation, p: usize) -> Vec<Vec<(f64, u32)>> {
    let mut out = vec![Vec::new(); p];
    for s in &sim.timeline.spans {
        let backward = matches!(s.kind, SpanKind::B | SpanKind::BW);
        if s.lane == Lane::Compute
            && backward
            && let Some(v) = out.get_mut(s.device as usize)
        {
            v.push((s.end, s.chunk));
        }
    }
    for v in &mut out {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// End of the gradient reduction of pipeline rank `rank`, whose pipeline work ends at `end`,
/// whose backward steps are `steps` and whose local chunk `c` carries `shares[c]` of its
/// reduction of `reduce_s` seconds.
pub(crate) fn grad_end(
    reduce_s: f64,
    shares: &[f64],
    rank: usize,
    steps: &[(f64, u32)],
    end: f64,
) -> f64 {
    let mut launches: Vec<(f64, f64)> = shares
        .iter()
        .enumerate()
        .map(|(c, &share)| {
            let last = steps.iter().rposition(|&(_, chunk)| chunk as usize == c);
            let at = last
                .and_then(|i| steps.get(i + rank))
                .map_or(end, |&(at, _)| at);
            (at, reduce_s * share)
        })
        .collect();
    launches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let done = launches
        .iter()
        .fold(f64::NEG_INFINITY, |t, &(at, each)| t.max(at) + each);
    done.max(end)
}

#[cfg(test)]
mod tests {
    use super::grad_end;

    /// Two chunks of one second's reduction each, four backward steps ending at 1..=4 s
    /// (chunks 1, 1, 0, 0): on rank 0 chunk 1 launches at its last backward (2 s) and chunk 0
    /// at the end (4 s): done at 5 s; on rank 1 chunk 1 launches one step later (3 s) and
    /// chunk 0 at the end; on rank 2 both launch at the end and run one after the other.
    #[test]
    fn each_chunk_launches_rank_steps_after_its_last_backward() {
        let steps = [(1.0, 1), (2.0, 1), (3.0, 0), (4.0, 0)];
        let shares = [0.5, 0.5];
        assert_eq!(grad_end(2.0, &shares, 0, &steps, 4.0), 5.0);
        assert_eq!(grad_end(2.0, &shares, 1, &steps, 4.0), 5.0);
        assert_eq!(grad_end(2.0, &shares, 2, &steps, 4.0), 6.0);
        // A long first reduction delays the second.
        assert_eq!(grad_end(6.0, &[0.5, 0.5], 0, &steps, 4.0), 8.0);
        // Nothing to reduce: the pipeline's end.
        assert_eq!(grad_end(0.0, &shares, 0, &steps, 4.0), 4.0);
    }
}
