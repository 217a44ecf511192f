//! The scenario flags of the TUI, `plan`, `compare`, `simulate`, `export`, `units` and `sweep`
//! (docs/cli.md), turned into a scenario one way: the starting preset, the overrides, the
//! profile, and the check that no flag given goes unused.

use std::path::Path;

use clap::Args;
use pipescope::{
    BlockKind, Catalog, DEFAULT_SCENARIO, MeasuredProfile, PresetKind, Scenario, ScenarioOverrides,
};

pub use super::scenario_flags::{
    LayoutFlags, SettingFlags, SourceFlags, cost, degree, flag_pair, whole_up_to,
};

/// Every scenario flag: where the scenario comes from, its layout, and its other settings.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct ScenarioArgs {
    /// Preset, model, GPU and profile.
    #[command(flatten)]
    pub source: SourceFlags,
    /// Layout, batch split, schedule and strategy.
    #[command(flatten)]
    pub layout: LayoutFlags,
    /// Every other setting.
    #[command(flatten)]
    pub settings: SettingFlags,
}

/// The overrides of the source and setting flags (everything but the layout).
pub fn setting_overrides(source: &SourceFlags, s: &SettingFlags) -> ScenarioOverrides {
    ScenarioOverrides {
        model: source.model.clone(),
        gpu: source.gpu.clone(),
        seq_len: s.seq_len,
        budget_gib: s.budget_gib,
        reserve_gib: s.reserve_gib,
        flash: flag_pair(s.flash, s.no_flash),
        attention_backend: s.attention_backend,
        objective: s.objective,
        overlap_recompute: s.overlap_recompute.then_some(true),
        mem_limit: s.mem_limit,
        group_size: s.group_size,
        offload_chunks: s.offload_chunks,
        device_max_connections: s.device_max_connections,
        overlap_grad_reduce: flag_pair(s.overlap_grad_reduce, s.no_overlap_grad_reduce),
        overlap_param_gather: s.overlap_param_gather.then_some(true),
        moe_a2a_overlap: s.moe_a2a_overlap.then_some(true),
        tp_comm_overlap: s.tp_comm_overlap.then_some(true),
        partition: s.partition,
        layout: s.layout.clone(),
        p2p: s.p2p,
        grad_bytes: s.grad_bytes,
        moment_bytes: s.moment_bytes,
        activation_func_fp8_input_store: s.activation_func_fp8_input_store.then_some(true),
        // As typed: [`finish_scenario`] maps the short names and quotes the typed ones back.
        recompute_units: s.recompute_units.clone(),
        routing_imbalance: s.routing_imbalance,
        deepep: s.deepep.then_some(true),
        mtp_layers: s.mtp_layers,
        ..ScenarioOverrides::default()
    }
}

/// A `--recompute-units` name as the model names it: the units panel's short form
/// (`attn.q`, [`BlockKind::short_name`]) becomes the full one (`attention.q`); every other
/// name stays as it is.
pub fn full_unit_name(name: &str) -> String {
    BlockKind::ALL
        .iter()
        .find_map(|k| {
            let rest = name.strip_prefix(k.short_name())?.strip_prefix('.')?;
            Some(format!("{}.{rest}", k.name()))
        })
        .unwrap_or_else(|| name.to_string())
}

/// `message` with a `--recompute-units` value quoted as the user typed it: a short name
/// (`attn.zz`) the flag mapped to the full one (`attention.zz`) before the model refused it is
/// quoted back in its typed form, so the error names what the user wrote.
pub fn quote_typed_units(message: &str, typed: Option<&[String]>) -> String {
    let mut out = message.to_string();
    for name in typed.unwrap_or_default() {
        let full = full_unit_name(name);
        if full != *name {
            out = out.replace(&format!("= {full}:"), &format!("= {name}:"));
        }
    }
    out
}

/// The scenario a command starts from, before the flags: the named preset as it is, or,
/// without `--preset`, the default scenario keeping nothing free (reserve 0: a preset's
/// reserve comes only with the preset named), unless `keep_default_reserve` (the UI opened
/// with no flag at all shows the default preset as it is).
pub fn starting_scenario(
    source: &SourceFlags,
    keep_default_reserve: bool,
) -> Result<(Scenario, Catalog), String> {
    let mut catalog = Catalog::with_user_config();
    let name = match &source.preset {
        Some(p) if Path::new(p).is_file() => {
            let info = catalog.add_file(Path::new(p)).map_err(|e| e.to_string())?;
            if info.kind != PresetKind::Scenario {
                return Err(format!(
                    "{p}: --preset needs a scenario file (top-level `name`, model, gpu, ...)"
                ));
            }
            info.name
        }
        Some(p) => p.clone(),
        None => DEFAULT_SCENARIO.to_string(),
    };
    let mut scenario = catalog.scenario(&name).map_err(|e| {
        let mut msg = e.to_string();
        for err in catalog.errors() {
            msg.push_str(&format!("\n  (user preset not loaded: {err})"));
        }
        msg
    })?;
    if source.preset.is_none() && !keep_default_reserve {
        scenario.keep_free(0).map_err(|e| e.to_string())?;
    }
    Ok((scenario, catalog))
}

