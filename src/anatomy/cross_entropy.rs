//! The loss without Megatron's `--cross-entropy-loss-fusion`: the passes over the fp32 logits
//! that Megatron-Core's unfused vocabulary-parallel cross-entropy makes beyond the head's
//! default cost (`outer::head`: the cast of the logits to fp32, one fp32 pass, the cast of
//! the gradient back).

use super::Anatomy;
use super::cost::Machine;
use crate::scenario::Scenario;

/// The forward's extra passes over the `n` fp32 logits, bytes per logit each, as
/// `_VocabParallelCrossEntropy.forward` runs them (`megatron/core/tensor_parallel/
/// cross_entropy.py`, Megatron-LM 1e057005 of May 2025, the code of the ModelZoo's Qwen3 H100
/// table): `torch.max` over the vocabulary (read 4), `vocab_parallel_logits -= logits_max`
/// in place (read and write 4), `exp_logits.sum` (read 4) and `exp_logits.div_` in place
/// (read and write 4). The cast (`.float()`) and `torch.exp(..., out=)` are the default cost's.
const FORWARD_PASSES: [f64; 4] = [4.0, 8.0, 4.0, 8.0];

/// The backward's extra pass: `grad_input.mul_(grad_output)` on the fp32 softmax in place
/// (read and write 4); the cast of the gradient back to bf16 is the default cost's.
const BACKWARD_PASSES: [f64; 1] = [8.0];

/// Adds the unfused loss's extra passes to the head's forward and input-gradient backward,
/// once per loss (`losses`: 1 + the MTP layers), for `logits` elements a device and
/// micro-batch; nothing with `plan.cross_entropy_loss_fusion` on.
pub(super) fn apply(
    anatomy: &mut Anatomy,
    machine: &Machine,
    scenario: &Scenario,
    logits: f64,
    losses: f64,
) {
    if scenario.plan.cross_entropy_loss_fusion {
        return;
    }
    let time = |passes: &[f64]| -> f64 {
        passes
            .iter()
            .map(|bytes| machine.mem(bytes * logits).s)
            .sum::<f64>()
            * losses
    };
    anatomy.head.forward_s += time(&FORWARD_PASSES);
    anatomy.head.backward_b_s += time(&BACKWARD_PASSES);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::anatomy::Anatomy;
    use crate::scenario::Catalog;

    fn qwen3_235b(fused: bool) -> Anatomy {
        let c = Catalog::builtin();
        let mut s = c.scenario("gpt3-175b-16k").unwrap();
        s.model = c.model("qwen3-235b-a22b").unwrap().clone();
        s.gpu = c.gpu("h100-80gb").unwrap().clone();
        s.parallel.tp = 2;
        s.parallel.sequence_parallel = true;
        s.parallel.pp = 8;
        s.parallel.dp = 16;
        s.parallel.ep = 32;
        s.batch.seq_len = 4096;
        s.batch.micro_batch_size = 1;
        s.plan.cross_entropy_loss_fusion = fused;
        Anatomy::build(&s).unwrap()
    }

    #[test]
    fn the_unfused_loss_adds_its_passes_to_the_head_alone() {
        let (fused, unfused) = (qwen3_235b(true), qwen3_235b(false));
        // 4096 tokens x 151,936 / 2 words: 311 M fp32 logits, 24 bytes each more in the
        // forward and 8 in the backward, every pass over a GB at the H100's memory-bound
        // kernels' rate (0.64 of 3.35 TB/s, 2.14 TB/s).
        let n = 4096.0 * 151_936.0 / 2.0;
        let fwd = unfused.head.forward_s - fused.head.forward_s;
        let bwd = unfused.head.backward_b_s - fused.head.backward_b_s;
        let within = |s: f64, bytes: f64| s > bytes * n / 2.2e12 && s < bytes * n / 2.1e12;
        assert!(within(fwd, 24.0), "{fwd}");
        assert!(within(bwd, 8.0), "{bwd}");
        assert_eq!(unfused.head.backward_w_s, fused.head.backward_w_s);
        for (a, b) in [
            (&unfused.attention, &fused.attention),
            (&unfused.moe, &fused.moe),
            (&unfused.embedding, &fused.embedding),
        ] {
            assert_eq!(a.forward_s, b.forward_s);
            assert_eq!(a.backward_b_s, b.backward_b_s);
        }
    }
}
