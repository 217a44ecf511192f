//! The expert fields only a mixture of experts shows: the expert tensor-parallel size `etp`,
//! DeepEP's all-to-all kernels and the multi-token-prediction layers. A dense model has none
//! of them, so its panel leaves their rows out ([`super::fields::Field::shown`]). Each edit is
//! checked by the engine's rules and refused, in its words, where they do not hold.

use crate::scenario::{Scenario, ranges};

use super::fields::Field;
use super::fields_step::checked;

impl Field {
    /// Whether the panel shows this field for `sc`: the expert rows (`etp`, DeepEP, MTP) only
    /// for a mixture of experts, the fp8 activation-input store only for a SwiGLU model;
    /// every other field always.
    pub fn shown(self, sc: &Scenario) -> bool {
        match self {
            Field::Etp | Field::Deepep | Field::Mtp => sc.model.moe.is_some(),
            Field::Fp8InputStore => super::fields_run::fp8_store_applies(sc),
            _ => true,
        }
    }

    /// The fields shown for `sc`, top to bottom (the panel, the mouse and the field cycle
    /// follow this list).
    pub fn shown_in(sc: &Scenario) -> Vec<Field> {
        Field::ALL.into_iter().filter(|f| f.shown(sc)).collect()
    }
}

/// The `etp` values the layout allows: divisors of `t x cp x d / ep` that divide the experts'
/// FFN size.
pub fn etp_choices(sc: &Scenario) -> Vec<u32> {
    let Some(moe) = sc.model.moe else {
        return vec![1];
    };
    let par = &sc.parallel;
    let stage = u64::from(par.tp) * u64::from(par.cp) * u64::from(par.dp);
    let ep = u64::from(par.ep.max(1));
    (1..=stage / ep)
        .filter(|&v| stage.is_multiple_of(v * ep) && moe.expert_ffn.is_multiple_of(v))
        .filter_map(|v| u32::try_from(v).ok())
        .collect()
}

/// Steps `etp` to the next allowed value up or down; the note says why it stays.
pub fn step_etp(sc: &mut Scenario, delta: i32) -> Option<String> {
    let now = sc.parallel.etp;
    let choices = etp_choices(sc);
    let next = if delta > 0 {
        choices.iter().copied().find(|&v| v > now)
    } else {
        choices.iter().rev().copied().find(|&v| v < now)
    };
    let Some(next) = next else {
        let shown: Vec<String> = choices.iter().map(u32::to_string).collect();
        return Some(format!(
            "etp stays {now}: the allowed values are {} (divisors of t x cp x d / ep that \
             divide the experts' FFN size)",
            shown.join(", ")
        ));
    };
    checked(sc, &format!("etp = {next}"), |sc| sc.parallel.etp = next)
}

/// Sets `etp` from typed text, checked by the ranges table and the engine's layout rules
/// (what `--etp` gets); the error is the reason, without the field's label.
pub fn set_etp(sc: &mut Scenario, text: &str) -> Result<(), String> {
    let n: u64 = text.trim().parse().map_err(|_| ranges::ETP.allowed())?;
    ranges::ETP.check_count(n).map_err(|e| e.allowed)?;
    let n = u32::try_from(n).map_err(|_| ranges::ETP.allowed())?;
    let before = sc.parallel.etp;
    sc.parallel.etp = n;
    sc.check_expert_layout().map_err(|e| {
        sc.parallel.etp = before;
        e.allowed
    })
}

/// Turns DeepEP's all-to-all kernels on or off; on is refused with the engine's reason where
/// it cannot apply (ep 1).
pub fn toggle_deepep(sc: &mut Scenario) -> Option<String> {
    let on = !sc.plan.deepep;
    let label = if on { "deepep on" } else { "deepep off" };
    checked(sc, label, |sc| sc.plan.deepep = on)
}

/// Steps the multi-token-prediction layers by one (0 to the most the model format takes).
pub fn step_mtp(sc: &mut Scenario, delta: i32) -> Option<String> {
    let now = sc.model.mtp_layers;
    let next = if delta > 0 {
        now.saturating_add(1)
    } else {
        now.saturating_sub(1)
    };
    if next == now
        || ranges::MTP_LAYERS_RANGE
            .check_count(u64::from(next))
            .is_err()
    {
        return Some(format!(
            "mtp stays {now}: {}",
            ranges::MTP_LAYERS_RANGE.allowed()
        ));
    }
    checked(sc, &format!("mtp = {next}"), |sc| {
        sc.model.mtp_layers = next
    })
}

