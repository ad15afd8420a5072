//! Property tests: wrappers and compound prefixes neither hide a hard deny
//! nor create one.
//!
//! Every hard-deny corpus command, wrapped in a random stack of wrappers
//! (`sudo`, `env`, `nice`, `timeout`, `bash -c '…'`, `eval`, `( … )`,
//! `$( … )`, …), must still be denied; every benign corpus command, wrapped
//! the same way, must not be hard-denied. A wrap that would make the text
//! invalid bash (a prefix before a function definition, say) is applied as
//! `sh -c '…'` instead, so every generated command is valid bash. A third
//! property feeds shell-flavoured noise: it must never panic, and a command
//! with a syntax error is never `Clear`.

use proptest::prelude::*;
use serde::Deserialize;
use vouch::policy::hard_deny::{Context, Protected, Verdict, check_command};

#[derive(Debug, Clone, Deserialize)]
struct Case {
    command: Option<String>,
    cwd: String,
    home: String,
}

fn corpus(files: &[&str]) -> Vec<Case> {
    crate::support::fixtures::records::<Case>(files)
        .into_iter()
        .filter(|case| case.command.is_some())
        .collect()
}

#[derive(Debug, Clone, Copy)]
enum Wrap {
    Prefix(&'static str),
    Script(&'static str),
    Around(&'static str, &'static str),
}

fn wraps() -> Vec<Wrap> {
    vec![
        Wrap::Prefix("sudo "),
        Wrap::Prefix("sudo -u root "),
        Wrap::Prefix("env A=1 "),
        Wrap::Prefix("env -i PATH=/usr/bin "),
        Wrap::Prefix("nice -n 5 "),
        Wrap::Prefix("nohup "),
        Wrap::Prefix("timeout 10 "),
        Wrap::Prefix("command "),
        Wrap::Prefix("exec "),
        Wrap::Prefix("time "),
        Wrap::Script("bash -c"),
        Wrap::Script("sh -c"),
        Wrap::Script("zsh -lc"),
        Wrap::Script("eval"),
        Wrap::Around("true && ", ""),
        Wrap::Around("false || ", ""),
        Wrap::Around("( ", " )"),
        Wrap::Around("{ ", "; }"),
        Wrap::Around("x=1; ", ""),
        Wrap::Around("echo $( ", " )"),
        Wrap::Around("if true; then ", "; fi"),
        Wrap::Around("for i in 1; do ", "; done"),
        Wrap::Around("cd /tmp && ", ""),
    ]
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn apply(command: &str, wrap: Wrap) -> String {
    let wrapped = match wrap {
        Wrap::Prefix(p) => format!("{p}{command}"),
        Wrap::Script(s) => format!("{s} {}", quote(command)),
        Wrap::Around(before, after) => format!("{before}{command}{after}"),
    };
    if vouch::shell::parse(&wrapped).errors.is_empty() {
        wrapped
    } else {
        format!("sh -c {}", quote(command))
    }
}

fn verdict(case: &Case, command: &str) -> Verdict {
    let protected = Protected {
        paths: vec!["/opt/vouch/bin/vouch".to_owned()],
    };
    let ctx = Context {
        home: &case.home,
        cwd: Some(&case.cwd),
        protected: &protected,
    };
    check_command(command, &ctx)
}

fn wrapped_strategy(cases: Vec<Case>) -> impl Strategy<Value = (Case, String)> {
    let all = wraps();
    (
        0..cases.len(),
        proptest::collection::vec(0..all.len(), 0..4),
    )
        .prop_map(move |(i, stack)| {
            let case = cases[i].clone();
            let mut command = case.command.clone().unwrap();
            for w in stack {
                command = apply(&command, all[w]);
            }
            (case, command)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn wrapped_hard_denies_still_deny(
        (case, command) in wrapped_strategy(corpus(&["hard_deny.jsonl", "hard_deny_extra.jsonl"]))
    ) {
        let got = verdict(&case, &command);
        prop_assert!(matches!(got, Verdict::Deny(_)), "`{}` gave {:?}", command, got);
    }

    #[test]
    fn wrapped_benign_commands_are_not_hard_denied(
        (case, command) in wrapped_strategy(corpus(&["benign.jsonl", "benign_extra.jsonl"]))
    ) {
        let got = verdict(&case, &command);
        prop_assert!(!matches!(got, Verdict::Deny(_)), "`{}` gave {:?}", command, got);
    }

    #[test]
    fn arbitrary_input_never_panics_and_errors_are_never_clear(
        command in "[a-z0-9 $'\"\\\\(){};|&<>`~*/=.-]{0,80}"
    ) {
        let case = Case {
            command: Some(command.clone()),
            cwd: "/srv/app".to_owned(),
            home: "/home/dev".to_owned(),
        };
        let got = verdict(&case, &command);
        if !vouch::shell::parse(&command).errors.is_empty() {
            prop_assert!(!matches!(got, Verdict::Clear), "`{}` has errors but is clear", command);
        }
    }
}
