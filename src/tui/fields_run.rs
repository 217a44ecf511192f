//! The run options of the CLI's `--attention-backend`, `--moment-bytes` and
//! `--activation-func-fp8-input-store` as fields: each edit is checked by the engine's rules
//! ([`Scenario::validate`]) and refused, in its words and naming the field, where they do not
//! hold, keeping the last good value.

use crate::scenario::{AttentionBackend, ModelStyle, Scenario};

use super::fields_step::{checked, cycle};

/// Whether the fp8 activation-input store row applies to `sc`: only a SwiGLU (Llama-style)
/// model has the input it keeps in fp8.
pub fn fp8_store_applies(sc: &Scenario) -> bool {
    sc.model.style == ModelStyle::Llama
}

/// Cycles the attention backend (cudnn, flash2) one step up or down.
pub fn step_attention(sc: &mut Scenario, delta: i32) -> Option<String> {
    let next = cycle(AttentionBackend::ALL, &sc.plan.attention_backend, delta)?;
    checked(sc, &format!("attn = {}", next.name()), |sc| {
        sc.plan.attention_backend = next
    })
}

/// Toggles the Adam moments between fp32 (4 bytes) and bf16 (2 bytes).
pub fn step_moments(sc: &mut Scenario) -> Option<String> {
    let next = if sc.parallel.moment_bytes == 4 { 2 } else { 4 };
    checked(sc, &format!("adam mom = {next}"), |sc| {
        sc.parallel.moment_bytes = next
    })
}

/// Sets the Adam moments' bytes from typed text: 2 or 4; the error is the reason.
pub fn set_moments(sc: &mut Scenario, text: &str) -> Result<(), String> {
    const ALLOWED: &str = "2 (bf16 Adam moments) or 4 (fp32 Adam moments)";
    let n: u32 = text.trim().parse().map_err(|_| ALLOWED.to_string())?;
    if n != 2 && n != 4 {
        return Err(ALLOWED.into());
    }
    match checked(sc, "adam mom", |sc| sc.parallel.moment_bytes = n) {
        None => Ok(()),
        Some(reason) => Err(reason),
    }
}

/// Turns Megatron-Core's `activation_func_fp8_input_store` on or off; on is refused with the
/// engine's reason for a GeLU model.
pub fn toggle_fp8_store(sc: &mut Scenario) -> Option<String> {
    let on = !sc.plan.activation_func_fp8_input_store;
    let label = if on { "fp8 store on" } else { "fp8 store off" };
    checked(sc, label, |sc| sc.plan.activation_func_fp8_input_store = on)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::tui::fields::{Choices, Field, set_number, step};
    use crate::tui::fixture;

    #[test]
    fn the_backend_cycles_and_the_moments_take_2_or_4() {
        let mut sc = fixture::scenario("gpt3");
        let c = Choices::default();
        assert_eq!(Field::AttentionBackend.value(&sc), "cudnn");
        assert_eq!(step(&mut sc, Field::AttentionBackend, 1, &c), None);
        assert_eq!(sc.plan.attention_backend, AttentionBackend::Flash2);
        assert_eq!(step(&mut sc, Field::AttentionBackend, 1, &c), None);
        assert_eq!(sc.plan.attention_backend, AttentionBackend::Cudnn);
        assert_eq!(step(&mut sc, Field::MomentBytes, 1, &c), None);
        assert_eq!(sc.parallel.moment_bytes, 2);
        set_number(&mut sc, Field::MomentBytes, "4").unwrap();
        assert_eq!(Field::MomentBytes.value(&sc), "4 bytes");
        let e = set_number(&mut sc, Field::MomentBytes, "3").unwrap_err();
        assert!(e.contains("adam mom = '3'") && e.contains("2 (bf16"), "{e}");
        assert_eq!(sc.parallel.moment_bytes, 4);
    }

    #[test]
    fn the_fp8_store_shows_and_applies_to_swiglu_only() {
        let c = Choices::default();
        let mut llama = fixture::scenario("llama");
        assert!(Field::Fp8InputStore.shown(&llama));
        assert_eq!(step(&mut llama, Field::Fp8InputStore, 1, &c), None);
        assert!(llama.plan.activation_func_fp8_input_store);
        assert_eq!(Field::Fp8InputStore.value(&llama), "on");
        let mut gpt = fixture::scenario("gpt3");
        assert!(!Field::Fp8InputStore.shown(&gpt));
        let note = step(&mut gpt, Field::Fp8InputStore, 1, &c).unwrap();
        assert!(
            note.contains("fp8 store on") && note.contains("plan.activation_func_fp8_input_store"),
            "{note}"
        );
        assert!(!gpt.plan.activation_func_fp8_input_store);
    }
}
