//! The house rules that the compiler does not check by itself (docs/architecture.md): the
//! engine's top-level modules import each other without cycles, and none of them names the
//! terminal UI or a terminal crate; and the "never" list: a solve touches no file, thread,
//! environment or terminal; views never mutate and never compute what the outcome carries;
//! the TUI asks the engine rather than running its steps; the library's surface is one list
//! with one path per name; no file is longer than 600 lines of code.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The engine's top-level modules (everything under `src/` but `main.rs`, `cli/` and `tui/`).
fn engine_modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules = BTreeMap::new();
    let Ok(entries) = fs::read_dir(src) else {
        return modules;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if matches!(stem.as_str(), "main" | "lib" | "cli" | "tui") {
            continue;
        }
        let files = modules.entry(stem).or_insert_with(Vec::new);
        if path.is_dir() {
            collect_rs(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    modules
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a line of code names through `crate::`.
fn crate_references(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

/// Code lines of a file: comments and doc comments dropped (they may name anything).
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with("//"))
}

fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = engine_modules(&src);
    let mut graph = BTreeMap::new();
    for (name, files) in &modules {
        let mut deps = BTreeSet::new();
        for file in files {
            let text = fs::read_to_string(file).unwrap_or_default();
            for line in code_lines(&text) {
                for dep in crate_references(line) {
                    if dep != *name {
                        deps.insert(dep);
                    }
                }
                for terminal in ["ratatui", "crossterm", "notify::"] {
                    assert!(
                        !line.contains(terminal),
                        "{} names the terminal crate `{terminal}`: {line}",
                        file.display()
                    );
                }
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

/// A cycle in `graph`, as the list of modules along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if graph.contains_key(next)
                && let Some(cycle) = visit(next, graph, path, done)
            {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn engine_modules_import_each_other_without_cycles() {
    let graph = import_graph();
    for core in ["scenario", "anatomy", "schedule", "plan", "sim", "solve"] {
        assert!(graph.contains_key(core), "engine module {core} not found");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import cycle between engine modules: {}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn engine_modules_never_import_the_ui_or_the_command_line() {
    for (module, deps) in import_graph() {
        for ui in ["tui", "cli"] {
            assert!(!deps.contains(ui), "engine module {module} imports {ui}");
        }
    }
}

#[test]
fn the_scenario_is_the_bottom_layer() {
    let graph = import_graph();
    let deps = graph.get("scenario").cloned().unwrap_or_default();
    let engine: Vec<&String> = deps.iter().filter(|d| graph.contains_key(*d)).collect();
    assert!(engine.is_empty(), "scenario imports {engine:?}");
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    graph.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    let cycle = find_cycle(&graph).unwrap_or_default();
    assert_eq!(cycle, ["a", "b", "c", "a"]);
    graph.insert("c".to_string(), BTreeSet::new());
    assert_eq!(find_cycle(&graph), None);
}

#[test]
fn crate_references_reads_grouped_imports() {
    assert_eq!(crate_references("use crate::plan::Strategy;"), ["plan"]);
    assert_eq!(
        crate_references("use crate::{sim::Timeline, schedule::Op};"),
        ["sim", "schedule"]
    );
}

/// Lines of a source file before its `#[cfg(test)]` module (the code a reader must hold).
fn code_length(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

#[test]
fn no_source_file_is_longer_than_600_lines_of_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect_rs(&src, &mut files);
    assert!(files.len() > 50, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = code_length(&fs::read_to_string(f).unwrap_or_default());
            (n > 600).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 600 lines of code: {long:?}");
    assert_eq!(code_length("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
}

/// Whether `file` is a module its parent declares only for tests (`#[cfg(test)]` on the line
/// above its `mod` line), such as a calibration check kept in a file of its own.
fn test_only(file: &Path) -> bool {
    let (Some(stem), Some(dir)) = (file.file_stem(), file.parent()) else {
        return false;
    };
    let (name, dir) = if stem == "mod" {
        match (dir.file_name(), dir.parent()) {
            (Some(n), Some(up)) => (n, up),
            _ => return false,
        }
    } else {
        (stem, dir)
    };
    let name = name.to_string_lossy();
    let declaring = [
        dir.join("mod.rs"),
        dir.join("lib.rs"),
        dir.with_extension("rs"),
    ];
    declaring
        .iter()
        .filter(|d| d.as_path() != file)
        .filter_map(|d| fs::read_to_string(d).ok())
        .any(|text| {
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            lines.windows(2).any(|w| {
                w[0] == "#[cfg(test)]"
                    && w[1]
                        .trim_start_matches("pub(crate) ")
                        .trim_start_matches("pub ")
                        == format!("mod {name};")
            })
        })
}

/// The files of `src/<dir>` (recursively), each with its code lines: comments dropped and
/// the `#[cfg(test)]` module cut off, files compiled only for tests left out (tests may
/// print, read files and spawn threads).
fn code_of(dir: &str) -> Vec<(PathBuf, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    if root.is_dir() {
        collect_rs(&root, &mut files);
    } else {
        files.push(root.with_extension("rs"));
    }
    files.retain(|f| !test_only(f));
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = fs::read_to_string(&f).unwrap_or_default();
            let lines = code_lines(&text)
                .take_while(|l| !l.starts_with("#[cfg(test)]"))
                .map(str::to_string)
                .collect();
            (f, lines)
        })
        .collect()
}

/// Every line of `dirs` that names one of `never`, as `file: line`.
fn naming(dirs: &[&str], never: &[&str], except: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for dir in dirs {
        for (file, lines) in code_of(dir) {
            let name = file.display().to_string();
            if except.iter().any(|e| name.contains(e)) {
                continue;
            }
            for line in lines {
                if let Some(word) = never.iter().find(|w| line.contains(*w)) {
                    found.push(format!("{name}: `{word}` in {}", line.trim()));
                }
            }
        }
    }
    found
}

/// What a solve runs through is pure: no files, no environment, no processes, no threads, no
/// printing (the callers own all of that: the CLI, the TUI, the sweep's workers). Only the
/// preset loader reads files and the environment, and only `files.rs` writes files.
#[test]
fn a_solve_touches_no_file_thread_or_terminal() {
    let solve_path = [
        "anatomy",
        "cancel",
        "export",
        "outcome",
        "plan",
        "schedule",
        "sim",
        "solve",
        "reference",
    ];
    let never = [
        "std::fs",
        "std::thread",
        "std::env",
        "std::process",
        "std::io",
        "std::net",
        "rayon",
        "println!",
        "eprintln!",
        "print!(",
        "eprint!(",
        "dbg!(",
    ];
    let found = naming(&solve_path, &never, &[]);
    assert!(found.is_empty(), "the solve path names: {found:#?}");
    // Files compiled only for tests are tests: they may print their tables.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert!(test_only(&src.join("anatomy/calibration_h100_tests.rs")));
    assert!(!test_only(&src.join("anatomy/cost.rs")));
    assert!(!test_only(&src.join("anatomy/mod.rs")));
    // The scenario reads preset files (and where they are) in one place only.
    let found = naming(&["scenario"], &never, &["presets/files.rs"]);
    assert!(found.is_empty(), "the scenario names: {found:#?}");
    // The sweep runs its candidates on threads, but reads and writes nothing.
    let io = [
        "std::fs",
        "std::env",
        "std::process",
        "std::io",
        "println!",
        "eprintln!",
    ];
    let found = naming(&["sweep"], &io, &[]);
    assert!(found.is_empty(), "the sweep names: {found:#?}");
}

/// The views only read: no `&mut App`, no interior mutability, and nothing they draw is
/// computed by calling the engine (what they show comes computed with the outcome). The rest
/// of the TUI asks the engine through its entry points (a solve, an abstract run) and never
/// builds an anatomy, generates a schedule or simulates one itself.
#[test]
fn views_only_read_and_the_tui_asks_the_engine() {
    let mutation = [
        "&mut App",
        "Cell<",
        "RefCell",
        "Mutex",
        "Atomic",
        "solve(",
        "simulate(",
        "generate(",
        "Anatomy::build",
        "AbstractRun",
    ];
    let found = naming(&["tui/view", "tui/widgets"], &mutation, &[]);
    assert!(found.is_empty(), "views: {found:#?}");
    let engine_steps = [
        "Anatomy::build",
        "schedule::generate",
        "sim::simulate",
        "generate_cancellable",
        "SimCosts::abstract_run",
        "schedule_of",
    ];
    // The fixture stands in for the engine in tests: it may run the engine's steps.
    let found = naming(&["tui"], &engine_steps, &["tui/fixture/"]);
    assert!(
        found.is_empty(),
        "the TUI runs engine steps itself: {found:#?}"
    );
}

/// The library's surface is one curated list: `lib.rs` declares its modules private (the
/// terminal UI, with its own list, aside) and re-exports each public name once, so every type
/// has one path; the TUI's modules are private too (its test fixtures aside).
#[test]
fn the_surface_is_one_list_with_one_path_per_name() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .unwrap_or_default();
    let public_modules: Vec<&str> = code_lines(&lib)
        .filter(|l| l.starts_with("pub mod "))
        .collect();
    assert_eq!(public_modules, ["pub mod tui;"], "public modules of lib.rs");
    let uses: String = code_lines(&lib)
        .skip_while(|l| !l.starts_with("pub use "))
        .collect::<Vec<_>>()
        .join(" ");
    let mut names = BTreeSet::new();
    for statement in uses.split(';').filter(|s| s.contains("pub use ")) {
        let body = statement.rsplit("::{").next().unwrap_or("");
        let items: Vec<&str> = if statement.contains("::{") {
            body.trim_end_matches('}').split(',').collect()
        } else {
            vec![statement.rsplit("::").next().unwrap_or("")]
        };
        for item in items {
            let name = item.rsplit(" as ").next().unwrap_or("").trim().to_string();
            if !name.is_empty() {
                assert!(names.insert(name.clone()), "{name} is exported twice");
            }
        }
    }
    for name in [
        "Scenario",
        "Outcome",
        "solve",
        "solve_with",
        "Strategy",
        "ScheduleKind",
    ] {
        assert!(names.contains(name), "{name} is not exported: {names:?}");
    }
    let tui = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui/mod.rs"))
        .unwrap_or_default();
    let tui_modules: Vec<&str> = code_lines(&tui)
        .filter(|l| l.starts_with("pub mod "))
        .collect();
    assert_eq!(
        tui_modules,
        ["pub mod fixture;"],
        "public modules of the TUI"
    );
}
