//! Two things are generated here, and one link option is set.
//!
//! **The link option.** On Linux the `vouch` binary is linked as a
//! position-dependent executable (`-no-pie`). A position-independent one
//! has every pointer in its static data (~42,000 of them: vtables, panic
//! locations, string tables) rewritten by the dynamic loader at every
//! start, which dirties ~190 pages; that was ~0.45 ms of each `vouch
//! confine` and each `vouch hook` call (`cargo bench --bench confine`).
//! What it costs: the executable's own code and data sit at a fixed
//! address (its libraries, heap and stack are still randomized), which
//! only matters to an attacker who already holds a memory-safety bug; the
//! crate forbids `unsafe` code (docs/confine.md, "Start-up").
//!
//! **The harness registry.** Every file in `src/hooks/harnesses/` is one
//! harness adapter that defines `pub static HARNESS`; the registry lists
//! them all (`hooks::harnesses::ALL`, in file-name order), so adding a
//! harness is adding its file, and what the registry cannot carry: its
//! entry in `src/catalogue.rs` (its name and protected files, in the same
//! order: `tests/it/hooks.rs` checks), its audit rule language in
//! `src/audit/targets/` (`tests/it/audit.rs` checks), its repository
//! checks in `src/doctor/repo.rs` (whose table names each harness's
//! directory) and, for a transcript format not yet read, a parser (the
//! Known gaps of `src/lib.rs`).
//!
//! **The redaction rules.** Turns the redaction rule files (`src/evidence/redact/rules/*.toml`, in
//! gitleaks' format) into Rust statics at build time, so a short-lived
//! `vouch hook` or `vouch review` process does not parse ~100 KiB of TOML
//! before its first redaction.
//!
//! The rule data is checked here the way it was checked at every start
//! before: a file that is not valid TOML of the expected shape, a rule with
//! a pattern but no keywords, or an id used twice fails the build with the
//! file and the rule named. Patterns are checked by the `rules_compile` unit
//! test, which builds every automaton; a pattern that still failed at run
//! time would redact its rule's whole window (fail closed).

use std::collections::HashSet;
use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

/// The rule files, in load order (ids must be unique across both).
const FILES: &[&str] = &["gitleaks.toml", "vouch.toml"];
const RULES_DIR: &str = "src/evidence/redact/rules";

#[derive(Deserialize)]
struct RuleFile {
    #[serde(default)]
    allowlist: Option<AllowSpec>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default, rename = "secretGroup")]
    secret_group: Option<usize>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Deserialize)]
struct AllowSpec {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

const HARNESSES_DIR: &str = "src/hooks/harnesses";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
    harnesses()?;
    redaction_rules()
}

/// `harnesses.rs`: one module per adapter file and the table of them.
fn harnesses() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-changed={HARNESSES_DIR}");
    let root = std::env::var("CARGO_MANIFEST_DIR")?;
    let dir = Path::new(&root).join(HARNESSES_DIR);
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir)
        .map_err(|e| format!("harness registry: cannot read `{}`: {e}", dir.display()))?
    {
        let path = entry?.path();
        let stem = path.file_stem().and_then(|s| s.to_str());
        match (stem, path.extension().and_then(|e| e.to_str())) {
            (Some(stem), Some("rs")) => {
                if !stem
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                {
                    return Err(format!(
                        "harness registry: `{}` is not a Rust module name (lowercase, digits, `_`)",
                        path.display()
                    )
                    .into());
                }
                names.push((stem.to_owned(), path.clone()));
            }
            _ => {
                return Err(format!(
                    "harness registry: `{}` is not an adapter file (`<name>.rs`)",
                    path.display()
                )
                .into());
            }
        }
    }
    names.sort();
    let mut out = format!("// Generated by build.rs from {HARNESSES_DIR}/*.rs; do not edit.\n");
    for (name, path) in &names {
        println!("cargo::rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "#[path = {:?}]\npub mod {name};",
            path.display().to_string()
        );
    }
    out.push_str("/// Every harness adapter, in file-name order.\n");
    out.push_str("pub static ALL: &[&dyn super::Harness] = &[\n");
    for (name, _) in &names {
        let _ = writeln!(out, "    &{name}::HARNESS,");
    }
    out.push_str("];\n");
    let dir = std::env::var("OUT_DIR")?;
    std::fs::write(Path::new(&dir).join("harnesses.rs"), out)?;
    Ok(())
}

