//! The crate's layers (`src/lib.rs`, "Layers"): a top-level module imports
//! only from its own layer or those below it. The test reads every
//! `crate::<module>` path in `src/` (comments and `#[cfg(test)] mod tests`
//! blocks left out) and fails on an import upward that is not one of the
//! [`KNOWN_UPWARD`] exceptions — and on an exception that no longer occurs,
//! so the list only shrinks. It also fails when the circles between
//! top-level modules are not exactly [`KNOWN_CIRCLES`], when two sibling
//! modules inside one import each other (but the interpreter's), and when
//! code in `src/policy/` touches the filesystem other than through the
//! inert stage's `Files` (issue 45: the engine hands the disk in).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::support::rust_files;

/// Lowest first. The same order is written in `src/lib.rs`.
const LAYERS: &[&[&str]] = &[
    // The shared vocabulary and leaves: no crate import above them.
    &[
        "names",
        "json",
        "clock",
        "paths",
        "rules",
        "shell",
        "request",
        "telemetry",
        "credentials",
        "catalogue",
    ],
    &["config"],
    // What decides, and its data: the deterministic stages, the evidence
    // packet and the reviewer model; the confined form of an inert
    // command; the decision, which carries them all (with the risk
    // ceilings that turn a verdict into one).
    &["policy", "evidence", "reviewer"],
    &["confine"],
    &["decision"],
    // State and its stores.
    &["store", "session", "grants", "audit", "feed"],
    &["pipeline"],
    &["engine"],
    // The ways in.
    &["hooks", "http", "server", "eval"],
    // What sets the ways in up: it reads the adapters (`hooks`).
    &["install", "doctor"],
    &["cli"],
];

/// Imports upward that stay, each with why: `(from, to, reason)`. None
/// today (issue 45 removed the last three: routing is compiled inside
/// `config`, and what policy and the audit know of each harness is in
/// `catalogue`); an entry needs a reason a reviewer accepts.
const KNOWN_UPWARD: &[(&str, &str, &str)] = &[];

/// Circles between top-level modules that stay (each sorted). None today;
/// an entry needs a reason a reviewer accepts.
const KNOWN_CIRCLES: &[&[&str]] = &[];

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without comments and its unit-test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file names through `crate::…` (paths and `use
/// crate::{a, b::c}` groups).
fn imports(code: &str, modules: &BTreeSet<&str>) -> BTreeSet<String> {
    imports_after(code, "crate::", modules)
}

/// The `modules` a file names right after `prefix` (`super::`,
/// `crate::config::`): paths and `{a, b::c}` groups.
fn imports_after(code: &str, prefix: &str, modules: &BTreeSet<&str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name = ident(item.trim());
                if modules.contains(name.as_str()) {
                    out.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if modules.contains(name.as_str()) {
                out.insert(name);
            }
        }
    }
    out
}

/// Module → the modules it imports, with the files that do.
fn graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let modules: BTreeSet<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    let root = src();
    let files = rust_files(&root);
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        if !modules.contains(module.as_str()) || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for target in imports(&code(&text), &modules) {
            if target != module {
                out.entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    out
}

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("`{module}` is in no layer"))
}

#[test]
fn every_top_level_module_has_a_layer() {
    let text = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for line in text.lines() {
        let name = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
            .or_else(|| {
                line.strip_prefix("pub use vouch_shell as ")
                    .and_then(|l| l.strip_suffix(';'))
            });
        if let Some(name) = name {
            layer_of(name);
        }
    }
}

