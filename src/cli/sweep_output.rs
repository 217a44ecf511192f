//! The three forms of `pipescope sweep`'s answer: the table, the JSON object and the CSV rows
//! (docs/cli.md).

use std::fmt::Write;

use serde_json::{Value, json};

use super::sweep::SweepArgs;
use pipescope::{GIB, Outcome, Scenario, SweepResult, SweepRow, sweep_same_time, sweep_tie_groups};

/// A finite number as JSON, null otherwise.
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// One ranked or front entry.
pub fn entry(r: &SweepRow) -> Value {
    let c = &r.config;
    json!({
        "gpus": c.gpus,
        "t": c.t,
        "cp": c.cp,
        "ep": c.ep,
        "etp": c.etp,
        "p": c.p,
        "d": c.d,
        "b": c.b,
        "m": c.m,
        "chunks": c.chunks,
        "sp": c.sp,
        "distributed_optimizer": c.distributed_optimizer,
        "zero": c.zero.level(),
        "precision": c.precision.name(),
        "schedule": c.schedule.name(),
        "strategy": c.strategy.name(),
        "iteration_time_s": num(r.iteration_time_s),
        "tokens_per_s_per_gpu": num(r.tokens_per_s_per_gpu),
        "mfu": num(r.mfu),
        "peak_memory_bytes": r.peak_memory_bytes,
    })
}

