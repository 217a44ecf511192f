//! Tests of the panel's fields: stepping, typed numbers and the notes they give.

use super::*;
use crate::tui::fixture;

fn choices() -> Choices {
    Choices {
        models: vec![fixture::model_gpt3(), fixture::model_llama70()],
        gpus: vec![fixture::gpu_a100(), fixture::gpu_h100()],
    }
}

#[test]
fn steps_move_and_clamp() {
    let mut sc = fixture::scenario("gpt3");
    let c = choices();
    step(&mut sc, Field::Stages, 1, &c);
    assert_eq!(sc.parallel.pp, 9);
    step(&mut sc, Field::Tp, -1, &c);
    assert_eq!(sc.parallel.tp, 4);
    sc.parallel.dp = 1;
    step(&mut sc, Field::Dp, -1, &c);
    assert_eq!(sc.parallel.dp, 1);
    step(&mut sc, Field::Model, 1, &c);
    assert_eq!(sc.model.name, "llama2-70b");
    step(&mut sc, Field::Model, 1, &c);
    assert_eq!(sc.model.name, "gpt3-175b");
    // A typed budget (the fixture's 70 GiB) stays as typed on the new GPU.
    let budget = sc.plan.memory_budget_bytes;
    assert!(step(&mut sc, Field::Gpu, 1, &c).is_some());
    assert_eq!(sc.gpu.name, "h100-80gb");
    assert_eq!(sc.plan.memory_budget_bytes, budget);
    assert_eq!(sc.plan.reserve_bytes, None);
    step(&mut sc, Field::Schedule, -1, &c);
    assert_eq!(sc.plan.schedule, ScheduleKind::Gpipe);
    step(&mut sc, Field::Strategy, 1, &c);
    assert_eq!(sc.plan.strategy, Strategy::Offload);
}

#[test]
fn typed_numbers_are_checked() {
    let mut sc = fixture::scenario("gpt3");
    set_number(&mut sc, Field::MicroBatches, "32").unwrap();
    assert_eq!(sc.batch.micro_batches, 32);
    set_number(&mut sc, Field::Budget, "40.5").unwrap();
    assert_eq!(Field::Budget.value(&sc), "40.5 GiB");
    assert!(set_number(&mut sc, Field::Stages, "0").is_err());
    assert!(
        set_number(&mut sc, Field::Stages, "x")
            .unwrap_err()
            .contains("stages p")
    );
    assert!(set_number(&mut sc, Field::Model, "3").is_err());
    // A count out of range says the range, in the command line's words.
    for bad in ["99999999999", "0", "-1"] {
        let e = set_number(&mut sc, Field::MicroBatches, bad).unwrap_err();
        assert!(e.contains("a whole number from 1 to 1048576"), "{e}");
    }
    let e = set_number(&mut sc, Field::Tp, "99999999999").unwrap_err();
    assert!(e.contains("a whole number from 1 to 65536"), "{e}");
}

#[test]
fn tensor_size_stops_at_the_node_size() {
    let mut sc = fixture::scenario("gpt3");
    let c = choices();
    sc.parallel.tp = 4;
    assert!(step(&mut sc, Field::Tp, 1, &c).is_none());
    assert_eq!(sc.parallel.tp, 8);
    let note = step(&mut sc, Field::Tp, 1, &c).unwrap();
    assert_eq!(sc.parallel.tp, sc.gpu.node_gpus);
    assert!(note.contains("node size"), "{note}");
    step(&mut sc, Field::Tp, -1, &c);
    assert_eq!(sc.parallel.tp, 4);
    // A typed number may still go past it.
    set_number(&mut sc, Field::Tp, "16").unwrap();
    assert_eq!(sc.parallel.tp, 16);
}