/// Sets the multi-token-prediction layers from typed text; the error is the reason.
pub fn set_mtp(sc: &mut Scenario, text: &str) -> Result<(), String> {
    let n: u64 = text
        .trim()
        .parse()
        .map_err(|_| ranges::MTP_LAYERS_RANGE.allowed())?;
    ranges::MTP_LAYERS_RANGE
        .check_count(n)
        .map_err(|e| e.allowed)?;
    let n = u32::try_from(n).map_err(|_| ranges::MTP_LAYERS_RANGE.allowed())?;
    match checked(sc, "mtp", |sc| sc.model.mtp_layers = n) {
        None => Ok(()),
        Some(reason) => Err(reason),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::fields::{Choices, set_number, step};
    use super::Field;
    use crate::{Catalog, ScenarioOverrides};

    /// deepseek-v3 on H100s at t 1 x cp 1 x d 8, ep 8.
    fn moe() -> crate::scenario::Scenario {
        let catalog = Catalog::builtin();
        let mut sc = catalog.scenario("gpt3-175b-16k").unwrap();
        ScenarioOverrides {
            model: Some("deepseek-v3".into()),
            gpu: Some("h100-80gb".into()),
            pp: Some(4),
            tp: Some(1),
            dp: Some(8),
            ep: Some(8),
            ..Default::default()
        }
        .apply(&mut sc, &Catalog::builtin())
        .unwrap();
        sc
    }

    #[test]
    fn only_a_mixture_of_experts_shows_the_expert_rows() {
        let dense = Catalog::builtin().scenario("gpt3-175b-16k").unwrap();
        let sc = moe();
        for f in [Field::Etp, Field::Deepep, Field::Mtp] {
            assert!(!f.shown(&dense), "{f:?}");
            assert!(f.shown(&sc), "{f:?}");
            assert!(!Field::shown_in(&dense).contains(&f));
            assert!(Field::shown_in(&sc).contains(&f));
        }
        assert!(Field::shown_in(&dense).contains(&Field::Ep));
        assert_eq!(Field::shown_in(&sc).len(), Field::ALL.len());
    }

    #[test]
    fn expert_rows_step_and_refuse_as_the_engine_does() {
        let mut sc = moe();
        let c = Choices::default();
        assert_eq!(Field::Etp.value(&sc), "1");
        assert_eq!(Field::Mtp.value(&sc), "1");
        assert_eq!(Field::Deepep.value(&sc), "off");
        assert_eq!(super::etp_choices(&sc), vec![1]);
        assert!(
            step(&mut sc, Field::Etp, 1, &c)
                .unwrap()
                .contains("etp stays 1")
        );
        step(&mut sc, Field::Ep, -1, &c);
        assert_eq!(sc.parallel.ep, 4);
        assert_eq!(super::etp_choices(&sc), vec![1, 2]);
        assert_eq!(step(&mut sc, Field::Etp, 1, &c), None);
        assert_eq!(sc.parallel.etp, 2);
        assert_eq!(step(&mut sc, Field::Deepep, 1, &c), None);
        assert!(sc.plan.deepep);
        assert_eq!(step(&mut sc, Field::Mtp, -1, &c), None);
        assert_eq!(sc.model.mtp_layers, 0);
        assert!(
            step(&mut sc, Field::Mtp, -1, &c)
                .unwrap()
                .contains("mtp stays 0")
        );
        set_number(&mut sc, Field::Mtp, "1").unwrap();
        assert_eq!(sc.model.mtp_layers, 1);
        assert!(set_number(&mut sc, Field::Etp, "3").is_err());
        // DeepEP at ep 1 has no all-to-all to run.
        sc.parallel.etp = 1;
        sc.plan.deepep = false;
        sc.parallel.ep = 1;
        let note = step(&mut sc, Field::Deepep, 1, &c).unwrap();
        assert!(note.contains("plan.deepep"), "{note}");
        assert!(!sc.plan.deepep);
    }
}
