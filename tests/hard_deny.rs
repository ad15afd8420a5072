//! Hard-deny corpus: every `hard_deny*.jsonl` line must be denied (with the
//! expected category when the line names one) and every `benign*.jsonl` line
//! must not be hard-denied. Each line is its own test (libtest-mimic).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use libtest_mimic::{Arguments, Failed, Trial};
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

#[path = "it/support/fixtures.rs"]
mod fixtures;

fn cases(file: &str) -> Vec<(usize, Case)> {
    fixtures::jsonl(file)
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

/// One deny case: denied, with a rule id inside its category, a rationale,
/// and the expected category when the fixture names one.
fn check_denies(file: &str, line: usize, case: &Case) -> Result<(), String> {
    match verdict(case) {
        Verdict::Deny(d) => {
            if !d.rule_id.starts_with(d.category.id()) {
                return Err(format!(
                    "{file}:{line}: rule id `{}` outside category `{}`",
                    d.rule_id,
                    d.category.id()
                ));
            }
            if d.rationale.is_empty() {
                return Err(format!("{file}:{line}: empty rationale"));
            }
            match &case.expect_category {
                Some(expected) if expected != d.category.id() => Err(format!(
                    "{file}:{line}: {} ({}) denied as `{}` ({}), expected `{expected}`",
                    label(case),
                    case.why,
                    d.rule_id,
                    d.rationale
                )),
                Some(_) | None => Ok(()),
            }
        }
        other => Err(format!(
            "{file}:{line}: {} ({}) must hard-deny, got {other:?}",
            label(case),
            case.why
        )),
    }
}

/// One benign case: never a hard deny.
fn check_not_denied(file: &str, line: usize, case: &Case) -> Result<(), String> {
    match verdict(case) {
        Verdict::Deny(d) => Err(format!(
            "{file}:{line}: {} ({}) must not hard-deny, got `{}`: {}",
            label(case),
            case.why,
            d.rule_id,
            d.rationale
        )),
        Verdict::Clear | Verdict::ParseFailed { .. } => Ok(()),
    }
}

/// Every fixture line is its own test, named after its file, line and
/// command, so a failure names the case and `cargo test -- <filter>` runs one.
fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let files: [(&str, usize, bool); 4] = [
        ("hard_deny.jsonl", 20, true),
        ("hard_deny_extra.jsonl", 25, true),
        ("benign.jsonl", 20, false),
        ("benign_extra.jsonl", 20, false),
    ];
    for (file, at_least, denies) in files {
        let all = cases(file);
        let count = all.len();
        trials.push(Trial::test(
            format!("{file}: at least {at_least} cases"),
            move || {
                if count >= at_least {
                    Ok(())
                } else {
                    Err(format!("{file} has {count} cases").into())
                }
            },
        ));
        for (line, case) in all {
            let name = format!("{file}:{line} {}", label(&case));
            trials.push(Trial::test(name, move || {
                let result = if denies {
                    check_denies(file, line, &case)
                } else {
                    check_not_denied(file, line, &case)
                };
                result.map_err(Failed::from)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
