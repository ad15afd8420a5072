//! Hard-deny corpus: every `hard_deny*.jsonl` line must be denied (with the
//! expected category when the line names one) and every `benign*.jsonl` line
//! must not be hard-denied. Each line is its own test (libtest-mimic).
//!
//! Lines may also say:
//! - `expect_category`: one category id, or a list of ids any of which is right;
//! - `expect_rule`: the rule id the deny names (`src/rules.rs`), or a list of
//!   ids any of which is right — required on every deny line but a `stretch`
//!   one, checked against the registry;
//! - `stretch: true` (deny files only): a static reading cannot decide the
//!   line, so a hard deny is welcome but not required — the command must at
//!   least reach the model with a note (never [`DenyVerdict::Clear`]); `note`
//!   says why;
//! - `mechanism`: the attack or false-positive mechanism the line exercises
//!   (required in the red-team files, so coverage can be counted);
//! - `source`: where the case came from when it is not our own (a peer's
//!   test suite, rewritten in our own form).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeMap, HashMap};

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use vouch::policy::hard_deny::{self, DenyContext, DenyVerdict, VouchFiles};
use vouch::request::Request;
use vouch::rules::{Category, RuleId};

#[derive(Debug, Clone, Deserialize)]
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
    expect_category: Option<Expected>,
    #[serde(default)]
    expect_rule: Option<Expected>,
    #[serde(default)]
    stretch: bool,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    mechanism: Option<String>,
    #[serde(default)]
    source: Option<String>,
}

/// One expected category, or several of which any is right (a command that
/// is catastrophic either way, e.g. `rm -rf "$VOUCH_HOME"/`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Expected {
    One(String),
    Any(Vec<String>),
}

impl Expected {
    fn ids(&self) -> Vec<&str> {
        match self {
            Expected::One(id) => vec![id.as_str()],
            Expected::Any(ids) => ids.iter().map(String::as_str).collect(),
        }
    }
}

/// What a file's lines must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Denies,
    Benign,
}

/// One corpus file: its name, the least number of lines it must hold, what
/// its lines must do, and whether it is a red-team file (stricter schema).
struct CorpusFile {
    name: &'static str,
    at_least: usize,
    kind: Kind,
    red_team: bool,
}

const FILES: [CorpusFile; 16] = [
    CorpusFile {
        name: "hard_deny.jsonl",
        at_least: 20,
        kind: Kind::Denies,
        red_team: false,
    },
    CorpusFile {
        name: "hard_deny_extra.jsonl",
        at_least: 25,
        kind: Kind::Denies,
        red_team: false,
    },
    CorpusFile {
        name: "hard_deny_redteam.jsonl",
        at_least: 300,
        kind: Kind::Denies,
        red_team: true,
    },
    CorpusFile {
        name: "hard_deny_peers.jsonl",
        at_least: 35,
        kind: Kind::Denies,
        red_team: true,
    },
    CorpusFile {
        name: "hard_deny_lookalikes.jsonl",
        at_least: 40,
        kind: Kind::Denies,
        red_team: true,
    },
    CorpusFile {
        name: "hard_deny_floor.jsonl",
        at_least: 200,
        kind: Kind::Denies,
        red_team: true,
    },
    CorpusFile {
        name: "hard_deny_mechanisms.jsonl",
        at_least: 120,
        kind: Kind::Denies,
        red_team: true,
    },
    CorpusFile {
        name: "hard_deny_tables.jsonl",
        at_least: 250,
        kind: Kind::Denies,
        red_team: true,
    },
    CorpusFile {
        name: "benign.jsonl",
        at_least: 20,
        kind: Kind::Benign,
        red_team: false,
    },
    CorpusFile {
        name: "benign_extra.jsonl",
        at_least: 20,
        kind: Kind::Benign,
        red_team: false,
    },
    CorpusFile {
        name: "benign_redteam.jsonl",
        at_least: 150,
        kind: Kind::Benign,
        red_team: true,
    },
    CorpusFile {
        name: "benign_peers.jsonl",
        at_least: 5,
        kind: Kind::Benign,
        red_team: true,
    },
    CorpusFile {
        name: "benign_lookalikes.jsonl",
        at_least: 60,
        kind: Kind::Benign,
        red_team: true,
    },
    CorpusFile {
        name: "benign_floor.jsonl",
        at_least: 50,
        kind: Kind::Benign,
        red_team: true,
    },
    CorpusFile {
        name: "benign_mechanisms.jsonl",
        at_least: 40,
        kind: Kind::Benign,
        red_team: true,
    },
    CorpusFile {
        name: "benign_tables.jsonl",
        at_least: 150,
        kind: Kind::Benign,
        red_team: true,
    },
];