/// Applies `overrides` and `--profile` to `scenario`, then says (on standard error) which
/// user presets were not loaded: broken presets are said, not silently skipped.
pub fn finish_scenario(
    mut scenario: Scenario,
    catalog: &Catalog,
    overrides: &ScenarioOverrides,
    profile: Option<&str>,
) -> Result<Scenario, String> {
    let typed = overrides.recompute_units.as_deref();
    let explain = |e: &dyn std::fmt::Display| quote_typed_units(&name_flags(&e.to_string()), typed);
    let mut overrides = overrides.clone();
    overrides.recompute_units =
        typed.map(|units| units.iter().map(|u| full_unit_name(u)).collect());
    overrides
        .apply(&mut scenario, catalog)
        .map_err(|e| explain(&e))?;
    // A short unit name the model lacks is refused here, quoting what was typed (the
    // solve would refuse the full name it maps to, which the user never wrote).
    if overrides.recompute_units.as_deref() != typed
        && let Err(e) = pipescope::Anatomy::build(&scenario)
        && e.to_string().contains("plan.recompute_units")
    {
        return Err(explain(&e));
    }
    if let Some(path) = profile {
        let text = pipescope::read_text_file(Path::new(path))
            .map_err(|e| format!("{path}: cannot read the profile: {e}"))?;
        let profile = MeasuredProfile::from_toml_str(path, &text).map_err(|e| e.to_string())?;
        scenario.profile = Some(profile);
        scenario.validate().map_err(|e| explain(&e))?;
    }
    for err in catalog.errors() {
        let err = super::output::printable(&err.to_string());
        eprintln!("pipescope: warning: user preset not loaded: {err}");
    }
    Ok(scenario)
}

impl ScenarioArgs {
    /// The overrides these flags give.
    pub fn overrides(&self) -> ScenarioOverrides {
        let l = &self.layout;
        ScenarioOverrides {
            pp: l.pp,
            tp: l.tp,
            dp: l.dp,
            cp: l.cp,
            sp: flag_pair(l.sp, l.no_sp),
            micro_batches: l.micro_batches,
            micro_batch_size: l.micro_batch_size,
            global_batch: l.global_batch,
            schedule: l.schedule,
            strategy: l.strategy,
            chunks: l.chunks,
            zero: l.zero,
            distributed_optimizer: flag_pair(l.distributed_optimizer, l.no_distributed_optimizer),
            precision: l.precision,
            ep: l.ep,
            etp: l.etp,
            ..setting_overrides(&self.source, &self.settings)
        }
    }

    /// Whether no flag is given at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The catalog (built-in presets, the user's config dir, `--preset FILE` on top) and
    /// the scenario the flags describe. Errors are user-facing messages.
    pub fn to_scenario(&self) -> Result<(Scenario, Catalog), String> {
        self.build(false)
    }

    /// [`ScenarioArgs::to_scenario`] for the terminal UI: with no flag at all it opens on the
    /// default preset as it is, its reserve included.
    #[cfg(feature = "tui")]
    pub fn to_tui_scenario(&self) -> Result<(Scenario, Catalog), String> {
        self.build(self.is_empty())
    }

    fn build(&self, keep_default_reserve: bool) -> Result<(Scenario, Catalog), String> {
        let (start, catalog) = starting_scenario(&self.source, keep_default_reserve)?;
        let mut overrides = self.overrides();
        if let Some(gpus) = self.layout.gpus {
            overrides.dp = Some(dp_for_gpus(gpus, &start, &overrides)?);
        }
        let scenario =
            finish_scenario(start, &catalog, &overrides, self.source.profile.as_deref())?;
        super::unused_flags::check_planned(&self.layout, &self.settings, &scenario)?;
        for note in super::unused_flags::job_flag_notes(&self.settings, &scenario) {
            eprintln!("pipescope: note: {note}");
        }
        Ok((scenario, catalog))
    }
}

/// The data-parallel size `--gpus N` gives: `N / (t x cp x p)`, with `t`, `cp` and `p` from
/// the flags or else the starting scenario; refused when not whole, past the largest `d`, or
/// beside a `-d` that says otherwise.
fn dp_for_gpus(gpus: u32, start: &Scenario, o: &ScenarioOverrides) -> Result<u32, String> {
    let t = o.tp.unwrap_or(start.parallel.tp);
    let cp = o.cp.unwrap_or(start.parallel.cp);
    let p = o.pp.unwrap_or(start.parallel.pp);
    let per_replica = u64::from(t) * u64::from(cp) * u64::from(p);
    let n = u64::from(gpus);
    if per_replica == 0 || n % per_replica != 0 {
        return Err(format!(
            "invalid --gpus = {gpus}: a multiple of t x cp x p ({t} x {cp} x {p} = \
             {per_replica}), as d = N / (t x cp x p) is a whole number of replicas"
        ));
    }
    let d = n / per_replica;
    if d == 0 {
        return Err(format!(
            "invalid --gpus = {gpus}: at least t x cp x p = {t} x {cp} x {p} = {per_replica} \
             (one replica)"
        ));
    }
    let largest = pipescope::ranges::DP.max as u64;
    if d > largest {
        return Err(format!(
            "invalid --gpus = {gpus}: d = N / (t x cp x p) = {gpus} / {per_replica} = {d}, \
             at most {largest}"
        ));
    }
    let d = u32::try_from(d).map_err(|_| format!("invalid --gpus = {gpus}"))?;
    match o.dp {
        Some(given) if given != d => Err(format!(
            "--gpus {gpus} and -d {given} disagree: --gpus sets d = N / (t x cp x p) = \
             {gpus} / {per_replica} = {d}; give one of the two"
        )),
        _ => Ok(d),
    }
}