/// `redaction_rules.rs`: the rule statics.
fn redaction_rules() -> Result<(), Box<dyn Error>> {
    let mut globals = String::new();
    let mut rules = String::new();
    let mut seen = HashSet::new();
    for file in FILES {
        let path = Path::new(RULES_DIR).join(file);
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("redaction rules: cannot read `{}`: {e}", path.display()))?;
        let parsed: RuleFile = toml::from_str(&text)
            .map_err(|e| format!("redaction rules: `{file}` is not valid: {e}"))?;
        if let Some(allow) = &parsed.allowlist {
            globals.push_str(&allow_literal(allow));
            globals.push_str(",\n");
        }
        for rule in &parsed.rules {
            if !seen.insert(rule.id.clone()) {
                return Err(format!("redaction rules: rule id `{}` appears twice", rule.id).into());
            }
            if rule.regex.is_some() && rule.keywords.is_empty() {
                return Err(format!(
                    "redaction rules: rule `{}` in `{file}` has no keywords, so it could never run",
                    rule.id
                )
                .into());
            }
            rules.push_str(&rule_literal(rule));
            rules.push_str(",\n");
        }
    }
    let out = format!(
        "// Generated by build.rs from {RULES_DIR}/*.toml; do not edit.\n\
         pub(super) static GLOBAL_ALLOW: &[AllowData] = &[\n{globals}];\n\
         pub(super) static RULE_DATA: &[RuleData] = &[\n{rules}];\n"
    );
    let dir = std::env::var("OUT_DIR")?;
    std::fs::write(Path::new(&dir).join("redaction_rules.rs"), out)?;
    Ok(())
}

/// A Rust string literal (`{:?}` of a `str` is one).
fn lit(s: &str) -> String {
    format!("{s:?}")
}

fn opt_lit(s: Option<&str>) -> String {
    s.map_or_else(|| "None".to_owned(), |s| format!("Some({})", lit(s)))
}

fn list(items: impl Iterator<Item = String>) -> String {
    let mut out = String::from("&[");
    for item in items {
        let _ = write!(out, "{item}, ");
    }
    out.push(']');
    out
}

fn rule_literal(r: &RuleSpec) -> String {
    format!(
        "RuleData {{ id: {}, regex: {}, keywords: {}, entropy: {}, secret_group: {}, \
         has_path: {}, allowlists: {} }}",
        lit(&r.id),
        opt_lit(r.regex.as_deref()),
        // Keywords match case-insensitively; stored lowercased.
        list(r.keywords.iter().map(|k| lit(&k.to_ascii_lowercase()))),
        r.entropy
            .map_or_else(|| "None".to_owned(), |e| format!("Some({e:?})")),
        r.secret_group
            .map_or_else(|| "None".to_owned(), |g| format!("Some({g})")),
        r.path.is_some(),
        list(r.allowlists.iter().map(allow_literal)),
    )
}

fn allow_literal(a: &AllowSpec) -> String {
    format!(
        "AllowData {{ regexes: {}, regex_target: {}, stopwords: {}, has_paths: {}, condition: {} }}",
        list(a.regexes.iter().map(|r| lit(r))),
        opt_lit(a.regex_target.as_deref()),
        // Stopwords match case-insensitively; stored lowercased.
        list(a.stopwords.iter().map(|w| lit(&w.to_ascii_lowercase()))),
        !a.paths.is_empty(),
        opt_lit(a.condition.as_deref()),
    )
}