#[path = "it/support/fixtures.rs"]
mod fixtures;

fn cases(file: &str) -> Vec<(usize, Case)> {
    fixtures::jsonl(file)
}

/// Schema rules beyond what serde checks; a broken line fails as its own
/// test instead of silently testing less.
fn check_schema(file: &CorpusFile, line: usize, case: &Case) -> Result<(), String> {
    let at = format!("{}:{line}", file.name);
    if case.command.is_none() == case.path.is_none() {
        return Err(format!(
            "{at}: exactly one of `command` and `path` is required"
        ));
    }
    if case.path.is_some() && case.surface.is_none() {
        return Err(format!("{at}: a `path` case needs its `surface`"));
    }
    // A category or rule the registry does not know is a typo, caught
    // before it can make a line pass for the wrong reason.
    if let Some(expected) = &case.expect_category {
        for id in expected.ids() {
            if !Category::ALL.iter().any(|c| c.id() == id) {
                return Err(format!("{at}: unknown category `{id}`"));
            }
        }
    }
    if let Some(expected) = &case.expect_rule {
        for id in expected.ids() {
            let Some(RuleId::Hard(rule)) = RuleId::parse(id) else {
                return Err(format!(
                    "{at}: `{id}` is not a hard-deny rule of src/rules.rs"
                ));
            };
            if let Some(categories) = &case.expect_category
                && !categories.ids().contains(&rule.category().id())
            {
                return Err(format!(
                    "{at}: rule `{id}` is not in the expected category `{}`",
                    categories.ids().join("` or `")
                ));
            }
        }
    }
    if file.kind == Kind::Benign && case.expect_rule.is_some() {
        return Err(format!("{at}: a benign line names no rule"));
    }
    if file.kind == Kind::Denies && !case.stretch && case.expect_rule.is_none() {
        return Err(format!("{at}: a deny line names its `expect_rule`"));
    }
    if case.stretch && file.kind == Kind::Benign {
        return Err(format!("{at}: `stretch` only applies to deny cases"));
    }
    if case.stretch && case.note.as_deref().is_none_or(str::is_empty) {
        return Err(format!("{at}: a `stretch` case needs a `note` saying why"));
    }
    if file.red_team {
        if case.mechanism.as_deref().is_none_or(str::is_empty) {
            return Err(format!("{at}: red-team lines name their `mechanism`"));
        }
        if file.kind == Kind::Denies && case.expect_category.is_none() {
            return Err(format!(
                "{at}: red-team deny lines name their `expect_category`"
            ));
        }
    }
    Ok(())
}

fn verdict(case: &Case) -> DenyVerdict {
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
    let protected = VouchFiles {
        paths: vec!["/opt/vouch/bin/vouch".to_owned()],
        config_only: Vec::new(),
        vars: Vec::new(),
    };
    let ctx = DenyContext {
        home: &case.home,
        cwd: Some(&case.cwd),
        protected: &protected,
        limits: &vouch::shell::Limits::DEFAULT,
    };
    hard_deny::check(&request, &ctx)
}

/// The case's reason, with its source when it came from elsewhere.
fn about(case: &Case) -> String {
    match &case.source {
        Some(source) => format!("{}; from {source}", case.why),
        None => case.why.clone(),
    }
}

fn label(case: &Case) -> String {
    match (&case.command, &case.path) {
        (Some(c), _) => format!("`{c}`"),
        (None, Some(p)) => format!("{} `{p}`", case.surface.as_deref().unwrap_or("bash")),
        (None, None) => "(empty)".to_owned(),
    }
}

