//! The rule registry (`src/rules.rs`, issue 45): `docs/rules.md` is the
//! page it generates; no source file outside it spells a rule id; every
//! routing rule is some `routing.jsonl` line's `rule_id` and every line's
//! id is registered. (That every hard-deny rule fires in a fixture, and
//! that each fixture's `expect_rule` is registered and fires, is checked
//! where those fixtures run: `tests/hard_deny.rs`.)

use std::path::PathBuf;

use vouch::rules::{Family, RuleId, StageRule};

use crate::support::rust_files;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn docs_rules_md_is_the_generated_page() {
    let path = root().join("docs/rules.md");
    let on_disk = std::fs::read_to_string(&path).expect("docs/rules.md");
    assert!(
        on_disk == vouch::rules::reference_page(),
        "docs/rules.md is stale: run `cargo run --example rules_doc > docs/rules.md`"
    );
}

/// Where `text` holds a string literal starting with a rule family's id and
/// a `/` (`"wipe-root-or-home/…`, `"routing/…`).
fn id_literals(text: &str) -> Vec<String> {
    let families: Vec<&str> = RuleId::all().map(|r| r.family().id()).collect();
    let mut out = Vec::new();
    for (at, _) in text.match_indices('"') {
        let rest = &text[at + 1..];
        if let Some(family) = families
            .iter()
            .find(|f| rest.starts_with(**f) && rest[f.len()..].starts_with('/'))
        {
            let end = rest.find(['"', '\n']).unwrap_or(rest.len());
            let literal = &rest[..end];
            // A family followed by a name, not a path that merely starts
            // with one (`"routing/…"` docs paths do not occur in code).
            if literal.len() > family.len() + 1 {
                out.push(literal.to_owned());
            }
        }
    }
    out
}

#[test]
fn no_rule_id_is_spelled_outside_the_registry() {
    let mut files = rust_files(&root().join("src"));
    files.extend(rust_files(&root().join("crates/vouch-shell/src")));
    let registry = root().join("src/rules.rs");
    let mut found = Vec::new();
    for file in files.iter().filter(|f| **f != registry) {
        let text = std::fs::read_to_string(file).unwrap();
        for literal in id_literals(&text) {
            found.push(format!("{}: \"{literal}\"", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "rule ids written outside src/rules.rs (name the RuleId instead):\n{}",
        found.join("\n")
    );
    // The scan finds what it is for.
    assert_eq!(
        id_literals("let r = \"fork-bomb/recursive-function\";"),
        ["fork-bomb/recursive-function"]
    );
}

#[test]
fn routing_fixtures_name_every_routing_rule_and_only_registered_ones() {
    let mut named = std::collections::HashSet::new();
    for (line, case) in crate::support::fixtures::jsonl::<serde_json::Value>("routing.jsonl") {
        let Some(id) = case["rule_id"].as_str() else {
            continue;
        };
        let rule = RuleId::parse(id)
            .unwrap_or_else(|| panic!("routing.jsonl:{line}: `{id}` is not registered"));
        assert_eq!(rule.family(), Family::Routing, "routing.jsonl:{line}: {id}");
        named.insert(rule);
    }
    // Without a reviewer the pipeline answers with its own rule
    // (tests/it/decide.rs checks it); routing.jsonl exercises the router.
    let missing: Vec<&str> = StageRule::ALL
        .iter()
        .map(|r| RuleId::Stage(*r))
        .filter(|r| r.family() == Family::Routing)
        .filter(|r| *r != RuleId::Stage(StageRule::RoutingNoReviewer))
        .filter(|r| !named.contains(r))
        .map(RuleId::as_str)
        .collect();
    assert!(missing.is_empty(), "no routing.jsonl line for {missing:?}");
}