/// The `--json` object; `best` is the `plan --json` object of the fastest feasible one
/// (null when none is).
pub fn json(result: &SweepResult, best: Value) -> Result<Value, String> {
    let pick =
        |idx: &[usize]| -> Vec<Value> { idx.iter().map(|&i| entry(&result.rows[i])).collect() };
    Ok(json!({
        "configs": result.configs(),
        "feasible": result.feasible(),
        "solved": result.solved(),
        "pruned": result.pruned(),
        "statuses": result.status_counts(),
        "rejected": result.rejected,
        "best": best,
        "ranked": pick(&result.ranked),
        "pareto": pick(&result.pareto),
    }))
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn opt(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// One row per configuration, with its status and reason.
pub fn csv(result: &SweepResult) -> String {
    let mut s = String::from(
        "gpus,t,p,d,b,m,chunks,sp,distributed_optimizer,schedule,strategy,status,\
         iteration_time_s,tokens_per_s_per_gpu,mfu,peak_memory_bytes,time_bound_s,\
         memory_bound_bytes,solve_time_s,reason,cp,zero,precision,ep,etp\n",
    );
    for r in &result.rows {
        let c = &r.config;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.gpus,
            c.t,
            c.p,
            c.d,
            c.b,
            c.m,
            c.chunks,
            c.sp,
            c.distributed_optimizer,
            c.schedule,
            c.strategy,
            r.status.name(),
            opt(r.iteration_time_s),
            opt(r.tokens_per_s_per_gpu),
            opt(r.mfu),
            if r.solved {
                r.peak_memory_bytes.to_string()
            } else {
                String::new()
            },
            opt(r.time_bound_s),
            r.memory_bound_bytes,
            r.solve_time_s,
            csv_field(r.status.reason().unwrap_or("")),
            c.cp,
            c.zero.level(),
            c.precision,
            c.ep,
            c.etp,
        );
    }
    s
}

/// Decimals for a column of `values` (neighbours in table order): at least `min`, and at
/// least three significant figures of the smallest value, more until every two neighbours
/// that differ (beyond floating-point noise) print differently; at most six more.
fn decimals_apart(values: &[f64], min: usize) -> usize {
    let smallest = values
        .iter()
        .map(|v| v.abs())
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let three = if smallest.is_finite() {
        (2.0 - smallest.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        0
    };
    let base = min.max(three);
    (base..=base + 6)
        .find(|&d| {
            values.windows(2).all(|w| {
                sweep_same_time(w[0], w[1]) || format!("{:.d$}", w[0]) != format!("{:.d$}", w[1])
            })
        })
        .unwrap_or(base + 6)
}

/// The table of `idx` (rows in the sweep's total order): one line per configuration, those
/// that differ only in their strategy and tie on time and memory merged into one line
/// listing the strategies; times with the decimals that tell different times apart.
fn rows_table(s: &mut String, result: &SweepResult, idx: &[usize]) {
    let groups = sweep_tie_groups(&result.rows, idx);
    let strategies: Vec<String> = groups
        .iter()
        .map(|g| {
            g.iter()
                .map(|&i| result.rows[i].config.strategy.name())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let gw = strategies.iter().map(String::len).max().unwrap_or(0).max(9);
    let times: Vec<f64> = groups
        .iter()
        .map(|g| result.rows[g[0]].iteration_time_s)
        .collect();
    let td = decimals_apart(&times, 3);
    let peaks: Vec<f64> = groups
        .iter()
        .map(|g| result.rows[g[0]].peak_memory_bytes as f64 / GIB)
        .collect();
    let mut sorted_peaks = peaks.clone();
    sorted_peaks.sort_by(f64::total_cmp);
    let pd = decimals_apart(&sorted_peaks, 2);
    let tw = (td + 6).max(9);
    let pw = (pd + 6).max(9);
    // A mixture of experts' expert layout (`ep`, or `ep x etp`), shown where any configuration
    // of the sweep splits experts.
    let experts = result
        .rows
        .iter()
        .any(|r| r.config.ep > 1 || r.config.etp > 1);
    let ep_cell = |c: &pipescope::SweepConfig| match (experts, c.etp) {
        (false, _) => String::new(),
        (true, 1) => format!(" {:>5}", c.ep),
        (true, etp) => format!(" {:>5}", format!("{}x{etp}", c.ep)),
    };
    let ep_head = if experts {
        format!(" {:>5}", "ep")
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "{:>3} {:>5} {:>3} {:>2}{ep_head} {:>3} {:>4} {:>2} {:>5} {:>2} {:>3} {:>4} {:<4} {:<11} {:<gw$} {:>tw$} {:>9} {:>6} {:>pw$}",
        "#",
        "gpus",
        "t",
        "cp",
        "p",
        "d",
        "b",
        "m",
        "v",
        "sp",
        "zero",
        "prec",
        "schedule",
        "strategy",
        "iter s",
        "tok/s/gpu",
        "MFU",
        "peak GiB"
    );
    for (n, (g, strategy)) in groups.iter().zip(&strategies).enumerate() {
        let r = &result.rows[g[0]];
        let c = &r.config;
        let yn = |b: bool| if b { "on" } else { "-" };
        let _ = writeln!(
            s,
            "{:>3} {:>5} {:>3} {:>2}{} {:>3} {:>4} {:>2} {:>5} {:>2} {:>3} {:>4} {:<4} {:<11} {:<gw$} {:>tw$.td$} {:>9.0} {:>5.1}% {:>pw$.pd$}",
            n + 1,
            c.gpus,
            c.t,
            c.cp,
            ep_cell(c),
            c.p,
            c.d,
            c.b,
            c.m,
            c.chunks,
            yn(c.sp),
            c.zero.level(),
            c.precision.name(),
            c.schedule.name(),
            strategy,
            r.iteration_time_s,
            r.tokens_per_s_per_gpu,
            100.0 * r.mfu,
            r.peak_memory_bytes as f64 / GIB
        );
    }
}

/// The text report: counts, why configurations lose, the ranked list, the front, the best.
pub fn table(
    base: &Scenario,
    args: &SweepArgs,
    result: &SweepResult,
    best: Option<&Outcome>,
    elapsed_s: f64,
) -> String {
    let mut s = String::new();
    let gpus: Vec<String> = args.gpu_counts().iter().map(u32::to_string).collect();
    let _ = writeln!(
        s,
        "{} on {} x {}, global batch {}, s {}, budget {:.1} GiB",
        base.model.name,
        gpus.join("/"),
        base.gpu.name,
        args.global_batch,
        base.batch.seq_len,
        base.plan.memory_budget_bytes as f64 / GIB
    );
    // Pruned configurations were never solved: whether they fit is unknown, so the feasible
    // count is then only that of the solved ones.
    let feasible = match result.pruned() {
        0 => format!(
            "{} feasible, {} solved in full",
            result.feasible(),
            result.solved()
        ),
        pruned => format!(
            "{} solved in full, {} of them feasible, {pruned} pruned unsolved (proven outside \
             the ranked list and the front; --exhaustive solves them)",
            result.solved(),
            result.feasible()
        ),
    };
    let _ = writeln!(
        s,
        "{} configurations, {feasible}, {:.2} s{}",
        result.configs(),
        elapsed_s,
        if args.exhaustive { " (exhaustive)" } else { "" }
    );
    let counts: Vec<String> = result
        .status_counts()
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let counts = if counts.is_empty() {
        "none (no configuration to solve)".to_string()
    } else {
        counts.join(", ")
    };
    let _ = writeln!(s, "by status: {counts}");
    if !result.rejected.is_empty() {
        let rejected: Vec<String> = result
            .rejected
            .iter()
            .map(|(k, v)| format!("{k} ({v})"))
            .collect();
        let _ = writeln!(s, "rejected: {}", rejected.join("; "));
    }
    if result.ranked.is_empty() {
        let _ = writeln!(s, "no feasible configuration");
        return s;
    }
    let merged = |idx: &[usize]| {
        let lines = sweep_tie_groups(&result.rows, idx).len();
        if lines < idx.len() {
            format!(
                " ({} on {lines} lines: those equal in time and memory share one)",
                idx.len()
            )
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        s,
        "\nranked (top {}){}:",
        result.ranked.len(),
        merged(&result.ranked)
    );
    rows_table(&mut s, result, &result.ranked);
    let _ = writeln!(
        s,
        "\nPareto front (iteration time against peak memory{}){}:",
        if args.gpu_counts().len() > 1 {
            " and GPUs"
        } else {
            ""
        },
        merged(&result.pareto)
    );
    rows_table(&mut s, result, &result.pareto);
    if let Some(o) = best {
        let _ = writeln!(s, "\nbest:");
        s.push_str(&super::plan::table(o));
    }
    s
}