#[test]
fn context_zero_and_precision_step() {
    let mut sc = fixture::scenario("gpt3");
    let c = choices();
    assert_eq!(Field::Cp.value(&sc), "1");
    step(&mut sc, Field::Cp, 1, &c);
    assert_eq!(sc.parallel.cp, 2);
    step(&mut sc, Field::Cp, -1, &c);
    step(&mut sc, Field::Cp, -1, &c);
    assert_eq!(sc.parallel.cp, 1);
    set_number(&mut sc, Field::Cp, "4").unwrap();
    assert_eq!(sc.parallel.cp, 4);
    assert!(
        set_number(&mut sc, Field::Cp, "0")
            .unwrap_err()
            .contains("ctx cp")
    );
    // zero cycles 0, 1, 3 and keeps the distributed optimizer in step with it.
    sc.parallel.set_zero(Zero::Off);
    step(&mut sc, Field::Zero, 1, &c);
    assert_eq!(sc.parallel.zero(), Zero::Optimizer);
    assert!(sc.parallel.distributed_optimizer);
    step(&mut sc, Field::Zero, 1, &c);
    assert_eq!(sc.parallel.zero(), Zero::Full);
    assert_eq!(Field::Zero.value(&sc), "3 full");
    step(&mut sc, Field::Zero, 1, &c);
    assert_eq!(sc.parallel.zero(), Zero::Off);
    assert!(!sc.parallel.distributed_optimizer);
    // fp8 only on a GPU that has it; the step says why it does not move.
    sc.gpu = fixture::gpu_a100();
    let note = step(&mut sc, Field::Precision, 1, &c).unwrap();
    assert!(
        note.contains("fp8") && note.contains(&sc.gpu.name),
        "{note}"
    );
    assert_eq!(sc.parallel.precision, Precision::Bf16);
    sc.gpu = fixture::gpu_h100();
    assert!(step(&mut sc, Field::Precision, 1, &c).is_none());
    assert_eq!(Field::Precision.value(&sc), "fp8");
}

#[test]
fn the_reserve_sets_the_budget_below_the_gpu_memory() {
    let mut sc = fixture::scenario("gpt3");
    let c = choices();
    let memory = sc.gpu.memory_bytes();
    assert_eq!(Field::Reserve.value(&sc), "– (budget)");
    set_number(&mut sc, Field::Reserve, "8").unwrap();
    assert_eq!(sc.plan.memory_budget_bytes, memory - 8 * (1 << 30));
    assert_eq!(Field::Reserve.value(&sc), "8.0 GiB");
    step(&mut sc, Field::Reserve, 1, &c);
    assert_eq!(sc.plan.reserve_bytes, Some(9 * (1 << 30)));
    step(&mut sc, Field::Reserve, -20, &c);
    assert_eq!(sc.plan.reserve_bytes, Some(0));
    // A step is one GiB from the value as it is: a half GiB survives a step and its return.
    set_number(&mut sc, Field::Reserve, "35.5").unwrap();
    step(&mut sc, Field::Reserve, 1, &c);
    assert_eq!(Field::Reserve.value(&sc), "36.5 GiB");
    step(&mut sc, Field::Reserve, -1, &c);
    assert_eq!(Field::Reserve.value(&sc), "35.5 GiB");
    set_number(&mut sc, Field::Budget, "4.5").unwrap();
    step(&mut sc, Field::Budget, 1, &c);
    step(&mut sc, Field::Budget, -1, &c);
    assert_eq!(Field::Budget.value(&sc), "4.5 GiB");
    let e = set_number(&mut sc, Field::Reserve, "500").unwrap_err();
    assert!(e.contains("reserve") && e.contains("GPU's memory"), "{e}");
    assert!(set_number(&mut sc, Field::Reserve, "-1").is_err());
}

#[test]
fn a_count_stepped_past_its_largest_value_stops_there_and_says_so() {
    let mut sc = fixture::scenario("gpt3");
    let c = choices();
    // At the largest d a step up changes nothing and names the field and the limit, not
    // the engine's key with a value nobody typed (it read "invalid parallel.dp = 131072").
    sc.parallel.dp = 65536;
    let note = step(&mut sc, Field::Dp, 1, &c).unwrap_or_default();
    assert_eq!(sc.parallel.dp, 65536);
    assert!(note.contains("data d") && note.contains("65536"), "{note}");
    assert!(
        !note.contains("131072") && !note.contains("parallel.dp"),
        "{note}"
    );
    // A doubling step that would pass it stops at it.
    sc.parallel.dp = 40000;
    step(&mut sc, Field::Dp, 1, &c);
    assert_eq!(sc.parallel.dp, 65536);
    // The same for a linear step.
    sc.parallel.pp = 65536;
    let note = step(&mut sc, Field::Stages, 1, &c).unwrap_or_default();
    assert_eq!(sc.parallel.pp, 65536);
    assert!(note.contains("stages p"), "{note}");
}