/// One deny case: denied, with a rule id inside its category, a rationale,
/// and an expected category when the fixture names them. A `stretch` case
/// may instead reach the model with a note.
fn check_denies(file: &str, line: usize, case: &Case) -> Result<(), String> {
    match verdict(case) {
        DenyVerdict::Deny(d) => {
            if d.rationale.is_empty() {
                return Err(format!("{file}:{line}: empty rationale"));
            }
            let wrong = |what: &str, expected: &Expected| {
                Err(format!(
                    "{file}:{line}: {} ({}) denied as `{}` ({}), expected {what} `{}`",
                    label(case),
                    about(case),
                    d.rule_id(),
                    d.rationale,
                    expected.ids().join("` or `")
                ))
            };
            match (&case.expect_category, &case.expect_rule) {
                (Some(expected), _) if !expected.ids().contains(&d.category().id()) => {
                    wrong("category", expected)
                }
                (_, Some(expected)) if !expected.ids().contains(&d.rule_id()) => {
                    wrong("rule", expected)
                }
                _ => Ok(()),
            }
        }
        // A stretch case that could not be decided statically goes to the
        // model with the parser's note: that is what it asks for.
        DenyVerdict::ParseFailed { .. } | DenyVerdict::Incomplete { .. } if case.stretch => Ok(()),
        other @ (DenyVerdict::Clear
        | DenyVerdict::ParseFailed { .. }
        | DenyVerdict::Incomplete { .. }) => Err(format!(
            "{file}:{line}: {} ({}) must hard-deny{}, got {other:?}",
            label(case),
            about(case),
            if case.stretch {
                " or reach the model with a note"
            } else {
                ""
            }
        )),
    }
}

/// One benign case: never a hard deny.
fn check_not_denied(file: &str, line: usize, case: &Case) -> Result<(), String> {
    match verdict(case) {
        DenyVerdict::Deny(d) => Err(format!(
            "{file}:{line}: {} ({}) must not hard-deny, got `{}`: {}",
            label(case),
            about(case),
            d.rule_id(),
            d.rationale
        )),
        DenyVerdict::Clear | DenyVerdict::ParseFailed { .. } | DenyVerdict::Incomplete { .. } => {
            Ok(())
        }
    }
}

/// Every harness adapter's protected configuration (its `Harness::protected`,
/// so a new harness is covered by adding its file): writing each protected
/// file, in the project and in the home directory, and removing each
/// directory the harness owns, is a trust-boundary hard deny; reading the
/// file is not.
fn harness_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let case = |command: String| Case {
        command: Some(command),
        surface: None,
        path: None,
        cwd: "/home/dev/project".to_owned(),
        home: "/home/dev".to_owned(),
        why: "a harness's protected configuration".to_owned(),
        expect_category: Some(Expected::One("trust-boundary".to_owned())),
        expect_rule: None,
        stretch: false,
        note: None,
        mechanism: None,
        source: None,
    };
    for harness in vouch::hooks::HarnessId::all() {
        let protected = harness.harness().protected();
        for file in protected.files {
            // A concrete path the pattern names: `**` any file below, a
            // `*` in a name nothing.
            let path: Vec<String> = file
                .iter()
                .map(|c| match *c {
                    "**" | "*" => "probe.json".to_owned(),
                    name => name.replace('*', ""),
                })
                .collect();
            let path = path.join("/");
            if !seen.insert((harness.as_str(), path.clone())) {
                continue;
            }
            for at in ["/home/dev/project", "~"] {
                let write = case(format!("printf x > {at}/{path}"));
                let name = format!("harness {harness}: writing {at}/{path} is denied");
                trials.push(Trial::test(name.clone(), move || {
                    check_denies(&name, 0, &write).map_err(Failed::from)
                }));
                let read = case(format!("cat {at}/{path}"));
                let name = format!("harness {harness}: reading {at}/{path} is not denied");
                trials.push(Trial::test(name.clone(), move || {
                    check_not_denied(&name, 0, &read).map_err(Failed::from)
                }));
            }
        }
        for dir in protected.dirs {
            let remove = case(format!("rm -rf ~/{dir}"));
            let name = format!("harness {harness}: removing ~/{dir} is denied");
            trials.push(Trial::test(name.clone(), move || {
                check_denies(&name, 0, &remove).map_err(Failed::from)
            }));
        }
    }
    trials
}