/// The scenario's keys and the command-line flags that set them.
const KEY_FLAGS: &[(&str, &str)] = &[
    ("plan.layout", "--layout"),
    ("plan.p2p", "--p2p"),
    ("plan.attention_backend", "--attention-backend"),
    ("parallel.pp", "-p/--stages"),
    ("parallel.precision", "--precision"),
    ("parallel.tp", "-t/--tp"),
    ("parallel.dp", "-d/--dp"),
    ("parallel.chunks", "--chunks"),
    ("parallel.grad_bytes", "--grad-bytes"),
    ("parallel.moment_bytes", "--moment-bytes"),
    (
        "plan.activation_func_fp8_input_store",
        "--activation-func-fp8-input-store",
    ),
    ("parallel.cp", "--cp"),
    ("parallel.ep", "--ep"),
    ("parallel.etp", "--etp"),
    ("plan.routing_imbalance", "--routing-imbalance"),
    ("plan.deepep", "--deepep"),
    ("model.mtp_layers", "--mtp-layers"),
    ("parallel.zero", "--zero"),
    ("parallel.distributed_optimizer", "--distributed-optimizer"),
    ("plan.overlap_param_gather", "--overlap-param-gather"),
    ("plan.moe_a2a_overlap", "--moe-a2a-overlap"),
    ("plan.tp_comm_overlap", "--tp-comm-overlap"),
    ("plan.overlap_grad_reduce", "--overlap-grad-reduce"),
    ("batch.seq_len", "-s/--seq"),
    ("batch.micro_batches", "-m/--microbatches"),
    ("batch.micro_batch_size", "-b/--micro-batch-size"),
    ("plan.memory_budget_gib", "--budget-gib"),
    ("plan.reserve_gib", "--reserve-gib"),
    ("plan.recompute_units", "--recompute-units"),
    ("plan.mem_limit", "--mem-limit"),
    ("plan.group_size", "--group-size"),
    ("plan.offload_chunks", "--offload-chunks"),
    ("plan.device_max_connections", "--device-max-connections"),
    // Fields of the command line's own overrides (after the keys that contain them).
    ("reserve_gib", "--reserve-gib"),
    ("budget_gib", "--budget-gib"),
    ("global_batch", "--global-batch"),
];

/// A validation message with each scenario key followed by the flag that sets it
/// (`batch.seq_len (-s/--seq)`), so an error names what the user typed on the command line
/// as well as the preset key.
pub fn name_flags(message: &str) -> String {
    let mut out = message.to_string();
    for (name, flag) in [("model", "--model"), ("gpu", "--gpu")] {
        if let Some(rest) = out.strip_prefix(&format!("invalid {name} = ")) {
            out = format!("invalid {name} ({flag}) = {rest}");
        }
    }
    for (key, flag) in KEY_FLAGS {
        let tagged = format!("{key} ({flag})");
        if !out.contains(&tagged) {
            out = out.replace(key, &tagged);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{name_flags, quote_typed_units};

    #[test]
    fn a_refused_short_unit_name_is_quoted_as_typed() {
        let msg = "invalid plan.recompute_units (--recompute-units) = attention.zz: droppable \
                   units of this model (did you mean 'attention.q'?): attention.q";
        let typed = ["mlp.fc1_out".to_string(), "attn.zz".to_string()];
        assert_eq!(
            quote_typed_units(msg, Some(&typed)),
            msg.replace("= attention.zz:", "= attn.zz:")
        );
        // Full names typed stay as they are; no flag, no change.
        assert_eq!(quote_typed_units(msg, Some(&["attention.zz".into()])), msg);
        assert_eq!(quote_typed_units(msg, None), msg);
    }

    #[test]
    fn errors_name_the_flag_beside_the_key() {
        let msg = "invalid batch.seq_len = 16384: a multiple of parallel.tp (3)";
        assert_eq!(
            name_flags(msg),
            "invalid batch.seq_len (-s/--seq) = 16384: a multiple of parallel.tp (-t/--tp) (3)"
        );
        assert_eq!(name_flags("nothing to name"), "nothing to name");
        assert_eq!(
            name_flags("invalid reserve_gib = 90: less than the GPU's memory"),
            "invalid reserve_gib (--reserve-gib) = 90: less than the GPU's memory"
        );
        // A key that contains an override's name is tagged once, with its own flag.
        assert_eq!(
            name_flags("invalid plan.memory_budget_gib = 0"),
            "invalid plan.memory_budget_gib (--budget-gib) = 0"
        );
    }
}
