//! Property tests: wrappers and compound prefixes neither hide a hard deny
//! nor create one.
//!
//! Every hard-deny corpus command, wrapped in a random stack of wrappers
//! (`sudo`, `env`, `nice`, `timeout`, `bash -c '…'`, `eval`, `( … )`,
//! `$( … )`, …), must still be denied; every benign corpus command, wrapped
//! the same way, must not be hard-denied. The wraps follow bash: a wrap
//! that would make the text invalid bash (a prefix before a function
//! definition, say) or change what bash runs (`exec` before a list, `sudo`
//! before `D=/; …`, `env` before `eval`) is applied as `sh -c '…'` instead, so every generated
//! command is valid bash and still runs the wrapped command. A third
//! property feeds shell-flavoured noise: it must never panic, and a command
//! with a syntax error is never `Clear`.

use proptest::prelude::*;
use serde::Deserialize;
use vouch::policy::hard_deny::{DenyContext, DenyVerdict, VouchFiles, check_command};

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
    /// `cd` away and back to the case's directory: a relative target still
    /// names what it named (`cd /tmp && rm -rf *` would not).
    CdAndBack,
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
        Wrap::CdAndBack,
    ]
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Whether the command parses (the analysis reports no syntax error).
fn parses(command: &str) -> bool {
    let env = vouch::shell::ShellEnv {
        cwd: Some("/srv/app"),
        home: "/home/dev",
        vars: &[],
    };
    vouch::shell::analyze(command, &env, &vouch::shell::Limits::DEFAULT)
        .errors
        .is_empty()
}

/// Whether `command` starts with a `NAME=value` word.
fn starts_with_assignment(command: &str) -> bool {
    let name_len = command
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    name_len > 0
        && !command.as_bytes()[0].is_ascii_digit()
        && command.as_bytes().get(name_len) == Some(&b'=')
}

/// Whether `command` starts with the name of a program a prefix wrapper
/// can run: not an assignment, and not a reserved word (`time`, `!`, `if`,
/// …), a subshell, a group or a test, which only bash itself reads.
fn starts_with_program(command: &str) -> bool {
    let first = command.split_whitespace().next().unwrap_or("");
    let reserved = matches!(
        first,
        "!" | "{"
            | "}"
            | "(("
            | "[["
            | "if"
            | "for"
            | "while"
            | "until"
            | "case"
            | "select"
            | "function"
            | "time"
            | "coproc"
    );
    !reserved && !first.starts_with('(') && !starts_with_assignment(command)
}

/// Whether `command` starts with a shell builtin no program stands in for
/// (`env eval '…'` and `sudo cd /` find no such program and run nothing).
fn starts_with_builtin_only(command: &str) -> bool {
    matches!(
        command.split_whitespace().next().unwrap_or(""),
        "eval"
            | "source"
            | "."
            | "cd"
            | "pushd"
            | "popd"
            | "export"
            | "read"
            | "set"
            | "unset"
            | "shift"
            | "alias"
            | "declare"
            | "local"
            | "typeset"
            | "readonly"
            | "mapfile"
            | "readarray"
            | "trap"
            | "builtin"
            | "let"
            | "shopt"
            | "exec"
            | "command"
            | "getopts"
            | "hash"
            | "type"
            | "ulimit"
            | "umask"
            | "wait"
    )
}

/// Whether `command` is one simple command bash would hand to `exec` whole:
/// a program first and no list, pipeline or background operator anywhere
/// (a conservative textual test; quoting is ignored, so some single
/// commands count as lists).
fn is_single_simple_command(command: &str) -> bool {
    starts_with_program(command) && !command.contains(['&', ';', '|', '\n'])
}

fn apply(command: &str, wrap: Wrap, cwd: &str) -> String {
    let wrapped = match wrap {
        // Only bash's own `time` (a reserved word) reads what follows as
        // bash does: behind `sudo`, `env` or `nice` a leading assignment
        // is a program name or the program's environment, never a shell
        // variable later words can expand (`sudo D=/; rm -rf $D` removes
        // nothing), and a reserved word is a program name (`sudo time
        // D=/`). Such a command gets a shell of its own.
        Wrap::Prefix(p) if p != "time " && !starts_with_program(command) => {
            format!("{p}sh -c {}", quote(command))
        }
        // A program wrapper cannot run a builtin; `command` and `time` can.
        Wrap::Prefix(p)
            if !matches!(p, "time " | "command ") && starts_with_builtin_only(command) =>
        {
            format!("{p}sh -c {}", quote(command))
        }
        // `exec` replaces the shell with its one command: in
        // `exec true && rm -rf /` bash never reaches `rm`. Anything but a
        // single simple command gets a shell of its own.
        Wrap::Prefix(p) if p == "exec " && !is_single_simple_command(command) => {
            format!("{p}sh -c {}", quote(command))
        }
        Wrap::Prefix(p) => format!("{p}{command}"),
        Wrap::Script(s) => format!("{s} {}", quote(command)),
        Wrap::Around(before, after) => format!("{before}{command}{after}"),
        // Braced, so that a list stays whole behind the `cd`s: in
        // `cd … && A; B` or `cd … && A || B`, B runs where A did not.
        Wrap::CdAndBack => format!("cd /tmp && cd {} && {{ {command}\n}}", quote(cwd)),
    };
    if parses(&wrapped) {
        wrapped
    } else {
        format!("sh -c {}", quote(command))
    }
}

fn verdict(case: &Case, command: &str) -> DenyVerdict {
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
                command = apply(&command, all[w], &case.cwd);
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
        prop_assert!(matches!(got, DenyVerdict::Deny(_)), "`{}` gave {:?}", command, got);
    }

    #[test]
    fn wrapped_benign_commands_are_not_hard_denied(
        (case, command) in wrapped_strategy(corpus(&["benign.jsonl", "benign_extra.jsonl"]))
    ) {
        let got = verdict(&case, &command);
        prop_assert!(!matches!(got, DenyVerdict::Deny(_)), "`{}` gave {:?}", command, got);
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
        if !parses(&command) {
            prop_assert!(!matches!(got, DenyVerdict::Clear), "`{}` has errors but is clear", command);
        }
    }
}