/// The red-team deny file covers all seven categories, and no command
/// appears twice in the corpus with the same cwd and home (a copy tests
/// nothing new, and a copy in both a deny and a benign file is a contradiction).
fn coverage_trials(all: &[(&'static str, Kind, usize, Case)]) -> Vec<Trial> {
    let mut per_category: BTreeMap<&str, usize> =
        Category::ALL.iter().map(|c| (c.id(), 0)).collect();
    for (file, _, _, case) in all {
        if *file == "hard_deny_redteam.jsonl"
            && let Some(expected) = &case.expect_category
            && let Some(first) = expected.ids().first()
            && let Some(count) = per_category.get_mut(first)
        {
            *count += 1;
        }
    }
    let missing: Vec<String> = per_category
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(c, _)| (*c).to_owned())
        .collect();
    // Every hard-deny rule of the registry is some line's `expect_rule`
    // (and that line's test checks it fires).
    let named: std::collections::HashSet<&str> = all
        .iter()
        .filter_map(|(_, _, _, case)| case.expect_rule.as_ref())
        .flat_map(Expected::ids)
        .collect();
    let unfired: Vec<&str> = vouch::rules::HardRule::ALL
        .iter()
        .map(|r| r.as_str())
        .filter(|id| !named.contains(id))
        .collect();
    let mut seen: HashMap<(String, String, String), String> = HashMap::new();
    let mut duplicates = Vec::new();
    let red_team: Vec<&str> = FILES
        .iter()
        .filter(|f| f.red_team)
        .map(|f| f.name)
        .collect();
    for (file, _, line, case) in all {
        let key = (label(case), case.cwd.clone(), case.home.clone());
        if !red_team.contains(file) && seen.contains_key(&key) {
            // Copies among the original files predate this check; a red-team
            // line copying any other line is still caught.
            continue;
        }
        let here = format!("{file}:{line}");
        if let Some(first) = seen.insert(key.clone(), here.clone()) {
            duplicates.push(format!("{} at {first} and {here}", key.0));
        }
    }
    vec![
        Trial::test(
            "hard_deny_redteam.jsonl: covers all seven categories",
            move || {
                if missing.is_empty() {
                    Ok(())
                } else {
                    Err(format!("no red-team cases for {}", missing.join(", ")).into())
                }
            },
        ),
        Trial::test(
            "registry: every hard-deny rule fires in a fixture",
            move || {
                if unfired.is_empty() {
                    Ok(())
                } else {
                    Err(format!("no fixture line expects {}", unfired.join(", ")).into())
                }
            },
        ),
        Trial::test("corpus: no duplicate cases", move || {
            if duplicates.is_empty() {
                Ok(())
            } else {
                Err(duplicates.join("\n").into())
            }
        }),
    ]
}

/// Every fixture line is its own test, named after its file, line and
/// command, so a failure names the case and `cargo test -- <filter>` runs one.
fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let mut all = Vec::new();
    for file in &FILES {
        let lines = cases(file.name);
        let count = lines.len();
        let (name, at_least) = (file.name, file.at_least);
        trials.push(Trial::test(
            format!("{name}: at least {at_least} cases"),
            move || {
                if count >= at_least {
                    Ok(())
                } else {
                    Err(format!("{name} has {count} cases").into())
                }
            },
        ));
        for (line, case) in lines {
            let schema = check_schema(file, line, &case);
            let kind = file.kind;
            let test_name = format!("{name}:{line} {}", label(&case));
            all.push((name, kind, line, case.clone()));
            trials.push(Trial::test(test_name, move || {
                schema?;
                let result = match kind {
                    Kind::Denies => check_denies(name, line, &case),
                    Kind::Benign => check_not_denied(name, line, &case),
                };
                result.map_err(Failed::from)
            }));
        }
    }
    trials.extend(coverage_trials(&all));
    trials.extend(harness_trials());
    libtest_mimic::run(&args, trials).exit();
}
