//! The integration tests, one binary: engine, planner, schedules, searches, CLI and TUI.
//! One binary links the library once (27 separate test crates each linked it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod arch_layers;
mod breakdown_per_device;
mod cli_common;
mod cli_noop_flags;
mod cli_rules;
mod cli_unused_plan_flags;
mod engine_anatomy;
mod engine_calibration;
mod engine_cli;
mod engine_cli_pipe;
mod engine_context;
mod engine_layout;
mod engine_moe;
mod engine_moe_overlap;
mod engine_moe_recipe;
mod engine_moe_sharding;
mod engine_precision;
mod engine_presets;
mod engine_proptest;
mod engine_sharding;
mod engine_shared;
mod export_cli;
mod export_megatron;
mod export_megatron_launch;
mod export_megatron_moe;
mod export_megatron_real;
mod export_megatron_recompute;
mod export_perfetto;
mod export_svg;
mod export_torchtitan;
mod harden_bounds;
mod harden_cancel;
mod harden_files;
mod harden_props;
mod harden_small;
#[cfg(feature = "tui")]
mod harden_tui;
mod job_h100;
mod job_heldout;
mod job_model;
mod job_moe_published;
mod job_scenario;
mod job_table5;
mod megatron_common;
mod plan_chain;
mod plan_cli;
mod plan_costing;
mod plan_gis_offload;
mod plan_pipeoffload;
mod plan_props;
mod preset_file_errors;
mod preset_rules;
mod review11_cli;
#[cfg(feature = "tui")]
mod review11_tui;
mod review13_cli;
#[cfg(feature = "tui")]
mod review13_tui;
mod review9_cli;
#[cfg(feature = "tui")]
mod review9_tui;
mod review_fixes_cli;
mod scenario_common;
mod sched_cli;
mod sched_closed_forms;
mod sched_common;
mod sched_dualpipe;
mod sched_estimate;
mod sched_invariants;
mod sched_megatron_interleaved;
mod sched_sim;
mod search_gis;
mod search_golden;
mod search_inputs;
mod search_po;
mod search_util;
mod search_vgreedy;
mod search_vzb;
mod search_zb;
mod search_zbv;
mod sweep_cli;
mod sweep_exact;
mod sweep_labels;
#[cfg(feature = "tui")]
mod tmux_common;
#[cfg(feature = "tui")]
mod tui_common;
#[cfg(feature = "tui")]
mod tui_e2e;
#[cfg(feature = "tui")]
mod tui_export;
#[cfg(feature = "tui")]
mod tui_layout;
#[cfg(feature = "tui")]
mod tui_presets;
#[cfg(feature = "tui")]
mod tui_real;
#[cfg(feature = "tui")]
mod tui_reload_files;
#[cfg(feature = "tui")]
mod tui_run_fields;
#[cfg(feature = "tui")]
mod tui_snapshots;
#[cfg(feature = "tui")]
mod tui_status;
#[cfg(feature = "tui")]
mod tui_sweep;
#[cfg(feature = "tui")]
mod tui_titles;
#[cfg(feature = "tui")]
mod tui_too_small;
#[cfg(feature = "tui")]
mod tui_update;
#[cfg(feature = "tui")]
mod tui_views;