#[test]
fn modules_import_only_downward_but_the_known_exceptions() {
    let graph = graph();
    let mut unexpected = Vec::new();
    let mut seen = BTreeSet::new();
    for (from, targets) in &graph {
        for (to, files) in targets {
            if layer_of(to) <= layer_of(from) {
                continue;
            }
            match KNOWN_UPWARD.iter().find(|(f, t, _)| f == from && t == to) {
                Some(_) => {
                    seen.insert((from.clone(), to.clone()));
                }
                None => unexpected.push(format!("{from} -> {to} ({files:?})")),
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "imports from a lower layer to a higher one (move what is shared down):\n{}",
        unexpected.join("\n")
    );
    let gone: Vec<String> = KNOWN_UPWARD
        .iter()
        .filter(|(f, t, _)| !seen.contains(&((*f).to_owned(), (*t).to_owned())))
        .map(|(f, t, _)| format!("{f} -> {t}"))
        .collect();
    assert!(
        gone.is_empty(),
        "these exceptions no longer occur; remove them from KNOWN_UPWARD: {gone:?}"
    );
}

/// The strongly connected components of more than one module.
fn circles(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = graph
        .keys()
        .chain(graph.values().flat_map(|t| t.keys()))
        .collect();
    let reaches = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for next in graph.get(&n).into_iter().flat_map(|t| t.keys()) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reaches(n))).collect();
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for n in &nodes {
        let mut component: Vec<String> = nodes
            .iter()
            .filter(|m| reach[*n].contains(**m) && reach[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        if component.len() > 1 {
            component.sort();
            out.insert(component);
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_circles_between_modules_are_the_known_ones() {
    let found = circles(&graph());
    let known: Vec<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|c| c.iter().map(|m| (*m).to_owned()).collect())
        .collect();
    assert_eq!(
        found, known,
        "circles between top-level modules changed (a new one is a layering error; a gone one \
         should leave KNOWN_CIRCLES)"
    );
}

/// The modules directly inside `dir` (files and directories with a
/// `mod.rs`), each with the code of its files.
fn children(dir: &std::path::Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "mod" || name == "tests" || name.ends_with("_tests") {
            continue;
        }
        let text = if path.is_dir() {
            if !path.join("mod.rs").is_file() {
                continue;
            }
            rust_files(&path)
                .iter()
                .filter(|f| !f.ends_with("tests.rs"))
                .map(|f| code(&std::fs::read_to_string(f).unwrap()))
                .collect::<Vec<_>>()
                .join("\n")
        } else if path.extension().is_some_and(|e| e == "rs") {
            code(&std::fs::read_to_string(&path).unwrap())
        } else {
            continue;
        };
        out.insert(name, text);
    }
    out
}

/// The circles between the modules directly inside `dir`, reading
/// `super::x` and `<path>::x` (`path` is how the code names `dir`:
/// `crate::config`, or `crate` for a crate's root).
fn sibling_circles(dir: &str, path: &str) -> Vec<Vec<String>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let kids = children(&root);
    let names: BTreeSet<&str> = kids.keys().map(String::as_str).collect();
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (name, text) in &kids {
        let named = imports_after(text, "super::", &names)
            .into_iter()
            .chain(imports_after(text, &format!("{path}::"), &names));
        for target in named {
            if target != *name {
                graph
                    .entry(name.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(dir.to_owned());
            }
        }
    }
    circles(&graph)
}

/// Inside the modules that had small circles (issue 45), the circles
/// between sibling modules: none, but the interpreter's, which is the
/// recursion of bash itself (a word's expansion runs a command
/// substitution, which is interpreted, whose commands expand words).
#[test]
fn no_circles_between_sibling_modules_but_the_interpreter() {
    for (dir, path) in [
        ("src/config", "crate::config"),
        ("src/evidence/redact", "crate::evidence::redact"),
        ("src/policy/hard_deny", "crate::policy::hard_deny"),
        ("src/policy/inert", "crate::policy::inert"),
        ("src/audit", "crate::audit"),
        ("src/session", "crate::session"),
        ("src/store", "crate::store"),
        ("src/hooks", "crate::hooks"),
        ("src/engine", "crate::engine"),
        ("src/http", "crate::http"),
        ("src/confine", "crate::confine"),
        ("src/reviewer", "crate::reviewer"),
    ] {
        assert_eq!(
            sibling_circles(dir, path),
            Vec::<Vec<String>>::new(),
            "{dir}"
        );
    }
    let interpreter: Vec<String> = [
        "builtins",
        "evaluated",
        "expand",
        "interp",
        "param",
        "printf",
        "runners",
    ]
    .iter()
    .map(|m| (*m).to_owned())
    .collect();
    assert_eq!(
        sibling_circles("crates/vouch-shell/src", "crate"),
        vec![interpreter]
    );
}

/// What code in `src/policy/` may not name: the filesystem's own calls.
/// The stages decide from what they are handed; the inert stage asks the
/// machine through `policy::inert::Files`, which the engine implements.
const FILESYSTEM_CALLS: &[&str] = &[
    ".exists()",
    ".try_exists(",
    ".is_dir()",
    ".is_file()",
    ".is_symlink()",
    ".metadata(",
    ".symlink_metadata(",
    ".read_dir(",
    ".canonicalize(",
    ".read_link(",
    "File::",
    "OpenOptions",
    "DirEntry",
    "MetadataExt",
];

/// Where `code` (comments and unit tests already left out) reaches the
/// filesystem itself: a [`FILESYSTEM_CALLS`] text, or the module `fs` named
/// in a path or a `use` group (`std::fs::read`, `use std::{fs, io}`).
fn filesystem_uses(code: &str) -> Vec<String> {
    let mut out: Vec<String> = FILESYSTEM_CALLS
        .iter()
        .filter(|call| code.contains(*call))
        .map(|call| (*call).to_owned())
        .collect();
    let fs_named = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == "fs");
    if fs_named {
        out.push("fs".to_owned());
    }
    out
}

#[test]
fn the_filesystem_scan_finds_what_it_looks_for() {
    for (code, found) in [
        ("let t = std::fs::read_to_string(p)?;", true),
        ("use std::{fs, io};", true),
        ("use std::os::unix::fs::MetadataExt as _;", true),
        ("if path.join(\".git\").exists() {", true),
        ("if !dir.is_dir() {", true),
        ("let m = entry.metadata();", true),
        ("let real = Path::new(p).canonicalize();", true),
        ("if ctx.files.exists(&git) {", false),
        ("let m = files.stat(&path)?; m.kind == Kind::File", false),
    ] {
        assert_eq!(!filesystem_uses(code).is_empty(), found, "{code}");
    }
}

#[test]
fn policy_reads_the_filesystem_only_through_files() {
    let root = src();
    let policy = root.join("policy");
    let files = rust_files(&policy);
    assert!(
        files.iter().any(|f| f.ends_with("inert/tree.rs")),
        "the scan does not see the inert stage"
    );
    let mut found = Vec::new();
    for file in files {
        if file.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for use_ in filesystem_uses(&code(&text)) {
            found.push(format!(
                "{}: `{use_}`",
                file.strip_prefix(&root).unwrap().display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "code in src/policy/ touches the filesystem itself; ask through \
         `policy::inert::Files` (the engine's `Disk` answers):\n{}",
        found.join("\n")
    );
}
