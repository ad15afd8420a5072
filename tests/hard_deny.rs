//! Hard-deny corpus: every `hard_deny*.jsonl` line must be denied (with the
//! expected category when the line names one) and every `benign*.jsonl` line
//! must not be hard-denied.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use serde::Deserialize;
use vouch::policy::hard_deny::{self, Context, Protected, Verdict};
use vouch::request::Request;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    surface: Option<String>,
    #[serde(default)]
    path: Option<String>,
    cwd: String,
    home: String,
    why: String,
    #[serde(default)]
    expect_category: Option<String>,
}

fn cases(file: &str) -> Vec<(usize, Case)> {
    let path = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let case: Case = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{file}:{}: bad fixture: {e}", i + 1));
            (i + 1, case)
        })
        .collect()
}

fn verdict(case: &Case) -> Verdict {
    let mut body = serde_json::json!({
        "session_id": "s-1",
        "surface": case.surface.clone().unwrap_or_else(|| "bash".to_owned()),
        "cwd": case.cwd,
        "home": case.home,
    });
    if let Some(c) = &case.command {
        body["command"] = c.clone().into();
    }
    if let Some(p) = &case.path {
        body["path"] = p.clone().into();
    }
    let request = Request::from_slice(body.to_string().as_bytes()).unwrap();
    let protected = Protected {
        paths: vec!["/opt/vouch/bin/vouch".to_owned()],
    };
    let ctx = Context {
        home: &case.home,
        cwd: Some(&case.cwd),
        protected: &protected,
    };
    hard_deny::check(&request, &ctx)
}

fn label(case: &Case) -> String {
    match (&case.command, &case.path) {
        (Some(c), _) => format!("`{c}`"),
        (None, Some(p)) => format!("{} `{p}`", case.surface.as_deref().unwrap_or("bash")),
        (None, None) => "(empty)".to_owned(),
    }
}

fn assert_all_deny(file: &str) -> usize {
    let mut failures = Vec::new();
    let all = cases(file);
    for (line, case) in &all {
        match verdict(case) {
            Verdict::Deny(d) => {
                assert!(
                    d.rule_id.starts_with(d.category.id()),
                    "{file}:{line}: rule id `{}` outside category `{}`",
                    d.rule_id,
                    d.category.id()
                );
                assert!(!d.rationale.is_empty());
                if let Some(expected) = &case.expect_category
                    && expected != d.category.id()
                {
                    failures.push(format!(
                        "{file}:{line}: {} ({}) denied as `{}` ({}), expected `{expected}`",
                        label(case),
                        case.why,
                        d.rule_id,
                        d.rationale
                    ));
                }
            }
            other => failures.push(format!(
                "{file}:{line}: {} ({}) must hard-deny, got {other:?}",
                label(case),
                case.why
            )),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    all.len()
}

fn assert_none_deny(file: &str) -> usize {
    let mut failures = Vec::new();
    let all = cases(file);
    for (line, case) in &all {
        if let Verdict::Deny(d) = verdict(case) {
            failures.push(format!(
                "{file}:{line}: {} ({}) must not hard-deny, got `{}`: {}",
                label(case),
                case.why,
                d.rule_id,
                d.rationale
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    all.len()
}

#[test]
fn public_hard_deny_corpus_denies() {
    assert!(assert_all_deny("hard_deny.jsonl") >= 20);
}

#[test]
fn public_benign_corpus_is_not_hard_denied() {
    assert!(assert_none_deny("benign.jsonl") >= 20);
}

#[test]
fn extra_hard_deny_corpus_denies_with_category() {
    assert!(assert_all_deny("hard_deny_extra.jsonl") >= 25);
}

#[test]
fn extra_benign_corpus_is_not_hard_denied() {
    assert!(assert_none_deny("benign_extra.jsonl") >= 20);
}
